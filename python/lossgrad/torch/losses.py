"""Drop-in losses: ``torch.nn.functional``'s signatures, forward computed by torch, backward by our operators.

They reproduce torch's gradient wherever torch defines it (docs/torch.md lists how):
- mean under broadcasting: torch divides by the broadcast element count, aclnn's MSE/SmoothL1 by numel(self). The
  op is called on self and target expanded to the broadcast shape (stride-0 views, no copy; the kernel broadcasts),
  and the per-element gradient is summed back to each input's shape, as torch's autograd does after its own expand.
- KL batchmean: torch divides by input.size(0), aclnn by dim 0 of broadcast(input, target). Where they agree the op
  runs with "batchmean"; where they differ it runs with "sum" on grad_output / input.size(0), which is the gradient
  torch's ``kl_div`` computes (its batchmean is a sum divided afterwards).
- SmoothL1 beta = 0: torch routes it to l1_loss; the op's beta = 0 is exactly L1's sign with sign(0) = 0, the same
  gradient.
- the target's gradient: for L1/MSE/SmoothL1 it is minus the input's (before the sum to target's shape), as in
  torch; aclnn has no KL target gradient, so KL's comes from torch's own ``kl_div`` autograd.
- ``size_average``/``reduce``: mapped to a reduction by torch's own legacy rule (with torch's deprecation warning).
- ``weight`` (l1_loss, mse_loss): the unreduced loss from our op, weighted and reduced by torch ops, as torch does.
Where aclnn and torch still differ: a NaN in input - target gives 0 (aclnn's sign) instead of NaN for L1 and
SmoothL1. Input and target must share a dtype the SoC supports.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch.nn import _reduction as _legacy

from ..registry import KL_DIV_BACKWARD, L1_LOSS_BACKWARD, MSE_LOSS_BACKWARD, SMOOTH_L1_LOSS_BACKWARD
from .ops import op

L1, MSE, SMOOTH_L1, KL = (spec.name for spec in (L1_LOSS_BACKWARD, MSE_LOSS_BACKWARD, SMOOTH_L1_LOSS_BACKWARD,
                                                 KL_DIV_BACKWARD))


def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy.legacy_get_string(size_average, reduce)
    return reduction


class _Pointwise(torch.autograd.Function):
    """L1, MSE and SmoothL1: loss(input, target) with torch; d/dinput from the kernel on the broadcast views."""

    @staticmethod
    def forward(ctx: Any, input: torch.Tensor, target: torch.Tensor, name: str, reduction: str,
                beta: float) -> torch.Tensor:
        ctx.save_for_backward(input, target)
        ctx.name, ctx.reduction, ctx.beta = name, reduction, beta
        if name == L1:
            return F.l1_loss(input, target, reduction=reduction)
        if name == MSE:
            return F.mse_loss(input, target, reduction=reduction)
        return F.smooth_l1_loss(input, target, reduction=reduction, beta=beta)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        input, target = ctx.saved_tensors
        shape = torch.broadcast_shapes(input.shape, target.shape)
        attrs = (ctx.beta,) if ctx.name == SMOOTH_L1 else ()
        grad = op(ctx.name)(grad_output, input.expand(shape), target.expand(shape), ctx.reduction, *attrs,
                            out_dtype=input.dtype)
        grad_input = grad.sum_to_size(input.shape) if ctx.needs_input_grad[0] else None
        grad_target = (-grad).sum_to_size(target.shape).to(target.dtype) if ctx.needs_input_grad[1] else None
        return grad_input, grad_target, None, None, None


class _KlDiv(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, input: torch.Tensor, target: torch.Tensor, reduction: str, log_target: bool
                ) -> torch.Tensor:
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.log_target = reduction, log_target
        return F.kl_div(input, target, reduction=reduction, log_target=log_target)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        input, target = ctx.saved_tensors
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            reduction, grad = ctx.reduction, grad_output
            if reduction == "batchmean":
                # torch divides by input.size(0) (nothing for 0-d input), aclnn by the broadcast's dim 0
                torch_n = input.shape[0] if input.dim() else 1
                broadcast = torch.broadcast_shapes(input.shape, target.shape)
                if torch_n != (broadcast[0] if len(broadcast) else 1):
                    reduction, grad = "sum", grad_output / torch_n
            grad_input = op(KL)(grad, input, target, reduction, ctx.log_target, out_dtype=input.dtype)
        if ctx.needs_input_grad[1]:  # no aclnn op computes it: torch's own kl_div gradient
            with torch.enable_grad():
                t = target.detach().requires_grad_()
                loss = F.kl_div(input.detach(), t, reduction=ctx.reduction, log_target=ctx.log_target)
                (grad_target,) = torch.autograd.grad(loss, t, grad_output, create_graph=torch.is_grad_enabled())
        return grad_input, grad_target, None, None


def _weighted(loss: torch.Tensor, weight: torch.Tensor, input: torch.Tensor, reduction: str) -> torch.Tensor:
    """torch's weighted l1/mse: the unreduced loss times weight, then sum, or sum / sum(weight) for mean."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return torch.sum(weighted)
    if reduction == "mean":
        return torch.sum(weighted) / torch.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def l1_loss(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: torch.Tensor | None = None) -> torch.Tensor:
    """``torch.nn.functional.l1_loss``; the input gradient comes from ``torch.ops.lossgrad.l1_loss_backward``."""
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted(_Pointwise.apply(input, target, L1, "none", 1.0), weight, input, reduction)
    return _Pointwise.apply(input, target, L1, reduction, 1.0)


def mse_loss(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: torch.Tensor | None = None) -> torch.Tensor:
    """``torch.nn.functional.mse_loss``; the input gradient comes from ``torch.ops.lossgrad.mse_loss_backward``."""
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted(_Pointwise.apply(input, target, MSE, "none", 1.0), weight, input, reduction)
    return _Pointwise.apply(input, target, MSE, reduction, 1.0)


def smooth_l1_loss(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean", beta: float = 1.0) -> torch.Tensor:
    """``torch.nn.functional.smooth_l1_loss``; the input gradient comes from
    ``torch.ops.lossgrad.smooth_l1_loss_backward``."""
    reduction = _reduction(size_average, reduce, reduction)
    return _Pointwise.apply(input, target, SMOOTH_L1, reduction, float(beta))


def kl_div(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> torch.Tensor:
    """``torch.nn.functional.kl_div``; the input gradient comes from ``torch.ops.lossgrad.kl_div_backward``."""
    reduction = _reduction(size_average, reduce, reduction)
    return _KlDiv.apply(input, target, reduction, bool(log_target))


class L1Loss(torch.nn.L1Loss):
    """``torch.nn.L1Loss`` whose backward runs our L1LossBackward kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return l1_loss(input, target, reduction=self.reduction)


class MSELoss(torch.nn.MSELoss):
    """``torch.nn.MSELoss`` whose backward runs our MseLossBackward kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(torch.nn.SmoothL1Loss):
    """``torch.nn.SmoothL1Loss`` whose backward runs our SmoothL1LossBackward kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class KLDivLoss(torch.nn.KLDivLoss):
    """``torch.nn.KLDivLoss`` whose backward runs our KlDivBackward kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
