"""Seeded case generator of the C++/Python tiling parity test (tests/op_host/test_tiling_parity.py).

Each case is a call as a user makes it (op, argument shapes as zero-byte broadcast views, dtypes, reduction, attributes,
SoC), validated by lossgrad.validation.validate and planned by lossgrad.tiling.plan; `to_line` renders the same call
as the Inputs the CANN adapter gives the C++ core (kernel-order tensors, output, reduction, beta, log_target,
core_num = soc.cores, ub_bytes = soc.ub_kernel_bytes, npu_arch).
"""
from __future__ import annotations

import dataclasses
import math
import random
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lossgrad.dtypes import KERNEL_DTYPES, DType
from lossgrad.errors import ACLNN_ERR_INNER_TILING_ERROR, LossGradError
from lossgrad.registry import MAX_RANK, OPS, Divisor, OpSpec, OutputShape, Promotion, Reduction
from lossgrad.socs import ARCHS, SOCS, Fact, Soc
from lossgrad.tiling import TilingPlan, plan, problem_from_call
from lossgrad.tiling.cxx_tables import CoreInputs, core_inputs
from lossgrad.validation import parse_reduction, validate

MAX_ELEMS = 1 << 33
OP_IDS = {name: i for i, name in enumerate(OPS)}

SPECIAL_DIMS = (2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1000,
                1023, 1024, 1025, 4095, 4096, 4097, 8191, 8192, 8193, 65535, 65536, 65537, 100003)
BETAS = (1.0, 0.5, 2.0, 0.0, -0.0, 1e-8, 1e-30, 1e-38, 3e-39, 1e-45, 5e-324, 1e30, 3.4028234663852886e38, math.inf,
         0.1, 0.3333333333333333, 7.0)


@dataclass
class Case:
    op: OpSpec
    shapes: dict[str, tuple[int, ...]]
    dtypes: dict[str, DType]
    reduction: int
    attrs: dict[str, Any]
    soc: Soc
    out_dtype: DType | None = None
    custom_soc: Soc | None = None   # planned on this (cores, UB budget, npu_arch) instead of soc
    compact: dict[str, tuple[int, ...]] | None = None  # kernel views (runners: stride-0 dims become 1)
    tag: str = ""


@dataclass
class Outcome:
    """What Python says: a plan, a rejection the core must also report, or nothing to compare."""

    kind: str                      # "plan" | "error" | "skip"
    line: str = ""
    plan: TilingPlan | None = None
    why: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def view(shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    return np.broadcast_to(np.zeros((), dtype.np_dtype), shape)


def _tensor(shape: tuple[int, ...], dtype: DType) -> str:
    return " ".join(str(x) for x in (len(shape), dtype.acl_enum, *shape))


def to_line(op: OpSpec, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, DType], out_shape: tuple[int, ...],
            out_dtype: DType, reduction: int, beta: float, log_target: bool, cores: int, ub_bytes: int,
            npu_arch: int, op_id: int | None = None) -> str:
    parts = [str(OP_IDS[op.name] if op_id is None else op_id)]
    parts += [_tensor(shapes[io.role], dtypes[io.role]) for io in op.kernel_inputs]
    parts.append(_tensor(out_shape, out_dtype))
    bits = struct.unpack("<Q", struct.pack("<d", float(beta)))[0]
    parts += [str(int(reduction)), f"{bits:016x}", str(int(bool(log_target))), str(cores), str(ub_bytes),
              str(npu_arch)]
    return " ".join(parts)


def _out_shape(op: OpSpec, shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...] | None:
    try:
        if op.output_shape is OutputShape.SELF:
            np.broadcast_shapes(shapes["self"], shapes["target"])
            return shapes["self"]
        return tuple(np.broadcast_shapes(shapes["grad"], shapes["self"], shapes["target"]))
    except ValueError:
        return None


def evaluate(case: Case) -> Outcome:
    op = case.op
    args = [view(case.shapes[r], case.dtypes[r]) for r in ("grad", "self", "target")]
    soc = case.custom_soc or case.soc
    beta = float(case.attrs.get("beta", 1.0))
    log_target = bool(case.attrs.get("log_target", False))
    try:
        call = validate(op, *args, case.reduction, case.attrs, out_dtype=case.out_dtype, soc=case.soc)
    except LossGradError as exc:
        # Rejections the core sees too: the reduction, beta, a rank above 8, a mean over an empty divisor.
        seen = exc.code == ACLNN_ERR_INNER_TILING_ERROR or exc.message.startswith(("reduction:", "beta:")) or \
            "exceeds the maximum" in exc.message
        out_shape = _out_shape(op, case.shapes)
        if not seen or out_shape is None:
            return Outcome("skip", why=f"validation: {exc.message}")
        out_dtype = case.out_dtype or case.dtypes["self"]  # any kernel dtype: the core must refuse the call
        line = to_line(op, case.shapes, case.dtypes, out_shape, out_dtype, case.reduction, beta, log_target,
                       soc.cores, soc.ub_kernel_bytes, soc.arch.npu_arch)
        return Outcome("error", line=line, why=f"validation: {exc.message}")
    reduction = parse_reduction(op, case.reduction)
    if not call.launch and reduction not in (Reduction.NONE, Reduction.SUM):
        # aclnn returns before the tiling; validation then keeps the coefficient's numerator only.
        return Outcome("skip", why="empty call, no launch")
    if case.compact is not None and reduction is Reduction.MEAN and op.mean_divisor is Divisor.SELF_NUMEL and \
            case.compact["self"] != tuple(call.self_.shape):
        # The core sees only the kernel view of self; validation divided by the caller's self (see docs/tiling.md).
        return Outcome("skip", why="mean over numel(self) of a compacted self")
    if case.compact is not None and op.output_shape is OutputShape.SELF and \
            tuple(np.broadcast_shapes(call.out_shape, case.compact["target"])) != tuple(call.iter_shape):
        # Inputs carry no iteration shape: for KL it is broadcast(self, target) of the tensors as passed.
        return Outcome("skip", why="KL: a compacted target hides the iteration space")
    problem = problem_from_call(call, case.compact)
    if case.custom_soc is not None:
        problem = dataclasses.replace(problem, soc=case.custom_soc)
    line = inputs_line(core_inputs(problem))
    try:
        p = plan(problem)
    except (AssertionError, struct.error, OverflowError) as exc:
        return Outcome("error", line=line, why=f"plan: {type(exc).__name__}: {exc}")
    return Outcome("plan", line=line, plan=p)


def inputs_line(ci: CoreInputs) -> str:
    """One driver line (tiling_parity_driver.cpp) of the core's Inputs."""
    bits = struct.unpack("<Q", struct.pack("<d", ci.beta))[0]
    parts = [str(ci.op), *(_tensor(shape, dt) for shape, dt in ci.inputs), _tensor(*ci.output), str(ci.reduction),
             f"{bits:016x}", str(int(ci.log_target)), str(ci.core_num), str(ci.ub_bytes), str(ci.npu_arch)]
    return " ".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------------------------------

def _dims(rng: random.Random, rank: int, max_elems: int = MAX_ELEMS) -> list[int]:
    """`rank` dims whose product is at most max_elems, log-uniform in size, with special values and 1s."""
    if rank == 0:
        return []
    target = 2 ** rng.uniform(0, math.log2(max_elems))
    cuts = sorted(rng.random() for _ in range(rank - 1))
    shares = [b - a for a, b in zip([0.0] + cuts, cuts + [1.0])]
    dims = []
    for s in shares:
        r = rng.random()
        if r < 0.12:
            d = 1
        elif r < 0.35:
            d = rng.choice(SPECIAL_DIMS)
        else:
            d = max(1, int(round(target ** s)))
        dims.append(d)
    while math.prod(dims) > max_elems:
        i = max(range(rank), key=lambda k: dims[k])
        dims[i] = max(1, dims[i] // rng.choice((2, 3, 7, 16)))
    return dims


def _masked(rng: random.Random, full: list[int], keep: list[bool], trim: bool = True) -> tuple[int, ...]:
    shape = [d if k else 1 for d, k in zip(full, keep)]
    if trim:  # drop some leading 1s (NumPy right-aligns shapes)
        lead = 0
        while lead < len(shape) and shape[lead] == 1:
            lead += 1
        shape = shape[rng.randint(0, lead):]
    return tuple(shape)


def _dtypes(rng: random.Random, op: OpSpec, soc: Soc) -> tuple[dict[str, DType], DType | None]:
    supported = [d for d in op.supported_dtypes(soc.arch.npu_arch) if d in KERNEL_DTYPES]
    if rng.random() < (0.9 if op.promotion is Promotion.SAME_AS_SELF else 0.55):
        d = rng.choice(supported)
        dtypes = {r: d for r in ("grad", "self", "target")}
    else:  # mixed (validation rejects what the op does not accept: MSE never mixes)
        dtypes = {r: rng.choice(supported) for r in ("grad", "self", "target")}
    out_dtype = rng.choice(supported) if rng.random() < 0.25 else None
    return dtypes, out_dtype


def _attrs(rng: random.Random, op: OpSpec) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for a in op.attrs:
        if a.name == "beta":
            attrs["beta"] = rng.choice(BETAS) if rng.random() < 0.7 else 10 ** rng.uniform(-12, 6)
        elif a.name == "log_target":
            attrs["log_target"] = rng.random() < 0.5
    return attrs


def _reduction(rng: random.Random, op: OpSpec) -> int:
    r = rng.random()
    if r < 0.03:
        return rng.choice((-1, 4, 7, 1000))  # out of range: KL maps it to none, the others reject it
    if r < 0.05:
        return rng.choice([int(x) for x in Reduction])  # may be one the op does not accept
    return rng.choice([int(x) for x in op.reductions])


def _custom_soc(rng: random.Random, soc: Soc) -> Soc:
    cores = rng.choice((1, 2, 3, 5, 7, 13, 24, 64, 100, 1024, 65536))
    npu_arch = rng.choice((0, *ARCHS))
    ub = rng.choice((2048, 8192, 16384, 65536, 100000, 131072, 188416, 245760, 253952, 524288, 1 << 20,
                     rng.randint(4096, 1 << 21)))
    arch = dataclasses.replace(soc.arch, npu_arch=npu_arch, ub_kernel_bytes=Fact(ub, "parity test", "none"))
    return dataclasses.replace(soc, arch=arch, vector_cores=Fact(cores, "parity test", "none"))


def _broadcast_all_shapes(rng: random.Random, pattern: str) -> dict[str, tuple[int, ...]]:
    roles = ("grad", "self", "target")
    if pattern == "zero_d":
        return {r: () for r in roles}
    if pattern == "rank8_alternating":
        full = [rng.choice((2, 3, 4, 5, 7, 8, 16, 17)) for _ in range(MAX_RANK)]
        while math.prod(full) > MAX_ELEMS:
            full[rng.randrange(MAX_RANK)] = 2
        a = [i % 2 == 0 for i in range(MAX_RANK)]
        b = [not x for x in a]
        masks = rng.choice(((a, b, [True] * MAX_RANK), (a, b, a), (b, [True] * MAX_RANK, a), (a, a, b),
                            (a, b, [rng.random() < 0.5 for _ in range(MAX_RANK)])))
        order = list(roles)
        rng.shuffle(order)
        return {r: _masked(rng, full, m) for r, m in zip(order, masks)}
    rank = rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8)) if pattern != "outer" else rng.choice((2, 3))
    full = _dims(rng, rank)
    if pattern == "empty":
        full[rng.randrange(rank)] = 0
    shapes = {r: tuple(full) for r in roles}
    if pattern == "same" or pattern == "empty":
        return shapes
    pick = rng.choice(roles)
    if pattern == "scalar_grad":
        shapes["grad"] = rng.choice(((), (1,), (1,) * rng.randint(1, rank)))
    elif pattern == "row":
        shapes[pick] = tuple(full[rng.randint(1, rank):]) if rank > 1 else (1,)
    elif pattern == "column":
        shapes[pick] = tuple(full[:-1]) + (1,)
    elif pattern == "outer":
        a = [i % 2 == 0 for i in range(rank)]
        b = [not x for x in a]
        order = list(roles)
        rng.shuffle(order)
        shapes = {order[0]: _masked(rng, full, a), order[1]: _masked(rng, full, b), order[2]: tuple(full)}
        if rng.random() < 0.3:
            shapes[order[2]] = _masked(rng, full, a)
    else:  # random presence per input
        for r in roles:
            shapes[r] = _masked(rng, full, [rng.random() < 0.6 for _ in range(rank)])
    return shapes


def _kl_shapes(rng: random.Random, pattern: str) -> dict[str, tuple[int, ...]]:
    if pattern == "zero_d":
        return {"grad": (), "self": (), "target": ()}
    rank = MAX_RANK if pattern == "rank8_alternating" else rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8))
    if pattern == "rank8_alternating":
        full = [rng.choice((2, 3, 4, 5, 7, 8, 16)) for _ in range(rank)]
    else:
        full = _dims(rng, rank)
    zero = rng.randrange(rank)
    if pattern == "empty":
        full[zero] = 0
    alt = [i % 2 == (rng.random() < 0.5) for i in range(rank)]
    if pattern == "same":
        self_keep = target_keep = [True] * rank
    elif pattern == "empty":  # an empty self (no launch), or an empty target broadcast against a non-empty self
        self_keep = [i != zero or rng.random() < 0.5 for i in range(rank)]
        target_keep = [True] * rank
    elif pattern == "rank8_alternating":
        self_keep, target_keep = alt, [True] * rank
    elif pattern in ("self_broadcast", "row", "column", "outer"):
        # self broadcast against target: the output (self's shape) is summed over the broadcast dims
        if pattern == "row":
            self_keep = [i >= rng.randint(1, rank) for i in range(rank)] if rank > 1 else [False]
        elif pattern == "column":
            self_keep = [i < rank - 1 for i in range(rank)]
        elif pattern == "outer":
            self_keep = alt
        else:
            self_keep = [rng.random() < 0.5 for _ in range(rank)]
        target_keep = [True] * rank if rng.random() < 0.7 else [not s or rng.random() < 0.5 for s in self_keep]
    else:  # target broadcast, or both
        self_keep = [rng.random() < 0.7 for _ in range(rank)]
        target_keep = [rng.random() < 0.6 for _ in range(rank)]
    covered = [s or t for s, t in zip(self_keep, target_keep)]
    if pattern == "scalar_grad":
        grad = rng.choice(((), (1,), (1,) * rng.randint(1, rank)))
    else:
        grad = _masked(rng, full, [c and rng.random() < 0.75 for c in covered])
    return {"grad": grad, "self": _masked(rng, full, self_keep), "target": _masked(rng, full, target_keep)}


PATTERNS = ("same", "same", "scalar_grad", "row", "column", "outer", "random", "random", "random", "zero_d", "empty",
            "rank8_alternating", "self_broadcast", "self_broadcast")


def generate(seed: int, count: int, rank8_share: float = 0.03) -> list[Case]:
    rng = random.Random(seed)
    socs = list(SOCS.values())
    ops = list(OPS.values())
    cases = []
    for i in range(count):
        op = ops[i % len(ops)]
        soc = socs[rng.randrange(len(socs))]
        if rng.random() < rank8_share:
            pattern = "rank8_alternating"
        else:
            pattern = rng.choice([p for p in PATTERNS if p != "rank8_alternating"])
        if op.output_shape is OutputShape.SELF:
            shapes = _kl_shapes(rng, pattern)
        else:
            shapes = _broadcast_all_shapes(rng, "random" if pattern == "self_broadcast" else pattern)
        dtypes, out_dtype = _dtypes(rng, op, soc)
        custom = _custom_soc(rng, soc) if rng.random() < 0.08 else None
        compact = None
        if rng.random() < 0.1:  # some dims of the caller's tensors were stride-0 views: the kernel reads them as 1
            compact = {r: tuple(1 if rng.random() < 0.3 else d for d in shape) for r, shape in shapes.items()}
        cases.append(Case(op=op, shapes=shapes, dtypes=dtypes, reduction=_reduction(rng, op), attrs=_attrs(rng, op),
                          soc=soc, out_dtype=out_dtype, custom_soc=custom, compact=compact, tag=pattern))
    return cases
