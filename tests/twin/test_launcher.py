"""The canonical double-buffered kernel (tests/twin/kernels/mul_add.cpp, z = x * y + x) on all four architectures,
1 to 10^7 elements, 1 to 48 cores: results exact against NumPy, and the launcher's counters prove that every GM
byte is read once and written once and that every core that has work does it."""
import struct

import numpy as np
import pytest
from lossgrad.twin import KernelFault, run_kernel

from _twin_common import ARCHS, KERNELS, SOCS

SIZES = (1, 7, 8, 33, 4096 + 7, 10**6 + 3, 10**7)
TILE = 4096


def run_mul_add(n: int, arch: int, block_dim: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    z = np.full(n, np.nan, np.float32)
    tiling = struct.pack("<QII", n, TILE, 0)
    rep = run_kernel(KERNELS / "mul_add.cpp", "mul_add", block_dim, [x, y, z, tiling], soc=SOCS[arch])
    return x, y, z, rep


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("block_dim", [1, 48])
def test_mul_add(arch, n, block_dim):
    if arch == 1001 and n % 8:
        # mul_add writes a ragged tail with GlobalTensor::SetValue; NpuArch 1001 never writes a dirty line back
        # (no DCCI, no kernel-end flush): the twin rejects the kernel there (docs/twin.md, issue 16)
        with pytest.raises(KernelFault, match="NpuArch 1001 has no data-cache write-back"):
            run_mul_add(n, arch, block_dim, seed=n)
        return
    x, y, z, rep = run_mul_add(n, arch, block_dim, seed=n)
    np.testing.assert_array_equal(z, x * y + x)  # float32: the same two roundings as Mul then Add
    size = 4 * n
    for i in (0, 1):  # inputs: every byte read exactly once
        b = rep.buffers[i]
        assert b.size == size and b.read_bytes == b.read_distinct == size and b.write_bytes == 0
    out = rep.buffers[2]
    assert out.write_bytes == out.write_distinct == size and out.read_bytes == 0
    assert rep.gm_read_bytes == 2 * size and rep.gm_write_bytes == size
    # Work is split in 32-byte blocks: every core gets some while there are enough blocks.
    blocks = -(-n // 8)
    busy = [c.gm_write_bytes > 0 for c in rep.cores]
    assert len(rep.cores) == block_dim
    assert sum(busy) == min(block_dim, blocks)
    assert all(busy[:min(block_dim, blocks)])
    per_core = [b.write for b in out.by_core]
    assert max(per_core) - min(p for p in per_core if p) < 64  # balanced: one extra block, one ragged tail
    tiles = sum(c.tiles for c in rep.cores)
    assert tiles == sum(-(-(p // 4) // TILE) for p in per_core)
    assert rep.api_totals()["Mul"].elements == n and rep.api_totals()["Add"].elements == n
    assert max(c.ub_peak_bytes for c in rep.cores) == 6 * TILE * 4 <= rep.ub_kernel_bytes


@pytest.mark.parametrize("arch", ARCHS)
def test_tail_strategy_per_arch(arch):
    """A2/A3 and 950 copy the ragged tail with DataCopyPad; 310P and 910 use aligned DataCopy plus scalar accesses."""
    n = 4096 + 7
    if arch == 1001:  # the scalar tail write is never written back on 1001
        with pytest.raises(KernelFault, match="NpuArch 1001 has no data-cache write-back"):
            run_mul_add(n, arch, 1)
        return
    *_, rep = run_mul_add(n, arch, 1)
    core = rep.cores[0]
    if arch in (2201, 3510):
        assert core.data_copy_pad_calls > 0 and core.scalar_gm_reads == 0
    else:
        assert core.data_copy_pad_calls == 0 and core.scalar_gm_reads == 2 * 7 and core.scalar_gm_writes == 7


def test_report_fields():
    *_, rep = run_mul_add(1000, 2201, 4)
    assert rep.kernel == "mul_add" and rep.soc == "Ascend910B1" and rep.block_dim == 4
    assert rep.ub_kernel_bytes == 188416
    assert len(rep.buffers) == 4 and rep.buffers[3].size == 16
