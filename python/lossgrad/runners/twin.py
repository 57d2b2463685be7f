"""Run a validated call on the twin: kernel views of the inputs, tiling, rendered kernel, launch."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import codegen
from ..tiling import TilingPlan
from ..twin import Report, run_kernel
from ..twin.build import cache_root
from ..validation import Call
from .kernel_args import kernel_view, prepare

__all__ = ["TwinRun", "run_twin", "kernel_view"]

UNWRITTEN = 0xFF  # output bytes start as NaN patterns, so an element the kernel never writes cannot pass


@dataclass(frozen=True)
class TwinRun:
    output: np.ndarray
    report: Report
    plan: TilingPlan
    inputs: dict[str, np.ndarray]  # the kernel views the kernel read (broadcast views compacted)


def run_twin(call: Call) -> TwinRun:
    args = prepare(call)
    source = codegen.cached_kernel(call.op, args.dtypes, cache_root())
    out = np.empty(call.out_shape, dtype=call.out_dtype.np_dtype)
    out.reshape(-1).view(np.uint8)[:] = UNWRITTEN
    gm = args.ordered(call) + [out, np.zeros(0, np.uint8), args.tiling.data]
    report = run_kernel(source, call.op.entry_name, args.tiling.block_dim, gm, soc=call.soc,
                        tiling_key=args.tiling.tiling_key)
    return TwinRun(output=out, report=report, plan=args.tiling, inputs=args.inputs)
