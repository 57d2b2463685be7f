"""CANN's precision standards for comparing a result with the golden (ops_semantics §6).

- "experimental" (the ecosystem standard for new contributions): relative error |a - g| / (|g| + 1e-7) over the
  elements; MERE = its mean, MARE = its max; pass iff MERE < T and MARE < 10 T.
- "mixed" (mixed-tolerance standard): an element matches when |a - g| <= T + T |g|; pass iff at least 99 % of the
  elements match and the largest absolute error is <= the dtype's cap.

T is 2^-13 (float32), 2^-10 (float16), 2^-7 (bfloat16). Under both standards NaN and +/-Inf must sit at the same
positions (with the same Inf sign) as in the golden; the metrics are taken over the positions where the golden is
finite (an actual NaN/Inf there counts as an infinite error). Both metric sets are always computed; `passed` follows
the requested standard.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import dtypes as dt
from .dtypes import DType

STANDARDS = ("experimental", "mixed")

THRESHOLDS: dict[DType, float] = {DType.FLOAT32: 2.0 ** -13, DType.FLOAT16: 2.0 ** -10, DType.BFLOAT16: 2.0 ** -7}
MAX_ABS_CAPS: dict[DType, float] = {DType.FLOAT32: 1e-2, DType.FLOAT16: 1e-1, DType.BFLOAT16: 1e-1}
# Small-value region of CANN's commercial standard (ops_semantics §6): where |golden| is below the bound, relative
# error means nothing (float16/bfloat16 subnormals, one rounding step apart); such elements are judged by absolute
# error against the threshold instead. Opt-in (`small_values=True`); `lossgrad verify` applies it.
SMALL_VALUE_BOUND: dict[DType, float] = {DType.FLOAT32: 2.0 ** -14, DType.FLOAT16: 2.0 ** -11,
                                         DType.BFLOAT16: 2.0 ** -8}
SMALL_VALUE_ERROR: dict[DType, float] = {DType.FLOAT32: 2.0 ** -30, DType.FLOAT16: 2.0 ** -16,
                                         DType.BFLOAT16: 2.0 ** -16}
MARE_FACTOR = 10.0
MIXED_MIN_RATIO = 0.99
REL_EPS = 1e-7  # the standard's denominator guard, |g| + 1e-7


@dataclass(frozen=True)
class Comparison:
    standard: str
    dtype: DType
    count: int                # elements compared
    mere: float
    mare: float
    threshold: float
    mixed_ratio: float        # fraction of finite-golden elements within atol + rtol |g|
    max_abs_err: float
    max_abs_cap: float
    special_mismatches: int   # positions where NaN/Inf (or the Inf sign) differ
    small_values: int         # elements judged in the small-value region (0 unless small_values=True)
    small_value_failures: int
    passed_experimental: bool
    passed_mixed: bool
    passed: bool              # the verdict of `standard`
    order_dependent: int = 0  # elements left unjudged: their float32 sum may overflow either way (slack Inf)
    within_slack: int = 0     # elements whose error the float32-summation allowance took (slack), and the largest
    raw_max_abs_err: float = 0.0  # error before it

    def describe(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (f"{verdict} [{self.standard}, {self.dtype.label}, n={self.count}] MERE={self.mere:.3g} "
                f"MARE={self.mare:.3g} (T={self.threshold:.3g}, MARE<{MARE_FACTOR * self.threshold:.3g}); "
                f"mixed {self.mixed_ratio:.2%} max|err|={self.max_abs_err:.3g} (cap {self.max_abs_cap:g}); "
                f"NaN/Inf mismatches={self.special_mismatches}"
                + (f"; small-value region {self.small_values} (failures {self.small_value_failures})"
                   if self.small_values else "")
                + (f"; {self.order_dependent} order-dependent (not judged)" if self.order_dependent else "")
                + (f"; {self.within_slack} within the float32-sum allowance (raw max|err|={self.raw_max_abs_err:.3g})"
                   if self.within_slack else ""))


def _as_f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def _special_mismatches(a: np.ndarray, g: np.ndarray) -> int:
    special = ~np.isfinite(a) | ~np.isfinite(g)
    same = (np.isnan(a) & np.isnan(g)) | (a == g)  # Inf equals only the same-signed Inf
    return int(np.count_nonzero(special & ~same))


def compare(actual: np.ndarray, golden: np.ndarray, dtype: "DType | str", standard: str = "experimental",
            threshold_scale: float = 1.0, small_values: bool = False, slack: np.ndarray | None = None
            ) -> Comparison:
    """Compare `actual` with `golden` (same shape) under CANN's standard for the output dtype. `threshold_scale`
    multiplies T (a per-case tolerance, as case tables allow); 1.0 is the standard itself. `small_values` judges
    elements with |golden| below SMALL_VALUE_BOUND by absolute error (SMALL_VALUE_ERROR) and leaves them out of the
    relative metrics. `slack` (golden.sum_slack, for outputs that are float32 sums): per element, the part of the
    error any float32 summation order may make, which the standard then judges only beyond; an Inf slack leaves
    the element unjudged (order_dependent)."""
    if standard not in STANDARDS:
        raise ValueError(f"standard: expected one of {', '.join(STANDARDS)}, got {standard!r}")
    d = dt.parse(dtype)
    if d not in THRESHOLDS:
        raise ValueError(f"dtype: no precision standard for {d.label}; known: {', '.join(x.label for x in THRESHOLDS)}")
    a, g = _as_f64(actual), _as_f64(golden)
    if a.shape != g.shape:
        raise ValueError(f"shape mismatch: actual {a.shape} vs golden {g.shape}")
    if not threshold_scale > 0:
        raise ValueError(f"threshold_scale must be positive, got {threshold_scale!r}")
    t, cap = THRESHOLDS[d] * threshold_scale, MAX_ABS_CAPS[d] * threshold_scale
    free = np.zeros(a.shape, dtype=np.float64) if slack is None else np.broadcast_to(_as_f64(slack), a.shape)
    judged = np.isfinite(free)
    a, g, free = a[judged], g[judged], free[judged]
    specials = _special_mismatches(a, g)
    finite = np.isfinite(g)
    ga, aa = g[finite], a[finite]
    with np.errstate(invalid="ignore", over="ignore"):
        raw = np.where(np.isfinite(aa), np.abs(aa - ga), np.inf)
    err = np.maximum(raw - free[finite], 0.0)
    taken = int(np.count_nonzero((raw > 0) & (err == 0)))
    n = int(ga.size)
    small = np.abs(ga) < SMALL_VALUE_BOUND[d] if small_values else np.zeros(n, dtype=bool)
    small_fail = int(np.count_nonzero(err[small] > SMALL_VALUE_ERROR[d]))
    rel = err[~small] / (np.abs(ga[~small]) + REL_EPS)
    mere = float(rel.mean()) if rel.size else 0.0
    mare = float(rel.max()) if rel.size else 0.0
    max_abs = float(err.max()) if n else 0.0
    ratio = float(np.count_nonzero(err <= t + t * np.abs(ga)) / n) if n else 1.0
    ok_exp = specials == 0 and small_fail == 0 and mere < t and mare < MARE_FACTOR * t
    ok_mixed = specials == 0 and ratio >= MIXED_MIN_RATIO and max_abs <= cap
    return Comparison(standard=standard, dtype=d, count=n, mere=mere, mare=mare, threshold=t, mixed_ratio=ratio,
                      max_abs_err=max_abs, max_abs_cap=cap, special_mismatches=specials,
                      small_values=int(np.count_nonzero(small)), small_value_failures=small_fail,
                      passed_experimental=bool(ok_exp), passed_mixed=bool(ok_mixed),
                      passed=bool(ok_exp if standard == "experimental" else ok_mixed),
                      order_dependent=int(judged.size - np.count_nonzero(judged)), within_slack=taken,
                      raw_max_abs_err=float(raw.max()) if n else 0.0)
