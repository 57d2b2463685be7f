"""Golden formulas of the op (kl_div's gradient with respect to target), independent of the kernels.

`f64`: the math in float64, with aclnn's form of the "+1", (g' t) / t, so that t = 0 gives NaN as aclnn and PyTorch
do. `f32`: float32 in aclnn's operation order (new_ops_semantics §4.2), every arithmetic result saturated as the device
does when `sat` is set. Both get the inputs broadcast to broadcast(self, target) and the coefficient `c`; the sum back
onto target's shape is lossgrad.golden's.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...golden.elementwise import exp_f32, sat_fn


def f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    gp = g * c
    if attrs["log_target"]:
        e = np.exp(t)
        return gp * (t - s) * e + gp * e
    return (gp * np.log(t) - gp * s) + (gp * t) / t


def _ln_f32(t: np.ndarray) -> np.ndarray:
    """ln in float64, rounded once to float32 (NumPy's float32 log is not correctly rounded)."""
    return np.log(t.astype(np.float64)).astype(np.float32)


def f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
        sat: bool = False) -> np.ndarray:
    S = sat_fn(sat)
    gp = S(g * c)
    if attrs["log_target"]:
        e = S(exp_f32(t))
        return S(S(S(gp * S(t - s)) * e) + S(gp * e))
    return S(S(S(gp * S(_ln_f32(t))) - S(gp * s)) + S(S(gp * t) / t))
