"""Backends that execute a validated call: the twin (always available) and CANN (cpu / sim / npu)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import BackendUnavailable, invalid_error
from ..validation import Call

BACKENDS = ("auto", "twin", "cpu", "sim", "npu")


def check_backend_name(backend: Any) -> str:
    """An unknown backend is an invalid call (161002), like any other invalid argument."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise invalid_error(f"backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    return backend


def resolve_backend(backend: str) -> str:
    """'auto' is the device when one is present, else the twin."""
    check_backend_name(backend)
    if backend != "auto":
        return backend
    try:
        from ..cann.runner import device_present
    except ImportError:
        return "twin"
    return "npu" if device_present() else "twin"


def require_backend(backend: str) -> str:
    """The backend a call runs on, after checking that it can run here: BackendUnavailable (naming what is missing)
    for cpu/sim/npu without CANN or npu without a device. Cheap; every call and `verify` check it up front, so an
    empty call never reports success on a backend that could not have run it."""
    chosen = resolve_backend(backend)
    if chosen != "twin":
        try:
            from ..cann.runner import require_backend as require_cann_backend
        except ImportError as exc:  # pragma: no cover - the CANN runner ships with the package
            raise BackendUnavailable(f"backend {chosen!r} needs lossgrad.cann ({exc})") from exc
        require_cann_backend(chosen)
    return chosen


def no_launch_result(call: Call) -> np.ndarray:
    """aclnn returns before launching: an empty output, or (KL with an empty broadcast of a non-empty self) zeros,
    the sum over no contributions."""
    return np.zeros(call.out_shape, dtype=call.out_dtype.np_dtype)


def run(call: Call, backend: str = "auto") -> np.ndarray:
    from ..memory import require as require_memory
    chosen = require_backend(backend)
    require_memory(call)  # before any allocation: a call that cannot fit is refused, not killed by the OOM killer
    if not call.launch:
        return no_launch_result(call)
    if chosen == "twin":
        from .twin import run_twin
        return run_twin(call).output
    from ..cann.runner import run_on_cann
    return run_on_cann(call, chosen)
