"""The public functions: validate exactly as aclnn does, then run the kernel on the chosen backend."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import dtypes as dt
from .dtypes import DType
from .errors import invalid_error
from .registry import OPS, OpSpec
from .runners import check_backend_name, run
from .socs import Soc
from .validation import validate
from .wrappers import describe, public_function

DTypeLike = "DType | str | np.dtype | None"


def _call(op: OpSpec, grad_output: Any, self_: Any, target: Any, reduction: Any, attrs: dict[str, Any] | None,
          out_dtype: Any, out: np.ndarray | None, soc: "str | Soc | None", backend: str) -> np.ndarray:
    check_backend_name(backend)  # before anything else: availability is checked by run(), after validation
    out_shape = None
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise invalid_error(f"{op.output_param}: expected a numpy.ndarray, got {type(out).__name__}")
        if not out.flags.writeable:
            raise invalid_error(f"{op.output_param}: the out array is read-only")
        found = dt.from_numpy(out.dtype)
        if found is None:
            raise invalid_error(f"{op.output_param}: dtype {out.dtype} is not a tensor dtype aclnn accepts")
        if out_dtype is not None and dt.parse(out_dtype) != found:
            raise invalid_error(f"{op.output_param}: out_dtype {out_dtype} differs from out's dtype {found.label}")
        out_dtype, out_shape = found, out.shape
    call = validate(op, grad_output, self_, target, reduction, attrs, out_shape=out_shape, out_dtype=out_dtype,
                    soc=soc)
    result = run(call, backend)  # checks the backend can run here, even for a call that launches nothing
    if out is None:
        return result
    np.copyto(out, result)  # like aclnn's ViewCopy into a (possibly strided) output tensor (shape, dtype checked)
    return out


def _impl(op: OpSpec, grad_output: Any, self_: Any, target: Any, reduction: Any, attrs: dict[str, Any] | None, *,
          out_dtype: Any, out: np.ndarray | None, soc: "str | Soc | None", backend: str) -> np.ndarray:
    return _call(op, grad_output, self_, target, reduction, attrs, out_dtype, out, soc, backend)


# lossgrad.<op name> for every op of the registry (e.g. lossgrad.mse_loss_backward(grad, self, target, "mean")).
FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    op.name: public_function(op, _impl, {"out_dtype": (None, Any), "out": (None, "np.ndarray | None"),
                                         "soc": (None, "str | Soc | None"), "backend": ("auto", str)},
                             __name__, describe(op, "Validate exactly as aclnn does, then run the kernel of"),
                             returns=np.ndarray)
    for op in OPS.values()}
globals().update(FUNCTIONS)
__all__ = list(FUNCTIONS)
