"""The twin's soft SyncAll (twin/sync_all.h, after asc-devkit's SoftSyncAllImpl): cores wait for each other, so
a core reads what every other core wrote before the barrier; misuse faults (a hang on hardware is a deadlock
fault here, never a hang), and so do a too small GM or UB workspace and usedCores beyond GetBlockNum()."""
import struct

import numpy as np
import pytest
from lossgrad.socs import get_soc
from lossgrad.twin import KernelFault, run_kernel

from _twin_common import ARCHS, KERNELS, SOCS

MODES = {"sum": 0, "only_core_zero": 1, "no_zeroing": 2, "small_gm": 3, "small_ub": 4, "too_many_cores": 5,
         "core_one_faults": 6, "same_slot": 7, "vector_core": 8}


def run_sync(arch: int, cores: int, mode: str, used_cores: int = 0, workspace: np.ndarray | None = None):
    out = np.full(cores * 8, np.nan, np.float32)
    if workspace is None:
        workspace = np.full(cores * 64 // 4, -1, np.int32)  # uninitialised: every counter reads -1
    tiling = struct.pack("<Ii", MODES[mode], used_cores)
    rep = run_kernel(KERNELS / "sync_all.cpp", "sync_all", cores, [out, workspace, tiling], soc=SOCS[arch])
    return out, rep


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cores", [1, 2, 7, 48])
def test_every_core_sees_every_slot_after_sync_all(arch: int, cores: int) -> None:
    cores = min(cores, get_soc(SOCS[arch]).cores)  # every block must run at once (see below)
    out, rep = run_sync(arch, cores, "sum")
    total = cores * (cores + 1) / 2
    np.testing.assert_array_equal(out.reshape(cores, 8)[:, 0], np.full(cores, total, np.float32))
    assert all(c.api["SyncAll"].calls == 1 for c in rep.cores)


def test_counters_survive_a_late_core_zeroing_them() -> None:
    """Every core zeroes all counters at its start; cores that already wait rewrite theirs (the devkit's first-call
    rule), so the barrier holds whatever the order. The launch also proves the zeroing is not a cross-core race."""
    out, _ = run_sync(2201, 16, "sum", workspace=np.arange(16 * 16, dtype=np.int32))
    assert out.reshape(16, 8)[0, 0] == 16 * 17 / 2


def test_a_core_that_never_arrives_is_a_deadlock_fault() -> None:
    with pytest.raises(KernelFault, match="deadlock: cores .* wait in SyncAll"):
        run_sync(2201, 4, "only_core_zero")


def test_unzeroed_counters_that_differ_deadlock() -> None:
    """Without the zeroing, counters left at different values make some cores wait for a sum never reached."""
    workspace = np.zeros(4 * 16, np.int32)
    workspace[0:4 * 8:8] = [0, 1, 2, 3]
    with pytest.raises(KernelFault, match="deadlock"):
        run_sync(2201, 4, "no_zeroing", workspace=workspace)


@pytest.mark.parametrize("mode,message", [("small_gm", "gmWorkspace holds"), ("small_ub", "ubWorkspace needs"),
                                          ("same_slot", "overlapping GM writes")])
def test_workspace_rules(mode: str, message: str) -> None:
    with pytest.raises(KernelFault, match=message):
        run_sync(3510, 4, mode)


def test_used_cores_beyond_block_num() -> None:
    with pytest.raises(KernelFault, match="usedCores 5 is outside"):
        run_sync(2002, 4, "too_many_cores", used_cores=5)


def test_a_fault_while_others_wait_ends_the_launch() -> None:
    with pytest.raises(KernelFault, match="core 1: Duplicate"):
        run_sync(1001, 4, "core_one_faults")


@pytest.mark.parametrize("arch", ARCHS)
def test_more_blocks_than_cores_hang(arch: int) -> None:
    """The device runs as many blocks at once as the SoC has cores and starts the others as blocks end: a SyncAll
    over more blocks waits for blocks that never start. run_kernel passes the SoC's cores (as many blocks as cores:
    test_every_core_sees_every_slot_after_sync_all)."""
    cores = get_soc(SOCS[arch]).cores
    with pytest.raises(KernelFault, match=f"blockDim {cores + 1} exceeds the {cores} cores of the SoC"):
        run_sync(arch, cores + 1, "sum")


def test_no_sync_all_with_the_310p_vector_core() -> None:
    """KERNEL_TYPE_MIX_VECTOR_CORE runs AI Cores and Vector Cores as separate tasks: no SyncAll (asc-devkit guide
    如何在矢量编程时启用Vector-Core.md)."""
    with pytest.raises(KernelFault, match="not supported on the Atlas inference \\(310P\\) Vector Core"):
        run_sync(2002, 2, "vector_core")
