"""Golden formulas of the op (f(self - target) * gradOutput * c), independent of the kernels.

`f64`: the exact math in float64. `f32`: float32 in aclnn's kernel operation order (ops_semantics §3.4), every
arithmetic result saturated as the device does when `sat` is set. Both get the inputs broadcast to the call's
iteration space and the reduction coefficient `c` (lossgrad.golden.elementwise explains the contract).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from ...golden.elementwise import sat_fn, sign


def f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    beta = float(np.float32(attrs["beta"]))  # aclnn's beta is a C float
    x = s - t
    if beta == 0.0:
        f = sign(np.zeros_like(x), x)  # exactly L1's function: 0 at 0 and at NaN (docs/semantics.md, beta = 0)
    else:
        with np.errstate(invalid="ignore"):
            f = np.where(x < -beta, -1.0, np.where(x > beta, 1.0, x / beta))  # NaN x falls through to x/beta
    return (f * g) * c


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


def f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
        sat: bool = False) -> np.ndarray:
    S = sat_fn(sat)
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
