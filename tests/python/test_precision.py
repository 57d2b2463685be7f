"""CANN precision standards (ops_semantics §6) on inputs whose metrics are computed by hand."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from lossgrad.dtypes import DType
from lossgrad.precision import compare

GOLDEN = np.array([1.0, 2.0, 4.0, 0.0])
ACTUAL = np.array([1.0, 2.002, 4.0, 0.0])
REL = 0.002 / (2.0 + 1e-7)                      # the only non-zero relative error


def test_hand_computed_metrics_fp16_pass() -> None:
    r = compare(ACTUAL, GOLDEN, "float16")
    assert r.threshold == 2.0 ** -10
    assert math.isclose(r.mere, REL / 4) and math.isclose(r.mare, REL)
    assert r.mixed_ratio == 1.0 and math.isclose(r.max_abs_err, 0.002, rel_tol=1e-9)
    assert r.count == 4 and r.special_mismatches == 0
    assert r.passed and r.passed_experimental and r.passed_mixed
    assert r.describe().startswith("PASS")


def test_hand_computed_metrics_fp32_fail() -> None:
    r = compare(ACTUAL, GOLDEN, DType.FLOAT32)
    assert r.threshold == 2.0 ** -13
    assert r.mere > r.threshold and not r.passed_experimental          # 2.5e-4 > 1.22e-4
    assert r.mixed_ratio == 0.75 and not r.passed_mixed                # 0.002 > T * (1 + 2)
    r_mixed = compare(ACTUAL, GOLDEN, "fp32", standard="mixed")
    assert not r_mixed.passed and r_mixed.standard == "mixed"
    assert "FAIL" in r.describe() and "MERE" in r.describe()


def test_zero_golden_uses_the_1e7_guard() -> None:
    r = compare(np.array([1e-7]), np.array([0.0]), "float32")
    assert math.isclose(r.mare, 1.0) and not r.passed


@pytest.mark.parametrize("label, threshold", [("float32", 2.0 ** -13), ("float16", 2.0 ** -10),
                                              ("bfloat16", 2.0 ** -7), ("bf16", 2.0 ** -7),
                                              (DType.BFLOAT16, 2.0 ** -7)])
def test_thresholds(label, threshold) -> None:
    assert compare(np.ones(1), np.ones(1), label).threshold == threshold


def test_mare_bound_is_ten_thresholds_bf16() -> None:
    golden = np.ones(100)
    ok = golden.copy()
    ok[0] = 1.07                                   # rel 0.07 < 10 * 2^-7 = 0.078; MERE 7e-4 < 2^-7
    assert compare(ok, golden, "bfloat16").passed
    bad = golden.copy()
    bad[0] = 1.08                                  # rel 0.08 > 0.078
    assert not compare(bad, golden, "bfloat16").passed


def test_mixed_ratio_and_cap_fp16() -> None:
    golden = np.ones(100)
    one_off = golden.copy()
    one_off[0] = 1.05                              # beyond T(1 + |g|) but under the 0.1 cap: 99 % match
    r = compare(one_off, golden, "float16", "mixed")
    assert r.mixed_ratio == 0.99 and r.passed
    two_off = one_off.copy()
    two_off[1] = 1.05
    assert not compare(two_off, golden, "float16", "mixed").passed     # 98 %
    capped = golden.copy()
    capped[0] = 1.2
    r = compare(capped, golden, "float16", "mixed")
    assert r.mixed_ratio == 0.99 and math.isclose(r.max_abs_err, 0.2, rel_tol=1e-9) and not r.passed


@pytest.mark.parametrize("standard", ["experimental", "mixed"])
@pytest.mark.parametrize("actual, golden, mismatches", [
    ([1.0, 1.0], [np.nan, 1.0], 1),
    ([np.nan, 1.0], [1.0, 1.0], 1),
    ([-np.inf], [np.inf], 1),
    ([np.inf], [np.nan], 1),
    ([1e30], [np.inf], 1),
    ([np.nan, np.inf, -np.inf, 1.0], [np.nan, np.inf, -np.inf, 1.0], 0),
])
def test_nan_inf_positions_must_match(actual, golden, mismatches, standard) -> None:
    r = compare(np.array(actual), np.array(golden), "float32", standard)
    assert r.special_mismatches == mismatches
    assert r.passed == (mismatches == 0)


def test_metrics_skip_nonfinite_golden_and_count_nonfinite_actual_as_infinite() -> None:
    r = compare(np.array([np.nan, 2.0]), np.array([np.nan, 2.0]), "float16")
    assert r.count == 1 and r.mere == 0 and r.passed
    r = compare(np.array([np.inf, 2.0]), np.array([1.0, 2.0]), "float16")
    assert r.mare == math.inf and r.max_abs_err == math.inf and not r.passed


def test_empty_arrays_pass_with_zero_metrics() -> None:
    r = compare(np.zeros((0, 3)), np.zeros((0, 3)), "float16")
    assert r.passed and r.mere == 0 and r.mare == 0 and r.mixed_ratio == 1.0 and r.count == 0


def test_accepts_low_precision_arrays() -> None:
    g = np.array([1.0, 2.0], dtype=ml_dtypes.bfloat16)
    assert compare(g, g, "bfloat16").passed
    assert compare(np.float16([1, 2]), np.float32([1, 2]), "float16").passed


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="standard"):
        compare(np.ones(1), np.ones(1), "float32", "commercial")
    with pytest.raises(ValueError, match="dtype"):
        compare(np.ones(1), np.ones(1), "int32")
    with pytest.raises(ValueError, match="shape"):
        compare(np.ones(2), np.ones(3), "float32")


def test_slack_takes_only_the_summation_allowance() -> None:
    golden = np.array([1.0, 2.0, 3.0, 0.0], np.float32)
    slack = np.array([1e-3, 1e-3, 0.0, np.inf])
    within = np.array([1.0005, 2.0, 3.0, np.nan], np.float32)  # the first within its allowance, the last unjudged
    c = compare(within, golden, "float32", slack=slack)
    assert c.passed and c.count == 3 and c.order_dependent == 1 and c.within_slack == 1
    assert c.raw_max_abs_err > 4e-4 and c.mere == 0 and "within the float32-sum allowance" in c.describe()
    beyond = np.array([1.01, 2.0, 3.0, 0.0], np.float32)  # 1e-2 off where 1e-3 is allowed: judged on the rest
    c = compare(beyond, golden, "float32", slack=slack)
    assert not c.passed and abs(c.max_abs_err - (0.01 - 1e-3)) < 1e-6
    nan = np.array([np.nan, 2.0, 3.0, 0.0], np.float32)  # an allowance never covers a NaN where the sum is finite
    assert not compare(nan, golden, "float32", slack=slack).passed
