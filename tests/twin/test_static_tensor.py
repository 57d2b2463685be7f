"""Static tensor programming (the raw-address LocalTensor constructor), Trap/assert/ascendc_assert and the
DataCopyPad field ranges (tests/twin/kernels/static_tensor.cpp, one scenario per tiling key): each broken variant
faults naming its API and rule on the architectures where the rule applies, each correct twin passes, and the
devkit's add_high_performance case-4 layout (six raw tensors over the whole UB, no TPipe) runs and adds."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from lossgrad.socs import get_soc
from lossgrad.timing import events as ev
from lossgrad.twin import KernelFault, TwinCompileError, run_kernel

from _twin_common import KERNELS, SOCS

SOURCE = KERNELS / "static_tensor.cpp"
STATIC = (2201, 3510, 2002)  # 1001 has no static tensor programming, Trap or assert (compile errors below)
PAD = (2201, 3510)           # DataCopyPad
N = 64
RAW = "LocalTensor(TPosition, addr, tileSize)"

# name: (tiling key, API named in the fault, message substring, archs where the broken variant must fault, archs run)
SCENARIOS = {
    "raw_unaligned": (2, RAW, "addr 16 is not 32-byte aligned", STATIC, STATIC),
    "raw_past_ub": (3, RAW, "exceeds the {ub} bytes of this architecture's UB", STATIC, STATIC),
    "raw_len_not_32": (4, RAW, "tileSize 10 elements = 40 bytes is not a multiple of 32 bytes", STATIC, STATIC),
    "raw_over_tpipe": (5, RAW, "UB [0x3e0, 0x4e0) that overlaps the TPipe buffer at UB [0x0, 0x400)", STATIC,
                       STATIC),
    "tpipe_over_raw": (6, "Duplicate", "dst is a raw-address LocalTensor at UB [0x0, 0x100) that overlaps the TPipe "
                       "buffer", STATIC, STATIC),
    "raw_missing_sync": (7, "Adds", "no MTE2->V synchronisation", STATIC, STATIC),
    "raw_in_gm": (8, RAW, "position GM: a LocalTensor cannot be placed in GM", STATIC, STATIC),
    "trap": (9, "Trap", "AscendC::Trap() called", STATIC, STATIC),
    "ascendc_assert": (10, "ascendc_assert", "assertion failed: good (", STATIC, STATIC),
    "assert": (11, "assert", "assertion failed: t.n == (good ? 64u : 65u) (", STATIC, STATIC),
    # 950: UB-side strides are [0, 65535] blocks; 2201's uint32_t strides take any value (its correct run only)
    "pad_ub_dst_stride": (12, "DataCopyPad(GM->UB)", "dstStride 65536 (UB side, 32-byte blocks) is outside "
                          "[0, 65535], what NpuArch 3510's copy instruction holds", (3510,), PAD),
    "pad_ub_src_stride": (13, "DataCopyPad(UB->GM)", "srcStride 65536 (UB side, 32-byte blocks) is outside "
                          "[0, 65535]", (3510,), PAD),
    "pad_negative_gm_stride": (14, "DataCopyPad(GM->UB)", "srcStride -52 (GM side, bytes) is outside [-48, 2^40 - 1]",
                               (3510,), (3510,)),
    "pad_block_count": (15, "DataCopyPad(GM->UB)", "blockCount 4096 exceeds 4095", PAD, PAD),
    # the guide's 使用约束和限制 for static tensor programming: InitSocState at entry, PipeBarrier<PIPE_ALL> at the end
    "no_init_soc_state": (16, RAW, "static tensor programming without InitSocState()", STATIC, STATIC),
    # Select with SELMODE 1/2 stages CMPMASK in the reserved scratch at TMP_UB_OFFSET on 2201/2002 (3510: no address)
    "select_clobbers_scratch": (18, "Adds", "it lies in the reserved scratch at TMP_UB_OFFSET", (2201, 2002), STATIC),
    "no_final_barrier": (17, "kernel end", "pipe V still has work the kernel never waited for", STATIC, STATIC),
}


def launch(key: int, arch: int, good: bool, timing: bool = False, n: int = N, half: bool = False):
    dt = np.float16 if half else np.float32
    x = (np.arange(n) % 251).astype(dt)
    y = (np.arange(n) % 7).astype(dt)
    z = np.zeros(n, dt)
    param = get_soc(SOCS[arch]).ub_kernel_bytes if key == 18 else 0
    tiling = struct.pack("<4I", int(good), n, param, 0)
    report = run_kernel(SOURCE, "static_tensor", 1, [x, y, z, tiling], soc=SOCS[arch], tiling_key=key,
                        timing=timing)
    return report, x, y, z


CASES = [(name, arch) for name, s in SCENARIOS.items() for arch in s[4]]


@pytest.mark.parametrize("name,arch", CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_broken_kernel_is_rejected(name: str, arch: int) -> None:
    key, api, message, fault_archs, _ = SCENARIOS[name]
    if arch not in fault_archs:
        launch(key, arch, good=False)  # legal on this arch (e.g. a 2201 stride the uint32_t field holds)
        return
    with pytest.raises(KernelFault) as e:
        launch(key, arch, good=False)
    message = message.format(ub=get_soc(SOCS[arch]).arch.ub_bytes.value)
    assert message in str(e.value), str(e.value)
    assert e.value.api == api, str(e.value)


@pytest.mark.parametrize("name,arch", CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_correct_twin_passes(name: str, arch: int) -> None:
    launch(SCENARIOS[name][0], arch, good=True)


def test_assert_message_is_formatted() -> None:
    with pytest.raises(KernelFault) as e:
        launch(10, 2201, good=False)
    assert "static_tensor.cpp:" in str(e.value) and "n is 64, h is 1.500000" in str(e.value), str(e.value)


def test_negative_gm_stride_rereads_the_block() -> None:
    _, x, _, z = launch(14, 3510, good=True)
    rows = z.reshape(4, 16)
    for r in rows:  # 12 floats of x[0:12] and 4 pad zeros per 64-byte row
        np.testing.assert_array_equal(r[:12], x[:12])
        np.testing.assert_array_equal(r[12:], 0)


@pytest.mark.parametrize("arch", STATIC)
def test_whole_ub_double_buffer(arch: int) -> None:
    """The README's case-4 layout: ping x/y/z then pong x/y/z, 6 raw tensors ending at (or 64 bytes below) the
    physical UB; the copies and vector ops of the event log carry the raw UB addresses."""
    tile = 21840 if arch == 3510 else 16384
    n = 3 * tile + 160
    report, x, y, z = launch(1, arch, good=True, timing=True, n=n, half=True)
    np.testing.assert_array_equal(z, (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16))
    log = report.events.cores[0]
    b = tile * 2
    copies = log[log["kind"] == ev.COPY]
    vecs = log[log["kind"] == ev.VEC]
    assert sorted(set(copies["a"].tolist())) == [0, b, 2 * b, 3 * b, 4 * b, 5 * b]
    assert sorted(set(vecs["a"].tolist())) == [2 * b, 5 * b]  # Add writes z ping / z pong
    assert 6 * b <= get_soc(SOCS[arch]).arch.ub_bytes.value


def test_rejected_on_1001() -> None:
    with pytest.raises(TwinCompileError) as e:
        run_kernel(KERNELS / "static_tensor_errors.cpp", "static_tensor_errors", 1, [np.zeros(8, np.float32)],
                   soc=SOCS[1001])
    text = str(e.value)
    for message in ("static tensor programming is not supported on NpuArch 1001",
                    "Trap: not supported on NpuArch 1001",
                    "assert/ascendc_assert: not supported on NpuArch 1001"):
        assert message in text, text
