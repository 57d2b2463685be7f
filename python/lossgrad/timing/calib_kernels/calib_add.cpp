// Calibration kernel: z = x + y on half, the case structure of the devkit's add_high_performance cases 1-4 as its
// README describes them (asc-devkit examples/01_simd_cpp_api/05_best_practices/00_vector_compute/
// add_high_performance/README.md); written for the time model's calibration (lossgrad.timing.calibration).
//
// Tiling (CalibAddTiling, the fourth argument): rows x cols elements; rows split evenly over the cores (the first
// rows % cores cores take one row more), each core's rows contiguous in GM; copyLen elements per DataCopy;
// doubleBuffer 0 = one buffer set synchronised by V_MTE2/MTE2_V/MTE3_V/V_MTE3 flags, 1 = ping-pong with event IDs 0/1.
// Static tensor programming as the README's: no TPipe, raw-address LocalTensors of 16384 halves (32 KB) each,
// InitSocState at entry and PipeBarrier<PIPE_ALL> at the end. UB layout as the README's: x, y, z at 0, 32 KB, 64 KB
// (x and y share their bank group: the read-read conflict the README removes in case 6); double buffering adds the
// pong set at 96, 128 and 160 KB, six slots over the whole 192 KB UB of the A2 the cases ran on.
#include "kernel_operator.h"

using namespace AscendC;

struct CalibAddTiling {
    uint32_t rows, cols, copyLen, doubleBuffer;
};

constexpr uint32_t kSlotElems = 16384;  // MAX_DATA_COPY_LEN of the README (A2): one 32 KB slot per tensor
constexpr uint32_t kSlotBytes = kSlotElems * sizeof(half);

inline LocalTensor<half> Slot(uint32_t i) { return LocalTensor<half>(TPosition::VECCALC, i * kSlotBytes, kSlotElems); }

class KernelCalibAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const CalibAddTiling& t) {
        ASSERT(t.copyLen <= kSlotElems);
        len_ = t.copyLen;
        double_ = t.doubleBuffer != 0;
        const uint32_t cores = GetBlockNum(), idx = GetBlockIdx();
        const uint32_t base = t.rows / cores, extra = t.rows % cores;
        const uint32_t myRows = base + (idx < extra ? 1 : 0);
        const uint32_t startRow = idx * base + (idx < extra ? idx : extra);
        total_ = static_cast<uint64_t>(myRows) * t.cols;
        const uint64_t start = static_cast<uint64_t>(startRow) * t.cols;
        xGm_.SetGlobalBuffer((__gm__ half*)x + start, total_);
        yGm_.SetGlobalBuffer((__gm__ half*)y + start, total_);
        zGm_.SetGlobalBuffer((__gm__ half*)z + start, total_);
    }

    __aicore__ inline void Process() {
        if (double_) {
            ProcessDouble();
        } else {
            ProcessSingle();
        }
    }

private:
    __aicore__ inline void ProcessDouble() {
        const uint32_t len = len_;
        const uint32_t blocks = static_cast<uint32_t>((total_ + len - 1) / len);
        LocalTensor<half> x[2] = {Slot(0), Slot(3)};
        LocalTensor<half> y[2] = {Slot(1), Slot(4)};
        LocalTensor<half> z[2] = {Slot(2), Slot(5)};
        SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
        SetFlag<HardEvent::V_MTE2>(EVENT_ID1);
        SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
        SetFlag<HardEvent::MTE3_V>(EVENT_ID1);
        for (uint32_t i = 0; i < blocks; ++i) {
            const uint32_t b = i & 1;
            const event_t e = b ? EVENT_ID1 : EVENT_ID0;
            const uint64_t off = static_cast<uint64_t>(i) * len;
            const uint32_t n = static_cast<uint32_t>(total_ - off < len ? total_ - off : len);
            WaitFlag<HardEvent::V_MTE2>(e);  // this set's last Add has read x and y
            DataCopy(x[b], xGm_[off], n);
            DataCopy(y[b], yGm_[off], n);
            SetFlag<HardEvent::MTE2_V>(e);
            WaitFlag<HardEvent::MTE2_V>(e);
            WaitFlag<HardEvent::MTE3_V>(e);  // this set's last z has left UB
            Add(z[b], x[b], y[b], n);
            SetFlag<HardEvent::V_MTE2>(e);
            SetFlag<HardEvent::V_MTE3>(e);
            WaitFlag<HardEvent::V_MTE3>(e);
            DataCopy(zGm_[off], z[b], n);
            SetFlag<HardEvent::MTE3_V>(e);
        }
        WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE2>(EVENT_ID1);
        WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE3_V>(EVENT_ID1);
    }

    __aicore__ inline void ProcessSingle() {
        const uint32_t len = len_;
        const uint32_t blocks = static_cast<uint32_t>((total_ + len - 1) / len);
        LocalTensor<half> x = Slot(0);
        LocalTensor<half> y = Slot(1);
        LocalTensor<half> z = Slot(2);
        for (uint32_t i = 0; i < blocks; ++i) {
            const uint64_t off = static_cast<uint64_t>(i) * len;
            const uint32_t n = static_cast<uint32_t>(total_ - off < len ? total_ - off : len);
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
    }

    GlobalTensor<half> xGm_, yGm_, zGm_;
    uint64_t total_ = 0;
    uint32_t len_ = 0;
    bool double_ = false;
};

extern "C" __global__ __aicore__ void calib_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA_WITH_STRUCT(CalibAddTiling, t, tiling);
    InitSocState();
    KernelCalibAdd op;
    op.Init(x, y, z, t);
    op.Process();
    PipeBarrier<PIPE_ALL>();
}
