"""The public functions: validate exactly as aclnn does, then run the kernel on the chosen backend."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as dt
from .dtypes import DType
from .errors import invalid_error
from .registry import KL_DIV_BACKWARD, L1_LOSS_BACKWARD, MSE_LOSS_BACKWARD, SMOOTH_L1_LOSS_BACKWARD, OpSpec
from .runners import check_backend_name, run
from .socs import Soc
from .validation import validate

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


def l1_loss_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", *, out_dtype: Any = None,
                     out: np.ndarray | None = None, soc: "str | Soc | None" = None, backend: str = "auto"
                     ) -> np.ndarray:
    """aclnnL1LossBackward: sign(self - target) * grad_output * c over broadcast(grad_output, self, target)."""
    return _call(L1_LOSS_BACKWARD, grad_output, self, target, reduction, None, out_dtype, out, soc, backend)


def mse_loss_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", *, out_dtype: Any = None,
                      out: np.ndarray | None = None, soc: "str | Soc | None" = None, backend: str = "auto"
                      ) -> np.ndarray:
    """aclnnMseLossBackward: (self - target) * c * grad_output (c = 2/numel(self) for mean, else 2)."""
    return _call(MSE_LOSS_BACKWARD, grad_output, self, target, reduction, None, out_dtype, out, soc, backend)


def smooth_l1_loss_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", beta: float = 1.0, *,
                            out_dtype: Any = None, out: np.ndarray | None = None, soc: "str | Soc | None" = None,
                            backend: str = "auto") -> np.ndarray:
    """aclnnSmoothL1LossBackward: f(self - target) * grad_output * c; beta = 0 is exactly L1's sign."""
    return _call(SMOOTH_L1_LOSS_BACKWARD, grad_output, self, target, reduction, {"beta": beta}, out_dtype, out, soc,
                 backend)


def kl_div_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", log_target: bool = False, *,
                    out_dtype: Any = None, out: np.ndarray | None = None, soc: "str | Soc | None" = None,
                    backend: str = "auto") -> np.ndarray:
    """aclnnKlDivBackward: -T * grad_output * c summed back to self's shape; T = exp(target) if log_target."""
    return _call(KL_DIV_BACKWARD, grad_output, self, target, reduction, {"log_target": log_target}, out_dtype, out,
                 soc, backend)
