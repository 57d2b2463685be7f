"""The public functions at their edges: backend names and availability, out= arrays, attribute types, SoC names,
all checked before anything runs (issue 10, items 2-5 and 13)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lossgrad
from lossgrad.errors import BackendUnavailable
from lossgrad.registry import OPS

FUNCS = list(OPS)  # every registered op's public function


def _ins(shape: tuple[int, ...] = (8,)) -> list[np.ndarray]:
    return [np.ones(shape, np.float32) for _ in range(3)]


def _boom(*_: Any, **__: Any) -> Any:
    raise AssertionError("a backend ran")


@pytest.fixture
def no_backend_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to launch on the twin or on CANN fails the test."""
    import lossgrad.cann.runner as cann_runner
    import lossgrad.runners.twin as twin_runner
    monkeypatch.setattr(twin_runner, "run_twin", _boom)
    monkeypatch.setattr(cann_runner, "run_on_cann", _boom)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("backend", ["bogus", "GPU", "", None, 1, "Twin"])
@pytest.mark.parametrize("shape", [(8,), (0,)])
def test_unknown_backend_is_an_invalid_call(name: str, backend: Any, shape: tuple[int, ...],
                                            no_backend_runs: None) -> None:
    with pytest.raises(lossgrad.LossGradError) as e:
        getattr(lossgrad, name)(*_ins(shape), backend=backend)
    assert e.value.code == 161002 and "backend" in e.value.message


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("backend", ["cpu", "sim", "npu"])
@pytest.mark.parametrize("shape", [(8,), (0,), (0, 3)])
def test_cann_backends_without_cann_fail_even_when_nothing_would_launch(
        name: str, backend: str, shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch,
        no_backend_runs: None) -> None:
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    with pytest.raises(BackendUnavailable, match="ASCEND_HOME_PATH"):
        getattr(lossgrad, name)(*_ins(shape), backend=backend)


def test_an_invalid_call_is_reported_before_the_missing_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    g, s, _ = _ins()
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.mse_loss_backward(g, s, np.ones(3, np.float32), backend="sim")
    assert e.value.code == 161002 and "broadcast" in e.value.message


def test_zero_size_call_on_the_twin_returns_an_empty_result() -> None:
    e = np.zeros((0, 3), np.float32)
    assert lossgrad.mse_loss_backward(e, e, e, backend="twin").shape == (0, 3)


# -- out= ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FUNCS)
def test_read_only_out_is_refused_before_the_kernel_runs(name: str, no_backend_runs: None) -> None:
    out = np.zeros(8, np.float32)
    out.flags.writeable = False
    with pytest.raises(lossgrad.LossGradError) as e:
        getattr(lossgrad, name)(*_ins(), out=out, backend="twin")
    assert e.value.code == 161002 and "read-only" in e.value.message


@pytest.mark.parametrize("name", FUNCS)
def test_read_only_broadcast_view_as_out_is_refused(name: str, no_backend_runs: None) -> None:
    out = np.broadcast_to(np.zeros(1, np.float32), (8,))  # NumPy makes such views read-only
    with pytest.raises(lossgrad.LossGradError, match="read-only"):
        getattr(lossgrad, name)(*_ins(), out=out, backend="twin")


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("out, what", [(np.zeros(9, np.float32), "shape"), (np.zeros((8, 1), np.float32), "shape"),
                                       (np.zeros(8, np.int32), "int32"), (np.zeros(8, np.complex64), "complex64"),
                                       ([0.0] * 8, "numpy.ndarray")])
def test_out_shape_and_dtype_are_checked_before_the_kernel_runs(name: str, out: Any, what: str,
                                                                no_backend_runs: None) -> None:
    with pytest.raises(lossgrad.LossGradError) as e:
        getattr(lossgrad, name)(*_ins(), reduction="none", out=out, backend="twin")
    assert e.value.code == 161002 and what in e.value.message


@pytest.mark.parametrize("name", FUNCS)
def test_out_with_a_differing_out_dtype(name: str, no_backend_runs: None) -> None:
    with pytest.raises(lossgrad.LossGradError, match="differs"):
        getattr(lossgrad, name)(*_ins(), out=np.zeros(8, np.float32), out_dtype="float16", backend="twin")


# -- attributes ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["False", "false", "", "True", 2, 0, 0.5, [False], (), None, np.array(True),
                                   np.array([True]), np.int8(0), np.float32(1.0), object()])
def test_log_target_must_be_a_bool(value: Any, no_backend_runs: None) -> None:
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.kl_div_backward(*_ins(), "mean", value, backend="twin")
    assert e.value.code == 161002 and "logTarget" in e.value.message


@pytest.mark.parametrize("value", [True, np.bool_(False)])
def test_log_target_bools_are_accepted(value: Any) -> None:
    out = lossgrad.kl_div_backward(*_ins(), "sum", value, backend="twin")
    expected = -np.exp(1.0) if value else -1.0
    np.testing.assert_allclose(out, np.full(8, expected, np.float32), rtol=1e-6)


@pytest.mark.parametrize("beta", [1e39, 1e300, 10 ** 40, np.float64(4e38)], ids=["1e39", "1e300", "int1e40", "np4e38"])
def test_beta_beyond_float32_is_invalid_without_a_warning(beta: Any, no_backend_runs: None) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(lossgrad.LossGradError) as e:
            lossgrad.smooth_l1_loss_backward(*_ins(), "mean", beta, backend="twin")
    assert e.value.code == 161002 and "float32" in e.value.message


@pytest.mark.parametrize("reduction", [2 ** 64, 2 ** 70, -(2 ** 70)])
def test_kl_reduction_beyond_int64(reduction: int, no_backend_runs: None) -> None:
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.kl_div_backward(*_ins(), reduction, backend="twin")
    assert e.value.code == 161002 and "int64" in e.value.message


# -- SoC names ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("soc", ["ascend910b", "nonsense", "A2,310P", 3])
def test_bad_soc_names(soc: Any, no_backend_runs: None) -> None:
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.l1_loss_backward(*_ins(), soc=soc, backend="twin")
    assert e.value.code == 161002 and "soc" in e.value.message


# -- the package ----------------------------------------------------------------------------------------------------

def test_golden_and_twin_are_attributes_of_the_package() -> None:
    import subprocess
    import sys

    code = "import lossgrad; print(lossgrad.golden.l1_loss_backward.__module__, lossgrad.twin.run_kernel.__name__)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["lossgrad.golden", "run_kernel"]


def test_the_kernel_cache_honours_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib
    from pathlib import Path as P

    build = importlib.import_module("lossgrad.twin.build")
    monkeypatch.delenv("LOSSGRAD_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert build.cache_root() == tmp_path / "lossgrad"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # ignored, per the XDG spec
    assert build.cache_root() == P.home() / ".cache" / "lossgrad"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert build.cache_root() == P.home() / ".cache" / "lossgrad"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path / "mine"))
    assert build.cache_root() == tmp_path / "mine"
