"""tests/cann: CANN integration tests. Without CANN everything but the @cann/@npu tests runs; those skip with a
reason unless ASCEND_HOME_PATH is set (and, for @npu, a device is present)."""
from __future__ import annotations

import os

import pytest

from lossgrad.cann import kernel_sources
from lossgrad.cann.detect import device_present

from _cann_support import REAL_RENDER_KERNEL_SOURCES, fake_render_kernel_sources


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    has_cann = bool(os.environ.get("ASCEND_HOME_PATH"))
    has_npu = device_present()
    for item in items:
        if item.get_closest_marker("cann") and not has_cann:
            item.add_marker(pytest.mark.skip(reason="needs CANN: ASCEND_HOME_PATH is not set "
                                                    "(source <cann>/set_env.sh)"))
        if item.get_closest_marker("npu") and not has_npu:
            item.add_marker(pytest.mark.skip(reason="needs an Ascend device (/dev/davinciN) and CANN"))


@pytest.fixture(autouse=True)
def standin_kernels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the real-CANN tests, kernel sources come from the stand-in, not lossgrad.codegen."""
    if request.node.get_closest_marker("cann") or request.node.get_closest_marker("npu"):
        return
    monkeypatch.setattr(kernel_sources, "render_kernel_sources", fake_render_kernel_sources)


@pytest.fixture
def no_cann(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)


@pytest.fixture
def real_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernel sources from lossgrad.codegen (the real kernels), for the tests that compile or run them."""
    monkeypatch.setattr(kernel_sources, "render_kernel_sources", REAL_RENDER_KERNEL_SOURCES)
