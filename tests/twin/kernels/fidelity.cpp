// The twin against the device, fourth pass (issue 26): the tiling key selects a scenario, tiling.good = 1 its
// correct twin. GM: x (64 floats in), y (256 floats out), ws (workspace), tiling. tests/twin/test_fidelity.py says
// where each broken variant must fault and cites the devkit line it follows.
#pragma GCC optimize("O0")  // a test kernel: compile time matters more than speed

#include "kernel_operator.h"

using namespace AscendC;

struct FidelityTiling {
    uint32_t good;   // 1: the correct twin of the scenario
    uint32_t param;  // scenario parameter
    uint32_t reserved[2];
};

enum Key : uint32_t {
    USER_WORKSPACE = 1, MTE3_OVERLAP, MTE3_OVERLAP_FLAGS, TPIPE_REDUCESUM, TPIPE_SIGN, TPIPE_REDUCEMAX,
    TPIPE_BRCB_STRIDED, TPIPE_CMPMASK, DEPTH0_IDS, DEPTH0_PIPELINE, BUFFER_NUMBER_ONE, GETVALUE_THEN_MTE3,
    TWO_SELECTS, SELECT_AFTER_COMPARE, SELECT2_AFTER_COMPARE, VECTOR_CORE_UB_COPY, BRCB_2002_WRAP,
    BRCB_2002_SCALAR_SYNC, NAN_MAX_MIN,
};

using F = float;
constexpr uint32_t kN = 64;
constexpr TQueConfig kOneBuffer = {false, false, false, 0, 1, 0, {}, false, false};  // bufferNumber 1

template <HardEvent E> inline void Sync() {
    SetFlag<E>(EVENT_ID0);
    WaitFlag<E>(EVENT_ID0);
}

// 64 floats of x in a fresh UB tensor, ready for the vector unit.
inline LocalTensor<F> LoadX(TBuf<TPosition::VECCALC>& buf, TPipe& pipe, GlobalTensor<F>& xGm, uint32_t bytes = 256) {
    pipe.InitBuffer(buf, bytes);
    LocalTensor<F> t = buf.Get<F>();
    DataCopy(t, xGm, kN);
    Sync<HardEvent::MTE2_V>();
    return t;
}

#if __NPU_ARCH__ != 1001
// Static tensor programming (no TPipe unless `withPipe`): the devkit APIs that take event IDs or stack buffers from
// the TPipe. Raw tensors lie past 128 KB, clear of anything a TPipe allocates here.
inline void WithoutPipe(uint32_t key, bool withPipe, bool calIndex) {
    InitSocState();
    TPipe* pipe = withPipe ? new TPipe() : nullptr;
    constexpr uint32_t base = 128 * 1024;
    LocalTensor<F> a(TPosition::VECCALC, base, kN), b(TPosition::VECCALC, base + 256, kN);
    LocalTensor<F> tmp(TPosition::VECCALC, base + 512, kN);
    Duplicate(a, 2.0f, kN);
    Duplicate(tmp, 0.0f, kN);
    Duplicate(b, 0.0f, kN);
    PipeBarrier<PIPE_V>();
    switch (key) {
        case TPIPE_REDUCESUM:
            ReduceSum(b, a, tmp, kN);
            break;
        case TPIPE_SIGN:  // the form without sharedTmpBuffer (the stack buffer)
            Sign(b, a, kN);
            break;
        case TPIPE_REDUCEMAX:  // no TPipe either way: without the index, or (good) one repeat with its index
            ReduceMax(b, a, tmp, static_cast<int32_t>(kN), calIndex);
            break;
        case TPIPE_BRCB_STRIDED: {
            LocalTensor<F> d(TPosition::VECCALC, base + 1024, 2 * kN);
            Brcb(d, a, 1, BrcbRepeatParams(2, 16));
            break;
        }
        case TPIPE_CMPMASK: {
            uint64_t mask[2] = {~0ull, 0};
            Compare(a, b, CMPMODE::GT, mask, BinaryRepeatParams());
            break;
        }
        default:
            break;
    }
    PipeBarrier<PIPE_ALL>();
    delete pipe;
}
#endif

void Run(uint32_t key, const FidelityTiling& t, GM_ADDR x, GM_ADDR y, GM_ADDR ws) {
    const bool good = t.good != 0;
    GlobalTensor<F> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ F*)x, kN);
    yGm.SetGlobalBuffer((__gm__ F*)y, 4 * kN);
#if __NPU_ARCH__ != 1001
    if (key >= TPIPE_REDUCESUM && key <= TPIPE_CMPMASK) {
        WithoutPipe(key, good && key != TPIPE_REDUCEMAX, good);
        return;
    }
#endif
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf, buf2;
    switch (key) {
        case USER_WORKSPACE: {  // 64 bytes of x to the user workspace of a kernel-launch call
            LocalTensor<F> s = LoadX(buf, pipe, xGm);
            Sync<HardEvent::V_MTE3>();  // (the load went MTE2 -> V; MTE3 needs it too)
            SetSysWorkspace(ws);
            GlobalTensor<F> user;
            user.SetGlobalBuffer(reinterpret_cast<__gm__ F*>(GetUserWorkspace(ws)));
            DataCopy(user, s, 16);
            break;
        }
        case MTE3_OVERLAP:  // two copies to overlapping GM: ordered by a barrier, or not at all
        case MTE3_OVERLAP_FLAGS: {  // ordered by MTE3 -> S -> MTE3 flags
            LocalTensor<F> s = LoadX(buf, pipe, xGm);
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s, 16);
            if (good && key == MTE3_OVERLAP) PipeBarrier<PIPE_MTE3>();
            if (key == MTE3_OVERLAP_FLAGS) {
                Sync<HardEvent::MTE3_S>();
                Sync<HardEvent::S_MTE3>();
            }
            DataCopy(yGm[8], s[8], 16);
            break;
        }
        case DEPTH0_IDS: {  // param depth-0 buffers: each holds an MTE2_V and a V_MTE2 ID from InitBuffer on
            TQue<TPosition::VECIN, 0> q;
            pipe.InitBuffer(q, static_cast<uint8_t>(t.param), 32);
            break;
        }
        case DEPTH0_PIPELINE: {  // y[0, 64) = x + 1 through depth-0 queues, twice per buffer
            TQue<TPosition::VECIN, 0> in;
            TQue<TPosition::VECOUT, 0> out;
            pipe.InitBuffer(in, 2, 128);
            pipe.InitBuffer(out, 2, 128);
            for (uint32_t i = 0; i < 4; ++i) {
                const uint32_t off = (i % 2) * 32;
                LocalTensor<F> a, b;
                in.AllocTensor(a);
                DataCopy(a, xGm[off], 32);
                in.EnQue(a);
                in.DeQue(a);
                out.AllocTensor(b);
                Adds(b, a, 1.0f, 32);
                in.FreeTensor(a);
                out.EnQue(b);
                out.DeQue(b);
                DataCopy(yGm[off + (i / 2) * 64], b, 32);
                out.FreeTensor(b);
            }
            break;
        }
        case BUFFER_NUMBER_ONE: {  // bufferNumber 1 of two buffers: the queue never leaves buffer 0
            TQue<TPosition::VECIN, 1, &kOneBuffer> q;
            pipe.InitBuffer(q, 2, 256);
            LocalTensor<F> a = q.AllocTensor<F>();
            const uint32_t first = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(a.GetPhyAddr()));
            if (good) q.FreeTensor(a);
            LocalTensor<F> b = q.AllocTensor<F>();
            const uint32_t second = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(b.GetPhyAddr()));
            LocalTensor<F> s = LoadX(buf, pipe, xGm);
            Duplicate(s, first == second ? 1.0f : 0.0f, 8);  // y[0] = 1: the same buffer came back
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s, 8);
            break;
        }
        case GETVALUE_THEN_MTE3: {  // y[0] read by the scalar unit, then overwritten by MTE3 (run with auto-sync off)
            LocalTensor<F> s = LoadX(buf, pipe, xGm);
            const F old = yGm.GetValue(0);
            if (good) Sync<HardEvent::S_MTE3>();
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s, 8);
            volatile F keep = old;
            (void)keep;
            break;
        }
        case TWO_SELECTS:  // two Selects in a row, no barrier between (auto-sync off): Select orders its own scratch
        case SELECT_AFTER_COMPARE:  // Compare, then a Select mode 0 that loads the mask before its barrier
        case SELECT2_AFTER_COMPARE: {  // Compare, then a Select mode 2 that reads the mask after its barriers
            LocalTensor<F> s = LoadX(buf, pipe, xGm, 4 * 256);
            pipe.InitBuffer(buf2, 256);
            LocalTensor<uint8_t> mask = buf2.Get<uint8_t>();
            LocalTensor<F> one = s[kN], d1 = s[2 * kN], d2 = s[3 * kN];
            Duplicate(one, 1.0f, kN);
            PipeBarrier<PIPE_V>();
            Compare(mask, s, one, CMPMODE::GT, kN);  // x > 1
            if (key == TWO_SELECTS || good) PipeBarrier<PIPE_V>();
#if __NPU_ARCH__ == 1001
            Select(d1, mask, s, one, SELMODE::VSEL_CMPMASK_SPR, kN);
            if (key == TWO_SELECTS && good) PipeBarrier<PIPE_V>();
            Select(d2, mask, one, s, SELMODE::VSEL_CMPMASK_SPR, kN);
#else
            if (key == TWO_SELECTS) {
                Select(d1, mask, s, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, kN);
                if (good) PipeBarrier<PIPE_V>();
                Select(d2, mask, one, 2.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, kN);
            } else {
                Select(d1, mask, s, one, key == SELECT_AFTER_COMPARE ? SELMODE::VSEL_CMPMASK_SPR
                                                                     : SELMODE::VSEL_TENSOR_TENSOR_MODE, kN);
                Duplicate(d2, 0.0f, kN);
            }
#endif
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, d1, kN);
            DataCopy(yGm[kN], d2, kN);
            break;
        }
        case VECTOR_CORE_UB_COPY: {  // a UB -> UB DataCopy, with the kernel also running on 310P's Vector Cores
#if __NPU_ARCH__ == 2002
            if (good) {
                KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AICORE);
            } else {
                KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_VECTOR_CORE);
            }
#elif __NPU_ARCH__ != 1001
            KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
#endif
            pipe.InitBuffer(buf, 512);
            LocalTensor<F> s = buf.Get<F>();
            DataCopy(s, xGm, kN);
            Sync<HardEvent::MTE2_MTE3>();
            Sync<HardEvent::MTE2_V>();
            DataCopy(s[kN], s, kN);  // on the vector pipe
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s[kN], kN);
            break;
        }
#if __NPU_ARCH__ != 1001
        case BRCB_2002_WRAP: {  // 16-bit Brcb, 2 repeats param blocks apart: 2002 keeps the offset in uint16_t
            pipe.InitBuffer(buf, 256);
            pipe.InitBuffer(buf2, t.param * 32 + 512);
            LocalTensor<half> s = buf.Get<half>(), d = buf2.Get<half>();
            Duplicate(s, static_cast<half>(1.0f), 16);
            PipeBarrier<PIPE_V>();
            Brcb(d, s, 2, BrcbRepeatParams(1, static_cast<uint16_t>(t.param)));
            break;
        }
        case BRCB_2002_SCALAR_SYNC: {  // Brcb of values MTE2 just loaded: 2002's strided form waits for MTE2 itself
            pipe.InitBuffer(buf, 256);
            pipe.InitBuffer(buf2, 1024);
            LocalTensor<F> s = buf.Get<F>(), d = buf2.Get<F>();
            DataCopy(s, xGm, kN);
            if (good) Sync<HardEvent::MTE2_V>();
            Brcb(d, s, 1, BrcbRepeatParams(2, 16));
            break;
        }
#endif
        case NAN_MAX_MIN: {  // clamp(x, -1, 1) of an x holding NaN; the good variant puts x's NaN back afterwards
            LocalTensor<F> s = LoadX(buf, pipe, xGm, 4 * 256);
            LocalTensor<F> c = s[kN], one = s[2 * kN];
#if __NPU_ARCH__ == 1001
            Duplicate(one, 1.0f, kN);
            PipeBarrier<PIPE_V>();
            Min(c, s, one, kN);
#else
            Mins(c, s, 1.0f, kN);
#endif
            PipeBarrier<PIPE_V>();
            if (good) {
                pipe.InitBuffer(buf2, 256);
                LocalTensor<uint8_t> mask = buf2.Get<uint8_t>();
                Compare(mask, s, s, CMPMODE::EQ, kN);  // 1 where x is not NaN
                PipeBarrier<PIPE_V>();
#if __NPU_ARCH__ == 1001
                Select(c, mask, c, s, SELMODE::VSEL_CMPMASK_SPR, kN);
#else
                Select(c, mask, c, s, SELMODE::VSEL_TENSOR_TENSOR_MODE, kN);
#endif
            }
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, c, kN);
            break;
        }
        default:
            break;
    }
}

extern "C" __global__ __aicore__ void fidelity(GM_ADDR x, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling) {
    GET_TILING_DATA_WITH_STRUCT(FidelityTiling, t, tiling);
    Run(static_cast<uint32_t>(TILING_KEY_VAR), t, x, y, ws);
}
