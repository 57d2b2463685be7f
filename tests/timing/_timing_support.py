"""PROVISIONAL cost parameters of the time-model tests: round numbers chosen so that the tests can compute the
expected schedule by hand; they are NOT the calibrated per-SoC figures (lossgrad.timing.params holds those).
A module of its own name: test files import it (a bare `import conftest` would find another directory's conftest)."""
from __future__ import annotations

from lossgrad.socs import Fact
from lossgrad.timing.model import TimeParams

_P = "provisional test fixture (tests/timing/_timing_support.py), not a calibrated figure"


def provisional_params(**over: object) -> TimeParams:
    """1 GHz (1 cycle = 1 ns), 100 GB/s per core and copy size, 800 GB/s for the chip, 1 cycle per vector repeat,
    no overheads, no head or tail; `over` replaces fields by value."""
    base: dict[str, object] = dict(
        clock_ghz=1.0, chip_bandwidth_gbps=800.0, mte2_curve=((32, 100.0), (1 << 20, 100.0)),
        mte3_curve=((32, 100.0), (1 << 20, 100.0)), vec_cycles_per_repeat={"default": {"*": 1.0}},
        vec_issue_cycles=0.0, launch_us=0.0, tail_us=0.0, copy_overhead_cycles=0.0, vec_dep_latency_cycles=0.0,
        flag_cycles=0.0, scalar_cycles_per_access=1.0, scalar_gm_cycles=1.0, ub_bank_rule=None,
        bank_rr_factor=1.0, bank_rw_factor=1.0, unaligned_gm_factor=1.0, gm_align_bytes=32)
    base.update(over)
    return TimeParams(soc="Ascend910B1", **{k: Fact(v, _P, "none") for k, v in base.items()})

