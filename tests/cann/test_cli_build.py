"""`lossgrad build`: --dry-run for every op and SoC family in every flow, and the fail-fast path without CANN.

The dry run must name, from the SoC table, SOC_VERSION / the compute unit / --npu-arch (CMAKE_ASC_ARCHITECTURES),
install under the output directory only, set ASCEND_CUSTOM_OPP_PATH only for runs (never for a build or install
step), never set ASCEND_OPP_PATH, and write nothing.
"""
from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from lossgrad.cann import outdir, project
from lossgrad.cann.cli_build import build
from lossgrad.registry import OPS
from lossgrad.socs import get_soc

from _cann_support import fake_legacy_toolkit

FAMILY_SOCS = {"A2": "Ascend910B1", "A3": "Ascend910_9391", "950": "Ascend950PR_9579", "310P": "Ascend310P3",
               "910": "Ascend910A"}


def _dry_run(tmp_path: Path, *args: str) -> tuple[str, Path]:
    out = tmp_path / "out"
    result = CliRunner().invoke(build, ["--out", str(out), "--dry-run", *args])
    assert result.exit_code == 0, result.output
    assert not out.exists(), "a dry run must write nothing"
    return result.output, out


def _commands(output: str) -> list[str]:
    block = output.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    return [ln.split(". ", 1)[1] for ln in block.splitlines() if re.match(r"\s+\d+\. ", ln)]


def _files(output: str) -> list[str]:
    block = output.split("\nfiles:\n", 1)[1].split("\n\n", 1)[0]
    return [ln.strip().split("  [", 1)[0] for ln in block.splitlines()]


def _run_env(output: str) -> dict[str, str]:
    if "environment of runs" not in output:
        return {}
    block = output.split("environment of runs", 1)[1].split("\n", 1)[1].split("\n\n", 1)[0]
    return dict(ln.strip().split("=", 1) for ln in block.splitlines())


def _no_opp_path_set(commands: list[str]) -> None:
    for cmd in commands:
        assert "ASCEND_OPP_PATH=" not in cmd, cmd
        assert "ASCEND_CUSTOM_OPP_PATH=" not in cmd, cmd  # never set for a build or install step


@pytest.mark.parametrize("family", sorted(FAMILY_SOCS))
@pytest.mark.parametrize("op", list(OPS))
def test_package_dry_run(tmp_path: Path, no_cann: None, family: str, op: str) -> None:
    soc = get_soc(FAMILY_SOCS[family])
    spec = OPS[op]
    output, out = _dry_run(tmp_path, "--soc", soc.name, "--ops", op, "--flow", "package")
    files = _files(output)
    for rel in ("project/CMakeLists.txt", "project/CMakePresets.json", "project/build.sh", "project/cmake/config.cmake",
                "project/cmake/func.cmake", f"project/op_host/{spec.entry_name}.cpp",
                "project/op_host/lossgrad_op_host.h", "project/op_host/tiling_core/lossgrad_tiling_core.h",
                f"project/op_kernel/{spec.entry_name}.cpp", "project/op_kernel/lossgrad_tiling_data.h"):
        assert str(out / rel) in files, rel
    assert all(f.startswith(str(out)) for f in files)
    assert f"compute unit {soc.compute_unit}" in output
    assert f"--npu-arch {soc.arch.npu_arch_flag}" in output
    commands = _commands(output)
    _no_opp_path_set(commands)
    build_cmd, _chmod, install_cmd = commands
    assert build_cmd.endswith("bash build.sh") and "-u ASCEND_CUSTOM_OPP_PATH" in build_cmd
    argv = shlex.split(install_cmd.split(" && ")[-1])
    run_file = [a for a in argv if a.endswith(".run")]
    assert len(run_file) == 1 and Path(run_file[0]).name.startswith("custom_opp_")
    assert Path(run_file[0]).parent == out / "project" / "build_out"
    assert f"--install-path={out / 'opp'}" in argv
    assert "-u ASCEND_OPP_PATH" in install_cmd and "-u ASCEND_CUSTOM_OPP_PATH" in install_cmd
    env = _run_env(output)
    assert env["ASCEND_CUSTOM_OPP_PATH"] == str(out / "opp" / "vendors" / "lossgrad")
    assert "ASCEND_OPP_PATH" not in env


def _preset(tmp_path: Path, soc: str) -> str:
    plan = project.plan_build("package", soc, list(OPS.values()), out=tmp_path / "o")
    return next(f.content for f in plan.files if f.relpath == "project/CMakePresets.json") or ""


@pytest.mark.parametrize("family", sorted(FAMILY_SOCS))
def test_package_presets_carry_the_compute_unit(tmp_path: Path, no_cann: None, family: str) -> None:
    soc = get_soc(FAMILY_SOCS[family])
    text = _preset(tmp_path, soc.name)
    assert f'"ASCEND_COMPUTE_UNIT": {{"type": "STRING", "value": "{soc.compute_unit}"}}' in text
    assert '"vendor_name"' in text and '"ASCEND_CANN_PACKAGE_PATH"' in text


@pytest.mark.parametrize("mode", ["cpu", "sim", "npu"])
@pytest.mark.parametrize("family", sorted(FAMILY_SOCS))
def test_launch_legacy_dry_run(tmp_path: Path, no_cann: None, family: str, mode: str) -> None:
    soc = get_soc(FAMILY_SOCS[family])
    args = ["--soc", soc.name, "--ops", "all", "--flow", "launch-legacy", "--run-mode", mode]
    if mode == "sim" and family == "950":
        # ascendc_library() would link tools/simulator/<SoC>/lib; CANN keeps 950's simulator under dav_3510.
        result = CliRunner().invoke(build, ["--out", str(tmp_path / "o"), "--dry-run", *args])
        assert result.exit_code != 0
        assert "tools/simulator/dav_3510" in result.output and "--flow launch-asc --run-mode sim" in result.output
        assert "npusim record" in result.output
        return
    output, out = _dry_run(tmp_path, *args)
    # Without a toolkit nothing is refused: the toolkit's own SoC list decides when CMake configures.
    assert ("legacy_modules/host_config.cmake" in output) is (mode != "cpu")
    commands = _commands(output)
    _no_opp_path_set(commands)
    configure = commands[0]
    assert f"-DSOC_VERSION={soc.name}" in configure and f"-DRUN_MODE={mode}" in configure
    assert f"-B {out / 'project' / f'build-{mode}'}" in configure
    assert f"-DCMAKE_INSTALL_PREFIX={out / f'install-{mode}'}" in configure
    assert commands[1].split(" && ")[-1].startswith("env -u ASCEND_CUSTOM_OPP_PATH cmake --build")
    assert commands[2].endswith(f"cmake --install {out / 'project' / f'build-{mode}'}")
    files = _files(output)
    assert str(out / "project" / "CMakeLists.txt") in files
    for op in OPS.values():
        for dtype in op.supported_dtypes(soc.arch.npu_arch):
            tag = dtype.label.replace("float", "f")
            names = [f for f in files if f"/launch/{op.entry_name}_{tag}" in f and f.endswith("_acl_main.cpp")]
            assert names, (op.name, dtype)
    assert "ASCEND_CUSTOM_OPP_PATH" not in _run_env(output)
    runners = output.split("host runners: ", 1)[1].split("\n", 1)[0]
    assert runners == str(out / f"install-{mode}" / "bin" / f"<variant>{'_cpu' if mode == 'cpu' else '_run'}")
    if mode == "cpu":
        # The installed CPU runner carries the RPATH of its architecture's one libcpudebug.so directory
        # (asc-tools cpudebug/CMakeLists.txt), and the run environment names the same directory.
        from lossgrad.cann.targets import CPU_DEBUG_PRODUCT_DIRS
        product = CPU_DEBUG_PRODUCT_DIRS[soc.arch.npu_arch]
        plan = project.plan_build("launch-legacy", soc.name, [OPS["mse_loss_backward"]], out=out, run_mode=mode)
        cmake = next(f.content for f in plan.files if f.relpath == "project/CMakeLists.txt") or ""
        assert "INSTALL_RPATH_USE_LINK_PATH TRUE" in cmake
        assert f"${{ASCEND_CANN_PACKAGE_PATH}}/tools/tikicpulib/lib/{product}\")" in cmake
        assert f"/tools/tikicpulib/lib/{product}:" in _run_env(output)["LD_LIBRARY_PATH"]


def test_launch_legacy_reads_the_toolkits_soc_list(tmp_path: Path) -> None:
    """With a toolkit, the legacy flow plans only the SoCs its host_config.cmake lists (read, not assumed: current
    toolkits list the 950), and names the file when it is missing."""
    from lossgrad.cann.detect import CannInstall

    root = tmp_path / "cann"
    cann = CannInstall(root=root, host_arch="x86_64", version=None, version_source=None)
    ops = [OPS["mse_loss_backward"]]

    def plan(soc: str, mode: str = "npu") -> project.BuildPlan:
        return project.plan_build("launch-legacy", soc, ops, out=tmp_path / "o", run_mode=mode, cann=cann)

    with pytest.raises(project.PlanError, match="no ascendc.cmake"):
        plan("Ascend910B1")
    fake_legacy_toolkit(root, None, cmake_dir="x86_64-linux/tikcpp/ascendc_kernel_cmake")
    with pytest.raises(project.PlanError, match=re.escape(str(root / "x86_64-linux" / "tikcpp" /
                                                              "ascendc_kernel_cmake" / "legacy_modules" /
                                                              "host_config.cmake"))):
        plan("Ascend910B1")
    fake_legacy_toolkit(root, {"ascend910b": ["ascend910b1"], "ascend310p": ["ascend310p3"]},
                        cmake_dir="x86_64-linux/tikcpp/ascendc_kernel_cmake")
    assert plan("Ascend910B1").variants
    with pytest.raises(project.PlanError, match="Ascend950PR_9579: this toolkit's legacy"):
        plan("Ascend950PR_9579")
    assert plan("Ascend950PR_9579", "cpu").variants  # CPU debug is tikicpulib, not ascendc_library()
    fake_legacy_toolkit(root, {"ascend910b": ["ascend910b1"], "ascend950": ["ascend950pr_9599", "ascend950pr_9579"]},
                        cmake_dir="x86_64-linux/tikcpp/ascendc_kernel_cmake")
    assert plan("Ascend950PR_9579").variants
    with pytest.raises(project.PlanError, match="Ascend310P3"):
        plan("Ascend310P3")


@pytest.mark.parametrize("mode", ["cpu", "sim", "npu"])
@pytest.mark.parametrize("family", sorted(FAMILY_SOCS))
def test_launch_asc_dry_run(tmp_path: Path, no_cann: None, family: str, mode: str) -> None:
    soc = get_soc(FAMILY_SOCS[family])
    args = ["--soc", soc.name, "--ops", "mse_loss_backward", "--flow", "launch-asc", "--run-mode", mode]
    if mode in ("cpu", "sim") and soc.arch.npu_arch == 1001:
        # CMakeASCInformation.cmake stops with FATAL_ERROR for dav-1001 in both modes (2201/2002/3510 only).
        result = CliRunner().invoke(build, ["--out", str(tmp_path / "o"), "--dry-run", *args])
        assert result.exit_code != 0 and "--flow launch-legacy" in result.output
        assert f"CMAKE_ASC_RUN_MODE={mode} does not support dav-1001" in result.output
        return
    output, out = _dry_run(tmp_path, *args)
    configure = _commands(output)[0]
    assert f"-DCMAKE_ASC_ARCHITECTURES={soc.arch.npu_arch_flag}" in configure
    assert f"-DCMAKE_ASC_RUN_MODE={mode}" in configure
    assert "SOC_VERSION" not in configure
    plan = project.plan_build("launch-asc", soc.name, [OPS["mse_loss_backward"]], out=out, run_mode=mode)
    cmake = next(f.content for f in plan.files if f.relpath == "project/CMakeLists.txt") or ""
    assert "find_package(ASC" in cmake
    # CANN's ASC language adds --npu-arch=${CMAKE_ASC_ARCHITECTURES} itself: the template must not repeat it.
    assert "--npu-arch=" not in cmake and "--npu-arch" not in configure
    # The template builds <variant>_run in every mode (CPU included), and the plan announces exactly that.
    assert "add_executable(${v}_run " in cmake and "${v}_cpu" not in cmake
    assert output.split("host runners: ", 1)[1].split("\n", 1)[0] == str(out / f"install-{mode}" / "bin" /
                                                                         "<variant>_run")


def test_bare_ascend910b_is_the_first_generation_910(tmp_path: Path, no_cann: None) -> None:
    output, _ = _dry_run(tmp_path, "--soc", "Ascend910B", "--ops", "l1_loss_backward", "--flow", "launch-legacy",
                         "--run-mode", "npu")
    output = output.replace(str(tmp_path), "<tmp>")
    assert "compute unit ascend910," in output and "--npu-arch dav-1001" in output
    assert "-DSOC_VERSION=Ascend910B " in _commands(output)[0] + " "
    assert "ascend910b" not in output and "dav-2201" not in output and "dav-c220" not in output
    plan = project.plan_build("package", "Ascend910B", [OPS["l1_loss_backward"]], out=tmp_path / "p")
    presets = next(f.content for f in plan.files if f.relpath == "project/CMakePresets.json") or ""
    assert '"value": "ascend910"}' in presets and '"ASCEND_COMPUTE_UNIT": {"type": "STRING", "value": "ascend910b"' \
        not in presets
    a2 = project.plan_build("package", "Ascend910B1", [OPS["l1_loss_backward"]], out=tmp_path / "q")
    assert a2.target.compute_unit == "ascend910b" and a2.target.npu_arch_flag == "dav-2201"


def test_dry_run_refuses_a_foreign_directory(tmp_path: Path, no_cann: None) -> None:
    out = tmp_path / "theirs"
    out.mkdir()
    (out / "keep.txt").write_text("not ours")
    result = CliRunner().invoke(build, ["--out", str(out), "--dry-run"])
    assert result.exit_code != 0 and "not empty and was not created by lossgrad" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_build_without_cann_stops_at_once(tmp_path: Path, no_cann: None) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(build, ["--out", str(out), "--soc", "Ascend910B1"])
    assert result.exit_code != 0
    for needle in ("ASCEND_HOME_PATH", "set_env.sh", "lossgrad build --dry-run", "lossgrad gen"):
        assert needle in result.output, needle
    assert "--backend" not in result.output  # build has no --backend option to suggest
    assert not out.exists()


def test_bad_options_are_reported(tmp_path: Path, no_cann: None) -> None:
    runner = CliRunner()
    r = runner.invoke(build, ["--out", str(tmp_path / "a"), "--dry-run", "--ops", "nope"])
    assert r.exit_code != 0 and "unknown op" in r.output
    r = runner.invoke(build, ["--out", str(tmp_path / "b"), "--dry-run", "--flow", "package", "--run-mode", "cpu"])
    assert r.exit_code != 0 and "--run-mode" in r.output
    r = runner.invoke(build, ["--out", str(tmp_path / "c"), "--dry-run", "--soc", "Ascend999"])
    assert r.exit_code != 0 and "unknown SoC" in r.output


def test_marker_semantics(tmp_path: Path) -> None:
    assert outdir.inspect(tmp_path / "new") == "create"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert outdir.inspect(empty) == "adopt"
    claimed = outdir.claim(tmp_path / "mine", "test")
    (claimed / "x").write_text("1")
    assert outdir.inspect(claimed) == "reuse"
    with pytest.raises(outdir.UnsafeOutputDir):
        outdir.inside(claimed, "../escape")
    with pytest.raises(outdir.UnsafeOutputDir):
        outdir.write(claimed, "/etc/passwd-lossgrad", "x")


def test_rewriting_an_unchanged_project_file_keeps_its_mtime(tmp_path: Path) -> None:
    import os

    path = outdir.write(tmp_path, "cmake/x.cmake", "set(A 1)\n")
    os.utime(path, (1, 1))
    outdir.write(tmp_path, "cmake/x.cmake", "set(A 1)\n")
    assert path.stat().st_mtime == 1  # a rebuild recompiles nothing
    outdir.write(tmp_path, "cmake/x.cmake", "set(A 2)\n")
    assert path.read_text() == "set(A 2)\n"


def test_every_build_searches_the_same_cann_cmake_directories() -> None:
    import re

    from lossgrad.cann import targets
    from lossgrad.project_files import project_root
    config = (project_root() / "cmake" / "config.cmake").read_text()  # static: copied into every package project
    hints = re.search(r"set\(LOSSGRAD_ASC_HINTS\s+(.*?)\)", config, re.S).group(1)
    assert re.findall(r'"([^"]+)"', hints) == targets.cmake_dirs(targets.ASC_CMAKE_DIRS)
    for flow, dirs in (("launch-asc", targets.ASC_CMAKE_DIRS), ("launch-legacy", targets.ASCENDC_CMAKE_DIRS)):
        plan = project.plan_build(flow, "Ascend910B1", [OPS["l1_loss_backward"]], out=Path("/nonexistent"),
                                  run_mode="npu")
        text = next(f.content for f in plan.files if f.relpath == "project/CMakeLists.txt")
        assert all(f'"{d}"' in text for d in targets.cmake_dirs(dirs)), flow


def test_every_device_build_states_auto_sync(tmp_path: Path) -> None:
    """--cce-auto-sync=on (the toolkit default) is stated in every device build: ascendc_compile_options in the legacy
    flow, an ASC compile option (not in CMAKE_ASC_RUN_MODE=cpu) in the find_package(ASC) flow, and the package's
    kernel options through npu_op_kernel_options; the legacy CPU-debug build is a host compile without it."""
    from lossgrad.cann import targets

    opt = targets.AUTO_SYNC_OPTION
    assert opt == "--cce-auto-sync=on"
    ops = [OPS["l1_loss_backward"]]

    def text(flow: str, rel: str, **kw: str) -> str:
        plan = project.plan_build(flow, "Ascend910B1", ops, out=tmp_path / flow, **kw)
        return next(f.content for f in plan.files if f.relpath == rel)

    legacy = text("launch-legacy", "project/CMakeLists.txt", run_mode="npu")
    assert f"ascendc_compile_options(${{v}} PRIVATE {opt})" in legacy
    assert legacy.count(opt) == 1 and legacy.index("if(RUN_MODE STREQUAL \"cpu\")") < legacy.index(opt)
    asc = text("launch-asc", "project/CMakeLists.txt", run_mode="npu")
    assert f"$<$<COMPILE_LANGUAGE:ASC>:{opt}>" in asc
    assert asc.index('if(NOT CMAKE_ASC_RUN_MODE STREQUAL "cpu")') < asc.index(opt)
    config = text("package", "project/cmake/config.cmake")
    assert re.search(r'set\(LOSSGRAD_KERNEL_OPTIONS "' + re.escape(opt) + '" CACHE STRING', config)
    func = text("package", "project/cmake/func.cmake")
    call = "npu_op_kernel_options(ascendc_kernels ALL OPTIONS ${LOSSGRAD_KERNEL_OPTIONS})"
    assert call in func and func.index("npu_op_code_gen(") < func.index(call) < func.index("npu_op_kernel_library(")


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None, reason="needs cmake and g++")
def test_source_package_ships_the_kernel_headers(tmp_path: Path) -> None:
    """The package project configured against a stand-in ASC package (tests/cann/standin/asc_package) registers its
    kernel sources so that CANN's copy step (_cann_support.standin_copy_kernel_sources) ships every kernel with the
    shared lossgrad_tiling_data.h: each shipped kernel compiles from the shipped directory alone (online compile of
    the source package). A KERNEL_FILE-only registration shipped the .cpp files without the header."""
    import platform
    import subprocess

    from _cann_support import ASC_PACKAGE_STANDIN, FAKE_CANN, standin_copy_kernel_sources

    root = tmp_path / "cann"
    asc_dir = root / f"{platform.machine()}-linux" / "lib64" / "cmake"
    asc_dir.mkdir(parents=True)
    shutil.copyfile(ASC_PACKAGE_STANDIN, asc_dir / "asc-config.cmake")
    ops = list(OPS.values())
    plan = project.plan_build("package", "Ascend910B1", ops, out=tmp_path / "out")
    project.write_files(plan)
    build = tmp_path / "build"
    proc = subprocess.run(["cmake", "-S", str(plan.project_dir), "-B", str(build), f"-DASCEND_CANN_PACKAGE_PATH={root}",
                           "-DASCEND_COMPUTE_UNIT=ascend910b"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ini = build / "autogen" / "ascendc_kernels_custom_source_files.ini"
    kernel_base = Path((build / "autogen" / "ascendc_kernels_src_base.txt").read_text())
    assert kernel_base == plan.project_dir / "op_kernel"
    shipped = tmp_path / "dynamic"
    standin_copy_kernel_sources(ini, kernel_base, shipped)
    assert (shipped / "lossgrad_tiling_data.h").is_file()
    for op in ops:
        source = shipped / f"{op.entry_name}.cpp"
        assert source.is_file()
        macros = [f"-DDTYPE_{p.upper()}=float" for p in [io.proto for io in op.kernel_inputs] + [op.kernel_output]]
        compiled = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", f"-I{FAKE_CANN}", *macros, str(source)],
                                  capture_output=True, text=True)
        assert compiled.returncode == 0, compiled.stderr[-2000:]
