"""Tiling for the loss-backward kernels: from a validated call and the SoC table to LossGradTilingData.

The algorithm has one implementation, the C++ core op_host/tiling_core/lossgrad_tiling_core.cpp that CANN's
TilingFunc runs; `plan` calls it through lossgrad.tiling.native (built with g++ on first use and cached) and
unpacks what it returns. This package keeps the *facts* the core is compiled with, rendered into C++ headers:
the constants below and the buffer plan (ub_plan.py) into lossgrad_tiling_tables.h (cxx_tables.py), and the
LossGradTilingData layout (data.py). docs/tiling.md describes the algorithm's steps and the limits it respects.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from ..dtypes import DType
from ..registry import INPUT_ROLES, ROLES, OpSpec, Reduction
from ..socs import Soc
from ..validation import Call
from . import data as td
from .ub_plan import ROLE_TYPE, read_roles

__all__ = ["KernelProblem", "TilingPlan", "problem_from_call", "plan", "plan_call", "knobs"]

TILE_ALIGN = 256            # tile lengths are multiples of this many elements (compare masks stay 32-byte aligned)
MIN_CORE_BYTES = 16 * 1024  # a core gets at least this much output before another core is added
GM_ALIGN_BYTES = 512        # preferred GM alignment of tile starts
COLUMN_MIN_BYTES = 128      # column split when every core's piece of a row is at least a 128-byte burst
# A column split whose pieces are narrower than this (in the narrowest dtype) puts the cores' copies of each row in
# the same two 512-byte GM windows at once (asc-devkit performance guide: avoid same-address access), a short
# burst per row; the flat split takes over where its extra reads (one broadcast row per core) are at most
# 1/COLUMN_FLAT_REREAD of the iteration space (docs/tiling.md, Split).
COLUMN_WINDOW_BYTES = 1024
COLUMN_FLAT_REREAD = 8
# KL reduction: tiles a block accumulator sums lane-wise before it folds, and folds a middle level sums before it
# joins the running sums (a two-level sum: every level adds at most this many values in sequence). Tests lower it
# (knobs()) so that short calls fold many times.
KL_FOLD_TILES = 128
KEY_GRAD_SCALAR = 1
KEY_KL_REDUCE = 2
# The same-shape path (op_kernel/tile_walk.h SameShapePlan): the kernel's class for calls whose inputs all have the
# output's shape, rendered apart from the broadcast machinery.
KEY_SAME_SHAPE = 4
# An absent optional input (a null tensor: its role's bit; the kernel variant never reads it), one bit per optional
# role of opspec.ROLES from 8 up.
KEY_ABSENT: dict[str, int] = {r.name: 8 << k for k, r in enumerate(r for r in ROLES if not r.required)}


def absent_key(absent: "Iterable[str]") -> int:
    """The tiling-key bits of these absent optional roles."""
    return sum(KEY_ABSENT[r] for r in set(absent))


def absent_sets(op: OpSpec) -> list[tuple[str, ...]]:
    """Every subset of the op's optional inputs a call may leave out (role order), the empty one first: one kernel
    variant and one buffer plan each."""
    optional = [r for r in op.roles if op.input(r).optional]
    return [tuple(r for k, r in enumerate(optional) if m >> k & 1) for m in range(1 << len(optional))]

# Operand modes relative to a tile (rows x columns).
STREAM, ROW, COL, SCALAR = td.MODES

# The constants above are rendered into lossgrad_tiling_tables.h (cxx_tables); the core reads them from there.


@dataclass(frozen=True)
class KernelProblem:
    """What the kernel computes, independent of NumPy arrays: kernel-view shapes (broadcast views compacted)."""

    op: OpSpec
    soc: Soc
    dtypes: Mapping[str, DType]       # each input the call has (by role), and out
    shapes: Mapping[str, tuple[int, ...]]  # each input the call has, as the kernel reads it; out as written
    iter_shape: tuple[int, ...]
    reduction: Reduction
    coefficient: float
    attrs: Mapping[str, Any]
    # the inputs as the caller passed them, when `shapes` are kernel views of them (None: the same)
    caller_shapes: Mapping[str, tuple[int, ...]] | None = None
    # The UB bytes a kernel may allocate; None: the SoC's (socs ub_kernel_bytes). Smaller budgets (knobs()) give
    # short tiles, so that small calls walk many tiles per core: the fuzz search's way to reach tile boundaries.
    budget: int | None = None
    fold_tiles: int | None = None  # KL's fold length; None: KL_FOLD_TILES (knobs())

    @property
    def ub_budget(self) -> int:
        if self.budget is None:
            return self.soc.ub_kernel_bytes
        if self.budget > self.soc.ub_kernel_bytes:
            raise ValueError(f"ub_budget({self.budget}): {self.soc.name} kernels may allocate at most "
                             f"{self.soc.ub_kernel_bytes} bytes of UB")
        return self.budget

    @property
    def absent(self) -> tuple[str, ...]:
        """The op's optional inputs the call leaves out (null tensors), in role order."""
        return tuple(r for r in self.op.roles if r not in self.shapes)

    @property
    def reduces(self) -> bool:
        """The output (KL: self's shape) is broadcast along some dim of the iteration space."""
        n = len(self.iter_shape)
        out = (1,) * (n - len(self.shapes["out"])) + tuple(self.shapes["out"])
        return any(b != 1 and o == 1 for b, o in zip(self.iter_shape, out))


@dataclass(frozen=True)
class _Knobs:
    ub_budget: int | None = None
    fold_tiles: int | None = None


_KNOBS: ContextVar[_Knobs] = ContextVar("lossgrad_tiling_knobs", default=_Knobs())


@contextlib.contextmanager
def knobs(*, ub_budget: int | None = None, fold_tiles: int | None = None) -> Iterator[None]:
    """Plan every call inside the block with a smaller UB budget (bytes a kernel may allocate; None: the SoC's) and
    KL reductions with shorter folds (tiles per fold; None: KL_FOLD_TILES).

    Testing knobs, not tuning ones: the plans stay valid (the kernel allocates less than the part has, and sums in
    the same two levels), but tiles get short and folds frequent, so that a small call walks many tiles per core and
    a short reduction exercises every level of its sum. `lossgrad verify --fuzz` draws them; its reproducers show
    them as `with lossgrad.tiling.knobs(ub_budget=..., fold_tiles=...): ...`."""
    for name, value in (("ub_budget", ub_budget), ("fold_tiles", fold_tiles)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0
                                  or value >= 1 << 32):
            raise ValueError(f"{name}: expected a positive 32-bit integer or None, got {value!r}")
    token = _KNOBS.set(_Knobs(ub_budget, fold_tiles))
    try:
        yield
    finally:
        _KNOBS.reset(token)


def problem_from_call(call: Call, shapes: Mapping[str, tuple[int, ...]] | None = None) -> KernelProblem:
    """`shapes` overrides the inputs' shapes with their kernel views (see runners: stride-0 dims become 1). The UB
    budget and KL's fold length are the defaults, or those an enclosing `knobs()` sets."""
    caller = {r: tuple(a.shape) for r, a in call.inputs.items()}
    sh = dict(caller)
    if shapes:
        sh.update({k: tuple(v) for k, v in shapes.items()})
    sh["out"] = tuple(call.out_shape)
    dtypes = dict(call.dtypes)
    dtypes["out"] = call.out_dtype
    return KernelProblem(op=call.op, soc=call.soc, dtypes=dtypes, shapes=sh, iter_shape=tuple(call.iter_shape),
                         reduction=call.reduction, coefficient=call.coefficient, attrs=dict(call.attrs),
                         caller_shapes=caller if any(sh[r] != caller[r] for r in caller) else None,
                         budget=_KNOBS.get().ub_budget, fold_tiles=_KNOBS.get().fold_tiles)


@dataclass(frozen=True)
class TilingPlan:
    block_dim: int
    tiling_key: int
    data: bytes
    fields: Mapping[str, Any]
    modes: Mapping[str, str]          # operand mode of each read input
    buf_mask: int
    ub_bytes: int                     # bytes the buffer plan allocates at this tile length
    ub_budget: int
    workspace_bytes: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    # The plan check (docs/tiling.md) walked every tile; False beyond its budget of 2^24 tiles, where it checks the
    # split-level facts and each core's first tiles.
    check_complete: bool = True


def _sizes(problem: KernelProblem) -> dict[str, int]:
    """Element size of each buffer element type of the buffer plan (ub_plan.ROLE_TYPE, float, uint8_t)."""
    s = {ROLE_TYPE[r]: d.itemsize for r, d in problem.dtypes.items() if r in ROLE_TYPE}
    s.update({"float": 4, "uint8_t": 1})
    return s


def plan(problem: KernelProblem) -> TilingPlan:
    """The tiling of the C++ core (lossgrad_tiling::Compute, what CANN's TilingFunc runs) for this problem.

    Raises native.TilingError (aclnn's 561002) when the core refuses the problem."""
    from . import cxx_tables, native  # both import this module's constants and KernelProblem

    res = native.compute(cxx_tables.core_inputs(problem))
    fields = td.unpack(res.data)
    reads = read_roles(problem.op, problem.absent)
    modes = {r: td.MODES[fields["modes"] >> (2 * INPUT_ROLES.index(r)) & 3] for r in reads}
    notes: list[str] = []
    if fields["splitMode"] == td.SPLIT_COLUMN:
        notes.append("column split: an input broadcast along rows is read once in total")
    elif fields["splitMode"] == td.SPLIT_FLAT and ROW in modes.values():
        notes.append("flat split: each core reads the row-broadcast input once")
    if not res.check_complete:
        notes.append("plan check: beyond its walk budget (2^24 tiles), each core's first tiles and every split-level "
                     "fact checked")
    return TilingPlan(block_dim=res.block_dim, tiling_key=res.tiling_key, data=res.data, fields=fields, modes=modes,
                      buf_mask=fields["bufMask"], ub_bytes=res.ub_bytes, ub_budget=problem.ub_budget,
                      workspace_bytes=res.workspace_bytes, notes=tuple(notes), check_complete=res.check_complete)


def plan_call(call: Call, shapes: Mapping[str, tuple[int, ...]] | None = None) -> TilingPlan:
    return plan(problem_from_call(call, shapes))
