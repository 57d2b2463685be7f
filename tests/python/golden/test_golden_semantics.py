"""Hand-computed expectations for the golden model's semantics (no torch): sign rules, divisors under broadcasting,
beta = 0, KL's sum back to self's shape, empty and 0-d calls, dtypes, layouts and the float32 faithful mode."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import lossgrad.golden as golden
from lossgrad.errors import LossGradError
from lossgrad.validation import validate

f32 = np.float32
NAN, INF = np.nan, np.inf


def a32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def same(got: np.ndarray, expected) -> bool:
    exp = np.asarray(expected, dtype=np.float64)
    return got.shape == exp.shape and np.array_equal(got.astype(np.float64), exp, equal_nan=True)


# -- L1 ---------------------------------------------------------------------------------------------------------------

def test_l1_sign_is_zero_at_equality_and_nan() -> None:
    s = a32([1, 2, 3, NAN, 1, INF, INF])
    t = a32([2, 2, 1, 0, NAN, INF, -INF])
    got = golden.l1_loss_backward(a32(3.0), s, t, "sum")
    assert same(got, [-3, 0, 3, 0, 0, 0, 3])


def test_l1_nonfinite_grad_times_zero_sign_is_nan() -> None:
    got = golden.l1_loss_backward(a32([INF, NAN, INF]), a32([1, 1, 2]), a32([1, 1, 1]), "none")
    assert same(got, [NAN, NAN, INF])


def test_l1_mean_divides_by_the_broadcast_output() -> None:
    s = a32([[1], [-1]])                      # (2, 1)
    t = a32([0, 0, 0])                        # (3,)
    got = golden.l1_loss_backward(a32(1.0), s, t, "mean")
    assert same(got, np.float32([[1 / 6] * 3, [-1 / 6] * 3]))


# -- MSE --------------------------------------------------------------------------------------------------------------

def test_mse_mean_divides_by_numel_of_self_not_the_broadcast() -> None:
    s = a32([[1, 2, 3]])                      # (1, 3): numel 3
    t = a32([[0], [1]])                       # (2, 1) -> output (2, 3)
    got = golden.mse_loss_backward(a32(1.0), s, t, 1)
    assert same(got, np.float32([[2 / 3, 4 / 3, 2], [0, 2 / 3, 4 / 3]]))


def test_mse_sum_and_none_use_two() -> None:
    assert same(golden.mse_loss_backward(a32([1, 2]), a32([3, 3]), a32([1, 4]), "sum"), [4, -4])
    assert same(golden.mse_loss_backward(a32([1, 2]), a32([3, 3]), a32([1, 4]), 0), [4, -4])


# -- SmoothL1 ---------------------------------------------------------------------------------------------------------

X = [-2, -1, -0.5, -0.25, 0, 0.25, 0.5, 1, 2, NAN, INF, -INF]


@pytest.mark.parametrize("beta, expected", [
    (1.0, [-1, -1, -0.5, -0.25, 0, 0.25, 0.5, 1, 1, NAN, 1, -1]),
    (0.5, [-1, -1, -1, -0.5, 0, 0.5, 1, 1, 1, NAN, 1, -1]),
    (0.0, [-1, -1, -1, -1, 0, 1, 1, 1, 1, 0, 1, -1]),       # exactly L1's sign: 0 at 0 and at NaN
])
def test_smooth_l1_function(beta: float, expected: list[float]) -> None:
    got = golden.smooth_l1_loss_backward(a32(1.0), a32(X), a32(np.zeros(len(X))), "sum", beta)
    assert same(got, expected)


def test_smooth_l1_beta_zero_keeps_its_own_mean_divisor() -> None:
    s = a32([[3], [-3]])                      # (2, 1): numel 2, output (2, 2)
    got = golden.smooth_l1_loss_backward(a32(1.0), s, a32([0, 0]), "mean", beta=0.0)
    assert same(got, [[0.5, 0.5], [-0.5, -0.5]])
    l1 = golden.l1_loss_backward(a32(1.0), s, a32([0, 0]), "mean")
    assert same(l1, [[0.25, 0.25], [-0.25, -0.25]])


def test_smooth_l1_tiny_subnormal_beta_in_float32_mode() -> None:
    beta = float(f32(1e-40))                  # 1/beta overflows float32
    x = a32([beta / 2, -beta, 2 * beta, 0])
    got = golden.smooth_l1_loss_backward(a32(1.0), x, a32(np.zeros(4)), "sum", beta, compute="float32")
    assert np.allclose(got[:2].astype(np.float64), [0.5, -1.0], rtol=1e-2)
    assert same(got[2:], [1, 0])


# -- KL ---------------------------------------------------------------------------------------------------------------

T23 = a32([[1, 2, 3], [4, 5, 6]])


@pytest.mark.parametrize("reduction, expected", [
    ("sum", [[-6], [-15]]), ("none", [[-6], [-15]]), ("mean", [[-1], [-2.5]]), ("batchmean", [[-3], [-7.5]]),
    (7, [[-6], [-15]]),                       # out-of-range integers mean none for KL
])
def test_kl_sums_contributions_back_to_self(reduction, expected) -> None:
    got = golden.kl_div_backward(a32(1.0), a32([[0], [0]]), T23, reduction)
    assert same(got, expected)


def test_kl_batchmean_divides_by_dim0_of_the_broadcast() -> None:
    got = golden.kl_div_backward(a32(1.0), a32([[9, 9, 9]]), T23, "batchmean")   # self (1, 3), broadcast (2, 3)
    assert same(got, [[-2.5, -3.5, -4.5]])


def test_kl_self_values_never_enter_and_log_target_exponentiates() -> None:
    got = golden.kl_div_backward(a32([1, 2]), a32([NAN, INF]), a32([0, 1]), "sum", log_target=True)
    assert same(got, np.float32([-1, -2 * np.e]))
    got = golden.kl_div_backward(a32([INF, 1]), a32([1, 1]), a32([0, -INF]), "sum", log_target=False)
    assert same(got, [NAN, INF])              # -0 * Inf is NaN; target -Inf with log_target False is -(-Inf)


def test_kl_empty_target_broadcast_gives_zeros_of_self() -> None:
    got = golden.kl_div_backward(a32(1.0), a32(np.ones((2, 1))), np.zeros((0, 2, 3), np.float32), "sum")
    assert same(got, np.zeros((2, 1)))
    with pytest.raises(LossGradError) as err:
        golden.kl_div_backward(a32(1.0), a32(np.ones((2, 1))), np.zeros((0, 2, 3), np.float32), "mean")
    assert err.value.code == 561002


# -- shapes, dtypes, layouts --------------------------------------------------------------------------------------

def test_empty_inputs_give_empty_outputs() -> None:
    got = golden.l1_loss_backward(a32(1.0), np.zeros((2, 0), np.float16), np.zeros((1,), np.float16), "mean")
    assert got.shape == (2, 0) and got.dtype == np.float32
    got = golden.kl_div_backward(np.zeros(0, np.float16), np.zeros(0, np.float16), np.zeros(0, np.float16), "mean")
    assert got.shape == (0,) and got.dtype == np.float16


def test_zero_d_inputs_give_a_zero_d_output() -> None:
    got = golden.mse_loss_backward(a32(2.0), a32(3.0), a32(1.0), "mean")
    assert got.shape == () and got == 8.0


def test_rank_eight() -> None:
    shape = (2, 1, 2, 1, 2, 1, 2, 1)
    s = np.arange(16, dtype=np.float32).reshape(shape)
    got = golden.mse_loss_backward(a32(1.0), s, np.zeros(shape, np.float32), "sum")
    assert same(got, 2 * s)


def test_default_and_explicit_output_dtypes() -> None:
    h = np.ones(2, np.float16)
    b = np.ones(2, ml_dtypes.bfloat16)
    assert golden.l1_loss_backward(h, b, h).dtype == np.float32            # f16 + bf16 promote to f32
    assert golden.smooth_l1_loss_backward(h, h, b).dtype == np.float32
    assert golden.l1_loss_backward(h, h, h).dtype == np.float16
    assert golden.mse_loss_backward(b, b, b).dtype == ml_dtypes.bfloat16
    assert golden.kl_div_backward(h, b, h).dtype == ml_dtypes.bfloat16     # KL's output defaults to self's dtype
    assert golden.l1_loss_backward(h, h, h, out_dtype="bfloat16").dtype == ml_dtypes.bfloat16
    assert golden.mse_loss_backward(h, h, h, out_dtype=np.float32).dtype == np.float32


def test_output_rounds_once_to_the_output_dtype() -> None:
    # 2 * ((1 + 2^-8) - (-2^-30)) = 2 + 2^-7 + 2^-29 lies just above the bf16 tie 2 + 2^-7, so it rounds up to
    # 2 + 2^-6. Through float32 it would first become the tie itself and then round to even (2).
    got = golden.mse_loss_backward(a32(1.0), a32(1 + 2.0 ** -8), a32(-(2.0 ** -30)), "sum", out_dtype="bfloat16")
    assert float(got) == 2 + 2.0 ** -6


def test_layouts_do_not_change_the_result() -> None:
    rng = np.random.default_rng(3)
    s = rng.uniform(-5, 5, (4, 6)).astype(np.float32)
    t = rng.uniform(-5, 5, (4, 6)).astype(np.float32)
    g = rng.uniform(-5, 5, (4, 1)).astype(np.float32)
    base = golden.smooth_l1_loss_backward(np.broadcast_to(g, (4, 6)).copy(), s, t, "none", 0.5)
    views = (np.asfortranarray(s), np.flip(np.flip(s).copy()), np.pad(s, ((0, 0), (0, 6)))[:, :6])
    for view in views:
        assert np.array_equal(golden.smooth_l1_loss_backward(np.broadcast_to(g, (4, 6)), view, t, "none", 0.5), base)


def test_integer_input_is_promoted_for_l1() -> None:
    got = golden.l1_loss_backward(np.array([2, -3], np.int32), a32([1, 1]), a32([0, 0]), "none")
    assert got.dtype == np.float32 and same(got, [2, -3])


def test_compute_call_and_bad_mode() -> None:
    call = validate("mse_loss_backward", a32(1.0), a32([1, 2]), a32([0, 0]), "sum")
    assert same(golden.compute_call(call), [2, 4])
    assert same(golden.compute_call(call, "float32"), [2, 4])
    with pytest.raises(ValueError, match="compute"):
        golden.compute_call(call, "float16")
    with pytest.raises(ValueError, match="compute"):
        golden.mse_loss_backward(a32(1.0), a32(1.0), a32(1.0), compute="fp64")


def test_golden_validates_like_aclnn() -> None:
    with pytest.raises(LossGradError) as err:
        golden.mse_loss_backward(a32(1.0), a32([1.0]), np.ones(1, np.float16))
    assert err.value.code == 161002
    with pytest.raises(LossGradError) as err:
        golden.kl_div_backward(None, a32(1.0), a32(1.0))
    assert err.value.code == 161001


# -- float32 faithful mode ----------------------------------------------------------------------------------------

def test_float32_mode_overflows_like_the_kernels() -> None:
    s, t = a32([3e38, 3e38]), a32([-3e38, -3e38])
    g = a32([1e-10, 0.0])
    ref = golden.mse_loss_backward(g, s, t, "sum")
    assert np.isclose(float(ref[0]), 1.2e29, rtol=1e-6) and ref[1] == 0
    faithful = golden.mse_loss_backward(g, s, t, "sum", compute="float32")
    assert faithful[0] == np.inf and np.isnan(faithful[1])          # (s - t) is Inf in float32
    ref = golden.kl_div_backward(a32(1e-30), a32(0.0), a32(100.0), "sum", log_target=True)
    assert np.isclose(float(ref), -np.exp(100.0) * float(f32(1e-30)), rtol=1e-6)
    assert golden.kl_div_backward(a32(1e-30), a32(0.0), a32(100.0), "sum", True, compute="float32") == -np.inf


def test_float32_mode_follows_the_kernel_operation_order() -> None:
    s = a32([1 + 2.0 ** -23, 1.7, -2.3])
    t = a32([0.0, 0.3, 0.1])
    g = a32([3.0, 1.1, 0.7])
    c = f32(2.0 / 3.0)                        # MSE mean over self's 3 elements, held as one float32
    expected = ((s - t) * c) * g              # Sub -> Muls(cof) -> Mul(dout), each rounded to float32
    assert np.array_equal(golden.mse_loss_backward(g, s, t, "mean", compute="float32"), expected)
    beta = f32(0.7)
    inv = f32(1.0 / float(beta))
    x = s - t
    lin = np.where(np.abs(x) > beta, f32(0), x * inv)
    sl1 = ((np.where(x > beta, f32(1), f32(0)) + np.where(x < -beta, f32(-1), f32(0)) + lin) * g) * f32(1 / 3)
    assert np.array_equal(golden.smooth_l1_loss_backward(g, s, t, "mean", 0.7, compute="float32"), sl1)
    kl = (np.exp(t.astype(np.float64)).astype(np.float32) * g) * -f32(1 / 3)  # exp: float64, rounded once
    assert np.array_equal(golden.kl_div_backward(g, s, t, "mean", True, compute="float32"), kl)
