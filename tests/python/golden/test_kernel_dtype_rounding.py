"""L1, MSE and SmoothL1 with an output dtype other than aclnn's kernel dtype (docs/semantics.md, "Intermediate
roundings"): aclnn's kernel writes the result in the promoted dtype (L1, SmoothL1) or self's dtype (MSE), and the
op_api Casts that to out's dtype, so a float32 output of float16 inputs carries the float16 rounding and overflow.
The golden's float32 mode and the kernels (twin) follow that; the float64 mode stays exact math rounded once."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import lossgrad
import lossgrad.golden as golden

f16, bf16 = np.float16, ml_dtypes.bfloat16


def _mse_case() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # 2 * (200 - -200) * 300 = 240000 > 65504: Inf in float16, before the cast to float32
    return np.array([300, 300, 1], f16), np.array([200, -200, 0.001], f16), np.array([-200, 200, 0], f16)


def test_golden_float32_mode_rounds_through_the_kernel_dtype() -> None:
    g, s, t = _mse_case()
    got = golden.mse_loss_backward(g, s, t, "none", out_dtype="float32", compute="float32")
    assert got.dtype == np.float32 and got[0] == np.inf and got[1] == -np.inf
    assert got[2] == np.float32(f16(2 * np.float32(f16(0.001))))  # the float16-rounded value, widened
    exact = golden.mse_loss_backward(g, s, t, "none", out_dtype="float32")
    assert exact[0] == 240000 and exact[1] == -240000
    # L1 mean over 3: 1/3 is rounded to float16 (0.33325195) before the float32 output
    ones = np.ones(3, f16)
    l1 = golden.l1_loss_backward(ones, np.array([1, 2, -3], f16), np.zeros(3, f16), "mean", out_dtype="float32",
                                 compute="float32")
    assert np.array_equal(l1, np.float32([1, 1, -1]) * np.float32(f16(1 / 3)))
    # a float32 input makes the promoted (kernel) dtype float32: no 16-bit rounding
    l1_32 = golden.l1_loss_backward(ones.astype(np.float32), np.array([1, 2, -3], f16), np.zeros(3, f16), "mean",
                                    compute="float32")
    assert l1_32.dtype == np.float32 and l1_32[0] == np.float32(1) / np.float32(3)
    # bfloat16 kernel dtype with a float32 output: rounded to bfloat16 first
    sl1 = golden.smooth_l1_loss_backward(np.ones(1, bf16), np.array([0.3], bf16), np.zeros(1, bf16), "mean", 0.7,
                                         out_dtype="float32", compute="float32")
    assert sl1[0] == np.float32(bf16(np.float32(bf16(0.3)) * np.float32(1 / 0.7)))


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend310P3"])
def test_kernels_round_through_the_kernel_dtype(soc: str) -> None:
    g, s, t = _mse_case()
    want = golden.mse_loss_backward(g, s, t, "none", out_dtype="float32", soc=soc, compute="float32")
    got = lossgrad.mse_loss_backward(g, s, t, "none", out_dtype="float32", soc=soc, backend="twin")
    assert np.array_equal(got, want)
    x = np.array([1, 2, -3, 0.3, -0.2], f16)
    for fn, kw in ((lossgrad.l1_loss_backward, {}), (lossgrad.smooth_l1_loss_backward, {"beta": 0.7})):
        ref = getattr(golden, fn.__name__)
        want = ref(np.ones(5, f16), x, np.zeros(5, f16), "mean", out_dtype="float32", soc=soc, compute="float32",
                   **kw)
        got = fn(np.ones(5, f16), x, np.zeros(5, f16), "mean", out_dtype="float32", soc=soc, backend="twin", **kw)
        assert np.array_equal(got, want), fn.__name__
        assert not np.array_equal(want, ref(np.ones(5, f16), x, np.zeros(5, f16), "mean", out_dtype="float32", **kw))
