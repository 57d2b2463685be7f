"""aclnnL1LossBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...torch.losses import DropIn, Pointwise, aclnn_sign, legacy_reduction, pointwise_derivative, weighted
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict[str, Any], needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = sign(s - t) * g * c: sign' = 0 almost everywhere, so only gradOutput gets a gradient."""
    x = s.to(gg.dtype) - t.to(gg.dtype)
    return pointwise_derivative(gg, g, s, t, c, needs, aclnn_sign(x), None, None)


def _forward(input: torch.Tensor, target: torch.Tensor, reduction: str) -> torch.Tensor:
    return F.l1_loss(input, target, reduction=reduction)


def l1_loss(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: torch.Tensor | None = None) -> torch.Tensor:
    """``torch.nn.functional.l1_loss``; the input gradient comes from ``torch.ops.lossgrad.l1_loss_backward``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return weighted(Pointwise.apply(input, target, SPEC.name, _forward, "minus_input", "none"), weight, input,
                        reduction)
    return Pointwise.apply(input, target, SPEC.name, _forward, "minus_input", reduction)


class L1Loss(torch.nn.L1Loss):
    """``torch.nn.L1Loss`` whose backward runs our L1LossBackward kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return l1_loss(input, target, reduction=self.reduction)


LOSS = DropIn(l1_loss, L1Loss)
