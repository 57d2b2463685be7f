"""The scheduler on small hand-written event logs (no compile): each test states the schedule the model must give,
with the provisional round-number parameters of conftest.py (1 GHz: 1 cycle = 1 ns; 100 GB/s per copy = 100 bytes
per ns; 800 GB/s of HBM for the chip; no copy latency and no L2 unless a test sets them)."""
from __future__ import annotations

import json

import pytest

from _timing_support import provisional_params
from lossgrad.timing.events import CACHE_DISABLE, DTYPES, MTE2, MTE3, NO_ADDR, S, V, LogBuilder, make_log
from lossgrad.timing.replay import bank_conflicts, repeat_span, replay

NS = 1e-3  # one nanosecond in microseconds


def pipeline(tiles: int, buffers: int, copy_bytes: int, repeats: int) -> LogBuilder:
    """The log of a TQue pipeline as the twin records it: per tile, AllocTensor (MTE2 waits for the V free of the
    buffer's previous tile), copy-in, EnQue (MTE2 sets), DeQue (V waits), compute, FreeTensor (V sets)."""
    b = LogBuilder()
    for t in range(tiles):
        if t >= buffers:
            b.wait(MTE2, 2 * (t - buffers) + 2, api="TQue::AllocTensor")
        b.copy_in(copy_bytes, ub=(t % buffers) * copy_bytes)
        b.set(MTE2, 2 * t + 1, api="TQue::EnQue")
        b.wait(V, 2 * t + 1, api="TQue::DeQue")
        b.vec("Add", repeats, dst=0x20000, src0=(t % buffers) * copy_bytes, src1=(t % buffers) * copy_bytes)
        b.set(V, 2 * t + 2, api="TQue::FreeTensor")
    return b


def test_single_buffer_serialises_copy_and_compute(params):
    # 10,000 bytes at 100 B/ns = 100 ns of MTE2, 100 repeats at 1 cycle = 100 ns of V, one after the other per tile.
    t = replay(make_log([pipeline(10, 1, 10_000, 100)]), params)
    assert t.total_us == pytest.approx(10 * 200 * NS)
    assert t.per_core[0]["MTE2"] == pytest.approx(1000 * NS)
    assert t.per_core[0]["V"] == pytest.approx(1000 * NS)


def test_double_buffering_overlaps_copy_in_with_compute(params):
    single = replay(make_log([pipeline(10, 1, 10_000, 100)]), params).total_us
    double = replay(make_log([pipeline(10, 2, 10_000, 100)]), params)
    # Copy of tile t+1 runs while tile t computes: 10 copies back to back, then the last compute.
    assert double.total_us == pytest.approx(11 * 100 * NS)
    assert double.total_us < 0.6 * single
    assert double.bound == "MTE2"


def test_eight_cores_saturate_the_chip_bandwidth(params):
    # The same 6.144 MB split over more cores: each core alone copies at 100 GB/s, the chip feeds 800 GB/s.
    total = 6_144_000

    def run(cores: int) -> float:
        logs = []
        for _ in range(cores):
            b = LogBuilder()
            for _ in range(8):
                b.copy_in(total // cores // 8)
            logs.append(b)
        return replay(make_log(logs), params).total_us

    t1, t4, t8, t16, t48 = run(1), run(4), run(8), run(16), run(48)
    assert t1 == pytest.approx(total / 100 * NS)
    assert t4 == pytest.approx(t1 / 4)
    floor = total / 800 * NS
    assert t8 == pytest.approx(floor)
    assert t16 == pytest.approx(floor) and t48 == pytest.approx(floor)  # more cores do not go faster


def test_cores_share_bandwidth_in_proportion_to_their_rates():
    # Two cores, one copies at 100 GB/s, the other's copy is unaligned (half rate); the chip gives 100 GB/s:
    # shares 2/3 and 1/3 of the chip while both copy.
    p = provisional_params(hbm_read_gbps=100.0, unaligned_gm_factor=0.5, gm_align_bytes=32)
    a, b = LogBuilder(), LogBuilder()
    a.copy_in(10_000)
    b.copy_in(10_000, gm_off=4)
    t = replay(make_log([a, b]), p)
    # Both move 100 B/ns together until core 0's 10,000 bytes are done at 150 ns (core 1 then has 5,000 left,
    # moved at its own 50 B/ns: 100 ns more).
    assert t.per_core[0]["MTE2"] == pytest.approx(150 * NS)
    assert t.per_core[1]["MTE2"] == pytest.approx(250 * NS)


def test_reads_and_writes_share_the_chip_bandwidth():
    p = provisional_params(hbm_read_gbps=100.0, hbm_write_gbps=100.0)
    b = LogBuilder()
    b.copy_in(10_000)
    b.copy_out(10_000)
    t = replay(make_log([b]), p)
    assert t.total_us == pytest.approx(200 * NS)  # 20,000 bytes through 100 B/ns, MTE2 and MTE3 at once


def test_a_write_byte_costs_read_over_write_bandwidth():
    # HBM reads 100 B/ns, writes 50: beside a read each write byte takes two read bytes of the channel, so the
    # 10,000 read and 10,000 written bytes take 10,000 + 2 x 10,000 bytes of it at 100 B/ns.
    p = provisional_params(hbm_read_gbps=100.0, hbm_write_gbps=50.0)
    b = LogBuilder()
    b.copy_in(10_000)
    b.copy_out(10_000)
    assert replay(make_log([b]), p).total_us == pytest.approx(300 * NS)


def _copy_params(**over: object):
    return provisional_params(mte2_latency_ns=100.0, mte2_issue_cycles=10.0, mte2_link_gbps=200.0,
                              mte2_core_gbps=50.0, **over)


def test_one_copy_costs_latency_issue_and_link_or_the_core_rate():
    # Alone, with a wait after it: max(latency + issue + s / link, s / core).
    for nbytes, want in ((1_000, 100 + 10 + 5), (100_000, 2_000)):
        b = LogBuilder()
        b.copy_in(nbytes)
        b.set(MTE2, 1)
        b.wait(V, 1)
        assert replay(make_log([b]), _copy_params()).total_us == pytest.approx(want * NS), nbytes


def test_copy_latency_is_paid_by_what_waits_not_by_the_next_copy():
    # Two 1,000-byte copies: the pipe is busy max(10 + 5, 20) = 20 ns for each, so the second starts at 20; the V
    # wait sees the second copy's data at 40 + (100 + 15 - 20) = 135. A stream of 10 copies without a wait: 200.
    b = LogBuilder()
    b.copy_in(1_000)
    b.copy_in(1_000)
    b.set(MTE2, 1)
    b.wait(V, 1)
    b.vec("Add", 1)
    assert replay(make_log([b]), _copy_params()).total_us == pytest.approx((135 + 1) * NS)
    stream = LogBuilder()
    for _ in range(10):
        stream.copy_in(1_000)
    t = replay(make_log([stream]), _copy_params())
    assert t.total_us == pytest.approx((200 + 95) * NS)   # the kernel's end waits for the last copy's data
    assert t.per_core[0]["MTE2"] == pytest.approx(295 * NS)  # busy from the first start to the last data


def test_copy_overheads():
    p = provisional_params(mte2_issue_cycles=50.0, burst_overhead_cycles=10.0)
    b = LogBuilder()
    b.copy_in(10_000, bursts=4)
    assert replay(make_log([b]), p).total_us == pytest.approx((50 + 3 * 10 + 100) * NS)


def _l2(**over: object):
    return provisional_params(l2_gbps=10_000.0, l2_bytes=100_000, hbm_latency_ns=100.0, **over)


def test_a_reread_hits_l2_and_skips_the_hbm_latency():
    # The same 10,000 bytes read twice, the second read after a vector op that waited for the first: the first from
    # HBM (100 ns of transfer, +100 ns latency), the second from L2 (100 ns, no extra latency).
    b = LogBuilder()
    b.copy_in(10_000)
    b.set(MTE2, 1)
    b.wait(V, 1)
    b.vec("Add", 1)
    b.set(V, 2)
    b.wait(MTE2, 2)
    b.copy_in(10_000)
    b.set(MTE2, 3)
    b.wait(V, 3)
    t = replay(make_log([b]), _l2())
    assert t.total_us == pytest.approx((100 + 100 + 1 + 100) * NS)
    assert t.l2_hit_bytes == 10_000 and t.hbm_bytes == 10_000


def test_warm_inputs_hit_l2():
    b = LogBuilder()
    b.copy_in(10_000)
    b.set(MTE2, 1)
    b.wait(V, 1)
    cold = replay(make_log([b]), _l2())
    warm = replay(make_log([b]), _l2(), l2="warm")
    assert cold.total_us == pytest.approx(200 * NS) and warm.total_us == pytest.approx(100 * NS)
    assert warm.l2 == "warm" and warm.l2_hit_bytes == 10_000


def test_l2_capacity_and_bypass():
    # A 60,000-byte extent read twice with 60,000 other bytes between: 120,000 > the 100,000-byte L2, so the re-read
    # misses; the same with the other bytes read past L2 (CACHE_MODE_DISABLE) hits.
    for cache, hits in ((1, 0), (CACHE_DISABLE, 60_000)):
        b = LogBuilder()
        b.copy_in(60_000, gm_buf=0)
        b.copy_in(60_000, gm_buf=1, cache=cache)
        b.copy_in(60_000, gm_buf=0)
        assert replay(make_log([b]), _l2()).l2_hit_bytes == hits, cache


def test_writes_stay_in_l2_unless_evicted():
    small, big = LogBuilder(), LogBuilder()
    small.copy_out(50_000)
    for k in range(3):
        big.copy_out(50_000, gm_off=50_000 * k)
    assert replay(make_log([small]), _l2()).l2_absorbed_bytes == 50_000
    t = replay(make_log([big]), _l2())
    assert t.l2_absorbed_bytes == 100_000 and t.hbm_bytes == 50_000  # the first write was evicted


def test_cores_start_skewed_after_their_set_up():
    p = provisional_params(launch_us=1.0, tail_us=0.5, core_skew_us=0.2, core_init_cycles=100.0)
    logs = []
    for _ in range(3):
        b = LogBuilder()
        b.vec("Add", 100)
        logs.append(b)
    t = replay(make_log(logs), p)
    # core 2 starts at 1.0 + 2 x 0.2, sets up for 100 ns, computes for 100 ns; the task ends 0.5 later
    assert t.total_us == pytest.approx(1.0 + 0.4 + 0.2 + 0.5)
    assert t.core_us == pytest.approx((0.2, 0.2, 0.2))
    assert t.aiv_us == pytest.approx(0.2) and t.span_us == pytest.approx(0.6)
    assert t.per_core[0]["S"] == pytest.approx(0.1)


def test_bank_rule_matches_the_devkit_scenarios():
    # asc-devkit examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub, scenarios 1-6:
    # (src0, src1, dst) -> (read-read conflict, read-write conflict).
    cases = {1: ((0, 0x10100, 0x20000), (False, False)), 2: ((0, 0x4000, 0x10000), (True, False)),
             3: ((0, 0x10000, 0x14100), (True, False)), 4: ((0, 0x10100, 0x4000), (False, False)),
             5: ((0, 0x10100, 0x4020), (False, True)), 6: ((0, 0x10100, 0x10100), (False, False))}
    for scenario, ((s0, s1, d), want) in cases.items():
        assert bank_conflicts(d, s0, s1) == want, scenario


def test_bank_conflict_doubles_a_vector_instruction():
    p = provisional_params(ub_bank_rule="a2", bank_rr_factor=2.0, bank_rw_factor=2.0)
    clean, clash = LogBuilder(), LogBuilder()
    clean.vec("Add", 64, src0=0, src1=0x10100, dst=0x20000)
    clash.vec("Add", 64, src0=0, src1=0x4000, dst=0x10000)
    t0 = replay(make_log([clean]), p)
    t1 = replay(make_log([clash]), p)
    assert t0.total_us == pytest.approx(64 * NS)
    assert t1.total_us == pytest.approx(2 * t0.total_us)
    assert any("bank" in n for n in t1.notes)


def test_dependent_chain_pays_its_latency():
    p = provisional_params(vec_dep_latency_cycles=50.0)
    chain, free = LogBuilder(), LogBuilder()
    prev = 0
    for _ in range(10):
        prev = chain.vec("Mul", 10, dst=0, src0=0, dep=prev)
        free.vec("Mul", 10, dst=0, src0=0)
    assert replay(make_log([free]), p).total_us == pytest.approx(100 * NS)
    assert replay(make_log([chain]), p).total_us == pytest.approx((100 + 9 * 50) * NS)


def test_pipe_barrier_v_drains_the_vector_pipe():
    p = provisional_params(vec_dep_latency_cycles=50.0)
    b = LogBuilder()
    b.vec("Mul", 10)
    b.barrier(V)
    b.vec("Mul", 10)
    assert replay(make_log([b]), p).total_us == pytest.approx(70 * NS)


def test_flag_waits_order_pipes(params):
    # Without the flag MTE3 starts at once; with V->MTE3 it starts when the vector op ends.
    free, ordered = LogBuilder(), LogBuilder()
    for b in (free, ordered):
        b.vec("Add", 100)
    ordered.set(V, 1)
    ordered.wait(MTE3, 1)
    for b in (free, ordered):
        b.copy_out(10_000)
    assert replay(make_log([free]), params).total_us == pytest.approx(100 * NS)
    assert replay(make_log([ordered]), params).total_us == pytest.approx(200 * NS)


def test_barrier_all_joins_every_pipe(params):
    b = LogBuilder()
    b.copy_in(10_000)
    b.barrier_all()
    b.vec("Add", 10)
    assert replay(make_log([b]), params).total_us == pytest.approx(110 * NS)


def test_scalar_unit_issues_in_order(params):
    # 500 scalar accesses (1 cycle each) come before the vector op in program order: it cannot be issued earlier.
    b = LogBuilder()
    b.scalar(ub=500)
    b.vec("Add", 10)
    t = replay(make_log([b]), params)
    assert t.total_us == pytest.approx(510 * NS)
    assert t.per_core[0]["S"] == pytest.approx(500 * NS)


def test_wait_on_the_scalar_pipe_blocks_issue(params):
    # V_S: the scalar unit waits for the vector op; the copy after it in program order waits too.
    b = LogBuilder()
    b.vec("ReduceSum", 100)
    b.set(V, 1)
    b.wait(S, 1)
    b.copy_in(10_000)
    assert replay(make_log([b]), params).total_us == pytest.approx(200 * NS)


def test_sync_all_waits_for_every_core(params):
    slow, fast = LogBuilder(), LogBuilder()
    slow.vec("Add", 1000)
    fast.vec("Add", 10)
    for b in (slow, fast):
        b.sync_all()
        b.copy_out(10_000)
    t = replay(make_log([slow, fast]), params)
    assert t.total_us == pytest.approx(1100 * NS)
    spans = [e for e in t.trace() if e["pid"] == 1 and e["tid"] == "MTE3"]
    assert spans[0]["ts"] == pytest.approx(1000 * NS)


def test_sync_all_reached_by_some_cores_only_is_an_error(params):
    a, b = LogBuilder(), LogBuilder()
    a.sync_all()
    b.vec("Add", 1)
    with pytest.raises(ValueError, match="sync_all #0 reached by 1 of 2 cores"):
        replay(make_log([a, b]), params)


def test_wait_without_set_is_an_error(params):
    b = LogBuilder()
    b.wait(V, 7)
    with pytest.raises(ValueError, match="token 7"):
        replay(make_log([b]), params)


def test_head_tail_and_latency_bound():
    p = provisional_params(launch_us=3.0, tail_us=1.0)
    b = LogBuilder()
    b.vec("Add", 100)
    t = replay(make_log([b]), p)
    assert t.total_us == pytest.approx(4.0 + 100 * NS)
    assert t.launch_us == 3.0 and t.pipe_us == pytest.approx(100 * NS)
    assert t.bound == "latency"  # the vector pipe is busy 0.1 us of 4.1


def test_bound_and_roofline(params):
    b = LogBuilder()
    b.copy_in(1_000_000)
    b.vec("Add", 100)
    t = replay(make_log([b]), params, roofline_bytes=1_000_000)
    assert t.bound == "MTE2"
    assert t.roofline_us == pytest.approx(1_000_000 / 800 * NS)
    assert t.total_us >= t.roofline_us


def test_trace_is_chrome_json(params):
    t = replay(make_log([pipeline(3, 2, 10_000, 10), pipeline(2, 2, 10_000, 10)]), params)
    events = json.loads(json.dumps(t.trace()))
    assert events and all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    assert {(e["pid"], e["tid"]) for e in events} == {(c, p) for c in (0, 1) for p in ("MTE2", "V")}
    copy = next(e for e in events if e["tid"] == "MTE2" and e["args"].get("bytes"))
    assert copy["args"]["bytes"] == 10_000 and copy["dur"] == pytest.approx(100 * NS)
    vec = next(e for e in events if e["name"] == "Add")
    assert vec["args"]["repeats"] == 10 and vec["args"]["dtype"] == "float"
    d = t.as_dict()
    assert json.loads(json.dumps(d))["bound"] == t.bound and len(d["per_core"]) == 2
    assert set(d["msprof"]) == {"task_duration_us", "aiv_time_us", "aiv_vec_time_us", "aiv_scalar_time_us",
                                "aiv_mte2_time_us", "aiv_mte3_time_us"}
    assert d["regime"] in ("latency", "mixed", "bandwidth") and len(d["band_us"]) == 2


def test_vector_cost_by_class_and_dtype():
    p = provisional_params(vec_cycles_per_repeat={"default": {"*": 1.0}, "exp_log": {"float": 4.0, "*": 2.0}})
    b = LogBuilder()
    b.vec("Exp", 10, dtype="float")
    b.vec("Exp", 10, dtype="half")
    b.vec("Add", 10, dtype="half")
    assert replay(make_log([b]), p).per_core[0]["V"] == pytest.approx((40 + 20 + 10) * NS)


def test_notes_name_missing_figures():
    p = provisional_params(vec_dep_latency_cycles=None)
    b = LogBuilder()
    b.vec("Add", 1, src0=NO_ADDR)
    t = replay(make_log([b]), p)
    assert any(n.startswith("vec_dep_latency_cycles: no public figure") for n in t.notes)


def test_more_blocks_than_cores_run_in_waves(params):
    # Ascend310P3 has 8 vector cores: 16 blocks run as two waves, 8 blocks as one.
    def run(blocks: int) -> float:
        logs = []
        for _ in range(blocks):
            b = LogBuilder()
            b.vec("Add", 100)
            logs.append(b)
        return replay(make_log(logs), params, soc="Ascend310P3")

    one, two = run(8), run(16)
    assert one.total_us == pytest.approx(100 * NS)
    assert two.total_us == pytest.approx(200 * NS)
    assert any("waves" in n for n in two.notes)


def test_a_vector_signal_waits_for_the_results():
    # set_flag on V fires when the vector op's results are written: vec_dep_latency_cycles after it ends (once, not
    # again for a second signal right after the first).
    p = provisional_params(vec_dep_latency_cycles=50.0)
    b = LogBuilder()
    b.vec("Add", 10)
    b.set(V, 1)
    b.set(V, 2)
    b.wait(MTE3, 2)
    b.copy_out(1_000)
    assert replay(make_log([b]), p).total_us == pytest.approx((10 + 50 + 10) * NS)


def test_sign_costs_its_instruction_sequence_per_chunk():
    # Sign (sign_common_impl.h): 8 vector instructions with repeats, 2 SetCmpMask, 6 PipeBarrier<PIPE_V> per chunk.
    p = provisional_params(vec_issue_cycles=2.0, vec_dep_latency_cycles=10.0)
    b = LogBuilder()
    b.vec("Sign", 4, chunks=3)
    b.vec("Sign", 4)  # chunks -1: one instruction (NpuArch 3510's register form)
    per_chunk = 10 * 2 + 6 * 10
    assert replay(make_log([b]), p).per_core[0]["V"] == pytest.approx((3 * per_chunk + 4 * 8 + 2 + 4) * NS)


def test_unaligned_bursts_move_at_the_unaligned_rate():
    # 4 bursts of 1,000 bytes, 1,000 bytes apart: offsets 0, 1000, 2000, 3000 -> 3 of 4 not 32-byte aligned
    # (1000 % 32 = 8); at half rate they take twice as long.
    p = provisional_params(unaligned_gm_factor=0.5, gm_align_bytes=32)
    b = LogBuilder()
    b.copy_in(4_000, bursts=4)
    assert replay(make_log([b]), p).total_us == pytest.approx((1_000 + 3 * 2_000) / 100 * NS)
    p128 = provisional_params(unaligned_gm_factor=0.5, gm_align_bytes=128)
    b = LogBuilder()
    b.copy_in(4_096, bursts=4, gm_off=64, pitch=1024)  # every burst at 64 mod 128: 32-aligned, not 128-aligned
    assert replay(make_log([b]), p).total_us == pytest.approx(4_096 / 100 * NS)
    assert replay(make_log([b]), p128).total_us == pytest.approx(2 * 4_096 / 100 * NS)


def test_scalar_unit_pays_for_issuing_instructions():
    # 10 cycles to issue each instruction: the copy is issued at 10, the vector op at 20 (it starts after the copy's
    # issue, not its end), the scalar access after both issues; S is busy for the issues and its own access.
    p = provisional_params(scalar_issue_cycles=10.0)
    b = LogBuilder()
    b.copy_in(10_000)       # issued 0-10, moves 10-110
    b.vec("Add", 5)         # issued 10-20, runs 20-25
    b.scalar(ub=1)          # 20-21
    b.vec("Add", 5)         # issued 21-31, runs 31-36
    t = replay(make_log([b]), p)
    copy = next(e for e in t.trace() if e["tid"] == "MTE2")
    assert copy["ts"] == pytest.approx(10 * NS)
    vec = sorted(e["ts"] for e in t.trace() if e["tid"] == "V")
    assert vec == [pytest.approx(20 * NS), pytest.approx(31 * NS)]
    assert t.per_core[0]["S"] == pytest.approx(31 * NS)
    assert t.total_us == pytest.approx(110 * NS)


def test_sync_all_after_a_signal_waits_for_the_signalled_work(params):
    # The last record before sync_all on core 0 is a (free) set after a long vector op: the barrier still waits for
    # the vector op.
    slow, fast = LogBuilder(), LogBuilder()
    slow.vec("Add", 1000)
    slow.set(V, 1)
    fast.vec("Add", 10)
    for b in (slow, fast):
        b.sync_all()
    slow.wait(MTE3, 1)
    for b in (slow, fast):
        b.copy_out(10_000)
    t = replay(make_log([slow, fast]), params)
    assert t.total_us == pytest.approx(1100 * NS)
    spans = [e for e in t.trace() if e["pid"] == 1 and e["tid"] == "MTE3"]
    assert spans[0]["ts"] == pytest.approx(1000 * NS)


def test_waves_wait_for_work_behind_a_signal(params):
    # Block 8 on Ascend310P3 (8 cores) runs after block 0, whose last V record is a (free) set after a long op.
    logs = []
    for i in range(9):
        b = LogBuilder()
        b.vec("Add", 1000 if i == 0 else 10)
        b.set(V, 1)
        b.wait(MTE3, 1)
        logs.append(b)
    t = replay(make_log(logs), params, soc="Ascend310P3")
    assert t.total_us == pytest.approx(1010 * NS)


def test_a_partial_single_repeat_reads_only_its_lanes():
    # 32 float lanes (128 bytes) at 0 and at 128: disjoint bank groups, unlike two full repeats 128 bytes apart.
    assert bank_conflicts(0, 0, 128, repeat_span(1, 32, DTYPES.index("float"))) == (False, False)
    assert bank_conflicts(0, 0, 128, repeat_span(2, 128, DTYPES.index("float")))[0]
    assert repeat_span(1, 64, DTYPES.index("float")) == 256
    assert repeat_span(1, 20, DTYPES.index("half")) == 64


def test_a_set_after_a_copy_does_not_hold_its_pipe():
    # EnQue's set fires when the copy's data are visible (135 ns for the second copy), but the next copy on MTE2
    # starts after the first copy's occupancy, not after the set fired.
    b = LogBuilder()
    b.copy_in(1_000)
    b.set(MTE2, 1, api="TQue::EnQue")
    b.copy_in(1_000)
    b.set(MTE2, 2, api="TQue::EnQue")
    b.wait(V, 1)
    b.wait(V, 2)
    b.vec("Add", 1)
    t = replay(make_log([b]), _copy_params())
    copies = sorted(e["ts"] for e in t.trace() if e["tid"] == "MTE2" and e["args"].get("bytes"))
    assert copies == [pytest.approx(0.0), pytest.approx(20 * NS)]
    assert t.total_us == pytest.approx((135 + 1) * NS)
