"""Golden formulas of the op (-T * gradOutput * c, T = exp(target) if log_target), independent of the kernels.

`f64`: the exact math in float64. `f32`: float32 in aclnn's kernel operation order (ops_semantics §4.4), every
arithmetic result saturated as the device does when `sat` is set. Both get the inputs broadcast to the call's
iteration space and the reduction coefficient `c` (lossgrad.golden.elementwise explains the contract).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...golden.elementwise import exp_f32, sat_fn


def f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    with np.errstate(over="ignore"):
        big_t = np.exp(t) if attrs["log_target"] else t
    return -(big_t * g) * c  # self's values never enter; it only fixes the output shape


def f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
        sat: bool = False) -> np.ndarray:
    S = sat_fn(sat)
    big_t = S(exp_f32(t)) if attrs["log_target"] else t  # exp in float64, rounded once
    return S(S(big_t * g) * -c)          # Mul(grad), Muls(-1), Muls(coef): the sign flip is exact
