"""verify's worker pool: it always stops (Pool.terminate can wait for ever on a worker it cannot join, one the pool
forked to replace a crashed worker, blocked on the task queue's lock; verify bounds the wait and kills what is left),
a dead worker is reported with how it died, and a worker runs torch safely after its parent ran torch's parallel ops."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time

import pytest

from lossgrad.verify import run as verify_run
from lossgrad.verify.cases import Case


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: reaped by the pool's join
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_terminate_kills_workers_that_outlive_sigterm() -> None:
    pool = mp.get_context("fork").Pool(2, initializer=signal.signal, initargs=(signal.SIGTERM, signal.SIG_IGN))
    pool.apply_async(time.sleep, (0.01,)).get(timeout=30)
    pids = [w.pid for w in pool._pool]
    t0 = time.perf_counter()
    verify_run._terminate(pool, patience=0.5)  # SIGTERM is ignored: only the bounded kill ends them
    assert time.perf_counter() - t0 < 5
    assert not any(_alive(pid) for pid in pids)


# Cases with no kernel to build (an unknown op): run_cases hands them to its workers at once, so the stand-ins for
# run_case below run in forked workers without a compile.
_NO_KERNEL = [Case(op="no_such_op", soc="Ascend910B1", shapes=((2,),) * 3, dtypes=("float32",) * 4,
                   reduction="none", seed=i) for i in range(3 * verify_run.CHUNK)]


def _needs_a_pool() -> None:
    if verify_run.usable_cores() < 2:
        pytest.skip("one usable core: run_cases runs cases in threads, not worker processes")


def _die(case: Case, backend: str, oracle: bool = False) -> verify_run.CaseResult:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


def test_a_dead_worker_is_reported_with_its_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    _needs_a_pool()
    monkeypatch.setattr(verify_run, "run_case", _die)  # the forked workers inherit it
    with pytest.raises(RuntimeError, match=r"worker process died \(pid \d+ killed by SIGKILL"):
        verify_run.run_cases(_NO_KERNEL, "twin", jobs=2)


_TORCH_AFTER_FORK = """
import torch
from lossgrad.verify import run as verify_run
from lossgrad.verify.cases import Case

def torch_case(case, backend, oracle=False):
    x = torch.rand(256, 256, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.binary_cross_entropy_with_logits(x @ x, torch.rand(256, 256, dtype=torch.float64)).backward()
    return verify_run.CaseResult(case, bool(torch.isfinite(x.grad).all()), None, None, None, 0.0, "float64", "")

x = torch.rand(512, 512, dtype=torch.float64)
assert torch.isfinite(x @ x).all()  # the parent's OpenMP pool is up
verify_run.run_case = torch_case  # the forked workers inherit it
cases = [Case(op="no_such_op", soc="Ascend910B1", shapes=((2,),) * 3, dtypes=("float32",) * 4, reduction="none",
              seed=i) for i in range(3 * verify_run.CHUNK)]
results = verify_run.run_cases(cases, "twin", jobs=2)
assert len(results) == len(cases) and all(r.passed for r in results)
assert torch.get_num_threads() >= 2  # the parent's own torch keeps its threads
print("ok")
"""


def test_workers_run_torch_after_the_parent_ran_its_parallel_ops() -> None:
    # GNU OpenMP is not fork-safe: a worker forked after the parent's torch ran a parallel op deadlocked or died in
    # its first parallel op (the oracle's, in CI's full suite) unless it keeps torch on one thread. A deadlock is the
    # likelier failure, so the run is a child process with a time limit.
    torch = pytest.importorskip("torch")
    _needs_a_pool()
    if torch.get_num_threads() < 2:
        pytest.skip("torch runs on one thread here: no OpenMP pool to inherit")
    try:
        done = subprocess.run([sys.executable, "-c", _TORCH_AFTER_FORK], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("run_cases hung: a worker deadlocked in torch (OpenMP after fork)")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
