"""The twin against the device, fourth pass (issue 26; docs/twin.md, "Fourth pass"): one small kernel per rule
(tests/twin/kernels/fidelity.cpp, selected by tiling key), its broken variant judged as the device would on every
architecture, its correct twin (tiling.good = 1) clean everywhere. Each rule cites the asc-devkit line it follows."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from lossgrad.twin import KernelFault, UndeterminedResult, run_kernel

from _twin_common import ARCHS, KERNELS, SOCS

SOURCE = KERNELS / "fidelity.cpp"
QUEUE_IDS = (2201, 2002, 1001)  # TQue takes event IDs from the per-event-type pools (3510: buffer IDs)
STATIC = (2201, 3510, 2002)     # static tensor programming exists (not on 1001)
N = 64

# asc-devkit impl/basic_api/utils/kernel_utils_constants.h RESERVED_WORKSPACE: 2 MiB on 1001/2002, 16 MiB else
RESERVED = {2201: 16 << 20, 3510: 16 << 20, 2002: 2 << 20, 1001: 2 << 20}

# name: (tiling key, API named in the fault, message substring, archs where the broken variant faults, archs run)
SCENARIOS = {
    # GetUserWorkspace = system workspace + RESERVED_WORKSPACE (dav_*/kernel_operator_common_impl.h): a workspace
    # 32 bytes short of it plus the user's 64 bytes
    "user_workspace": (1, "DataCopy", "past the end of GM argument 2", ARCHS, ARCHS),
    # docs/zh PipeBarrier(ISASI).md 约束说明: MTE3 copies to overlapping GM need PipeBarrier<PIPE_MTE3>
    "mte3_overlap": (2, "DataCopy", "which the earlier DataCopy (MTE3) also writes, with no PipeBarrier<PIPE_MTE3>",
                     ARCHS, ARCHS),
    # kernel_operator_vec_reduce_intf_impl.h ReduceSum / dav_c220 ReduceSumImpl: GetTPipePtr()->FetchEventID
    "tpipe_reducesum": (4, "ReduceSum", "no TPipe is alive, but the devkit's implementation", (2201, 2002), STATIC),
    # include/adv_api/math/sign.h: PopStackBuffer takes the stack from the TPipe (not on 3510)
    "tpipe_sign": (5, "Sign", "no TPipe is alive", (2201, 2002), STATIC),
    # dav_c220 ReduceImplNoIndex: FetchEventID (the good variant, one repeat with index, takes none)
    "tpipe_reducemax": (6, "ReduceMax", "no TPipe is alive", (2201, 2002), STATIC),
    # dav_m200 kernel_operator_vec_brcb_impl.h BrcbImpl, dstBlkStride > 1: FetchEventID
    "tpipe_brcb_strided": (7, "Brcb", "no TPipe is alive", (2002,), STATIC),
    # dav_3510 kernel_operator_vec_cmp_impl.h VcmpImpl (Compare into CMPMASK): FetchEventID
    "tpipe_cmpmask": (8, "Compare(CMPMASK)", "no TPipe is alive", (3510,), STATIC),
    # kernel_tpipe_impl.h AllocAddrs (queDepth == 0): an enqueue and a free ID per buffer from InitBuffer on
    "depth0_ids": (9, "TPipe::InitBuffer", "by depth-0 TQue buffers", QUEUE_IDS, ARCHS),
    # kernel_tquebind_impl.h AllocBuffer: bufferNumber 1 never moves the cursor off buffer 0
    "buffer_number_one": (11, "TQue::AllocTensor", "TQueConfig::bufferNumber is 1", ARCHS, ARCHS),
    # 关键特性说明.md table 3: S->MTE3 is the compiler's (auto-sync); off, the kernel must synchronise
    "getvalue_then_mte3": (12, "DataCopy", "which GlobalTensor::GetValue read before it with no S->MTE3", ARCHS, ARCHS),
    # dav_c220/m200/c100 kernel_operator_vec_cmpsel_impl.h: SELMODE 0 loads the mask before Select's barrier
    "select_after_compare": (14, "Select", "depends on the earlier write by Compare on pipe V", QUEUE_IDS, ARCHS),
    # dav_m200 kernel_operator_data_copy_impl.h: no UB -> UB DataCopy under __DAV_M200_VEC__
    "vector_core_ub_copy": (16, "DataCopy(UB->UB)", "not supported on the Atlas inference (310P) Vector Core",
                            (2002,), ARCHS),
    # dav_m200 kernel_operator_vec_brcb_impl.h: uint16_t dstRptEle (16 * 4096 wraps)
    "brcb_2002_wrap": (17, "Brcb", "keeps element offsets in uint16_t", (2002,), STATIC),
    # the same file's strided form waits MTE2 -> S -> V itself; elsewhere the kernel must
    "brcb_2002_scalar_sync": (18, "Brcb", "no MTE2->V synchronisation", (2201, 3510), STATIC),
}
# Correct code the twin once rejected, or still must accept: runs clean with good = 0.
FALSE_POSITIVES = {
    "two_selects": (13, ARCHS),               # Select's internal barriers order its scratch (dav_c220/m200 VselImpl)
    "select2_after_compare": (15, STATIC),    # SELMODE 2 reads the mask after those barriers (1001: no mode 2)
    "mte3_overlap_flags": (3, ARCHS),         # MTE3 -> S -> MTE3 flags order the copies as a barrier does
    "depth0_pipeline": (10, ARCHS),
}
AUTO_SYNC_OFF = {"getvalue_then_mte3", "two_selects", "select_after_compare", "select2_after_compare"}
PARAMS = {"depth0_ids": lambda arch, good: (4 if arch == 1001 else 8) + (0 if good else 1),
          "brcb_2002_wrap": lambda arch, good: 2048 if good else 4096}


def launch(name: str, arch: int, good: bool, auto_sync: bool | None = None):
    key = SCENARIOS[name][0] if name in SCENARIOS else FALSE_POSITIVES[name][0]
    x = np.linspace(-3, 3, N, dtype=np.float32)
    y = np.zeros(4 * N, np.float32)
    ws = np.zeros(RESERVED[arch] + (64 if good else 32) if name == "user_workspace" else 64, np.uint8)
    param = PARAMS[name](arch, good) if name in PARAMS else 0
    tiling = struct.pack("<4I", int(good), param, 0, 0)
    if auto_sync is None:
        auto_sync = name not in AUTO_SYNC_OFF
    run_kernel(SOURCE, "fidelity", 1, [x, y, ws, tiling], soc=SOCS[arch], tiling_key=key, auto_sync=auto_sync)
    return x, y, ws


CASES = [(n, a) for n, s in SCENARIOS.items() for a in s[4]]


@pytest.mark.parametrize("name,arch", CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_broken_kernel_is_judged_as_the_device_would(name: str, arch: int) -> None:
    _, api, message, fault_archs, _ = SCENARIOS[name]
    if arch not in fault_archs:
        launch(name, arch, good=False)  # the device runs it correctly here
        return
    with pytest.raises(KernelFault) as e:
        launch(name, arch, good=False)
    assert message in str(e.value), str(e.value)
    assert e.value.api == api, str(e.value)


@pytest.mark.parametrize("name,arch", CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_correct_twin_runs_clean(name: str, arch: int) -> None:
    launch(name, arch, good=True)


FP_CASES = [(n, a) for n, (_, archs) in FALSE_POSITIVES.items() for a in archs]


@pytest.mark.parametrize("name,arch", FP_CASES, ids=[f"{n}-{a}" for n, a in FP_CASES])
def test_false_positive_runs_clean(name: str, arch: int) -> None:
    launch(name, arch, good=False)


@pytest.mark.parametrize("arch", ARCHS)
def test_user_workspace_lands_after_the_arch_reserve(arch: int) -> None:
    x, _, ws = launch("user_workspace", arch, good=True)
    assert np.array_equal(ws[RESERVED[arch]:].view(np.float32), x[:16])
    assert not ws[:RESERVED[arch]].any()


@pytest.mark.parametrize("arch", ARCHS)
def test_depth0_queues_pass_data(arch: int) -> None:
    x, y, _ = launch("depth0_pipeline", arch, good=False)
    np.testing.assert_array_equal(y[:2 * N], np.tile(x + 1, 2))


@pytest.mark.parametrize("arch", ARCHS)
def test_buffer_number_one_reuses_the_first_buffer(arch: int) -> None:
    _, y, _ = launch("buffer_number_one", arch, good=True)
    assert y[0] == 1.0


@pytest.mark.parametrize("arch", ARCHS)
def test_getvalue_then_mte3_is_auto_synchronised(arch: int) -> None:
    """bisheng's --cce-auto-sync=on inserts the S->MTE3 wait the broken variant lacks."""
    launch("getvalue_then_mte3", arch, good=False, auto_sync=True)


@pytest.mark.parametrize("arch", ARCHS)
def test_two_selects_values(arch: int) -> None:
    x, y, _ = launch("two_selects", arch, good=False)
    gt = x > 1
    np.testing.assert_array_equal(y[:N], np.where(gt, x, 1.0))
    np.testing.assert_array_equal(y[N:2 * N], np.where(gt, 1.0, x if arch == 1001 else 2.0))


def run_nan_clamp(arch: int, good: bool, undetermined: str = "check") -> np.ndarray:
    x = np.linspace(-3, 3, N, dtype=np.float32)
    x[5] = np.nan
    y = np.zeros(4 * N, np.float32)
    ws = np.zeros((), np.uint8)  # unused; 0-d, as a 0-d operand is passed (the second run compares every buffer)
    tiling = struct.pack("<4I", int(good), 0, 0, 0)
    run_kernel(SOURCE, "fidelity", 1, [x, y, ws, tiling], soc=SOCS[arch], tiling_key=19, undetermined=undetermined)
    return y[:N]


@pytest.mark.parametrize("arch", ARCHS)
def test_nan_through_min_is_an_open_question(arch: int) -> None:
    """Min with a NaN operand: NaN or the other operand is undocumented (docs/twin.md, "Questions the sources leave
    open"). A clamp whose output depends on it faults; one that puts the NaN back with a compare/select runs."""
    with pytest.raises(UndeterminedResult, match="Max/Min/Maxs/Mins with one NaN operand"):
        run_nan_clamp(arch, good=False)
    y = run_nan_clamp(arch, good=True)
    assert np.isnan(y[5]) and np.all(np.isfinite(np.delete(y, 5)))
    first = run_nan_clamp(arch, good=False, undetermined="primary")
    second = run_nan_clamp(arch, good=False, undetermined="alternative")
    assert first[5] == 0.0 if arch in (2002, 1001) else np.isnan(first[5])  # 310P/910 then saturate the NaN
    assert second[5] == 1.0
