"""ascend-lossgrad: Ascend C loss-backward kernels with a Python host.

Public API (stable, see ../shared/DESIGN.md): the four functions below, `lossgrad.golden`, `lossgrad.twin`,
`LossGradError`.
"""
from __future__ import annotations

from .errors import LossGradError
from .registry import OPS, Reduction

__all__ = ["LossGradError", "OPS", "Reduction"]
__version__ = "0.1.0"
