"""Running a validated call with the CANN toolkit: CPU-debug ("cpu"), simulator ("sim") or device ("npu").

run_on_cann(call, backend) is what lossgrad's public functions dispatch to. Each run:
  1. needs CANN (ASCEND_HOME_PATH), else BackendUnavailable naming set_env.sh and the twin; "npu" also needs a device;
  2. prepares the kernel's view of the inputs and the tiling exactly as the twin does (lossgrad.runners.twin,
     lossgrad.tiling), so the same bytes reach the same kernel;
  3. builds (once, cached under the lossgrad cache directory) the kernel-launch variant for the call's dtypes:
     tikicpulib executable for "cpu", simulator-linked runner for "sim", kernel library for "npu";
  4. runs it in a subprocess with a computed environment, tensors as .bin files, every ACL code checked, and the
     output pre-filled with a canary so a kernel that never ran cannot pass.
"""
from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from .. import dtypes as dt
from ..errors import BackendUnavailable
from ..twin.build import cache_root  # one cache root for every backend
from ..validation import Call
from . import envs, outdir, project
from .detect import CannInstall, device_present, require_cann
from .kernel_sources import Variant, launch_symbol, variant_for_call
from .targets import NPUSIM_NAMES, BuildTarget, LegacySocListMissing, legacy_soc_list
from .worker import ABSENT as ABSENT_INPUT, CANARY

BACKENDS = ("cpu", "sim", "npu")
RUN_OK = "LOSSGRAD_RUN_OK"
FLOW_VAR = "LOSSGRAD_CANN_FLOW"  # force launch-legacy or launch-asc for sim/npu builds

__all__ = ["BACKENDS", "CannRunError", "device_present", "run_on_cann", "kernel_job", "build_variant"]


class CannRunError(RuntimeError):
    """A CANN build or run failed; the message names the step and keeps the log and run directory."""


# -- the kernel's inputs and tiling (as the twin prepares them) ------------------------------------------------------

@dataclass(frozen=True)
class KernelJob:
    call: Call
    variant: Variant
    inputs: tuple[np.ndarray | None, ...]  # kernel input order, C-contiguous, in the variant's dtypes (None: an
                                           # absent optional input)
    tiling: Any                     # lossgrad.tiling.TilingPlan: block_dim, tiling_key, data, workspace_bytes

    @property
    def out_bytes(self) -> int:
        return int(np.prod(self.call.out_shape, dtype=np.int64)) * self.call.out_dtype.itemsize


def kernel_job(call: Call) -> KernelJob:
    from ..runners.kernel_args import prepare  # the kernel views and tiling every backend launches

    args = prepare(call)
    ordered = tuple(args.ordered(call))
    # an absent optional input's type parameter is self's (OpSpec.absent_as_self): one kernel serves both variants
    variant = variant_for_call(call.op, call.soc, [args.dtypes[io.role] for io in call.op.kernel_inputs],
                               call.out_dtype, int(args.tiling.tiling_key))
    return KernelJob(call=call, variant=variant, inputs=ordered, tiling=args.tiling)


# -- building a variant (cached) -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BuiltVariant:
    variant: Variant
    flow: str
    mode: str
    out: Path
    executable: Path | None     # cpu/sim host runner
    library: Path | None        # npu kernel library
    symbol: str




def _cann_cache_dir(cann: CannInstall) -> Path:
    tag = hashlib.sha256(str(cann.root).encode()).hexdigest()[:8]
    return cache_root() / "cann" / f"{cann.version or 'unknown'}-{tag}"


def choose_flow(cann: CannInstall, target: BuildTarget, mode: str) -> str:
    if mode == "cpu":
        return "launch-legacy"  # tikicpulib + ICPU_RUN_KF, every architecture; FLOW_VAR is for sim/npu only
    forced = os.environ.get(FLOW_VAR)
    if forced:
        if forced not in ("launch-legacy", "launch-asc"):
            raise CannRunError(f"{FLOW_VAR}={forced}: expected launch-legacy or launch-asc")
        return forced
    if mode == "sim" and target.asc_sim_supported and (
            target.npusim_supported or (cann.root / "tools" / "simulator" / f"dav_{target.npu_arch}").is_dir()):
        # The documented simulator build links tools/simulator/dav_<arch>/lib (asc-devkit docs/zh
        # 调试调优/性能调优.md); the legacy flow links tools/simulator/<SOC_VERSION>/lib, which no public source
        # gives a 950 part.
        return "launch-asc"
    try:
        soc_list = legacy_soc_list(cann.root, cann.host_arch)
    except LegacySocListMissing as exc:
        raise CannRunError(f"{exc} (or set {FLOW_VAR}=launch-asc)") from None
    if soc_list is not None and target.in_legacy_soc_list(soc_list):
        return "launch-legacy"
    return "launch-asc"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _source_digest(project_dir: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(project_dir.rglob("*")):
        rel = path.relative_to(project_dir)
        if path.is_file() and not rel.parts[0].startswith("build"):
            h.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _find_product(out: Path, names: Sequence[str]) -> Path | None:
    for base in (out / f"install-{n}" for n in BACKENDS):
        for name in names:
            for sub in ("bin", "lib", "lib64"):
                if (base / sub / name).is_file():
                    return base / sub / name
    for name in names:  # ascendc_library() may leave its library in the build tree only
        found = sorted((out / "project").glob(f"build-*/**/{name}"))
        if found:
            return found[0]
    return None


def build_variant(cann: CannInstall, target: BuildTarget, variant: Variant, mode: str) -> BuiltVariant:
    flow = choose_flow(cann, target, mode)
    out = _cann_cache_dir(cann) / target.soc_version / f"{flow}-{mode}" / variant.name
    with _locked(out.parent / f".{variant.name}.lock"):
        plan = project.plan_build(flow, target.soc, [variant.op], out=out, run_mode=mode, cann=cann,
                                  variants=[variant])
        try:
            project.write_files(plan)
        except Exception as exc:
            raise CannRunError(f"rendering the {variant.name} sources into {out} failed: {exc}") from exc
        digest = _source_digest(plan.project_dir)
        stamp = out / f".built-{mode}"
        if not (stamp.is_file() and stamp.read_text() == digest):
            log = out / f"build-{mode}.log"
            with open(log, "w") as fh:
                def runner(argv: list[str], **kw: Any) -> "subprocess.CompletedProcess[bytes]":
                    return subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, **kw)
                try:
                    project.run_steps(plan, echo=lambda line: print(line, file=fh, flush=True), runner=runner)
                except (project.BuildFailed, OSError) as exc:
                    raise CannRunError(f"building {variant.name} for {target.soc_version} ({flow}, {mode}) failed: "
                                       f"{exc}\n--- last lines of {log} ---\n{_tail(log)}") from exc
            stamp.write_text(digest)
    suffix = project.runner_suffix(flow, mode)
    exe = _find_product(out, [variant.name + suffix])
    lib = _find_product(out, [f"lib{variant.name}.so"]) if mode != "cpu" else None
    if mode in ("cpu", "sim") and exe is None:
        raise CannRunError(f"the {mode} build of {variant.name} in {out} produced no {variant.name}{suffix}")
    if mode == "npu" and lib is None:
        raise CannRunError(f"the npu build of {variant.name} in {out} produced no lib{variant.name}.so")
    return BuiltVariant(variant, flow, mode, out, exe, lib, launch_symbol(variant, flow))


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# -- running ---------------------------------------------------------------------------------------------------------

def _write_inputs(run_dir: Path, job: KernelJob) -> tuple[Path, list[Path], Path]:
    tiling = run_dir / "tiling.bin"
    tiling.write_bytes(bytes(job.tiling.data))
    paths: list[Path] = []
    for io, arr in zip(job.call.op.kernel_inputs, job.inputs):
        if arr is None:  # an absent optional input: the launch runners take "-" for a null GM address
            paths.append(Path(ABSENT_INPUT))
            continue
        path = run_dir / f"input_{io.proto}.bin"
        arr.tofile(path)
        paths.append(path)
    return tiling, paths, run_dir / "output.bin"


def _runner_args(job: KernelJob, tiling: Path, inputs: Sequence[Path], output: Path) -> list[str]:
    t = job.tiling
    return [str(int(t.block_dim)), str(int(t.tiling_key)), str(int(t.workspace_bytes)), str(tiling),
            *map(str, inputs), str(output), str(job.out_bytes)]


def device_id() -> int:
    return int(os.environ.get("LOSSGRAD_DEVICE_ID", "0"))


def kernel_spec(job: KernelJob, built: BuiltVariant, tiling: Path, inputs: Sequence[Path],
                output: Path) -> dict[str, Any]:
    """The worker's job for a kernel-launch library on the device (run and bench add to it)."""
    assert built.library is not None
    return {"device": device_id(),
            "output": {"path": str(output), "bytes": job.out_bytes},
            "kernel": {"library": str(built.library), "symbol": built.symbol,
                       "block_dim": int(job.tiling.block_dim), "tiling": str(tiling),
                       "workspace_bytes": int(job.tiling.workspace_bytes), "inputs": [str(p) for p in inputs]}}


def npusim_executable() -> str | None:
    """npusim, or cannsim (its name before the 2026-07-30 release, kept as an alias), from PATH."""
    for name in NPUSIM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def simulator_route(cann: CannInstall, target: BuildTarget) -> str:
    """How a "sim" run goes: "npusim" (950 only: the board build run under npusim record, the way ops-nn documents
    for 950) when npusim/cannsim is on PATH, else "camodel" (a CMAKE_ASC_RUN_MODE=sim / RUN_MODE=sim build linked to
    the simulator libraries). A 950 part with neither is BackendUnavailable."""
    if not target.npusim_supported:
        return "camodel"
    if npusim_executable() is not None:
        return "npusim"
    if target.camodel_lib_dir(cann.root, cann.host_arch) is not None:
        return "camodel"
    raise BackendUnavailable(f"backend \"sim\" on {target.soc_version} needs CANN's npusim (or cannsim, its older "
                             f"name; x86 hosts) on PATH, or the camodel libraries under "
                             f"{cann.root}/tools/simulator/dav_{target.npu_arch}/lib; use backend \"cpu\" or the "
                             "host twin (backend=\"twin\", `--backend twin`)")


def _simulator_env(cann: CannInstall, target: BuildTarget, built: BuiltVariant, run_dir: Path) -> dict[str, str]:
    first: list[Path] = []
    dav_dir = target.camodel_lib_dir(cann.root, cann.host_arch)
    if dav_dir is not None and dav_dir.parent.name.startswith("dav_"):
        # CANN 9.x: runtime and driver are swapped for the camodel libraries under their usual names, as ops-nn's
        # build.sh does for --simulator (build_tooling.md §1.10); the links live in our cache directory.
        shim = built.out / "sim_shim"
        shim.mkdir(exist_ok=True)
        for src, alias in (("libruntime_camodel.so", "libruntime.so"), ("libnpu_drv_camodel.so", "libascend_hal.so")):
            link = shim / alias
            if (dav_dir / src).is_file() and not link.exists():
                link.symlink_to(dav_dir / src)
        first.append(shim)
    if built.library is not None:
        first.append(built.library.parent)
    return envs.run_environment("sim", target, cann.root, cann.host_arch, first_lib_dirs=first, run_dir=run_dir)


def _check_output(output: Path, expected: int, what: str) -> bytes:
    if not output.is_file():
        raise CannRunError(f"{what} wrote no output file {output}")
    data = output.read_bytes()
    if len(data) != expected:
        raise CannRunError(f"{what} wrote {len(data)} output bytes, expected {expected}")
    if expected and data.count(CANARY) == expected:
        raise CannRunError(f"{what}: the output still holds the canary pattern everywhere; the kernel did not run "
                           "or did not store its result")
    return data


def _run_process(cmd: list[str], env: Mapping[str, str], cwd: Path, what: str, timeout: float) -> str:
    try:
        proc = subprocess.run(cmd, env=dict(env), cwd=str(cwd), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise CannRunError(f"{what} timed out after {timeout:.0f} s (run directory {cwd})") from exc
    except OSError as exc:
        raise CannRunError(f"{what} could not start: {exc}") from exc
    (cwd / "stdout.log").write_text(proc.stdout)
    (cwd / "stderr.log").write_text(proc.stderr)
    if proc.returncode != 0:
        raise CannRunError(f"{what} exited with {proc.returncode} (run directory {cwd})\n{proc.stderr[-4000:]}")
    return proc.stdout


def worker_command(job_file: Path) -> list[str]:
    return [sys.executable, "-m", "lossgrad.cann.worker", str(job_file)]


def worker_env(base: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    package_parent = str(Path(__file__).resolve().parents[2])  # so the subprocess imports this lossgrad
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    return env


def run_worker(job_spec: dict[str, Any], run_dir: Path, env: Mapping[str, str], what: str,
               timeout: float) -> dict[str, Any]:
    job_file = run_dir / "job.json"
    job_file.write_text(json.dumps(job_spec, indent=1))
    try:
        proc = subprocess.run(worker_command(job_file), env=worker_env(env), cwd=str(run_dir), capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise CannRunError(f"{what} timed out after {timeout:.0f} s (run directory {run_dir})") from exc
    (run_dir / "stderr.log").write_text(proc.stderr)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    result = json.loads(lines[-1]) if lines else {"ok": False, "error": "the worker printed no result"}
    if proc.returncode != 0 or not result.get("ok"):
        raise CannRunError(f"{what} failed: {result.get('error', f'exit code {proc.returncode}')} "
                           f"(run directory {run_dir})\n{proc.stderr[-2000:]}")
    return result


@contextmanager
def run_dir_in(built_out: Path) -> Iterator[Path]:
    runs = built_out / "runs"
    runs.mkdir(exist_ok=True)
    path = runs / uuid.uuid4().hex[:12]
    path.mkdir()
    yield path
    shutil.rmtree(path)  # ours, and only on success: a failed run keeps its directory for inspection


def _installed_vendor_dir(package_out: Path) -> Path:
    vendors = sorted(p for p in (package_out / "opp" / "vendors").glob("*") if p.is_dir())
    if len(vendors) != 1:
        raise CannRunError(f"{package_out}/opp/vendors should hold exactly one installed package (lossgrad build "
                           f"--flow package --out {package_out}); found {len(vendors)}")
    return vendors[0]


def custom_aclnn_spec(job: KernelJob, run_dir: Path, tensor_paths: Sequence[Path], vendor_dir: Path,
                      cann: CannInstall) -> dict[str, Any]:
    """The installed custom package's aclnn<Op> call: inputs (OpDef order), the reduction string, the op's attrs
    (a float attr as double, build_tooling.md §1.9), then the output."""
    op = job.call.op
    args: list[dict[str, Any]] = [{"kind": "null"} if a is None else  # an absent optional input: nullptr
                                  {"kind": "tensor", "path": str(p), "shape": list(a.shape),
                                   "acl_dtype": dt.from_numpy(a.dtype).acl_enum}
                                  for p, a in zip(tensor_paths, job.inputs)]
    args.append({"kind": "scalar", "ctype": "string", "value": job.call.reduction.label})
    for a in op.attrs:
        ctype = "double" if a.kernel_type == "Float" else "bool"
        args.append({"kind": "scalar", "ctype": ctype, "value": job.call.attrs[a.name]})
    args.append({"kind": "output", "shape": list(job.call.out_shape), "acl_dtype": job.call.out_dtype.acl_enum,
                 "bytes": job.out_bytes})
    return {"function": "aclnn" + op.custom_op_type, "libraries": ["libcust_opapi.so"],
            "lib_dirs": [str(vendor_dir / "op_api" / "lib"), str(cann.lib64)], "args": args}


def require_backend(backend: str) -> CannInstall:
    """The CANN install backend "cpu", "sim" or "npu" runs on; BackendUnavailable without CANN or (for "npu")
    without a device. Cheap: no process is started."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    cann = require_cann(f'backend "{backend}"')
    if backend == "npu" and not device_present():
        raise BackendUnavailable(f"backend \"npu\": {cann.describe()} is installed but no Ascend device is visible "
                                 "(/dev/davinciN); use backend \"sim\" or \"cpu\", or the host twin "
                                 "(backend=\"twin\", `--backend twin`)")
    return cann


def run_on_cann(call: Call, backend: str, *, package: Path | None = None, timeout: float = 900.0) -> np.ndarray:
    """Run a validated call on CANN: backend "cpu" (CPU-debug), "sim" (simulator) or "npu" (device).

    With package (an output directory of `lossgrad build --flow package`), "npu" calls the installed custom aclnn
    two-stage API instead of the kernel-launch library. Raises BackendUnavailable without CANN or (for "npu")
    without a device, CannRunError when a build or run fails.
    """
    cann = require_backend(backend)
    if package is not None and backend != "npu":
        raise ValueError("package: the installed aclnn package runs on the device only (backend \"npu\")")
    if not call.launch:
        return np.zeros(call.out_shape, dtype=call.out_dtype.np_dtype)
    job = kernel_job(call)
    target = BuildTarget(call.soc)
    what = f"{call.op.name} on {target.soc_version} ({backend})"
    if package is not None:
        return _run_custom_aclnn(cann, job, Path(package), what, timeout)
    route = simulator_route(cann, target) if backend == "sim" else None
    built = build_variant(cann, target, job.variant, "npu" if route == "npusim" else backend)
    with run_dir_in(built.out) as run_dir:
        tiling, inputs, output = _write_inputs(run_dir, job)
        if route == "npusim":
            _run_under_npusim(cann, target, built, job, run_dir, (tiling, inputs, output), what, timeout)
        elif backend == "npu":
            assert built.library is not None
            env = envs.run_environment("npu", target, cann.root, cann.host_arch,
                                       first_lib_dirs=[built.library.parent])
            run_worker(kernel_spec(job, built, tiling, inputs, output), run_dir, env, what, timeout)
        else:
            assert built.executable is not None
            cmd = [str(built.executable), *_runner_args(job, tiling, inputs, output)]
            if backend == "cpu":
                env = envs.run_environment("cpu", target, cann.root, cann.host_arch, run_dir=run_dir)
            else:
                env = _simulator_env(cann, target, built, run_dir)
            stdout = _run_process(cmd, env, run_dir, what, timeout)
            if RUN_OK not in stdout:
                raise CannRunError(f"{what}: the runner exited 0 but did not report success (run directory "
                                   f"{run_dir})")
        data = _check_output(output, job.out_bytes, what)
    return np.frombuffer(data, dtype=call.out_dtype.np_dtype).reshape(call.out_shape).copy()


def npusim_command(npusim: str, cmd: list[str], run_dir: Path) -> list[str]:
    """`npusim record <app> -s Ascend950 -o <dir> -u "<app arguments>"` (ops-nn docs/zh/debug/npu_sim.md: the
    simulated program is the board build; -u passes its command-line arguments)."""
    return [npusim, "record", cmd[0], "-s", "Ascend950", "-o", str(run_dir / "npusim"), "-u", shlex.join(cmd[1:])]


def _run_under_npusim(cann: CannInstall, target: BuildTarget, built: BuiltVariant, job: KernelJob, run_dir: Path,
                      files: tuple[Path, Sequence[Path], Path], what: str, timeout: float) -> None:
    npusim = npusim_executable()
    if npusim is None or built.executable is None:
        raise CannRunError(f"{what}: npusim needs the board runner {job.variant.name}_run of the npu build in "
                           f"{built.out}" + ("" if npusim else " and npusim/cannsim on PATH"))
    tiling, inputs, output = files
    cmd = npusim_command(npusim, [str(built.executable), *_runner_args(job, tiling, inputs, output)], run_dir)
    assert built.library is not None
    env = envs.run_environment("npu", target, cann.root, cann.host_arch, first_lib_dirs=[built.library.parent])
    stdout = _run_process(cmd, env, run_dir, what + " under npusim", timeout)
    # npusim writes the program's output into npusim_*/npusim.log under -o, not necessarily to its own stdout.
    logs = [stdout] + [p.read_text(errors="replace") for p in sorted((run_dir / "npusim").rglob("*.log"))]
    if not any(RUN_OK in text for text in logs):
        raise CannRunError(f"{what}: the runner under npusim did not report success (run directory {run_dir})")


def _logical_inputs(job: KernelJob, dtypes: Mapping[str, dt.DType]) -> tuple[np.ndarray, ...]:
    """The inputs at their caller-visible shapes (broadcast views materialised), in the dtypes of the package column
    the call uses (op_host.package_dtypes: its own mix when registered, else cast on the host to aclnn's compute
    dtype): the installed aclnn op tiles from the tensors it is given, so it must see the shapes the divisor rules
    and KL's reduction refer to, not the kernel views the direct launches use."""
    call = job.call
    arrays = call.inputs
    return tuple(None if io.role not in arrays else
                 np.array(arrays[io.role], dtype=dtypes[io.role].np_dtype, order="C", copy=True)
                 for io in call.op.kernel_inputs)


def _run_custom_aclnn(cann: CannInstall, job: KernelJob, package: Path, what: str, timeout: float) -> np.ndarray:
    from .op_host import package_dtypes

    job = dataclasses.replace(job, inputs=_logical_inputs(job, package_dtypes(job.call)))
    outdir.inspect(package)  # refuses a directory lossgrad did not create
    vendor_dir = _installed_vendor_dir(package)
    target = BuildTarget(job.call.soc)
    runs = outdir.claim(package / "runs", "aclnn runs")
    run_dir = runs / uuid.uuid4().hex[:12]
    run_dir.mkdir()
    _tiling, inputs, output = _write_inputs(run_dir, job)
    env = envs.run_environment("npu", target, cann.root, cann.host_arch,
                               first_lib_dirs=[vendor_dir / "op_api" / "lib"], custom_opp=vendor_dir)
    spec = {"device": device_id(),
            "output": {"path": str(output), "bytes": job.out_bytes}, "primary": "aclnn",
            "aclnn": custom_aclnn_spec(job, run_dir, inputs, vendor_dir, cann)}
    run_worker(spec, run_dir, env, what + " via aclnn", timeout)
    data = _check_output(output, job.out_bytes, what)
    shutil.rmtree(run_dir)
    return np.frombuffer(data, dtype=job.call.out_dtype.np_dtype).reshape(job.call.out_shape).copy()

