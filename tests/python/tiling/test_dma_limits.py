"""DMA parameter limits: the tiling never plans a tile whose copies exceed them, and the kernel asserts them.

DataCopyPad's blockCount is a uint16_t limited to 4095 (asc-devkit docs/zh DataCopyPad pages; the strided DataCopy
likewise); a tile's rows move as one copy, so rows <= tileLen / padElems must stay <= 4095. On 950 the UB-side stride
is limited to 65535 blocks. The fuzz test (test_tiling_fuzz.check_dma) checks every plan; here the limits bind on
made-up parts with a large UB, and the kernel's ASSERT (the twin's fault) catches a copy the tiling did not bound.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from lossgrad import codegen
from lossgrad.dtypes import DType
from lossgrad.socs import SOCS, Fact
from lossgrad.tiling import data as td
from lossgrad.tiling import plan, problem_from_call
from lossgrad.twin import KernelFault, run_kernel
from lossgrad.validation import validate


@pytest.mark.parametrize("dtype,ub", [(np.float32, 1 << 20), (np.float16, 4 << 20), (np.float32, 8 << 20),
                                      (np.float16, 64 << 20)])
def test_tiling_clamps_the_tile_to_the_dma_limits(dtype: type, ub: int) -> None:
    arrays = [np.broadcast_to(np.zeros((), dtype), (100000, 3)) for _ in range(3)]
    call = validate("mse_loss_backward", *arrays, "none", soc="Ascend950PR_9579")
    arch = dataclasses.replace(call.soc.arch, ub_kernel_bytes=Fact(ub, "test", "none"))
    problem = dataclasses.replace(problem_from_call(call), soc=dataclasses.replace(call.soc, arch=arch))
    f = plan(problem).fields
    rows = f["tileLen"] // f["padElems"]  # most rows of a tile (a row's pitch is at least padElems)
    assert rows <= td.DMA_MAX_BLOCK_COUNT
    assert f["tileLen"] * 4 // 32 <= td.DMA_MAX_UB_STRIDE_BLOCKS_950
    # the clamp binds (a budget this large would allow longer tiles) and leaves less than one TILE_ALIGN step unused
    assert rows > td.DMA_MAX_BLOCK_COUNT - 256 // f["padElems"] or \
        (f["tileLen"] + 256) * 4 // 32 > td.DMA_MAX_UB_STRIDE_BLOCKS_950


PROBE = """
extern "C" __global__ __aicore__ void dma_probe(GM_ADDR src, GM_ADDR args) {
    GlobalTensor<float> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(src), 4096);
    GlobalTensor<uint32_t> a;
    a.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(args), 8);
    const uint32_t rows = a.GetValue(0);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096 * 8 * sizeof(float));
    lossgrad::LoadRows(buf.Get<float>(), g, rows, 1, 1, 8);  // rows of one float, 32 bytes apart in UB
}
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("dma_probe")
    (d / "lossgrad_tiling_data.h").write_text(td.c_header())
    src = d / "probe.cpp"
    f32 = {r: DType.FLOAT32 for r in codegen.kernel_roles("mse_loss_backward")}
    src.write_text(codegen.render_kernel("mse_loss_backward", f32) + PROBE)
    return src


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend950PR_9579"])
def test_kernel_asserts_the_block_count(probe: Path, soc: str) -> None:
    src = np.arange(4096, dtype=np.float32)
    ok = np.array([4095, 0, 0, 0, 0, 0, 0, 0], dtype=np.uint32)
    run_kernel(probe, "dma_probe", 1, [src, ok], soc=SOCS[soc])  # 4095 rows: one DataCopyPad
    # 4096 rows; and 65541, which the uint16_t field would silently turn into 5 rows (a copy that fits, no fault)
    for rows in (4096, 65536 + 5):
        bad = np.array([rows, 0, 0, 0, 0, 0, 0, 0], dtype=np.uint32)
        with pytest.raises(KernelFault, match="ASSERT.*DataCopyPad blockCount above 4095"):
            run_kernel(probe, "dma_probe", 1, [src, bad], soc=SOCS[soc])
