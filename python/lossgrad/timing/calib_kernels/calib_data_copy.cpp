// Calibration kernel: GM -> UB copies only, the UB scenarios 1-4 of the devkit's data_copy example as its README
// describes them (asc-devkit examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md);
// written for the time model's calibration (lossgrad.timing.calibration).
//
// Defines: a CALIB_M x CALIB_N half matrix in GM; each core takes CALIB_M / cores contiguous rows and walks them in
// CALIB_TILE_M x CALIB_TILE_N tiles, row tiles outer, column tiles inner; one DataCopyPad per tile with
// blockCount = TILE_M rows of curCols * 2 bytes (the last column tile is narrower when N % TILE_N != 0) and the
// source stride (N - curCols) * 2 bytes. Nothing is computed. The README's kernel copies every tile to the same UB
// address back to back; the twin requires a PipeBarrier<PIPE_MTE2> between MTE2 copies into overlapping UB, so the
// tiles rotate through as many UB slots as fit and a barrier is placed only when the rotation wraps.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t kM = CALIB_M, kN = CALIB_N, kTileM = CALIB_TILE_M, kTileN = CALIB_TILE_N;
constexpr uint32_t kTileBytes = (kTileM * kTileN * sizeof(half) + 31) / 32 * 32;
constexpr uint32_t kUbBytes = 180 * 1024;
constexpr uint32_t kSlots = kUbBytes / kTileBytes;
static_assert(kSlots >= 1, "a tile must fit UB");

extern "C" __global__ __aicore__ void calib_data_copy(GM_ADDR src) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    TBuf<TPosition::VECCALC> ub;
    pipe.InitBuffer(ub, kSlots * kTileBytes);
    GlobalTensor<half> srcGm;
    srcGm.SetGlobalBuffer((__gm__ half*)src, static_cast<uint64_t>(kM) * kN);
    const uint32_t rowsPerCore = kM / GetBlockNum();
    const uint32_t mStart = GetBlockIdx() * rowsPerCore;
    const uint32_t nTiles = (kN + kTileN - 1) / kTileN;
    uint32_t slot = 0;
    for (uint32_t mt = 0; mt < rowsPerCore / kTileM; ++mt) {
        const uint64_t row = mStart + mt * kTileM;
        for (uint32_t nt = 0; nt < nTiles; ++nt) {
            const uint32_t col = nt * kTileN;
            const uint32_t cols = col + kTileN > kN ? kN - col : kTileN;
            if (slot == kSlots) {
                PipeBarrier<PIPE_MTE2>();
                slot = 0;
            }
            LocalTensor<half> dst = ub.GetWithOffset<half>(kTileM * kTileN, slot * kTileBytes);
            DataCopyParams p;
            p.blockCount = static_cast<uint16_t>(kTileM);
            p.blockLen = static_cast<uint16_t>(cols * sizeof(half));
            p.srcStride = static_cast<uint16_t>((kN - cols) * sizeof(half));
            p.dstStride = 0;
            DataCopyPad(dst, srcGm[row * kN + col], p, DataCopyPadParams(false, 0, 0, 0));
            ++slot;
        }
    }
}
