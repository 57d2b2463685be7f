"""The op registry: the ops, discovered from their folders, and the one resolver of op names.

Every operator lives in one folder, `python/lossgrad/ops/<short name>/` (docs/contributing.md):

    __init__.py     SPEC (an opspec.OpSpec: aclnn's facts) and SCRATCH (the compute body's own UB buffers)
    compute.h       the compute body, plain Ascend C included into the kernel class (op_kernel/kernel.cpp.j2)
    golden.py       f64 and f32: the golden formulas (exact, and float32 in aclnn's kernel order)
    torch_facts.py  the PyTorch facts: the derivative of the backward, the drop-in loss
    test_facts.py   the test facts: the PyTorch oracle, sample values, known differences with their reasons

Nothing else lists the ops: the public wrappers (lossgrad.<op>, lossgrad.golden.<op>, lossgrad.torch), the C++ OpId,
the kernel sources, the command line's help, the docs tables and the tests all iterate `OPS`. The style follows
PyTorch's native_functions.yaml + OpInfo: one declarative entry per op; ops-nn's one folder per op.
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

from .opspec import (ALL_LINES, FLOAT_SUPPORT_BY_ARCH, MAX_RANK, REQUIRED_ROLES, ROLE, ROLES, AttrSpec,  # noqa: F401
                     Buffer, Check,
                     Divisor, EmptyRule, KernelIO, OpSpec, OutputShape, Promotion, Reduction,
                     TensorInput, arch_dtypes, kernel_dtypes, promoted_dtype)

OPS_PACKAGE = "lossgrad.ops"
OPS_DIR = Path(__file__).resolve().parent / "ops"

# The parts of an op folder: file -> what it must define (checked where the part is first needed).
PARTS: dict[str, tuple[str, ...]] = {
    "__init__.py": ("SPEC", "SCRATCH"),
    "compute.h": (),
    "golden.py": ("f64", "f32"),
    "torch_facts.py": ("derivative", "LOSS"),
    "test_facts.py": ("ORACLE",),
}


class OpFolderError(LookupError):
    """An op folder that is missing a part, or a part that lacks a name it must define: the message names the op,
    the file and what to add (docs/contributing.md)."""


def _missing(folder: str, part: str, what: str) -> OpFolderError:
    return OpFolderError(f"op folder python/lossgrad/ops/{folder}/: {part} {what} "
                         f"(see docs/contributing.md, 'Adding an operator')")


def _discover() -> tuple[dict[str, OpSpec], dict[str, tuple[Any, ...]]]:
    found: list[tuple[OpSpec, tuple[Any, ...]]] = []
    for info in sorted(pkgutil.iter_modules([str(OPS_DIR)]), key=lambda i: i.name):
        if not info.ispkg or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{OPS_PACKAGE}.{info.name}")
        for name in PARTS["__init__.py"]:
            if not hasattr(module, name):
                raise _missing(info.name, "__init__.py", f"must define {name}")
        spec = module.SPEC
        if not isinstance(spec, OpSpec):
            raise _missing(info.name, "__init__.py", f"SPEC must be an OpSpec, got {type(spec).__name__}")
        if spec.template not in ("", info.name):
            raise _missing(info.name, "__init__.py", f"SPEC.template {spec.template!r} differs from the folder name "
                                                     "(leave it unset: the folder name is the op's short name)")
        if not (OPS_DIR / info.name / "compute.h").is_file():
            raise _missing(info.name, "compute.h", "is missing (the op's compute body)")
        _check_inputs(info.name, spec)
        spec = OpSpec(**{**spec.__dict__, "template": info.name})
        found.append((spec, tuple(module.SCRATCH)))
    found.sort(key=lambda f: (f[0].order, f[0].template))
    ops = {spec.name: spec for spec, _ in found}
    if len(ops) != len(found):
        raise OpFolderError("two op folders declare the same SPEC.name: "
                            + ", ".join(f"{s.template}: {s.name}" for s, _ in found))
    return ops, {spec.name: scratch for spec, scratch in found}


def _check_inputs(folder: str, spec: OpSpec) -> None:
    """SPEC.inputs must name each kernel role once, at distinct kernel positions 0..n-1."""
    roles = [i.role for i in spec.inputs]
    unknown = [r for r in roles if r not in ROLE]
    if unknown or len(set(roles)) != len(roles) or not set(REQUIRED_ROLES) <= set(roles):
        raise _missing(folder, "__init__.py", f"SPEC.inputs must declare the roles {', '.join(REQUIRED_ROLES)} once "
                                              f"each, and any of {', '.join(r.name for r in ROLES if not r.required)} "
                                              f"at most once (opspec.ROLES), got {roles}")
    wrong = [i.aclnn for i in spec.inputs if i.optional == ROLE[i.role].required]
    if wrong:
        raise _missing(folder, "__init__.py", f"the inputs {wrong}: a required role (grad, self, target) cannot be "
                                              "optional, and another role's input must be (TensorInput.optional, "
                                              "with `absent` saying what a null tensor means)")
    if sorted(i.kernel_index for i in spec.inputs) != list(range(len(spec.inputs))):
        raise _missing(folder, "__init__.py", "SPEC.inputs' kernel_index values must be 0.."
                                              f"{len(spec.inputs) - 1}, each once")
    unexplained = [i.aclnn for i in spec.inputs if i.optional and not i.absent]
    if unexplained:
        raise _missing(folder, "__init__.py", f"the optional inputs {unexplained} must say what their absence means "
                                              "(TensorInput.absent)")


OPS, _SCRATCH = _discover()


def _input_roles() -> tuple[str, ...]:
    """The roles the tiling's per-input arrays hold: opspec.ROLES up to the last one any op declares (an op without
    a role leaves its row unused)."""
    used = {i.role for op in OPS.values() for i in op.inputs}
    last = max(k for k, r in enumerate(ROLES) if r.name in used)
    return tuple(r.name for r in ROLES[:last + 1])


INPUT_ROLES = _input_roles()


def op_names(op: OpSpec) -> tuple[str, ...]:
    """Every name an op answers to (case-insensitive): the API name, the short name (its folder: l1, mse, ...), the
    aclnn API, our custom op type and CANN's op type."""
    return (op.name, op.template, op.aclnn, op.custom_op_type, op.cann_op_type)


def _by_name() -> dict[str, OpSpec]:
    table: dict[str, OpSpec] = {}
    for op in OPS.values():
        for n in op_names(op):
            other = table.setdefault(n.lower(), op)
            if other is not op:
                raise OpFolderError(f"the name {n!r} is claimed by two ops: {other.template} and {op.template} "
                                    "(python/lossgrad/ops/<folder>/__init__.py SPEC names must be unique)")
    return table


_BY_NAME = _by_name()


def short_names() -> str:
    """The short names, for help texts ("l1, mse, ...")."""
    return ", ".join(op.template for op in OPS.values())


def get_op(name: "str | OpSpec") -> OpSpec:
    """The one op-name resolver (API, command line, case tables, builds)."""
    if isinstance(name, OpSpec):
        return name
    op = _BY_NAME.get(str(name).strip().lower())
    if op is None:
        raise KeyError(f"unknown op {name!r}; known: "
                       + ", ".join(f"{o.name} ({o.template})" for o in OPS.values()))
    return op


def runs_on(op: "str | OpSpec", soc: Any) -> bool:
    """Whether aclnn accepts any dtype of the op on the SoC (a name or socs.Soc), and so whether we run it there:
    KlDivTarget's dtype list is empty on 310P and Atlas 910 (every call 161002)."""
    from .socs import get_soc

    return bool(get_op(op).supported_dtypes(get_soc(soc).arch.npu_arch))


def scratch(op: OpSpec) -> tuple[Buffer, ...]:
    """The compute body's scratch buffers (its folder's SCRATCH)."""
    return _SCRATCH[get_op(op.name).name]


def op_dir(op: OpSpec) -> Path:
    return OPS_DIR / op.template


def compute_body(op: OpSpec) -> str:
    """The text of the op's compute body (compute.h in its folder)."""
    path = op_dir(op) / "compute.h"
    if not path.is_file():
        raise _missing(op.template, "compute.h", "is missing (the op's compute body)")
    return path.read_text()


def op_part(op: "str | OpSpec", part: str) -> ModuleType:
    """An op folder's Python part ("golden", "torch_facts", "test_facts"), imported on first use, with a clear error
    naming the file and the names it lacks (never a bare KeyError or AttributeError)."""
    spec = get_op(op)
    filename = f"{part}.py"
    if filename not in PARTS:
        raise ValueError(f"unknown op folder part {part!r}; known: {', '.join(p for p in PARTS if p.endswith('.py'))}")
    if not (op_dir(spec) / filename).is_file():
        raise _missing(spec.template, filename, f"is missing: it must define {', '.join(PARTS[filename])}")
    module = importlib.import_module(f"{OPS_PACKAGE}.{spec.template}.{part}")
    lacking = [n for n in PARTS[filename] if not hasattr(module, n)]
    if lacking:
        raise _missing(spec.template, filename, f"must define {', '.join(lacking)}")
    return module
