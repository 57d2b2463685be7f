// Canonical double-buffered elementwise kernel for the twin's own tests and benchmark: z = x * y + x (float).
// A2/A3/950: DataCopyPad handles the ragged last tile. 310P/910: aligned DataCopy for whole 32-byte blocks and a
// scalar loop for the last < 8 elements of the tensor, with explicit synchronisation around the scalar accesses.
#include "kernel_operator.h"

using namespace AscendC;

struct MulAddTiling {
    uint64_t total;    // elements
    uint32_t tileLen;  // elements per tile (multiple of 8)
    uint32_t reserved;
};

constexpr int32_t BUFFER_NUM = 2;

class KernelMulAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const MulAddTiling& t, TPipe* pipe) {
        const uint64_t blocks = (t.total + 7) / 8, cores = GetBlockNum(), idx = GetBlockIdx();
        const uint64_t base = blocks / cores, extra = blocks % cores;
        const uint64_t startBlock = idx * base + (idx < extra ? idx : extra);
        const uint64_t myBlocks = base + (idx < extra ? 1 : 0);
        start_ = startBlock * 8 < t.total ? startBlock * 8 : t.total;
        const uint64_t end = (startBlock + myBlocks) * 8 < t.total ? (startBlock + myBlocks) * 8 : t.total;
        len_ = end - start_;
        tileLen_ = t.tileLen;
        xGm_.SetGlobalBuffer((__gm__ float*)x + start_, len_);
        yGm_.SetGlobalBuffer((__gm__ float*)y + start_, len_);
        zGm_.SetGlobalBuffer((__gm__ float*)z + start_, len_);
        pipe->InitBuffer(inX_, BUFFER_NUM, tileLen_ * sizeof(float));
        pipe->InitBuffer(inY_, BUFFER_NUM, tileLen_ * sizeof(float));
        pipe->InitBuffer(outZ_, BUFFER_NUM, tileLen_ * sizeof(float));
    }

    __aicore__ inline void Process() {
        for (uint64_t off = 0; off < len_; off += tileLen_) {
            const uint32_t n = static_cast<uint32_t>(len_ - off < tileLen_ ? len_ - off : tileLen_);
            CopyIn(off, n);
            Compute(n);
            CopyOut(off, n);
        }
    }

private:
    __aicore__ inline void Load(LocalTensor<float>& dst, GlobalTensor<float>& src, uint64_t off, uint32_t n) {
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
        DataCopyPad(dst, src[off], DataCopyExtParams(1, n * sizeof(float), 0, 0, 0),
                    DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
#else
        const uint32_t aligned = n / 8 * 8;
        if (aligned > 0) DataCopy(dst, src[off], aligned);
        if (aligned < n) {
            // The scalar unit writes a recycled buffer: every pipe's earlier use of it must be complete.
            PipeBarrier<PIPE_ALL>();
            for (uint32_t i = aligned; i < n; ++i) dst.SetValue(i, src.GetValue(off + i));
            event_t e = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::S_V));
            SetFlag<HardEvent::S_V>(e);
            WaitFlag<HardEvent::S_V>(e);
        }
#endif
    }

    __aicore__ inline void CopyIn(uint64_t off, uint32_t n) {
        LocalTensor<float> x = inX_.AllocTensor<float>();
        LocalTensor<float> y = inY_.AllocTensor<float>();
        Load(x, xGm_, off, n);
        Load(y, yGm_, off, n);
        inX_.EnQue(x);
        inY_.EnQue(y);
    }

    __aicore__ inline void Compute(uint32_t n) {
        LocalTensor<float> x = inX_.DeQue<float>();
        LocalTensor<float> y = inY_.DeQue<float>();
        LocalTensor<float> z = outZ_.AllocTensor<float>();
        Mul(z, x, y, n);
        Add(z, z, x, n);
        outZ_.EnQue(z);
        inX_.FreeTensor(x);
        inY_.FreeTensor(y);
    }

    __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
        LocalTensor<float> z = outZ_.DeQue<float>();
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
        DataCopyPad(zGm_[off], z, DataCopyExtParams(1, n * sizeof(float), 0, 0, 0));
#else
        const uint32_t aligned = n / 8 * 8;
        if (aligned > 0) DataCopy(zGm_[off], z, aligned);
        if (aligned < n) {
            event_t e = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(e);
            WaitFlag<HardEvent::V_S>(e);
            for (uint32_t i = aligned; i < n; ++i) zGm_.SetValue(off + i, z.GetValue(i));
        }
#endif
        outZ_.FreeTensor(z);
    }

    TQue<TPosition::VECIN, 1> inX_, inY_;
    TQue<TPosition::VECOUT, 1> outZ_;
    GlobalTensor<float> xGm_, yGm_, zGm_;
    uint64_t start_ = 0, len_ = 0;
    uint32_t tileLen_ = 0;
};

extern "C" __global__ __aicore__ void mul_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
#if __NPU_ARCH__ != 1001
#if __NPU_ARCH__ == 2002
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AICORE);
#else
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
#endif
#endif
    GET_TILING_DATA_WITH_STRUCT(MulAddTiling, t, tiling);
    TPipe pipe;
    KernelMulAdd op;
    op.Init(x, y, z, t, &pipe);
    op.Process();
}
