"""PyTorch facts: the backward's derivative, the drop-in soft_margin_loss / SoftMarginLoss."""

import torch
import torch.nn.functional as F

from ...torch.losses import pointwise_derivative, pointwise_drop_in
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict, needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = -t sig g c, sig = sigmoid(-s t): df/ds = t^2 sig (1 - sig), df/dt = -sig + s t sig (1 - sig)."""
    sf, tf = s.to(gg.dtype), t.to(gg.dtype)
    sig = torch.sigmoid(-sf * tf)
    dsig = sig * (1 - sig)
    return pointwise_derivative(gg, g, s, t, c, needs, -tf * sig, tf * tf * dsig, -sig + sf * tf * dsig)


LOSS = pointwise_drop_in(SPEC, F.soft_margin_loss, torch.nn.SoftMarginLoss, target_grad="torch")
