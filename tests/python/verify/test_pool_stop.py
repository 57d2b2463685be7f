"""verify's worker pool always stops: Pool.terminate can wait for ever on a worker it cannot join (one the pool
forked to replace a crashed worker, blocked on the task queue's lock); verify bounds the wait and kills what is left."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

from lossgrad.verify import run as verify_run


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
