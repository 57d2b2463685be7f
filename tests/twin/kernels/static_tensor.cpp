// Static tensor programming (raw-address LocalTensor), Trap/assert and the DataCopyPad field ranges: the tiling key
// selects a scenario; tiling.good = 1 runs its correct twin. GM: x (n floats in), y (n floats in), z (n floats out),
// tiling. Key 1 is the devkit add_high_performance case-4 layout (six raw tensors over the whole UB, no TPipe).
#pragma GCC optimize("O0")  // a test kernel: compile time matters more than speed

#include "kernel_operator.h"

using namespace AscendC;

struct StaticTiling {
    uint32_t good;  // 1: the correct twin of the scenario
    uint32_t n;     // elements of x, y, z
    uint32_t param;
    uint32_t reserved;
};

enum Key : uint32_t {
    WHOLE_UB_DOUBLE_BUFFER = 1, RAW_UNALIGNED, RAW_PAST_UB, RAW_LEN_NOT_32, RAW_OVER_TPIPE, TPIPE_OVER_RAW,
    RAW_MISSING_SYNC, RAW_IN_GM, TRAP, ASCENDC_ASSERT_MSG, PLAIN_ASSERT, PAD_UB_DST_STRIDE, PAD_UB_SRC_STRIDE,
    PAD_NEGATIVE_GM_STRIDE, PAD_BLOCK_COUNT, NO_INIT_SOC_STATE, NO_FINAL_BARRIER,
    SELECT_CLOBBERS_SCRATCH,
};

#if __NPU_ARCH__ == 3510
constexpr uint32_t kTile = 21840;  // halves of one of six tensors: 6 * 43680 bytes fill 256 KB but 64 (the README's)
#else
constexpr uint32_t kTile = 16384;  // 6 * 32 KB = 192 KB
#endif

// x + y with the README's double-buffer flags, ping at 0..3 tiles, pong at 3..6 tiles; n a multiple of 16.
inline void WholeUbAdd(GlobalTensor<half>& xg, GlobalTensor<half>& yg, GlobalTensor<half>& zg, uint32_t n) {
    constexpr uint32_t b = kTile * sizeof(half);
    LocalTensor<half> x[2] = {LocalTensor<half>(TPosition::VECCALC, 0, kTile),
                              LocalTensor<half>(TPosition::VECCALC, 3 * b, kTile)};
    LocalTensor<half> y[2] = {LocalTensor<half>(TPosition::VECCALC, b, kTile),
                              LocalTensor<half>(TPosition::VECCALC, 4 * b, kTile)};
    LocalTensor<half> z[2] = {LocalTensor<half>(TPosition::VECCALC, 2 * b, kTile),
                              LocalTensor<half>(TPosition::VECCALC, 5 * b, kTile)};
    const uint32_t blocks = (n + kTile - 1) / kTile;
    SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
    SetFlag<HardEvent::V_MTE2>(EVENT_ID1);
    SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
    SetFlag<HardEvent::MTE3_V>(EVENT_ID1);
    for (uint32_t i = 0; i < blocks; ++i) {
        const uint32_t k = i & 1, off = i * kTile, len = n - off < kTile ? n - off : kTile;
        const int32_t e = k ? EVENT_ID1 : EVENT_ID0;
        WaitFlag<HardEvent::V_MTE2>(e);
        DataCopy(x[k], xg[off], len);
        DataCopy(y[k], yg[off], len);
        SetFlag<HardEvent::MTE2_V>(e);
        WaitFlag<HardEvent::MTE2_V>(e);
        WaitFlag<HardEvent::MTE3_V>(e);
        Add(z[k], x[k], y[k], len);
        SetFlag<HardEvent::V_MTE2>(e);
        SetFlag<HardEvent::V_MTE3>(e);
        WaitFlag<HardEvent::V_MTE3>(e);
        DataCopy(zg[off], z[k], len);
        SetFlag<HardEvent::MTE3_V>(e);
    }
    WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE2>(EVENT_ID1);
    WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE3_V>(EVENT_ID1);
}

// z = x + 1 through raw tensors at `at` (64 floats), with or without the MTE2->V flag.
inline void RawAddOne(GlobalTensor<float>& xg, GlobalTensor<float>& zg, uint32_t at, bool sync) {
    LocalTensor<float> t(TPosition::VECIN, at, 64);
    DataCopy(t, xg, 64);
    if (sync) {
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    }
    Adds(t, t, 1.0f, 64);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(zg, t, 64);
}

extern "C" __global__ __aicore__ void static_tensor(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
    REGISTER_TILING_DEFAULT(StaticTiling);
    GET_TILING_DATA(t, tiling);
    const bool good = t.good != 0;
    if (good || !TILING_KEY_IS(NO_INIT_SOC_STATE)) InitSocState();
    GlobalTensor<float> xf, zf;
    xf.SetGlobalBuffer((__gm__ float*)x, t.n);
    zf.SetGlobalBuffer((__gm__ float*)z, t.n);
    if (TILING_KEY_IS(WHOLE_UB_DOUBLE_BUFFER)) {
        GlobalTensor<half> xh, yh, zh;
        xh.SetGlobalBuffer((__gm__ half*)x, t.n);
        yh.SetGlobalBuffer((__gm__ half*)y, t.n);
        zh.SetGlobalBuffer((__gm__ half*)z, t.n);
        WholeUbAdd(xh, yh, zh, t.n);
    } else if (TILING_KEY_IS(RAW_UNALIGNED)) {
        LocalTensor<float> r(TPosition::VECCALC, good ? 32 : 16, 8);
        Duplicate(r, 0.0f, 8);
    } else if (TILING_KEY_IS(RAW_PAST_UB)) {
        const uint32_t last = GetUBSizeInBytes() - 256;  // the last 256 bytes of UB (good), one block more (broken)
        LocalTensor<float> r(TPosition::VECCALC, good ? last : last + 32, 64);
        Duplicate(r, 0.0f, 64);
    } else if (TILING_KEY_IS(RAW_LEN_NOT_32)) {
        LocalTensor<float> r(TPosition::VECCALC, 0, good ? 8 : 10);
        Duplicate(r, 0.0f, 8);
    } else if (TILING_KEY_IS(RAW_OVER_TPIPE)) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 1024);
        LocalTensor<float> r(TPosition::VECCALC, good ? 1024 : 992, 64);
        Duplicate(r, 0.0f, 64);
    } else if (TILING_KEY_IS(TPIPE_OVER_RAW)) {
        LocalTensor<float> r(TPosition::VECCALC, good ? 4096 : 0, 64);
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 1024);
        Duplicate(r, 0.0f, 64);
    } else if (TILING_KEY_IS(RAW_MISSING_SYNC)) {
        RawAddOne(xf, zf, 64 * 1024, good);
    } else if (TILING_KEY_IS(NO_INIT_SOC_STATE) || TILING_KEY_IS(NO_FINAL_BARRIER)) {
        RawAddOne(xf, zf, 0, true);
    } else if (TILING_KEY_IS(SELECT_CLOBBERS_SCRATCH)) {
        // param: where the TPipe's UB ends (TMP_UB_OFFSET on 2201/2002); Select mode 2 stages CMPMASK there.
        LocalTensor<float> keep(TPosition::VECCALC, good ? t.param - 256 : t.param, 64);
        LocalTensor<float> a(TPosition::VECCALC, 0, 64), b(TPosition::VECCALC, 256, 64), d(TPosition::VECCALC, 512, 64);
        LocalTensor<uint8_t> m(TPosition::VECCALC, 768, 256);
        Duplicate(keep, 3.0f, 64);
        Duplicate(a, 1.0f, 64);
        Duplicate(b, 2.0f, 64);
        Compare(m, a, b, CMPMODE::LT, 64);
        Select(d, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);
        Adds(keep, keep, 1.0f, 64);
    } else if (TILING_KEY_IS(RAW_IN_GM)) {
        LocalTensor<float> r(good ? TPosition::VECOUT : TPosition::GM, 0, 8);
        Duplicate(r, 0.0f, 8);
#if __NPU_ARCH__ != 1001
    } else if (TILING_KEY_IS(TRAP)) {
        if (!good) Trap();
    } else if (TILING_KEY_IS(ASCENDC_ASSERT_MSG)) {
        const half h = 1.5f;
        ascendc_assert(good, "n is %u, h is %f", t.n, h);
    } else if (TILING_KEY_IS(PLAIN_ASSERT)) {
        assert(t.n == (good ? 64u : 65u));
#endif
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
    } else if (TILING_KEY_IS(PAD_UB_DST_STRIDE)) {
        // One block: the stride never moves anything, but the field must hold it (uint32_t on 2201).
        LocalTensor<float> r(TPosition::VECIN, 0, 64);
        DataCopyPad(r, xf, DataCopyExtParams(1, 40, 0, good ? 65535 : 65536, 0), DataCopyPadExtParams<float>());
        PipeBarrier<PIPE_ALL>();
    } else if (TILING_KEY_IS(PAD_UB_SRC_STRIDE)) {
        LocalTensor<float> r(TPosition::VECOUT, 0, 64);
        Duplicate(r, 2.0f, 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopyPad(zf, r, DataCopyExtParams(1, 40, good ? 65535 : 65536, 0, 0));
        PipeBarrier<PIPE_ALL>();
    } else if (TILING_KEY_IS(PAD_BLOCK_COUNT)) {
        LocalTensor<float> r(TPosition::VECIN, 0, 8);
        DataCopyPad(r, xf, DataCopyExtParams(good ? 1 : 4096, 4, 0, 0, 0), DataCopyPadExtParams<float>());
        PipeBarrier<PIPE_ALL>();
#endif
#if __NPU_ARCH__ == 3510
    } else if (TILING_KEY_IS(PAD_NEGATIVE_GM_STRIDE)) {
        // srcStride = -blockLen re-reads the first 48 bytes into every row (the 950 doc's example 3).
        LocalTensor<float> r(TPosition::VECIN, 0, 64);
        DataCopyPad(r, xf, DataCopyExtParams(4, 48, good ? -48 : -52, 0, 0), DataCopyPadExtParams<float>(true, 0, 4, 0.0f));
        SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        DataCopy(zf, r, 64);
        PipeBarrier<PIPE_ALL>();
#endif
    }
    if (good || !TILING_KEY_IS(NO_FINAL_BARRIER)) PipeBarrier<PIPE_ALL>();  // static tensors: required at the end
}
