// Held-out kernel: the structure of cann-api-explorer's vector units (Cryspia/cann-api-explorer
// examples/ascendc/vector/<op>/kernel.cpp and datacopy/datacopy, duplicate), whose CAModel times the held-out table
// holds (lossgrad.timing.heldout); written from that description for the time model, not copied.
//
// EXPLORER_KIND selects the unit, EXPLORER_OP the vector API:
//   UNARY / BINARY / SCALAR: 8 cores x 2048 float32; per core 16 tiles of 128 elements, each CopyIn (DataCopy into a
//     2-deep VECIN TQue, EnQue), Compute (DeQue, OP into a 2-deep VECOUT TQue, EnQue, FreeTensor), CopyOut (DeQue,
//     DataCopy to GM, FreeTensor); SCALAR ops take the scalar 2.0;
//   COPY: the same with no vector op: the input tile goes to the output queue by a UB -> UB DataCopy;
//   FILL: one core, 64 float32 set by Duplicate(3.0) in a 1-deep VECOUT TQue and copied out.
#include "kernel_operator.h"

#define UNARY 1
#define BINARY 2
#define SCALAR 3
#define COPY 4
#define FILL 5

using namespace AscendC;

constexpr int32_t kBlock = 2048;
constexpr int32_t kTiles = 16;
constexpr int32_t kTile = kBlock / kTiles;
constexpr int32_t kFill = 64;

#if EXPLORER_KIND == FILL
extern "C" __global__ __aicore__ void k_custom(GM_ADDR z) {
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> outQ;
    GlobalTensor<float> zGm;
    zGm.SetGlobalBuffer((__gm__ float*)z, kFill);
    pipe.InitBuffer(outQ, 1, kFill * sizeof(float));
    LocalTensor<float> zl = outQ.AllocTensor<float>();
    Duplicate<float>(zl, 3.0f, kFill);
    outQ.EnQue<float>(zl);
    LocalTensor<float> zo = outQ.DeQue<float>();
    DataCopy(zGm, zo, kFill);
    outQ.FreeTensor(zo);
}
#else
class ExplorerUnit {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
        const int32_t base = kBlock * GetBlockIdx();
        xGm_.SetGlobalBuffer((__gm__ float*)x + base, kBlock);
        zGm_.SetGlobalBuffer((__gm__ float*)z + base, kBlock);
        pipe_.InitBuffer(inX_, 2, kTile * sizeof(float));
        pipe_.InitBuffer(outZ_, 2, kTile * sizeof(float));
#if EXPLORER_KIND == BINARY
        yGm_.SetGlobalBuffer((__gm__ float*)y + base, kBlock);
        pipe_.InitBuffer(inY_, 2, kTile * sizeof(float));
#else
        (void)y;
#endif
    }

    __aicore__ inline void Process() {
        for (int32_t i = 0; i < kTiles; ++i) {
            CopyIn(i);
            Compute();
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t i) {
        LocalTensor<float> xl = inX_.AllocTensor<float>();
        DataCopy(xl, xGm_[i * kTile], kTile);
        inX_.EnQue(xl);
#if EXPLORER_KIND == BINARY
        LocalTensor<float> yl = inY_.AllocTensor<float>();
        DataCopy(yl, yGm_[i * kTile], kTile);
        inY_.EnQue(yl);
#endif
    }

    __aicore__ inline void Compute() {
        LocalTensor<float> xl = inX_.DeQue<float>();
        LocalTensor<float> zl = outZ_.AllocTensor<float>();
#if EXPLORER_KIND == BINARY
        LocalTensor<float> yl = inY_.DeQue<float>();
        EXPLORER_OP(zl, xl, yl, kTile);
        inY_.FreeTensor(yl);
#elif EXPLORER_KIND == SCALAR
        EXPLORER_OP(zl, xl, 2.0f, kTile);
#elif EXPLORER_KIND == UNARY
        EXPLORER_OP(zl, xl, kTile);
#else
        DataCopy(zl, xl, kTile);
#endif
        outZ_.EnQue<float>(zl);
        inX_.FreeTensor(xl);
    }

    __aicore__ inline void CopyOut(int32_t i) {
        LocalTensor<float> zl = outZ_.DeQue<float>();
        DataCopy(zGm_[i * kTile], zl, kTile);
        outZ_.FreeTensor(zl);
    }

    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> inX_, inY_;
    TQue<QuePosition::VECOUT, 2> outZ_;
    GlobalTensor<float> xGm_, yGm_, zGm_;
};

#if EXPLORER_KIND == BINARY
extern "C" __global__ __aicore__ void k_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    ExplorerUnit op;
    op.Init(x, y, z);
    op.Process();
}
#else
extern "C" __global__ __aicore__ void k_custom(GM_ADDR x, GM_ADDR z) {
    ExplorerUnit op;
    op.Init(x, nullptr, z);
    op.Process();
}
#endif
#endif
