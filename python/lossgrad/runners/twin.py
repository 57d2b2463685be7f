"""Run a validated call on the twin: kernel views of the inputs, tiling, rendered kernel, launch."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .. import codegen
from ..tiling import TilingPlan
from ..twin import Report, run_kernel
from ..twin.build import cache_root
from ..validation import Call
from .kernel_args import kernel_view, prepare

__all__ = ["TwinRun", "run_twin", "kernel_view", "default_auto_sync", "AUTO_SYNC_ENV"]

UNWRITTEN = 0xFF  # output bytes start as NaN patterns, so an element the kernel never writes cannot pass
# "on" (default) models bisheng --cce-auto-sync=on, CANN's default and what the project's builds use; "off" demands
# every S<->V/MTE2/MTE3 synchronisation in the kernel source. `lossgrad verify --auto-sync` sets it.
AUTO_SYNC_ENV = "LOSSGRAD_TWIN_AUTO_SYNC"


def default_auto_sync() -> bool:
    value = os.environ.get(AUTO_SYNC_ENV, "on").strip().lower()
    if value not in ("on", "off"):
        raise ValueError(f"{AUTO_SYNC_ENV} must be 'on' or 'off', got {value!r}")
    return value == "on"


@dataclass(frozen=True)
class TwinRun:
    output: np.ndarray
    report: Report
    plan: TilingPlan
    inputs: dict[str, np.ndarray]  # the kernel views the kernel read (broadcast views compacted)


def run_twin(call: Call, auto_sync: bool | None = None) -> TwinRun:
    """Launch the call's kernel on the twin; `auto_sync` None takes the LOSSGRAD_TWIN_AUTO_SYNC setting."""
    if auto_sync is None:
        auto_sync = default_auto_sync()
    args = prepare(call)
    source = codegen.cached_kernel(call.op, args.dtypes, cache_root())
    out = np.empty(call.out_shape, dtype=call.out_dtype.np_dtype)
    out.reshape(-1).view(np.uint8)[:] = UNWRITTEN
    gm = args.ordered(call) + [out, np.zeros(0, np.uint8), args.tiling.data]
    report = run_kernel(source, call.op.entry_name, args.tiling.block_dim, gm, soc=call.soc,
                        tiling_key=args.tiling.tiling_key, auto_sync=auto_sync)
    return TwinRun(output=out, report=report, plan=args.tiling, inputs=args.inputs)
