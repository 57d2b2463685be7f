"""The PyTorch oracle of the golden (python/lossgrad/verify/oracle.py): where it and the golden may disagree only
by the last float64 bit of their operation orders."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from lossgrad.verify.oracle import agree_at_overflow_ties


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_a_value_at_the_overflow_threshold_agrees_with_max_or_inf(dtype) -> None:
    info = ml_dtypes.finfo(dtype)
    top = float(info.max)
    threshold = top + 2.0 ** (info.maxexp - 1 - info.nmant) / 2  # float16: 65520
    golden = np.array([top, -np.inf, np.inf, top, 1.0], dtype)
    want64 = np.array([threshold, -threshold * (1 - 1e-14), top, -threshold, 1.0])
    with np.errstate(over="ignore"):
        got = agree_at_overflow_ties(golden, want64, want64.astype(dtype))
    # at the threshold (either side by float64 rounding): the golden's MAX or Inf; elsewhere torch's own rounding
    assert got[0] == top and got[1] == -np.inf
    assert got[2] == top  # MAX itself is no tie: torch's MAX stays, against the golden's Inf a real difference
    assert got[3] == -np.inf  # the golden's sign differs: not a tie of the same value
    assert got[4] == 1.0


def test_the_soak_case_at_the_float16_threshold_passes() -> None:
    """MSE float16 with huge values (seed 1258793123, A3 call 13823): one gradient is exactly -65520 in torch's order
    (rounds to -Inf) and -65519.99999999999 in aclnn's (rounds to -65504)."""
    pytest.importorskip("torch")
    from lossgrad.verify import fuzz
    from lossgrad.verify.run import run_case

    case = fuzz.draw_case(1258793123, "Ascend910_9391", 13823)
    result = run_case(case, "twin", oracle=True)
    assert not result.failed, result.error or result.comparison.describe()
