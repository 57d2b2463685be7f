"""The kernel-launch and CPU-debug glue. The per-dtype, per-key wrappers around the REAL rendered kernels compile, for
each launch flow and architecture, against a stand-in of the devkit's kernel_operator.h (the twin minus the op_build
tiling macros) and run on the twin with the launch path's own tiling read and compile-time key; the package path
still needs the generated GET_TILING_DATA (except on 1001). The tikicpulib and ACL runners compile warnings-clean
against the fake CANN headers; the CPU runner, linked with a trivial stand-in of tikicpulib, runs a stand-in kernel
end to end through the runner's .bin plumbing and output checks."""
from __future__ import annotations

import hashlib
import importlib
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from lossgrad.cann import kernel_sources, project, runner
from lossgrad.cann.kernel_sources import Variant, variant_for_call
from lossgrad.cann.targets import BuildTarget
from lossgrad.dtypes import DType
from lossgrad.registry import OPS, runs_on
from lossgrad.runners.twin import run_twin
from lossgrad.socs import get_soc
from lossgrad.twin import KernelFault, run_kernel
from lossgrad.validation import validate

from _cann_support import (CXX, CXXFLAGS, DEVKIT_STANDIN, FAKE_CANN, HERE, compile_cxx, fake_legacy_toolkit,
                           fake_render_kernel_sources, needs_cxx, standin_cpudebug_install)

twin_build = importlib.import_module("lossgrad.twin.build")  # the module (lossgrad.twin re-exports a function `build`)

pytestmark = needs_cxx

FAMILY_SOCS = {"A2": "Ascend910B1", "A3": "Ascend910_9391", "950": "Ascend950PR_9579", "310P": "Ascend310P3",
               "910": "Ascend910A"}


def _written_plan(tmp_path: Path, flow: str, soc: str, op_name: str, mode: str) -> project.BuildPlan:
    plan = project.plan_build(flow, soc, [OPS[op_name]], out=tmp_path / "out", run_mode=mode)
    project.write_files(plan)
    return plan


@pytest.mark.parametrize("family", sorted(FAMILY_SOCS))
def test_legacy_runners_compile(tmp_path: Path, family: str) -> None:
    """The tikicpulib and ACL runners of the legacy flow, against the fake CANN host headers."""
    soc = FAMILY_SOCS[family]
    # the ops that run on the family in rotation, the newest first: an op with optional inputs ("-" for an absent
    # one) is among them
    here = [name for name in OPS if runs_on(name, soc)]
    op_name = here[(sorted(FAMILY_SOCS).index(family) - 1) % len(here)]
    mode = "cpu" if family == "950" else "npu"
    plan = _written_plan(tmp_path, "launch-legacy", soc, op_name, mode)
    launch = plan.project_dir / "launch"
    includes = [FAKE_CANN, launch]
    # One runner of each kind: they differ only in names, key and argument count (checked by the op rotation).
    compile_cxx(sorted(launch.glob("*_cpu_main.cpp"))[-1:], include_dirs=includes)
    compile_cxx(sorted(launch.glob("*_acl_main.cpp"))[-1:], include_dirs=includes)
    main = next(launch.glob("*_cpu_main.cpp")).read_text()
    split = not get_soc(soc).arch.coupled
    assert ("    AscendC::SetKernelMode(KernelMode::AIV_MODE);" in main) is split
    assert "ICPU_RUN_KF(" in main and "ICPU_SET_TILING_KEY(" not in main  # the key is compiled into the kernel
    acl_main = next(launch.glob("*_acl_main.cpp")).read_text()
    assert f"aclrtlaunch_{OPS[op_name].entry_name}(" in acl_main
    assert "LG_CHECK(aclrtSynchronizeStream(stream));" in acl_main


def test_a_launch_build_of_an_op_aclnn_refuses_on_the_part_is_refused(tmp_path: Path) -> None:
    refused = [op for op in OPS.values() if not op.ours_support["310P"]]
    if not refused:
        pytest.skip("every op runs on 310P")
    with pytest.raises(project.PlanError, match="aclnn refuses every dtype"):
        project.plan_build("launch-legacy", "Ascend310P3", refused[:1], out=tmp_path / "out", run_mode="npu")
    first = next(op for op in OPS.values() if op.ours_support["310P"])
    both = project.plan_build("launch-legacy", "Ascend310P3", [first, refused[0]],
                              out=tmp_path / "out2", run_mode="npu")
    assert both.ops == (first,) and any("left out" in n for n in both.notes)


@pytest.mark.parametrize("family", sorted(FAMILY_SOCS))
def test_asc_runner_compiles(tmp_path: Path, family: str) -> None:
    """The find_package(ASC) wrappers define a C launcher only under LOSSGRAD_ASC_LAUNCHER (ASC language, <<<>>>);
    the ACL runner is plain C++."""
    plan = _written_plan(tmp_path, "launch-asc", FAMILY_SOCS[family], "kl_div_backward", "npu")
    launch = plan.project_dir / "launch"
    compile_cxx(sorted(launch.glob("*_acl_main.cpp"))[-1:], include_dirs=[FAKE_CANN, launch])
    wrappers = [p for p in sorted(launch.glob("*.cpp")) if not p.name.endswith("_main.cpp")]
    text = wrappers[0].read_text()
    entry = OPS["kl_div_backward"].entry_name
    assert f'extern "C" uint32_t lossgrad_launch_{entry}(' in text
    assert f"{entry}<<<block_dim, nullptr, stream>>>" in text
    assert "lossgrad_launch_" + entry in next(launch.glob("*_acl_main.cpp")).read_text()


def test_variant_wrapper_defines_dtypes_and_key() -> None:
    op = OPS["smooth_l1_loss_backward"]
    soc = get_soc("Ascend910B1")
    v = variant_for_call(op, soc, [DType.FLOAT16, DType.FLOAT32, DType.BFLOAT16], DType.FLOAT32, tiling_key=1)
    from lossgrad.cann.kernel_sources import render_variant
    text = render_variant(v)
    for io, dtype in zip(op.kernel_inputs, (DType.FLOAT16, DType.FLOAT32, DType.BFLOAT16)):
        assert f"#define DTYPE_{io.proto.upper()} {dtype.cpp}" in text
    assert f"#define DTYPE_{op.kernel_output.upper()} float" in text
    assert "#define LOSSGRAD_LAUNCH_TILING_KEY 1ULL" in text
    assert text.index("#define LOSSGRAD_LAUNCH_TILING_KEY") < text.index(f'#include "../op_kernel/{op.entry_name}.cpp"')
    assert "TILING_KEY_VAR" not in text.replace("pins TILING_KEY_VAR", "")  # no longer overridden
    with pytest.raises(Exception, match="bfloat16"):
        variant_for_call(op, get_soc("Ascend310P3"), [DType.BFLOAT16] * 3, DType.BFLOAT16, tiling_key=0)
    with pytest.raises(Exception, match="no tiling key 9"):
        variant_for_call(op, soc, [DType.FLOAT32] * 3, DType.FLOAT32, tiling_key=9)


# -- the REAL rendered kernels against what the devkit defines outside op_build --------------------------------------

# Compile definitions each launch flow adds: the legacy ascendc_library() flow compiles kernels with TILING_KEY_VAR=0
# (asc-devkit cmake/asc/legacy_modules/bisheng_intf.cmake); the find_package(ASC) flow adds none that matter here.
FLOW_DEFINES = {"launch-legacy": ("TILING_KEY_VAR=0",), "launch-asc": ()}
TWIN_FLAGS = ("-std=c++17", "-Wall", "-Wextra", "-Wno-unused-parameter")
# One family per architecture (A3 compiles exactly as A2). The ops rotate so each is compiled in both flows; every
# tiling-key branch is type-checked in every compile (the compiled-in key only selects which one runs), and the
# key and dtype combination rotate too.
_ARCH_FAMILIES = ["A2", "950", "310P", "910"]
_CASES = [(flow, family) for flow in FLOW_DEFINES for family in _ARCH_FAMILIES]


def _twin_syntax(source: Path, soc: str, defines: tuple[str, ...] = (), *,
                 extra_includes: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    """g++ -fsyntax-only of a kernel source against the devkit stand-in over the twin, for the SoC's architecture."""
    macro = twin_build.arch_defines(get_soc(soc))
    cmd = ["g++", *TWIN_FLAGS, "-fsyntax-only", f"-I{DEVKIT_STANDIN}", f"-I{twin_build.INCLUDE_DIR}",
           f"-I{twin_build.RUNTIME_DIR}", *(f"-I{d}" for d in extra_includes),
           *(f"-D{k}={v}" for k, v in macro.items()), *(f"-D{d}" for d in defines), str(source)]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.mark.parametrize("package", [False, True])
def test_devkit_standin_defines_what_the_devkit_defines(tmp_path: Path, package: bool) -> None:
    """The stand-in's macro set after preprocessing: no op_build tiling macro; KERNEL_TASK_TYPE_DEFAULT stays (the
    devkit defines it and supports it in kernel-launch projects); TILING_KEY_IS only for the 1001 package case."""
    src = tmp_path / "probe.cpp"
    src.write_text('#include "kernel_operator.h"\n')
    macro = twin_build.arch_defines(get_soc("Ascend910B1"))
    cmd = ["g++", "-std=c++17", "-E", "-dM", f"-I{DEVKIT_STANDIN}", f"-I{twin_build.INCLUDE_DIR}",
           f"-I{twin_build.RUNTIME_DIR}", *(f"-D{k}={v}" for k, v in macro.items()),
           *(["-DLG_STANDIN_PACKAGE"] if package else []), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    defined = {line.split()[1].split("(")[0] for line in proc.stdout.splitlines() if line.startswith("#define ")}
    for name in ("GET_TILING_DATA", "GET_TILING_DATA_WITH_STRUCT", "REGISTER_TILING_DEFAULT"):
        assert name not in defined
    assert ("TILING_KEY_IS" in defined) is package
    assert "KERNEL_TASK_TYPE_DEFAULT" in defined


@pytest.mark.parametrize("flow,family", _CASES, ids=[f"{f}-{fam}" for f, fam in _CASES])
def test_real_kernel_compiles_in_launch_flow(tmp_path: Path, real_kernels: None, flow: str, family: str) -> None:
    """The wrapper a launch build compiles, around the REAL rendered kernel, with only what the devkit defines: no
    GET_TILING_DATA, REGISTER_TILING_DEFAULT or TILING_KEY_IS (devkit_standin/kernel_operator.h)."""
    i = _CASES.index((flow, family))
    soc = FAMILY_SOCS[family]
    here = [name for name in OPS if runs_on(name, soc)]  # the ops the part runs
    op_name = here[(i + (i >= len(_ARCH_FAMILIES))) % len(here)]  # the second flow shifts by one arch
    plan = _written_plan(tmp_path, flow, soc, op_name, "cpu" if flow == "launch-legacy" else "npu")
    assert "REGISTER_TILING_DEFAULT" in (plan.project_dir / "op_kernel" / f"{OPS[op_name].entry_name}.cpp").read_text()
    v = plan.variants[(7 * i) % len(plan.variants)]  # vary the key and dtype combination too
    proc = _twin_syntax(plan.project_dir / "launch" / f"{v.name}.cpp", soc, FLOW_DEFINES[flow])
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.mark.parametrize("family", ["A2", "910"])  # the read differs by arch 1001 or not
def test_package_flow_uses_the_generated_tiling_macros(tmp_path: Path, real_kernels: None, family: str) -> None:
    """Without the launch define the kernel reads its tiling with op_build's GET_TILING_DATA (so it cannot compile
    against the devkit alone), except on 1001 (Atlas training), where GET_TILING_DATA and REGISTER_TILING_DEFAULT are
    unsupported and the kernel reads the struct itself, keeping only TILING_KEY_IS (supported there)."""
    soc = FAMILY_SOCS[family]
    op = OPS["l1_loss_backward"]
    plan = _written_plan(tmp_path, "launch-legacy", soc, op.name, "cpu")
    v = plan.variants[0]
    source = tmp_path / "package_kernel.cpp"  # what a package build compiles: DTYPE_ macros, no launch define
    source.write_text("".join(f"#define {n} {c}\n" for n, c in v.dtype_macros()) +
                      f'#include "{plan.project_dir / "op_kernel" / (op.entry_name + ".cpp")}"\n')
    proc = _twin_syntax(source, soc, ("LG_STANDIN_PACKAGE",))
    if get_soc(soc).arch.npu_arch == 1001:
        assert proc.returncode == 0, proc.stderr[-4000:]
    else:
        assert proc.returncode != 0 and "GET_TILING_DATA" in proc.stderr


# -- the CPU runner end to end (stand-in kernel, stand-in tikicpulib) -------------------------------------------------

@dataclass(frozen=True)
class _Tiling:
    block_dim: int
    tiling_key: int
    data: bytes
    workspace_bytes: int = 0


def _standin_tiling(total: int, block_dim: int = 1) -> _Tiling:
    # tests/cann/standin/op_kernel/lossgrad_tiling_data.h: u64 totalLength, u32 blockDim, u32 tileLength,
    # f32 coefficient, f32 beta, u32 flags, u32 reserved.
    return _Tiling(block_dim, 0, struct.pack("<QIIffII", total, block_dim, 0, 1.0, 1.0, 0, 0))


@pytest.fixture(scope="module")
def cpu_runner_exe(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Variant]:
    tmp = tmp_path_factory.mktemp("cpu_runner")
    op = OPS["mse_loss_backward"]
    soc = get_soc("Ascend910B1")
    variant = Variant(op, (DType.FLOAT32,) * 4, 0)
    plan = project.plan_build("launch-legacy", soc, [op], out=tmp / "out", run_mode="cpu", variants=[variant])
    with pytest.MonkeyPatch.context() as mp:  # module scope: the autouse stand-in fixture is not active yet
        mp.setattr(kernel_sources, "render_kernel_sources", fake_render_kernel_sources)
        project.write_files(plan)
    launch = plan.project_dir / "launch"
    exe = tmp / f"{variant.name}_cpu"
    compile_cxx([launch / f"{variant.name}_cpu_main.cpp", launch / f"{variant.name}.cpp",
                 HERE / "cxx" / "fake_tikicpulib_impl.cpp"],
                include_dirs=[FAKE_CANN, launch, plan.project_dir / "op_kernel"], defines=["FAKE_TIKICPULIB_IMPL"],
                output=exe)
    return exe, variant


def _job(variant: Variant, total: int) -> runner.KernelJob:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(6).astype(np.float32).reshape(2, 3) for _ in range(3)]
    roles = {io.role: a for io, a in zip(variant.op.kernel_inputs, arrays)}
    call = validate(variant.op, roles["grad"], roles["self"], roles["target"], "none", soc="Ascend910B1")
    return runner.KernelJob(call=call, variant=variant, inputs=tuple(arrays), tiling=_standin_tiling(total))


def test_cpu_runner_round_trip(tmp_path: Path, cpu_runner_exe: tuple[Path, Variant]) -> None:
    exe, variant = cpu_runner_exe
    job = _job(variant, total=6)
    tiling, inputs, output = runner._write_inputs(tmp_path, job)
    stdout = runner._run_process([str(exe), *runner._runner_args(job, tiling, inputs, output)], {}, tmp_path,
                                 "stand-in", timeout=60)
    assert runner.RUN_OK in stdout
    data = runner._check_output(output, job.out_bytes, "stand-in")
    got = np.frombuffer(data, np.float32).reshape(2, 3)
    a, b, c = job.inputs
    np.testing.assert_array_equal(got, a + 2 * b + 3 * c)  # kernel argument order = registry kernel order


def test_a_kernel_that_writes_nothing_cannot_pass(tmp_path: Path, cpu_runner_exe: tuple[Path, Variant]) -> None:
    exe, variant = cpu_runner_exe
    job = _job(variant, total=0)  # the stand-in kernel stores no element
    tiling, inputs, output = runner._write_inputs(tmp_path, job)
    runner._run_process([str(exe), *runner._runner_args(job, tiling, inputs, output)], {}, tmp_path, "stand-in", 60)
    with pytest.raises(runner.CannRunError, match="canary"):
        runner._check_output(output, job.out_bytes, "stand-in")


def test_runner_rejects_bad_arguments(tmp_path: Path, cpu_runner_exe: tuple[Path, Variant]) -> None:
    exe, variant = cpu_runner_exe
    job = _job(variant, total=6)
    tiling, inputs, output = runner._write_inputs(tmp_path, job)
    args = runner._runner_args(job, tiling, inputs, output)
    with pytest.raises(runner.CannRunError, match="exited with 2"):
        runner._run_process([str(exe), "0", *args[1:]], {}, tmp_path, "stand-in", 60)  # block dim 0
    with pytest.raises(runner.CannRunError, match="serves tiling key 0, not 1"):  # another library's key
        runner._run_process([str(exe), args[0], "1", *args[2:]], {}, tmp_path, "stand-in", 60)
    with pytest.raises(runner.CannRunError, match="exited with 1"):
        runner._run_process([str(exe), *args[:4], str(tmp_path / "missing.bin"), *args[5:]], {}, tmp_path,
                            "stand-in", 60)
    with pytest.raises(runner.CannRunError, match="expected"):
        runner._check_output(tiling, 3, "stand-in")


def _cxx(args: list[str]) -> None:
    assert CXX is not None
    proc = subprocess.run([CXX, *args], capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(args)}\n{proc.stderr}"


def test_cpu_debug_library_loads_for_every_soc(tmp_path: Path) -> None:
    """The CPU runner, linked to libcpudebug.so without an RPATH (as installed), loads the library through the run
    environment for every SoC, from its architecture's one product directory in the asc-tools layout
    (_cann_support.standin_cpudebug_install; 950PR_9579, 9589, 950DT_9582, 910B4-1 and 910_9362 have no per-SoC
    directory there)."""
    from lossgrad.cann import envs
    from lossgrad.cann.targets import CPU_DEBUG_PRODUCT_DIRS
    from lossgrad.socs import SOCS

    libs = {}
    for product in sorted(set(CPU_DEBUG_PRODUCT_DIRS.values())):
        libs[product] = tmp_path / "libs" / product / "libcpudebug.so"
        libs[product].parent.mkdir(parents=True)
        _cxx([*CXXFLAGS, "-shared", "-fPIC", f"-I{FAKE_CANN}", f'-DFAKE_CPUDEBUG_PRODUCT="{product}"',
              "-DFAKE_TIKICPULIB_IMPL", "-o", str(libs[product]), str(HERE / "cxx" / "fake_tikicpulib_impl.cpp")])
    root = standin_cpudebug_install(tmp_path / "cann", libs)
    op = OPS["mse_loss_backward"]
    variant = Variant(op, (DType.FLOAT32,) * 4, 0)
    plan = project.plan_build("launch-legacy", "Ascend910B1", [op], out=tmp_path / "out", run_mode="cpu",
                              variants=[variant])
    project.write_files(plan)
    launch = plan.project_dir / "launch"
    exe = tmp_path / "runner_cpu"
    _cxx([*CXXFLAGS, "-DFAKE_TIKICPULIB_IMPL", f"-I{FAKE_CANN}", f"-I{launch}",
          f"-I{plan.project_dir / 'op_kernel'}", str(launch / f"{variant.name}_cpu_main.cpp"),
          str(launch / f"{variant.name}.cpp"), "-o", str(exe),
          f"-L{libs['Ascend910B1'].parent}", "-lcpudebug"])
    job = _job(variant, total=6)
    tiling, inputs, output = runner._write_inputs(tmp_path, job)
    args = [str(exe), *runner._runner_args(job, tiling, inputs, output)]
    bare = subprocess.run(args, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert bare.returncode != 0 and "libcpudebug.so" in bare.stderr  # no RPATH: the environment must find it
    assert not (root / "tools" / "tikicpulib" / "lib" / "Ascend950PR_9579").exists()
    for soc in SOCS.values():
        target = BuildTarget(soc)
        env = envs.run_environment("cpu", target, root, "x86_64", base={"PATH": "/usr/bin:/bin"})
        output.unlink(missing_ok=True)
        proc = subprocess.run(args, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, f"{soc.name}: {proc.stderr}"
        assert runner.RUN_OK in proc.stdout
        assert f"cpudebug product: {CPU_DEBUG_PRODUCT_DIRS[soc.arch.npu_arch]}\n" in proc.stderr, soc.name


def test_choose_flow(tmp_path: Path) -> None:
    """sim/npu take the legacy flow where the toolkit has ascendc.cmake and its host_config.cmake lists the SoC (read
    from the toolkit: newer ones list the 950), else the ASC flow; CPU debug is always the legacy (tikicpulib) build."""
    from lossgrad.cann.detect import CannInstall

    root = tmp_path / "cann"
    (root / "compiler" / "tikcpp" / "ascendc_kernel_cmake").mkdir(parents=True)
    cann = CannInstall(root=root, host_arch="x86_64", version=None, version_source=None)
    a2, a5 = BuildTarget.of("Ascend910B1"), BuildTarget.of("Ascend950PR_9579")
    assert runner.choose_flow(cann, a2, "cpu") == "launch-legacy"
    assert runner.choose_flow(cann, a2, "npu") == "launch-asc"  # no ascendc.cmake in this toolkit
    fake_legacy_toolkit(root, None)
    with pytest.raises(runner.CannRunError, match="legacy_modules/host_config.cmake is missing"):
        runner.choose_flow(cann, a2, "npu")
    fake_legacy_toolkit(root, {"ascend910b": ["Ascend910B1", "ascend910b2"], "ascend310p": ["ascend310p3"]})
    assert runner.choose_flow(cann, a2, "npu") == "launch-legacy"
    assert runner.choose_flow(cann, a5, "sim") == "launch-asc"  # an older toolkit: no 950 in its list
    assert runner.choose_flow(cann, a5, "cpu") == "launch-legacy"
    fake_legacy_toolkit(root, {"ascend910b": ["ascend910b1"], "ascend950": ["ascend950pr_9599", "ascend950pr_9579"]})
    assert runner.choose_flow(cann, a5, "npu") == "launch-legacy"
    assert runner.choose_flow(cann, BuildTarget.of("Ascend310P3"), "npu") == "launch-asc"


# -- the launch path run on the twin: its own tiling read, its compiled-in key ------------------------------------

# On A2 the package path reads its tiling with GET_TILING_DATA, so the comparison is independent of the launch path's
# own read. (One architecture: each costs two cold twin builds. On 1001 every twin run of the project kernels, e.g.
# lossgrad verify, goes through the same read, against the golden model.)
# MSE, and each op with optional inputs, which the call leaves out (the runners pass a null GM address: "-")
LAUNCH_OPS = ["mse_loss_backward"] + [name for name, op in OPS.items() if len(op.inputs) > 3]


@pytest.mark.parametrize("family", ["A2"])
@pytest.mark.parametrize("op_name", LAUNCH_OPS)
def test_launch_variant_runs_on_the_twin(tmp_path: Path, real_kernels: None, family: str, op_name: str) -> None:
    """The launch wrapper around the real kernel, built against the devkit stand-in and run on the twin with a wrong
    run-time key, gives the package path's output bit for bit (tiling read from GM, key compiled in); a tiling
    buffer shorter than the struct faults in the twin (the portable read is bounds-checked)."""
    soc = FAMILY_SOCS[family]
    op = OPS[op_name]
    rng = np.random.default_rng(3)
    x, t = (rng.standard_normal((4, 64)).astype(np.float32) for _ in range(2))
    g = rng.standard_normal((1, 64)).astype(np.float32)  # broadcast gradOutput
    call = validate(op, g, x, t, *op.absent_optional, "none", soc=soc)
    job = runner.kernel_job(call)
    plan = project.plan_build("launch-legacy", soc, [op], out=tmp_path / "out", run_mode="cpu", variants=[job.variant])
    project.write_files(plan)
    kernel_dir = plan.project_dir / "op_kernel"
    # Next to the kernel, so its #include "kernel_operator.h" finds the stand-in before the twin's own header.
    shutil.copyfile(DEVKIT_STANDIN / "kernel_operator.h", kernel_dir / "kernel_operator.h")
    wrapper = plan.project_dir / "launch" / f"{job.variant.name}.cpp"
    # The twin's build cache hashes the wrapper and headers, not the included kernel .cpp: key it on that too.
    digest = hashlib.sha256((kernel_dir / f"{op.entry_name}.cpp").read_bytes()).hexdigest()[:16]

    def launch(tiling: bytes) -> np.ndarray:
        out = np.empty(call.out_shape, dtype=call.out_dtype.np_dtype)
        out.reshape(-1).view(np.uint8)[:] = 0xFF
        run_kernel(wrapper, op.entry_name, job.tiling.block_dim, [*job.inputs, out, np.zeros(0, np.uint8), tiling],
                   soc=soc, tiling_key=int(job.tiling.tiling_key) + 1000,
                   defines={"LG_KERNEL_DIGEST": f"0x{digest}"})
        return out

    got = launch(bytes(job.tiling.data))
    expected = run_twin(call).output
    assert got.tobytes() == expected.tobytes()
    with pytest.raises(KernelFault, match="past the end"):
        launch(bytes(job.tiling.data)[:-4])


def test_simulator_route_and_flow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulator builds follow CANN's layout: the documented camodel build (CMAKE_ASC_RUN_MODE=sim, linking
    tools/simulator/dav_<arch>/lib) where that directory exists, never the legacy per-SoC link for 950; 950 runs its
    board build under npusim (or cannsim, the older name) when one is on PATH, else the dav_3510 camodel, else it is
    unavailable with both named."""
    from lossgrad.cann.detect import CannInstall
    from lossgrad.errors import BackendUnavailable

    monkeypatch.delenv(runner.FLOW_VAR, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    root = tmp_path / "cann"
    fake_legacy_toolkit(root, {"ascend910b": ["ascend910b1"], "ascend950": ["ascend950pr_9579"]})
    cann = CannInstall(root=root, host_arch="x86_64", version=None, version_source=None)
    a2, a5, a1 = (BuildTarget.of(s) for s in ("Ascend910B1", "Ascend950PR_9579", "Ascend910A"))
    assert runner.choose_flow(cann, a2, "sim") == "launch-legacy"  # no dav_2201 simulator in this toolkit
    assert runner.choose_flow(cann, a5, "sim") == "launch-asc"    # listed, but the legacy sim link is per-SoC
    assert runner.choose_flow(cann, a5, "npu") == "launch-legacy"
    (root / "tools" / "simulator" / "dav_2201" / "lib").mkdir(parents=True)
    assert runner.choose_flow(cann, a2, "sim") == "launch-asc"
    assert runner.simulator_route(cann, a2) == "camodel" and runner.simulator_route(cann, a1) == "camodel"
    with pytest.raises(BackendUnavailable, match=r"npusim \(or cannsim.*tools/simulator/dav_3510/lib"):
        runner.simulator_route(cann, a5)
    dav = root / "tools" / "simulator" / "dav_3510" / "lib"
    dav.mkdir(parents=True)
    (dav / "libruntime_camodel.so").write_bytes(b"")
    assert runner.simulator_route(cann, a5) == "camodel" and a5.camodel_lib_dir(root, "x86_64") == dav
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "cannsim").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "cannsim").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    assert runner.npusim_executable() == str(bindir / "cannsim")
    assert runner.simulator_route(cann, a5) == "npusim" and runner.simulator_route(cann, a2) == "camodel"
    with pytest.raises(project.PlanError, match="dav_3510"):
        project.plan_build("launch-legacy", a5.soc, [OPS["l1_loss_backward"]], out=tmp_path / "o", run_mode="sim",
                           cann=cann)


def test_npusim_runs_the_board_runner(tmp_path: Path, cpu_runner_exe: tuple[Path, Variant],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The 950 simulator path: `npusim record <runner> -s Ascend950 -o DIR -u "<arguments>"` (ops-nn
    docs/zh/debug/npu_sim.md), with the program's output in npusim_*/npusim.log. A stand-in npusim that does what
    the doc describes runs the stand-in runner; success needs LOSSGRAD_RUN_OK in that log and a stored output."""
    from lossgrad.cann.detect import CannInstall

    exe, variant = cpu_runner_exe
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "npusim"
    # record APP -s SOC -o OUT -u ARGS: run APP with ARGS, its output into OUT/npusim_<ts>_<app>/npusim.log.
    script.write_text('#!/bin/sh\n[ "$1" = record ] || exit 9\napp=$2; shift 2\nwhile [ $# -gt 0 ]; do\n'
                      '  case $1 in -s) soc=$2;; -o) out=$2;; -u) args=$2;; esac; shift 2\ndone\n'
                      '[ "$soc" = Ascend950 ] || exit 8\nd="$out/npusim_0_$(basename $app)"; mkdir -p "$d"\n'
                      'eval "$app $args" > "$d/npusim.log" 2>&1\nexit 0\n')
    # (whether npusim passes the program's exit code on is not documented: the stand-in does not)
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    cann = CannInstall(root=tmp_path / "cann", host_arch="x86_64", version=None, version_source=None)
    target = BuildTarget.of("Ascend950PR_9579")
    built = runner.BuiltVariant(variant, "launch-asc", "npu", tmp_path, exe, tmp_path / "lib" / "libk.so", "k")
    job = _job(variant, total=6)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    files = runner._write_inputs(run_dir, job)
    runner._run_under_npusim(cann, target, built, job, run_dir, files, "stand-in", 60)
    data = runner._check_output(files[2], job.out_bytes, "stand-in")
    a, b, c = job.inputs
    np.testing.assert_array_equal(np.frombuffer(data, np.float32).reshape(2, 3), a + 2 * b + 3 * c)
    job0 = _job(variant, total=6)
    bad = tmp_path / "bad"
    bad.mkdir()
    files = runner._write_inputs(bad, job0)
    with pytest.raises(runner.CannRunError, match="did not report success"):
        runner._run_under_npusim(cann, target, built, job0, bad, (files[0], files[1][:2] + [bad / "no.bin"],
                                                                    files[2]), "stand-in", 60)


def test_bench_sim_reads_the_simulator_traces(tmp_path: Path, cpu_runner_exe: tuple[Path, Variant],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """bench --backend sim times from the simulator profilers' traces, not OpBasicInfo.csv: the camodel runner under
    a stand-in `msopprof simulator` (OPPROF_<ts>/simulator/trace.json in its working directory), 950's board runner
    under a stand-in `npusim record --gen-report` (report/results/kernel_0/core_0/trace_core0.json); each
    repetition's output is checked."""
    import dataclasses

    from lossgrad.cann import bench
    from lossgrad.cann.detect import CannInstall

    exe, variant = cpu_runner_exe
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "msopprof").write_text(
        '#!/bin/sh\n[ "$1" = simulator ] || exit 9\ncase $2 in --soc-version=Ascend910B1) ;; *) exit 8;; esac\n'
        'shift 2\n"$@" || exit 1\nmkdir -p OPPROF_0_x/simulator\n'
        'echo \'{"traceEvents": [{"ph": "X", "ts": 5, "dur": 20}, {"ph": "X", "ts": 7, "dur": 30.5}]}\' '
        '> OPPROF_0_x/simulator/trace.json\n')
    (bindir / "npusim").write_text(
        '#!/bin/sh\napp=$2; shift 2\nwhile [ $# -gt 0 ]; do case $1 in -o) out=$2; shift 2;; -u) args=$2; shift 2;;'
        ' --gen-report) rep=1; shift;; *) shift 2;; esac; done\nd="$out/npusim_0/report/results/kernel_0/core_0"\n'
        'mkdir -p "$d"\neval "$app $args" > "$out/npusim.log" 2>&1\n'
        '[ -n "$rep" ] && echo \'[{"ph": "X", "ts": 1, "dur": 9}]\' > "$d/trace_core0.json"\nexit 0\n')
    for tool in ("msopprof", "npusim"):
        (bindir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    cann = CannInstall(root=tmp_path / "cann", host_arch="x86_64", version=None, version_source=None)
    modes: list[str] = []

    def fake_build(cann_: CannInstall, target: BuildTarget, v: Variant, mode: str) -> runner.BuiltVariant:
        modes.append(mode)
        return runner.BuiltVariant(v, "launch-asc", mode, tmp_path / f"built-{mode}", exe, tmp_path / "libk.so", "k")

    (tmp_path / "built-sim").mkdir()
    (tmp_path / "built-npu").mkdir()
    monkeypatch.setattr(bench, "build_variant", fake_build)
    job = _job(variant, total=6)
    result = bench._bench_sim(cann, job, reps=2, timeout=60)
    assert modes == ["sim"] and result.samples == 2 and result.median_us == pytest.approx(32.5)
    job950 = dataclasses.replace(job, call=dataclasses.replace(job.call, soc=get_soc("Ascend950PR_9579")))
    result = bench._bench_sim(cann, job950, reps=1, timeout=60)
    assert modes == ["sim", "npu"] and result.median_us == pytest.approx(9.0)  # npusim runs the board build
    stale = _job(variant, total=0)  # the kernel stores nothing: the repetition fails, whatever the trace says
    with pytest.raises(runner.CannRunError, match="canary"):
        bench._bench_sim(cann, stale, reps=1, timeout=60)
