"""Fuzzing the tiling: thousands of seeded random calls (every op, SoC and dtype the registry allows, random broadcast
patterns, 0 to 8 dims, up to 2^33 elements, some on made-up parts (core count, UB budget, npu_arch 0) and some with
the runners' kernel views), planned by lossgrad.tiling.plan, i.e. by the C++ core CANN runs (lossgrad.tiling.native),
each plan checked against the invariants the kernels rely on. The checks are derived from the kernels' needs and the
registry/SoC facts, not from the core's code.

Invariants:
- split: the per-core ranges re-derived from baseUnits/extraUnits/unitElems/splitTotal partition [0, splitTotal)
  (every element exactly once, in order, no core empty unless the space is);
- UB: the plan's bytes fit the SoC's kernel budget, the tile is the largest multiple of 256 that fits, and every
  InitBuffer size is a multiple of 32 bytes;
- alignment: unitElems is 32 bytes of the narrowest dtype (1 for a KL reduction whose output is not the inner dim),
  core starts fall on unit boundaries, flat rank-1 splits align tiles to 512 bytes of the output dtype;
- cores: 1 <= block_dim <= the part's vector cores, block_dim = min(cores, units, work // 16 KB) (as many cores as
  the 16 KB rule allows); with block_dim > 1 the average share is >= 16 KB and each core's share is within one unit
  of it (flat splits: every core's allotment is >= 16 KB exactly);
- loop: the dims multiply to numel(iteration space), every operand's strides are a contiguous row-major layout of its
  own buffer (broadcast dims stride 0), and for small spaces the loop visits exactly the (grad, self, target, out)
  element tuples NumPy broadcasting gives;
- 64-bit: the packed struct unpacks to the plan's fields, also beyond 2^32 elements;
- constants: coef is validation's coefficient rounded once to float32 (also for kernel views, whose shapes alone
  would give another divisor), beta is the float32 beta, invBeta * betaScale its reciprocal, the flags the attributes.
"""
from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from lossgrad.dtypes import KERNEL_DTYPES
from lossgrad.errors import LossGradError
from lossgrad.registry import INPUT_ROLES, MAX_RANK, OPS, Check, OpSpec, OutputShape, Reduction, runs_on
from lossgrad.socs import ARCHS, SOCS, Fact, Soc
from lossgrad.tiling import (MIN_CORE_BYTES, TILE_ALIGN, KernelProblem, TilingPlan, _sizes, plan, problem_from_call)
from lossgrad.tiling import data as td
from lossgrad.tiling.native import TilingError
from lossgrad.tiling import ub_plan
from lossgrad.validation import validate

MAX_ELEMS = 1 << 33
CHUNKS = 4
CASES_PER_CHUNK = 5000
SEED = 424242
ROLES = INPUT_ROLES + ("out",)


def _roles(problem: KernelProblem) -> tuple[str, ...]:
    """The tensors the call has: its inputs (an absent optional one has no strides: all 0) and out."""
    return tuple(r for r in ROLES if r in problem.dtypes)
EXHAUSTIVE_LIMIT = 1 << 14   # spaces up to this many elements get the element-by-element loop check


def _dims(rng: random.Random, rank: int) -> list[int]:
    if rank == 0:
        return []
    target = 2 ** rng.uniform(0, math.log2(MAX_ELEMS))
    cuts = sorted(rng.random() for _ in range(rank - 1))
    dims = []
    for a, b in zip([0.0] + cuts, cuts + [1.0]):
        r = rng.random()
        if r < 0.15:
            dims.append(1)
        elif r < 0.35:
            dims.append(rng.choice((2, 3, 7, 8, 16, 31, 32, 33, 255, 256, 257, 1000, 4096, 4097, 65537)))
        else:
            dims.append(max(1, round(target ** (b - a))))
    while math.prod(dims) > MAX_ELEMS:
        i = max(range(rank), key=lambda k: dims[k])
        dims[i] = max(1, dims[i] // rng.choice((2, 3, 5, 16)))
    return dims


def _shape(rng: random.Random, full: list[int], keep_p: float) -> tuple[int, ...]:
    shape = [d if rng.random() < keep_p else 1 for d in full]
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return tuple(shape[rng.randint(0, lead):])


def _case(rng: random.Random, op: OpSpec) -> dict[str, Any]:
    soc = rng.choice([s for s in SOCS.values() if runs_on(op, s)])  # KlDivTarget: not on 310P/910
    rank = rng.choices(range(MAX_RANK + 1), weights=(3, 12, 12, 9, 6, 4, 3, 2, 1))[0]
    full = _dims(rng, rank)
    keep = rng.choice((1.0, 1.0, 0.8, 0.5, 0.3))
    shapes = {r: _shape(rng, full, keep if rng.random() < 0.7 else 1.0) for r in ("grad", "self", "target")}
    if op.reduced_onto and rng.random() < 0.5:  # KL (KlDivTarget): reduce over dims self (target) lacks
        shapes["target" if op.reduced_onto == "self" else "self"] = tuple(full)
        shapes["grad"] = _shape(rng, full, 0.7)
    supported = [d for d in op.supported_dtypes(soc.arch.npu_arch) if d in KERNEL_DTYPES]
    one = rng.choice(supported)
    dtypes = {r: (one if rng.random() < 0.7 else rng.choice(supported)) for r in ("grad", "self", "target")}
    if op.output_shape is OutputShape.SELF_ABSORBING:  # BCE: the others broadcast into self
        shapes["self"] = tuple(full)
        if Check.TARGET_IS_SELF in op.checks:  # BCEWithLogits: target is self's shape
            shapes["target"] = tuple(full)
    for role in op.roles[3:]:  # an optional input: present in half the calls, with a shape of its own
        if rng.random() < 0.5:
            shapes[role] = _shape(rng, full, keep)
            dtypes[role] = one if rng.random() < 0.7 else rng.choice(supported)
    attrs: dict[str, Any] = {}
    for a in op.attrs:
        attrs[a.name] = rng.choice((1.0, 0.0, 0.5, 1e-30, 3.0)) if a.name == "beta" else rng.random() < 0.5
    # the runners' kernel views: dims a broadcast view repeats shrink to 1 (the caller's shapes still count)
    views = {r: tuple(1 if rng.random() < 0.3 else d for d in sh) for r, sh in shapes.items()} \
        if rng.random() < 0.15 else None
    return dict(op=op, soc=soc, shapes=shapes, dtypes=dtypes, reduction=rng.choice(list(op.reductions)),
                attrs=attrs, out_dtype=_out_dtype(op, dtypes, rng.choice(supported) if rng.random() < 0.2 else None),
                views=views,
                custom=_custom_soc(rng, soc) if rng.random() < 0.08 else None)


def _out_dtype(op: OpSpec, dtypes: dict[str, Any], drawn: Any) -> Any:
    """The drawn out dtype, or target's where aclnn requires that (Check.OUT_TARGET_DTYPE, BCEWithLogits)."""
    return dtypes["target"] if drawn is not None and Check.OUT_TARGET_DTYPE in op.checks else drawn


def _custom_soc(rng: random.Random, soc: Soc) -> Soc:
    """A part the SoC table does not have, as the CANN adapter may describe it (npu_arch 0 = unknown)."""
    cores = rng.choice((1, 2, 3, 5, 7, 13, 24, 64, 100, 1024, 65536))
    npu_arch = rng.choice((0, *ARCHS))
    # large UBs twice as likely: their tiles reach the DMA limits (check_dma), which every chunk must cover
    ub = rng.choice((16384, 65536, 100000, 131072, 188416, 245760, 253952, 524288, 1 << 20, 1 << 20, 1 << 21,
                     1 << 21, rng.randint(8192, 1 << 21)))
    arch = dataclasses.replace(soc.arch, npu_arch=npu_arch, ub_kernel_bytes=Fact(ub, "fuzz", "none"))
    return dataclasses.replace(soc, arch=arch, vector_cores=Fact(cores, "fuzz", "none"))


def _plan(case: dict[str, Any]) -> tuple[KernelProblem, TilingPlan] | None:
    arrays = [np.broadcast_to(np.zeros((), case["dtypes"][r].np_dtype), case["shapes"][r])
              if r in case["shapes"] else None for r in (i.role for i in case["op"].inputs)]
    try:
        call = validate(case["op"], *arrays, case["reduction"], case["attrs"], out_dtype=case["out_dtype"],
                        soc=case["soc"])
    except LossGradError:
        return None
    if not call.launch:
        return None
    problem = problem_from_call(call, case["views"])
    if case["custom"] is not None:
        problem = dataclasses.replace(problem, soc=case["custom"])
    try:
        return problem, plan(problem)
    except TilingError as exc:
        # the only refusal of a validated call: a made-up UB budget too small for the op's buffer plan
        assert case["custom"] is not None and "does not fit the UB budget" in str(exc), exc
        return None


# ---------------------------------------------------------------------------------------------------------------
# Invariants
# ---------------------------------------------------------------------------------------------------------------

def _segments(p: TilingPlan) -> int:
    """KL two-stage reduction: cores sharing each unit of output elements (1: every core owns whole units)."""
    return int(p.fields.get("segments", 1))


def check_split(problem: KernelProblem, p: TilingPlan) -> None:
    f = p.fields
    total_split, unit, base, extra, bd = f["splitTotal"], f["unitElems"], f["baseUnits"], f["extraUnits"], p.block_dim
    if _segments(p) > 1:
        # every unit of output elements is summed by `segments` cores (one segment of its reduced range each)
        assert f["splitMode"] == td.SPLIT_KL_REDUCE and bd == f["blockDim"]
        assert bd == -(-total_split // unit) * _segments(p) and (base, extra) == (1, 0), (bd, total_split, unit)
        assert p.workspace_bytes > 0
        return
    assert p.workspace_bytes == 0
    whole = ub_plan.blocks_only(problem.soc.arch.npu_arch)
    units = _units(problem, p)
    assert bd == f["blockDim"] and bd * base + extra == units and 0 <= extra < bd
    pos = 0
    for core in range(bd):
        n_units = base + (1 if core < extra else 0)
        start_unit = core * base + min(core, extra)
        start, end = start_unit * unit, min((start_unit + n_units) * unit, total_split)
        if core == bd - 1:
            end = total_split  # the kernel's last core ends the space (it takes the partial unit when `whole`)
        assert start == min(pos, total_split) and start % unit == 0, (core, start, pos)
        assert end > start or total_split == 0, (core, start, end)
        if whole and total_split * problem.dtypes["out"].itemsize >= 32:
            # 310P/910 write whole 32-byte blocks: every core's range is at least one block of the output
            assert (end - start) * problem.dtypes["out"].itemsize >= 32, (core, start, end)
        pos = end
    assert pos == total_split  # the ranges tile [0, splitTotal) exactly once, in order


def _units(problem: KernelProblem, p: TilingPlan) -> int:
    """Balance units of the split: whole units only where the kernel writes whole blocks (the last core also takes
    the partial unit), else every started unit."""
    total_split, unit = p.fields["splitTotal"], p.fields["unitElems"]
    if ub_plan.blocks_only(problem.soc.arch.npu_arch):
        return max(1, total_split // unit)
    return -(-total_split // unit)


def check_cores(problem: KernelProblem, p: TilingPlan) -> None:
    f = p.fields
    cores = min(problem.soc.cores, 65535)  # a launch's numBlocks is at most 65535 (docs/tiling.md, step 12)
    bd = p.block_dim
    assert 1 <= bd <= cores
    out_size = problem.dtypes["out"].itemsize
    total = math.prod(f["dims"][:f["rank"]])
    units = _units(problem, p)
    work_bytes = total * out_size  # what the 16 KB rule measures: the whole (broadcast) space, in output bytes
    if _segments(p) > 1:  # more cores than units of output: as many as the 16 KB rule allows, at least 2 a unit
        assert 2 <= _segments(p) and bd <= max(1, min(cores, work_bytes // MIN_CORE_BYTES))
        return
    assert bd == max(1, min(cores, units, work_bytes // MIN_CORE_BYTES))
    if bd == 1:
        return
    assert work_bytes // bd >= MIN_CORE_BYTES
    per_split_elem = total // f["splitTotal"]  # flat 1, column: rows, KL: contributions per output element
    unit_bytes = f["unitElems"] * per_split_elem * out_size
    smallest = f["baseUnits"] * unit_bytes
    assert smallest > MIN_CORE_BYTES - unit_bytes  # balanced: no core is more than one unit short of 16 KB
    if f["splitMode"] == td.SPLIT_FLAT:
        assert smallest >= MIN_CORE_BYTES  # 16 KB is a whole number of flat units: exact


def check_ub(problem: KernelProblem, p: TilingPlan) -> None:
    f = p.fields
    tile = f["tileLen"]
    assert tile >= TILE_ALIGN and tile % TILE_ALIGN == 0
    assert p.ub_bytes <= p.ub_budget == problem.soc.ub_kernel_bytes
    grad_scalar = bool(p.tiling_key & 1)
    sizes = _sizes(problem)
    per_elem = 0.0
    allocated = 0
    for b in ub_plan.buffers(problem.op, grad_scalar, problem.soc.arch.npu_arch, problem.absent):
        if b.when is not None and not f["bufMask"] >> b.when & 1:
            continue
        size = tile * b.mult * sizes[b.ctype]
        assert size % b.div == 0 and (size // b.div) % 32 == 0, (b.name, size, b.div)
        assert b.pad % 32 == 0, b.name
        allocated += b.count * (size // b.div + b.pad)
        per_elem += b.count * b.mult * sizes[b.ctype] / b.div
    assert allocated + ub_plan.SCALAR_STAGE_BYTES == p.ub_bytes <= p.ub_budget
    # the largest tile: one more TILE_ALIGN step no longer fits, or would break a DMA limit (check_dma)
    assert allocated + per_elem * TILE_ALIGN + ub_plan.SCALAR_STAGE_BYTES > p.ub_budget or \
        not _dma_ok(problem, tile + TILE_ALIGN)


def _dma_ok(problem: KernelProblem, tile: int) -> bool:
    """A tile's rows are one copy: at most DMA_MAX_BLOCK_COUNT rows of at least 32 bytes of the narrowest dtype each,
    and a UB-side stride (below the tile's bytes at 4 bytes an element, in 32-byte blocks) within 950's limit."""
    narrowest = min(problem.dtypes[r].itemsize for r in _roles(problem))
    return tile // (32 // narrowest) <= td.DMA_MAX_BLOCK_COUNT and tile * 4 // 32 <= td.DMA_MAX_UB_STRIDE_BLOCKS_950


def check_dma(problem: KernelProblem, p: TilingPlan) -> None:
    f = p.fields
    assert _dma_ok(problem, f["tileLen"])
    assert f["tileLen"] // f["padElems"] <= td.DMA_MAX_BLOCK_COUNT  # rows of a tile, each pitch >= padElems


def check_alignment(problem: KernelProblem, p: TilingPlan) -> None:
    f = p.fields
    narrowest = min(problem.dtypes[r].itemsize for r in _roles(problem))
    assert f["padElems"] * narrowest == 32
    out_inner = td.loop_strides(f)["out"][f["rank"] - 1] != 0
    if _segments(p) > 1:
        # KL two-stage: groups of m units, m a power of two (docs/kernels.md, "KL reduction"): 32-byte blocks of
        # columns when the inner dim is kept, else output elements.
        m = f["unitElems"] // f["padElems"] if out_inner else f["unitElems"]
        assert m >= 1 and m & (m - 1) == 0 and (not out_inner or f["unitElems"] % f["padElems"] == 0)
    elif f["splitMode"] == td.SPLIT_KL_REDUCE and not out_inner:
        # output elements one by one, or whole 32-byte output blocks where the kernel writes only those (310P/910)
        whole = ub_plan.blocks_only(problem.soc.arch.npu_arch)
        assert f["unitElems"] == (32 // problem.dtypes["out"].itemsize if whole else 1)
    elif f["splitMode"] == td.SPLIT_COLUMN:
        # column pieces start on the architecture's row alignment (gm_row_align_bytes) whenever that still gives
        # every core a piece, else on 32-byte blocks
        npu_arch = problem.soc.arch.npu_arch  # a custom part may name no known architecture: 32 bytes
        row_align = ARCHS[npu_arch].gm_row_align_bytes.value if npu_arch in ARCHS else 32
        aligned = row_align // narrowest
        assert f["unitElems"] * narrowest in (32, row_align)
        if f["unitElems"] * narrowest == 32 and aligned * narrowest > 32:
            assert f["splitTotal"] // aligned < f["blockDim"]
        assert -(-f["splitTotal"] // f["unitElems"]) >= f["blockDim"]
    else:
        assert f["unitElems"] * narrowest == 32
    if f["splitMode"] == td.SPLIT_FLAT and f["rank"] == 1:
        assert f["alignElems"] * problem.dtypes["out"].itemsize == 512
    else:
        assert f["alignElems"] == 0


def check_loop(problem: KernelProblem, p: TilingPlan) -> None:
    f = p.fields
    rank = f["rank"]
    dims = f["dims"][:rank]
    assert 1 <= rank <= MAX_RANK and all(d == 0 for d in f["dims"][rank:])
    assert math.prod(dims) == math.prod(problem.iter_shape)
    order = sorted(f["memDims"] >> 4 * p & 15 for p in range(rank))  # memory order: a permutation of the loop dims
    assert f["memDims"] >> 4 * rank == 0 and order == list(range(rank))
    assert all(f["present"] >> 8 * i & 0xFF < 1 << rank for i in range(len(td.STRIDE_ROLES)))
    assert f["present"] >> 8 * len(td.STRIDE_ROLES) == 0
    table = td.loop_strides(f)
    for role, strides in table.items():
        if role not in problem.dtypes:  # an absent optional input (or a role the op lacks): never addressed (a
            assert all(s == 0 for s, d in zip(strides, dims) if d > 1), (role, strides)  # stride on an axis of 1
            continue                                                                       # multiplies index 0)
        n = math.prod(problem.shapes[role])
        if n == 0 or math.prod(dims) == 0:
            continue
        # the non-zero strides form a mixed radix of the operand's own buffer: contiguous, row-major, no gaps
        present = sorted((s, d) for s, d in zip(strides, dims) if s != 0)
        acc = 1
        for s, d in present:
            assert s == acc, (role, strides, dims)
            acc *= d
        assert acc == n, (role, strides, dims, problem.shapes[role])
    if 0 < math.prod(problem.iter_shape) <= EXHAUSTIVE_LIMIT:
        _check_elements(problem, dims, {r: table[r][:rank] for r in _roles(problem)})


def _check_elements(problem: KernelProblem, dims: tuple[int, ...], strides: dict[str, tuple[int, ...]]) -> None:
    """The loop visits exactly the element tuples of NumPy broadcasting (as a multiset: the loop order may differ)."""
    it = tuple(problem.iter_shape)
    want = []
    got = []
    for role in _roles(problem):
        shape = tuple(problem.shapes[role])
        ids = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
        want.append(np.broadcast_to(ids, it).ravel())
        off = np.zeros(dims, dtype=np.int64)
        for axis, (d, s) in enumerate(zip(dims, strides[role])):
            view = [1] * len(dims)
            view[axis] = d
            off = off + (np.arange(d, dtype=np.int64) * s).reshape(view)
        got.append(off.ravel())
    a, b = np.stack(want), np.stack(got)
    a = a[:, np.lexsort(a[::-1])]
    b = b[:, np.lexsort(b[::-1])]
    assert np.array_equal(a, b)


def check_packing(problem: KernelProblem, p: TilingPlan) -> None:
    assert len(p.data) == td.SIZE
    back = td.unpack(p.data)
    for fld in td.FIELDS:
        v = p.fields[fld.name]
        if fld.count > 1:
            assert back[fld.name] == tuple(v) + (0,) * (fld.count - len(v)), fld.name
        else:
            assert back[fld.name] == v, fld.name


def check_constants(problem: KernelProblem, p: TilingPlan) -> None:
    f = p.fields
    f32 = lambda x: float(np.float32(x))  # noqa: E731
    assert f["coef"] == f32(problem.coefficient)
    beta = f32(problem.attrs.get("beta", 1.0))
    assert f["beta"] == beta
    if beta > 0:
        assert math.isclose(f["invBeta"] * f["betaScale"] * beta, 1.0, rel_tol=1e-6) or math.isinf(1 / beta)
    flags = (td.FLAG_LOG_TARGET if problem.attrs.get("log_target") else 0) | \
        (td.FLAG_BETA_ZERO if "beta" in problem.attrs and beta == 0.0 else 0)
    assert f["flags"] == flags


CHECKS = (check_split, check_cores, check_ub, check_dma, check_alignment, check_loop, check_packing, check_constants)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_tiling_invariants(chunk: int) -> None:
    rng = random.Random(SEED + chunk)
    ops = list(OPS.values())
    seen: Counter[str] = Counter()
    for i in range(CASES_PER_CHUNK):
        case = _case(rng, ops[i % len(ops)])
        planned = _plan(case)
        if planned is None:
            seen["rejected or empty"] += 1
            continue
        problem, p = planned
        for check in CHECKS:
            try:
                check(problem, p)
            except AssertionError as exc:
                raise AssertionError(f"{check.__name__} fails for {case['op'].name} {case['shapes']} "
                                     f"{ {r: d.label for r, d in problem.dtypes.items()} } {case['soc'].name} "
                                     f"reduction={case['reduction']} attrs={case['attrs']}: {exc}\n"
                                     f"fields={p.fields}") from exc
        seen["planned"] += 1
        seen[f"split {p.fields['splitMode']}"] += 1
        seen[f"op {case['op'].name}"] += 1
        if p.block_dim > 1:
            seen["multi-core"] += 1
        if math.prod(problem.iter_shape) > 1 << 32:
            seen["beyond 2^32"] += 1
        if 0 < math.prod(problem.iter_shape) <= EXHAUSTIVE_LIMIT:
            seen["element-checked"] += 1
        if problem.caller_shapes is not None:
            seen["kernel views"] += 1
        if case["custom"] is not None:
            seen["custom part"] += 1
            if not _dma_ok(problem, p.fields["tileLen"] + TILE_ALIGN):
                seen["tile at a DMA limit"] += 1
    assert seen["planned"] >= CASES_PER_CHUNK // 2, seen
    for key in ("split 0", "split 1", "split 2", "multi-core", "beyond 2^32", "element-checked", "kernel views",
                "custom part", "tile at a DMA limit",
                *(f"op {name}" for name in OPS)):
        assert seen[key] > 0, (key, seen)


def test_invariants_hold_on_hand_picked_plans() -> None:
    """The checks themselves catch what they should: a plan with one core fewer no longer partitions."""
    arrays = [np.broadcast_to(np.zeros((), np.float32), (64, 4096)) for _ in range(3)]
    problem = problem_from_call(validate("l1_loss_backward", *arrays, Reduction.SUM, soc="Ascend910B1"))
    p = plan(problem)
    for check in CHECKS:
        check(problem, p)
    broken = TilingPlan(block_dim=p.block_dim - 1, tiling_key=p.tiling_key, data=p.data,
                        fields={**p.fields, "blockDim": p.block_dim - 1}, modes=p.modes, buf_mask=p.buf_mask,
                        ub_bytes=p.ub_bytes, ub_budget=p.ub_budget)
    with pytest.raises(AssertionError):
        check_split(problem, broken)
