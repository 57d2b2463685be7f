"""Inf and NaN inside broadcast operands reach the op unchanged on every part: the kernels replicate rows and spread
columns with moves that never compute (a 16-bit Or), so 310P/910's saturation mode cannot turn an input NaN into 0
before the subtraction, as a Muls(x, 1.0f) copy would (docs/kernels.md, docs/semantics.md overflow modes). There,
where the float32 answer is an open question (docs/twin.md), the kernels match the golden under each answer."""
from __future__ import annotations

import numpy as np
import pytest

from lossgrad import golden
from lossgrad.registry import OPS, OutputShape, op_part
from lossgrad.runners.twin import run_twin
from lossgrad.validation import validate

SHAPES = {
    "short runs, target row per run": ((400, 3, 16), (400, 3, 16), (400, 1, 16)),
    "packed ragged rows (33)": ((400, 33), (400, 33), (33,)),
    "aligned rows (40)": ((400, 40), (400, 40), (40,)),
    "column operand": ((400, 1), (400, 1000), (400, 1000)),
}


@pytest.mark.parametrize("soc", ["Ascend310P3", "Ascend910A", "Ascend910B1", "Ascend950PR_9579"])
@pytest.mark.parametrize("op", [n for n, o in OPS.items() if o.output_shape is OutputShape.BROADCAST_ALL])
@pytest.mark.parametrize("name", list(SHAPES))
def test_nan_and_inf_in_broadcast_operands(soc: str, op: str, name: str) -> None:
    rng = np.random.default_rng(5)
    g_shape, s_shape, t_shape = SHAPES[name]
    g = rng.uniform(-1, 1, g_shape).astype(np.float32)
    s = rng.uniform(-1, 1, s_shape).astype(np.float32)
    t = rng.uniform(-1, 1, t_shape).astype(np.float32)
    t.reshape(-1)[3] = np.nan
    g.reshape(-1)[0] = np.nan
    s.reshape(-1)[5] = np.inf
    call = validate(op, g, s, t, "none", None, soc=soc)
    # where the golden does not model the alternative answer (the op folder's test facts say where, and why), only
    # the primary one is comparable
    primary_only = getattr(op_part(op, "test_facts"), "GOLDEN_PRIMARY_ONLY_ON", ())
    answers = ("primary",) if soc in primary_only else ("primary", "alternative")
    for answer in answers:  # the same on A2/A3/950 (IEEE)
        out = run_twin(call, undetermined=answer).output
        np.testing.assert_array_equal(out, golden.compute_call(call, "float32", answer))
