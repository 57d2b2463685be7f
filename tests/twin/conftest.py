"""Shared fixtures for the twin's tests: the four architectures and the test kernels, compiled once per arch.

Every kernel the suite launches is compiled up front, in parallel threads (g++ runs outside the GIL); the build
cache's per-kernel lock makes concurrent pytest-xdist workers share the work instead of repeating it.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from lossgrad.socs import get_soc
from lossgrad.twin.build import build

from _twin_common import ARCHS, KERNELS, SOCS, SUITE_KERNELS


def prebuild() -> None:
    jobs = [(KERNELS / src, name, nargs, SOCS[arch]) for src, name, nargs in SUITE_KERNELS for arch in ARCHS
            if (KERNELS / src).is_file()]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for f in [pool.submit(build, src, name, nargs, get_soc(soc)) for src, name, nargs, soc in jobs]:
            f.result()


@pytest.fixture(scope="session", autouse=True)
def _compiled_kernels() -> None:
    prebuild()


@pytest.fixture(params=ARCHS, ids=[f"arch{a}" for a in ARCHS])
def arch(request) -> int:
    return request.param
