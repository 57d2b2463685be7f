"""Test-only oracles, written independently of `lossgrad.golden`.

- `rne_round`: one round-half-to-even rounding of float64 values to float32/float16/bfloat16 by exact power-of-two
  scaling and `np.rint` (a different algorithm from the golden's round-to-odd path).
- `torch_reference`: the four loss backwards through PyTorch CPU autograd in float64, with the aclnn-vs-PyTorch
  differences handled explicitly (see test_golden_vs_torch.py's docstring for the list); it lives in
  lossgrad.verify.oracle, where `lossgrad verify --fuzz` uses it too.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

# p = significand bits, e_min = frexp exponent of the smallest normal (frexp mantissa is in [0.5, 1)), max finite.
_FORMATS: dict[str, tuple[int, int, float]] = {
    "float32": (24, -125, float(np.finfo(np.float32).max)),
    "float16": (11, -13, 65504.0),
    "bfloat16": (8, -125, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
}
NP_DTYPES = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16),
             "bfloat16": np.dtype(ml_dtypes.bfloat16)}


def rne_round(x: np.ndarray, label: str) -> np.ndarray:
    """Round float64 -> `label` once, half to even, with overflow to +/-Inf; NaN/Inf pass through."""
    p, e_min, max_finite = _FORMATS[label]
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(x)
    xf = np.where(finite, x, 0.0)
    _, e = np.frexp(xf)
    q = np.maximum(e, e_min) - p                     # exponent of one unit in the last place
    y = np.ldexp(np.rint(np.ldexp(xf, -q)), q)       # both scalings are exact; rint is half-to-even
    y = np.where(np.abs(y) > max_finite, np.copysign(np.inf, y), y)
    y = np.where(finite, y, x)
    return y.astype(np.float32).astype(NP_DTYPES[label])  # y is representable, so these casts are exact


from lossgrad.verify.oracle import torch_reference  # noqa: E402,F401  (the oracle lives in the package)
