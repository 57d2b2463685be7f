"""Golden formulas: f64 exact, f32 in the 950 kernel's order (new_ops_semantics §1.2), exp rounded once."""

from typing import Any, Mapping

import numpy as np

from ...golden.elementwise import exp_f32, sat_fn


def f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: Any, attrs: Mapping[str, Any]) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-(s * t))
        return (-t * e) / (1.0 + e) * (g * c)  # exp overflow: inf / inf = NaN, as aclnn and torch's eager kernel


def f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, c: np.float32, attrs: Mapping[str, Any],
        sat: bool = False) -> np.ndarray:
    S = sat_fn(sat)
    with np.errstate(over="ignore", invalid="ignore"):
        e = S(exp_f32(-S(s * t)))  # Mul, Exp; then Mul, Adds(1), Div (exactly rounded), Muls(coef), Mul
        return S(S(S(-t * e) / S(e + np.float32(1))) * S(g * c))
