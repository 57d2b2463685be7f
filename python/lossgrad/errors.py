"""Errors raised by the public API, with aclnn's return codes.

aclnn reports argument problems through numeric status codes (ops-nn `docs/zh/context/aclnn_return_code.md`); we keep
the same numbers so that a failing call here and a failing call on a device can be matched by code.
"""
from __future__ import annotations

ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_INNER_TILING_ERROR = 561002

_CODE_NAMES = {
    ACLNN_ERR_PARAM_NULLPTR: "ACLNN_ERR_PARAM_NULLPTR",
    ACLNN_ERR_PARAM_INVALID: "ACLNN_ERR_PARAM_INVALID",
    ACLNN_ERR_INNER_TILING_ERROR: "ACLNN_ERR_INNER_TILING_ERROR",
}


class LossGradError(ValueError):
    """An invalid call, reported with aclnn's status code (``code``) before any kernel runs."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"[{code} {_CODE_NAMES.get(code, 'ACLNN_ERR')}] {message}")


def null_error(message: str) -> LossGradError:
    return LossGradError(ACLNN_ERR_PARAM_NULLPTR, message)


def invalid_error(message: str) -> LossGradError:
    return LossGradError(ACLNN_ERR_PARAM_INVALID, message)


class BackendUnavailable(RuntimeError):
    """A backend (CANN CPU-debug, simulator, device) cannot run on this machine; the message says why and what to do."""


class OutputTooLarge(MemoryError):
    """A call whose output (and the kernel's copies of its inputs) cannot fit in the host memory this process can
    still get: refused before anything is allocated (lossgrad.memory)."""
