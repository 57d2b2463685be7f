"""PyTorch integration (optional extra ``ascend-lossgrad[torch]``): custom operators and drop-in losses.

``import lossgrad.torch`` registers ``torch.ops.lossgrad.{l1_loss_backward, mse_loss_backward,
smooth_l1_loss_backward, kl_div_backward}`` (aclnn semantics; CPU tensors run the real kernel on the twin, NPU tensors
the installed custom-op package; fake kernels for tracing) and provides drop-in losses with
``torch.nn.functional``'s signatures whose backward runs those operators. ``import lossgrad`` never imports torch.
See docs/torch.md.
"""
from __future__ import annotations

try:
    import torch as _torch  # noqa: F401
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess by tests/torch
    raise ImportError("lossgrad.torch needs PyTorch: pip install 'ascend-lossgrad[torch]' "
                      f"(or pip install torch==2.13.0) ({_exc})") from _exc

import numbers
from typing import Any

from ..errors import LossGradError, invalid_error, null_error
from ..registry import KL_DIV_BACKWARD, L1_LOSS_BACKWARD, MSE_LOSS_BACKWARD, SMOOTH_L1_LOSS_BACKWARD, OpSpec
from .losses import KLDivLoss, L1Loss, MSELoss, SmoothL1Loss, kl_div, l1_loss, mse_loss, smooth_l1_loss
from .npu import NpuUnavailable
from .ops import current_soc, op, soc
from ..validation import parse_reduction

__all__ = ["soc", "current_soc", "op", "l1_loss_backward", "mse_loss_backward", "smooth_l1_loss_backward",
           "kl_div_backward", "l1_loss", "mse_loss", "smooth_l1_loss", "kl_div", "L1Loss", "MSELoss",
           "SmoothL1Loss", "KLDivLoss", "LossGradError", "NpuUnavailable"]


def _check_scalars(spec: OpSpec, reduction: Any, attrs: tuple[Any, ...]) -> None:
    """The NumPy API's scalar rules before torch's schema converts anything (a bool is an int to it, and an int a
    bool): reduction an int (not a bool) or a name, beta a real number (not a bool), log_target a bool."""
    parse_reduction(spec, reduction)
    for attr, value in zip(spec.attrs, attrs):
        if attr.kernel_type == "Bool" and not isinstance(value, bool):
            raise invalid_error(f"{attr.aclnn_name}: expected a bool, got {type(value).__name__} {value!r:.40}")
        if attr.kernel_type == "Float" and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise invalid_error(f"{attr.aclnn_name}: expected a real number, got {type(value).__name__}")


def _call(spec: OpSpec, grad_output: Any, self_: Any, target: Any, reduction: Any, attrs: tuple[Any, ...],
          out_dtype: Any, soc_name: str | None) -> _torch.Tensor:
    missing = [name for name, v in zip(spec.aclnn_params, (grad_output, self_, target)) if v is None]
    if missing:  # the schema's tensors are not optional: aclnn's null check happens here
        raise null_error(f"{', '.join(missing)}: null input ({spec.aclnn} requires every tensor argument)")
    _check_scalars(spec, reduction, attrs)
    return op(spec.name)(grad_output, self_, target, reduction, *attrs, out_dtype=out_dtype, soc=soc_name)


def l1_loss_backward(grad_output: Any, self: Any, target: Any, reduction: "int | str" = "mean", *,
                     out_dtype: "_torch.dtype | None" = None, soc: str | None = None) -> _torch.Tensor:
    """``torch.ops.lossgrad.l1_loss_backward`` with aclnn's null check; reduction as int or name."""
    return _call(L1_LOSS_BACKWARD, grad_output, self, target, reduction, (), out_dtype, soc)


def mse_loss_backward(grad_output: Any, self: Any, target: Any, reduction: "int | str" = "mean", *,
                      out_dtype: "_torch.dtype | None" = None, soc: str | None = None) -> _torch.Tensor:
    """``torch.ops.lossgrad.mse_loss_backward`` with aclnn's null check; reduction as int or name."""
    return _call(MSE_LOSS_BACKWARD, grad_output, self, target, reduction, (), out_dtype, soc)


def smooth_l1_loss_backward(grad_output: Any, self: Any, target: Any, reduction: "int | str" = "mean",
                            beta: float = 1.0, *, out_dtype: "_torch.dtype | None" = None,
                            soc: str | None = None) -> _torch.Tensor:
    """``torch.ops.lossgrad.smooth_l1_loss_backward`` with aclnn's null check; reduction as int or name."""
    return _call(SMOOTH_L1_LOSS_BACKWARD, grad_output, self, target, reduction, (beta,), out_dtype, soc)


def kl_div_backward(grad_output: Any, self: Any, target: Any, reduction: "int | str" = "mean",
                    log_target: bool = False, *, out_dtype: "_torch.dtype | None" = None,
                    soc: str | None = None) -> _torch.Tensor:
    """``torch.ops.lossgrad.kl_div_backward`` with aclnn's null check; reduction as int or name."""
    return _call(KL_DIV_BACKWARD, grad_output, self, target, reduction, (log_target,), out_dtype, soc)
