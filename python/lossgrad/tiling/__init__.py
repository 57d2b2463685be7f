"""Tiling for the loss-backward kernels: from a validated call and the SoC table to LossGradTilingData.

Steps (docs/tiling.md explains each):
1. Iteration space: the broadcast shape the kernel walks (the output's, or broadcast(self, target) for KL).
2. Drop size-1 dims, coalesce neighbouring dims on which every operand (inputs and output) is present or absent
   alike, and give each operand its element strides (0 where it is broadcast).
3. Order the row dims: KL reductions put the output's dims first (each output element's contributions become one
   run); otherwise the order that re-reads the fewest input bytes (a broadcast input stays resident in UB while
   the loop runs over the dims it is broadcast along, if those are inside its own dims).
4. Size the tile from the buffer plan (tiling/ub_plan.py) and the SoC's UB budget.
5. Split the work over cores in balanced units (a 32-byte block of the narrowest dtype): flat (row-major ranges),
   column (each core owns a column range of every row, so an operand broadcast along rows is read once), or KL
   reduction (each core owns a range of output elements and sums their contributions: no atomics, deterministic).
6. Coefficients in float64, rounded once to float32.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from ..dtypes import DType
from ..registry import OpSpec, Reduction
from ..socs import Soc
from ..validation import Call
from . import data as td
from .ub_plan import (FIXED_BYTES, MASK_ACC, MASK_CONST, MASK_REPEAT, MASK_RESULT, MASK_WORK, ROLE_TYPE, blocks_only,
                      buffers, needs_constants, read_roles)

__all__ = ["KernelProblem", "TilingPlan", "problem_from_call", "plan", "plan_call"]

TILE_ALIGN = 256            # tile lengths are multiples of this many elements (compare masks stay 32-byte aligned)
MIN_CORE_BYTES = 16 * 1024  # a core gets at least this much output before another core is added
GM_ALIGN_BYTES = 512        # preferred GM alignment of tile starts
COLUMN_MIN_BYTES = 128      # column split when every core's piece of a row is at least a 128-byte burst
KEY_GRAD_SCALAR = 1
KEY_KL_REDUCE = 2

# Operand modes relative to a tile (rows x columns).
STREAM, ROW, COL, SCALAR = td.MODES


@dataclass(frozen=True)
class KernelProblem:
    """What the kernel computes, independent of NumPy arrays: kernel-view shapes (broadcast views compacted)."""

    op: OpSpec
    soc: Soc
    dtypes: Mapping[str, DType]       # grad, self, target, out
    shapes: Mapping[str, tuple[int, ...]]  # grad, self, target as the kernel reads them; out as written
    iter_shape: tuple[int, ...]
    reduction: Reduction
    coefficient: float
    attrs: Mapping[str, Any]

    @property
    def reduces(self) -> bool:
        """The output (KL: self's shape) is broadcast along some dim of the iteration space."""
        n = len(self.iter_shape)
        out = (1,) * (n - len(self.shapes["out"])) + tuple(self.shapes["out"])
        return any(b != 1 and o == 1 for b, o in zip(self.iter_shape, out))


def problem_from_call(call: Call, shapes: Mapping[str, tuple[int, ...]] | None = None) -> KernelProblem:
    """`shapes` overrides the inputs' shapes with their kernel views (see runners: stride-0 dims become 1)."""
    sh = {"grad": tuple(call.grad.shape), "self": tuple(call.self_.shape), "target": tuple(call.target.shape)}
    if shapes:
        sh.update({k: tuple(v) for k, v in shapes.items()})
    sh["out"] = tuple(call.out_shape)
    dtypes = dict(call.dtypes)
    dtypes["out"] = call.out_dtype
    return KernelProblem(op=call.op, soc=call.soc, dtypes=dtypes, shapes=sh, iter_shape=tuple(call.iter_shape),
                         reduction=call.reduction, coefficient=call.coefficient, attrs=dict(call.attrs))


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


# ---------------------------------------------------------------------------------------------------------------
# Steps 1-3: loop dims and strides
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Loop:
    dims: tuple[int, ...]
    strides: Mapping[str, tuple[int, ...]]   # operand -> element strides per loop dim
    out_rank: int                            # KL reduce: leading dims where the output is present


def _loop(problem: KernelProblem) -> _Loop:
    B = tuple(problem.iter_shape)
    operands = ("grad", "self", "target", "out")
    n = len(B)

    def padded(shape: tuple[int, ...]) -> tuple[int, ...]:
        return (1,) * (n - len(shape)) + tuple(shape)

    keep = [d for d in range(n) if B[d] != 1]
    if not keep:
        dims = [1]
        pres = {r: [True] for r in operands}
    else:
        dims = [B[d] for d in keep]
        pres = {r: [padded(problem.shapes[r])[d] == B[d] for d in keep] for r in operands}
    # Coalesce neighbours with identical presence for every operand.
    cd: list[int] = []
    cp: dict[str, list[bool]] = {r: [] for r in operands}
    for i, size in enumerate(dims):
        if cd and all(cp[r][-1] == pres[r][i] for r in operands):
            cd[-1] *= size
        else:
            cd.append(size)
            for r in operands:
                cp[r].append(pres[r][i])
    # Contiguous element strides of each operand's own (compact) buffer.
    strides: dict[str, list[int]] = {}
    for r in operands:
        st, acc = [0] * len(cd), 1
        for d in reversed(range(len(cd))):
            if cp[r][d]:
                st[d] = acc
                acc *= cd[d]
        strides[r] = st
    rows = list(range(len(cd) - 1))
    reads = read_roles(problem.op)
    if problem.reduces:
        order = [d for d in rows if cp["out"][d]] + [d for d in rows if not cp["out"][d]]
        out_rank = sum(1 for d in rows if cp["out"][d])
    elif blocks_only(problem.soc.arch.npu_arch) and cd[-1] * problem.dtypes["out"].itemsize % 32 != 0:
        # Ragged rows written in whole blocks: each core's output must stay one GM-contiguous run (ub_plan.blocks_only)
        order, out_rank = rows, len(rows)
    else:
        sizes = {r: math.prod(problem.shapes[r]) * problem.dtypes[r].itemsize for r in reads}
        order = _cheapest_order(rows, cd, {r: cp[r] for r in reads}, sizes)
        out_rank = len(rows)
    perm = order + [len(cd) - 1]
    return _Loop(dims=tuple(cd[d] for d in perm), strides={r: tuple(strides[r][d] for d in perm) for r in operands},
                 out_rank=out_rank)


def reread_bytes(order: list[int], dims: list[int], present: Mapping[str, list[bool]],
                 sizes: Mapping[str, int]) -> int:
    """GM bytes the inputs cost in this loop order: an input is read again for every index of a dim it is
    broadcast along that lies outside one of its own dims (inside all of them, its tiles stay resident)."""
    total = 0
    for r, size in sizes.items():
        factor = 1
        for i, d in enumerate(order):
            if not present[r][d] and any(present[r][e] for e in order[i + 1:]):
                factor *= dims[d]
        total += size * factor
    return total


def _cheapest_order(rows: list[int], dims: list[int], present: Mapping[str, list[bool]],
                    sizes: Mapping[str, int]) -> list[int]:
    """The row-dim order with the fewest re-read bytes; ties keep the earliest order in permutation order."""
    return list(_cheapest_order_of(tuple(rows), tuple(dims), tuple(sorted((r, tuple(p)) for r, p in present.items())),
                                   tuple(sorted(sizes.items()))))


@lru_cache(maxsize=4096)
def _cheapest_order_of(rows: tuple[int, ...], dims: tuple[int, ...], present: tuple[tuple[str, tuple[bool, ...]], ...],
                       sizes: tuple[tuple[str, int], ...]) -> tuple[int, ...]:
    # Up to 7! orders for a rank-8 problem: memoised, since verify plans the same shapes for every dtype,
    # reduction, attribute and value range. min() keeps the first of equal costs (the identity order first).
    pres, size = dict(present), dict(sizes)
    return min(itertools.permutations(rows), key=lambda perm: reread_bytes(list(perm), list(dims), pres, size))


def _mode(strides: tuple[int, ...], row_dim: int | None) -> str:
    col = strides[-1] != 0
    row = row_dim is not None and strides[row_dim] != 0
    if row_dim is None:
        return STREAM if col else SCALAR
    if col:
        return STREAM if row else ROW
    return COL if row else SCALAR


# ---------------------------------------------------------------------------------------------------------------
# Steps 4-6
# ---------------------------------------------------------------------------------------------------------------

def _sizes(problem: KernelProblem) -> dict[str, int]:
    s = {ROLE_TYPE[r]: problem.dtypes[r].itemsize for r in ("grad", "self", "target", "out")}
    s.update({"float": 4, "uint8_t": 1})
    return s


def _grad_scalar(loop: _Loop) -> bool:
    return not any(loop.strides["grad"])


def _tile_len(problem: KernelProblem, grad_scalar: bool, mask: int) -> tuple[int, int]:
    """Largest tile length (multiple of TILE_ALIGN) whose buffer plan fits the SoC's kernel UB budget."""
    sizes = _sizes(problem)
    per_elem = Fraction(0)
    for b in buffers(problem.op, grad_scalar, problem.soc.arch.npu_arch):
        if b.when is None or mask >> b.when & 1:
            per_elem += b.bytes_per_elem(sizes)
    budget = problem.soc.ub_kernel_bytes - FIXED_BYTES
    tile = int(budget / per_elem) // TILE_ALIGN * TILE_ALIGN
    if tile < TILE_ALIGN:
        raise AssertionError("buffer plan does not fit the UB budget")
    return tile, int(per_elem * tile) + FIXED_BYTES


def _split(total: int, unit: int, block_dim: int, whole: bool) -> tuple[int, int, int]:
    """Balanced units over cores. `whole` (ub_plan.blocks_only): count whole units only, so that the last core,
    which ends the space, also takes the partial one and no core's range is shorter than a unit."""
    units_total = max(1, total // unit) if whole else -(-total // unit)
    block_dim = max(1, min(block_dim, units_total))
    return block_dim, units_total // block_dim, units_total % block_dim


def plan(problem: KernelProblem) -> TilingPlan:
    op, soc = problem.op, problem.soc
    loop = _loop(problem)
    rank = len(loop.dims)
    E = loop.dims[-1]
    reads = read_roles(op)
    grad_scalar = _grad_scalar(loop)
    kl_reduce = problem.reduces
    out_inner = loop.strides["out"][-1] != 0
    if kl_reduce and not out_inner:
        row_dim: int | None = loop.out_rank - 1 if loop.out_rank > 0 else None
    else:
        row_dim = rank - 2 if rank >= 2 else None
    modes = {r: _mode(loop.strides[r], row_dim) for r in reads}

    mask = 0
    for r in reads:
        if r == "grad" and grad_scalar:
            continue
        if problem.dtypes[r] is not DType.FLOAT32 or modes[r] != STREAM:
            mask |= 1 << MASK_WORK[r]
    if needs_constants(op, soc.arch.npu_arch):
        mask |= 1 << MASK_CONST
    if kl_reduce:
        mask |= 1 << MASK_ACC | 1 << MASK_RESULT  # contributions are summed in float before the output tile
    if problem.dtypes["out"] is not DType.FLOAT32:
        mask |= 1 << MASK_RESULT
    min_size = min(problem.dtypes[r].itemsize for r in ("grad", "self", "target", "out"))
    pad = 32 // min_size
    tile, ub_bytes = _tile_len(problem, grad_scalar, mask)
    if kl_reduce and out_inner and rank - 1 - loop.out_rank == 1:
        # Each output row sums one run of the reduced dim. When that run fits one tile, the tiles of an input that
        # is broadcast along the output's dims repeat from one output row to the next: keep them resident.
        repeat = 0
        for r in reads:
            if modes[r] == STREAM and any(loop.strides[r][d] == 0 for d in range(loop.out_rank)):
                repeat |= 1 << MASK_REPEAT[r] | 1 << MASK_WORK[r]
        if repeat:
            tile2, ub2 = _tile_len(problem, grad_scalar, mask | repeat)
            pitch = -(-min(E, tile2) // pad) * pad
            if loop.dims[rank - 2] <= tile2 // pitch:
                mask, tile, ub_bytes = mask | repeat, tile2, ub2
    out_size = problem.dtypes["out"].itemsize
    total = math.prod(loop.dims)
    cores = soc.cores
    want = max(1, min(cores, total * out_size // MIN_CORE_BYTES))
    notes: list[str] = []
    has_row_operand = any(modes[r] == ROW for r in reads)
    # A column split makes every core walk every row: a streamed input broadcast along an outer row dim would be
    # re-read by each core, where the flat split reads it once per core. Short rows then stay flat.
    stream_rebroadcast = any(modes[r] == STREAM and any(loop.strides[r][d] == 0 for d in range(rank - 1))
                             for r in reads)
    align = 0
    whole = blocks_only(soc.arch.npu_arch)
    if kl_reduce:
        split = td.SPLIT_KL_REDUCE
        out_rows = math.prod(loop.dims[:loop.out_rank])
        split_total = out_rows * (E if out_inner else 1)
        # Output elements one by one, or a block of them where the kernel writes whole blocks only.
        unit = pad if out_inner else (32 // out_size if whole else 1)
        # The work is the whole broadcast space; the split is over output elements (no two cores share one).
        block_dim, base, extra = _split(split_total, unit, want, whole)
    elif has_row_operand and (E > tile or (E * out_size >= cores * COLUMN_MIN_BYTES and not stream_rebroadcast)):
        split = td.SPLIT_COLUMN
        split_total = E
        unit = pad
        block_dim, base, extra = _split(E, unit, want, whole)
        notes.append("column split: an input broadcast along rows is read once in total")
    else:
        split = td.SPLIT_FLAT
        split_total = total
        unit = pad
        block_dim, base, extra = _split(total, unit, want, whole)
        if rank == 1:
            align = GM_ALIGN_BYTES // out_size
        if has_row_operand:
            notes.append("flat split: each core reads the row-broadcast input once")

    # aclnn's beta is a C float: every constant derives from its float32 value (1/beta and the beta == 0 path too,
    # so a beta that rounds to 0 takes L1's path, and invBeta is the float64 reciprocal of what the kernel compares).
    beta = float(np.float32(problem.attrs.get("beta", 1.0)))
    inv64 = 1.0 / beta if beta > 0 else 0.0
    scale = 1.0
    if inv64 > float(np.finfo(np.float32).max):
        scale = 2.0 ** 64
        inv64 = 1.0 / (beta * scale)
    inv32 = float(np.float32(min(inv64, float(np.finfo(np.float32).max))))
    flags = 0
    if problem.attrs.get("log_target"):
        flags |= td.FLAG_LOG_TARGET
    if op.template == "smooth_l1" and beta == 0.0:
        flags |= td.FLAG_BETA_ZERO
    fields: dict[str, Any] = {
        "dims": loop.dims,
        "strideGrad": loop.strides["grad"], "strideSelf": loop.strides["self"],
        "strideTarget": loop.strides["target"], "strideOut": loop.strides["out"],
        "splitTotal": split_total, "baseUnits": base, "extraUnits": extra,
        "rank": rank, "outRank": loop.out_rank, "rowDim": row_dim or 0, "blockDim": block_dim, "splitMode": split, "unitElems": unit,
        "tileLen": tile, "padElems": pad, "alignElems": align, "flags": flags, "bufMask": mask,
        "modes": sum(td.MODES.index(modes.get(r, SCALAR)) << (2 * i) for i, r in enumerate(("grad", "self", "target"))),
        "coef": float(np.float32(problem.coefficient)), "beta": beta, "invBeta": inv32, "betaScale": scale,
    }
    key = (KEY_GRAD_SCALAR if grad_scalar else 0) | (KEY_KL_REDUCE if kl_reduce else 0)
    return TilingPlan(block_dim=block_dim, tiling_key=key, data=td.pack(fields), fields=fields, modes=modes,
                      buf_mask=mask, ub_bytes=ub_bytes, ub_budget=soc.ub_kernel_bytes, notes=tuple(notes))


def plan_call(call: Call, shapes: Mapping[str, tuple[int, ...]] | None = None) -> TilingPlan:
    return plan(problem_from_call(call, shapes))
