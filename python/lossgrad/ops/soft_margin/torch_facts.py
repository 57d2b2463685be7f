"""PyTorch facts: the backward's derivative, the drop-in soft_margin_loss / SoftMarginLoss."""

import torch
import torch.nn.functional as F

from ...torch.losses import DropIn, Pointwise, legacy_reduction, pointwise_derivative
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict, needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = -t sig g c, sig = sigmoid(-s t): df/ds = t^2 sig (1 - sig), df/dt = -sig + s t sig (1 - sig)."""
    sf, tf = s.to(gg.dtype), t.to(gg.dtype)
    sig = torch.sigmoid(-sf * tf)
    dsig = sig * (1 - sig)
    return pointwise_derivative(gg, g, s, t, c, needs, -tf * sig, tf * tf * dsig, -sig + sf * tf * dsig)


def soft_margin_loss(input: torch.Tensor, target: torch.Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> torch.Tensor:
    """``torch.nn.functional.soft_margin_loss``; the input gradient comes from our kernel, the target's from torch."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return Pointwise.apply(input, target, SPEC.name, lambda i, t, r: F.soft_margin_loss(i, t, reduction=r), "torch",
                          reduction)


class SoftMarginLoss(torch.nn.SoftMarginLoss):
    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return soft_margin_loss(input, target, reduction=self.reduction)


LOSS = DropIn(soft_margin_loss, SoftMarginLoss)
