"""The kernels on the twin against the golden model, by CANN's precision standard, on one SoC per architecture.

A reduced form of `lossgrad verify`'s matrix (small and medium shapes; the 10^6-element cases are in
test_counters.py and in `lossgrad verify`): every op, supported dtype (incl. mixed inputs and a different output
dtype), reduction and attribute variant, the broadcast patterns, 0-d and empty tensors, and special values."""
from __future__ import annotations

import pytest

from lossgrad.registry import OPS
from lossgrad.socs import get_soc
from lossgrad.verify.cases import default_cases
from lossgrad.verify.run import run_case

SOCS = ("Ascend910B1", "Ascend950PR_9579", "Ascend310P3", "Ascend910A")
BIG = {"n1e6+3"}

CASES = [c for c in default_cases(SOCS) if c.tag not in BIG]


def test_matrix_covers_every_op_dtype_and_arch() -> None:
    seen = {(c.op, c.soc, c.dtypes) for c in CASES}
    assert {c.op for c in CASES} == set(OPS)
    assert {c.soc for c in CASES} == set(SOCS)
    assert any(d[0] != d[1] for _, _, d in seen) and any(d[0] != d[3] for _, _, d in seen)
    assert {"special", "ties", "huge"} <= {c.values for c in CASES}
    assert len(CASES) > 1500


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kernel_matches_golden(case) -> None:
    r = run_case(case, "twin")
    if r.undetermined:  # not judged: only where 310P/910's open float32 answer decides the expected output
        assert get_soc(case.soc).arch.overflow_mode.value == "saturation" and case.values in ("special", "huge"), \
            r.error
        return
    assert r.error is None, r.error
    assert r.passed, r.comparison.describe()


@pytest.mark.parametrize("beta", [2.2799393007595534, 0.1, 1 / 3, 1e-46, 3e-39])
def test_smooth_l1_uses_the_float32_beta_bit_for_bit(beta: float) -> None:
    # aclnn's beta is a C float: the kernel's 1/beta and its beta == 0 path must follow float32(beta), as the
    # golden does (1e-46 rounds to 0 -> L1's sign, 0 at NaN; 3e-39 is a float32 subnormal -> the 2^64 scaling).
    import numpy as np

    import lossgrad
    from lossgrad import golden

    rng = np.random.default_rng(7)
    x = (rng.standard_normal(4099) * 3 * max(float(np.float32(beta)), 1e-30)).astype(np.float32)
    x[:3] = [np.nan, 0.0, -0.0]
    t = np.zeros_like(x)
    g = np.asarray(np.float32(0.75))
    got = lossgrad.smooth_l1_loss_backward(g, x, t, reduction="sum", beta=beta, soc="Ascend910B1", backend="twin")
    want = golden.smooth_l1_loss_backward(g, x, t, reduction="sum", beta=beta, compute="float32")
    np.testing.assert_array_equal(got, want)
