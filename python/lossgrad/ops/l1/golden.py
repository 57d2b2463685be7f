"""Golden formulas of the op (sign(self - target) * gradOutput * c), independent of the kernels.

`f64`: the exact math in float64. `f32`: float32 in aclnn's kernel operation order (ops_semantics §1.4), every
arithmetic result saturated as the device does when `sat` is set. Both get the inputs broadcast to the call's
iteration space and the reduction coefficient `c` (lossgrad.golden.elementwise explains the contract).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...golden.elementwise import sat_fn, sign


def f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    return sign(t, s) * (g * c)


def f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
        sat: bool = False) -> np.ndarray:
    S = sat_fn(sat)
    gs = S(g * c)                    # Muls(grads, reduceElts)
    return S(sign(t, s) * gs)        # Mul(sign, gs)
