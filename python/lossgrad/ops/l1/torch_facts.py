"""aclnnL1LossBackward: the PyTorch facts (the derivative of the backward, the drop-in loss).

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...torch.losses import aclnn_sign, pointwise_derivative, pointwise_drop_in
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict[str, Any], needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = sign(s - t) * g * c: sign' = 0 almost everywhere, so only gradOutput gets a gradient."""
    x = s.to(gg.dtype) - t.to(gg.dtype)
    return pointwise_derivative(gg, g, s, t, c, needs, aclnn_sign(x), None, None)


LOSS = pointwise_drop_in(SPEC, F.l1_loss, torch.nn.L1Loss, target_grad="minus_input")
