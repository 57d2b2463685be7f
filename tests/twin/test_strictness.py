"""The strictness suite: one small kernel per broken rule (tests/twin/kernels/strict.cpp, selected by tiling key),
each rejected on every architecture where the rule applies with a KernelFault naming the core, the API and the
rule, and each paired with its correct twin (tiling.good = 1), which must pass."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from lossgrad.socs import get_soc
from lossgrad.twin import KernelFault, run_kernel

from _twin_common import ARCHS, KERNELS, SOCS

SOURCE = KERNELS / "strict.cpp"
ALL = ARCHS
QUEUE_IDS = (2201, 2002, 1001)  # architectures whose TQue takes event IDs from the per-event-type pools
N = 64

# name: (tiling key, API named in the fault, message substring, archs where the broken variant must fault)
SCENARIOS = {
    "ub_capacity": (1, "TPipe::InitBuffer", "UB exhausted", ALL),
    "buffer_limit_64": (2, "TPipe::InitBuffer", "more than 64 buffers in one TPipe", ALL),
    # NpuArch 3510 vector cores synchronise TQue buffers with buffer IDs (see buffer_ids_3510), not event IDs
    "free_event_ids_exhausted": (3, "TQue::FreeTensor", "no free event ID of HardEvent::V_MTE2", QUEUE_IDS),
    "operand_alignment_32": (4, "Add", "src0 start address 0x4 is not 32-byte aligned", ALL),
    "deque_empty": (5, "TQue::DeQue", "DeQue on an empty queue", ALL),
    "enque_beyond_depth": (6, "TQue::EnQue", "queue depth 1 exceeded", ALL),
    "alloc_beyond_num": (7, "TQue::AllocTensor", "AllocTensor beyond the buffer count", ALL),
    "free_not_owned": (8, "TQue::FreeTensor", "does not belong to this queue", ALL),
    "double_free": (9, "TQue::FreeTensor", "double free", ALL),
    "use_after_free": (10, "Duplicate", "freed or reset (use after FreeTensor", ALL),
    "tensor_enqueued_at_end": (11, "TPipe::~TPipe", "tensor still enqueued at kernel end", ALL),
    "setflag_unpaired": (12, "SetFlag", "set but never waited", ALL),
    "waitflag_without_setflag": (13, "WaitFlag", "waited without a matching SetFlag", ALL),
    "event_id_out_of_range": (14, "SetFlag", "out of range", ALL),
    "missing_mte2_to_v_sync": (15, "Muls", "no MTE2->V synchronisation", ALL),
    "missing_v_to_mte3_sync": (16, "DataCopy", "no V->MTE3 synchronisation", ALL),
    "missing_v_to_s_sync": (17, "LocalTensor::GetValue", "no V->S synchronisation", ALL),
    "missing_s_to_v_sync": (18, "Adds", "no S->V synchronisation", ALL),
    "gm_read_one_past_end": (19, "GlobalTensor::GetValue", "past the end of GM argument 0 (256 bytes)", ALL),
    "gm_write_one_past_end": (20, "GlobalTensor::SetValue", "past the end of GM argument 1 (256 bytes)", ALL),
    "gm_datacopy_past_end": (21, "DataCopy", "GM access [228, 260) past the end of GM argument 0", ALL),
    "global_tensor_size": (22, "GlobalTensor::GetValue", "outside the GlobalTensor's 8 elements", ALL),
    "cross_core_gm_write_overlap": (23, "GM write", "overlapping GM writes from different cores", ALL),
    "datacopy_not_multiple_of_32": (24, "DataCopy", "7 elements = 28 bytes is not a multiple of 32", ALL),
    "compare_count_not_256_bytes": (25, "Compare", "Compare/Compares counts not a multiple of 256 bytes", ALL),
    "compares_count_not_256_bytes": (26, "Compares", "Compare/Compares counts not a multiple of 256 bytes",
                                     (2201, 3510, 2002)),
    "uninitialised_ub_read": (27, "Add", "reads UB byte 0x100 that was never written", ALL),
    "datacopypad_dummy_bytes_read": (28, "Muls", "reads UB byte 0x14 that was never written", (2201, 3510)),
    "tiling_shorter_than_struct": (29, "GET_TILING_DATA", "the tiling buffer holds 8 bytes but the struct needs 16",
                                   ALL),
    "second_tpipe": (30, "TPipe", "a second TPipe while one is alive", ALL),
    "count_zero_on_3510": (31, "Adds", "count 0: a zero-length call is not guaranteed to be a no-op", (3510,)),
    "partial_operand_overlap": (32, "Add", "partially overlaps dst", ALL),
    "select_mode2_on_1001": (33, "Select", "VSEL_TENSOR_TENSOR_MODE is not supported on NpuArch 1001", (1001,)),
    "free_while_enqueued": (34, "TQue::FreeTensor", "tensor is still enqueued", ALL),
    "use_while_enqueued": (35, "Duplicate", "still enqueued: DeQue it before using it", ALL),
    "local_index_out_of_range": (36, "LocalTensor::GetValue", "index 64 out of range (size 64)", ALL),
    "tbuf_get_beyond_size": (37, "TBuf::Get", "len 17 elements (68 bytes) exceeds the buffer's 64 bytes", ALL),
    "operand_extent": (38, "Duplicate", "dst needs 260 bytes but the tensor only has 256", ALL),
    "event_id_never_released": (39, "TPipe::AllocEventID", "never released", ALL),
    "pipe_reset_with_live_tensor": (40, "TPipe::Reset", "is never freed", ALL),
    "level0_dst_block_stride_0": (41, "Add", "dstBlkStride 0 is illegal", ALL),
    "level0_partial_overlap": (42, "Add", "src0 and dst overlap without coinciding", ALL),
    "level0_issetmask_false_without_mask": (43, "Add", "isSetMask=false but the kernel set no mask", ALL),
    "level0_mask_reset_by_level2": (44, "Add", "since Muls reset the mask register", ALL),
    "setvectormask_wrong_mode": (45, "SetVectorMask", "call SetMaskCount() first", ALL),
    "reducesum_tmp_too_small": (46, "ReduceSum", "sharedTmpBuffer has 64 bytes but a ReduceSum of 5120", ALL),
    "sign_tmp_too_small": (47, "Sign", "sharedTmpBuffer has 736 bytes, below the minimum 768", (2201, 3510, 2002)),
    "cast_round_mode_for_pair": (48, "Cast", "is not legal for float -> ", ALL),
    "cast_in_place_between_sizes": (49, "Cast", "a Cast between element sizes cannot run in place", ALL),
    "compare_int32_non_eq_on_2201": (50, "Compare", "CMPMODE::GE on int32_t", (2201,)),
    "getcmpmask_never_written": (51, "GetCmpMask", "the CMPMASK register was never written", ALL),
    "integer_div_by_zero": (52, "Div", "integer division by zero", (3510,)),
    "gettpipeptr_without_pipe": (53, "GetTPipePtr", "no TPipe is alive", ALL),
    "datacopy_ub_unaligned": (54, "DataCopy", "dst start address 0x4 is not 32-byte aligned", ALL),
    "local_tensor_offset_beyond_size": (55, "LocalTensor::operator[]", "offset 17 exceeds the tensor size 16", ALL),
    "pipe_barrier_all_before_the_copy": (56, "Muls", "no MTE2->V synchronisation", ALL),
    "tbuf_used_after_pipe_reset": (57, "TBuf::Get", "released by TPipe::Reset/Destroy: call InitBuffer again", ALL),
    "tque_used_after_pipe_reset": (58, "TQue::AllocTensor", "released by TPipe::Reset/Destroy: call InitBuffer again",
                                   ALL),
    "mte2_copies_into_overlapping_ub": (59, "DataCopy", "need PipeBarrier<PIPE_MTE2> between them", ALL),
    "ub_to_ub_copy_beyond_65535_blocks": (60, "DataCopy(UB->UB)", "blocks of 32 bytes exceed the 65535", ALL),
    "reducesum_dst_inside_src": (61, "ReduceSum", "dst (UB 0x0, 2 bytes) overlaps src", ALL),
    "level0_compare_partial_mask_register": (62, "Compare", "partial mask", ALL),
    # event IDs: one pool per HardEvent and core, shared by TQue and the kernel's AllocEventID
    "three_double_buffered_vecin": (63, "TQue::FreeTensor",
                                    "no free event ID of HardEvent::V_MTE2: all 4 IDs of its pool are held (4 by TQue "
                                    "FreeTensor, 0 by TQue EnQue, 0 by the kernel's AllocEventID); NpuArch 1001 has 4",
                                    (1001,)),
    "kernel_ids_share_pool": (64, "TQue::FreeTensor", "(1 by TQue FreeTensor, 0 by TQue EnQue, ", QUEUE_IDS),
    "enque_holds_ids": (65, "TQue::EnQue", "no free event ID of HardEvent::MTE2_V", QUEUE_IDS),
    "setflag_on_queue_id": (66, "SetFlag", "HardEvent::V_MTE2 id 0 set twice without a WaitFlag (undefined; hangs on "
                            "hardware); the ID is held by a TQue buffer freed by FreeTensor", QUEUE_IDS),
    "waitflag_on_queue_id": (67, "TQue::AllocTensor", "HardEvent::V_MTE2 id 0 waited without a matching SetFlag "
                             "(hangs on hardware); the kernel's own WaitFlag consumed a flag the TQue had set",
                             QUEUE_IDS),
    "buffer_ids_3510": (68, "TPipe::InitBuffer", "more than 28 TQue buffers in one TPipe", (3510,)),
    # the scalar data cache: 64-byte lines, write-back
    "scalar_line_two_cores": (69, "GlobalTensor::SetValue", "cores 0 and 1 both write the 64-byte line [0, 64) of GM "
                              "argument 1 with SetValue", ALL),
    "scalar_line_then_mte3": (70, "DataCopy", "MTE3 writes bytes [32, 64) of GM argument 1, inside the 64-byte line "
                              "[0, 64) that holds SetValue data still dirty", ALL),
    "stale_getvalue": (71, "GlobalTensor::GetValue", "stale read of GM argument 1 bytes [4, 8): its 64-byte line "
                       "[0, 64) was in this core's data cache before DataCopy (MTE3) wrote GM there", ALL),
    "setvalue_into_stale_line": (72, "GlobalTensor::SetValue", "SetValue into the 64-byte line [0, 64) of GM argument "
                                 "1, which was in this core's data cache before DataCopy (MTE3) wrote GM there", ALL),
    "mte2_reads_dirty_line": (73, "DataCopy", "MTE2 reads bytes [0, 32) of GM argument 1, inside the 64-byte line "
                              "[0, 64) that holds SetValue data still dirty", ALL),
    "scalar_line_vs_other_core_dma": (74, "GM write", "core 1 wrote bytes [32, 64) of GM argument 1 by DMA inside the "
                                      "64-byte line [0, 64) that core 0 wrote with GlobalTensor::SetValue", ALL),
    "dcci_ub_does_not_flush_gm": (75, "DataCopy", "MTE3 writes bytes [32, 64) of GM argument 1", (2201, 3510)),
    # auto-sync: the same code faults with auto_sync=False and runs with auto_sync=True (AUTO_SYNC_PAIRS)
    "auto_v_s": (76, "LocalTensor::GetValue", "no V->S synchronisation", ALL),
    "auto_s_v": (77, "Adds", "no S->V synchronisation", ALL),
    "auto_s_mte3": (78, "DataCopy", "no S->MTE3 synchronisation", ALL),
    "auto_mte2_s": (79, "LocalTensor::GetValue", "no MTE2->S synchronisation", ALL),
    # one pad-value register: DataCopyPad(isPad=true) sets what a later isPad=false copy pads with
    "pad_register_from_ispad": (80, "Muls", "reads UB byte 0x14 that was never written", (2201, 3510)),
    "global_buffer_larger_than_host": (81, "GlobalTensor::SetValue", "past the end of GM argument 1 (256 bytes)", ALL),
    "free_all_event_returns_ids": (82, "TQue::FreeTensor", "(1 by TQue FreeTensor, 0 by TQue EnQue, ", QUEUE_IDS),
    # issue 16 (docs/twin.md "Vector ordering, queue hardware types, the data cache")
    "v_v_order": (83, "Adds", "no PipeBarrier<PIPE_V> between them: NpuArch", (2201, 2002, 1001)),
    "ub_to_ub_queue": (84, "Adds", "no MTE2->V synchronisation", ALL),
    "veccalc_queue_ids": (85, "TQue::FreeTensor", "no free event ID of HardEvent::MTE3_MTE2", QUEUE_IDS),
    "setvalue_after_mte3": (86, "GlobalTensor::SetValue", "SetValue into the 64-byte line [0, 64) of GM argument 1 "
                            "that this core's MTE3 wrote, with no MTE3->S synchronisation", ALL),
    "dcci_then_dma_no_dsb": (87, "DataCopy", "may still be in flight: call DataSyncBarrier", (2201, 3510)),
    "dcci_then_dma_no_pipe_sync": (88, "DataCopy", "with no S->MTE3 synchronisation after the DataCacheCleanAndInvalid",
                                   (2201, 3510, 2002)),
    "brcb_b16_behind_output": (89, "Brcb", "saves and restores the 256 bytes behind each repeat's output", (2002,)),
    "dirty_line_at_kernel_end": (90, "GlobalTensor::SetValue", "still dirty in the data cache at kernel end: NpuArch "
                                 "1001 has no data-cache write-back", (1001,)),
}

# Correct code the twin once rejected (issue 16): each runs clean on every architecture.
FALSE_POSITIVES = {"tensor_allocated_at_end": 150, "dcci_dsb_form": 151, "tque_config": 152, "ub_full_budget": 153,
                   "datacopypad_odd_gm_stride": 154}

# Kernels run on two cores (the fault names core 1).
TWO_CORES = {"cross_core_gm_write_overlap", "scalar_line_two_cores", "scalar_line_vs_other_core_dma"}
# Missing manual synchronisation that bisheng's --cce-auto-sync=on would insert: checked with auto_sync=False.
MANUAL_SYNC = {"missing_v_to_s_sync", "missing_s_to_v_sync", "v_v_order"}
# The broken code itself is the correct twin once auto-sync is on.
AUTO_SYNC_PAIRS = {"auto_v_s", "auto_s_v", "auto_s_mte3", "auto_mte2_s"}
EVENT_ID_SCENARIOS = {"free_event_ids_exhausted", "kernel_ids_share_pool", "enque_holds_ids",
                      "free_all_event_returns_ids", "veccalc_queue_ids"}


def _param(name: str, arch: int) -> int:
    soc = get_soc(SOCS[arch])
    if name in ("ub_capacity", "ub_full_budget"):
        return soc.ub_kernel_bytes
    if name in EVENT_ID_SCENARIOS:  # QUE_MAX_EVENT: event IDs per HardEvent
        return 4 if arch == 1001 else 8
    if name == "event_id_out_of_range":
        return 4 if arch == 1001 else 8
    return 0


def launch(name: str, arch: int, good: bool):
    key = SCENARIOS[name][0] if name in SCENARIOS else FALSE_POSITIVES[name]
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    z = np.zeros(8, np.float32)
    auto_sync = name not in MANUAL_SYNC
    if name in AUTO_SYNC_PAIRS:  # one code, two compiler settings
        auto_sync, good = good, False
    tiling = struct.pack("<4I", int(good), N, _param(name, arch), 0)
    if name == "tiling_shorter_than_struct" and not good:
        tiling = tiling[:8]
    block_dim = 2 if name in TWO_CORES else 1
    return run_kernel(SOURCE, "strict", block_dim, [x, y, z, tiling], soc=SOCS[arch], tiling_key=key,
                      auto_sync=auto_sync)


CASES = [(name, arch) for name in SCENARIOS for arch in ALL]


@pytest.mark.parametrize("name,arch", CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_broken_kernel_is_rejected(name, arch):
    key, api, message, fault_archs = SCENARIOS[name]
    if arch not in fault_archs:
        launch(name, arch, good=False)  # the rule does not apply (or the API does not exist) here
        return
    with pytest.raises(KernelFault) as e:
        launch(name, arch, good=False)
    fault = e.value
    assert message in str(fault), str(fault)
    assert fault.api == api, str(fault)
    assert fault.core == (1 if name in TWO_CORES else 0), str(fault)


# Correct under their own rule, but their scalar GM writes stay in the data cache on NpuArch 1001, which has no
# write-back at all (no DataCacheCleanAndInvalid, no kernel-end DCCI): there they end with that fault instead.
SCALAR_WRITES_LOST_ON_1001 = {"gm_write_one_past_end", "scalar_line_two_cores", "scalar_line_then_mte3",
                              "setvalue_into_stale_line", "mte2_reads_dirty_line", "scalar_line_vs_other_core_dma",
                              "global_buffer_larger_than_host"}


@pytest.mark.parametrize("name,arch", CASES, ids=[f"{n}-{a}" for n, a in CASES])
def test_correct_twin_passes(name, arch):
    if arch == 1001 and name in SCALAR_WRITES_LOST_ON_1001:
        with pytest.raises(KernelFault, match="NpuArch 1001 has no data-cache write-back"):
            launch(name, arch, good=True)
        return
    launch(name, arch, good=True)


FP_CASES = [(name, arch) for name in FALSE_POSITIVES for arch in ALL]


@pytest.mark.parametrize("name,arch", FP_CASES, ids=[f"{n}-{a}" for n, a in FP_CASES])
def test_false_positive_runs_clean(name, arch):
    launch(name, arch, good=False)


def test_suite_size():
    assert len(SCENARIOS) >= 90
    assert len({s[0] for s in SCENARIOS.values()}) == len(SCENARIOS)


@pytest.mark.parametrize("arch", ALL)
def test_in_place_alloc_and_deque_need_depth_zero(arch):
    """Device compile errors the twin once accepted: in-place AllocTensor(t)/DeQue(t) on a queue of depth 1."""
    from lossgrad.twin import TwinCompileError
    src = KERNELS / "inplace_queue.cpp"
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    with pytest.raises(TwinCompileError) as e:
        run_kernel(src, "inplace_queue", 1, [x, y], soc=SOCS[arch], defines={"INPLACE_BROKEN": 1})
    assert "can not AllocTensor in place while tque's depth is non zero" in str(e.value)
    assert "can not DeQue tensor in place while tque's depth is non zero" in str(e.value)
    assert "kernel_tquebind_impl.h" in str(e.value)
    run_kernel(src, "inplace_queue", 1, [x, y], soc=SOCS[arch], defines={"INPLACE_BROKEN": 0})
    assert np.array_equal(y, x)


def test_returning_alloc_and_deque_need_a_nonzero_depth() -> None:
    """Depth 0: the returning AllocTensor()/DeQue() are device compile errors, the in-place forms run
    (kernel_tquebind_impl.h; the static_asserts are the same on every arch)."""
    from lossgrad.twin import TwinCompileError
    src = KERNELS / "inplace_queue.cpp"
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    with pytest.raises(TwinCompileError) as e:
        run_kernel(src, "inplace_queue", 1, [x, y], soc=SOCS[2201], defines={"INPLACE_BROKEN": 0, "QUEUE_DEPTH": 0})
    assert "must use AllocTensor<LocalTensor&> api while tque's depth is zero" in str(e.value)
    assert "must use DeQue<LocalTensor&> api while tque's depth is zero" in str(e.value)
    run_kernel(src, "inplace_queue", 1, [x, y], soc=SOCS[2201], defines={"INPLACE_BROKEN": 1, "QUEUE_DEPTH": 0})
    assert np.array_equal(y, x)
