// Corpus: row-wise normalisation pieces (row sum / mean / variance / max, RMSNorm, LayerNorm, softmax) in the style
// of production norm kernels: rows split over cores, one row per double-buffered tile, gamma loaded once through its
// own queue, reductions with ReduceSum / ReduceMax whose scalar result is read with GetValue and written with
// SetValue right next to vector ops, relying on auto-sync (no manual S<->V / S<->MTE3 synchronisation).
// ReduceSum has no float on 1001, so this file claims 2201, 3510 and 2002.
// x is [rows, cols] with cols * sizeof(DTYPE_X) a multiple of 32 bytes, so aligned DataCopy serves every arch.
// Reductions write y[core * rowsPerCoreAligned + r]; norms write y like x.
#include "kernel_operator.h"

using namespace AscendC;

#ifndef DTYPE_X
#error "the test defines DTYPE_X"
#endif

constexpr int32_t BUFFER_NUM = 2;

struct RowsTiling {
    uint32_t rows;
    uint32_t cols;
    uint32_t rowsPerCore;  // a multiple of 8 (one 32-byte block of float results)
    float eps;
};

enum RowsOp : uint32_t { ROW_SUM = 1, ROW_MEAN, ROW_VAR, RMS_NORM, LAYER_NORM, ROW_MAX, SOFTMAX, ROWS_OP_COUNT };

template <typename T> class KernelRows {
public:
    __aicore__ inline KernelRows() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, const RowsTiling& tiling, uint32_t op) {
        static_assert(IsSameType<T, float>::value, "this corpus kernel computes in the element type (float)");
        op_ = op;
        cols_ = tiling.cols;
        eps_ = tiling.eps;
        ASSERT(cols_ * sizeof(T) % 32 == 0 && tiling.rowsPerCore % 8 == 0);
        const uint32_t first = tiling.rowsPerCore * GetBlockIdx();
        myRows_ = first >= tiling.rows ? 0 : Std::min(tiling.rowsPerCore, tiling.rows - first);
        rowsPerCore_ = tiling.rowsPerCore;
        xGm_.SetGlobalBuffer((__gm__ T*)x + static_cast<uint64_t>(first) * cols_, static_cast<uint64_t>(myRows_) * cols_);
        gammaGm_.SetGlobalBuffer((__gm__ T*)gamma, cols_);
        if (Reduces()) {
            yGm_.SetGlobalBuffer((__gm__ T*)y + first, rowsPerCore_);
        } else {
            yGm_.SetGlobalBuffer((__gm__ T*)y + static_cast<uint64_t>(first) * cols_,
                                 static_cast<uint64_t>(myRows_) * cols_);
        }
        pipe_.InitBuffer(inQueueX_, BUFFER_NUM, cols_ * sizeof(T));
        pipe_.InitBuffer(outQueueY_, BUFFER_NUM, cols_ * sizeof(T));
        pipe_.InitBuffer(gammaQueue_, 1, cols_ * sizeof(T));
        pipe_.InitBuffer(workBuf_, cols_ * sizeof(T));
        pipe_.InitBuffer(reduceBuf_, (cols_ * 2 + 64) * sizeof(T));  // >= the ReduceSum/ReduceMax work area
        pipe_.InitBuffer(scalarBuf_, 64 * sizeof(T));
        pipe_.InitBuffer(resultBuf_, rowsPerCore_ * sizeof(T));
    }

    __aicore__ inline void Process() {
        if (myRows_ == 0) return;
        LocalTensor<T> gamma;
        if (!Reduces()) {
            gamma = gammaQueue_.template AllocTensor<T>();
            DataCopy(gamma, gammaGm_, cols_);
            gammaQueue_.EnQue(gamma);
            gamma = gammaQueue_.template DeQue<T>();
        }
        LocalTensor<T> result = resultBuf_.Get<T>();
        if (Reduces()) Duplicate(result, static_cast<T>(0), rowsPerCore_);
        for (uint32_t r = 0; r < myRows_; ++r) {
            CopyIn(r);
            Compute(r, gamma, result);
            if (!Reduces()) CopyOut(r);
        }
        if (Reduces()) DataCopy(yGm_, result, rowsPerCore_);  // scalar SetValue -> MTE3: auto-sync
        if (!Reduces()) gammaQueue_.FreeTensor(gamma);
    }

private:
    __aicore__ inline bool Reduces() const { return op_ <= ROW_VAR || op_ == ROW_MAX; }

    __aicore__ inline void CopyIn(uint32_t r) {
        LocalTensor<T> xLocal = inQueueX_.template AllocTensor<T>();
        DataCopy(xLocal, xGm_[static_cast<uint64_t>(r) * cols_], cols_);
        inQueueX_.EnQue(xLocal);
    }

    // Sum of the first cols_ elements of src, read back by the scalar unit.
    __aicore__ inline T RowSum(const LocalTensor<T>& src) {
        LocalTensor<T> s = scalarBuf_.Get<T>();
        ReduceSum(s, src, reduceBuf_.Get<T>(), cols_);
        return s.GetValue(0);  // V -> S: auto-sync
    }

    __aicore__ inline void Compute(uint32_t r, const LocalTensor<T>& gamma, LocalTensor<T>& result) {
        LocalTensor<T> x = inQueueX_.template DeQue<T>();
        LocalTensor<T> w = workBuf_.Get<T>();
        const float inv = 1.0f / static_cast<float>(cols_);
        if (Reduces()) {
            float v = 0.0f;
            if (op_ == ROW_SUM) {
                v = RowSum(x);
            } else if (op_ == ROW_MEAN) {
                v = RowSum(x) * inv;
            } else if (op_ == ROW_VAR) {
                const float mean = RowSum(x) * inv;
                Adds(w, x, -mean, cols_);
                Mul(w, w, w, cols_);
                v = RowSum(w) * inv;
            } else {
#if __NPU_ARCH__ != 1001
                LocalTensor<T> s = scalarBuf_.Get<T>();
                ReduceMax(s, x, reduceBuf_.Get<T>(), cols_, false);
                v = s.GetValue(0);
#endif
            }
            result.SetValue(r, v);
            inQueueX_.FreeTensor(x);
            return;
        }
        LocalTensor<T> y = outQueueY_.template AllocTensor<T>();
        if (op_ == RMS_NORM) {  // x * 1/sqrt(mean(x^2) + eps) * gamma
            Mul(w, x, x, cols_);
            const float ms = RowSum(w) * inv;
            Duplicate(w, ms + eps_, cols_);
            Sqrt(w, w, cols_);
            Div(y, x, w, cols_);
            Mul(y, y, gamma, cols_);
        } else if (op_ == LAYER_NORM) {  // (x - mean) / sqrt(var + eps) * gamma
            const float mean = RowSum(x) * inv;
            Adds(y, x, -mean, cols_);
            Mul(w, y, y, cols_);
            const float var = RowSum(w) * inv;
            Duplicate(w, var + eps_, cols_);
            Sqrt(w, w, cols_);
            Div(y, y, w, cols_);
            Mul(y, y, gamma, cols_);
        } else {  // SOFTMAX: exp(x - max) / sum
#if __NPU_ARCH__ != 1001
            LocalTensor<T> s = scalarBuf_.Get<T>();
            ReduceMax(s, x, reduceBuf_.Get<T>(), cols_);
            const float mx = s.GetValue(0);
            Adds(y, x, -mx, cols_);
            Exp(y, y, cols_);
            const float sum = RowSum(y);
            Muls(y, y, 1.0f / sum, cols_);
#endif
        }
        outQueueY_.EnQue(y);
        inQueueX_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t r) {
        LocalTensor<T> y = outQueueY_.template DeQue<T>();
        DataCopy(yGm_[static_cast<uint64_t>(r) * cols_], y, cols_);
        outQueueY_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueueX_;
    TQue<TPosition::VECIN, 1> gammaQueue_;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQueueY_;
    TBuf<TPosition::VECCALC> workBuf_, reduceBuf_, scalarBuf_, resultBuf_;
    GlobalTensor<T> xGm_, gammaGm_, yGm_;
    uint32_t op_ = 0, cols_ = 0, myRows_ = 0, rowsPerCore_ = 0;
    float eps_ = 0.0f;
};

REGISTER_TILING_DEFAULT(RowsTiling);

extern "C" __global__ __aicore__ void corpus_rows(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR workspace,
                                                  GM_ADDR tiling) {
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    KernelRows<DTYPE_X> op;
    for (uint32_t key = ROW_SUM; key < ROWS_OP_COUNT; ++key) {
        if (TILING_KEY_IS(key)) {
            op.Init(x, gamma, y, tilingData, key);
            op.Process();
            return;
        }
    }
    ASSERT(false && "unknown tiling key");
}
