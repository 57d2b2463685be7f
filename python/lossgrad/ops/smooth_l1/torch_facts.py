"""aclnnSmoothL1LossBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ...torch.losses import aclnn_sign, pointwise_derivative, pointwise_drop_in
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


LOSS = pointwise_drop_in(SPEC, F.smooth_l1_loss, torch.nn.SmoothL1Loss, target_grad="minus_input")
