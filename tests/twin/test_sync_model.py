"""The twin's models of the queue event IDs, the scalar data cache, the pad-value register and auto-sync, checked by
their observable results (Report counters, GM contents) on the strictness kernel's value scenarios
(tests/twin/kernels/strict.cpp). The broken/correct pairs of the same rules live in test_strictness.py."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from lossgrad.twin import KernelFault, run_kernel

from _twin_common import ARCHS, KERNELS, SOCS
from test_strictness import SCENARIOS

SOURCE = KERNELS / "strict.cpp"
N = 64
ALLOC_ORDER, PAD_REGISTER_VALUES, FREE_WITHOUT_ENQUE = 200, 201, 202


def launch(key: int, arch: int, good: bool = True, param: int = 0, block_dim: int = 1, auto_sync: bool = True):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    z = np.zeros(8, np.float32)
    tiling = struct.pack("<4I", int(good), N, param, 0)
    report = run_kernel(SOURCE, "strict", block_dim, [x, y, z, tiling], soc=SOCS[arch], tiling_key=key,
                        auto_sync=auto_sync)
    return report, y


@pytest.mark.parametrize("arch", ARCHS)
def test_three_double_buffered_vecin_queues_hold_six_free_ids(arch):
    """Two tiles over three double-buffered VECIN queues: buffer 0 of each queue keeps its V_MTE2 ID while the
    cursor hands out buffer 1, so 6 IDs are held at the end (4 exist on 1001: the strictness pair faults there)."""
    key = SCENARIOS["three_double_buffered_vecin"][0]
    good, _ = launch(key, arch, good=True)
    if arch == 3510:  # vector cores of 3510 synchronise queues with buffer IDs: no event IDs at all
        assert good.cores[0].event_ids_peak == {}
        assert good.cores[0].buffer_ids_peak == 3
        broken, _ = launch(key, arch, good=False)
        assert broken.cores[0].buffer_ids_peak == 6
        return
    assert good.cores[0].event_ids_peak == {"V_MTE2": 3, "MTE2_V": 3}
    assert good.cores[0].buffer_ids_peak == 0
    if arch == 1001:
        with pytest.raises(KernelFault, match="HardEvent::V_MTE2"):
            launch(key, arch, good=False)
        return
    broken, _ = launch(key, arch, good=False)
    assert broken.cores[0].event_ids_peak == {"V_MTE2": 6, "MTE2_V": 3}


@pytest.mark.parametrize("arch", ARCHS)
def test_allocation_rotates_over_the_buffers(arch):
    """AllocTensor takes the buffer at the rotating cursor (0, 1, 2, 0, 1), not the first free one."""
    _, y = launch(ALLOC_ORDER, arch)
    base = y[0]
    assert list(y[:5] - base) == [0, 32, 64, 0, 32]


@pytest.mark.parametrize("arch", ARCHS)
def test_free_without_enque_is_legal(arch):
    report, _ = launch(FREE_WITHOUT_ENQUE, arch, auto_sync=False)
    assert report.auto_sync is False
    expected = {} if arch == 3510 else {"V_MTE2": 2}  # two buffers alternate, each holding its free event
    assert report.cores[0].event_ids_peak == expected


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_ids_and_queue_ids_share_one_pool(arch):
    """The kernel holds all but two V_MTE2 IDs; the queue's two held IDs fill the pool exactly."""
    key = SCENARIOS["kernel_ids_share_pool"][0]
    ids = 4 if arch == 1001 else 8
    report, _ = launch(key, arch, good=True, param=ids)
    assert report.cores[0].event_ids_peak.get("V_MTE2") == (ids - 2 if arch == 3510 else ids)


@pytest.mark.parametrize("arch", ARCHS)
def test_scalar_writes_reach_gm_at_flush_or_kernel_end(arch):
    """Two cores write lines 64 bytes apart; the data cache writes them back (DataCacheCleanAndInvalid where the
    arch has it). NpuArch 1001 has no write-back at all: the lines never reach GM at a defined time."""
    key = SCENARIOS["scalar_line_two_cores"][0]
    if arch == 1001:
        with pytest.raises(KernelFault, match="still dirty in the data cache at kernel end"):
            launch(key, arch, good=True, block_dim=2)
        return
    report, y = launch(key, arch, good=True, block_dim=2)
    assert y[0] == 10.0 and y[16] == 11.0
    assert not np.any(np.delete(y, [0, 16]))
    assert [c.scalar_gm_writes for c in report.cores] == [1, 1]


@pytest.mark.parametrize("arch", ARCHS)
def test_dma_after_a_flushed_scalar_write_keeps_both(arch):
    key = SCENARIOS["scalar_line_then_mte3"][0]
    if arch == 1001:  # no DCCI and no kernel-end write-back: the scalar write is never flushed
        with pytest.raises(KernelFault, match="still dirty in the data cache at kernel end"):
            launch(key, arch, good=True)
        return
    _, y = launch(key, arch, good=True)
    assert y[0] == 3.0
    dst = 16 if arch == 1001 else 8
    assert np.all(y[dst:dst + 8] == 1.0)


@pytest.mark.parametrize("arch", (2201, 3510))
def test_one_pad_value_register(arch):
    """SetPadValue(1) then DataCopyPad(isPad=true, 7): a later isPad=false copy pads with 7, the register's value."""
    _, y = launch(PAD_REGISTER_VALUES, arch)
    assert list(y[:5]) == [0, 1, 2, 3, 4]
    assert list(y[5:8]) == [7.0, 7.0, 7.0]


@pytest.mark.parametrize("arch", ARCHS)
def test_set_global_buffer_may_exceed_the_host_buffer(arch):
    key = SCENARIOS["global_buffer_larger_than_host"][0]
    if arch == 1001:  # the write itself is legal; the line is never written back on 1001
        with pytest.raises(KernelFault, match="still dirty in the data cache at kernel end"):
            launch(key, arch, good=True)
        return
    _, y = launch(key, arch, good=True)
    assert y[N - 1] == 1.0


@pytest.mark.parametrize("arch", ARCHS)
def test_auto_sync_is_a_run_time_switch(arch):
    """Both settings run one cached library: no rebuild, no second cache entry."""
    key = SCENARIOS["auto_s_mte3"][0]
    on, y = launch(key, arch, good=False, auto_sync=True)
    assert list(y[:8]) == list(range(8))
    with pytest.raises(KernelFault, match="no S->MTE3 synchronisation"):
        launch(key, arch, good=False, auto_sync=False)
    again, _ = launch(key, arch, good=False, auto_sync=True)
    assert on.cached and again.cached


def test_auto_sync_leaves_other_pipe_pairs_manual():
    """--cce-auto-sync covers S<->V/MTE2/MTE3 only: a TBuf copied in by MTE2 and read by V still needs MTE2->V."""
    key = SCENARIOS["missing_mte2_to_v_sync"][0]
    with pytest.raises(KernelFault, match="no MTE2->V synchronisation"):
        launch(key, 2201, good=False, auto_sync=True)


@pytest.mark.parametrize("arch", ARCHS)
def test_project_kernel_runs_with_and_without_auto_sync(arch):
    """The project's own kernels synchronise explicitly: they run clean with auto-sync off as well as on, and give
    the same bits. Rows of 1001 floats exercise the row tails; two blocks of rows, several tiles per core."""
    from lossgrad.golden import compute_call
    from lossgrad.runners.twin import run_twin
    from lossgrad.validation import validate

    rng = np.random.default_rng(arch)
    shape = (6, 1001)
    grad, x, t = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    call = validate("mse_loss_backward", grad, x, t, "none", soc=SOCS[arch])
    off = run_twin(call, auto_sync=False).output
    on = run_twin(call, auto_sync=True).output
    assert np.array_equal(off.view(np.uint32), on.view(np.uint32))
    np.testing.assert_allclose(on, compute_call(call).astype(np.float32), rtol=2e-6, atol=1e-6)
