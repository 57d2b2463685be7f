"""Independent NumPy expectations for the twin's API tests: exact rounding of float64 values to half/bfloat16/float
in every RoundMode, saturating integer conversion, and bit-level comparison helpers."""
from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)

# precision (significand bits incl. the implicit one), minimum normal exponent, largest finite value
_FMT = {F16: (11, -14, 65504.0), BF16: (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
        F32: (24, -126, float(np.finfo(np.float32).max))}

MODES = ("none", "rint", "floor", "ceil", "round", "trunc", "odd")  # RoundMode values 0..6


def _away(mag: np.ndarray, frac: np.ndarray, lo: np.ndarray, neg: np.ndarray, mode: str) -> np.ndarray:
    """Whether to move a magnitude from `lo` up by one unit, given the fractional part and the sign."""
    odd = np.mod(lo, 2) == 1
    if mode in ("rint", "none"):
        return (frac > 0.5) | ((frac == 0.5) & odd)
    if mode == "round":
        return frac >= 0.5
    if mode == "trunc":
        return np.zeros_like(frac, bool)
    if mode == "floor":
        return neg & (frac > 0)
    if mode == "ceil":
        return ~neg & (frac > 0)
    if mode == "odd":
        return (frac > 0) & ~odd
    raise ValueError(mode)


def round_float(x, dtype, mode: str = "rint") -> np.ndarray:
    """Round exact float64 values to the float format `dtype` with IEEE semantics for `mode` (overflow included)."""
    dtype = np.dtype(dtype)
    p, emin, fmax = _FMT[dtype]
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        neg = np.signbit(x)
        ax = np.abs(x)
        _, e = np.frexp(ax)
        q = np.ldexp(1.0, np.maximum(e - 1, emin) - p + 1)
        s = ax / q
        lo = np.floor(s)
        r = (lo + _away(ax, s - lo, lo, neg, mode)) * q
        big = r > fmax
        to_inf = {"rint": True, "none": True, "round": True, "trunc": False, "odd": False}
        if mode in to_inf:
            ovf = np.full_like(r, np.inf if to_inf[mode] else fmax)
        else:  # floor: +max / -inf, ceil: +inf / -max
            ovf = np.where(neg, np.inf if mode == "floor" else fmax, fmax if mode == "floor" else np.inf)
        r = np.where(big, ovf, r)
        r = np.where(neg, -r, r)
        r = np.where(np.isfinite(x) & (x != 0), r, x)
    return r.astype(dtype)


def round_integral(x, mode: str) -> np.ndarray:
    """float64 values rounded to integral values with `mode` (NaN/Inf unchanged)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        neg = np.signbit(x)
        ax = np.abs(x)
        lo = np.floor(ax)
        r = lo + _away(ax, ax - lo, lo, neg, mode)
        r = np.where(neg, -r, r)
        return np.where(np.isfinite(x), r, x)


def to_int(x, dtype, mode: str = "rint") -> np.ndarray:
    """Saturating float64 -> integer conversion with `mode`; NaN -> 0."""
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    r = round_integral(np.nan_to_num(np.asarray(x, np.float64), nan=0.0), mode)
    out = np.empty(r.shape, dtype)
    hi, lo = r >= float(info.max), r <= float(info.min)
    mid = ~(hi | lo)
    out[hi], out[lo] = info.max, info.min
    out[mid] = r[mid].astype(dtype)
    return out


def f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality, treating every NaN of the same dtype as equal."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or a.dtype == BF16:
        na, nb = np.isnan(a.astype(np.float64)), np.isnan(b.astype(np.float64))
        if not np.array_equal(na, nb):
            return False
        w = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
        return np.array_equal(a.view(w)[~na], b.view(w)[~nb])
    return np.array_equal(a, b)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_same(got, want, what: str = "") -> None:
    """Bitwise equality (any NaN equals any NaN), with the first differing positions in the message."""
    if same_bits(got, want):
        return
    g, w = np.asarray(got).ravel(), np.asarray(want).ravel()
    if g.dtype != w.dtype or g.shape != w.shape:
        raise AssertionError(f"{what}: got {g.dtype}{g.shape}, want {w.dtype}{w.shape}")
    diff = _bits(g) != _bits(w)
    if g.dtype.kind == "f" or g.dtype == BF16:
        diff &= ~(np.isnan(f64(g)) & np.isnan(f64(w)))
    bad = np.flatnonzero(diff)
    i = bad[:8]
    raise AssertionError(f"{what}: {len(bad)} of {g.size} differ; at {i.tolist()}: got {g[i]!r} want {w[i]!r}")


def ulp_diff(got: np.ndarray, want: np.ndarray) -> int:
    """Largest distance in units in the last place between two float arrays of the same dtype (NaN==NaN)."""
    w = {2: np.int16, 4: np.int32}[got.dtype.itemsize]
    g, t = got.view(w).astype(np.int64), want.view(w).astype(np.int64)
    bias = 1 << (8 * got.dtype.itemsize - 1)
    g = np.where(g < 0, -bias - g, g)  # sign-magnitude -> monotone integers
    t = np.where(t < 0, -bias - t, t)
    both_nan = np.isnan(f64(got)) & np.isnan(f64(want))
    d = np.where(both_nan, 0, np.abs(g - t))
    return int(d.max()) if d.size else 0


def saturated(arch: int, want: np.ndarray) -> np.ndarray:
    """The expectation of a computed float result on the arch's part: in saturation mode (310P, 910; socs.py
    overflow_mode) NaN -> 0 and +-Inf -> +-MAX of the dtype (for float32 the twin's primary answer to an open question:
    run with undetermined="primary"); unchanged in Inf/NaN mode and for integers."""
    from lossgrad.socs import get_soc
    from _twin_common import SOCS
    w = np.asarray(want)
    if get_soc(SOCS[arch]).arch.overflow_mode.value != "saturation" or not (w.dtype.kind == "f" or w.dtype == BF16):
        return w
    x = f64(w)
    big = float(np.finfo(w.dtype).max) if w.dtype.kind == "f" else float(ml_dtypes.finfo(w.dtype).max)
    return np.where(np.isnan(x), 0.0, np.clip(x, -big, big)).astype(w.dtype)

