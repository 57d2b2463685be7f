"""Fixtures shared across the test tree."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest


def _accepted_mixes(op: Any, soc: str) -> list[tuple]:
    """Every (grad, self, target, out) float mix validation (aclnn's checks) accepts for the op on the SoC."""
    from lossgrad.errors import LossGradError
    from lossgrad.socs import get_soc
    from lossgrad.validation import validate

    floats = op.supported_dtypes(get_soc(soc).arch.npu_arch)
    found = []
    for g in floats:
        for s in floats:
            for t in floats:
                for o in floats:
                    try:
                        validate(op, np.zeros((2, 3), g.np_dtype), np.zeros((2, 3), s.np_dtype),
                                 np.zeros((2, 3), t.np_dtype), "sum", out_dtype=o, soc=soc)
                    except LossGradError:
                        continue
                    found.append((g, s, t, o))
    return found


@pytest.fixture
def accepted_mixes() -> Callable[[Any, str], list[tuple]]:
    """accepted_mixes(op, soc): the float dtype mixes aclnn's validation accepts (tests/cann, tests/torch)."""
    return _accepted_mixes
