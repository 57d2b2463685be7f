"""Fixtures of the time-model tests (the provisional parameters live in _timing_support.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lossgrad.timing.model import TimeParams

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _timing_support
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "twin"))  # the twin's test kernels (_twin_common)

from _timing_support import provisional_params  # noqa: E402


@pytest.fixture
def params() -> TimeParams:
    return provisional_params()
