// Calibration kernel: GM -> UB copies only, the UB scenarios 1-8 of the devkit's data_copy example and cases 1-2 of
// its set_l2_cache_mode example as their READMEs describe them (asc-devkit examples/01_simd_cpp_api/
// 05_best_practices/04_memory_access/data_copy/README.md, examples/02_simd_c_api/02_features/03_c_api/
// 01_data_movement/00_set_l2_cache_mode/README.md); written for the time model (lossgrad.timing.calibration and
// .heldout).
//
// Tiling (CalibCopyTiling, the second argument): an m x n half matrix in GM, tiles of tileM rows x tileN columns, one
// DataCopyPad per tile (blockCount = tileM rows of curCols * 2 bytes, source stride (n - curCols) * 2 bytes; the
// last column tile is narrower when n % tileN != 0). Nothing is computed. mode:
//   0: each core walks its m / cores contiguous rows once, row tiles outer, column tiles inner (scenarios 1-4);
//   1: the same, 4 times over (scenario 5, set_l2 case 1);
//   2: the columns in 4 quarters, each quarter walked 4 times before the next (scenario 6, set_l2 case 2);
//   3: every core reads the whole matrix, blocks of m / cores rows in the same order on every core, past L2
//      (SetL2CacheHint(CACHE_MODE_DISABLE)) (scenario 7);
//   4: as 3, each core starting at its own block and rotating (scenario 8).
// The READMEs' kernels copy every tile to the same UB address back to back; the twin requires a PipeBarrier<PIPE_MTE2>
// between MTE2 copies into overlapping UB, so the tiles rotate through as many UB slots as fit and a barrier is placed
// only when the rotation wraps.
#include "kernel_operator.h"

using namespace AscendC;

struct CalibCopyTiling {
    uint32_t m, n, tileM, tileN, mode;
};

constexpr uint32_t kUbBytes = 180 * 1024;

class KernelCalibCopy {
public:
    __aicore__ inline void Init(GM_ADDR src, const CalibCopyTiling& t) {
        t_ = t;
        tileBytes_ = (t.tileM * t.tileN * sizeof(half) + 31) / 32 * 32;
        slots_ = kUbBytes / tileBytes_;
        ASSERT(slots_ >= 1);
        pipe_.InitBuffer(ub_, slots_ * tileBytes_);
        srcGm_.SetGlobalBuffer((__gm__ half*)src, static_cast<uint64_t>(t.m) * t.n);
        rowsPerCore_ = t.m / GetBlockNum();
    }

    __aicore__ inline void Process() {
        const uint32_t mStart = GetBlockIdx() * rowsPerCore_;
        if (t_.mode == 0) {
            Walk(mStart, 0, t_.n);
        } else if (t_.mode == 1) {
            for (uint32_t r = 0; r < 4; ++r) Walk(mStart, 0, t_.n);
        } else if (t_.mode == 2) {
            const uint32_t quarter = t_.n / 4;
            for (uint32_t q = 0; q < 4; ++q)
                for (uint32_t r = 0; r < 4; ++r) Walk(mStart, q * quarter, quarter);
        } else {
            srcGm_.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
            const uint32_t blocks = t_.m / rowsPerCore_;
            const uint32_t cores = GetBlockNum();
            for (uint32_t b = 0; b < blocks; ++b) {
                const uint32_t group = b / cores * cores;
                const uint32_t cur = t_.mode == 4 ? group + (b + GetBlockIdx()) % cores : b;
                Walk(cur * rowsPerCore_, 0, t_.n);
            }
        }
    }

private:
    // rowsPerCore_ rows from `row0`, columns [col0, col0 + cols), in tiles.
    __aicore__ inline void Walk(uint32_t row0, uint32_t col0, uint32_t cols) {
        const uint32_t nTiles = (cols + t_.tileN - 1) / t_.tileN;
        for (uint32_t mt = 0; mt < rowsPerCore_ / t_.tileM; ++mt) {
            const uint64_t row = row0 + mt * t_.tileM;
            for (uint32_t nt = 0; nt < nTiles; ++nt) {
                const uint32_t col = nt * t_.tileN;
                const uint32_t cur = col + t_.tileN > cols ? cols - col : t_.tileN;
                if (slot_ == slots_) {
                    PipeBarrier<PIPE_MTE2>();
                    slot_ = 0;
                }
                LocalTensor<half> dst = ub_.GetWithOffset<half>(t_.tileM * t_.tileN, slot_ * tileBytes_);
                DataCopyParams p;
                p.blockCount = static_cast<uint16_t>(t_.tileM);
                p.blockLen = static_cast<uint16_t>(cur * sizeof(half));
                p.srcStride = static_cast<uint16_t>((t_.n - cur) * sizeof(half));
                p.dstStride = 0;
                DataCopyPad(dst, srcGm_[row * t_.n + col0 + col], p, DataCopyPadParams(false, 0, 0, 0));
                ++slot_;
            }
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> ub_;
    GlobalTensor<half> srcGm_;
    CalibCopyTiling t_{};
    uint32_t tileBytes_ = 0, slots_ = 0, slot_ = 0, rowsPerCore_ = 0;
};

extern "C" __global__ __aicore__ void calib_data_copy(GM_ADDR src, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA_WITH_STRUCT(CalibCopyTiling, t, tiling);
    KernelCalibCopy op;
    op.Init(src, t);
    op.Process();
}
