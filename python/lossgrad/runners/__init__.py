"""Backends that execute a validated call: the twin (always available) and CANN (cpu / sim / npu)."""
from __future__ import annotations

import numpy as np

from ..errors import BackendUnavailable
from ..validation import Call

BACKENDS = ("auto", "twin", "cpu", "sim", "npu")


def resolve_backend(backend: str) -> str:
    """'auto' is the device when one is present, else the twin."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend != "auto":
        return backend
    try:
        from ..cann.runner import device_present
    except ImportError:
        return "twin"
    return "npu" if device_present() else "twin"


def no_launch_result(call: Call) -> np.ndarray:
    """aclnn returns before launching: an empty output, or (KL with an empty broadcast of a non-empty self) zeros,
    the sum over no contributions."""
    return np.zeros(call.out_shape, dtype=call.out_dtype.np_dtype)


def run(call: Call, backend: str = "auto") -> np.ndarray:
    if not call.launch:
        return no_launch_result(call)
    chosen = resolve_backend(backend)
    if chosen == "twin":
        from .twin import run_twin
        return run_twin(call).output
    try:
        from ..cann.runner import run_on_cann
    except ImportError as exc:  # pragma: no cover - the CANN runner ships with the package
        raise BackendUnavailable(f"backend {chosen!r} needs lossgrad.cann ({exc})") from exc
    return run_on_cann(call, chosen)
