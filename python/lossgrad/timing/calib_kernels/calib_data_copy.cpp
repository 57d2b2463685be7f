// Calibration kernel: GM -> UB copies only, the UB scenarios 1-4 of the devkit's data_copy example as its README
// describes them (asc-devkit examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md);
// written for the time model's calibration (lossgrad.timing.calibration).
//
// Tiling (CalibCopyTiling, the second argument): an m x n half matrix in GM; each core takes CALIB_M / cores contiguous rows and walks them in
// tileM x tileN tiles, row tiles outer, column tiles inner; one DataCopyPad per tile with
// blockCount = tileM rows of curCols * 2 bytes (the last column tile is narrower when n % tileN != 0) and the
// source stride (n - curCols) * 2 bytes. Nothing is computed. The README's kernel copies every tile to the same UB
// address back to back; the twin requires a PipeBarrier<PIPE_MTE2> between MTE2 copies into overlapping UB, so the
// tiles rotate through as many UB slots as fit and a barrier is placed only when the rotation wraps.
#include "kernel_operator.h"

using namespace AscendC;

struct CalibCopyTiling {
    uint32_t m, n, tileM, tileN;
};

constexpr uint32_t kUbBytes = 180 * 1024;

extern "C" __global__ __aicore__ void calib_data_copy(GM_ADDR src, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA_WITH_STRUCT(CalibCopyTiling, t, tiling);
    const uint32_t tileBytes = (t.tileM * t.tileN * sizeof(half) + 31) / 32 * 32;
    const uint32_t slots = kUbBytes / tileBytes;
    ASSERT(slots >= 1);
    TPipe pipe;
    TBuf<TPosition::VECCALC> ub;
    pipe.InitBuffer(ub, slots * tileBytes);
    GlobalTensor<half> srcGm;
    srcGm.SetGlobalBuffer((__gm__ half*)src, static_cast<uint64_t>(t.m) * t.n);
    const uint32_t rowsPerCore = t.m / GetBlockNum();
    const uint32_t mStart = GetBlockIdx() * rowsPerCore;
    const uint32_t nTiles = (t.n + t.tileN - 1) / t.tileN;
    uint32_t slot = 0;
    for (uint32_t mt = 0; mt < rowsPerCore / t.tileM; ++mt) {
        const uint64_t row = mStart + mt * t.tileM;
        for (uint32_t nt = 0; nt < nTiles; ++nt) {
            const uint32_t col = nt * t.tileN;
            const uint32_t cols = col + t.tileN > t.n ? t.n - col : t.tileN;
            if (slot == slots) {
                PipeBarrier<PIPE_MTE2>();
                slot = 0;
            }
            LocalTensor<half> dst = ub.GetWithOffset<half>(t.tileM * t.tileN, slot * tileBytes);
            DataCopyParams p;
            p.blockCount = static_cast<uint16_t>(t.tileM);
            p.blockLen = static_cast<uint16_t>(cols * sizeof(half));
            p.srcStride = static_cast<uint16_t>((t.n - cols) * sizeof(half));
            p.dstStride = 0;
            DataCopyPad(dst, srcGm[row * t.n + col], p, DataCopyPadParams(false, 0, 0, 0));
            ++slot;
        }
    }
}
