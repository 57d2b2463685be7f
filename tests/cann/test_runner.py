"""CANN detection, run environments and the runners' fail-fast behaviour on a machine without CANN (or without a
device): every cpu/sim/npu path raises BackendUnavailable naming ASCEND_HOME_PATH, set_env.sh and the twin."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lossgrad.cann import bench, detect, envs, runner
from lossgrad.cann.targets import BuildTarget
from lossgrad.errors import BackendUnavailable
from lossgrad.registry import OPS
from lossgrad.socs import SOCS
from lossgrad.validation import validate


def _call(op_name: str = "l1_loss_backward") -> object:
    x = np.ones((2, 3), np.float32)
    return validate(OPS[op_name], x, x, x, "mean", soc="Ascend910B1")


def _assert_clear(message: str) -> None:
    for needle in ("ASCEND_HOME_PATH", "set_env.sh", "twin"):
        assert needle in message, needle


@pytest.mark.parametrize("backend", runner.BACKENDS)
def test_every_runner_fails_fast_without_cann(no_cann: None, backend: str) -> None:
    with pytest.raises(BackendUnavailable) as info:
        runner.run_on_cann(_call(), backend)
    _assert_clear(str(info.value))


@pytest.mark.parametrize("backend", ["npu", "sim"])
def test_bench_fails_fast_without_cann(no_cann: None, backend: str) -> None:
    with pytest.raises(BackendUnavailable) as info:
        bench.bench_on_cann([_call()], backend)
    _assert_clear(str(info.value))


def test_public_dispatch_reaches_the_cann_runner(no_cann: None) -> None:
    from lossgrad import runners as dispatch
    with pytest.raises(BackendUnavailable) as info:
        dispatch.run(_call(), "cpu")
    _assert_clear(str(info.value))
    assert dispatch.resolve_backend("auto") == "twin"  # no device without CANN


def test_npu_without_a_device(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "lib64").mkdir()  # enough of an install for detection
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    monkeypatch.setattr(detect, "_device_nodes", lambda: [])
    assert not detect.device_present()
    with pytest.raises(BackendUnavailable, match="no Ascend device"):
        runner.run_on_cann(_call(), "npu")


def test_unknown_backend() -> None:
    with pytest.raises(ValueError):
        runner.run_on_cann(_call(), "gpu")


def test_a_dangling_home_path_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "missing"))
    assert detect.detect_cann() is None
    message = detect.unavailable_message("x")
    assert "is not a directory" in message and "set_env.sh" in message


def test_version_detection(tmp_path: Path) -> None:
    arch = detect.host_arch()
    info = tmp_path / "a" / f"{arch}-linux" / "ascend_toolkit_install.info"
    info.parent.mkdir(parents=True)
    info.write_text("package_name=Ascend-cann-toolkit\nversion=8.5.0\ninnerversion=V100R001\n")
    cann = detect.detect_cann({"ASCEND_HOME_PATH": str(tmp_path / "a")})
    assert cann is not None and cann.version == "8.5.0" and cann.version_source == str(info)
    cfg = tmp_path / "b" / "version.cfg"
    cfg.parent.mkdir()
    cfg.write_text("# version\ntoolkit_running_version=[7.0.RC1.alpha003:7.0.RC1]\n")
    assert detect.detect_cann({"ASCEND_HOME_PATH": str(tmp_path / "b")}).version == "7.0.RC1.alpha003"
    (tmp_path / "c" / f"{arch}-linux").mkdir(parents=True)
    assert detect.detect_cann({"ASCEND_HOME_PATH": str(tmp_path / "c")}).version is None


def test_an_empty_home_path_directory_is_no_install(tmp_path: Path) -> None:
    env = {"ASCEND_HOME_PATH": str(tmp_path)}
    assert detect.detect_cann(env) is None
    message = detect.unavailable_message("x", env)
    assert "holds no CANN toolkit" in message and str(tmp_path) in message


def test_run_environments(tmp_path: Path) -> None:
    target = BuildTarget.of("Ascend910B1")
    base = {"LD_LIBRARY_PATH": "/usr/lib/x", "ASCEND_CUSTOM_OPP_PATH": "/stale", "ASCEND_OPP_PATH": "/cann/opp"}
    cpu = envs.run_environment("cpu", target, tmp_path, "x86_64", base=base, existing_only=False)
    # A stale custom package never leaks into a run; CANN's own ASCEND_OPP_PATH is the aclnn executor's fallback for
    # scene.info, the built-in kernels and vendors/config.ini (opbase indv_collector.cpp) and is kept.
    assert "ASCEND_CUSTOM_OPP_PATH" not in cpu and cpu["ASCEND_OPP_PATH"] == "/cann/opp"
    assert f"{tmp_path}/tools/tikicpulib/lib/Ascend910B1" in cpu["LD_LIBRARY_PATH"].split(":")
    assert cpu["LD_LIBRARY_PATH"].endswith("/usr/lib/x")
    sim = envs.run_environment("sim", target, tmp_path, "x86_64", base=base, existing_only=False,
                               run_dir=tmp_path / "run")
    parts = sim["LD_LIBRARY_PATH"].split(":")
    assert parts[:3] == [f"{tmp_path}/tools/simulator/dav_2201/lib", f"{tmp_path}/x86_64-linux/simulator/dav_2201/lib",
                         f"{tmp_path}/tools/simulator/Ascend910B1/lib"]
    assert sim["CAMODEL_LOG_PATH"] == str(tmp_path / "run" / "sim_log")
    npu = envs.run_environment("npu", target, tmp_path, "x86_64", base=base, existing_only=False,
                               first_lib_dirs=[tmp_path / "k"], custom_opp=tmp_path / "opp" / "vendors" / "v")
    assert npu["LD_LIBRARY_PATH"].split(":")[:2] == [str(tmp_path / "k"), f"{tmp_path}/lib64"]
    assert npu["ASCEND_CUSTOM_OPP_PATH"] == str(tmp_path / "opp" / "vendors" / "v")
    assert npu["ASCEND_OPP_PATH"] == "/cann/opp"
    existing = envs.run_environment("npu", target, tmp_path, "x86_64", base={}, existing_only=True)
    assert existing["LD_LIBRARY_PATH"] == ""  # nothing under an empty root
    from lossgrad.cann.project import Step, step_environment
    build = step_environment(Step(("cmake",), tmp_path, "build", unset_env=envs.BUILD_UNSET), base)
    install = step_environment(Step(("x.run",), tmp_path, "install", unset_env=envs.INSTALL_UNSET), base)
    assert "ASCEND_CUSTOM_OPP_PATH" not in build and "ASCEND_OPP_PATH" in build
    assert "ASCEND_OPP_PATH" not in install and "ASCEND_CUSTOM_OPP_PATH" not in install


def test_targets_follow_the_soc_table() -> None:
    for soc in SOCS.values():
        t = BuildTarget(soc)
        assert t.soc_version == soc.name and t.compute_unit == soc.compute_unit
        assert t.npu_arch_flag == f"dav-{soc.arch.npu_arch}"
        assert t.split_cores is (not soc.arch.coupled)
    bare = BuildTarget.of("Ascend910B")
    assert (bare.npu_arch, bare.compute_unit, bare.cce_aicore_arch) == (1001, "ascend910", "dav-c100")


def test_worker_reports_errors_as_json(tmp_path: Path) -> None:
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"output": {"path": str(tmp_path / "o.bin"), "bytes": 4}}))
    env = runner.worker_env({"PATH": "/usr/bin:/bin", "ASCEND_HOME_PATH": str(tmp_path)})
    proc = subprocess.run(runner.worker_command(job), env=env, capture_output=True, text=True)
    assert proc.returncode == 1
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["ok"] is False and "libascendcl.so" in result["error"]  # no ACL runtime here
    usage = subprocess.run([sys.executable, "-m", "lossgrad.cann.worker"], env=env, capture_output=True, text=True)
    assert usage.returncode == 2


def test_simulator_trace_span(tmp_path: Path) -> None:
    """The simulator profilers' Chrome traces (msopprof simulator: OPPROF_*/simulator/trace.json, the all-core
    summary, beside per-core files; npusim: report/results/kernel_*/core_*/trace_core<N>.json): the span of the
    complete events, in microseconds; metadata and instant events do not count."""
    sim = tmp_path / "a" / "OPPROF_1" / "simulator"
    (sim / "core0.veccore0").mkdir(parents=True)
    (sim / "trace.json").write_text(json.dumps({"traceEvents": [
        {"name": "process_name", "ph": "M", "pid": 0}, {"name": "MOV", "ph": "X", "ts": 10.0, "dur": 2.5},
        {"name": "VADD", "ph": "X", "ts": 11.0, "dur": 4.0}, {"name": "flag", "ph": "i", "ts": 90.0}]}))
    (sim / "core0.veccore0" / "trace_core0.json").write_text(json.dumps([{"ph": "X", "ts": 0.0, "dur": 500.0}]))
    assert bench.read_trace_span_us(tmp_path / "a") == pytest.approx(5.0)  # the summary wins over per-core files
    cores = tmp_path / "b" / "npusim_1_x" / "report" / "results" / "kernel_0"
    for i, (ts, dur) in enumerate([(3.0, 4.0), (1.0, 2.0)]):
        (cores / f"core_{i}").mkdir(parents=True)
        (cores / f"core_{i}" / f"trace_core{i}.json").write_text(json.dumps([{"ph": "X", "ts": ts, "dur": dur}]))
    assert bench.read_trace_span_us(tmp_path / "b") == pytest.approx(6.0)  # first start to last end over cores
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "OpBasicInfo.csv").write_text("Op Name,Task Duration(us)\nk,12.5\n")  # on-board only
    assert bench.read_trace_span_us(tmp_path / "c") is None


def test_bench_figures() -> None:
    from lossgrad.cann.kernel_sources import Variant
    from lossgrad.dtypes import DType

    op = OPS["kl_div_backward"]
    x = np.ones((4, 8), np.float32)
    call = validate(op, x, x, x, "sum", soc="Ascend910B1")
    roles = [io.role for io in op.kernel_inputs]
    inputs = tuple(np.ones((4, 8), np.float32) for _ in roles)
    job = runner.KernelJob(call=call, variant=Variant(op, (DType.FLOAT32,) * 4, 0), inputs=inputs, tiling=None)
    moved = bench.bytes_moved(job)
    assert moved == 2 * 128 + 128  # KL reads grad and target (never self's values), writes the output
    result = bench._result(job, "npu", [10.0, 12.0, 11.0], [22.0], [])
    assert result.median_us == 11.0 and result.samples == 3
    assert result.gbps == pytest.approx(moved / 11e-6 / 1e9)
    assert result.bandwidth_fraction == pytest.approx(result.gbps * 1e9 / call.soc.hbm_bandwidth.value)
    assert result.speedup_vs_aclnn == pytest.approx(2.0)
    assert bench.flush_bytes(BuildTarget(call.soc)) >= 2 * call.soc.l2_bytes.value


def test_cpu_debug_ignores_the_forced_flow(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cann = detect.CannInstall(root=tmp_path, host_arch="x86_64", version=None, version_source=None)
    target = BuildTarget(SOCS["Ascend910B1"])
    monkeypatch.setenv(runner.FLOW_VAR, "launch-asc")
    assert runner.choose_flow(cann, target, "cpu") == "launch-legacy"  # tikicpulib: the ASC flow builds no _cpu
    assert runner.choose_flow(cann, target, "sim") == "launch-asc"
    monkeypatch.setenv(runner.FLOW_VAR, "bogus")
    with pytest.raises(runner.CannRunError, match="expected launch-legacy or launch-asc"):
        runner.choose_flow(cann, target, "npu")


def test_kernel_spec_runs_on_the_chosen_device(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from lossgrad.cann.kernel_sources import Variant
    from lossgrad.dtypes import DType
    from lossgrad.tiling import plan_call

    call = _call()
    job = runner.KernelJob(call=call, variant=Variant(call.op, (DType.FLOAT32,) * 4, 0), inputs=(),
                           tiling=plan_call(call))
    built = runner.BuiltVariant(job.variant, "launch-legacy", "npu", tmp_path, None, tmp_path / "libk.so", "k_do")
    monkeypatch.setenv("LOSSGRAD_DEVICE_ID", "3")
    spec = runner.kernel_spec(job, built, tmp_path / "t.bin", [tmp_path / "a.bin"], tmp_path / "o.bin")
    assert spec["device"] == 3  # run and bench both honour LOSSGRAD_DEVICE_ID
    assert spec["kernel"]["block_dim"] == job.tiling.block_dim and spec["output"]["bytes"] == 2 * 3 * 4


LINE_SOCS = {"950": "Ascend950PR_9579", "A3": "Ascend910_9391", "A2": "Ascend910B3", "310P": "Ascend310P3",
             "910": "Ascend910A"}


@pytest.mark.parametrize("op_name", list(OPS))
def test_registered_columns_are_mixes_aclnn_accepts(op_name: str, accepted_mixes) -> None:
    """Every OpDef column is a mix aclnn's validation accepts, listed once; same-dtype columns come first."""
    op = OPS[op_name]
    for soc in LINE_SOCS.values():
        arch = SOCS[soc].arch.npu_arch
        combos = op.kernel_combos(arch)
        assert len(set(combos)) == len(combos)
        accepted = {tuple(op.absent_as_self({"grad": g, "self": s, "target": t})[io.role]
                          for io in op.kernel_inputs) + (o,) for g, s, t, o in accepted_mixes(op, soc)}
        assert set(combos) <= accepted, soc
        n = len(op.supported_dtypes(arch))
        assert [len(set(c)) for c in combos[:n]] == [1] * n
        # the binary count per compute unit that docs/cann.md states: n^2 (+ n(n-1) with a gradOutput of its own)
        assert len(combos) == n * n + (0 if op.promotion.name == "SAME_AS_SELF" else n * (n - 1))


@pytest.mark.parametrize("line", list(LINE_SOCS))
@pytest.mark.parametrize("op_name", list(OPS))
def test_package_run_sends_only_registered_columns(op_name: str, line: str, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, accepted_mixes) -> None:
    """run_on_cann(package=...) for every float mix aclnn accepts: the stand-in device (the generated aclnn API) takes
    only the package's registered columns and computes with the golden model from the .bin files it is given; a
    registered mix arrives as it is, any other cast to aclnn's compute dtype; the result equals the golden model's
    for the caller's tensors."""
    import lossgrad.golden
    from lossgrad import dtypes as dt
    from lossgrad.cann import outdir
    from lossgrad.cann.op_host import kernel_combos

    op, soc = OPS[op_name], LINE_SOCS[line]
    (tmp_path / "cann" / "lib64").mkdir(parents=True)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "cann"))
    monkeypatch.setattr(detect, "_device_nodes", lambda: ["/dev/davinci0"])
    package = outdir.claim(tmp_path / "pkg", "test")
    (package / "opp" / "vendors" / "lossgrad" / "op_api" / "lib").mkdir(parents=True)
    columns = {tuple(d.acl_enum for d in c) for c in kernel_combos(op, SOCS[soc].arch.npu_arch)}
    sent: list[tuple[int, ...]] = []

    def device(spec: dict, run_dir: Path, env: dict, what: str, timeout: float) -> dict:
        args = spec["aclnn"]["args"]
        tensors = [a for a in args if a["kind"] in ("tensor", "null")]  # "null": an absent optional input
        out = next(a for a in args if a["kind"] == "output")
        by_role = {io.role: a["acl_dtype"] for io, a in zip(op.kernel_inputs, tensors) if a["kind"] == "tensor"}
        # an absent optional input selects the column that gives it self's dtype (OpSpec.absent_as_self)
        column = tuple(by_role.get(io.role, by_role["self"]) for io in op.kernel_inputs) + (out["acl_dtype"],)
        assert column in columns, f"{what}: unregistered column {column}"
        sent.append(column)
        by_enum = {d.acl_enum: d for d in dt.DType}
        arrays = {io.role: np.fromfile(a["path"], by_enum[a["acl_dtype"]].np_dtype).reshape(a["shape"])
                  for io, a in zip(op.kernel_inputs, tensors) if a["kind"] == "tensor"}
        scalars = [a["value"] for a in args if a["kind"] == "scalar"]
        attrs = dict(zip((a.name for a in op.attrs), scalars[1:]))
        result = getattr(lossgrad.golden, op.name)(*(arrays.get(i.role) for i in op.inputs), scalars[0],
                                                   **attrs, out_dtype=by_enum[out["acl_dtype"]].np_dtype)
        np.ascontiguousarray(result).tofile(spec["output"]["path"])
        return {"ok": True}

    monkeypatch.setattr(runner, "run_worker", device)
    rng = np.random.default_rng(7)
    attrs = {a.name: 0.5 for a in op.attrs if a.kernel_type == "Float"}  # a float attribute (beta) off its default
    fused = 0
    for g, s, t, o in accepted_mixes(op, soc):
        x = {r: rng.standard_normal((2, 3)).astype(d.np_dtype) for r, d in (("grad", g), ("self", s), ("target", t))}
        absent = op.absent_optional  # the optional inputs left out: null aclTensor*
        call = validate(op, x["grad"], x["self"], x["target"], *absent, "mean", attrs, out_dtype=o, soc=soc)
        got = runner.run_on_cann(call, "npu", package=package)
        mix = op.absent_as_self({"grad": g, "self": s, "target": t})
        own = tuple(mix[io.role].acl_enum for io in op.kernel_inputs) + (o.acl_enum,)
        fused += sent[-1] == own
        expected = getattr(lossgrad.golden, op.name)(x["grad"], x["self"], x["target"], *absent, "mean", **attrs,
                                                     out_dtype=o)
        assert got.dtype == o.np_dtype and np.array_equal(got, expected, equal_nan=True), (g, s, t, o)
    assert fused == len(columns)  # each registered column ran fused; every other mix was cast on the host
