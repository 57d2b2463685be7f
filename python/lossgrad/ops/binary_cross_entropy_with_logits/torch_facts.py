"""aclnnBinaryCrossEntropyWithLogitsBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...torch.losses import backward_op, compute_dtype, legacy_reduction, named_drop_in
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, w: torch.Tensor | None,
               p: torch.Tensor | None, c: float, attrs: dict[str, Any],
               needs: tuple[bool, ...]) -> tuple[torch.Tensor | None, ...]:
    """out = g q w c, q = (p t + 1 - t) sig(s) - p t (p = 1 when absent): dq/ds = (p t + 1 - t) sig (1 - sig),
    dq/dt = (p - 1) sig - p, dq/dp = t (sig - 1); d/dg = q w c, d/dw = g q c."""
    sf, tf = s.to(gg.dtype), t.to(gg.dtype)
    pf = torch.ones_like(sf) if p is None else p.to(gg.dtype)
    sig = torch.sigmoid(sf)
    q = (pf * tf + 1 - tf) * sig - pf * tf
    wf = torch.ones_like(q) if w is None else w.to(gg.dtype)
    gf = g.to(gg.dtype)
    scale = gg * gf * wf * c
    d_g = (gg * q * wf * c).sum_to_size(g.shape).to(g.dtype) if needs[0] else None
    d_s = (scale * (pf * tf + 1 - tf) * sig * (1 - sig)).sum_to_size(s.shape).to(s.dtype) if needs[1] else None
    d_t = (scale * ((pf - 1) * sig - pf)).sum_to_size(t.shape).to(t.dtype) if needs[2] else None
    d_w = (gg * gf * q * c).sum_to_size(w.shape).to(w.dtype) if w is not None and needs[3] else None
    d_p = (scale * tf * (sig - 1)).sum_to_size(p.shape).to(p.dtype) if p is not None and needs[4] else None
    return d_g, d_s, d_t, d_w, d_p


class _BinaryCrossEntropyWithLogits(torch.autograd.Function):
    """torch's forward; the input gradient from our kernel (weight and posWeight broadcast into the input by the
    kernel); the target gradient torch's own (aclnn has none); weight and pos_weight are not differentiable, as in
    torch."""

    generate_vmap_rule = True

    @staticmethod
    def forward(input: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None,
                pos_weight: torch.Tensor | None, reduction: str) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(input, target, weight=weight, pos_weight=pos_weight,
                                                  reduction=reduction)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        input, target, weight, pos_weight, ctx.reduction = inputs
        ctx.save_for_backward(input, target, weight, pos_weight)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        input, target, weight, pos_weight = ctx.saved_tensors
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            present = (grad_output, input, target) + tuple(x for x in (weight, pos_weight) if x is not None)
            compute = compute_dtype(*present)
            w = None if weight is None else weight.to(compute)
            p = None if pos_weight is None else pos_weight.to(compute)
            grad_input = backward_op(SPEC.name)(grad_output.to(compute), input.to(compute), target.to(compute), w, p,
                                                ctx.reduction, out_dtype=compute).to(input.dtype)
        if ctx.needs_input_grad[1]:  # torch's own
            def loss(t: torch.Tensor) -> torch.Tensor:
                return F.binary_cross_entropy_with_logits(input, t, weight=weight, pos_weight=pos_weight,
                                                          reduction=ctx.reduction)
            if torch._C._functorch.peek_interpreter_stack() is not None:  # under torch.func: a vjp composes
                _, vjp = torch.func.vjp(loss, target)
                (grad_target,) = vjp(grad_output)
            else:  # eager: torch's autograd formula itself (func.vjp's decomposition differs in the last bits)
                with torch.enable_grad():
                    t = target.detach().requires_grad_()
                    (grad_target,) = torch.autograd.grad(loss(t), t, grad_output)
        return grad_input, grad_target, None, None, None


def binary_cross_entropy_with_logits(input: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: torch.Tensor | None = None) -> torch.Tensor:
    """``torch.nn.functional.binary_cross_entropy_with_logits``; the input gradient comes from our
    SigmoidCrossEntropyWithLogitsGradV2 kernel (``torch.ops.lossgrad``)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if target.size() != input.size():  # torch's own check and message
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    for name, value in (("weight", weight), ("pos_weight", pos_weight)):
        if value is not None and value.requires_grad:  # torch's derivatives.yaml has no formula for either
            raise RuntimeError(f"The function 'binary_cross_entropy_with_logits' is not differentiable with respect "
                               f"to argument '{name}'. This input cannot have requires_grad True.")
    full = input.size()
    # as torch: each broadcasts with the input (a larger one fails there; aclnn refuses one that enlarges self)
    weight = None if weight is None else weight.expand(torch.broadcast_shapes(full, weight.size()))
    pos_weight = None if pos_weight is None else pos_weight.expand(torch.broadcast_shapes(full, pos_weight.size()))
    if torch.is_autocast_enabled(input.device.type):  # autocast runs the loss in float32 (its fp32 policy); a
        input, target = input.float(), target.float()  # Function's forward does not see autocast
        weight = None if weight is None else weight.float()
        pos_weight = None if pos_weight is None else pos_weight.float()
    return _BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


class BCEWithLogitsLoss(torch.nn.BCEWithLogitsLoss):
    """``torch.nn.BCEWithLogitsLoss`` whose backward runs our SigmoidCrossEntropyWithLogitsGradV2 kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return binary_cross_entropy_with_logits(input, target, weight=self.weight, pos_weight=self.pos_weight,
                                                reduction=self.reduction)


LOSS = named_drop_in(SPEC, binary_cross_entropy_with_logits, BCEWithLogitsLoss, F.binary_cross_entropy_with_logits,
                     torch.nn.BCEWithLogitsLoss)
