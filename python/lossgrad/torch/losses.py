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
SmoothL1.
- dtypes: the backward runs in torch's result dtype (the promotion of grad_output, input and target; float32 under
  CPU autocast), then casts to each input's dtype before summing to its shape, as torch's graph does; so every
  float32/float16/bfloat16 mix and autocast give torch's gradient. float64 has no kernel on any SoC: 161002.
- torch.func: setup_context-style Functions with generated vmap rules; inside a transform the backward calls the
  op's functional form (ops.functional), which torch.func accepts.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch.nn import _reduction as _legacy

from ..registry import KL_DIV_BACKWARD, L1_LOSS_BACKWARD, MSE_LOSS_BACKWARD, SMOOTH_L1_LOSS_BACKWARD
from .ops import functional, op

L1, MSE, SMOOTH_L1, KL = (spec.name for spec in (L1_LOSS_BACKWARD, MSE_LOSS_BACKWARD, SMOOTH_L1_LOSS_BACKWARD,
                                                 KL_DIV_BACKWARD))


def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy.legacy_get_string(size_average, reduce)
    return reduction


def _backward_op(name: str) -> Any:
    """The operator the backward calls: under torch.func's transforms its setup_context-style Function (the only
    kind they accept), elsewhere the dispatcher's op (what torch.compile traces as an opaque node)."""
    if not torch.compiler.is_compiling() and torch._C._functorch.peek_interpreter_stack() is not None:
        return functional(name)
    return op(name)


def _compute_dtype(*tensors: torch.Tensor) -> torch.dtype:
    """torch's result dtype for the loss's backward: the promotion of grad_output, input and target (under CPU
    autocast the loss ran in float32, so grad_output is float32 and so is the computation)."""
    found = tensors[0].dtype
    for t in tensors[1:]:
        found = torch.promote_types(found, t.dtype)
    return found


class _Pointwise(torch.autograd.Function):
    """L1, MSE and SmoothL1: loss(input, target) with torch; d/dinput from the kernel on the broadcast views.

    setup_context style with generate_vmap_rule, so torch.func's grad, vjp and vmap apply (the ops' own vmap rule
    is registered in ops.py)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(input: torch.Tensor, target: torch.Tensor, name: str, reduction: str, beta: float) -> torch.Tensor:
        if name == L1:
            return F.l1_loss(input, target, reduction=reduction)
        if name == MSE:
            return F.mse_loss(input, target, reduction=reduction)
        return F.smooth_l1_loss(input, target, reduction=reduction, beta=beta)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        input, target, ctx.name, ctx.reduction, ctx.beta = inputs
        ctx.save_for_backward(input, target)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        input, target = ctx.saved_tensors
        shape = torch.broadcast_shapes(input.shape, target.shape)
        attrs = (ctx.beta,) if ctx.name == SMOOTH_L1 else ()
        # As torch: the gradient in the promoted dtype (each input upcast exactly), then cast to each input's dtype
        # and summed to its shape there (the cast node sits before the expand's sum in torch's graph).
        compute = _compute_dtype(grad_output, input, target)
        grad = _backward_op(ctx.name)(grad_output.to(compute), input.to(compute).expand(shape),
                            target.to(compute).expand(shape), ctx.reduction, *attrs, out_dtype=compute)
        grad_input = grad.to(input.dtype).sum_to_size(input.shape) if ctx.needs_input_grad[0] else None
        grad_target = (-grad).to(target.dtype).sum_to_size(target.shape) if ctx.needs_input_grad[1] else None
        return grad_input, grad_target, None, None, None


class _KlDiv(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(input: torch.Tensor, target: torch.Tensor, reduction: str, log_target: bool) -> torch.Tensor:
        return F.kl_div(input, target, reduction=reduction, log_target=log_target)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        input, target, ctx.reduction, ctx.log_target = inputs
        ctx.autocast = torch.is_autocast_enabled(input.device.type)  # kl_div runs in float32 under autocast
        ctx.autocast_dtype = torch.get_autocast_dtype(input.device.type)
        ctx.save_for_backward(input, target)

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
            # torch sums over broadcast axes in the promoted dtype and casts afterwards: so does the kernel
            compute = _compute_dtype(grad, input, target)
            big_t, log_target = target, ctx.log_target
            if log_target and not ctx.autocast and target.dtype != compute:
                # torch's kl_div takes exp(target) in target's dtype before the promoting product: so do we
                big_t, log_target = target.exp(), False
            grad_input = _backward_op(KL)(grad.to(compute), input.to(compute), big_t.to(compute), reduction,
                                          log_target, out_dtype=compute).to(input.dtype)
        if ctx.needs_input_grad[1]:  # no aclnn op computes it: torch's own kl_div gradient (a torch.func.vjp, which
            # composes with torch.func's transforms where torch.autograd.grad inside a backward would not)
            with torch.autocast(input.device.type, dtype=ctx.autocast_dtype, enabled=ctx.autocast):  # as forward
                _, vjp = torch.func.vjp(lambda t: F.kl_div(input, t, reduction=ctx.reduction,
                                                           log_target=ctx.log_target), target)
            (grad_target,) = vjp(grad_output)
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
