"""golden.sum_slack: the allowance a float32 sum of an output element's terms gets (docs/verify.md, "Summed
outputs"), worked by hand for KL's terms -t * g."""
from __future__ import annotations

import numpy as np

from lossgrad import golden
from lossgrad.registry import get_op
from lossgrad.validation import validate

KL = get_op("kl_div").name
U = 2.0 ** -24


def test_gamma_of_the_terms_per_element() -> None:
    # self (2, 1) against target (2, 3): each output element sums 3 terms -t * g, |t| = 1, 2, 4 in row 0
    t = np.array([[1.0, -2.0, 4.0], [0.5, 0.5, 0.5]], np.float32)
    call = validate(KL, np.ones((), np.float32), np.zeros((2, 1), np.float32), t, "sum")
    slack = golden.sum_slack(call)
    gamma = 2 * U / (1 - 2 * U)  # n = 3 terms: gamma_2
    np.testing.assert_allclose(slack, np.array([[7.0], [1.5]]) * gamma, rtol=1e-12)


def test_no_slack_where_nothing_is_summed_and_inf_where_the_terms_overflow() -> None:
    same = validate(KL, np.ones(3, np.float32), np.zeros(3, np.float32), np.ones(3, np.float32), "none")
    assert golden.sum_slack(same) is None
    big = np.full((1, 2), 3e38, np.float32)  # two finite terms whose magnitudes sum past float32's maximum
    call = validate(KL, np.ones((), np.float32), np.zeros((1, 1), np.float32), big, "sum")
    assert np.isinf(golden.sum_slack(call)).all()
