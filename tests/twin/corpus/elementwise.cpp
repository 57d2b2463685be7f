// Corpus: elementwise activation, math and loss kernels written the way production Ascend C vector kernels are
// (double-buffered TQue<VECIN/VECOUT, BUFFER_NUM> queues, CopyIn/Compute/CopyOut per tile, a tiling struct read with
// GET_TILING_DATA, the element type from the build's DTYPE_X / DTYPE_Y macros, one op per tiling key, no manual
// synchronisation between the scalar and the vector pipes). The test compiles this file once per (arch, DTYPE_X)
// and runs every op its architecture offers against NumPy (tests/twin/test_corpus.py).
//
// Tails: on NpuArch 2201/3510 the last tile of a core moves with DataCopyPad (both the Ext and the older
// DataCopyParams/DataCopyPadParams forms, bf16 pad params from integer literals); on 2002/1001 the host sizes every
// core's range in whole 32-byte blocks and the kernel uses aligned DataCopy. Non-float types compute in float
// (Cast in, Cast out), as production kernels do for bfloat16_t.
#include "kernel_operator.h"

using namespace AscendC;

#ifndef DTYPE_X
#error "the test defines DTYPE_X"
#endif
#ifndef DTYPE_Y
#define DTYPE_Y DTYPE_X
#endif

constexpr int32_t BUFFER_NUM = 2;

struct ElementwiseTiling {
    uint32_t totalLength;  // elements of x (and t, y)
    uint32_t tileLength;   // elements per tile, a multiple of 32 bytes of DTYPE_X
    float alpha;           // op attribute (slope, scale, beta, delta, lower bound ...)
    float beta;            // second attribute (upper bound, offset ...)
};

enum ElementwiseOp : uint32_t {
    OP_RELU = 1, OP_LEAKY_RELU, OP_SIGMOID, OP_SOFTPLUS, OP_GELU_TANH, OP_HARDSWISH, OP_SILU, OP_ABS, OP_SIGN,
    OP_CLAMP, OP_AXPB, OP_ELU, OP_RSQRT_EPS, OP_L1, OP_MSE, OP_SMOOTH_L1, OP_HUBER, OP_BCE, OP_SOFT_MARGIN, OP_KL,
    OP_MSE_GRAD, OP_L1_GRAD, OP_DIV_SCALE, OP_COUNT
};

template <typename T, typename TY> class KernelElementwise {
public:
    __aicore__ inline KernelElementwise() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR t, GM_ADDR y, const ElementwiseTiling& tiling, uint32_t op) {
        op_ = op;
        alpha_ = tiling.alpha;
        beta_ = tiling.beta;
        tileLength_ = tiling.tileLength;
        constexpr uint32_t alignElems = 32 / sizeof(T);
        ASSERT(tileLength_ % alignElems == 0 && tileLength_ > 0);
        // Core range in whole 32-byte blocks; the last core takes what is left.
        const uint64_t perCore =
            Std::ceil_align(Std::ceil_division(static_cast<uint64_t>(tiling.totalLength), GetBlockNum()), alignElems);
        const uint64_t start = perCore * GetBlockIdx();
        blockLength_ = start >= tiling.totalLength ? 0 : Std::min(perCore, tiling.totalLength - start);
        xGm_.SetGlobalBuffer((__gm__ T*)x + start, blockLength_);
        tGm_.SetGlobalBuffer((__gm__ T*)t + start, blockLength_);
        yGm_.SetGlobalBuffer((__gm__ TY*)y + start, blockLength_);
        pipe_.InitBuffer(inQueueX_, BUFFER_NUM, tileLength_ * sizeof(T));
        pipe_.InitBuffer(inQueueT_, BUFFER_NUM, tileLength_ * sizeof(T));
        pipe_.InitBuffer(outQueueY_, BUFFER_NUM, tileLength_ * sizeof(TY));
        pipe_.InitBuffer(xBuf_, tileLength_ * sizeof(float));
        pipe_.InitBuffer(tBuf_, tileLength_ * sizeof(float));
        pipe_.InitBuffer(yBuf_, tileLength_ * sizeof(float));
        pipe_.InitBuffer(w1Buf_, tileLength_ * sizeof(float));
        pipe_.InitBuffer(w2Buf_, tileLength_ * sizeof(float));
    }

    __aicore__ inline void Process() {
        const uint32_t tiles = static_cast<uint32_t>(Std::ceil_division(blockLength_, tileLength_));
        for (uint32_t i = 0; i < tiles; ++i) {
            const uint32_t len = Std::min(tileLength_, static_cast<uint32_t>(blockLength_ - i * tileLength_));
            CopyIn(i, len);
            Compute(len);
            CopyOut(i, len);
        }
    }

private:
    __aicore__ inline bool Binary() const { return op_ >= OP_L1; }

    __aicore__ inline void CopyIn(uint32_t i, uint32_t len) {
        LocalTensor<T> xLocal = inQueueX_.template AllocTensor<T>();
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm_[i * tileLength_], copyParams, padParams);
#else
        DataCopy(xLocal, xGm_[i * tileLength_], len);
#endif
        inQueueX_.EnQue(xLocal);
        if (Binary()) {
            LocalTensor<T> tLocal = inQueueT_.template AllocTensor<T>();
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            DataCopyParams oldParams{1, static_cast<uint16_t>(len * sizeof(T)), 0, 0};
            DataCopyPadParams oldPad{false, 0, 0, 0};
            DataCopyPad(tLocal, tGm_[i * tileLength_], oldParams, oldPad);
#else
            DataCopy(tLocal, tGm_[i * tileLength_], len);
#endif
            inQueueT_.EnQue(tLocal);
        }
    }

    // x (and t) as float: the tile itself when T is float, else a Cast into a float buffer.
    template <typename U> __aicore__ inline LocalTensor<float> AsFloat(LocalTensor<U>& in, TBuf<TPosition::VECCALC>& buf,
                                                                       uint32_t len) {
        if constexpr (IsSameType<U, float>::value) {
            return in;
        } else {
            LocalTensor<float> f = buf.Get<float>();
            Cast(f, in, RoundMode::CAST_NONE, len);
            return f;
        }
    }

    __aicore__ inline void Compute(uint32_t len) {
        LocalTensor<T> xLocal = inQueueX_.template DeQue<T>();
        LocalTensor<float> x = AsFloat(xLocal, xBuf_, len);
        LocalTensor<T> tLocal;
        LocalTensor<float> t;
        if (Binary()) {
            tLocal = inQueueT_.template DeQue<T>();
            t = AsFloat(tLocal, tBuf_, len);
        }
        LocalTensor<TY> yLocal = outQueueY_.template AllocTensor<TY>();
        LocalTensor<float> y;
        if constexpr (IsSameType<TY, float>::value) y = yLocal;
        else y = yBuf_.Get<float>();
        LocalTensor<float> w1 = w1Buf_.Get<float>();
        LocalTensor<float> w2 = w2Buf_.Get<float>();
        Run(y, x, t, w1, w2, len);
        if constexpr (IsSameType<TY, bfloat16_t>::value) Cast(yLocal, y, RoundMode::CAST_RINT, len);
        else if constexpr (!IsSameType<TY, float>::value) Cast(yLocal, y, RoundMode::CAST_NONE, len);
        outQueueY_.EnQue(yLocal);
        inQueueX_.FreeTensor(xLocal);
        if (Binary()) inQueueT_.FreeTensor(tLocal);
    }

    // y = sigmoid(src) through exp (y may not alias src).
    __aicore__ inline void Sigmoid(const LocalTensor<float>& y, const LocalTensor<float>& src, uint32_t len) {
        Muls(y, src, -1.0f, len);
        Exp(y, y, len);
        Adds(y, y, 1.0f, len);
        Reciprocal(y, y, len);
    }

    __aicore__ inline void Run(const LocalTensor<float>& y, const LocalTensor<float>& x, const LocalTensor<float>& t,
                               const LocalTensor<float>& w1, const LocalTensor<float>& w2, uint32_t len) {
        switch (op_) {
            case OP_RELU:  // max(x, 0) with a zero tensor: Maxs does not exist on 1001
                Duplicate(w1, 0.0f, len);
                Max(y, x, w1, len);
                break;
#if __NPU_ARCH__ != 1001
            case OP_LEAKY_RELU: LeakyRelu(y, x, alpha_, len); break;
            case OP_HARDSWISH:  // x * min(max(x + 3, 0), 6) / 6
                Adds(w1, x, 3.0f, len);
                Maxs(w1, w1, 0.0f, len);
                Mins(w1, w1, 6.0f, len);
                Mul(y, x, w1, len);
                Muls(y, y, 1.0f / 6.0f, len);
                break;
            case OP_SIGN: Sign(y, x, len); break;
            case OP_CLAMP:
                Maxs(y, x, alpha_, len);
                Mins(y, y, beta_, len);
                break;
            case OP_ELU:  // max(x, 0) + alpha * (exp(min(x, 0)) - 1)
                Mins(w1, x, 0.0f, len);
                Exp(w1, w1, len);
                Adds(w1, w1, -1.0f, len);
                Muls(w1, w1, alpha_, len);
                Maxs(y, x, 0.0f, len);
                Add(y, y, w1, len);
                break;
            case OP_L1_GRAD:  // alpha * sign(x - t)
                Sub(w1, x, t, len);
                Sign(y, w1, len);
                Muls(y, y, alpha_, len);
                break;
#endif
            case OP_SIGMOID: Sigmoid(y, x, len); break;
            case OP_SOFTPLUS:  // ln(1 + exp(x))
                Exp(y, x, len);
                Adds(y, y, 1.0f, len);
                Ln(y, y, len);
                break;
            case OP_GELU_TANH:  // x * sigmoid(1.5957691 * (x + 0.044715 x^3))
                Mul(w1, x, x, len);
                Mul(w1, w1, x, len);
                Muls(w1, w1, 0.044715f, len);
                Add(w1, w1, x, len);
                Muls(w1, w1, 1.5957691f, len);
                Sigmoid(w2, w1, len);
                Mul(y, x, w2, len);
                break;
            case OP_SILU:
                Sigmoid(w1, x, len);
                Mul(y, x, w1, len);
                break;
            case OP_ABS: Abs(y, x, len); break;
            case OP_AXPB:
                Muls(y, x, alpha_, len);
                Adds(y, y, beta_, len);
                break;
            case OP_RSQRT_EPS:  // 1 / sqrt(x^2 + alpha)
                Mul(w1, x, x, len);
                Adds(w1, w1, alpha_, len);
                Sqrt(w1, w1, len);
                Reciprocal(y, w1, len);
                break;
            case OP_L1:
                Sub(w1, x, t, len);
                Abs(y, w1, len);
                break;
            case OP_MSE:
                Sub(w1, x, t, len);
                Mul(y, w1, w1, len);
                break;
            case OP_SMOOTH_L1:  // m = min(|d|, beta): 0.5 m^2 / beta + (|d| - m)
            case OP_HUBER: {    // m = min(|d|, delta): 0.5 m^2 + delta (|d| - m)
                Sub(w1, x, t, len);
                Abs(w1, w1, len);
                Duplicate(w2, alpha_, len);
                Min(w2, w1, w2, len);
                Sub(w1, w1, w2, len);
                Mul(w2, w2, w2, len);
                if (op_ == OP_SMOOTH_L1) {
                    Muls(w2, w2, 0.5f / alpha_, len);
                } else {
                    Muls(w2, w2, 0.5f, len);
                    Muls(w1, w1, alpha_, len);
                }
                Add(y, w1, w2, len);
                break;
            }
            case OP_BCE:  // -(t ln x + (1 - t) ln(1 - x))
                Ln(w1, x, len);
                Mul(w1, w1, t, len);
                Muls(w2, x, -1.0f, len);
                Adds(w2, w2, 1.0f, len);
                Ln(w2, w2, len);
                Muls(y, t, -1.0f, len);
                Adds(y, y, 1.0f, len);
                Mul(w2, w2, y, len);
                Add(y, w1, w2, len);
                Muls(y, y, -1.0f, len);
                break;
            case OP_SOFT_MARGIN:  // ln(1 + exp(-t x))
                Mul(w1, t, x, len);
                Muls(w1, w1, -1.0f, len);
                Exp(w1, w1, len);
                Adds(w1, w1, 1.0f, len);
                Ln(y, w1, len);
                break;
            case OP_KL:  // t (ln t - x), x is the log-probability
                Ln(w1, t, len);
                Sub(w1, w1, x, len);
                Mul(y, t, w1, len);
                break;
            case OP_MSE_GRAD:  // alpha (x - t), alpha = 2 / N
                Sub(w1, x, t, len);
                Muls(y, w1, alpha_, len);
                break;
            case OP_DIV_SCALE:  // alpha x / t
                Div(w1, x, t, len);
                Muls(y, w1, alpha_, len);
                break;
            default: ASSERT(false && "op not available on this NpuArch");
        }
    }

    __aicore__ inline void CopyOut(uint32_t i, uint32_t len) {
        LocalTensor<TY> yLocal = outQueueY_.template DeQue<TY>();
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
        if (Binary()) {
            DataCopyPad(yGm_[i * tileLength_], yLocal, DataCopyParams{1, static_cast<uint16_t>(len * sizeof(TY)), 0, 0});
        } else {
            DataCopyPad(yGm_[i * tileLength_], yLocal, DataCopyExtParams{1, static_cast<uint32_t>(len * sizeof(TY)), 0, 0, 0});
        }
#else
        DataCopy(yGm_[i * tileLength_], yLocal, len);
#endif
        outQueueY_.FreeTensor(yLocal);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueueX_, inQueueT_;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQueueY_;
    TBuf<TPosition::VECCALC> xBuf_, tBuf_, yBuf_, w1Buf_, w2Buf_;
    GlobalTensor<T> xGm_, tGm_;
    GlobalTensor<TY> yGm_;
    uint64_t blockLength_ = 0;
    uint32_t tileLength_ = 0;
    uint32_t op_ = 0;
    float alpha_ = 0.0f, beta_ = 0.0f;
};

REGISTER_TILING_DEFAULT(ElementwiseTiling);

extern "C" __global__ __aicore__ void corpus_elementwise(GM_ADDR x, GM_ADDR t, GM_ADDR y, GM_ADDR workspace,
                                                         GM_ADDR tiling) {
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    KernelElementwise<DTYPE_X, DTYPE_Y> op;
    // One op per tiling key, as the production kernels dispatch their specialisations.
    for (uint32_t key = OP_RELU; key < OP_COUNT; ++key) {
        if (TILING_KEY_IS(key)) {
            op.Init(x, t, y, tilingData, key);
            op.Process();
            return;
        }
    }
    ASSERT(false && "unknown tiling key");
}
