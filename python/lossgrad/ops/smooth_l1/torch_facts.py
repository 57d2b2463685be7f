"""aclnnSmoothL1LossBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ...torch.losses import DropIn, Pointwise, aclnn_sign, legacy_reduction, pointwise_derivative
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict[str, Any], needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = f(s - t) * g * c with f = clamp((s - t) / beta, -1, 1) (beta = 0: aclnn's sign)."""
    x = s.to(gg.dtype) - t.to(gg.dtype)
    beta = float(np.float32(attrs["beta"]))  # aclnn's C float
    if beta == 0.0:
        return pointwise_derivative(gg, g, s, t, c, needs, aclnn_sign(x), None, None)
    f = torch.where(x > beta, 1.0, torch.where(x < -beta, -1.0, x / beta)).to(x.dtype)
    df = ((x > -beta) & (x < beta)).to(x.dtype) / beta
    return pointwise_derivative(gg, g, s, t, c, needs, f, df, -df)


def _forward(input: torch.Tensor, target: torch.Tensor, reduction: str, beta: float) -> torch.Tensor:
    return F.smooth_l1_loss(input, target, reduction=reduction, beta=beta)


def smooth_l1_loss(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean", beta: float = 1.0) -> torch.Tensor:
    """``torch.nn.functional.smooth_l1_loss``; the input gradient comes from
    ``torch.ops.lossgrad.smooth_l1_loss_backward``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return Pointwise.apply(input, target, SPEC.name, _forward, "minus_input", reduction, float(beta))


class SmoothL1Loss(torch.nn.SmoothL1Loss):
    """``torch.nn.SmoothL1Loss`` whose backward runs our SmoothL1LossBackward kernel."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


LOSS = DropIn(smooth_l1_loss, SmoothL1Loss)
