"""aclnnBinaryCrossEntropyBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...torch.losses import backward_op, compute_dtype, legacy_reduction, named_drop_in
from . import SPEC
from .golden import EPS


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, w: torch.Tensor | None,
               c: float, attrs: dict[str, Any], needs: tuple[bool, ...]) -> tuple[torch.Tensor | None, ...]:
    """out = g q w c, q = (s - t) / D, D = max(s (1 - s), eps): dq/ds = 1/D - (s - t) D' / D^2 with D' = 1 - 2s
    where the clamp is not in effect (0 where it is), dq/dt = -1/D; d/dw = g q c."""
    sf, tf = s.to(gg.dtype), t.to(gg.dtype)
    raw = sf * (1 - sf)
    clamped = raw < float(EPS)
    d = torch.where(clamped, torch.full_like(raw, float(EPS)), raw)
    q = (sf - tf) / d
    wf = torch.ones_like(q) if w is None else w.to(gg.dtype)
    gf = g.to(gg.dtype)
    dq_ds = 1 / d - torch.where(clamped, torch.zeros_like(raw), (sf - tf) * (1 - 2 * sf) / (d * d))
    d_g = (gg * q * wf * c).sum_to_size(g.shape).to(g.dtype) if needs[0] else None
    d_s = (gg * gf * wf * c * dq_ds).sum_to_size(s.shape).to(s.dtype) if needs[1] else None
    d_t = (-gg * gf * wf * c / d).sum_to_size(t.shape).to(t.dtype) if needs[2] else None
    d_w = (gg * gf * q * c).sum_to_size(w.shape).to(w.dtype) if w is not None and needs[3] else None
    return d_g, d_s, d_t, d_w


class _BinaryCrossEntropy(torch.autograd.Function):
    """torch's forward; the input gradient from our kernel (weight and all, broadcast into the input by the
    kernel); the target gradient torch's own (aclnn has none); weight is not differentiable, as in torch."""

    generate_vmap_rule = True

    @staticmethod
    def forward(input: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None,
                reduction: str) -> torch.Tensor:
        return F.binary_cross_entropy(input, target, weight=weight, reduction=reduction)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        input, target, weight, ctx.reduction = inputs
        ctx.save_for_backward(input, target, weight)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        input, target, weight = ctx.saved_tensors
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            present = (grad_output, input, target) + (() if weight is None else (weight,))
            compute = compute_dtype(*present)
            w = None if weight is None else weight.to(compute)
            grad_input = backward_op(SPEC.name)(grad_output.to(compute), input.to(compute), target.to(compute), w,
                                                ctx.reduction, out_dtype=compute).to(input.dtype)
        if ctx.needs_input_grad[1]:  # torch's own (a torch.func.vjp composes with torch.func's transforms)
            _, vjp = torch.func.vjp(lambda t: F.binary_cross_entropy(input, t, weight=weight,
                                                                     reduction=ctx.reduction), target)
            (grad_target,) = vjp(grad_output)
        return grad_input, grad_target, None, None


def binary_cross_entropy(input: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> torch.Tensor:
    """``torch.nn.functional.binary_cross_entropy``; the input gradient comes from our
    BinaryCrossEntropyGrad kernel (``torch.ops.lossgrad``)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if target.size() != input.size():  # torch's own check and message
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        if weight.requires_grad:  # torch's derivatives.yaml has no formula for weight
            raise RuntimeError("The function 'binary_cross_entropy' is not differentiable with respect to argument "
                               "'weight'. This input cannot have requires_grad True.")
        weight = weight.expand(torch.broadcast_shapes(target.size(), weight.size()))  # as torch
    if torch.is_autocast_enabled(input.device.type):  # autocast runs binary_cross_entropy in float32 (its fp32
        input, target = input.float(), target.float()  # policy); a Function's forward does not see autocast
        weight = None if weight is None else weight.float()
    return _BinaryCrossEntropy.apply(input, target, weight, reduction)


class BCELoss(torch.nn.BCELoss):
    """``torch.nn.BCELoss`` whose backward runs our BinaryCrossEntropyGrad kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


LOSS = named_drop_in(SPEC, binary_cross_entropy, BCELoss, F.binary_cross_entropy, torch.nn.BCELoss)
