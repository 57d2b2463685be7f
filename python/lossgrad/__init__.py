"""ascend-lossgrad: Ascend C loss-backward kernels with a Python host.

Public API (stable, see ../shared/DESIGN.md): one function per op (`lossgrad.<op name>`, made from the registry),
`lossgrad.profile` (one call's output, tiling, counters and modelled time), `lossgrad.golden`, `lossgrad.twin`,
`LossGradError`. `golden` and `twin` are imported on first use (`lossgrad.golden.l1_loss_backward(...)` works after a
bare `import lossgrad`), so importing the package stays as cheap as importing the API.
"""
from __future__ import annotations

import importlib
from typing import Any

from .api import FUNCTIONS as _FUNCTIONS
from .errors import LossGradError
from .profile import Profile, profile
from .registry import OPS, Reduction

globals().update(_FUNCTIONS)  # lossgrad.<op name>: one function per op of the registry (lossgrad.api)
__all__ = [*_FUNCTIONS, "LossGradError", "OPS", "Reduction", "golden", "twin", "profile", "Profile"]
__version__ = "0.1.0"

_LAZY_SUBMODULES = ("golden", "twin")


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")  # the import binds it as a package attribute
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
