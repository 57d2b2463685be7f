"""Which precision threshold judges a verify case: out's dtype, or the coarser dtype aclnn's own kernel rounded the
result (KL: each term) to before the Cast to out (docs/semantics.md, "Intermediate roundings")."""
from __future__ import annotations

import numpy as np
import pytest

from lossgrad.dtypes import DType
from lossgrad.precision import compare
from lossgrad.validation import validate
from lossgrad.verify.run import judging_dtype


def _call(op: str, dtypes: tuple[str, str, str], out: str, self_shape: tuple[int, ...] = (8,)):
    g, s, t = (np.ones(shape, d) for shape, d in zip(((8,), self_shape, (8,)), dtypes))
    return validate(op, g, s, t, "none", out_dtype=out, soc="Ascend910B1")


@pytest.mark.parametrize("op, dtypes, out, judge", [
    ("kl_div_backward", ("float16",) * 3, "float32", DType.FLOAT16),       # float16 terms (and their sum)
    ("kl_div_backward", ("float16", "float16", "float32"), "float32", DType.FLOAT32),  # all cast to float32
    ("mse_loss_backward", ("float16",) * 3, "float32", DType.FLOAT16),     # written in self's dtype first
    ("mse_loss_backward", ("float32",) * 3, "float16", DType.FLOAT16),     # out is the coarser one
    ("l1_loss_backward", ("float32", "float16", "float16"), "float32", DType.FLOAT32),  # promoted to float32
    ("l1_loss_backward", ("bfloat16",) * 3, "float16", DType.BFLOAT16),
])
def test_the_coarser_of_out_and_the_aclnn_kernel_dtype_judges(op: str, dtypes, out: str, judge: DType) -> None:
    assert judging_dtype(_call(op, dtypes, out)) is judge


def test_one_float16_ulp_in_a_tiny_float32_out_fails_float32_but_passes_float16() -> None:
    # What the all-float16 KL cases showed: a float16 subnormal one ulp (2^-24) apart, in a float32 output.
    golden = np.array([3 * 2.0 ** -24, 1.0], np.float32)
    actual = np.array([4 * 2.0 ** -24, 1.0], np.float32)
    assert not compare(actual, golden, DType.FLOAT32, small_values=True).passed
    assert compare(actual, golden, DType.FLOAT16, small_values=True).passed
