"""Fixtures shared across the test tree."""
from __future__ import annotations

from typing import Any, Callable

import os
from pathlib import Path

import numpy as np
import pytest

CACHE_ENV = "LOSSGRAD_CACHE"
SUITE_CACHE_NOTE = "LOSSGRAD_TEST_SUITE_CACHE"  # set when the suite chose the cache (tests/python/test_cache.py)


def pytest_configure(config: pytest.Config) -> None:
    """The suite compiles hundreds of kernels (several precompiled headers of ~80 MB each): it keeps them in a cache
    of its own, inside the checkout's .pytest_cache (`pytest --cache-clear` empties it), never in the user's
    ~/.cache/lossgrad. A LOSSGRAD_CACHE set by the caller (CI, a developer's worktree) is kept: an explicit choice."""
    if os.environ.get(CACHE_ENV):
        return
    cache = getattr(config, "cache", None)  # None with -p no:cacheprovider
    path = cache.mkdir("lossgrad-kernels") if cache is not None else Path(config.rootpath) / ".lossgrad-cache"
    os.environ[CACHE_ENV] = str(path)
    os.environ[SUITE_CACHE_NOTE] = str(path)  # xdist workers and subprocesses inherit both


def _accepted_mixes(op: Any, soc: str) -> list[tuple]:
    """Every (grad, self, target, out) float mix validation (aclnn's checks) accepts for the op on the SoC (its
    optional inputs left out)."""
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
                                 np.zeros((2, 3), t.np_dtype), *op.absent_optional, "sum", out_dtype=o, soc=soc)
                    except LossGradError:
                        continue
                    found.append((g, s, t, o))
    return found


@pytest.fixture
def accepted_mixes() -> Callable[[Any, str], list[tuple]]:
    """accepted_mixes(op, soc): the float dtype mixes aclnn's validation accepts (tests/cann, tests/torch)."""
    return _accepted_mixes
