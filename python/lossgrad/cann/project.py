"""Build plans: every file `lossgrad build` writes and every command it runs, for each flow and SoC.

A plan is computed without touching the disk or needing CANN (so --dry-run prints it exactly), then executed:
files are written below the output directory only, and each command runs in a subprocess with a computed
environment. Layout of an output directory OUT:

    OUT/.lossgrad-build                marker: OUT was created by lossgrad and may be reused by it
    OUT/project/                       the sources (msOpGen layout for --flow package, a kernel-launch project else)
    OUT/project/build_out/             package flow: CMake build dir, holds custom_opp_<os>_<arch>.run
    OUT/opp/vendors/<vendor>/          package flow: the installed package (--install-path=OUT/opp)
    OUT/project/build-<mode>/          launch flows: CMake build dir per run mode
    OUT/install-<mode>/{lib,bin}/      launch flows: kernel libraries and host runners
"""
from __future__ import annotations

import glob
import os
import platform
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..dtypes import DType
from ..registry import OpSpec
from ..socs import SOCS
from . import envs, kernel_sources, op_host, outdir, targets, templates
from .detect import CannInstall, host_arch
from .kernel_sources import Variant
from .targets import BuildTarget

FLOWS = ("package", "launch-legacy", "launch-asc")
RUN_MODES = envs.MODES
ROOT_PLACEHOLDER = Path("${ASCEND_HOME_PATH}")  # printed when planning without CANN (dry runs)
DEFAULT_VENDOR = "lossgrad"
CODEGEN_ORIGIN = "lossgrad.codegen.render_sources"


class PlanError(ValueError):
    """The requested build cannot be planned (unsupported flow/SoC/mode combination, bad option)."""


class BuildFailed(RuntimeError):
    def __init__(self, step: "Step", returncode: int) -> None:
        super().__init__(f"step failed with exit code {returncode}: {step.shell()}")
        self.step = step
        self.returncode = returncode


def _quote(arg: str) -> str:
    """shlex quoting, except that the CANN-root placeholder of a dry run stays expandable when pasted."""
    if str(ROOT_PLACEHOLDER) in arg and shlex.quote(arg.replace(str(ROOT_PLACEHOLDER), "X")) == \
            arg.replace(str(ROOT_PLACEHOLDER), "X"):
        return f'"{arg}"'
    return shlex.quote(arg)


@dataclass(frozen=True)
class Step:
    argv: tuple[str, ...]
    cwd: Path
    purpose: str
    set_env: tuple[tuple[str, str], ...] = ()
    unset_env: tuple[str, ...] = ()
    only_if_exists: Path | None = None    # skipped unless this path exists when the step is reached
    resolve_glob: str | None = None       # argv[0] is a prediction; run the single file matching this pattern

    def shell(self) -> str:
        env = [f"-u {name}" for name in self.unset_env] + [f"{k}={_quote(v)}" for k, v in self.set_env]
        prefix = f"cd {_quote(str(self.cwd))} && "
        if env:
            prefix += "env " + " ".join(env) + " "
        text = prefix + " ".join(_quote(a) for a in self.argv)
        if self.only_if_exists is not None:
            text = f"[ -e {shlex.quote(str(self.only_if_exists))} ] && {text}"
        return text


@dataclass(frozen=True)
class PlannedFile:
    relpath: str                 # relative to the output directory
    origin: str                  # where the content comes from
    content: str | None = None   # None: written at execution time by lossgrad.codegen
    executable: bool = False


@dataclass
class BuildPlan:
    flow: str
    target: BuildTarget
    run_mode: str | None
    ops: tuple[OpSpec, ...]
    out: Path
    cann_root: Path
    host_arch: str
    files: list[PlannedFile] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    run_env: dict[str, str] = field(default_factory=dict)   # set only in the environment of runs
    products: dict[str, str] = field(default_factory=dict)
    variants: list[Variant] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def project_dir(self) -> Path:
        return self.out / "project"

    def report(self, *, dry_run: bool) -> str:
        t = self.target
        lines = [f"lossgrad build{' (dry run: nothing is written or run)' if dry_run else ''}",
                 f"  flow: {self.flow}" + (f", run mode: {self.run_mode}" if self.run_mode else ""),
                 f"  soc: {t.soc_version} (product line {t.soc.line}, compute unit {t.compute_unit}, "
                 f"--npu-arch {t.npu_arch_flag}, --cce-aicore-arch {t.cce_aicore_arch}, "
                 f"CPU-debug library directory {t.cpu_debug_product_dir})",
                 f"  ops: {', '.join(op.custom_op_type for op in self.ops)}",
                 f"  CANN: {self.cann_root}",
                 f"  output directory: {self.out}", "", "files:"]
        lines.append(f"  {self.out / outdir.MARKER}  [marker]")
        for f in self.files:
            lines.append(f"  {self.out / f.relpath}  [{f.origin}]")
        lines += ["", "commands:"]
        for i, step in enumerate(self.steps, 1):
            lines.append(f"  {i}. {step.shell()}")
            lines.append(f"     # {step.purpose}")
        if self.run_env:
            lines += ["", "environment of runs against this build (set for those runs only, never exported):"]
            lines += [f"  {k}={v}" for k, v in self.run_env.items()]
        if self.products:
            lines += ["", "products:"] + [f"  {k}: {v}" for k, v in self.products.items()]
        if self.notes:
            lines += ["", "notes:"] + [f"  - {n}" for n in self.notes]
        return "\n".join(lines)


def predicted_run_package() -> str:
    """custom_opp_<os-release ID>_<processor>.run, as CANN names the package (build_tooling.md §1.7)."""
    os_id = "linux"
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("ID="):
                os_id = line[3:].strip().strip('"')
    except OSError:
        pass
    return f"custom_opp_{os_id}_{platform.machine()}.run"


def known_compute_units() -> list[str]:
    units: list[str] = []
    for soc in SOCS.values():
        if soc.compute_unit not in units:
            units.append(soc.compute_unit)
    return units


def _jobs(jobs: int | None) -> str:
    return str(jobs or os.cpu_count() or 1)


def _codegen_files(plan: BuildPlan) -> list[PlannedFile]:
    plan.notes.append(f"{CODEGEN_ORIGIN} also writes the shared kernel headers into {plan.project_dir / 'op_kernel'}")
    return [PlannedFile(f"project/{rel}", CODEGEN_ORIGIN) for rel in kernel_sources.expected_files(plan.ops)]


def _plan_package(plan: BuildPlan, vendor: str, jobs: int | None, build_type: str) -> None:
    units = [plan.target.compute_unit]
    presets = templates.render("cmake/templates/package/CMakePresets.json.j2", units=units,
                               known_units=known_compute_units(), vendor=vendor, build_type=build_type,
                               cann_root="" if plan.cann_root == ROOT_PLACEHOLDER else str(plan.cann_root))
    plan.files += [
        PlannedFile("project/CMakeLists.txt", "rendered from cmake/templates/package/CMakeLists.txt.j2",
                    templates.render("cmake/templates/package/CMakeLists.txt.j2", ops=plan.ops)),
        PlannedFile("project/CMakePresets.json", "rendered from cmake/templates/package/CMakePresets.json.j2",
                    presets),
        PlannedFile("project/build.sh", "copied from scripts/build.sh",
                    templates.source("scripts/build.sh").read_text(), executable=True),
        PlannedFile("project/cmake/config.cmake", "copied from cmake/config.cmake",
                    templates.source("cmake/config.cmake").read_text()),
        PlannedFile("project/cmake/func.cmake", "copied from cmake/func.cmake",
                    templates.source("cmake/func.cmake").read_text()),
    ]
    for rel, text in op_host.host_files(plan.ops).items():
        origin = f"rendered from {op_host.OP_TEMPLATE}" if rel.count("/") == 1 and rel.endswith(".cpp") \
            else f"copied from {rel}"
        plan.files.append(PlannedFile(f"project/{rel}", origin, text))
    plan.files += _codegen_files(plan)

    project = plan.project_dir
    build_out = project / "build_out"
    install_root = plan.out / "opp"
    vendor_dir = install_root / "vendors" / vendor
    package = build_out / predicted_run_package()
    plan.steps += [
        Step(("bash", "build.sh"), project, "configure (CMakePresets.json), compile the kernels for "
             f"{plan.target.compute_unit}, run op_build for the aclnn API and pack {package.name}",
             set_env=(("JOBS", _jobs(jobs)),), unset_env=envs.BUILD_UNSET),
        Step(("chmod", "-R", "u+w", str(install_root)), plan.out,
             "a previous install made its vendor directories read-only; make our own copy writable to reinstall",
             only_if_exists=install_root),
        Step((str(package), f"--install-path={install_root}"), project,
             f"install into {install_root} only; ASCEND_OPP_PATH and its vendors/config.ini are never touched",
             unset_env=envs.INSTALL_UNSET, resolve_glob=str(build_out / "custom_opp_*.run")),
    ]
    plan.run_env = {
        envs.CUSTOM_OPP_VAR: str(vendor_dir),
        "LD_LIBRARY_PATH": os.pathsep.join([str(vendor_dir / "op_api" / "lib"), str(plan.cann_root / "lib64"),
                                            "$LD_LIBRARY_PATH"]),
    }
    plan.products = {
        "package": str(package) + " (name predicted; the build's custom_opp_*.run is used)",
        "installed vendor directory": str(vendor_dir),
        "aclnn headers": str(vendor_dir / "op_api" / "include") + " (aclnn_<op>.h, one per op)",
        "aclnn library": str(vendor_dir / "op_api" / "lib" / "libcust_opapi.so"),
    }
    plan.notes.append("the package needs CANN's npu_op_* CMake API (find_package(ASC), CANN 8.5/9.x)")


def _check_legacy_soc(plan: BuildPlan) -> None:
    """ascendc_library() accepts the SoCs its toolkit lists (targets.legacy_soc_list); without a toolkit (dry runs)
    the list is checked when CMake configures."""
    t = plan.target
    if plan.cann_root == ROOT_PLACEHOLDER:
        plan.notes.append(f"the legacy flow accepts the SoCs listed in the toolkit's <ascendc.cmake dir>/"
                          f"{targets.LEGACY_SOC_LIST_FILE}; CMake checks {t.soc_version} against it when it configures")
        return
    try:
        soc_list = targets.legacy_soc_list(plan.cann_root, plan.host_arch)
    except targets.LegacySocListMissing as exc:
        raise PlanError(str(exc)) from None
    if soc_list is None:
        raise PlanError(f"the toolkit at {plan.cann_root} has no ascendc.cmake (the legacy ascendc_library() flow); "
                        "use --flow launch-asc")
    if not t.in_legacy_soc_list(soc_list):
        raise PlanError(f"{t.soc_version}: this toolkit's legacy ascendc_library() flow does not list it "
                        f"({targets.LEGACY_SOC_LIST_FILE}); use --flow launch-asc")


def _plan_launch(plan: BuildPlan, dtypes: Sequence[DType] | None, variants: Sequence[Variant] | None,
                 jobs: int | None, build_type: str | None) -> None:
    assert plan.run_mode is not None
    t = plan.target
    legacy = plan.flow == "launch-legacy"
    # The legacy CPU build is plain g++ + tikicpulib (every series, C310 included); only sim/npu need the SoC in
    # ascendc_library()'s list.
    if legacy and plan.run_mode != "cpu":
        _check_legacy_soc(plan)
    if not legacy and plan.run_mode == "cpu" and not t.asc_cpu_supported:
        raise PlanError(f"{t.soc_version}: CMAKE_ASC_RUN_MODE=cpu does not support {t.npu_arch_flag}; use "
                        "--flow launch-legacy for CPU-debug builds of this SoC")
    if not legacy and plan.run_mode == "sim" and not t.asc_sim_supported:
        raise PlanError(f"{t.soc_version}: CMAKE_ASC_RUN_MODE=sim does not support {t.npu_arch_flag} (CANN's CMake "
                        "stops with 'Unsupported ASC architecture for simulator'); use --flow launch-legacy "
                        "--run-mode sim")
    if legacy and plan.run_mode == "sim" and t.npusim_supported:
        raise PlanError(f"{t.soc_version}: the legacy flow's simulator build links "
                        f"tools/simulator/{t.soc_version}/lib, "
                        f"but CANN keeps the {t.npu_arch_flag} simulator under tools/simulator/dav_{t.npu_arch}; use "
                        "--flow launch-asc --run-mode sim (camodel), or --run-mode npu and run the board runner under "
                        "`npusim record` (cannsim in older toolkits)")
    refused = [op.name for op in plan.ops if not op.ours_support[t.soc.line]]
    if len(refused) == len(plan.ops):
        raise PlanError(f"{t.soc_version}: aclnn refuses every dtype of {', '.join(refused)} on the {t.soc.line} line, "
                        "and the project ships no kernel of it there")
    if refused:
        plan.ops = tuple(op for op in plan.ops if op.name not in refused)
        plan.notes.append(f"left out {', '.join(refused)}: aclnn refuses every dtype on the {t.soc.line} line")
    plan.variants = list(variants) if variants is not None else \
        kernel_sources.variants_for(plan.ops, t.soc, dtypes)
    if not plan.variants:
        raise PlanError(f"no kernel variant of {', '.join(op.name for op in plan.ops)} on {t.soc_version} uses only "
                        f"{', '.join(d.label for d in dtypes or ())}")
    template = "cmake/templates/launch_legacy/CMakeLists.txt.j2" if legacy else \
        "cmake/templates/launch_asc/CMakeLists.txt.j2"
    cmake_dirs = [str(d) for d in t.tikicpulib_cmake_dirs(plan.cann_root, plan.host_arch)]
    plan.files.append(PlannedFile("project/CMakeLists.txt", f"rendered from {template}",
                                  templates.render(template, soc_version=t.soc_version, variants=plan.variants,
                                                   npu_arch_flag=t.npu_arch_flag, tikicpulib_cmake_dirs=cmake_dirs,
                                                   cpu_debug_product_dir=t.cpu_debug_product_dir,
                                                   asc_cmake_dirs=targets.cmake_dirs(targets.ASC_CMAKE_DIRS),
                                                   ascendc_cmake_dirs=targets.cmake_dirs(targets.ASCENDC_CMAKE_DIRS),
                                                   auto_sync_option=targets.AUTO_SYNC_OPTION)))
    plan.files.append(PlannedFile("project/launch/lossgrad_bin_io.h", "copied from cmake/templates/launch/",
                                  templates.source("cmake/templates/launch/lossgrad_bin_io.h").read_text()))
    for v in plan.variants:
        plan.files.append(PlannedFile(f"project/launch/{v.name}.cpp", "rendered from cmake/templates/launch/"
                                      "variant.cpp.j2", kernel_sources.render_variant(v)))
        if legacy:
            plan.files.append(PlannedFile(f"project/launch/{v.name}_cpu_main.cpp", "rendered from "
                                          "cmake/templates/launch/main_cpu.cpp.j2",
                                          kernel_sources.render_main(v, "cpu", plan.flow, t.split_cores)))
        plan.files.append(PlannedFile(f"project/launch/{v.name}_acl_main.cpp", "rendered from "
                                      "cmake/templates/launch/main_acl.cpp.j2",
                                      kernel_sources.render_main(v, "acl", plan.flow, t.split_cores)))
    plan.files += _codegen_files(plan)

    mode = plan.run_mode
    build_dir = plan.project_dir / f"build-{mode}"
    install_dir = plan.out / f"install-{mode}"
    btype = build_type or ("Debug" if mode == "cpu" else "Release")
    configure = ["cmake", "-S", str(plan.project_dir), "-B", str(build_dir), f"-DCMAKE_BUILD_TYPE={btype}",
                 f"-DCMAKE_INSTALL_PREFIX={install_dir}", f"-DASCEND_CANN_PACKAGE_PATH={plan.cann_root}"]
    if legacy:
        configure += [f"-DSOC_VERSION={t.soc_version}", f"-DRUN_MODE={mode}"]
    else:
        configure += [f"-DCMAKE_ASC_RUN_MODE={mode}", f"-DCMAKE_ASC_ARCHITECTURES={t.npu_arch_flag}"]
    unset = envs.BUILD_UNSET
    plan.steps += [
        Step(tuple(configure), plan.out, f"configure the {mode} build of {len(plan.variants)} kernel variants "
             f"(a separate build directory per run mode)", unset_env=unset),
        Step(("cmake", "--build", str(build_dir), "-j", _jobs(jobs)), plan.out, "compile", unset_env=unset),
        Step(("cmake", "--install", str(build_dir)), plan.out, f"install into {install_dir}", unset_env=unset),
    ]
    lib_dirs = [install_dir / "lib"]
    env = envs.run_environment(mode, t, plan.cann_root, plan.host_arch, first_lib_dirs=lib_dirs,
                               run_dir=plan.out / "runs", base={}, existing_only=False)
    env["LD_LIBRARY_PATH"] += os.pathsep + "$LD_LIBRARY_PATH"
    plan.run_env = {k: v for k, v in env.items() if k != "ASCEND_HOME_PATH"}
    plan.products = {"host runners": str(install_dir / "bin" / f"<variant>{runner_suffix(plan.flow, mode)}"),
                     "variants": ", ".join(v.name for v in plan.variants)}
    if mode != "cpu":
        prefix = "aclrtlaunch_" if legacy else "lossgrad_launch_"
        plan.products["kernel libraries"] = f"{install_dir / 'lib' / 'lib<variant>.so'} (C entry {prefix}<kernel>)"
    if not legacy and mode != "npu" and t.npu_arch not in (2201, 3510):
        plan.notes.append(f"CANN documents CMAKE_ASC_RUN_MODE={mode} for dav-2201 and dav-3510; {t.npu_arch_flag} may "
                          "need --flow launch-legacy")
    if mode == "sim" and t.npusim_supported:
        plan.notes.append(f"this build links the camodel under tools/simulator/dav_{t.npu_arch}/lib; npusim (cannsim "
                          "before mid-2026, x86 only) instead runs the --run-mode npu build: `npusim record "
                          "<install-npu>/bin/<variant>_run -s Ascend950 -u \"<runner arguments>\"`")


def runner_suffix(flow: str, mode: str) -> str:
    """The host runner of a launch build: <variant>_cpu for the legacy flow's tikicpulib build, <variant>_run for
    every other build (the launch-asc template builds <variant>_run in every CMAKE_ASC_RUN_MODE)."""
    return "_cpu" if flow == "launch-legacy" and mode == "cpu" else "_run"


def plan_build(flow: str, soc: "str | object | None", ops: Sequence[OpSpec], *, out: Path,
               run_mode: str | None = None, cann: CannInstall | None = None, vendor: str = DEFAULT_VENDOR,
               dtypes: Sequence[DType] | None = None, variants: Sequence[Variant] | None = None,
               jobs: int | None = None, build_type: str | None = None) -> BuildPlan:
    if flow not in FLOWS:
        raise PlanError(f"unknown flow {flow!r}; expected one of {', '.join(FLOWS)}")
    if not ops:
        raise PlanError("no ops selected")
    if flow == "package":
        if run_mode is not None:
            raise PlanError("--run-mode applies to the kernel-launch flows; a package runs through aclnn")
    elif run_mode is None:
        run_mode = "npu"
    if run_mode is not None and run_mode not in RUN_MODES:
        raise PlanError(f"unknown run mode {run_mode!r}; expected one of {', '.join(RUN_MODES)}")
    if not vendor.replace("_", "").isalnum():
        raise PlanError(f"vendor name {vendor!r}: use letters, digits and underscores only")
    target = BuildTarget.of(soc)  # type: ignore[arg-type]
    plan = BuildPlan(flow=flow, target=target, run_mode=run_mode, ops=tuple(ops), out=Path(out).absolute(),
                     cann_root=cann.root if cann else ROOT_PLACEHOLDER,
                     host_arch=cann.host_arch if cann else host_arch())
    if flow == "package":
        _plan_package(plan, vendor, jobs, build_type or "Release")
    else:
        _plan_launch(plan, dtypes, variants, jobs, build_type)
    return plan


# -- execution ------------------------------------------------------------------------------------------------------

Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]


def write_files(plan: BuildPlan) -> list[Path]:
    """Claims the output directory and writes every planned file (codegen output included)."""
    outdir.claim(plan.out, f"lossgrad build --flow {plan.flow}")
    written = [outdir.write(plan.out, f.relpath, f.content, executable=f.executable)
               for f in plan.files if f.content is not None]
    if any(f.content is None for f in plan.files):
        written += kernel_sources.render_kernel_sources(outdir.inside(plan.out, "project"), plan.ops)
    return written


def _resolve(step: Step) -> Step:
    if step.resolve_glob is None or Path(step.argv[0]).exists():
        return step
    matches = sorted(glob.glob(step.resolve_glob))
    if len(matches) != 1:
        raise FileNotFoundError(f"expected exactly one file matching {step.resolve_glob}, found {len(matches)}")
    return Step((matches[0],) + step.argv[1:], step.cwd, step.purpose, step.set_env, step.unset_env,
                step.only_if_exists, None)


def step_environment(step: Step, base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    for name in step.unset_env:
        env.pop(name, None)
    env.update(dict(step.set_env))
    return env


def run_steps(plan: BuildPlan, *, echo: Callable[[str], None] = print, runner: Runner = subprocess.run,
              environ: Mapping[str, str] | None = None) -> None:
    for i, step in enumerate(plan.steps, 1):
        if step.only_if_exists is not None and not step.only_if_exists.exists():
            echo(f"[{i}/{len(plan.steps)}] skipped (no {step.only_if_exists}): {step.purpose}")
            continue
        step = _resolve(step)
        echo(f"[{i}/{len(plan.steps)}] {step.shell()}")
        try:  # every step works inside the output directory
            step.cwd.resolve().relative_to(plan.out.resolve())
        except ValueError:
            raise outdir.UnsafeOutputDir(f"step would run in {step.cwd}, outside {plan.out}") from None
        proc = runner(list(step.argv), cwd=str(step.cwd), env=step_environment(step, environ))
        if proc.returncode != 0:
            raise BuildFailed(step, proc.returncode)
