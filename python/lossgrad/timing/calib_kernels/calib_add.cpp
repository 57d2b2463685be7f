// Calibration kernel: z = x + y on half, the case structure of the devkit's add_high_performance cases 1-4 as its
// README describes them (asc-devkit examples/01_simd_cpp_api/05_best_practices/00_vector_compute/
// add_high_performance/README.md); written for the time model's calibration (lossgrad.timing.calibration).
//
// Defines: CALIB_ROWS x CALIB_COLS elements; rows split evenly over the cores (the first ROWS % cores cores take one
// row more), each core's rows are contiguous in GM; CALIB_COPY_LEN elements per DataCopy; CALIB_DOUBLE 0 = one
// buffer set synchronised by V_MTE2/MTE2_V/MTE3_V/V_MTE3 flags, 1 = ping-pong with event IDs 0/1.
// UB layout as the README's: x, y, z in 32 KB slots (x at 0, y at 32 KB, z at 64 KB), so x and y share their bank
// group (the read-read conflict the README removes in case 6). Double buffering: the README's six 32 KB slots
// fill the whole 192 KB UB, beyond what a TPipe may allocate in the twin (no raw-address LocalTensor there), so
// the sum is written in place into x (Add(x, x, y): same copies, same flags, one buffer pair fewer).
#include "kernel_operator.h"

using namespace AscendC;

#ifndef CALIB_ROWS
#define CALIB_ROWS 8192
#endif
#ifndef CALIB_COLS
#define CALIB_COLS 8192
#endif
#ifndef CALIB_COPY_LEN
#define CALIB_COPY_LEN 4096
#endif
#ifndef CALIB_DOUBLE
#define CALIB_DOUBLE 0
#endif

constexpr uint32_t kRows = CALIB_ROWS, kCols = CALIB_COLS, kLen = CALIB_COPY_LEN;
constexpr uint32_t kSlotBytes = 32768;  // one 32 KB slot per tensor, as the README's layout
static_assert(kLen * sizeof(half) <= kSlotBytes, "a copy must fit its slot");

class KernelCalibAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, TPipe* pipe) {
        const uint32_t cores = GetBlockNum(), idx = GetBlockIdx();
        const uint32_t base = kRows / cores, extra = kRows % cores;
        const uint32_t myRows = base + (idx < extra ? 1 : 0);
        const uint32_t startRow = idx * base + (idx < extra ? idx : extra);
        total_ = static_cast<uint64_t>(myRows) * kCols;
        const uint64_t start = static_cast<uint64_t>(startRow) * kCols;
        xGm_.SetGlobalBuffer((__gm__ half*)x + start, total_);
        yGm_.SetGlobalBuffer((__gm__ half*)y + start, total_);
        zGm_.SetGlobalBuffer((__gm__ half*)z + start, total_);
        pipe->InitBuffer(ub_, (CALIB_DOUBLE ? 4 : 3) * kSlotBytes);
    }

    __aicore__ inline void Process() {
        const uint32_t blocks = static_cast<uint32_t>((total_ + kLen - 1) / kLen);
#if CALIB_DOUBLE
        LocalTensor<half> x[2] = {ub_.GetWithOffset<half>(kLen, 0), ub_.GetWithOffset<half>(kLen, 2 * kSlotBytes)};
        LocalTensor<half> y[2] = {ub_.GetWithOffset<half>(kLen, kSlotBytes),
                                  ub_.GetWithOffset<half>(kLen, 3 * kSlotBytes)};
        SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID1);
        for (uint32_t i = 0; i < blocks; ++i) {
            const uint32_t b = i & 1;
            const event_t e = b ? EVENT_ID1 : EVENT_ID0;
            const uint64_t off = static_cast<uint64_t>(i) * kLen;
            const uint32_t n = static_cast<uint32_t>(total_ - off < kLen ? total_ - off : kLen);
            WaitFlag<HardEvent::MTE3_MTE2>(e);  // this pair's previous result has left UB
            DataCopy(x[b], xGm_[off], n);
            DataCopy(y[b], yGm_[off], n);
            SetFlag<HardEvent::MTE2_V>(e);
            WaitFlag<HardEvent::MTE2_V>(e);
            Add(x[b], x[b], y[b], n);
            SetFlag<HardEvent::V_MTE3>(e);
            WaitFlag<HardEvent::V_MTE3>(e);
            DataCopy(zGm_[off], x[b], n);
            SetFlag<HardEvent::MTE3_MTE2>(e);
        }
        WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID1);
#else
        LocalTensor<half> x = ub_.GetWithOffset<half>(kLen, 0);
        LocalTensor<half> y = ub_.GetWithOffset<half>(kLen, kSlotBytes);
        LocalTensor<half> z = ub_.GetWithOffset<half>(kLen, 2 * kSlotBytes);
        for (uint32_t i = 0; i < blocks; ++i) {
            const uint64_t off = static_cast<uint64_t>(i) * kLen;
            const uint32_t n = static_cast<uint32_t>(total_ - off < kLen ? total_ - off : kLen);
            if (i > 0) WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);  // the last Add has read x and y
            DataCopy(x, xGm_[off], n);
            DataCopy(y, yGm_[off], n);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            if (i > 0) WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);  // the last z has left UB
            Add(z, x, y, n);
            if (i + 1 < blocks) SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(zGm_[off], z, n);
            if (i + 1 < blocks) SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
        }
#endif
    }

private:
    TBuf<TPosition::VECCALC> ub_;
    GlobalTensor<half> xGm_, yGm_, zGm_;
    uint64_t total_ = 0;
};

extern "C" __global__ __aicore__ void calib_add(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    KernelCalibAdd op;
    op.Init(x, y, z, &pipe);
    op.Process();
}
