"""Renders the op_host sources of the custom-op package from the op registry.

For each op: ``op_host/<entry_name>.cpp`` (OpDef registration with column-aligned dtype/format lists per compute unit,
InferShape/InferDataType, and the TilingFunc adapter), plus the shared ``op_host/lossgrad_op_host.h`` and the tiling
core (``op_host/tiling_core/``: the interface header, the implementation files and the generated
``lossgrad_tiling_tables.h``, see lossgrad.tiling.cxx_tables). Every per-op fact comes from lossgrad.registry and
lossgrad.socs.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..dtypes import DType
from ..project_files import project_root
from ..registry import OPS, Check, OpSpec
from ..socs import product_lines, socs_in_line
from ..tiling import cxx_tables
from . import templates

if TYPE_CHECKING:
    from ..validation import Call

HOST_HEADER = "op_host/lossgrad_op_host.h"
TILING_CORE_DIR = "op_host/tiling_core"
OP_TEMPLATE = "op_host/op.cpp.j2"
REDUCTION_ATTR = ("reduction", "String", '"mean"')  # every kernel's first attribute: OPTIONAL string, default mean

Combo = tuple[DType, ...]  # dtypes of the kernel inputs (kernel order) then the output


@dataclass(frozen=True)
class UnitSupport:
    unit: str          # compute unit (AddConfig / ASCEND_COMPUTE_UNIT)
    line: str          # product line
    npu_arch: int
    combos: tuple[Combo, ...]


def kernel_combos(op: OpSpec, npu_arch: int) -> tuple[Combo, ...]:
    """The dtype columns of the op's OpDef on an architecture (kernel inputs in kernel order, then the output): the
    registry's fused mixes (OpSpec.kernel_combos), one kernel binary per column and compute unit."""
    return tuple(tuple(c) for c in op.kernel_combos(npu_arch))


def package_dtypes(call: "Call") -> dict[str, DType]:
    """The dtype of each tensor (roles grad/self/target/out) a call sends to the installed package: its own kernel
    dtypes when they form a registered column, else every input cast on the host to aclnn's compute dtype
    (golden.aclnn_kernel_dtype: the promoted dtype, self's, or KL's float32 unless all are float16), as aclnn's op_api
    composition casts them, with the requested output dtype (a registered column: (C, C, C -> out)). Never an
    unregistered mix: ValueError if the fallback were one. Where out's dtype must be target's (BCEWithLogits),
    target stays in it: (C, C, T -> T)."""
    from ..golden import aclnn_kernel_dtype  # the compute-dtype rule, stated once

    op, arch = call.op, call.soc.arch.npu_arch
    columns = set(kernel_combos(op, arch))
    own = op.absent_as_self(call.kernel_dtypes)
    if tuple(own[io.role] for io in op.kernel_inputs) + (own["out"],) in columns:
        return own
    compute = aclnn_kernel_dtype(call)
    cast = {**{r: compute for r in op.roles}, "out": call.out_dtype}
    if Check.OUT_TARGET_DTYPE in op.checks:  # target keeps out's dtype (exact in the kernel's float32, which rounds
        cast["target"] = call.out_dtype      # through the compute dtype before out's, as aclnn's Cast after it)
    if tuple(cast[io.role] for io in op.kernel_inputs) + (cast["out"],) not in columns:
        raise ValueError(f"{op.name} on {call.soc.name}: neither the call's dtypes nor their host cast to "
                         f"{compute.label} form a column the package registers")
    return cast


def unit_support(op: OpSpec) -> list[UnitSupport]:
    """Compute units the op ships kernels for (registry ours_support), in product-line order."""
    out = []
    for line in product_lines():
        if not op.ours_support.get(line, False):
            continue
        socs = list(socs_in_line(line))
        if not socs:
            continue
        arch = socs[0].arch.npu_arch
        out.append(UnitSupport(socs[0].compute_unit, line, arch, kernel_combos(op, arch)))
    return out


def _cpp_list(values: Sequence[str]) -> str:
    return "{" + ", ".join(values) + "}"


def _columns(combos: Sequence[Combo], width: int) -> list[str]:
    return [_cpp_list([f"ge::{c[i].ge_name}" for c in combos]) for i in range(width)]


def _attr_default(kind: str, value: object) -> str:
    if kind == "Bool":
        return "true" if value else "false"
    if kind == "Float":
        return f"{float(value)!r}f"
    raise ValueError(f"unsupported OpDef attr type {kind}")


def context(op: OpSpec) -> dict[str, object]:
    """Everything op.cpp.j2 needs for one op."""
    width = len(op.kernel_inputs) + 1
    units = unit_support(op)
    if not units:
        raise ValueError(f"{op.name}: the registry lists no product line this project ships kernels for")
    # The op-level prototype takes the dtype list most units share; the others get an OpAICoreConfig of their own.
    counts: dict[tuple[Combo, ...], int] = {}
    for u in units:
        counts[u.combos] = counts.get(u.combos, 0) + 1
    base_combos = max(counts, key=lambda c: (counts[c], len(c)))
    fmt = _cpp_list(["ge::FORMAT_ND"] * len(base_combos))
    base = {"dtypes": _columns(base_combos, width), "formats": fmt,
            "units": [u.unit for u in units if u.combos == base_combos]}
    configs = []
    for u in units:
        if u.combos != base_combos:
            labels = ", ".join(sorted({d.label for c in u.combos for d in c}))
            configs.append({"unit": u.unit, "npu_arch": u.npu_arch, "labels": labels,
                            "dtypes": _columns(u.combos, width),
                            "formats": _cpp_list(["ge::FORMAT_ND"] * len(u.combos))})
    roles = [k.role for k in op.kernel_inputs]
    if op.shaped_like is None:
        infer_shape = {"kind": "broadcast_all"}
    else:  # that input's shape (KL and BCE: self, KlDivTarget: target)
        like_shape = roles.index(op.shaped_like)
        infer_shape = {"kind": "same_as", "index": like_shape, "proto": op.kernel_inputs[like_shape].proto}
    if op.default_out_dtype == "promoted":
        infer_dtype = {"kind": "promoted"}
    else:  # "self" or "target": that input's dtype
        like = roles.index("target" if op.default_out_dtype == "target" else "self")
        infer_dtype = {"kind": "same_as", "index": like, "proto": op.kernel_inputs[like].proto}
    attrs = [{"name": REDUCTION_ATTR[0], "kind": REDUCTION_ATTR[1], "default": REDUCTION_ATTR[2]}]
    beta_index, beta_default, log_index, log_default = -1, 1.0, -1, False
    for position, a in enumerate(op.attrs, start=1):
        attrs.append({"name": a.kernel_attr, "kind": a.kernel_type, "default": _attr_default(a.kernel_type, a.default)})
        if a.kernel_type == "Float":
            beta_index, beta_default = position, float(a.default)
        elif a.kernel_type == "Bool":
            log_index, log_default = position, bool(a.default)
    attr_layout = f"{beta_index}, {beta_default!r}, {log_index}, {'true' if log_default else 'false'}"
    return {"op": op, "class_name": op.custom_op_type, "entry_name": op.entry_name, "op_enum": cxx_tables.op_enum(op),
            "op_id": list(OPS).index(op.name),
            "inputs": [{"proto": k.proto, "role": k.role, "optional": op.input(k.role).optional}
                       for k in op.kernel_inputs], "output": op.kernel_output,
            "optional_mask": f"0x{sum(1 << i for i, k in enumerate(op.kernel_inputs) if op.input(k.role).optional):x}u",
            "attrs": attrs, "attr_layout": attr_layout, "base": base, "configs": configs,
            "infer_shape": infer_shape, "infer_dtype": infer_dtype}


def render_op(op: OpSpec) -> str:
    return templates.render(OP_TEMPLATE, **context(op))


def host_files(ops: Sequence[OpSpec]) -> dict[str, str]:
    """Relative path -> content of every op_host file of a package with these ops (rendered and copied)."""
    files = {f"op_host/{op.entry_name}.cpp": render_op(op) for op in ops}
    root = project_root()
    files[HOST_HEADER] = (root / HOST_HEADER).read_text()
    for path in sorted((root / TILING_CORE_DIR).glob("*")):
        if path.is_file() and path.suffix in (".h", ".hpp", ".cpp", ".cc") and path.name != cxx_tables.TABLES_HEADER:
            files[f"{TILING_CORE_DIR}/{path.name}"] = path.read_text()
    # Generated, never committed: the per-op/per-arch facts of the tiling core and the adapter's UB budget table.
    files[f"{TILING_CORE_DIR}/{cxx_tables.TABLES_HEADER}"] = cxx_tables.c_tables_header()
    return files


def write_host_files(out_dir: Path, ops: Sequence[OpSpec]) -> list[Path]:
    """Writes the op_host files of these ops below out_dir (as op_host/...)."""
    written = []
    for rel, text in host_files(ops).items():
        path = Path(out_dir) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
