"""Real twin kernels with timing on: the event log the twin records and the replay of it (provisional parameters of
conftest.py; the calibrated ones are tested in test_calibration.py). The kernel is the twin's canonical
double-buffered z = x * y + x (tests/twin/kernels/mul_add.cpp): two VECIN queues, one VECOUT queue, two buffers
each, 4096-element tiles."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from _twin_common import KERNELS, SOCS
from _timing_support import provisional_params
from lossgrad.timing import events as ev
from lossgrad.twin import KernelFault, run_kernel

TILE = 4096


def mul_add(n: int, block_dim: int = 1, soc: str = "Ascend910B1", timing: object = None, auto_sync: bool = True):
    x = np.ones(n, np.float32)
    y = np.ones(n, np.float32)
    z = np.zeros(n, np.float32)
    rep = run_kernel(KERNELS / "mul_add.cpp", "mul_add", block_dim, [x, y, z, struct.pack("<QII", n, TILE, 0)],
                     soc=soc, timing=provisional_params() if timing is None else timing, auto_sync=auto_sync)
    assert np.array_equal(z, x * y + x)
    return rep


def kinds(log: np.ndarray, kind: int) -> np.ndarray:
    return log[log["kind"] == kind]


def test_timing_off_report_has_no_timing():
    rep = mul_add(1000, timing=False)
    assert rep.timing is None and rep.events is None


@pytest.mark.parametrize("arch", [2201, 3510])
def test_log_sees_the_implicit_queue_flags(arch):
    rep = mul_add(5 * TILE, soc=SOCS[arch])
    log, names = rep.events.cores[0], rep.events.api_names
    api = lambda r: names[int(r["api"])]  # noqa: E731
    sets = {(api(r), ev.PIPES[r["pipe"]]) for r in kinds(log, ev.SET)}
    waits = {(api(r), ev.PIPES[r["pipe"]]) for r in kinds(log, ev.WAIT)}
    # EnQue signals the producer's work (MTE2 for VECIN, V for VECOUT), DeQue makes the consumer wait;
    # FreeTensor signals the consumer's reads, AllocTensor makes the producer wait before reusing the buffer.
    assert {("TQue::EnQue", "MTE2"), ("TQue::EnQue", "V"), ("TQue::FreeTensor", "V"),
            ("TQue::FreeTensor", "MTE3")} <= sets
    assert {("TQue::DeQue", "V"), ("TQue::DeQue", "MTE3"), ("TQue::AllocTensor", "MTE2"),
            ("TQue::AllocTensor", "V")} <= waits
    # every wait pairs with an earlier set of its token
    set_at = {int(r["x"]): i for i, r in enumerate(log) if r["kind"] == ev.SET}
    for i, r in enumerate(log):
        if r["kind"] == ev.WAIT:
            assert set_at[int(r["x"])] < i


def test_log_agrees_with_the_counters():
    rep = mul_add(10 * TILE + 100, block_dim=3)
    for core, log in zip(rep.cores, rep.events.cores):
        copies = kinds(log, ev.COPY)
        assert len(copies) == core.data_copy_calls + core.data_copy_pad_calls
        assert int(copies["x"][copies["pipe"] == ev.MTE2].sum()) == core.gm_read_bytes
        assert int(copies["x"][copies["pipe"] == ev.MTE3].sum()) == core.gm_write_bytes
        # one burst each, at offsets of whole 8-element blocks: 32-byte aligned; 128-byte alignment as the offset says
        assert (copies["b"] == 1).all() and not (copies["d"] & 0xFFFF).any()
        assert ((copies["d"] >> 16) == (copies["y"] % 128 != 0)).all()
        vec = kinds(log, ev.VEC)
        assert int(vec["d"].sum()) == core.vec_repeats
        assert len(vec) == core.api["Mul"].calls + core.api["Add"].calls
        assert set(vec["dtype"].tolist()) == {ev.DTYPES.index("float")}
    assert any(((kinds(log, ev.COPY)["d"] >> 16) != 0).any() for log in rep.events.cores)  # core 1 starts at 96 mod 128


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend950PR_9579", "Ascend310P3"])
def test_log_sees_every_copy_of_our_kernels(soc):
    # Our kernels move GM by DataCopyPad on A2/950 (byte-strided bursts) and DataCopy on 310P: every form's bursts
    # reach the log, so the modelled copy bytes equal the counters' GM bytes.
    import lossgrad
    rng = np.random.default_rng(3)
    g, s_, t = (rng.uniform(-1, 1, (100, 333)).astype(np.float32) for _ in range(3))
    p = lossgrad.profile("mse", g, s_, t[0], "none", soc=soc)
    from lossgrad.runners.twin import run_twin
    from lossgrad.validation import validate
    rep = run_twin(validate("mse", g, s_, t[0], "none", soc=soc), timing=True).report
    for core, log in zip(rep.cores, rep.events.cores):
        copies = kinds(log, ev.COPY)  # the counters' GM bytes include scalar GetValue/SetValue (float32 here)
        assert int(copies["x"][copies["pipe"] == ev.MTE2].sum()) == core.gm_read_bytes - 4 * core.scalar_gm_reads
        assert int(copies["x"][copies["pipe"] == ev.MTE3].sum()) == core.gm_write_bytes - 4 * core.scalar_gm_writes
    assert p.timing.total_us >= p.timing.roofline_us


def test_log_cost_per_tile():
    # The cost of timing on, in counters: records (40 bytes each) per pipeline tile of the kernel.
    rep = mul_add(100 * TILE)
    counts = rep.timing.events
    tiles = rep.cores[0].tiles
    assert tiles == 100
    assert counts["copy"] == 3 * tiles and counts["vec"] == 2 * tiles
    assert counts["records"] <= 17 * tiles
    assert counts["bytes"] == 40 * counts["records"]


def test_auto_sync_inserts_vector_dependencies():
    # Add(z, z, x) reads what Mul(z, x, y) wrote: bisheng's PipeBarrier<PIPE_V>, recorded as a dependency.
    on = kinds(mul_add(2 * TILE).events.cores[0], ev.VEC)
    assert on["y"][1::2].tolist() == [1, 3]
    # Without auto-sync the kernel lacks the barrier: 2201 does not order vector instructions (docs/twin.md), so the
    # twin refuses it; 950 orders them in hardware, runs it, and the log has no compiler-inserted dependency.
    with pytest.raises(KernelFault, match=r"PipeBarrier<PIPE_V>"):
        mul_add(2 * TILE, auto_sync=False)
    off = kinds(mul_add(2 * TILE, auto_sync=False, soc=SOCS[3510]).events.cores[0], ev.VEC)
    assert not off["y"].any()


def test_vector_operands_are_logged():
    vec = kinds(mul_add(TILE).events.cores[0], ev.VEC)
    mul, add = vec[0], vec[1]
    assert mul["a"] == add["a"] == add["b"]        # Add(z, z, x): dst and src0 are Mul's dst
    assert add["c"] == mul["b"]                    # src1 of Add is Mul's src0 (x)
    assert len({int(mul["a"]), int(mul["b"]), int(mul["c"])}) == 3


def test_double_buffered_kernel_overlaps_copy_and_compute():
    t = mul_add(64 * TILE).timing
    busy = t.per_core[0]
    assert t.pipe_us < 0.75 * (busy["MTE2"] + busy["MTE3"] + busy["V"])
    assert t.pipe_us >= max(busy.values())
    assert t.bound == "MTE2"


@pytest.mark.parametrize("arch", sorted(SOCS))
@pytest.mark.parametrize("block_dim", [1, 8])
def test_modelled_time_is_never_below_the_roofline(arch, block_dim):
    # mul_add's ragged tail is a scalar GM write, which 1001 can never write back (no data-cache flush): whole tiles
    n = 8 * TILE + (0 if arch == 1001 else 5)
    t = mul_add(n, block_dim=block_dim, soc=SOCS[arch]).timing
    assert t.roofline_bytes == 3 * 4 * n
    assert t.total_us >= t.roofline_us > 0
    assert t.soc == SOCS[arch]


def test_310p_scalar_tail_is_logged():
    rep = mul_add(TILE + 3, soc=SOCS[2002])
    log = rep.events.cores[0]
    assert len(kinds(log, ev.BARRIER_ALL)) == 2   # before each scalar tail of x and y
    scalar = kinds(log, ev.SCALAR)
    assert int(scalar["a"].sum()) == 3 * 3        # SetValue of x, y tails, GetValue of z's
    # GetValue of x's and y's tails, and GET_TILING_DATA's 32-bit loads of the struct (timed, counted apart)
    assert rep.cores[0].tiling_reads == 4  # mul_add's 16-byte struct
    assert int(scalar["b"].sum()) == 2 * 3 + 4 and int(scalar["c"].sum()) == 3
    s_sets = [r for r in kinds(log, ev.SET) if r["pipe"] == ev.S]
    assert len(s_sets) == 2                        # SetFlag<S_V> after each input tail


def test_trace_has_one_track_per_core_and_pipe():
    t = mul_add(6 * TILE, block_dim=3).timing
    events = json.loads(json.dumps(t.trace()))
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= t.launch_us for e in events)
    tracks = {(e["pid"], e["tid"]) for e in events}
    assert {(c, p) for c in range(3) for p in ("MTE2", "MTE3", "V")} <= tracks
    assert {p for _, p in tracks} <= {"S", "V", "MTE2", "MTE3"}
    copies = [e for e in events if e["name"].startswith("DataCopyPad(GM->UB)")]
    assert sum(e["args"]["bytes"] for e in copies) == 2 * 4 * 6 * TILE


def test_any_params_object_drives_the_replay():
    slow = mul_add(8 * TILE, timing=provisional_params(mte2_link_gbps=50.0, mte2_core_gbps=50.0)).timing
    fast = mul_add(8 * TILE).timing
    assert slow.per_core[0]["MTE2"] == pytest.approx(2 * fast.per_core[0]["MTE2"])


PROBE = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void sync_probe(GM_ADDR z) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> a = buf.Get<float>();
    GlobalTensor<float> zg;
    zg.SetGlobalBuffer((__gm__ float*)z, 64);
    Duplicate(a, 1.0f, 64);          // V writes a[0, 64)
    float v = a.GetValue(0);         // S reads what V wrote: auto-sync V -> S
    a.SetValue(1, v + 1.0f);         // S writes
    Adds(a[64], a, 2.0f, 64);        // V reads what S (and Duplicate) wrote: auto-sync S -> V, depends on Duplicate
    PipeBarrier<PIPE_V>();
    Muls(a[128], a[64], 3.0f, 64);   // depends on Adds
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(zg, a[128], 64);
    PipeBarrier<PIPE_ALL>();
}
"""


def test_auto_sync_flags_barriers_and_scalar_work_are_logged(tmp_path):
    src = tmp_path / "sync_probe.cpp"
    src.write_text(PROBE)
    z = np.zeros(64, np.float32)
    p = provisional_params(vec_dep_latency_cycles=20.0, flag_cycles=0.0)
    rep = run_kernel(src, "sync_probe", 1, [z], timing=p)
    assert z[0] == 9.0 and z[1] == 12.0 and z[2] == 9.0
    log, names = rep.events.cores[0], rep.events.api_names
    got = [(ev.KIND_NAMES[int(r["kind"])], ev.PIPES[int(r["pipe"])], names[int(r["api"])]) for r in log]
    assert got == [("vec", "V", "Duplicate"),
                   ("set", "V", "auto-sync"), ("wait", "S", "auto-sync"),
                   ("scalar", "S", "?"),
                   ("set", "S", "auto-sync"), ("wait", "V", "auto-sync"),
                   ("vec", "V", "Adds"), ("barrier", "V", "PipeBarrier"), ("vec", "V", "Muls"),
                   ("set", "V", "SetFlag"), ("wait", "MTE3", "WaitFlag"),
                   ("copy", "MTE3", "DataCopy"), ("barrier_all", "S", "PipeBarrier")]
    assert int(log[3]["a"]) == 2                              # GetValue and SetValue, merged
    vec = kinds(log, ev.VEC)
    assert vec["y"].tolist() == [0, 1, 2]                     # Adds after Duplicate, Muls after Adds
    assert vec["d"].tolist() == [1, 1, 1] and vec["a"][1] == vec["b"][2] == vec["a"][0] + 256
    # Schedule (ns): Duplicate 0-1; its V signal fires when its result is written (+20): S reads and writes 21-23;
    # Adds 23-24 (its dependency on Duplicate was met at 21); the barrier drains V 24-44; Muls 44-45; the V_MTE3
    # flag fires at 65; the 256-byte copy at 100 B/ns 65-67.56; the PIPE_ALL join ends with it.
    assert rep.timing.total_us == pytest.approx(67.56e-3)
    spans = {e["name"]: e for e in rep.timing.trace()}
    assert spans["Adds"]["ts"] == pytest.approx(23e-3) and spans["DataCopy"]["ts"] == pytest.approx(65e-3)


SIGN = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void sign_probe(GM_ADDR z) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<float> a = buf.Get<float>();
    GlobalTensor<float> zg;
    zg.SetGlobalBuffer((__gm__ float*)z, 256);
    Duplicate(a, -2.0f, 256);
    Sign(a[256], a, buf.GetWithOffset<uint8_t>(768, 2048), 200);   // scratch of 768 bytes: 64-element chunks
    PipeBarrier<PIPE_ALL>();
}
"""


def test_sign_is_logged_with_its_chunks(tmp_path):
    src = tmp_path / "sign_probe.cpp"
    src.write_text(SIGN)
    rep = run_kernel(src, "sign_probe", 1, [np.zeros(256, np.float32)], timing=provisional_params())
    vec = kinds(rep.events.cores[0], ev.VEC)
    sign = vec[1]
    assert rep.events.api_names[int(sign["api"])] == "Sign"
    assert int(sign["gm_buf"]) == 4 and int(sign["d"]) == 4   # ceil(200 / 64) chunks; 200 floats = 4 repeats
    assert int(vec[0]["gm_buf"]) == -1


def test_l2_cache_hint_travels_with_the_copies():
    # calib_data_copy mode 3 sets CACHE_MODE_DISABLE on its GlobalTensor (data_copy scenario 7); mode 0 leaves it.
    from lossgrad.timing.cases import KERNEL_DIR
    flags = {}
    for mode in (0, 3):
        args = [np.zeros((64, 256), np.float16), np.array([64, 256, 16, 64, mode], np.uint32)]
        rep = run_kernel(KERNEL_DIR / "calib_data_copy.cpp", "calib_data_copy", 2, args, soc="Ascend910B1",
                         timing=provisional_params())
        copies = np.concatenate([kinds(c, ev.COPY) for c in rep.events.cores])
        flags[mode] = set(copies["flags"].tolist())
    assert flags == {0: {ev.CACHE_NORMAL}, 3: {ev.CACHE_DISABLE}}


CACHE_HINT = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void cache_hint_probe(GM_ADDR x, GM_ADDR mode) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    GlobalTensor<uint32_t> modeGm;
    modeGm.SetGlobalBuffer((__gm__ uint32_t*)mode, 8);
    const uint32_t m = modeGm.GetValue(0);
    GlobalTensor<float> xg;
    xg.SetGlobalBuffer((__gm__ float*)x, 256);
    xg.SetL2CacheHint(static_cast<CacheMode>(m));
    DataCopy(buf.Get<float>(), xg[64], 64);  // a view keeps the mode
}
"""

# What reaches the copies, per architecture, for each CacheMode (asc-devkit SetL2CacheHint / L2CacheAlter): 3510
# keeps DISABLE and PERSISTENT, 2201 DISABLE (-DL2_CACHE_HINT, the op compiler's default), 2002 and 1001 nothing.
CACHE_HINT_KEPT = {"Ascend910B1": {0}, "Ascend950PR_9579": {0, 4}, "Ascend310P3": set(), "Ascend910A": set()}


@pytest.mark.parametrize("soc", sorted(CACHE_HINT_KEPT))
def test_l2_cache_hint_reaches_copies_only_where_the_devkit_sets_address_bits(tmp_path, soc):
    src = tmp_path / "cache_hint_probe.cpp"
    src.write_text(CACHE_HINT)
    for mode in (0, 1, 2, 4):
        args = [np.zeros(256, np.float32), np.array([mode] * 8, np.uint32)]
        rep = run_kernel(src, "cache_hint_probe", 1, args, soc=soc, timing=provisional_params())
        flags = set(kinds(rep.events.cores[0], ev.COPY)["flags"].tolist())
        assert flags == {mode if mode in CACHE_HINT_KEPT[soc] else ev.CACHE_NORMAL}, (soc, mode)


SELECT = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void select_probe(GM_ADDR z) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 8192);
    LocalTensor<float> src0 = buf.Get<float>();                   // bytes 0..1023
    LocalTensor<float> src1 = buf.GetWithOffset<float>(256, 1024);
    LocalTensor<uint8_t> mask = buf.GetWithOffset<uint8_t>(256, 2048);
    LocalTensor<float> dst = buf.GetWithOffset<float>(256, 4096);
    Duplicate(src0, 1.0f, 256);
    Duplicate(src1, 2.0f, 256);
    Duplicate(mask.ReinterpretCast<uint16_t>(), (uint16_t)0x5555, 128);
    PipeBarrier<PIPE_V>();
    Select(dst, mask, src0, src1, SELMODE::VSEL_TENSOR_TENSOR_MODE, 256);
    Select(dst, mask, src0, src1, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64, 4, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
    Select(dst, mask, src0, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
    Select(dst, mask, src0, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64, 4, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
    GlobalTensor<float> zg;
    zg.SetGlobalBuffer((__gm__ float*)z, 256);
    PipeBarrier<PIPE_ALL>();
    DataCopy(zg, dst, 256);
}
"""


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend950PR_9579"])
def test_level0_and_level2_select_log_the_same_sources(tmp_path, soc):
    """The bank rule reads a vector record's two source operands: the same vsel must name the same ones at either
    level (mode 2: src0 and src1; mode 1: src0 and the mask), so a level-0 Select is costed as its level-2 form."""
    src = tmp_path / "select_probe.cpp"
    src.write_text(SELECT)
    z = np.zeros(256, np.float32)
    rep = run_kernel(src, "select_probe", 1, [z], soc=soc, timing=provisional_params())
    assert np.array_equal(z, np.where(np.arange(256) % 2 == 0, 1.0, 0.0).astype(np.float32))
    log, names = rep.events.cores[0], rep.events.api_names
    sel = [r for r in kinds(log, ev.VEC) if names[int(r["api"])] == "Select"]
    pairs = [(int(r["b"]), int(r["c"])) for r in sel]
    assert pairs[0] == pairs[1] == (0, 1024)       # mode 2: src0, src1
    assert pairs[2] == pairs[3] == (0, 2048)       # mode 1: src0, the mask
