"""Runs against a real CANN toolkit (@cann) and a real device (@npu). Skipped, with the reason, when
ASCEND_HOME_PATH is unset / no device is present; run for real wherever they are. Kernel sources here are the real
ones (lossgrad.codegen), and every result is compared with the golden model under CANN's precision standard.

Environment: LOSSGRAD_TEST_SOC picks the SoC (default: the project default, an A2 part) - set it to the device's
SoC for the @npu tests (`npu-smi info`: "Ascend" + Name).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lossgrad import golden, precision
from lossgrad.cann import bench, runner
from lossgrad.cann.cli_build import build
from lossgrad.registry import OPS
from lossgrad.socs import DEFAULT_SOC, get_soc
from lossgrad.validation import validate

SOC = os.environ.get("LOSSGRAD_TEST_SOC", DEFAULT_SOC)


def _calls(dtype: str = "float32") -> list:
    rng = np.random.default_rng(7)
    calls = []
    for op in OPS.values():
        shape = (3, 37)
        grad = rng.standard_normal((1, 37)).astype(dtype)  # a broadcast input
        self_ = rng.standard_normal(shape).astype(dtype)
        target = rng.standard_normal(shape).astype(dtype)
        optional = [rng.standard_normal((37,)).astype(dtype) for _ in op.inputs[3:]]  # given, broadcast
        calls.append(validate(op, grad, self_, target, *optional, "mean", soc=SOC))
    return calls


def _check(call: object, out: np.ndarray) -> None:
    expected = golden.compute_call(call)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    result = precision.compare(out, expected, call.out_dtype)
    assert result.passed, result.describe()


def _mixed_calls() -> list:
    """Mixed-dtype calls: registered package columns (fused) and mixes the package path casts on the host."""
    rng = np.random.default_rng(11)
    f16, f32 = np.float16, np.float32
    mixes = [("l1_loss_backward", f16, f32, f32, None), ("l1_loss_backward", f32, f16, f32, None),
             ("mse_loss_backward", f16, f16, f16, "float32"), ("smooth_l1_loss_backward", f32, f16, f16, None),
             ("kl_div_backward", f16, f32, f16, None), ("kl_div_backward", f32, f16, f16, "float32")]
    calls = []
    for name, g, s, t, out in mixes:
        x = [rng.standard_normal((3, 37)).astype(d) for d in (g, s, t)]
        calls.append(validate(OPS[name], *x, "mean", out_dtype=out, soc=SOC))
    return calls


@pytest.mark.cann
def test_installed_layout_has_what_the_runs_use() -> None:
    """The toolkit's CPU-debug library sits in a directory the CPU runs put on the library path (asc-tools'
    per-architecture product directory), and its kernel-launch CMake modules are where the builds look."""
    from lossgrad.cann.detect import require_cann
    from lossgrad.cann.targets import BuildTarget

    cann = require_cann("test")
    target = BuildTarget.of(SOC)
    dirs = target.tikicpulib_lib_dirs(cann.root, cann.host_arch)
    assert any((d / "libcpudebug.so").is_file() for d in dirs), dirs


@pytest.mark.cann
@pytest.mark.parametrize("call", _calls(), ids=list(OPS))
def test_cpu_debug_matches_golden(call: object) -> None:
    _check(call, runner.run_on_cann(call, "cpu"))


@pytest.mark.cann
@pytest.mark.slow
def test_simulator_matches_golden() -> None:
    call = _calls()[0]
    _check(call, runner.run_on_cann(call, "sim"))


@pytest.mark.cann
@pytest.mark.slow
def test_package_build_installs_under_the_output_dir(tmp_path: Path) -> None:
    opp = os.environ.get("ASCEND_OPP_PATH")
    config = Path(opp) / "vendors" / "config.ini" if opp else None
    before = config.read_bytes() if config is not None and config.exists() else None
    out = tmp_path / "pkg"
    result = CliRunner().invoke(build, ["--soc", SOC, "--flow", "package", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert list((out / "project" / "build_out").glob("custom_opp_*.run"))
    vendor = out / "opp" / "vendors" / "lossgrad"
    assert list((vendor / "op_api" / "include").glob("aclnn_*.h"))
    assert (vendor / "op_api" / "lib" / "libcust_opapi.so").is_file()
    shipped = [p.parent for p in vendor.rglob("*.cpp") if p.name.endswith("_custom.cpp")]
    assert shipped and all((d / "lossgrad_tiling_data.h").is_file() for d in shipped)  # the source package compiles
    if config is not None:
        assert (config.read_bytes() if config.exists() else None) == before  # CANN's own vendors untouched


@pytest.mark.npu
@pytest.mark.parametrize("call", _calls(), ids=list(OPS))
def test_device_matches_golden(call: object) -> None:
    _check(call, runner.run_on_cann(call, "npu"))


@pytest.mark.npu
@pytest.mark.slow
def test_device_through_the_custom_aclnn_package(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    result = CliRunner().invoke(build, ["--soc", SOC, "--flow", "package", "--out", str(out)])
    assert result.exit_code == 0, result.output
    for call in _calls() + _mixed_calls():
        _check(call, runner.run_on_cann(call, "npu", package=out))


@pytest.mark.npu
def test_device_bench_reports_bandwidth() -> None:
    results = bench.bench_on_cann(_calls()[:1], "npu", reps=5, warmup=1)
    assert len(results) == 1
    r = results[0]
    assert r.samples == 5 and r.median_us and r.median_us > 0 and r.gbps and r.gbps > 0
    assert r.soc == get_soc(SOC).name
