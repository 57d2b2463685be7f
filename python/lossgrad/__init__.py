"""ascend-lossgrad: Ascend C loss-backward kernels with a Python host.

Public API (stable, see ../shared/DESIGN.md): the four functions below, `lossgrad.golden`, `lossgrad.twin`,
`LossGradError`.
"""
from __future__ import annotations

from .api import kl_div_backward, l1_loss_backward, mse_loss_backward, smooth_l1_loss_backward
from .errors import LossGradError
from .registry import OPS, Reduction

__all__ = ["l1_loss_backward", "mse_loss_backward", "smooth_l1_loss_backward", "kl_div_backward", "LossGradError",
           "OPS", "Reduction"]
__version__ = "0.1.0"
