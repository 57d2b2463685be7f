"""aclnnKlDivBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...torch.losses import DropIn, backward_op, compute_dtype, legacy_reduction
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict[str, Any], needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = sum to self's shape of -T * g * c (T = exp(target) if log_target): self's values never enter."""
    need_g, _, need_t = needs
    d_g = d_t = None
    tf = t.to(gg.dtype)
    big_t = tf.exp() if attrs["log_target"] else tf
    if need_g:
        d_g = (-big_t * gg * c).sum_to_size(g.shape).to(g.dtype)
    if need_t:
        d_big_t = big_t if attrs["log_target"] else torch.ones_like(big_t)
        d_t = (-d_big_t * g.to(gg.dtype) * gg * c).sum_to_size(t.shape).to(t.dtype)
    return d_g, None, d_t


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
            reduction, grad = _batchmean_as_aclnn(ctx.reduction, grad_output, input, target)
            # torch sums over broadcast axes in the promoted dtype and casts afterwards: so does the kernel
            compute = compute_dtype(grad, input, target)
            big_t, log_target = target, ctx.log_target
            if log_target and not ctx.autocast and target.dtype != compute:
                # torch's kl_div takes exp(target) in target's dtype before the promoting product: so do we
                big_t, log_target = target.exp(), False
            grad_input = backward_op(SPEC.name)(grad.to(compute), input.to(compute), big_t.to(compute), reduction,
                                          log_target, out_dtype=compute).to(input.dtype)
        if ctx.needs_input_grad[1]:
            grad_target = _target_gradient(ctx, input, target, grad_output)
        return grad_input, grad_target, None, None


def _batchmean_as_aclnn(reduction: str, grad: torch.Tensor, input: torch.Tensor, target: torch.Tensor
                        ) -> tuple[str, torch.Tensor]:
    """torch's batchmean divides by input.size(0) (nothing for a 0-d input), aclnn's by dim 0 of broadcast(input,
    target): where they differ, the kernel gets sum and a gradOutput divided by torch's count."""
    if reduction == "batchmean":
        torch_n = input.shape[0] if input.dim() else 1
        broadcast = torch.broadcast_shapes(input.shape, target.shape)
        if torch_n != (broadcast[0] if len(broadcast) else 1):
            return "sum", grad / torch_n
    return reduction, grad


def _target_gradient(ctx: Any, input: torch.Tensor, target: torch.Tensor, grad_output: torch.Tensor
                     ) -> torch.Tensor:
    """d/dtarget from torch.ops.lossgrad.kl_div_target_backward (aclnnKlDivTargetBackward, where torch_npu routes
    kl_div's target derivative) on the parts aclnn runs it; on 310P and Atlas 910, which refuse it, torch's own
    gradient (a torch.func.vjp, which composes with torch.func's transforms)."""
    from ...registry import get_op, runs_on
    from ...torch.ops import current_soc

    target_op = get_op("kl_div_target")  # the op folder ops/kl_div_target
    if input.device.type != "cpu" or runs_on(target_op, current_soc()):
        reduction, grad = _batchmean_as_aclnn(ctx.reduction, grad_output, input, target)
        compute = compute_dtype(grad, input, target)
        return backward_op(target_op.name)(grad.to(compute), input.to(compute), target.to(compute), reduction,
                                           ctx.log_target, out_dtype=compute).to(target.dtype)
    with torch.autocast(input.device.type, dtype=ctx.autocast_dtype, enabled=ctx.autocast):  # as forward
        _, vjp = torch.func.vjp(lambda t: F.kl_div(input, t, reduction=ctx.reduction, log_target=ctx.log_target),
                                target)
    (grad_target,) = vjp(grad_output)
    return grad_target


def kl_div(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> torch.Tensor:
    """``torch.nn.functional.kl_div``; the input gradient comes from ``torch.ops.lossgrad.kl_div_backward``, the
    target gradient from ``torch.ops.lossgrad.kl_div_target_backward`` (torch's own on 310P and Atlas 910)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _KlDiv.apply(input, target, reduction, bool(log_target))


class KLDivLoss(torch.nn.KLDivLoss):
    """``torch.nn.KLDivLoss`` whose backward runs our KlDivBackward kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


LOSS = DropIn(kl_div, KLDivLoss, F.kl_div, torch.nn.KLDivLoss)
