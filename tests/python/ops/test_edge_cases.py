"""Each op folder's hand-worked edge cases (test_facts.EDGE_CASES): the twin's kernel and both golden modes give the
stated values exactly (NaN where stated). The values are worked out by hand in the folder, not by the code."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lossgrad
from lossgrad import golden
from lossgrad.registry import OPS, op_part

NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
CASES = [(op, case) for op in OPS.values() for case in getattr(op_part(op, "test_facts"), "EDGE_CASES", ())]


@pytest.mark.parametrize("op, case", CASES, ids=[f"{op.template}: {c[0]}" for op, c in CASES])
def test_edge_case(op: Any, case: tuple) -> None:
    what, soc, dtype, out_dtype, *tensors, reduction, expected = case
    arrays = [None if t is None else np.array(t, NP[dtype]) for t in tensors]
    with np.errstate(over="ignore"):  # the stated values, written as decimals, in the output dtype
        want = np.array(expected, np.float64).astype(NP[out_dtype or dtype]).astype(np.float64)
    got = getattr(lossgrad, op.name)(*arrays, reduction, out_dtype=out_dtype, soc=soc, backend="twin")
    for mode, result in (("twin", got),
                         ("golden float32", getattr(golden, op.name)(*arrays, reduction, out_dtype=out_dtype,
                                                                     soc=soc, compute="float32"))):
        assert np.array_equal(result.astype(np.float64), want, equal_nan=True), f"{what} ({mode}): {result}"
