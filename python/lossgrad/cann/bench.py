"""Device and simulator timings for `lossgrad bench --backend npu|sim`.

npu: each repetition is timed with device events around one launch, after an L2 flush (a device memset of a buffer
larger than L2, queued on the same stream); our kernel and CANN's built-in aclnn op (when the toolkit exports it)
alternate A/B/A/B so clock and thermal drift hit both alike; medians are reported. sim: the camodel build of the host
runner runs under `msopprof simulator` (`msprof op simulator` on older toolkits), 950's board build under
`npusim record --gen-report`; the simulator profilers write instruction traces, not OpBasicInfo.csv (which only the
on-board profiler writes): OPPROF_*/simulator/trace.json with per-core files (asc-devkit docs/zh 调试调优/性能调优.md),
npusim_*/report/results/kernel_*/core_*/trace_core<N>.json (ops-nn docs/zh/debug/op_debug_prof.md). The kernel time is
the span of the traced events (simulated times are for reference only, per CANN's docs). Achieved bandwidth counts each
byte the kernel must move once: the inputs it reads (KL never reads self's values) plus the output, against the SoC
table's memory bandwidth.
"""
from __future__ import annotations

import json
import shutil
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import BackendUnavailable
from ..tiling.ub_plan import read_roles
from ..validation import Call
from . import envs
from .detect import CannInstall, device_present, require_cann
from .runner import (CannRunError, KernelJob, _check_output, _run_process, _runner_args, _simulator_env, _write_inputs,
                     build_variant, kernel_job, kernel_spec, npusim_command, npusim_executable, run_dir_in,
                     run_worker, simulator_route)
from .targets import BuildTarget

MIN_FLUSH_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class BenchResult:
    op: str
    soc: str
    backend: str
    shapes: tuple[tuple[int, ...], ...]   # kernel input shapes (kernel order), then the output
    dtypes: str
    samples: int
    median_us: float | None
    bytes_moved: int
    gbps: float | None
    bandwidth_fraction: float | None      # of the SoC table's memory bandwidth
    bandwidth_source: str
    aclnn_median_us: float | None = None  # CANN's built-in op, interleaved A/B
    notes: tuple[str, ...] = ()

    @property
    def speedup_vs_aclnn(self) -> float | None:
        if self.median_us and self.aclnn_median_us:
            return self.aclnn_median_us / self.median_us
        return None

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["speedup_vs_aclnn"] = self.speedup_vs_aclnn
        return d


def bytes_moved(job: KernelJob) -> int:
    """Bytes a perfect kernel moves: every input it reads once, the output written once."""
    reads = read_roles(job.call.op)
    read = sum(a.nbytes for io, a in zip(job.call.op.kernel_inputs, job.inputs) if io.role in reads)
    return int(read + job.out_bytes)


def flush_bytes(target: BuildTarget) -> int:
    l2 = target.soc.l2_bytes.value
    return max(MIN_FLUSH_BYTES, 2 * int(l2)) if l2 else MIN_FLUSH_BYTES


def builtin_aclnn_spec(call: Call, run_dir: Path, cann: CannInstall) -> dict[str, Any]:
    """CANN's own aclnn<Op> on the caller's arrays (aclnn argument order, its own casting and broadcasting)."""
    op = call.op
    args: list[dict[str, Any]] = []
    for i in op.inputs:  # aclnn's argument order; an absent optional input is a null tensor
        role, arr = i.role, call.inputs.get(i.role)
        if arr is None:
            args.append({"kind": "null"})
            continue
        path = run_dir / f"aclnn_{role}.bin"
        a = np.ascontiguousarray(arr)
        a.tofile(path)
        args.append({"kind": "tensor", "path": str(path), "shape": list(a.shape),
                     "acl_dtype": call.dtypes[role].acl_enum})
    args.append({"kind": "scalar", "ctype": "int64", "value": int(call.reduction.value)})
    for a in op.attrs:
        args.append({"kind": "scalar", "ctype": a.aclnn_type, "value": call.attrs[a.name]})
    n_out = int(np.prod(call.out_shape, dtype=np.int64)) * call.out_dtype.itemsize
    args.append({"kind": "output", "shape": list(call.out_shape), "acl_dtype": call.out_dtype.acl_enum,
                 "bytes": n_out})
    return {"function": op.aclnn, "optional": True, "args": args,
            "libraries": ["libopapi.so", "libopapi_nn.so", "libopapi_math.so"],
            "lib_dirs": [str(cann.lib64), str(cann.arch_dir / "lib64")]}


def _result(job: KernelJob, backend: str, times_us: Sequence[float], aclnn_us: Sequence[float],
            notes: Sequence[str]) -> BenchResult:
    call = job.call
    moved = bytes_moved(job)
    med = statistics.median(times_us) if times_us else None
    gbps = moved / (med * 1e-6) / 1e9 if med else None
    bw = call.soc.hbm_bandwidth
    fraction = (gbps * 1e9 / float(bw.value)) if gbps and bw.value else None
    return BenchResult(op=call.op.name, soc=call.soc.name, backend=backend,
                       shapes=tuple(tuple(a.shape) for a in job.inputs) + (tuple(call.out_shape),),
                       dtypes=", ".join(d.label for d in job.variant.combo), samples=len(times_us), median_us=med,
                       bytes_moved=moved, gbps=gbps, bandwidth_fraction=fraction,
                       bandwidth_source=f"{bw.source} ({bw.confidence})",
                       aclnn_median_us=statistics.median(aclnn_us) if aclnn_us else None, notes=tuple(notes))


def _bench_npu(cann: CannInstall, job: KernelJob, reps: int, warmup: int, compare_aclnn: bool,
               timeout: float) -> BenchResult:
    target = BuildTarget(job.call.soc)
    built = build_variant(cann, target, job.variant, "npu")
    assert built.library is not None
    with run_dir_in(built.out) as run_dir:
        tiling, inputs, output = _write_inputs(run_dir, job)
        spec = kernel_spec(job, built, tiling, inputs, output)
        spec["bench"] = {"reps": reps, "warmup": warmup, "flush_bytes": flush_bytes(target)}
        if compare_aclnn:
            spec["aclnn"] = builtin_aclnn_spec(job.call, run_dir, cann)
        env = envs.run_environment("npu", target, cann.root, cann.host_arch, first_lib_dirs=[built.library.parent])
        result = run_worker(spec, run_dir, env, f"bench {job.call.op.name}", timeout)
    times = result.get("times_ms", {})
    notes = [f"L2 flushed with {flush_bytes(target) >> 20} MiB between repetitions"]
    if "aclnn_error" in result:
        notes.append(f"built-in {job.call.op.aclnn} unavailable: {result['aclnn_error']}")
    return _result(job, "npu", [t * 1e3 for t in times.get("kernel", [])],
                   [t * 1e3 for t in times.get("aclnn", [])], notes)


def _trace_events(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    return [e for e in events if isinstance(e, dict)]


def read_trace_span_us(root: Path) -> float | None:
    """The simulated kernel time under a profiler output directory: from the first traced event's start to the last
    one's end, over the complete ("X") events of the Chrome-trace files (ts and dur in microseconds, the trace event
    format's unit). The all-core summary trace.json is used where it exists (msopprof simulator), else every
    per-core trace*.json (npusim's trace_core<N>.json). None when no trace holds a timed event."""
    files = sorted(root.rglob("trace.json")) or sorted(root.rglob("trace*.json"))
    starts: list[float] = []
    ends: list[float] = []
    for path in files:
        for e in _trace_events(path):
            ts, dur = e.get("ts"), e.get("dur")
            if e.get("ph") == "X" and isinstance(ts, (int, float)) and isinstance(dur, (int, float)):
                starts.append(float(ts))
                ends.append(float(ts) + float(dur))
    return (max(ends) - min(starts)) if starts else None


def simulator_profiler(soc_version: str) -> list[str]:
    """msopprof simulator (current toolkits, asc-devkit docs/zh 调试调优/性能调优.md), else msprof op simulator (ops-nn
    docs/zh/debug/op_debug_prof.md); both write OPPROF_*/simulator/ into the working directory or --output."""
    tool = shutil.which("msopprof")
    if tool is not None:
        return [tool, "simulator", f"--soc-version={soc_version}"]
    tool = shutil.which("msprof")
    if tool is not None:
        return [tool, "op", "simulator"]
    raise BackendUnavailable("simulator timings need CANN's msopprof (or msprof) on PATH (`source <cann>/set_env.sh`)")


def _bench_sim(cann: CannInstall, job: KernelJob, reps: int, timeout: float) -> BenchResult:
    target = BuildTarget(job.call.soc)
    route = simulator_route(cann, target)
    npusim = npusim_executable() if route == "npusim" else None
    profiler = None if npusim else simulator_profiler(target.soc_version)
    built = build_variant(cann, target, job.variant, "npu" if npusim else "sim")
    if built.executable is None:
        raise CannRunError(f"the build of {job.variant.name} in {built.out} produced no host runner")
    times: list[float] = []
    what = f"{'npusim' if npusim else 'the simulator profiler'} on {job.call.op.name}"
    with run_dir_in(built.out) as run_dir:
        tiling, inputs, output = _write_inputs(run_dir, job)  # once; each repetition profiles into its own dir
        if npusim:
            assert built.library is not None
            env = envs.run_environment("npu", target, cann.root, cann.host_arch,
                                       first_lib_dirs=[built.library.parent])
        else:
            env = _simulator_env(cann, target, built, run_dir)
        for rep in range(max(reps, 1)):
            prof = run_dir / f"prof{rep}"
            prof.mkdir()
            output.unlink(missing_ok=True)
            app = [str(built.executable), *_runner_args(job, tiling, inputs, output)]
            if npusim:
                cmd = npusim_command(npusim, app, prof) + ["--gen-report"]
            else:
                assert profiler is not None
                cmd = profiler + ([f"--output={prof}"] if profiler[1] == "op" else []) + app
            _run_process(cmd, env, prof, what, timeout)
            _check_output(output, job.out_bytes, what)  # the kernel ran and stored its result
            span = read_trace_span_us(prof)
            if span is None:
                raise CannRunError(f"no timed event in a simulator trace (trace*.json) under {prof}")
            times.append(span)
    note = "simulated time (npusim trace span)" if npusim else "simulated time (msopprof simulator trace span)"
    return _result(job, "sim", times, [], [note + "; for reference only"])


def bench_on_cann(calls: Sequence[Call], backend: str, *, reps: int = 20, warmup: int = 3,
                  compare_aclnn: bool = True, timeout: float = 1800.0) -> list[BenchResult]:
    """Time each call's kernel on the device ("npu") or the simulator ("sim")."""
    if backend not in ("npu", "sim"):
        raise ValueError(f"backend: expected npu or sim, got {backend!r}")
    cann = require_cann(f'lossgrad bench --backend {backend}')
    if backend == "npu" and not device_present():
        raise BackendUnavailable(f"lossgrad bench --backend npu: {cann.describe()} but no Ascend device "
                                 "(/dev/davinciN); use --backend sim, or the twin's counters (--backend twin)")
    results = []
    for call in calls:
        if not call.launch:
            continue
        job = kernel_job(call)
        if backend == "npu":
            results.append(_bench_npu(cann, job, reps, warmup, compare_aclnn, timeout))
        else:
            results.append(_bench_sim(cann, job, min(reps, 3), timeout))
    return results
