"""Run verification cases on a backend and judge them against the golden model by CANN's precision standard."""
from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import multiprocessing.pool
import os
import queue
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence, TextIO

import numpy as np

from .. import codegen
from ..progress import muted
from ..dtypes import DType
from ..dtypes import parse as parse_dtype
from ..golden import aclnn_kernel_dtype, compute_call, sum_slack, undetermined
from ..twin import UndeterminedResult
from ..precision import THRESHOLDS, Comparison, compare
from ..registry import get_op
from ..runners import run
from ..socs import get_soc
from ..tiling import knobs
from ..twin.build import arch_defines, cache_root
from ..validation import Call, validate
from .cases import Case, case_reduction
from .data import make_inputs


@dataclass(frozen=True)
class CaseResult:
    case: Case
    passed: bool
    comparison: Comparison | None     # against the judging reference
    comparison64: Comparison | None   # against the float64 golden, for information
    error: str | None
    seconds: float
    reference: str
    standard: str
    # Not judged: the expected output depends on device behaviour public sources leave open (golden.undetermined:
    # a float32 Inf/NaN on 310P/910). Neither passed nor failed; reported and counted apart.
    undetermined: bool = False

    @property
    def failed(self) -> bool:
        return not self.passed and not self.undetermined


def reference_mode(case: Case) -> str:
    """The judging reference. By default the dtype-faithful golden ("float32"): inputs upcast to float32 and evaluated
    in float32 in aclnn's operation order, then rounded once - how CANN's own golden scripts verify these ops
    (ops_semantics §1.7, §2.8, §3.7, §4.7). It makes float32 intermediate overflow and the double rounding of
    float16/bfloat16 results part of the expectation; the float64 golden's metrics are reported beside it."""
    return "float32" if case.reference == "auto" else case.reference


def judging_dtype(call: Call) -> DType:
    """The dtype whose threshold judges a call: the coarser of out's and the dtype aclnn's own kernel writes its result
    (KL: each term) in before the Cast to out's dtype. A float32 out of an all-float16 KL, or of float16 L1/MSE/
    SmoothL1, carries float16 rounding: one float32 ulp of difference before that rounding (the device's Exp, or
    aclnn's float32 accumulation order in ReduceSum against the golden's exact sum) moves the result by one float16
    ulp, which no float32 threshold admits (docs/semantics.md, "Intermediate roundings")."""
    kernel = aclnn_kernel_dtype(call)
    return kernel if THRESHOLDS[kernel] > THRESHOLDS[call.out_dtype] else call.out_dtype


def _judged_under_both_answers(call: Call, expected: np.ndarray, standard: str, scale: float,
                               slack: np.ndarray | None, exc: UndeterminedResult) -> np.ndarray:
    """The twin found the kernel's output depends on an open question where the golden's does not (e.g. a NaN that
    saturates to -0.0 one way and +0.0 the other). The case is judged under each answer: both must meet the
    standard against the golden (then the first is returned), else the kernel departs from aclnn's order on a part
    that answers that way, a failure."""
    from ..runners.twin import run_twin

    judge = judging_dtype(call)
    outs = {a: run_twin(call, undetermined=a).output for a in ("primary", "alternative")}
    for answer, out in outs.items():
        cmp = compare(out, expected, judge, standard, scale, small_values=True, slack=slack)
        if not cmp.passed:
            raise AssertionError(f"under the {answer} answer to an open question the output fails the golden, "
                                 f"which does not depend on it: {cmp.describe()} ({exc})")
    return outs["primary"]


def run_case(case: Case, backend: str = "twin", oracle: bool = False) -> CaseResult:
    """Run one case and judge it. `oracle`: also compare the case's float64 golden with PyTorch's float64 autograd
    (verify.oracle; torch must be installed): a disagreement fails the case."""
    t0 = time.perf_counter()
    ref = reference_mode(case)
    standard = "experimental" if case.standard == "auto" else case.standard
    try:
        tensors = make_inputs(case)
        call = validate(case.op, *tensors, case_reduction(case), case.attrs, out_dtype=case.dtypes[-1], soc=case.soc)
        expected = compute_call(call, ref)
        slack = sum_slack(call)  # a summed output: what float32 summation in any order may make
        with knobs(ub_budget=case.ub_budget or None, fold_tiles=case.fold_tiles or None):
            open_ = undetermined(call, ref)
            if open_ is not None and open_.any():
                try:  # still run it: any other fault fails the case; the output itself cannot be judged
                    run(call, backend)
                except UndeterminedResult:
                    pass
                return CaseResult(case, False, None, None, f"{int(open_.sum())} output element(s) depend on whether "
                                  "float32 saturates in saturation mode, which public sources leave open "
                                  "(docs/twin.md)", time.perf_counter() - t0, ref, standard, undetermined=True)
            try:
                actual = run(call, backend)
            except UndeterminedResult as exc:
                if backend != "twin":
                    raise
                actual = _judged_under_both_answers(call, expected, standard, case.threshold_scale, slack, exc)
        if actual.shape != expected.shape or actual.dtype != expected.dtype:
            raise AssertionError(f"result {actual.shape} {actual.dtype} != golden {expected.shape} {expected.dtype}")
        judge = judging_dtype(call)
        cmp = compare(actual, expected, judge, standard, case.threshold_scale, small_values=True, slack=slack)
        golden64 = compute_call(call, "float64")
        cmp64 = cmp if ref == "float64" else compare(actual, golden64, judge, standard, small_values=True,
                                                     slack=slack)
        error = None
        if oracle and call.launch:
            from .oracle import compare_with_torch
            error = compare_with_torch(call, golden64)
        return CaseResult(case, cmp.passed and error is None, cmp, cmp64, error, time.perf_counter() - t0, ref,
                          standard)
    except Exception as exc:  # a failing case is a result, not a crash of the whole run
        return CaseResult(case, False, None, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0, ref,
                          standard)


# ---- running many cases ---------------------------------------------------------------------------------------------
#
# On the twin, the kernels of all cases of one architecture are compiled into one library (a bundle: one compile
# of about 10 s instead of one of 3-10 s per kernel), one library per architecture, `jobs` compiles at a time. Cases
# run as soon as their library is ready, while the others compile, in `jobs` worker processes (a case is mostly
# Python and NumPy: threads would share one core through the GIL). Other backends run cases in `jobs` threads.
# Ctrl-C stops everything at once: compiles are killed (nothing partial reaches the cache), workers terminated,
# running twin launches cancelled, and KeyboardInterrupt is re-raised to the caller. SIGTERM is handled the same way
# (as Terminated, a KeyboardInterrupt). Without the twin's compiler the run fails before any case.

CHUNK = 8  # cases per task sent to a worker process (fewer round trips; still fine-grained for progress)

Notes = Callable[[str], None]


@dataclass
class _Group:
    """The cases of one architecture (same twin build defines) and the bundle of kernels they launch."""
    socs: list[str]
    kernels: list[tuple[str, dict[str, DType]]]
    cases: list[int]
    source: Path | None = None


def _kernel_dtypes(case: Case) -> dict[str, DType] | None:
    """The dtypes the case's kernel is instantiated with, when they are all floating (integer inputs are promoted
    first: such a case launches a kernel outside the bundle)."""
    try:
        op = get_op(case.op)
    except KeyError:  # an invalid case fails in run_case with its own message
        return None
    by_role = op.absent_as_self({i.role: d for i, d in zip(op.inputs, case.dtypes) if d})  # "": absent
    by_role["out"] = case.dtypes[-1]
    try:
        dts = {r: parse_dtype(by_role[r]) for r in codegen.kernel_roles(op)}
    except ValueError:
        return None
    if not all(d.is_float for d in dts.values()):
        return None
    return dts


def _group_key(soc: str, op: str) -> tuple:
    """What one twin build serves: the architecture (its build defines) and the kernels' number of GM arguments (a
    bundle's entry takes one count: an op with an optional input has one more)."""
    return tuple(sorted(arch_defines(get_soc(soc)).items())), len(get_op(op).kernel_inputs)


def _add_kernel(group: _Group, soc: str, op: str, dtypes: dict[str, DType] | None) -> None:
    if soc not in group.socs:
        group.socs.append(soc)
    if dtypes is not None and (op, dtypes) not in group.kernels:
        group.kernels.append((op, dtypes))


def _sorted_kernels(groups: Iterable[_Group]) -> None:
    """A stable order: the same selection of kernels gives the same bundle (a cache hit)."""
    for g in groups:
        g.kernels.sort(key=lambda k: (k[0], [k[1][r].label for r in codegen.kernel_roles(k[0])]))


def _plan(todo: Sequence[Case]) -> list[_Group]:
    """The cases grouped by the twin build they need (_group_key)."""
    groups: dict[tuple, _Group] = {}
    for i, case in enumerate(todo):
        try:
            key = _group_key(case.soc, case.op)
        except Exception:  # noqa: BLE001 - an invalid case fails in run_case with its own message
            groups.setdefault((), _Group([], [], [])).cases.append(i)
            continue
        g = groups.setdefault(key, _Group([], [], []))
        g.cases.append(i)
        _add_kernel(g, get_soc(case.soc).name, case.op, _kernel_dtypes(case))
    _sorted_kernels(groups.values())
    return list(groups.values())


def case_kernels(cases: Iterable[Case]) -> list[tuple[str, str, dict[str, DType]]]:
    """(SoC, op, dtypes by kernel role) of the kernel each case launches, where it can be bundled."""
    out = []
    for case in cases:
        dtypes = _kernel_dtypes(case)
        if dtypes is not None:
            out.append((case.soc, case.op, dtypes))
    return out


Bundle = tuple[Path, list[tuple[str, dict[str, DType]]], list[str]]  # (source, kernels (op, dtypes), SoCs)


def build_bundles(kernels: Iterable[tuple[str, str, Mapping[str, DType]]], reverse: bool = False) -> list[Bundle]:
    """The twin libraries of these (SoC, op, dtypes by kernel role) kernels, built as run_cases builds them: one
    bundle per _group_key (a bundle of 24 kernels compiles in about the time of five single ones), the largest
    first, or with `reverse` the smallest: two processes that need the same bundles at once build from opposite
    ends and meet in the middle (the build cache's lock makes each build happen once). Launch from them with
    `bundles_in_use`."""
    groups: dict[tuple, _Group] = {}
    for soc, op, dtypes in kernels:
        name = get_soc(soc).name
        _add_kernel(groups.setdefault(_group_key(name, op), _Group([], [], [])), name, get_op(op).name, dict(dtypes))
    todo = list(groups.values())
    _sorted_kernels(todo)
    todo.sort(key=lambda g: (-len(g.kernels), g.socs, g.kernels[0][0]), reverse=reverse)
    for g in todo:
        g.source = codegen.cached_bundle(g.kernels, cache_root())
        _bundle_build(g)
    return [(g.source, g.kernels, g.socs) for g in todo]


@contextlib.contextmanager
def bundles_in_use(bundles: Sequence[Bundle]) -> Iterator[None]:
    """Launch the bundles' kernels from them in this process's twin runs until the block ends (the registrations
    before it are then restored): for code that runs many kernels one call at a time, as test modules do."""
    from ..runners.twin import registered_bundles, restore_bundles

    saved = registered_bundles()
    try:
        _register(bundles)
        yield
    finally:
        restore_bundles(saved)


def _bundle_build(group: _Group) -> float:
    """Compile the group's bundle (a cache hit when built before); returns the compile seconds (0 when cached)."""
    from ..twin.build import BUNDLE_ENTRY, build

    soc = get_soc(group.socs[0])
    nargs = len(get_op(group.kernels[0][0]).kernel_inputs) + 3
    with muted():  # verify reports its builds itself
        built = build(group.source, BUNDLE_ENTRY, nargs, soc, label=f"{len(group.kernels)} kernels",
                      precompiled=False)
    return 0.0 if built.cached else built.seconds


def _register(bundles: Sequence[Bundle]) -> None:
    from ..runners.twin import use_bundle
    for source, kernels, socs in bundles:
        use_bundle(source, kernels, socs)


def _run_chunk(cases: list[Case], backend: str, bundles: list, oracle: Callable[[Case], bool] | None = None
               ) -> list[CaseResult]:
    """A worker process's task."""
    _register(bundles)
    with muted():  # the parent reports progress
        return [run_case(c, backend, oracle is not None and oracle(c)) for c in cases]


def note_writer(stream: TextIO) -> Notes:
    """run_cases' `notes` for a stream: one line each, on a terminal first clearing a progress bar drawn with \\r."""
    tty = stream.isatty()

    def note(line: str) -> None:
        stream.write(("\r\033[K" if tty else "") + line + "\n")
        stream.flush()
    return note


def _worker_init() -> None:
    # The parent takes Ctrl-C and a closed terminal's SIGHUP and terminates the workers; a worker must not die of
    # them half-way on its own. SIGTERM (Pool.terminate's signal) must kill a worker, also one forked while the
    # parent's SIGTERM handler was set; and a worker dies with the parent however the parent dies (SIGKILL).
    from ..twin.build import die_with_parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(signal.SIGKILL)
    _single_threaded_torch()


def _single_threaded_torch() -> None:
    """A forked worker of a parent whose torch already ran a parallel op (the oracle, the test suite) inherits
    OpenMP's thread-pool state without its threads: its first parallel op deadlocks or segfaults (GNU OpenMP is not
    fork-safe; seen as "a verify worker process died" in the suite). With one thread torch never enters that pool, and
    one thread per worker is what a pool of one worker per core wants anyway."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # handled as Ctrl-C by run_cases


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI cancellation, `timeout`, `kill`) or SIGHUP (a closed terminal) during run_cases: handled exactly
    as Ctrl-C (compiles killed, workers stopped, nothing partial left in the cache), then re-raised; the CLI exits
    128 + the signal's number (143 for SIGTERM, 129 for SIGHUP)."""

    def __init__(self, message: str, signum: int = signal.SIGTERM) -> None:
        super().__init__(message)
        self.signum = signum


def _on_stop_signal(signum: int, frame: object) -> None:
    raise Terminated(f"terminated ({signal.Signals(signum).name})", signum)


def _catch_sigterm() -> tuple[bool, dict]:
    """Route SIGTERM and SIGHUP to the main thread as Terminated for the run; returns (installed, the previous
    handlers). Off the main thread Python cannot set handlers: then the caller's own handling applies."""
    if threading.current_thread() is not threading.main_thread():
        return False, {}
    return True, {sig: signal.signal(sig, _on_stop_signal) for sig in STOP_SIGNALS}


def require_compiler() -> None:
    """The twin compiles every kernel: without the compiler, fail once, up front, naming it (not one FAIL per case,
    and no empty case counted as passed). The compiler is the one the twin build runs ($LOSSGRAD_CXX, else g++)."""
    from ..errors import BackendUnavailable
    from ..twin.build import CXX as cxx  # read at each call: tests and LOSSGRAD_CXX may change it
    if shutil.which(cxx) is None:
        raise BackendUnavailable(f"the twin compiles each kernel with a C++17 compiler and {cxx!r} is not on PATH "
                                 f"(install g++, or set LOSSGRAD_CXX to another compiler such as clang++)")


def run_cases(cases: Iterable[Case], backend: str = "twin", jobs: int = 2,
              progress: Callable[[int, int, int], None] | None = None, notes: Notes | None = None,
              oracle: Callable[[Case], bool] | None = None) -> list[CaseResult]:
    """Run cases concurrently and return their results in order. `progress(done, total, failed)` is called at once
    with done=0 and after every finished case; `notes(line)` receives what the run is doing meanwhile (building the
    kernel libraries). KeyboardInterrupt, and SIGTERM as Terminated, stop the run within a fraction of a second and
    are re-raised. `oracle(case)`: whether that case also compares its float64 golden with PyTorch (run_case)."""
    from ..runners.twin import registered_bundles, restore_bundles

    _, previous = _catch_sigterm()  # from the start: the bundle sources are written before the pool forks
    bundles = registered_bundles()  # this run's libraries serve this run only, also in this process (-j 1)
    try:
        return _run_cases(cases, backend, jobs, progress, notes, oracle)
    finally:
        restore_bundles(bundles)
        for sig, handler in previous.items():  # None: a handler not set from Python, i.e. the default
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


def _run_cases(cases: Iterable[Case], backend: str, jobs: int, progress: Callable[[int, int, int], None] | None,
               notes: Notes | None, oracle: Callable[[Case], bool] | None = None) -> list[CaseResult]:
    todo = list(cases)
    total = len(todo)
    if backend == "twin":
        require_compiler()
    results: list[CaseResult | None] = [None] * total
    events: queue.Queue = queue.Queue()
    say = notes or (lambda line: None)
    twin = backend == "twin"
    asked, jobs = jobs, bounded_jobs(jobs, total, twin)
    if asked > usable_cores() and twin:
        say(f"-j {asked}: {jobs} at a time ({usable_cores()} cores, {total} cases)")
    groups = _plan(todo) if twin else [_Group([], [], list(range(total)))]
    to_build = [g for g in groups if g.kernels]
    for g in to_build:
        g.source = codegen.cached_bundle(g.kernels, cache_root())
    use_processes = twin and jobs > 1 and total > CHUNK
    pool = None
    if use_processes:  # before any thread of ours starts: the workers fork a single-threaded parent
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        pool = ctx.Pool(jobs, initializer=_worker_init)
    threads: list[threading.Thread] = []
    ready: list[tuple[Path, list, list[str]]] = []  # bundles built so far (registered in every task)
    tasks: queue.Queue = queue.Queue()  # thread mode: (indices,) for the runner threads

    def submit(indices: list[int]) -> None:
        for k in range(0, len(indices), CHUNK):
            part = indices[k:k + CHUNK]
            if pool is not None:
                pool.apply_async(_run_chunk, ([todo[i] for i in part], backend, list(ready), oracle),
                                 callback=lambda rs, part=part: events.put(("results", part, rs)),
                                 error_callback=lambda exc: events.put(("crash", exc)))
            else:
                tasks.put(part)

    def runner() -> None:
        while True:
            part = tasks.get()
            if part is None:
                return
            try:
                with muted():
                    events.put(("results", part, [run_case(todo[i], backend, oracle is not None and oracle(todo[i]))
                                                  for i in part]))
            except BaseException as exc:  # noqa: BLE001 - LaunchCancelled on Ctrl-C; the main thread decides
                events.put(("crash", exc))
                return

    compile_slots = threading.Semaphore(jobs)

    def compiler(group: _Group) -> None:
        with compile_slots:
            try:
                events.put(("built", group, _bundle_build(group), None))
            except BaseException as exc:  # noqa: BLE001 - TwinCompileError, BuildCancelled
                events.put(("built", group, 0.0, exc))

    failed = done = built = 0
    t0 = time.perf_counter()
    try:
        if progress:
            progress(0, total, 0)
        if to_build:
            kernels = sum(len(g.kernels) for g in to_build)
            libraries = "library" if len(to_build) == 1 else "libraries"
            say(f"building {len(to_build)} kernel {libraries} ({kernels} kernels, one library per architecture; "
                f"cached ones are reused) while the cases run")
        if pool is None:
            for _ in range(jobs):
                threads.append(threading.Thread(target=runner, daemon=True))
        threads += [threading.Thread(target=compiler, args=(g,), daemon=True) for g in to_build]
        for t in threads:
            t.start()
        for g in groups:
            if not g.kernels:
                submit(g.cases)
        workers = [] if pool is None else list(pool._pool)  # Pool keeps its live workers in _pool
        while done < total:
            try:
                event = events.get(timeout=0.1)  # a short wait: the main thread takes Ctrl-C at once
            except queue.Empty:
                dead = _dead_workers(workers)  # Pool replaces a dead worker silently; its task never returns
                if dead:
                    raise RuntimeError(f"a verify worker process died ({dead}: a crash in a twin kernel or the "
                                       "oracle?); run `lossgrad verify -j 1` with the same selection to see which "
                                       "case") from None
                continue
            if event[0] == "built":
                _, group, seconds, error = event
                built += 1
                where = "/".join(group.socs)
                if error is None:
                    bundle = (group.source, group.kernels, group.socs)
                    ready.append(bundle)
                    _register([bundle])
                    say(f"kernel library {built}/{len(to_build)} ready: {where}, {len(group.kernels)} kernels"
                        + (f", compiled in {seconds:.1f} s" if seconds else ", cached"))
                elif isinstance(error, OSError):  # e.g. a full disk: every case would hit it again
                    raise error
                else:
                    say(f"kernel library for {where} failed ({type(error).__name__}); its cases build their own "
                        f"kernels: {str(error).splitlines()[0]}")
                submit(group.cases)
            elif event[0] == "results":
                _, part, rs = event
                for i, r in zip(part, rs):
                    results[i] = r
                    done += 1
                    failed += r.failed
                    if progress:
                        progress(done, total, failed)
            else:
                raise event[1]
    except BaseException:
        _stop(pool)
        for t in threads:  # the cancelled compiles remove their temporary directories before the process exits
            t.join(timeout=1.0)
        raise
    finally:
        for _ in range(jobs):
            tasks.put(None)
    if pool is not None:
        pool.close()
        pool.join()
    return [r for r in results if r is not None]


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask: a container's or taskset's limit), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def bounded_jobs(jobs: int, total: int, twin: bool) -> int:
    """`-j` bounded by the work: never more workers than there are chunks of cases to give them, and on the twin
    (CPU-bound worker processes and compiles) never more than the usable cores (-j 24 on 2 cores forked 24 workers
    for 16 cases)."""
    bound = max(1, math.ceil(total / CHUNK)) if twin else max(1, total)
    if twin:
        bound = min(bound, usable_cores())
    return max(1, min(jobs, bound))


def _dead_workers(workers: list) -> str:
    """How the pool's first workers that are gone ended ("" while all live): "pid 123 killed by SIGSEGV"."""
    ends = []
    for w in workers:
        code = w.exitcode
        if code is not None:
            ends.append(f"pid {w.pid} " + (f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}"))
    return ", ".join(ends)


def _stop(pool: "mp.pool.Pool | None") -> None:
    """Ctrl-C (or a crash): kill the compiles, stop the workers and any launch of this process."""
    from ..twin import cancel_launches
    from ..twin.build import cancel_builds

    cancel_builds()
    if pool is not None:
        _terminate(pool)
    cancel_launches()


def _terminate(pool: "mp.pool.Pool", patience: float = 3.0) -> None:
    """Pool.terminate, bounded. It SIGTERMs the workers and joins them, but a replacement the pool forked for a dead
    worker can stay blocked on the task queue's lock and never be joined (seen under load, after a worker crash):
    past `patience` seconds every worker still alive is killed (SIGKILL), which ends the join."""
    finished = threading.Event()

    def work() -> None:
        try:
            pool.terminate()
        finally:
            finished.set()

    threading.Thread(target=work, daemon=True).start()
    if finished.wait(patience):
        return
    for w in list(pool._pool):  # Pool keeps its live workers in _pool
        if w.exitcode is None:
            w.kill()
    finished.wait(patience)


def worst(results: Iterable[CaseResult]) -> dict[tuple[str, str], dict[str, float]]:
    """Per (op, output dtype): case count, failures, worst MERE and MARE (judged, and against float64)."""
    table: dict[tuple[str, str], dict[str, float]] = {}
    for r in results:
        key = (r.case.op, r.case.dtypes[-1])
        row = table.setdefault(key, {"cases": 0, "failed": 0, "undetermined": 0, "mere": 0.0, "mare": 0.0,
                                     "mere64": 0.0, "mare64": 0.0})
        row["cases"] += 1
        row["failed"] += r.failed
        row["undetermined"] += r.undetermined
        for cmp, suffix in ((r.comparison, ""), (r.comparison64, "64")):
            if cmp is not None and cmp.count:
                row["mere" + suffix] = max(row["mere" + suffix], cmp.mere)
                row["mare" + suffix] = max(row["mare" + suffix], cmp.mare)
    return dict(sorted(table.items()))


def _json_number(v: object) -> object:
    """Strict JSON has no Infinity/NaN: a non-finite metric (aclnn's documented float32 overflow, docs/verify.md) is
    written as the string "inf", "-inf" or "nan"."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: _json_number(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_number(x) for x in v]
    return v


def summary_json(results: list[CaseResult], wall: float) -> dict[str, object]:
    return _json_number({
        "passed": not any(r.failed for r in results),
        "cases": len(results),
        "failed": sum(r.failed for r in results),
        "undetermined": sum(r.undetermined for r in results),
        "wall_seconds": round(wall, 3),
        "worst": [{"op": op, "dtype": d, **{k: (int(v) if k in ("cases", "failed", "undetermined") else v)
                                            for k, v in row.items()}}
                  for (op, d), row in worst(results).items()],
        "results": [{
            "id": r.case.id, "passed": r.passed, "undetermined": r.undetermined, "error": r.error,
            "seconds": round(r.seconds, 4),
            "reference": r.reference, "standard": r.standard,
            "mere": None if r.comparison is None else r.comparison.mere,
            "mare": None if r.comparison is None else r.comparison.mare,
            "mere64": None if r.comparison64 is None else r.comparison64.mere,
            "mare64": None if r.comparison64 is None else r.comparison64.mare,
            "mixed_ratio": None if r.comparison is None else r.comparison.mixed_ratio,
            "special_mismatches": None if r.comparison is None else r.comparison.special_mismatches,
        } for r in results],
    })
