"""Single round-half-to-even rounding from float64 to the kernel output dtypes.

NumPy's float64 -> float32 cast is correctly rounded. Casting float64 to bfloat16 with ml_dtypes (and with torch)
goes through float32 and rounds twice, which is wrong on values just above a bf16 tie (1 + 2^-8 + 2^-40 becomes 1).
We avoid that for both 16-bit types by rounding float64 -> float32 *to odd* first: rounding to odd at >= p + 2 bits
and then to nearest-even at p bits equals one correct rounding (Boldo & Melquiond, "Emulation of FMA and correctly
rounded sums: proved algorithms using rounding to odd", 2008). float32 keeps 24 bits against 11 (fp16) and 8 (bf16),
and its subnormals reach below both formats' subnormals, so the condition holds over the whole range.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import DType


def _to_float32_round_to_odd(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded to odd: truncate toward zero, then set the last bit when the result is inexact."""
    with np.errstate(over="ignore", invalid="ignore"):
        nearest = x.astype(np.float32)
        back = nearest.astype(np.float64)
    inexact = np.isfinite(x) & (back != x)
    overshot = inexact & (np.abs(back) > np.abs(x))  # includes overflow to Inf: one step down is FLT_MAX
    bits = nearest.view(np.uint32)
    bits = np.where(overshot, bits - np.uint32(1), bits)  # sign-magnitude: one step toward zero
    bits = np.where(inexact, bits | np.uint32(1), bits)
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def round_to(x: np.ndarray, dtype: DType) -> np.ndarray:
    """Round float64 values once, half to even, to a kernel dtype (float32, float16, bfloat16). NaN/Inf pass through."""
    x64 = np.asarray(x, dtype=np.float64)
    if dtype is DType.FLOAT64:
        return x64.copy()
    if dtype is DType.FLOAT32:
        with np.errstate(over="ignore"):
            return x64.astype(np.float32)
    if dtype in (DType.FLOAT16, DType.BFLOAT16):
        odd = _to_float32_round_to_odd(x64)
        with np.errstate(over="ignore"):
            return odd.astype(dtype.np_dtype)  # float32 -> 16-bit is round-half-to-even (NumPy, ml_dtypes)
    raise ValueError(f"cannot round to {dtype.label}: only float outputs exist")
