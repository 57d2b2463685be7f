"""Golden formulas: f64 exact, f32 in the 950 kernel's order (new_ops_semantics §2.2), weight None when absent."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...golden.elementwise import sat_fn

EPS = np.float32(1e-12)  # the kernel's float32 constant (9.99999996e-13); the f64 formula clamps at the same value


def f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, c: Any,
        attrs: Mapping[str, Any]) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = g * (s - t) / np.maximum((1.0 - s) * s, np.float64(EPS))  # NaN self: NaN numerator, whatever max says
        if w is not None:
            out = out * w
        return out * c


def f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, c: np.float32,
        attrs: Mapping[str, Any], sat: bool = False) -> np.ndarray:
    S = sat_fn(sat)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        d = S(s - t)                             # Sub
        v = S(S(np.float32(1) - s) * s)          # 1 - s, Mul
        v = np.maximum(v, EPS)                   # Maxs(1e-12): a NaN v only comes with a NaN numerator
        out = S(S(g * d) / v)                    # Mul(g), Div (exactly rounded)
        if w is not None:
            out = S(out * w)                     # Mul(weight)
        return out if c == 1 else S(out * c)     # Muls(c) for mean
