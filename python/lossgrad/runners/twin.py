"""Run a validated call on the twin: kernel views of the inputs, tiling, rendered kernel, launch."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import codegen
from .. import dtypes as dt
from ..tiling import TilingPlan, plan, problem_from_call
from ..twin import Report, run_kernel
from ..twin.build import cache_root
from ..validation import Call

UNWRITTEN = 0xFF  # output bytes start as NaN patterns, so an element the kernel never writes cannot pass


@dataclass(frozen=True)
class TwinRun:
    output: np.ndarray
    report: Report
    plan: TilingPlan
    inputs: dict[str, np.ndarray]  # the kernel views the kernel read (broadcast views compacted)


def kernel_view(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous, twin-owned copy of the data the kernel must read: dims a NumPy broadcast view repeats
    (stride 0) shrink to size 1, so the kernel broadcasts them instead of reading a materialised copy."""
    index = tuple(slice(0, 1) if st == 0 and n > 1 else slice(None) for st, n in zip(arr.strides, arr.shape))
    return np.array(arr[index], order="C", copy=True)


def _kernel_inputs(call: Call) -> dict[str, np.ndarray]:
    views = {"grad": call.grad, "self": call.self_, "target": call.target}
    promoted = dt.promote(dt.promote(call.dtypes["grad"], call.dtypes["self"]), call.dtypes["target"])
    out: dict[str, np.ndarray] = {}
    for role, arr in views.items():
        v = kernel_view(arr)
        if not call.dtypes[role].is_float:
            # Only L1 accepts integer inputs (promoted to a float type); the op_api casts them before the kernel.
            v = v.astype(promoted.np_dtype)
        out[role] = v
    return out


def run_twin(call: Call) -> TwinRun:
    inputs = _kernel_inputs(call)
    problem = problem_from_call(call, {r: a.shape for r, a in inputs.items()})
    dtypes = {r: dt.from_numpy(a.dtype) for r, a in inputs.items()}
    dtypes["out"] = call.out_dtype
    tiling = plan(problem if dict(problem.dtypes) == dtypes else
                  problem.__class__(**{**problem.__dict__, "dtypes": dtypes}))
    source = codegen.cached_kernel(call.op, dtypes, cache_root())
    out = np.empty(call.out_shape, dtype=call.out_dtype.np_dtype)
    out.reshape(-1).view(np.uint8)[:] = UNWRITTEN
    args = [inputs[io.role] for io in call.op.kernel_inputs] + [out, np.zeros(0, np.uint8), tiling.data]
    report = run_kernel(source, call.op.entry_name, tiling.block_dim, args, soc=call.soc,
                        tiling_key=tiling.tiling_key)
    return TwinRun(output=out, report=report, plan=tiling, inputs=inputs)
