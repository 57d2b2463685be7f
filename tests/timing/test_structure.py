"""The time model's structure with the calibrated parameters (docs/timing.md "Model"): what must hold whatever the
fitted values are. Launch and skew grow with block_dim; a one-core, one-tile call is latency-bound and its time is
copy latency, not bandwidth; a flag-serialised loop costs more than the same loop double-buffered; a second call with
its inputs still in L2 is faster; every Timing carries its regime's band."""
from __future__ import annotations

import numpy as np
import pytest

import lossgrad
from lossgrad.timing.cases import KERNEL_DIR
from lossgrad.timing.events import LogBuilder, make_log
from lossgrad.timing.params import params_for
from lossgrad.timing.replay import REGIMES, replay
from lossgrad.twin import run_kernel

SOCS = ("Ascend910B1", "Ascend950PR_9579")


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend910_9391"])
def test_launch_grows_with_block_dim(soc: str) -> None:
    # The same small work on every core: the task's total grows with the cores (their skewed starts), the cores'
    # own time does not. (950's fitted skew is 0: its 64-core runs show Task - aiv_time = 0.8 us, launch and tail.)
    p = params_for(soc)
    assert p.core_skew_us.value > 0

    def run(blocks: int):
        logs = []
        for _ in range(blocks):
            b = LogBuilder()
            b.vec("Add", 8)
            logs.append(b)
        return replay(make_log(logs), p, soc=soc)

    runs = [run(n) for n in (1, 8, 32, 48)]
    totals = [t.total_us for t in runs]
    assert all(a < b for a, b in zip(totals, totals[1:]))
    assert max(t.aiv_us for t in runs) == pytest.approx(min(t.aiv_us for t in runs))
    assert runs[0].total_us - runs[0].aiv_us == pytest.approx(p.launch_us.value + p.tail_us.value)


@pytest.mark.parametrize("soc", SOCS)
def test_one_core_one_tile_is_latency_bound_by_its_copies(soc: str) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, 64).astype(np.float32) for _ in range(3)]
    prof = lossgrad.profile("mse", *arrays, "none", soc=soc)
    t = prof.timing
    assert prof.block_dim == 1 and prof.counters["tiles_per_core"] == 1
    assert t.regime == "latency"
    # What the time is made of: without copy latencies it drops by more than the copies' transfer at any bandwidth.
    from lossgrad.twin import run_kernel as _  # noqa: F401  (the profile ran the twin; replay its log)
    events = _last_events(prof)
    base = params_for(soc)
    no_latency = base.with_values(mte2_latency_ns=0.0, mte3_latency_ns=0.0, hbm_latency_ns=0.0)
    fast = base.with_values(**{k: 100 * getattr(base, k).value for k in (
        "mte2_link_gbps", "mte3_link_gbps", "mte2_core_gbps", "mte3_core_gbps", "hbm_core_gbps", "hbm_read_gbps",
        "hbm_write_gbps")})
    t_nolat = replay(events, no_latency, soc=soc).total_us
    t_fast = replay(events, fast, soc=soc).total_us
    latency_part = t.total_us - t_nolat
    bandwidth_part = t.total_us - t_fast
    assert latency_part > 2 * bandwidth_part, (t.total_us, t_nolat, t_fast)
    # Beside the core's fixed scalar set-up (core_init_cycles, the largest single part of so short a launch), the
    # time is copy latency.
    init_us = base.core_init_cycles.value / (base.clock_ghz.value * 1e3)
    assert latency_part > 0.5 * (t.span_us - init_us), (t.span_us, init_us, latency_part)
    assert t.core_init_us == pytest.approx(init_us) and t.body_us == pytest.approx(max(t.core_us) - init_us)


def _last_events(prof):
    """The event log of a profile's launch (profile keeps the Timing; run the same call's kernel again)."""
    from lossgrad.runners.twin import run_twin
    return run_twin(prof.call, timing=True).report.events


def _add(mode: int, soc: str = "Ascend910B1"):
    # calib_add.cpp on one core: 64 rows of 8192 halves in 4096-element copies, single buffer (1) or ping-pong (2).
    rows, cols = 64, 8192
    tiling = np.array([rows, cols, 4096, mode, 0, 0, 16384], np.uint32)
    args = [np.zeros((rows, cols), np.float16) for _ in range(3)] + [tiling]
    return run_kernel(KERNEL_DIR / "calib_add.cpp", "calib_add", 1, args, soc=soc, timing=True).timing


def test_flag_serialised_loop_costs_more_than_double_buffered() -> None:
    single, double = _add(1), _add(2)
    assert single.total_us > 1.15 * double.total_us, (single.total_us, double.total_us)


@pytest.mark.parametrize("soc", SOCS)
def test_a_second_call_with_warm_l2_is_faster(soc: str) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(0.5, 2.0, (256, 1024)).astype(np.float32) for _ in range(3)]
    cold = lossgrad.profile("l1", *arrays, "none", soc=soc).timing
    warm = lossgrad.profile("l1", *arrays, "none", soc=soc, l2="warm").timing
    assert cold.l2 == "cold" and warm.l2 == "warm"
    assert warm.l2_hit_bytes > 0 and cold.l2_hit_bytes == 0
    assert warm.total_us < cold.total_us


def test_every_timing_carries_its_regime_band() -> None:
    rng = np.random.default_rng(2)
    arrays = [rng.uniform(0.5, 2.0, 1 << 16).astype(np.float32) for _ in range(3)]
    for soc in ("Ascend910B1", "Ascend310P3"):
        t = lossgrad.profile("smooth_l1", *arrays, "none", soc=soc).timing
        assert t.regime in REGIMES
        lo, hi = t.band
        assert 0 < lo <= 1.0 <= hi
        assert t.band_us == pytest.approx((t.total_us * lo, t.total_us * hi))
    thin = lossgrad.profile("smooth_l1", *arrays, "none", soc="Ascend310P3").timing
    a2 = lossgrad.profile("smooth_l1", *arrays, "none", soc="Ascend910B1").timing
    if thin.regime == a2.regime:
        assert thin.band[1] - thin.band[0] > a2.band[1] - a2.band[0]   # no published 310P timing: wider
    assert any("310P" in n and "band" in n for n in thin.notes)
