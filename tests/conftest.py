"""Fixtures shared across the test tree."""
from __future__ import annotations

from typing import Any, Callable, Iterator

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


@pytest.fixture(scope="session")
def matrix_bundles() -> list:
    """The kernels of `lossgrad verify`'s default matrix on every default SoC (every op and dtype mix, about a
    hundred), compiled as verify compiles them: one library per architecture and arity, once per session. The
    xdist workers build them from opposite ends of the list, so the two compile different ones at once (the build
    cache's lock shares them)."""
    from lossgrad.socs import VERIFY_DEFAULT_SOCS
    from lossgrad.verify.cases import default_cases
    from lossgrad.verify.run import build_bundles, case_kernels

    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    odd = worker[2:].isdigit() and int(worker[2:]) % 2 == 1
    return build_bundles(case_kernels(default_cases(VERIFY_DEFAULT_SOCS)), reverse=odd)


# Test directories and modules that launch the matrix's kernels one call at a time: they launch them from
# matrix_bundles instead of compiling each kernel on its own (a kernel outside them, a test's own render or a
# mutant, is still compiled on its own). Modules that test the single-kernel build or the cache stay out.
BUNDLED = ("op_kernel", "torch", "timing", "python/golden", "python/ops/test_edge_cases.py", "python/test_api.py",
           "python/test_profile.py", "python/test_bench.py")
# Below this many selected tests in them (a developer's file or -k), building every library (about 2 CPU-minutes)
# costs more than compiling the few kernels the tests launch.
BUNDLED_MIN_TESTS = 300
TESTS = Path(__file__).resolve().parent


def _bundled(path: Path) -> bool:
    return any(path == TESTS / b or TESTS / b in path.parents for b in BUNDLED)


@pytest.fixture(scope="session")
def _bundled_tests_selected(request: pytest.FixtureRequest) -> int:
    return sum(_bundled(Path(str(item.path)).resolve()) for item in request.session.items)


@pytest.fixture(scope="module", autouse=True)
def _matrix_kernels_bundled(request: pytest.FixtureRequest, _bundled_tests_selected: int) -> Iterator[None]:
    if not _bundled(Path(request.module.__file__).resolve()) or _bundled_tests_selected < BUNDLED_MIN_TESTS:
        yield
        return
    from lossgrad.verify.run import bundles_in_use

    with bundles_in_use(request.getfixturevalue("matrix_bundles")):
        yield
