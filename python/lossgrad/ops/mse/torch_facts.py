"""aclnnMseLossBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...torch.losses import DropIn, Pointwise, legacy_reduction, pointwise_derivative, weighted
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict[str, Any], needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = (s - t) * c * g: d/ds = g * c, d/dt = -g * c."""
    x = s.to(gg.dtype) - t.to(gg.dtype)
    one = torch.ones_like(x)
    return pointwise_derivative(gg, g, s, t, c, needs, x, one, -one)


def _forward(input: torch.Tensor, target: torch.Tensor, reduction: str) -> torch.Tensor:
    return F.mse_loss(input, target, reduction=reduction)


def mse_loss(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: torch.Tensor | None = None) -> torch.Tensor:
    """``torch.nn.functional.mse_loss``; the input gradient comes from ``torch.ops.lossgrad.mse_loss_backward``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return weighted(Pointwise.apply(input, target, SPEC.name, _forward, "minus_input", "none"), weight, input,
                        reduction)
    return Pointwise.apply(input, target, SPEC.name, _forward, "minus_input", reduction)


class MSELoss(torch.nn.MSELoss):
    """``torch.nn.MSELoss`` whose backward runs our MseLossBackward kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return mse_loss(input, target, reduction=self.reduction)


LOSS = DropIn(mse_loss, MSELoss)
