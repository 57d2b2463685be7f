// Calibration kernel: z = x + y on half, the structure of the devkit's add_high_performance cases 0-6 (Atlas A2 and
// Ascend 950) and of the set_l2_cache_mode example's add cases 3-4 (Ascend 950), as their READMEs describe them
// (asc-devkit examples/01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance/README.md,
// examples/02_simd_c_api/02_features/03_c_api/01_data_movement/00_set_l2_cache_mode/README.md); written for the time
// model (lossgrad.timing.calibration and .heldout).
//
// Tiling (CalibAddTiling, the fourth argument): rows x cols elements, rows split evenly over the cores (the first
// rows % cores cores take one row more), each core's rows contiguous in GM; copyLen elements per DataCopy; mode 0 = a
// scalar loop (GetValue/SetValue) instead of Add, 1 = one buffer set, 2 = ping-pong with event IDs 0/1; l2Bypass = x
// and y read past L2 (SetL2CacheHint(CACHE_MODE_DISABLE)); bankFree = case 6's layout (y and the pong set start
// copyLen elements after x, not a whole slot); slotElems = elements per UB slot (the README's MAX_DATA_COPY_LEN).
// Static tensor programming as the READMEs': no TPipe, raw-address LocalTensors; the layout x, y, z (then the pong
// set) in consecutive slots, so x and y share their bank group on A2 (the read-read conflict case 6 removes).
#include "kernel_operator.h"

using namespace AscendC;

struct CalibAddTiling {
    uint32_t rows, cols, copyLen, mode, l2Bypass, bankFree, slotElems;
};

class KernelCalibAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const CalibAddTiling& t) {
        ASSERT(t.copyLen <= t.slotElems);
        t_ = t;
        const uint32_t cores = GetBlockNum(), idx = GetBlockIdx();
        const uint32_t base = t.rows / cores, extra = t.rows % cores;
        const uint32_t myRows = base + (idx < extra ? 1 : 0);
        const uint32_t startRow = idx * base + (idx < extra ? idx : extra);
        total_ = static_cast<uint64_t>(myRows) * t.cols;
        const uint64_t start = static_cast<uint64_t>(startRow) * t.cols;
        xGm_.SetGlobalBuffer((__gm__ half*)x + start, total_);
        yGm_.SetGlobalBuffer((__gm__ half*)y + start, total_);
        zGm_.SetGlobalBuffer((__gm__ half*)z + start, total_);
        if (t.l2Bypass != 0) {
            xGm_.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
            yGm_.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
        }
    }

    __aicore__ inline void Process() {
        if (t_.mode == 2) {
            ProcessDouble();
        } else {
            ProcessSingle(t_.mode == 0);
        }
    }

private:
    __aicore__ inline LocalTensor<half> At(uint32_t elems) const {
        return LocalTensor<half>(TPosition::VECCALC, elems * sizeof(half), t_.slotElems);
    }

    __aicore__ inline uint32_t Len(uint64_t off) const {
        return static_cast<uint32_t>(total_ - off < t_.copyLen ? total_ - off : t_.copyLen);
    }

    __aicore__ inline void ProcessDouble() {
        const uint32_t s = t_.slotElems;
        const uint32_t yOff = t_.bankFree != 0 ? t_.copyLen : s;     // case 6: y right after x's data
        const uint32_t pong = t_.bankFree != 0 ? 2 * s : 3 * s;
        const uint32_t zOff = t_.bankFree != 0 ? 4 * s : 2 * s;
        const uint32_t zPong = t_.bankFree != 0 ? 4 * s + t_.copyLen : 5 * s;
        LocalTensor<half> x[2] = {At(0), At(pong)};
        LocalTensor<half> y[2] = {At(yOff), At(pong + yOff)};
        LocalTensor<half> z[2] = {At(zOff), At(zPong)};
        const uint32_t blocks = static_cast<uint32_t>((total_ + t_.copyLen - 1) / t_.copyLen);
        SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
        SetFlag<HardEvent::V_MTE2>(EVENT_ID1);
        SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
        SetFlag<HardEvent::MTE3_V>(EVENT_ID1);
        for (uint32_t i = 0; i < blocks; ++i) {
            const uint32_t b = i & 1;
            const event_t e = b ? EVENT_ID1 : EVENT_ID0;
            const uint64_t off = static_cast<uint64_t>(i) * t_.copyLen;
            const uint32_t n = Len(off);
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

    // One buffer set (cases 1-3), or case 0's scalar loop in place of the Add.
    __aicore__ inline void ProcessSingle(bool scalar) {
        LocalTensor<half> x = At(0);
        LocalTensor<half> y = At(t_.slotElems);
        LocalTensor<half> z = At(2 * t_.slotElems);
        const uint32_t blocks = static_cast<uint32_t>((total_ + t_.copyLen - 1) / t_.copyLen);
        for (uint32_t i = 0; i < blocks; ++i) {
            const uint64_t off = static_cast<uint64_t>(i) * t_.copyLen;
            const uint32_t n = Len(off);
            if (i > 0) WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);  // the last Add has read x and y
            DataCopy(x, xGm_[off], n);
            DataCopy(y, yGm_[off], n);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            if (i > 0) WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);  // the last z has left UB
            if (scalar) {
                for (uint32_t k = 0; k < n; ++k) {
                    const float xv = static_cast<float>(x.GetValue(k));
                    const float yv = static_cast<float>(y.GetValue(k));
                    z.SetValue(k, static_cast<half>(xv + yv));
                }
            } else {
                Add(z, x, y, n);
            }
            if (i + 1 < blocks) SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(zGm_[off], z, n);
            if (i + 1 < blocks) SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
        }
    }

    GlobalTensor<half> xGm_, yGm_, zGm_;
    CalibAddTiling t_{};
    uint64_t total_ = 0;
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
