"""Render the Ascend C kernels (op_kernel/*.j2 with each op folder's compute.h) and the shared tiling header.

One kernel source per op: element types are either concrete (a dtype combination, for the twin and kernel-launch
builds) or CANN's DTYPE_<NAME> macros (custom-op packages, which compile one source per dtype combination);
architecture differences are preprocessor branches on __NPU_ARCH__, so the same file builds for every SoC.
Rendering is deterministic: the same inputs give byte-identical files.
"""
from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import jinja2

from .dtypes import DType
from .project_files import project_root
from .registry import INPUT_ROLES, OPS_DIR, ROLE, OpSpec, get_op
from .socs import ARCHS
from .tiling import KEY_ABSENT, KEY_GRAD_SCALAR, KEY_KL_REDUCE, KEY_SAME_SHAPE, absent_key, absent_sets
from .tiling import data as tiling_data
from .tiling import ub_plan as buffer_plan

TILING_HEADER = "lossgrad_tiling_data.h"
# The tile walk (plain C++): rendered into every kernel, and beside them for the package's tiling core, whose plan
# check walks the same tiles (op_host/tiling_core/lossgrad_plan_check.cpp includes ../../op_kernel/tile_walk.h).
WALK_HEADERS = ("core_range.h", "tile_walk.h")


def template_dir() -> Path:
    """op_kernel/ of the checkout or of the wheel's bundled copy (LOSSGRAD_OP_KERNEL_DIR overrides it)."""
    override = os.environ.get("LOSSGRAD_OP_KERNEL_DIR")
    if override:
        return Path(override)
    return project_root() / "op_kernel"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    # "ops/<short name>/compute.h" is an op folder's compute body (lossgrad/ops/<short name>/compute.h)
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(template_dir())),
                                  jinja2.PrefixLoader({"ops": jinja2.FileSystemLoader(str(OPS_DIR))})])
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=False, lstrip_blocks=False,
                             auto_reload=False)  # one consistent set of templates per process
    env.filters["bufbit"] = lambda bit: f"LOSSGRAD_BUF_{buffer_plan.MASK_NAMES[bit]}"
    return env


def kernel_roles(op: "str | OpSpec") -> tuple[str, ...]:
    """The roles a kernel of `op` is instantiated for, in the class's type-parameter order: its inputs' roles in
    role order, then "out"."""
    return get_op(op).roles + ("out",)


def _class_name(op: OpSpec) -> str:
    return op.custom_op_type.replace("Custom", "") + "Kernel"


def _types(op: OpSpec, dtypes: Mapping[str, DType] | None) -> dict[str, str]:
    if dtypes is not None:
        return {r: dtypes[r].cpp for r in kernel_roles(op)}
    protos = {io.role: io.proto for io in op.kernel_inputs}
    protos["out"] = op.kernel_output
    return {r: f"DTYPE_{protos[r].upper()}" for r in kernel_roles(op)}


@dataclass(frozen=True)
class Variant:
    """One code path the kernel's entry branches to: its tiling key, and the class and template arguments it runs."""

    key: int
    same_shape: bool   # the same-shape class (op_kernel/same_shape.h.j2), else the broadcast paths' class
    grad_scalar: bool
    kl_reduce: bool
    absent: int        # the absent optional inputs' key bits


def _variants(spec: OpSpec) -> list[Variant]:
    """Every code path of the kernel: for every set of optional inputs a call may leave out, the same-shape path and
    the broadcast paths, each with gradOutput a tensor or one value, and KL's reduction on the broadcast paths."""
    base = [(KEY_SAME_SHAPE, True, False, False), (KEY_SAME_SHAPE | KEY_GRAD_SCALAR, True, True, False),
            (0, False, False, False), (KEY_GRAD_SCALAR, False, True, False)]
    if spec.reduced_onto:
        base += [(KEY_KL_REDUCE, False, False, True), (KEY_KL_REDUCE | KEY_GRAD_SCALAR, False, True, True)]
    return [Variant(key | absent_key(absent), same, gs, klr, absent_key(absent)) for absent in absent_sets(spec)
            for key, same, gs, klr in base]


def _compare_helpers(spec: OpSpec) -> frozenset[str]:
    """The helpers of op_kernel/compare.h.j2 the op's body calls (the kernel renders those alone)."""
    helpers = re.findall(r"inline void (\w+)\(", (template_dir() / "compare.h.j2").read_text())
    body = (OPS_DIR / spec.template / "compute.h").read_text()
    return frozenset(h for h in helpers if re.search(rf"\b{h}\(", body))


def _compute_type(spec: OpSpec) -> dict[str, object]:
    """The C++ of the promotion of every input's element type, in role order (aclnn promotes them all: an absent
    input's type parameter is self's, so it changes nothing), and the "all float16" test over them on two lines."""
    types = [ROLE[r].type_param for r in spec.roles]
    promoted = types[0]
    for t in types[1:]:
        promoted = f"typename Promote<{promoted}, {t}>::type"
    half = [f"std::is_same<{t}, half>::value" for t in types]
    return {"promoted_type": promoted, "all_half": (" && ".join(half[:2]), " && ".join(half[2:]))}


def _has(role: str) -> str:
    """The kernel class's constant that says the launch has this optional input (kHasWeight)."""
    return "kHas" + "".join(w.capitalize() for w in role.split("_"))


def _optional(spec: OpSpec) -> list[dict[str, object]]:
    """The op's optional inputs: the kernel class's presence constant of each and its absent-key bit."""
    return [{"role": r, "has": _has(r), "key": KEY_ABSENT[r]} for r in spec.roles if spec.input(r).optional]


def _guard(spec: OpSpec, role: str) -> str:
    """The C++ condition under which the kernel class touches the input's Operand ("" always): gradOutput not a
    scalar, an optional input present."""
    if role == "grad":
        return "!GRAD_SCALAR"
    return _has(role) if spec.input(role).optional else ""


def _inputs(spec: OpSpec) -> list[dict[str, object]]:
    """What the kernel template states once per input of the op, in role order (the tiling's per-input arrays): its
    role, its element type parameter, its Operand member, its float lanes, its LOSSGRAD_ROLE_ constant, whether the
    kernel reads its values, the condition under which it exists (_guard)."""
    return [{"role": r, "T": ROLE[r].type_param, "member": f"{r}_", "var": ROLE[r].lanes,
             "cpp": f"LOSSGRAD_ROLE_{r.upper()}", "read": spec.input(r).values_read, "guard": _guard(spec, r)}
            for r in spec.roles]


def _slot_exprs(spec: OpSpec) -> dict[str, str]:
    """C++ byte offsets of the input slices in one inQ_ buffer, and the buffer's size ("bytes"), from the bank
    leads of ub_plan (in units of the kernel's kBankSkew; one expression per GRAD_SCALAR variant, and per set of
    absent optional inputs)."""
    def exprs_of(grad_scalar: bool, absent: tuple[str, ...]) -> dict[str, str]:
        roles = [r for r in buffer_plan.read_roles(spec, absent) if not (r == "grad" and grad_scalar)]
        exprs: dict[str, str] = {}
        units, sizes = 0, []
        for b in buffer_plan.slices(roles, 1):
            units += b.lead
            exprs[b.name.removesuffix("In_")] = " + ".join([f"kBankSkew * {units}"] +
                                                           [f"L * sizeof({t})" for t in sizes])
            units += b.pad - b.lead
            sizes.append(b.ctype)
        exprs["bytes"] = " + ".join([f"kBankSkew * {units}"] + [f"L * sizeof({t})" for t in sizes])
        return exprs

    def by_grad(absent: tuple[str, ...], key: str) -> str:
        full, scalar = exprs_of(False, absent), exprs_of(True, absent)
        if key not in full:
            return "0u"
        return f"GRAD_SCALAR ? 0u : {full[key]}" if key not in scalar else f"GRAD_SCALAR ? {scalar[key]} : {full[key]}"

    sets = absent_sets(spec)
    keys = exprs_of(False, ()).keys()
    if len(sets) == 1:  # no optional input
        return {k: by_grad((), k) for k in keys}
    # ABSENT == <bits> ? (...) : ... : (all present)
    return {k: " : ".join([f"ABSENT == {absent_key(a)}u ? ({by_grad(a, k)})" for a in sets[1:]]
                          + [f"({by_grad((), k)})"]) for k in keys}


def tiling_keys(op: "str | OpSpec") -> tuple[int, ...]:
    """The tiling keys the op's kernel branches on (kernel-launch builds compile one library per key)."""
    return tuple(v.key for v in _variants(get_op(op)))


def render_kernel(op: "str | OpSpec", dtypes: Mapping[str, DType] | None = None, same_shape_only: bool = False) -> str:
    """The kernel source for `op`: concrete element types from `dtypes` (by role, and out; an optional input not
    given takes self's, as OpSpec.absent_as_self), or CANN's DTYPE_ macros when `dtypes` is None.

    `same_shape_only`: the same-shape path alone (its class and the entry's branches for its keys), the text a reader
    follows for a call whose inputs all have the output's shape; it compiles and runs such calls as the full kernel
    does, and faults on any other key."""
    spec = get_op(op)
    if dtypes is None:
        return _render(spec.name, None, same_shape_only)
    by_role = spec.absent_as_self(dtypes)
    return _render(spec.name, tuple(by_role[r] for r in kernel_roles(spec)), same_shape_only)


# Rendering is a pure function of the op and dtypes while the process's templates are fixed (_env), and verify asks
# for the same few kernels thousands of times.
@lru_cache(maxsize=None)
def _render(op_name: str, dtypes: "tuple[DType, ...] | None", same_shape_only: bool = False) -> str:
    spec = get_op(op_name)
    dtypes = None if dtypes is None else dict(zip(kernel_roles(spec), dtypes))
    reduces = spec.reduced_onto is not None
    variants = [v for v in _variants(spec) if v.same_shape or not same_shape_only]
    args = {io.role: io.proto for io in spec.kernel_inputs}
    if dtypes is None:
        note = "Element types come from CANN's DTYPE_<NAME> macros (one build per dtype combination)."
    else:
        note = "Element types: " + ", ".join(f"{r} {dtypes[r].label}" for r in kernel_roles(spec)) + "."
    inputs = _inputs(spec)
    return _env().get_template("kernel.cpp.j2").render(
        op=spec, class_name=_class_name(spec), dtype_note=note, types=_types(spec, dtypes), role_args=args,
        buffers=buffer_plan.buffers(spec, grad_scalar=False, npu_arch=2201),
        mask_div=8, mask_div_chunked=buffer_plan.MASK_CHUNKED_DIV,
        mask_work=buffer_plan.MASK_WORK, mask_repeat=buffer_plan.MASK_REPEAT, mask_const=buffer_plan.MASK_CONST,
        uses_consts=buffer_plan.has_constants(spec), scalar_stage_bytes=buffer_plan.SCALAR_STAGE_BYTES,
        slot=_slot_exprs(spec), bank_skews=[(n, buffer_plan.bank_skew(n)) for n in ARCHS if buffer_plan.bank_skew(n)],
        inputs=inputs, vars=", ".join(ROLE[r].lanes for r in spec.roles), reduces=reduces, variants=variants,
        general=not same_shape_only, compare_helpers=_compare_helpers(spec),
        **_compute_type(spec), optional=_optional(spec),
        buffer_guards={f"{i['role']}Work_": i["guard"] for i in inputs if i["guard"]},
        kernel_types=[(n, a.kernel_type) for n, a in ARCHS.items() if a.kernel_type],
    )


@lru_cache(maxsize=1)
def tiling_header() -> str:
    return tiling_data.c_header()


def write_atomic(path: Path, text: str) -> None:
    """`path` holds `text` completely or is left as it was: the text goes to a temporary file in the same directory,
    is flushed to the disk (fsync) and renamed over `path`; on any failure (a full disk: ENOSPC, EDQUOT) the
    temporary file is deleted and the error raised. Concurrent writers of the same text are safe."""
    # Unique per process *and* thread: verify renders kernels from a thread pool, and two threads may write the
    # same shared header at once (a pid-only name let one thread rename the other's temp file away).
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}.{threading.get_ident()}")
    try:
        with open(tmp, "w", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())  # a full disk may only show here (delayed allocation)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    write_atomic(path, text)


def write_kernel(out_dir: "str | os.PathLike[str]", op: "str | OpSpec",
                 dtypes: Mapping[str, DType] | None = None, same_shape_only: bool = False) -> Path:
    """Write `<entry>.cpp` (render_kernel), the tiling header and the tile walk into out_dir; returns the kernel
    path."""
    spec = get_op(op)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / TILING_HEADER, tiling_header())
    for name in WALK_HEADERS:
        _write(out / name, (template_dir() / name).read_text())
    path = out / f"{spec.entry_name}.cpp"
    _write(path, render_kernel(spec, dtypes, same_shape_only))
    return path


def _cached_source(text: str, filename: str, cache_root: Path) -> Path:
    """`text` as `filename`, with the tiling header beside it, in a content-addressed directory of the cache
    (concurrent writers of the same source are safe)."""
    header = tiling_header()
    key = hashlib.sha256((filename + "\0" + text + header).encode()).hexdigest()[:24]
    path = cache_root / "kernels" / key / filename
    if path in _written and path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(path.parent / TILING_HEADER, header)
    _write(path, text)
    _written.add(path)
    return path


_written: set[Path] = set()


def cached_kernel(op: "str | OpSpec", dtypes: Mapping[str, DType], cache_root: Path,
                  same_shape_only: bool = False) -> Path:
    """Render into a content-addressed directory (concurrent renders of the same kernel are safe)."""
    spec = get_op(op)
    return _cached_source(render_kernel(spec, dtypes, same_shape_only), f"{spec.entry_name}.cpp", cache_root)


def bundle_label(op: "str | OpSpec", dtypes: Mapping[str, DType]) -> str:
    """How a kernel is named in a bundle and in progress notices: the op and its dtypes (grad/self/target>out)."""
    return f"{get_op(op).name} {'/'.join(dtypes[r].label for r in get_op(op).roles)}>{dtypes['out'].label}"


def cached_bundle(kernels: Sequence[tuple["str | OpSpec", Mapping[str, DType]]], cache_root: Path) -> Path:
    """One twin source holding several kernels (op, dtypes): twin.build.bundle_source over their renders, in the
    order given (kernel i is launched with twin.build.bundle_key(i, tiling key)). All must take the same number of
    GM arguments (every op does: its inputs, the output, workspace and tiling)."""
    from .twin.build import bundle_source  # the twin's launch convention; codegen itself stays twin-free

    specs = [get_op(op) for op, _ in kernels]
    nargs = {len(s.kernel_inputs) + 3 for s in specs}
    if len(nargs) != 1:
        raise ValueError(f"bundled kernels must take the same number of arguments, got {sorted(nargs)}")
    text = bundle_source([(render_kernel(s, d), s.entry_name) for s, (_, d) in zip(specs, kernels)], nargs.pop())
    listing = "".join(f"// kernel {i}: {bundle_label(s, d)}\n" for i, (s, (_, d)) in enumerate(zip(specs, kernels)))
    return _cached_source(listing + text, "twin_bundle.cpp", cache_root)


def render_sources(out_dir: "str | os.PathLike[str]", ops: Iterable["str | OpSpec"]) -> list[Path]:
    """Package form (DTYPE_ macros) of each op's kernel plus the shared header, for CANN builds."""
    return [write_kernel(out_dir, op, None) for op in ops]
