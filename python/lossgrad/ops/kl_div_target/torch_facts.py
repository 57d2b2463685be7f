"""aclnnKlDivTargetBackward: the PyTorch facts. The op has no drop-in of its own: kl_div's (ops/kl_div/torch_facts.py)
takes its target gradient from this kernel, as torch_npu routes kl_div's target derivative to aclnnKlDivTargetBackward.

Imported by lossgrad.torch only."""
from __future__ import annotations

from typing import Any

import torch


def derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
               attrs: dict[str, Any], needs: tuple[bool, bool, bool]) -> tuple[torch.Tensor | None, ...]:
    """out = sum onto target's shape of g*c*(ln t - s + 1), or g*c*exp(t)*(t - s + 1) with log_target."""
    need_g, need_s, need_t = needs
    dt = gg.dtype
    gf, sf, tf = g.to(dt), s.to(dt), t.to(dt)
    space = torch.broadcast_shapes(g.shape, s.shape, t.shape)
    if attrs["log_target"]:
        e = tf.exp()
        d_g_term, d_s_term, d_t_term = e * (tf - sf + 1), -gf * e, gf * e * (tf - sf + 2)
    else:
        d_g_term, d_s_term, d_t_term = tf.log() - sf + 1, -gf, gf / tf

    def onto(term: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        return (term * gg * c).expand(space).sum_to_size(like.shape).to(like.dtype)
    return (onto(d_g_term, g) if need_g else None, onto(d_s_term, s) if need_s else None,
            onto(d_t_term, t) if need_t else None)

LOSS = None  # kl_div's drop-in serves it
