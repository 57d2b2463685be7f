"""Bundles (several kernels in one library, as verify builds them), compile progress notices and cancellation."""
from __future__ import annotations

import importlib
import io
import sys
import threading
import time

import numpy as np
import pytest

from lossgrad import codegen, progress
from lossgrad.dtypes import DType
from lossgrad.runners import twin as twin_runner
from lossgrad.validation import validate
from lossgrad.verify.cases import Case
from lossgrad.verify.run import _plan

twin_build = importlib.import_module("lossgrad.twin.build")  # the module (lossgrad.twin re-exports a function `build`)

F32, F16 = DType.FLOAT32, DType.FLOAT16


def _dtypes(*d: DType) -> dict[str, DType]:
    return dict(zip(codegen.kernel_roles("mse_loss_backward"), d))


def test_a_bundled_kernel_runs_exactly_as_its_own_library() -> None:
    """The same call from a two-kernel bundle and from the kernel's own library: identical output and counters
    (the bundle compiles the same rendered source, in a namespace, behind a dispatch on the launch key)."""
    kernels = [("l1_loss_backward", _dtypes(F16, F32, F16, F32)), ("mse_loss_backward", _dtypes(F32, F32, F32, F32))]
    source = codegen.cached_bundle(kernels, twin_build.cache_root())
    rng = np.random.default_rng(7)
    g, s, t = (rng.uniform(-3, 3, (5, 37)).astype(np.float32) for _ in range(3))
    call = validate("mse_loss_backward", g, s, t, "none", soc="310P")
    alone = twin_runner.run_twin(call)
    try:
        twin_runner.use_bundle(source, kernels, ["Ascend310P3"])
        bundled = twin_runner.run_twin(call)
    finally:
        twin_runner.clear_bundles()
    assert bundled.report.kernel == twin_build.BUNDLE_ENTRY and alone.report.kernel != bundled.report.kernel
    assert alone.output.tobytes() == bundled.output.tobytes()
    assert alone.report.raw["cores"] == bundled.report.raw["cores"]
    assert alone.report.raw["buffers"] == bundled.report.raw["buffers"]


def test_bundle_source_hoists_includes_and_refuses_a_late_one() -> None:
    text = '#include "kernel_operator.h"\n// note\n#include "x.h"\nextern "C" void k(GM_ADDR a) {}\n'
    src = twin_build.bundle_source([(text, "k"), (text, "k")], 1)
    assert src.count('#include "x.h"') == 1 and src.index('#include "x.h"') < src.index("namespace twin_bundle_0")
    assert "case 1: twin_bundle_1::twin_bundle_1_entry(a0); break;" in src
    with pytest.raises(ValueError, match="#include after"):
        twin_build.bundle_source([("void f();\n#include \"y.h\"\n", "k")], 1)
    with pytest.raises(ValueError):
        twin_build.bundle_key(1, 1 << 32)
    assert twin_build.bundle_key(3, 5) == (3 << 32) | 5


def test_verify_plans_one_bundle_per_architecture_with_every_kernel_its_cases_launch() -> None:
    mk = lambda soc, op, dts: Case(op=op, soc=soc, shapes=((4,), (4,), (4,)), dtypes=dts, reduction="none")
    cases = [mk("Ascend910B1", "mse_loss_backward", ("float32",) * 4),
             mk("Ascend910_9391", "mse_loss_backward", ("float16",) * 4),  # same arch as 910B1: same library
             mk("Ascend910B1", "l1_loss_backward", ("float32",) * 4),
             mk("Ascend910B1", "mse_loss_backward", ("float32",) * 4),  # a kernel already listed
             mk("Ascend310P3", "l1_loss_backward", ("float16", "float32", "float16", "float32"))]
    groups = _plan(cases)
    assert [(g.socs, g.cases) for g in groups] == [(["Ascend910B1", "Ascend910_9391"], [0, 1, 2, 3]),
                                                   (["Ascend310P3"], [4])]
    assert [(op, d["grad"].label) for op, d in groups[0].kernels] == [
        ("l1_loss_backward", "float32"), ("mse_loss_backward", "float16"), ("mse_loss_backward", "float32")]


def test_a_slow_compile_is_announced_and_a_fast_one_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.setattr(progress, "_forced", True)  # as the command line sets it
    assert twin_build._run_compiler(["true"], "fast kernel")[0] == 0
    assert twin_build._run_compiler(["sleep", str(twin_build.NOTICE_AFTER_S + 0.3)], "slow kernel")[0] == 0
    with progress.muted():
        twin_build._run_compiler(["sleep", str(twin_build.NOTICE_AFTER_S + 0.3)], "muted kernel")
    assert err.getvalue() == "lossgrad: compiling slow kernel...\n"


def test_notices_follow_the_terminal_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(progress, "_forced", None)
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not progress.enabled()  # a script's or a test's log: quiet
    monkeypatch.setattr(sys, "stderr", Tty())
    assert progress.enabled()  # a person watching
    monkeypatch.setenv(progress.ENV, "0")
    assert not progress.enabled()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv(progress.ENV, "1")
    assert progress.enabled()


def test_cancel_builds_kills_a_running_compile_at_once() -> None:
    outcome: list[BaseException] = []

    def compile_forever() -> None:
        try:
            twin_build._run_compiler(["sleep", "60"], "endless")
        except BaseException as exc:  # noqa: BLE001
            outcome.append(exc)

    worker = threading.Thread(target=compile_forever)
    worker.start()
    deadline = time.monotonic() + 10
    while not twin_build._running and time.monotonic() < deadline:
        time.sleep(0.01)
    t0 = time.monotonic()
    assert twin_build.cancel_builds() == 1
    worker.join(5)
    assert time.monotonic() - t0 < 1.0 and not worker.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], twin_build.BuildCancelled)


def test_run_cases_in_threads_reports_progress_from_the_first_line() -> None:
    """jobs=1 runs cases in a thread of this process (the bundle is test 1's: same kernels, a cache hit)."""
    from lossgrad.verify.run import run_cases

    mk = lambda op, dts, shape: Case(op=op, soc="Ascend310P3", shapes=(shape, shape, shape), dtypes=dts,
                                     reduction="none")
    cases = [mk("mse_loss_backward", ("float32",) * 4, (33,)), mk("mse_loss_backward", ("float32",) * 4, (0, 3)),
             mk("l1_loss_backward", ("float16", "float32", "float16", "float32"), (5, 7))]
    seen: list[tuple[int, int, int]] = []
    notes: list[str] = []
    try:
        results = run_cases(cases, jobs=1, progress=lambda *a: seen.append(a), notes=notes.append)
    finally:
        twin_runner.clear_bundles()
    assert [r.passed for r in results] == [True, True, True], [r.error for r in results]
    assert seen[0] == (0, 3, 0) and seen[-1] == (3, 3, 0)
    assert notes[0].startswith("building 1 kernel library (2 kernels") and "ready: Ascend310P3" in notes[1]


def test_a_worker_process_that_dies_fails_the_run_instead_of_hanging(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that crashes its process (not a KernelFault: a real crash) must not leave verify waiting forever."""
    import os

    from lossgrad.verify import run as verify_run

    real = verify_run.run_case

    def crash_on_the_empty_case(case: Case, backend: str = "twin", oracle: bool = False):  # in the forked workers
        if case.shapes[1] == (0, 3):
            os._exit(139)
        return real(case, backend, oracle)

    monkeypatch.setattr(verify_run, "run_case", crash_on_the_empty_case)
    mk = lambda shape: Case(op="mse_loss_backward", soc="Ascend310P3", shapes=(shape, shape, shape),
                            dtypes=("float32",) * 4, reduction="none")
    cases = [mk((n,)) for n in range(1, 12)] + [mk((0, 3))]
    with pytest.raises(RuntimeError, match="worker process died"):
        verify_run.run_cases(cases, jobs=2)
    twin_runner.clear_bundles()


def test_a_long_twin_launch_is_announced(monkeypatch: pytest.MonkeyPatch) -> None:
    """`lossgrad bench` runs 16M-element kernels for seconds: a launch still running after a second says so, naming
    the kernel (threshold lowered here; a stand-in launch that takes 0.3 s, and one that returns at once)."""
    import signal
    import time

    import lossgrad.twin as twin

    class Launch:
        def __init__(self, seconds: float) -> None:
            self.seconds = seconds

        def twin_launch(self, *args: object) -> int:
            time.sleep(self.seconds)
            return 0

        def twin_cancel(self) -> None:
            pass

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.setattr(progress, "_forced", True)
    monkeypatch.setattr(twin, "RUNNING_NOTICE_AFTER_S", 0.1)
    monkeypatch.setattr(twin.signal, "getsignal", lambda sig: signal.default_int_handler)  # as on a terminal
    assert twin._launch(Launch(0.0), what="mse on Ascend310P3, 8 cores") == 0
    assert err.getvalue() == ""
    assert twin._launch(Launch(0.3), what="mse on Ascend310P3, 8 cores") == 0
    assert err.getvalue() == "lossgrad: running mse on Ascend310P3, 8 cores...\n"


def test_an_in_process_verify_run_leaves_no_bundle_registered() -> None:
    """verify -j 1 runs its cases in this process and registers its libraries here: they must not outlive the run
    (a later run_twin of one of their kernels would launch it from the bundle; found by tests sharing a worker)."""
    from lossgrad.registry import OPS
    from lossgrad.verify.run import run_cases

    op = next(iter(OPS))
    before = twin_runner.registered_bundles()
    results = run_cases([Case(op=op, soc="Ascend310P3", shapes=((3, 5), (3, 5), (5,)), dtypes=("float32",) * 4,
                              reduction="sum")], jobs=1)
    assert len(results) == 1 and not results[0].failed
    assert twin_runner.registered_bundles() == before


def test_bundles_for_calls_one_at_a_time_serve_them_and_are_withdrawn_after() -> None:
    """build_bundles: one library per architecture and arity, the largest first (reverse: the smallest); calls in a
    bundles_in_use block launch from them, and the registrations before the block come back after it."""
    from lossgrad.registry import OPS
    from lossgrad.verify.run import build_bundles, bundles_in_use

    first, second = sorted(list(OPS)[:2])  # two ops of one arity: one library per architecture
    assert len(OPS[first].kernel_inputs) == len(OPS[second].kernel_inputs)
    f32, mixed = _dtypes(F32, F32, F32, F32), _dtypes(F16, F32, F16, F32)
    kernels = [("Ascend310P3", second, f32), ("Ascend310P3", first, mixed),
               ("Ascend310P3", second, f32),  # listed twice: built once
               ("Ascend910A", second, f32)]
    bundles = build_bundles(kernels)
    assert [(socs, [op for op, _ in ks]) for _, ks, socs in bundles] == [
        (["Ascend310P3"], [first, second]), (["Ascend910A"], [second])]
    assert [socs for _, _, socs in build_bundles(kernels, reverse=True)] == [["Ascend910A"], ["Ascend310P3"]]
    g, s, t = (np.full((3, 5), v, np.float32) for v in (1.0, 2.0, 0.5))
    call = validate(second, g, s, t, "none", soc="Ascend310P3")
    before = twin_runner.registered_bundles()
    with bundles_in_use(bundles):
        run = twin_runner.run_twin(call)
    assert run.report.kernel == twin_build.BUNDLE_ENTRY
    assert twin_runner.registered_bundles() == before
    assert twin_runner.run_twin(call).report.kernel != twin_build.BUNDLE_ENTRY
