"""The golden's single float64 -> fp32/fp16/bf16 rounding against two independent references: exact rational
arithmetic (Fraction) on hand-picked ties, and the frexp/rint reference on a large random sweep."""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from golden_oracle import rne_round  # noqa: E402

from lossgrad.dtypes import DType  # noqa: E402
from lossgrad.golden import round_to  # noqa: E402

# precision bits, exponent of the smallest normal (IEEE convention), largest finite value
FORMATS = {
    "float32": (24, -126, (2 - Fraction(1, 2 ** 23)) * 2 ** 127),
    "float16": (11, -14, Fraction(65504)),
    "bfloat16": (8, -126, (2 - Fraction(1, 2 ** 7)) * 2 ** 127),
}
LABEL_TO_DTYPE = {"float32": DType.FLOAT32, "float16": DType.FLOAT16, "bfloat16": DType.BFLOAT16}


def exact_rne(v: Fraction, label: str) -> float:
    """Round a rational to the format, half to even, by exact arithmetic."""
    p, e_min, max_finite = FORMATS[label]
    if v == 0:
        return 0.0
    mag = abs(v)
    e = 0
    while mag >= 2 ** (e + 1):
        e += 1
    while mag < 2 ** e:
        e -= 1                            # now 2^e <= mag < 2^(e+1)
    ulp = Fraction(2) ** (max(e, e_min) - (p - 1))
    q, r = divmod(mag, ulp)
    if r > ulp / 2 or (r == ulp / 2 and q % 2 == 1):
        q += 1
    result = q * ulp
    if result > max_finite:
        return float("inf") if v > 0 else float("-inf")
    return float(result) if v > 0 else -float(result)


def _f(x: Fraction) -> float:
    out = float(x)
    assert Fraction(out) == x, "test value must be exact in float64"
    return out


def _tie_values(label: str) -> list[float]:
    p, e_min, max_finite = FORMATS[label]
    half = Fraction(1, 2 ** p)          # half an ulp at 1.0
    sub = Fraction(2) ** (e_min - (p - 1))  # smallest subnormal
    tiny = Fraction(1, 2 ** 20)         # a perturbation relative to the ulp in question, still exact in float64
    near_one = Fraction(1, 2 ** 50)
    ulp_max = Fraction(2) ** (127 - (p - 1)) if label != "float16" else Fraction(32)
    vals = [1 + half, 1 + half + near_one, 1 + half - near_one, 1 + 3 * half, 1 + 3 * half - near_one,
            sub / 2, sub / 2 + sub * tiny, 3 * sub / 2, 5 * sub / 2, sub / 2 - sub * tiny,
            max_finite + ulp_max / 2, max_finite + ulp_max / 2 - ulp_max * tiny, max_finite + ulp_max / 4,
            Fraction(2) ** (e_min) - sub / 2, Fraction(2) ** e_min - sub / 4]
    return [_f(v) for v in vals] + [-_f(v) for v in vals]


@pytest.mark.parametrize("label", FORMATS)
def test_ties_and_boundaries_match_exact_arithmetic(label: str) -> None:
    values = np.array(_tie_values(label))
    got = round_to(values, LABEL_TO_DTYPE[label]).astype(np.float64)
    expected = np.array([exact_rne(Fraction(v), label) for v in values])
    assert np.array_equal(got, expected), list(zip(values, got, expected))


@pytest.mark.parametrize("label", FORMATS)
def test_random_sweep_matches_independent_rounding(label: str) -> None:
    rng = np.random.default_rng(7)
    # values of the target format nudged by fractions of an ulp around every rounding boundary, across the range
    p, e_min, _ = FORMATS[label]
    exps = rng.integers(e_min - p - 2, 129 if label != "float16" else 17, size=200_000)
    mant = rng.integers(2 ** (p - 1), 2 ** p, size=exps.size).astype(np.float64)
    offs = rng.choice([0.5, 0.5, 0.25, 0.75, 0.5 + 2.0 ** -30, 0.5 - 2.0 ** -30, rng.random()], size=exps.size)
    values = np.ldexp(mant + offs, exps - (p - 1)) * rng.choice([-1.0, 1.0], size=exps.size)
    got = round_to(values, LABEL_TO_DTYPE[label])
    ref = rne_round(values, label)
    assert got.dtype == ref.dtype
    assert np.array_equal(got.view(np.uint16 if got.itemsize == 2 else np.uint32),
                          ref.view(np.uint16 if ref.itemsize == 2 else np.uint32))


def test_specials_pass_through() -> None:
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
    for dtype in LABEL_TO_DTYPE.values():
        got = round_to(values, dtype).astype(np.float64)
        assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf
        assert got[3] == 0 and not np.signbit(got[3]) and got[4] == 0 and np.signbit(got[4])


def test_zero_d_stays_zero_d() -> None:
    assert round_to(np.array(1.5), DType.BFLOAT16).shape == ()


def test_numpy_float64_to_float16_is_correctly_rounded() -> None:
    """The claim that NumPy's direct float64 -> float16 cast rounds once (the golden does not rely on it)."""
    values = np.array(_tie_values("float16"))
    expected = np.array([exact_rne(Fraction(v), "float16") for v in values])
    with np.errstate(over="ignore"):
        direct = values.astype(np.float16).astype(np.float64)
    assert np.array_equal(direct, expected)


def test_float64_to_bfloat16_needs_the_single_rounding_path() -> None:
    """1 + 2^-8 + 2^-40 lies just above a bf16 tie: correct rounding goes up; a float32 detour rounds to the tie and
    then to even (down). This is why the golden does not cast float64 to bf16 through float32."""
    v = np.array([1 + 2.0 ** -8 + 2.0 ** -40])
    assert round_to(v, DType.BFLOAT16).astype(np.float64)[0] == 1 + 2.0 ** -7
    assert v.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)[0] == 1.0
