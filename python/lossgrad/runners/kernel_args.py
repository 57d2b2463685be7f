"""What every backend launches: the inputs' kernel views, the dtypes the kernel is instantiated for, the tiling."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..dtypes import DType
from ..tiling import TilingPlan, plan, problem_from_call
from ..validation import Call

def kernel_view(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of the data the kernel must read: dims a NumPy broadcast view repeats (stride 0) shrink
    to size 1, so the kernel broadcasts them instead of reading a materialised copy."""
    index = tuple(slice(0, 1) if st == 0 and n > 1 else slice(None) for st, n in zip(arr.strides, arr.shape))
    return np.array(arr[index], order="C", copy=True)


@dataclass(frozen=True)
class KernelArgs:
    inputs: dict[str, np.ndarray]   # role -> kernel view
    dtypes: dict[str, DType]        # grad/self/target/out as the kernel is instantiated
    tiling: TilingPlan

    def ordered(self, call: Call) -> list[np.ndarray | None]:
        """The inputs in the kernel's parameter order (registry kernel_inputs); None for an absent optional one."""
        return [self.inputs.get(io.role) for io in call.op.kernel_inputs]


def instance_dtypes(call: Call) -> dict[str, DType]:
    """Every role's dtype as the call's kernel is instantiated (Call.kernel_dtypes: a non-float input, L1 only, is
    cast by the op_api before the kernel), an absent optional input's taken from self."""
    return call.op.absent_as_self(call.kernel_dtypes)


def prepare(call: Call) -> KernelArgs:
    arrays = call.inputs
    dtypes = instance_dtypes(call)
    # an absent optional input has no kernel view: the kernel never reads it
    inputs = {r: kernel_view(arrays[r]).astype(dtypes[r].np_dtype, copy=False) for r in call.roles}
    problem = problem_from_call(call, {r: a.shape for r, a in inputs.items()})
    if dict(problem.dtypes) != dtypes:
        problem = dataclasses.replace(problem, dtypes=dtypes)
    return KernelArgs(inputs=inputs, dtypes=dtypes, tiling=plan(problem))
