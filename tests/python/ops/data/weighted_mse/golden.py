"""Golden formulas of the test op: (((self - target) * c) * gradOutput) * weight, weight None when absent."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...golden.elementwise import sat_fn


def f64(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, c: Any,
        attrs: Mapping[str, Any]) -> np.ndarray:
    out = ((s - t) * c) * g
    return out if w is None else out * w


def f32(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, c: np.float32,
        attrs: Mapping[str, Any], sat: bool = False) -> np.ndarray:
    S = sat_fn(sat)
    out = S(S(S(s - t) * c) * g)  # Sub -> Muls(c) -> Mul(g) -> Mul(w), the kernel's order
    return out if w is None else S(out * w)
