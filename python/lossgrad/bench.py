"""`lossgrad bench` on the twin: counters, not timings.

For each op and scenario the twin runs our kernel and reports GM bytes per output element, vector instructions
(256-byte repeats) per element and tiles per core. Beside it stands the aclnn composition that ops-nn documents for
the op (ops_semantics §1.3, §2.3, §3.3, §4.3, §7): BroadcastTo passes for inputs whose shape differs from the
broadcast shape, Cast passes to the computation dtype, the kernel on those materialised inputs, then for KL a
ReduceSum back to self's shape. The composition's kernel step is measured the same way (our kernel, run on the
materialised full-shape inputs); its BroadcastTo/Cast/ReduceSum passes are counted as the memory traffic they must
move (each reads its input once and writes its output once; vector instructions: one per 256 output bytes for a
Cast or ReduceSum, none for a BroadcastTo, which is a data move). The traffic ratio is therefore measured for both
kernels and exact arithmetic for the passes. Device timings are `--backend npu|sim` (lossgrad.cann.bench).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import dtypes as dt
from .dtypes import DType
from .golden import aclnn_kernel_dtype
from .registry import OPS, OpSpec, OutputShape, Promotion
from .runners.twin import run_twin
from .socs import DEFAULT_SOC, get_soc
from .tiling import ub_plan
from .validation import Call, validate

DEFAULT_ELEMENTS = 16 * 1024 * 1024
ROW_ELEMENTS = 4096              # the broadcast scenarios' row length
MIN_ELEMENTS = ROW_ELEMENTS      # fewer leaves the broadcast scenarios without a row


@dataclass(frozen=True)
class Counters:
    gm_bytes: int
    vec_repeats: int
    tiles_per_core: float
    block_dim: int
    passes: tuple[str, ...] = field(default_factory=tuple)
    event_ids_peak: int = 0            # most queue/sync event IDs of one type held at once on a core (twin)


@dataclass(frozen=True)
class Row:
    op: str
    scenario: str
    elements: int
    ours: Counters
    aclnn: Counters

    def as_dict(self) -> dict[str, Any]:
        n = self.elements
        return {
            "op": self.op, "scenario": self.scenario, "elements": n,
            "ours": {"gm_bytes_per_elem": self.ours.gm_bytes / n, "vec_instr_per_elem": self.ours.vec_repeats / n,
                     "tiles_per_core": self.ours.tiles_per_core, "block_dim": self.ours.block_dim,
                     "event_ids_peak": self.ours.event_ids_peak},
            "aclnn_composition": {"gm_bytes_per_elem": self.aclnn.gm_bytes / n,
                                  "vec_instr_per_elem": self.aclnn.vec_repeats / n,
                                  "tiles_per_core": self.aclnn.tiles_per_core, "block_dim": self.aclnn.block_dim,
                                  "passes": list(self.aclnn.passes)},
            "traffic_ratio": self.aclnn.gm_bytes / self.ours.gm_bytes,
        }


def scenarios(op: OpSpec, n: int) -> dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    """Input shapes (grad, self, target) with n output (KL: iteration) elements."""
    if n < MIN_ELEMENTS:
        raise ValueError(f"the bench scenarios need at least {MIN_ELEMENTS} elements, got {n}")
    cols = ROW_ELEMENTS
    rows = n // cols
    out = {
        "same shapes": ((n,), (n,), (n,)),
        "target row-broadcast": ((rows, cols), (rows, cols), (cols,)),
        "grad column-broadcast": ((rows, 1), (rows, cols), (rows, cols)),
    }
    if op.output_shape is OutputShape.SELF:
        out["self broadcast (KL sums back)"] = ((rows, cols), (rows, 1), (rows, cols))
    return out


def _counters(call: Call) -> Counters:
    r = run_twin(call)
    rep = r.report
    tiles = sum(c.tiles for c in rep.cores) / rep.block_dim
    peak = max((n for c in rep.cores for n in c.event_ids_peak.values()), default=0)
    return Counters(gm_bytes=rep.gm_read_bytes + rep.gm_write_bytes, vec_repeats=rep.vec_repeats,
                    tiles_per_core=tiles, block_dim=rep.block_dim, event_ids_peak=peak)


def buffering_note(soc: str, ops: list[str] | None = None) -> str:
    """Which queues of the buffer plan are double buffered on this SoC, and its event-ID pool (ub_plan)."""
    arch = get_soc(soc).arch.npu_arch
    single = sorted({f"{name}:{b.name}" for name in ops or list(OPS) for gs in (False, True)
                     for b in ub_plan.buffers(OPS[name], gs, arch) if b.kind in ("in", "out") and b.count < 2})
    held = max(n for name in ops or list(OPS) for gs in (False, True)
               for n in ub_plan.held_event_ids(OPS[name], gs, arch).values())
    buffering = ("every input and the output double buffered (one input queue)" if not single
                 else "NOT double buffered: " + ", ".join(single))
    return f"buffers: {buffering}; event IDs held <= {held} per type of {ub_plan.event_budget(arch)}"


def aclnn_composition(call: Call) -> Counters:
    op = call.op
    full = tuple(call.iter_shape)
    nfull = math.prod(full)
    cdt = aclnn_kernel_dtype(call)  # the dtype aclnn's op_api casts the inputs to
    arrays = {"grad": call.grad, "self": call.self_, "target": call.target}
    traffic, repeats, passes = 0, 0, []
    materialised: dict[str, np.ndarray] = {}
    for role, arr in arrays.items():
        shape = tuple(arr.shape)
        if role in op.aclnn_broadcasts and shape != full:
            traffic += arr.nbytes + nfull * arr.itemsize
            passes.append(f"BroadcastTo({role} {shape}->{full})")
            shape = full
        n = math.prod(shape)
        if dt.from_numpy(arr.dtype) != cdt:
            traffic += n * arr.itemsize + n * cdt.itemsize
            repeats += math.ceil(n * max(arr.itemsize, cdt.itemsize) / 256)
            passes.append(f"Cast({role} {arr.dtype}->{cdt.label})")
        materialised[role] = np.broadcast_to(arr.astype(cdt.np_dtype), shape).copy()
    kcall = validate(op, materialised["grad"], materialised["self"], materialised["target"], call.reduction,
                     dict(call.attrs), out_dtype=cdt, soc=call.soc)
    kernel = _counters(kcall)
    traffic += kernel.gm_bytes
    repeats += kernel.vec_repeats
    passes.append("kernel")
    out_n = math.prod(call.out_shape)
    if tuple(kcall.out_shape) != tuple(call.out_shape):  # KL: ReduceSum back to self's shape
        traffic += math.prod(kcall.out_shape) * cdt.itemsize + out_n * cdt.itemsize
        repeats += math.ceil(math.prod(kcall.out_shape) * cdt.itemsize / 256)
        passes.append("ReduceSum")
    if cdt != call.out_dtype:
        traffic += out_n * (cdt.itemsize + call.out_dtype.itemsize)
        repeats += math.ceil(out_n * 4 / 256)
        passes.append(f"Cast(out {cdt.label}->{call.out_dtype.label})")
    return Counters(gm_bytes=traffic, vec_repeats=repeats, tiles_per_core=kernel.tiles_per_core,
                    block_dim=kernel.block_dim, passes=tuple(passes))


def run(ops: list[str] | None = None, elements: int = DEFAULT_ELEMENTS, soc: str = DEFAULT_SOC,
        dtype: DType = DType.FLOAT32, reduction: str = "none", grad_dtype: DType | None = None) -> list[Row]:
    """One row per op and scenario. `grad_dtype` gives gradOutput another dtype (a mixed-dtype call)."""
    rows: list[Row] = []
    rng = np.random.default_rng(0)
    for name in ops or list(OPS):
        op = OPS[name]
        if grad_dtype is not None and grad_dtype != dtype and op.promotion is Promotion.SAME_AS_SELF:
            continue  # MSE accepts no mixed dtypes
        for scenario, shapes in scenarios(op, elements).items():
            kinds = [grad_dtype or dtype, dtype, dtype]
            arrays = [rng.uniform(0.5, 2.0, s).astype(k.np_dtype) for s, k in zip(shapes, kinds)]
            call = validate(op, *arrays, reduction, soc=soc)
            rows.append(Row(op=name, scenario=scenario, elements=math.prod(call.iter_shape),
                            ours=_counters(call), aclnn=aclnn_composition(call)))
    return rows
