"""aclnnMseLossBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...torch.losses import pointwise_derivative, pointwise_drop_in
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict[str, Any], needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = (s - t) * c * g: d/ds = g * c, d/dt = -g * c."""
    x = s.to(gg.dtype) - t.to(gg.dtype)
    one = torch.ones_like(x)
    return pointwise_derivative(gg, g, s, t, c, needs, x, one, -one)


LOSS = pointwise_drop_in(SPEC, F.mse_loss, torch.nn.MSELoss, target_grad="minus_input")
