"""What every op's golden formulas share (lossgrad/ops/<name>/golden.py holds each op's own `f64` and `f32`).

The contract of a formula: each function gets the three inputs already broadcast to the call's iteration space, all in
the working float type (float64 for the reference mode, float32 for the dtype-faithful mode), and the reduction
coefficient ``c`` in that type. The coefficient (numerator and divisor) comes from the validated Call; nothing here
knows about reductions. The float32 variants evaluate in the operation order of aclnn's kernels so that float32
intermediate overflow and rounding are reproduced; with sat=True every arithmetic result is saturated as the device does
(comparisons and selects move data only). A transcendental (exp, log) is taken in float64 and rounded once to float32:
NumPy's float32 exp is not correctly rounded and varies with the CPU's SIMD dispatch (`exp_f32`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

Elementwise = Callable[..., np.ndarray]


def saturate(x: np.ndarray) -> np.ndarray:
    """A computed float result in saturation mode (310P, Atlas 910: CANN aclrtFloatOverflowMode): NaN -> 0,
    +-Inf (and anything beyond the dtype's range) -> +-MAX of the dtype. Finite values are unchanged."""
    try:
        fmax = np.finfo(x.dtype).max
    except ValueError:  # bfloat16: ml_dtypes has its own finfo
        import ml_dtypes
        fmax = ml_dtypes.finfo(x.dtype).max
    with np.errstate(invalid="ignore"):
        return np.clip(np.where(np.isnan(x), np.zeros((), x.dtype), x), -fmax, fmax).astype(x.dtype)


def sat_fn(sat: bool) -> Callable[[np.ndarray], np.ndarray]:
    return saturate if sat else (lambda x: x)


def sign(x_minus: np.ndarray, x_plus: np.ndarray) -> np.ndarray:
    """sign(x_plus - x_minus) from two comparisons, as aclnn builds it: 0 when equal and when either is NaN."""
    one = np.ones((), dtype=x_minus.dtype)
    zero = np.zeros((), dtype=x_minus.dtype)
    return np.where(x_plus > x_minus, one, zero) - np.where(x_plus < x_minus, one, zero)


def exp_f32(x: np.ndarray) -> np.ndarray:
    """exp of float32 values, correctly rounded: taken in float64 and rounded once (overflow gives inf)."""
    with np.errstate(over="ignore"):
        return np.exp(x.astype(np.float64)).astype(np.float32)
