"""The test op's PyTorch facts: the derivative of its backward (with respect to every tensor, the optional weight
included, None when absent) and a drop-in (MSE: with no weight the op is MSE's gradient)."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...torch.losses import pointwise_drop_in
from . import SPEC


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, w: torch.Tensor | None,
               c: float, attrs: dict[str, Any], needs: tuple[bool, ...]) -> tuple[torch.Tensor | None, ...]:
    """out = (s - t) * c * g * w: d/dg = (s - t) c w, d/ds = g c w, d/dt = -g c w, d/dw = (s - t) c g."""
    x = s.to(gg.dtype) - t.to(gg.dtype)
    wf = torch.ones_like(x) if w is None else w.to(gg.dtype)
    gf = g.to(gg.dtype)
    d_g = (gg * x * wf * c).sum_to_size(g.shape).to(g.dtype) if needs[0] else None
    d_s = (gg * gf * wf * c).sum_to_size(s.shape).to(s.dtype) if needs[1] else None
    d_t = (-gg * gf * wf * c).sum_to_size(t.shape).to(t.dtype) if needs[2] else None
    d_w = (gg * x * gf * c).sum_to_size(w.shape).to(w.dtype) if w is not None and needs[3] else None
    return d_g, d_s, d_t, d_w


LOSS = pointwise_drop_in(SPEC, F.mse_loss, torch.nn.MSELoss, target_grad="minus_input")
