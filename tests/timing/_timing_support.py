"""PROVISIONAL cost parameters of the time-model tests: round numbers chosen so that the tests can compute the
expected schedule by hand; they are NOT the calibrated per-SoC figures (lossgrad.timing.params holds those).
A module of its own name: test files import it (a bare `import conftest` would find another directory's conftest)."""
from __future__ import annotations

from lossgrad.socs import Fact
from lossgrad.timing.model import TimeParams

_P = "provisional test fixture (tests/timing/_timing_support.py), not a calibrated figure"


def provisional_params(**over: object) -> TimeParams:
    """1 GHz (1 cycle = 1 ns), 100 GB/s per copy and core whatever the size, no copy latency, 800 GB/s of HBM for
    reads and writes alike, no L2, 1 cycle per vector repeat, no overheads, no head or tail; `over` replaces fields
    by value."""
    base: dict[str, object] = dict(
        clock_ghz=1.0, launch_us=0.0, tail_us=0.0, core_skew_us=0.0, core_init_cycles=0.0,
        mte2_latency_ns=0.0, mte3_latency_ns=0.0, mte2_issue_cycles=0.0, mte3_issue_cycles=0.0,
        mte2_link_gbps=100.0, mte3_link_gbps=100.0, mte2_core_gbps=100.0, mte3_core_gbps=100.0,
        hbm_latency_ns=0.0, hbm_core_gbps=None, burst_overhead_cycles=0.0, gm_align_bytes=32,
        unaligned_gm_factor=1.0, hbm_read_gbps=800.0, hbm_write_gbps=800.0, l2_gbps=None, l2_bytes=0,
        vec_cycles_per_repeat={"default": {"*": 1.0}}, vec_repeat_overhead_cycles=0.0, vec_issue_cycles=0.0,
        vec_dep_latency_cycles=0.0, ub_bank_rule=None, bank_rr_factor=1.0, bank_rw_factor=1.0, flag_cycles=0.0,
        barrier_cycles=0.0, scalar_issue_cycles=0.0, scalar_cycles_per_access=1.0, scalar_gm_cycles=1.0)
    base.update(over)
    return TimeParams(soc="Ascend910B1", **{k: Fact(v, _P, "none") for k, v in base.items()})
