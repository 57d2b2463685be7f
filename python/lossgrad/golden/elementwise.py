"""Per-element formulas of the four ops, in two evaluation modes.

Each function gets the three inputs already broadcast to the call's iteration space, all in the working float type
(float64 for the reference mode, float32 for the dtype-faithful mode), and the reduction coefficient ``c`` in that
type. The coefficient (numerator and divisor) comes from the validated Call; nothing here knows about reductions.
The float32 variants evaluate in the operation order of aclnn's kernels (ops_semantics §1.4, §2.5, §3.4, §4.4) so
that float32 intermediate overflow and rounding are reproduced.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

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


def _sat(sat: bool) -> Callable[[np.ndarray], np.ndarray]:
    return saturate if sat else (lambda x: x)


def sign(x_minus: np.ndarray, x_plus: np.ndarray) -> np.ndarray:
    """sign(x_plus - x_minus) from two comparisons, as aclnn builds it: 0 when equal and when either is NaN."""
    one = np.ones((), dtype=x_minus.dtype)
    zero = np.zeros((), dtype=x_minus.dtype)
    return np.where(x_plus > x_minus, one, zero) - np.where(x_plus < x_minus, one, zero)


# -- float64 reference ------------------------------------------------------------------------------------------------

def l1_f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    return sign(t, s) * (g * c)


def mse_f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    return ((s - t) * c) * g


def smooth_l1_f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    beta = float(np.float32(attrs["beta"]))  # aclnn's beta is a C float
    x = s - t
    if beta == 0.0:
        f = sign(np.zeros_like(x), x)  # exactly L1's function: 0 at 0 and at NaN (docs/semantics.md, beta = 0)
    else:
        with np.errstate(invalid="ignore"):
            f = np.where(x < -beta, -1.0, np.where(x > beta, 1.0, x / beta))  # NaN x falls through to x/beta
    return (f * g) * c


def kl_div_f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    with np.errstate(over="ignore"):
        big_t = np.exp(t) if attrs["log_target"] else t
    return -(big_t * g) * c  # self's values never enter; it only fixes the output shape


# -- float32, kernel operation order ----------------------------------------------------------------------------------

# With sat=True every arithmetic result is saturated as the device does (comparisons and selects move data only).

def l1_f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
           sat: bool = False) -> np.ndarray:
    S = _sat(sat)
    gs = S(g * c)                    # Muls(grads, reduceElts)
    return S(sign(t, s) * gs)        # Mul(sign, gs)


def mse_f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
            sat: bool = False) -> np.ndarray:
    S = _sat(sat)
    return S(S(S(s - t) * c) * g)    # Sub -> Muls(cof) -> Mul(dout)


def _reciprocal_times(x: np.ndarray, beta32: np.float32, S: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """x * (1/beta) with 1/beta computed in float64 and rounded to float32 once (the host computes it).

    If 1/beta overflows float32 (subnormal beta), scale both by 2^64 so the reciprocal stays finite; the scaling is
    exact, and only values with |x| <= beta (themselves tiny) use this lin term.
    """
    inv = 1.0 / float(beta32)
    if inv <= float(np.finfo(np.float32).max):
        return S(x * np.float32(inv))
    scale = np.float32(2.0 ** 64)
    return S(S(x * scale) * np.float32(1.0 / (float(beta32) * 2.0 ** 64)))


def smooth_l1_f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
                  sat: bool = False) -> np.ndarray:
    S = _sat(sat)
    beta = np.float32(attrs["beta"])
    x = S(s - t)
    zero, one = np.float32(0.0), np.float32(1.0)
    pos = np.where(x > beta, one, zero)
    neg = np.where(x < -beta, -one, zero)
    if beta == 0:
        lin = np.zeros_like(x)           # beta = 0 is exactly L1's sign (docs/semantics.md)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            lin = np.where(S(np.abs(x)) > beta, zero, _reciprocal_times(x, beta, S))
    return S(S(S(S(pos + neg) + lin) * g) * c)  # Add, Add, Mul(dout), Muls(cof)


def kl_div_f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
               sat: bool = False) -> np.ndarray:
    S = _sat(sat)
    with np.errstate(over="ignore"):
        big_t = S(np.exp(t)) if attrs["log_target"] else t
    return S(S(big_t * g) * -c)          # Mul(grad), Muls(-1), Muls(coef): the sign flip is exact
