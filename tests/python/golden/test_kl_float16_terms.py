"""aclnnKlDivBackward's all-float16 path: every term is float16 before the sum (docs/semantics.md, "Rounding").

aclnn keeps all-float16 inputs in float16: its kernel writes each term -c * T * g (computed in float32) as float16,
so a term beyond +-65504 is +-Inf, and ReduceSum sums the float16 terms in float32 and rounds once to float16
(ops-nn loss/kl_div_loss_grad/op_api/aclnn_kl_div_backward.cpp, op_kernel/arch35/kl_div_loss_grad_dag.h; ops-math
math/reduce_sum). Any other dtype mix is cast to float32 first. The golden's float32 mode and the kernels (twin)
must both follow that; the float64 mode stays exact math rounded once.
"""
from __future__ import annotations

import numpy as np
import pytest

import lossgrad
import lossgrad.golden as golden
from lossgrad.registry import get_op

KL_DIV_BACKWARD = get_op("kl_div")
from lossgrad.precision import compare
from lossgrad.socs import VERIFY_DEFAULT_SOCS, get_soc
from lossgrad.dtypes import DType

f16 = np.float16
FP16_SOCS = [s for s in VERIFY_DEFAULT_SOCS if DType.FLOAT16 in KL_DIV_BACKWARD.supported_dtypes(
    get_soc(s).arch.npu_arch)]


def _nan_case() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # exp(10) * 5 = 110132 > 65504: the terms are +Inf and -Inf in float16, so their sum is NaN
    return np.array([5, -5], f16), np.array([0.0], f16), np.array([10, 10], f16)


def _specials(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = x.astype(np.float64)
    return np.isnan(x), np.isposinf(x), np.isneginf(x)


def _same_specials(a: np.ndarray, b: np.ndarray) -> bool:
    return all(np.array_equal(p, q) for p, q in zip(_specials(a), _specials(b)))


def test_overflowing_float16_terms_sum_to_nan_in_the_float32_mode() -> None:
    g, s, t = _nan_case()
    got = golden.kl_div_backward(g, s, t, "none", True, compute="float32")
    assert got.dtype == f16 and got.shape == (1,) and np.isnan(got[0])
    # the exact reference: the two terms cancel
    assert golden.kl_div_backward(g, s, t, "none", True)[0] == 0
    # float32 out keeps the float16 result (aclnn Casts the float16 ReduceSum output)
    assert np.isnan(golden.kl_div_backward(g, s, t, "none", True, out_dtype="float32", compute="float32")[0])


def test_a_float32_input_takes_the_float32_path() -> None:
    g, s, t = _nan_case()
    # grad in float32: aclnn casts everything to float32, where 110132 is finite and the terms cancel
    got = golden.kl_div_backward(g.astype(np.float32), s, t, "none", True, compute="float32")
    assert got.dtype == f16 and got[0] == 0


def test_a_single_overflowing_term_is_inf_even_with_a_float32_output() -> None:
    # no sum (self not broadcast): the term is written as float16 (Inf), then cast to float32
    g, s, t = np.array([2.0], f16), np.array([0.0], f16), np.array([40000.0], f16)
    got = golden.kl_div_backward(g, s, t, "none", False, out_dtype="float32", compute="float32")
    assert got.dtype == np.float32 and got[0] == -np.inf
    assert golden.kl_div_backward(g, s, t, "none", False, out_dtype="float32")[0] == -80000.0


def _cancelling_case() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # terms -(999.5 * (1 + 2^-10)) = -1000.476 (float16: -1000.5) and -(1000 * -1) = +1000: the float16 terms sum to
    # -0.5, the exact sum is -0.476
    return np.array([1 + 2.0 ** -10, -1.0], f16), np.array([0.0], f16), np.array([999.5, 1000.0], f16)


def test_cancelling_sum_of_float16_terms_differs_from_one_rounding() -> None:
    g, s, t = _cancelling_case()
    assert golden.kl_div_backward(g, s, t, "sum", False, compute="float32")[0] == -0.5
    exact = -(999.5 * (1 + 2.0 ** -10) - 1000.0)
    assert golden.kl_div_backward(g, s, t, "sum", False)[0] == f16(exact) != -0.5
    # a bfloat16 or float32 input anywhere: float32 terms, one rounding of their sum
    assert golden.kl_div_backward(g, s.astype(np.float32), t, "sum", False, compute="float32")[0] == f16(exact)


@pytest.mark.parametrize("soc", FP16_SOCS)
def test_kernel_gives_nan_for_overflowing_float16_terms(soc: str) -> None:
    assert len(FP16_SOCS) == len(VERIFY_DEFAULT_SOCS)  # KL accepts float16 on every default SoC
    g, s, t = _nan_case()
    got = lossgrad.kl_div_backward(g, s, t, "none", True, soc=soc, backend="twin")
    if get_soc(soc).arch.overflow_mode.value == "saturation":
        # 310P/910 saturate: the float16 terms are -+65504, not -+Inf, and they cancel (docs/semantics.md)
        assert got.dtype == f16 and got.shape == (1,) and got[0] == 0
        assert golden.kl_div_backward(g, s, t, "none", True, soc=soc, compute="float32")[0] == 0
    else:
        assert got.dtype == f16 and got.shape == (1,) and np.isnan(got[0])
    g2, s2, t2 = _cancelling_case()
    got2 = lossgrad.kl_div_backward(g2, s2, t2, "sum", False, soc=soc, backend="twin")
    assert got2[0] == -0.5


def _sweep(seed: int) -> list[tuple[str, tuple, dict]]:
    """Large-magnitude float16 cases: terms near and beyond 65504, both signs, through every KL kernel path."""
    rng = np.random.default_rng(seed)

    def grad(shape: tuple[int, ...]) -> np.ndarray:
        return (rng.choice([-1.0, 1.0], shape) * rng.uniform(0.25, 4.0, shape)).astype(f16)

    cases = []
    # self (1, 37) against (50, 37): the output keeps the inner dim; log_target: exp(target) up to 1.6e5
    t = rng.uniform(7.0, 12.0, (50, 37)).astype(f16)
    for red in ("none", "sum", "mean"):
        cases.append((f"rows-{red}", (grad((50, 37)), np.zeros((1, 37), f16), t, red, True), {}))
    # self (40, 1) against (40, 33): the output drops the inner dim
    t = (rng.choice([-1.0, 1.0], (40, 33)) * rng.uniform(2e4, 6e4, (40, 33))).astype(f16)
    cases.append(("cols-none", (grad((40, 33)), np.zeros((40, 1), f16), t, "none", False), {}))
    cases.append(("cols-batchmean", (grad((40, 33)), np.zeros((40, 1), f16), t, "batchmean", False), {}))
    # no sum, float32 and bfloat16 outputs: the term is still float16 first
    t = rng.uniform(9.0, 12.0, (16, 40)).astype(f16)
    for out in ("float32", "bfloat16"):
        cases.append((f"flat-{out}", (grad((16, 40)), np.zeros((16, 40), f16), t, "none", True), {"out_dtype": out}))
    return cases


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend310P3"])
def test_kernel_and_float32_golden_agree_on_overflow_positions(soc: str) -> None:
    specials = 0
    for name, (g, s, t, red, log_t), kw in _sweep(7):
        if kw.get("out_dtype") == "bfloat16" and DType.BFLOAT16 not in KL_DIV_BACKWARD \
                .supported_dtypes(get_soc(soc).arch.npu_arch):
            continue
        want = golden.kl_div_backward(g, s, t, red, log_t, soc=soc, compute="float32", **kw)
        got = lossgrad.kl_div_backward(g, s, t, red, log_t, soc=soc, backend="twin", **kw)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert _same_specials(got, want), name
        assert compare(got, want, str(want.dtype)).passed, name
        sat = get_soc(soc).arch.overflow_mode.value == "saturation"
        w64 = want.astype(np.float64)
        # saturation mode (310P/910): an overflowing float16 term is -+65504 instead of -+Inf, and no NaN arises
        specials += int(np.count_nonzero(np.abs(w64) == 65504.0)) if sat else int(np.count_nonzero(~np.isfinite(w64)))
        assert not sat or np.all(np.isfinite(w64)), name
        # where the exact reference is finite, float16 terms overflow: the float32 mode is not the float64 one
        if (name.startswith("rows-none") or name.startswith("flat")) and not sat:
            exact = golden.kl_div_backward(g, s, t, red, log_t, soc=soc, **kw)
            assert not _same_specials(want, exact), name
    assert specials > 100  # the sweep does reach the overflow
