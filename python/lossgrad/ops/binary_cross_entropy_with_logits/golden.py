"""Golden formulas: f64 exact, f32 in the 950 kernel's order (new_ops_semantics §3.2), exp rounded once; weight and
posWeight None when absent."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...golden.elementwise import exp_f32, sat_fn


def f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, p: np.ndarray | None, c: Any,
        attrs: Mapping[str, Any]) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        sig = 1.0 / (1.0 + np.exp(-s))  # exp overflow: 1 / inf = 0
        base = sig - t if p is None else (p * t + 1.0 - t) * sig - p * t  # equal in exact arithmetic for p = 1
        out = base * g
        if w is not None:
            out = out * w
        return out * c


def f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, p: np.ndarray | None, c: np.float32,
        attrs: Mapping[str, Any], sat: bool = False) -> np.ndarray:
    S = sat_fn(sat)
    one = np.float32(1)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sig = S(one / S(S(exp_f32(-s)) + one))   # Muls(-1), Exp, Adds(1), Div of Duplicate(1)
        a = t if p is None else S(p * t)         # aclnn's OnesLike posWeight: 1 * t = t
        base = S(S(S(S(a + one) - t) * sig) - a)  # Adds(1), Sub(t), Mul(sig), Sub(p * t)
        out = S(base * g)                        # Mul(gradOutput)
        if w is not None:
            out = S(out * w)                     # Mul(weight)
        return out if c == 1 else S(out * c)     # Muls(c) for mean
