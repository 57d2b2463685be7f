// The twin's strictness suite in one kernel: the tiling key selects a scenario that breaks exactly one rule, and
// tiling.good = 1 runs its correct twin, which must pass. GM: x (n floats in), y (n floats out), z (spare), tiling.
#pragma GCC optimize("O0")  // a test kernel: compile time matters more than speed

#include "kernel_operator.h"

using namespace AscendC;

struct StrictTiling {
    uint32_t good;   // 1: the correct twin of the scenario
    uint32_t n;      // elements of x and y
    uint32_t param;  // scenario parameter (UB bytes, event ids, live-tensor limit, ...)
    uint32_t reserved;
};

enum Key : uint32_t {
    UB_CAPACITY = 1, BUFFER_LIMIT, LIVE_TENSORS, ALIGNMENT, DEQUE_EMPTY, ENQUE_DEPTH, ALLOC_BEYOND_NUM, FREE_NOT_OWNED,
    DOUBLE_FREE, USE_AFTER_FREE, LEAK, SETFLAG_UNPAIRED, WAIT_WITHOUT_SET, EVENT_ID_RANGE, MISSING_MTE2_V,
    MISSING_V_MTE3, MISSING_V_S, MISSING_S_V, GM_READ_PAST_END, GM_WRITE_PAST_END, GM_COPY_PAST_END,
    GLOBAL_TENSOR_SIZE, CROSS_CORE_OVERLAP, DATACOPY_NOT_32, COMPARE_COUNT, COMPARES_COUNT, UNINIT_READ,
    PAD_DUMMY_READ, TILING_SHORT, SECOND_TPIPE, COUNT_ZERO, PARTIAL_OVERLAP, SELECT_MODE_1001, FREE_ENQUEUED,
    USE_ENQUEUED, LOCAL_INDEX, TBUF_GET_LEN, OPERAND_EXTENT, EVENT_UNRELEASED, RESET_LIVE, L0_DST_BLK0,
    L0_PARTIAL_OVERLAP, L0_NO_MASK, L0_MASK_RESET_BY_LEVEL2, MASK_MODE, REDUCE_TMP, SIGN_TMP, CAST_MODE,
    CAST_OVERLAP, CMP_INT32_MODE, CMPMASK_UNSET, INT_DIV_ZERO, NO_PIPE, DATACOPY_UB_UNALIGNED, LOCAL_OFFSET,
    BARRIER_BEFORE_COPY, TBUF_AFTER_RESET, TQUE_AFTER_RESET, MTE2_OVERLAPPING_COPIES, UB_COPY_TOO_LONG,
    REDUCE_DST_IN_SRC, CMP_L0_REGISTER_MASK,
    // event IDs of TQue and TPipe (one pool per HardEvent and core), NpuArch 3510 buffer IDs
    THREE_DOUBLE_BUFFERED_VECIN, KERNEL_IDS_SHARE_POOL, ENQUE_HOLDS_IDS, SETFLAG_ON_QUEUE_ID, WAITFLAG_ON_QUEUE_ID,
    BUFFER_IDS_3510,
    // the scalar data cache
    SCALAR_LINE_TWO_CORES, SCALAR_LINE_THEN_MTE3, STALE_GETVALUE, SETVALUE_INTO_STALE_LINE, MTE2_READS_DIRTY_LINE,
    SCALAR_LINE_VS_OTHER_CORE_DMA, DCCI_UB_DOES_NOT_FLUSH_GM,
    // auto-sync (broken code; the harness runs it with auto_sync=False and True)
    AUTO_V_S, AUTO_S_V, AUTO_S_MTE3, AUTO_MTE2_S,
    // the shared pad-value register, GlobalTensor sizes
    PAD_REGISTER_FROM_ISPAD, GLOBAL_BUFFER_LARGER_THAN_HOST, FREE_ALL_EVENT,
    // issue 16: vector ordering, queue hardware types, the data cache, Brcb on 310P
    V_V_ORDER, UB_TO_UB_QUEUE, VECCALC_QUEUE_IDS, SETVALUE_AFTER_MTE3, DCCI_THEN_DMA_NO_DSB, DCCI_THEN_DMA_NO_PIPE_SYNC,
    BRCB_B16_BEHIND_OUTPUT, DIRTY_LINE_AT_KERNEL_END,
    // false positives: correct code that must run clean (run with good = 0)
    FP_TENSOR_ALLOCATED_AT_END = 150, FP_DCCI_DSB_FORM, FP_TQUE_CONFIG, FP_UB_FULL_BUDGET, FP_DATACOPYPAD_ODD_GM_STRIDE,
    // value checks (not pairs): allocation order, pad register contents
    ALLOC_ORDER = 200, PAD_REGISTER_VALUES, FREE_WITHOUT_ENQUE,
};

#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
#define STRICT_HAS_DCCI 1
// Clean and invalidate the data-cache line holding g[0] (2201/3510 form with DcciDst).
template <typename T> inline void FlushLine(const GlobalTensor<T>& g) {
    DataCacheCleanAndInvalid<T, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g);
}
#elif __NPU_ARCH__ == 2002
#define STRICT_HAS_DCCI 1
template <typename T> inline void FlushLine(const GlobalTensor<T>& g) {
    DataCacheCleanAndInvalid<T, CacheLine::SINGLE_CACHE_LINE>(g);  // 2002 has only the form without DcciDst
}
#else
#define STRICT_HAS_DCCI 0  // NpuArch 1001 has no DataCacheCleanAndInvalid: the good variants keep lines apart
#endif

#if STRICT_HAS_DCCI
// The line's write-back done before any DMA touches it: DataSyncBarrier where it exists, then every pipe waits.
template <typename T> inline void FlushLineComplete(const GlobalTensor<T>& g) {
    FlushLine(g);
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
    DataSyncBarrier<MemDsbT::DDR>();
#endif
    PipeBarrier<PIPE_ALL>();
}
#endif

using F = float;

constexpr TQueConfig kQueConf = {false, false, false, 0, 0, 0, {}, false, false};  // the defaults, spelled out

// A scratch TBuf of `bytes` with its first `init` floats written by the vector unit.
inline LocalTensor<F> Scratch(TPipe* pipe, TBuf<TPosition::VECCALC>& buf, uint32_t bytes, uint32_t init) {
    pipe->InitBuffer(buf, bytes);
    LocalTensor<F> t = buf.Get<F>();
    if (init > 0) Duplicate(t, 1.0f, static_cast<int32_t>(init));
    return t;
}

// Uses a value read from UB (so the read is not dead code). NpuArch 1001 never writes a scalar-written GM line back
// (no DCCI, no kernel-end flush), so there the value goes nowhere.
inline void Keep(GlobalTensor<F>& g, F v) {
#if __NPU_ARCH__ == 1001
    volatile F sink = v;
    (void)sink;
    (void)g;
#else
    g.SetValue(0, v);
#endif
}

template <HardEvent E> inline void Sync() {
    SetFlag<E>(EVENT_ID0);
    WaitFlag<E>(EVENT_ID0);
}

void Run(uint32_t key, const StrictTiling& t, TPipe* pipe, GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    const bool good = t.good != 0;
    const uint32_t n = t.n;
    GlobalTensor<F> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ F*)x, n);
    yGm.SetGlobalBuffer((__gm__ F*)y, n);
    TBuf<TPosition::VECCALC> buf;
    TQue<TPosition::VECIN, 1> q, q2;
    switch (key) {
        case UB_CAPACITY: {  // param = the UB bytes a kernel may allocate on this arch
            pipe->InitBuffer(buf, t.param + (good ? 0 : 32));
            break;
        }
        case BUFFER_LIMIT: {
            TBuf<TPosition::VECCALC> many[65];
            for (uint32_t i = 0; i < (good ? 64u : 65u); ++i) pipe->InitBuffer(many[i], 32);
            break;
        }
        case LIVE_TENSORS: {  // param = live tensors per position (8, or 4 on 1001)
            pipe->InitBuffer(q, 9, 32);
            LocalTensor<F> ts[9];
            uint32_t k = good ? t.param : t.param + 1;
            for (uint32_t i = 0; i < k; ++i) ts[i] = q.AllocTensor<F>();
            for (uint32_t i = 0; i < k; ++i) q.FreeTensor(ts[i]);
            break;
        }
        case ALIGNMENT: {
            LocalTensor<F> s = Scratch(pipe, buf, 1024, 256);
            Add(s[128], s[good ? 8 : 1], s[64], 8);
            break;
        }
        case DEQUE_EMPTY: {
            pipe->InitBuffer(q, 1, 32);
            if (good) {
                LocalTensor<F> a = q.AllocTensor<F>();
                q.EnQue(a);
            }
            LocalTensor<F> b = q.DeQue<F>();
            q.FreeTensor(b);
            break;
        }
        case ENQUE_DEPTH: {
            pipe->InitBuffer(q, 2, 32);
            LocalTensor<F> a = q.AllocTensor<F>(), b = q.AllocTensor<F>();
            q.EnQue(a);
            if (good) a = q.DeQue<F>();
            q.EnQue(b);
            if (!good) a = q.DeQue<F>();
            b = q.DeQue<F>();
            q.FreeTensor(a);
            q.FreeTensor(b);
            break;
        }
        case ALLOC_BEYOND_NUM: {
            pipe->InitBuffer(q, 2, 32);
            LocalTensor<F> a = q.AllocTensor<F>(), b = q.AllocTensor<F>();
            if (!good) {
                LocalTensor<F> c = q.AllocTensor<F>();
                q.FreeTensor(c);
            }
            q.FreeTensor(a);
            q.FreeTensor(b);
            break;
        }
        case FREE_NOT_OWNED: {
            pipe->InitBuffer(q, 1, 32);
            pipe->InitBuffer(q2, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            if (good) q.FreeTensor(a);
            else q2.FreeTensor(a);
            break;
        }
        case DOUBLE_FREE: {
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            LocalTensor<F> copy = a;
            q.FreeTensor(a);
            if (!good) q.FreeTensor(copy);
            break;
        }
        case USE_AFTER_FREE: {
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            if (good) Duplicate(a, 0.0f, 8);
            q.FreeTensor(a);
            if (!good) Duplicate(a, 0.0f, 8);
            break;
        }
        case LEAK: {  // an allocated tensor at kernel end is harmless; an enqueued one leaves its EnQue flag set
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            DataCopy(a, xGm, 8);
            if (!good) q.EnQue(a);
            break;
        }
        case SETFLAG_UNPAIRED: {
            SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
            if (good) WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
            break;
        }
        case WAIT_WITHOUT_SET: {
            if (good) SetFlag<HardEvent::MTE2_V>(EVENT_ID2);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID2);
            break;
        }
        case EVENT_ID_RANGE: {  // param = the number of event ids of the arch
            int32_t id = static_cast<int32_t>(good ? t.param - 1 : t.param);
            SetFlag<HardEvent::S_V>(id);
            WaitFlag<HardEvent::S_V>(id);
            break;
        }
        case MISSING_MTE2_V: {  // a TBuf has no automatic synchronisation
            pipe->InitBuffer(buf, n * sizeof(F));
            LocalTensor<F> s = buf.Get<F>();
            DataCopy(s, xGm, n);
            if (good) Sync<HardEvent::MTE2_V>();
            Muls(s, s, 2.0f, static_cast<int32_t>(n));
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s, n);
            break;
        }
        case MISSING_V_MTE3: {
            LocalTensor<F> s = Scratch(pipe, buf, n * sizeof(F), n);
            if (good) Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s, n);
            break;
        }
        case MISSING_V_S: {
            LocalTensor<F> s = Scratch(pipe, buf, 256, 64);
            if (good) Sync<HardEvent::V_S>();
            Keep(yGm, s.GetValue(3));
            break;
        }
        case MISSING_S_V: {
            LocalTensor<F> s = Scratch(pipe, buf, 512, 0);
            for (uint32_t i = 0; i < 64; ++i) s.SetValue(i, 1.0f);
            if (good) Sync<HardEvent::S_V>();
            Adds(s[64], s, 1.0f, 64);
            break;
        }
        case GM_READ_PAST_END: {  // x has exactly n floats; the unbounded form reaches the host buffer's bounds
            GlobalTensor<F> raw;
            raw.SetGlobalBuffer((__gm__ F*)x);
            Keep(yGm, raw.GetValue(good ? n - 1 : n));
            break;
        }
        case GM_WRITE_PAST_END: {
            GlobalTensor<F> raw;
            raw.SetGlobalBuffer((__gm__ F*)y);
            raw.SetValue(good ? n - 1 : n, 1.0f);
            break;
        }
        case GM_COPY_PAST_END: {
            GlobalTensor<F> raw;
            raw.SetGlobalBuffer((__gm__ F*)x);
            pipe->InitBuffer(buf, 64);
            LocalTensor<F> s = buf.Get<F>();
            DataCopy(s, raw[good ? n - 8 : n - 7], 8);
            break;
        }
        case GLOBAL_TENSOR_SIZE: {
            GlobalTensor<F> eight;
            eight.SetGlobalBuffer((__gm__ F*)x, 8);
            Keep(yGm, eight.GetValue(good ? 7 : 8));
            break;
        }
        case CROSS_CORE_OVERLAP: {  // block_dim 2: each core writes 8 floats
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm[good ? GetBlockIdx() * 8 : 0], s, 8);
            break;
        }
        case DATACOPY_NOT_32: {
            pipe->InitBuffer(buf, 64);
            LocalTensor<F> s = buf.Get<F>();
            DataCopy(s, xGm, good ? 8 : 7);
            break;
        }
        case COMPARE_COUNT: {
            LocalTensor<F> s = Scratch(pipe, buf, 1024, 128);
            LocalTensor<uint8_t> bits = s[192].ReinterpretCast<uint8_t>();
            Compare(bits, s, s[64], CMPMODE::LT, good ? 64u : 63u);
            break;
        }
        case COMPARES_COUNT: {
#if __NPU_ARCH__ != 1001
            LocalTensor<F> s = Scratch(pipe, buf, 1024, 128);
            LocalTensor<uint8_t> bits = s[192].ReinterpretCast<uint8_t>();
            Compares(bits, s, 0.5f, CMPMODE::LT, good ? 128u : 96u);
#endif
            break;
        }
        case UNINIT_READ: {
            LocalTensor<F> s = Scratch(pipe, buf, 1024, good ? 192 : 64);
            Add(s[192], s[64], s[128], 64);
            break;
        }
        case PAD_DUMMY_READ: {
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            // 5 floats land in UB; the other 3 floats of the 32-byte block are "dummy" (unspecified) bytes.
            pipe->InitBuffer(buf, 64);
            LocalTensor<F> s = buf.Get<F>();
            DataCopyPad(s, xGm, DataCopyExtParams(1, 5 * sizeof(F), 0, 0, 0), DataCopyPadExtParams<F>(false, 0, 0, 0));
            Sync<HardEvent::MTE2_V>();
            Muls(s[8], s, 2.0f, good ? 5 : 8);
#endif
            break;
        }
        case TILING_SHORT:
            break;  // the host passes fewer tiling bytes than the struct; GET_TILING_DATA faults before this
        case SECOND_TPIPE: {
            if (!good) {
                TPipe another;
                (void)another;
            }
            break;
        }
        case COUNT_ZERO: {  // a NOP on A2/A3, not guaranteed on 950
            LocalTensor<F> s = Scratch(pipe, buf, 256, 64);
            Adds(s, s, 1.0f, good ? 8 : 0);
            break;
        }
        case PARTIAL_OVERLAP: {
            LocalTensor<F> s = Scratch(pipe, buf, 1024, 256);
            Add(s[good ? 0 : 8], s, s[128], 64);
            break;
        }
        case SELECT_MODE_1001: {
            LocalTensor<F> s = Scratch(pipe, buf, 2048, 256);
            LocalTensor<uint8_t> bits = s[256].ReinterpretCast<uint8_t>();
            Duplicate(s[256].ReinterpretCast<uint16_t>(), uint16_t(0x5555), 64);
            Select(s[384], bits, s, s[64], good ? SELMODE::VSEL_CMPMASK_SPR : SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);
            break;
        }
        case FREE_ENQUEUED: {
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            q.EnQue(a);
            if (good) a = q.DeQue<F>();
            q.FreeTensor(a);
            if (!good) {
                a = q.DeQue<F>();
                q.FreeTensor(a);
            }
            break;
        }
        case USE_ENQUEUED: {
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            q.EnQue(a);
            LocalTensor<F> b = good ? q.DeQue<F>() : a;
            Duplicate(b, 0.0f, 8);
            if (!good) b = q.DeQue<F>();
            q.FreeTensor(b);
            break;
        }
        case LOCAL_INDEX: {
            LocalTensor<F> s = Scratch(pipe, buf, 256, 64);
            Sync<HardEvent::V_S>();
            Keep(yGm, s.GetValue(good ? 63 : 64));
            break;
        }
        case TBUF_GET_LEN: {
            pipe->InitBuffer(buf, 64);
            LocalTensor<F> s = buf.Get<F>(good ? 16 : 17);
            (void)s;
            break;
        }
        case OPERAND_EXTENT: {
            LocalTensor<F> s = Scratch(pipe, buf, 256, 0);
            Duplicate(s, 1.0f, good ? 64 : 65);
            break;
        }
        case EVENT_UNRELEASED: {
            TEventID id = pipe->AllocEventID<HardEvent::V_MTE3>();
            if (good) pipe->ReleaseEventID<HardEvent::V_MTE3>(id);
            break;
        }
        case RESET_LIVE: {
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            if (good) q.FreeTensor(a);
            pipe->Reset();
            break;
        }
        case L0_DST_BLK0: {
            LocalTensor<F> s = Scratch(pipe, buf, 2048, 256);
            Add(s[256], s, s[64], 64, 1, BinaryRepeatParams(good ? 1 : 0, 1, 1, 8, 8, 8));
            break;
        }
        case L0_PARTIAL_OVERLAP: {
            LocalTensor<F> s = Scratch(pipe, buf, 2048, 256);
            Add(s, s[good ? 0 : 8], s[128], 64, 1, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
            break;
        }
        case L0_NO_MASK: {
            LocalTensor<F> s = Scratch(pipe, buf, 2048, 256);
            if (good) SetVectorMask<F, MaskMode::NORMAL>(0, ~0ull);
            Add<F, false>(s[256], s, s[64], MASK_PLACEHOLDER, 1, BinaryRepeatParams());
            ResetMask();
            break;
        }
        case L0_MASK_RESET_BY_LEVEL2: {
            LocalTensor<F> s = Scratch(pipe, buf, 2048, 256);
            SetVectorMask<F, MaskMode::NORMAL>(0, 0xFFFF);
            Muls(s[128], s, 2.0f, 64);  // level 2: ends with ResetMask + SetMaskNorm
            if (good) SetVectorMask<F, MaskMode::NORMAL>(0, 0xFFFF);
            Add<F, false>(s[256], s, s[64], MASK_PLACEHOLDER, 1, BinaryRepeatParams());
            ResetMask();
            break;
        }
        case MASK_MODE: {
            if (good) SetMaskCount();
            SetVectorMask<F, MaskMode::COUNTER>(0, 100);
            SetMaskNorm();
            ResetMask();
            break;
        }
        case REDUCE_TMP: {  // half: 40 repeats need a 48-element (96-byte) work buffer
            pipe->InitBuffer(buf, 128 * 40 * 2 + 32 + 96);
            LocalTensor<half> h = buf.Get<half>();
            Duplicate(h, half(1.0f), 128 * 40);
            LocalTensor<half> tmp = buf.GetWithOffset<half>(good ? 48 : 32, 128 * 40 * 2 + 32);
            ReduceSum(h[128 * 40], h, tmp, 128 * 40);
            break;
        }
        case SIGN_TMP: {
#if __NPU_ARCH__ != 1001
            LocalTensor<F> s = Scratch(pipe, buf, 4096, 64);
            Sign(s[64], s, buf.GetWithOffset<uint8_t>(good ? 768 : 736, 3072), 64);  // minimum 3 * 256 bytes
#endif
            break;
        }
        case CAST_MODE: {  // a mode the (float -> dst) pair does not have on this arch
            LocalTensor<F> s = Scratch(pipe, buf, 1024, 64);
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            LocalTensor<bfloat16_t> d = s[128].ReinterpretCast<bfloat16_t>();
            Cast(d, s, good ? RoundMode::CAST_RINT : RoundMode::CAST_NONE, 64);
#else
            LocalTensor<half> d = s[128].ReinterpretCast<half>();
            Cast(d, s, good ? RoundMode::CAST_ODD : RoundMode::CAST_RINT, 64);
#endif
            break;
        }
        case CAST_OVERLAP: {
            LocalTensor<F> s = Scratch(pipe, buf, 1024, 64);
            Cast(s[good ? 64 : 0].ReinterpretCast<half>(), s, RoundMode::CAST_NONE, 64);
            break;
        }
        case CMP_INT32_MODE: {
#if __NPU_ARCH__ == 2201
            pipe->InitBuffer(buf, 1024);
            LocalTensor<int32_t> s = buf.Get<int32_t>();
            Duplicate(s, 3, 128);
            Compare(s[192].ReinterpretCast<uint8_t>(), s, s[64], good ? CMPMODE::EQ : CMPMODE::GE, 64);
#endif
            break;
        }
        case CMPMASK_UNSET: {
            LocalTensor<F> s = Scratch(pipe, buf, 1024, 128);
#if __NPU_ARCH__ != 1001
            if (good) Compare(s, s[64], CMPMODE::LT, 64, BinaryRepeatParams());
#else
            if (good) SetCmpMask(s);
#endif
            GetCmpMask(s[192]);
            break;
        }
        case INT_DIV_ZERO: {
#if __NPU_ARCH__ == 3510
            pipe->InitBuffer(buf, 1024);
            LocalTensor<int32_t> s = buf.Get<int32_t>();
            Duplicate(s, 7, 64);
            Duplicate(s[64], good ? 2 : 0, 64);
            Div(s[128], s, s[64], 64);
#endif
            break;
        }
        case DATACOPY_UB_UNALIGNED: {
            pipe->InitBuffer(buf, 128);
            LocalTensor<F> s = buf.Get<F>();
            DataCopy(s[good ? 8 : 1], xGm, 8);
            break;
        }
        case LOCAL_OFFSET: {
            pipe->InitBuffer(buf, 64);
            LocalTensor<F> s = buf.Get<F>();
            LocalTensor<F> e = s[good ? 16 : 17];
            (void)e;
            break;
        }
        case BARRIER_BEFORE_COPY: {  // PipeBarrier<PIPE_ALL> covers only what was issued before it
            pipe->InitBuffer(buf, n * sizeof(F));
            LocalTensor<F> s = buf.Get<F>();
            if (!good) PipeBarrier<PIPE_ALL>();
            DataCopy(s, xGm, n);
            if (good) PipeBarrier<PIPE_ALL>();
            Muls(s, s, 2.0f, static_cast<int32_t>(n));
            break;
        }
        case TBUF_AFTER_RESET: {  // after Reset the TBuf's old buffer id belongs to another buffer
            TBuf<TPosition::VECCALC> other;
            pipe->InitBuffer(buf, 64);
            pipe->Reset();
            if (good) {
                pipe->InitBuffer(buf, 64);
            } else {
                pipe->InitBuffer(other, 64);
            }
            Duplicate(buf.Get<F>(), 1.0f, 16);
            break;
        }
        case TQUE_AFTER_RESET: {
            pipe->InitBuffer(q, 1, 64);
            pipe->Reset();
            if (good) {
                pipe->InitBuffer(q, 1, 64);
            } else {
                pipe->InitBuffer(q2, 1, 64);
            }
            LocalTensor<F> a = q.AllocTensor<F>();
            q.FreeTensor(a);
            break;
        }
        case MTE2_OVERLAPPING_COPIES: {  // two copies into the same UB need PipeBarrier<PIPE_MTE2> between them
            pipe->InitBuffer(buf, n * sizeof(F));
            LocalTensor<F> s = buf.Get<F>();
            DataCopy(s, xGm, n);
            if (good) PipeBarrier<PIPE_MTE2>();
            DataCopy(s[8], xGm, 8);
            break;
        }
        case UB_COPY_TOO_LONG: {  // 65537 blocks do not fit a copy's uint16_t block length
            LocalTensor<F> s = Scratch(pipe, buf, 1024, 64);
            DataCopy(s[128], s, good ? 64u : 65537u * 8u);
            break;
        }
        case REDUCE_DST_IN_SRC: {
            pipe->InitBuffer(buf, 128 * 2 * 2 + 64);
            LocalTensor<half> h = buf.Get<half>();
            Duplicate(h, half(1.0f), 128);
            LocalTensor<half> tmp = buf.GetWithOffset<half>(16, 128 * 2 * 2);
            ReduceSum(h[good ? 128 : 0], h, tmp, 128);
            break;
        }
        case CMP_L0_REGISTER_MASK: {  // isSetMask=false: the mask register must hold a full mask too
            LocalTensor<F> s = Scratch(pipe, buf, 2048, 256);
            SetVectorMask<F, MaskMode::NORMAL>(0, good ? ~0ull : 0xFFFFull);
            Compare<F, uint8_t, false>(s[256].ReinterpretCast<uint8_t>(), s, s[64], CMPMODE::LT, MASK_PLACEHOLDER, 1,
                                       BinaryRepeatParams());
            ResetMask();
            break;
        }

        // ---- event IDs ----------------------------------------------------------------------------------------
        case THREE_DOUBLE_BUFFERED_VECIN: {  // three VECIN queues over 2 tiles: each FreeTensor reserves a V_MTE2
            // ID until that buffer is allocated again, and allocation rotates 0, 1, 0, 1: 6 IDs held after tile 2
            TQue<TPosition::VECIN, 1> a, b, c;
            const uint8_t num = good ? 1 : 2;
            pipe->InitBuffer(a, num, 32);
            pipe->InitBuffer(b, num, 32);
            pipe->InitBuffer(c, num, 32);
            for (uint32_t tile = 0; tile < 2; ++tile) {
                LocalTensor<F> ta = a.AllocTensor<F>(), tb = b.AllocTensor<F>(), tc = c.AllocTensor<F>();
                DataCopy(ta, xGm[tile * 8], 8);
                DataCopy(tb, xGm[tile * 8], 8);
                DataCopy(tc, xGm[tile * 8], 8);
                a.EnQue(ta);
                b.EnQue(tb);
                c.EnQue(tc);
                ta = a.DeQue<F>();
                tb = b.DeQue<F>();
                tc = c.DeQue<F>();
                Add(ta, ta, tb, 8);
                Add(ta, ta, tc, 8);
                a.FreeTensor(ta);
                b.FreeTensor(tb);
                c.FreeTensor(tc);
            }
            break;
        }
        case KERNEL_IDS_SHARE_POOL: {  // param = IDs per event type; the kernel holds param-1 (good: param-2)
            TEventID held[8];
            const uint32_t k = good ? t.param - 2 : t.param - 1;
            for (uint32_t i = 0; i < k; ++i) held[i] = pipe->AllocEventID<HardEvent::V_MTE2>();
            pipe->InitBuffer(q, 2, 32);
            for (uint32_t tile = 0; tile < 2; ++tile) {  // buffer 0, then buffer 1: two IDs held by the queue
                LocalTensor<F> a = q.AllocTensor<F>();
                Duplicate(a, 1.0f, 8);
                q.FreeTensor(a);
            }
            for (uint32_t i = 0; i < k; ++i) pipe->ReleaseEventID<HardEvent::V_MTE2>(held[i]);
            break;
        }
        case ENQUE_HOLDS_IDS: {  // every enqueued buffer holds an MTE2_V ID until DeQue
            TQue<TPosition::VECIN, 9> deep;
            const uint32_t k = good ? t.param : t.param + 1;
            pipe->InitBuffer(deep, static_cast<uint8_t>(k), 32);
            LocalTensor<F> ts[9];
            for (uint32_t i = 0; i < k; ++i) {
                ts[i] = deep.AllocTensor<F>();
                DataCopy(ts[i], xGm, 8);
                deep.EnQue(ts[i]);
            }
            for (uint32_t i = 0; i < k; ++i) ts[i] = deep.DeQue<F>();
            for (uint32_t i = 0; i < k; ++i) deep.FreeTensor(ts[i]);
            break;
        }
        case SETFLAG_ON_QUEUE_ID: {  // after FreeTensor the queue holds V_MTE2 id 0 with its flag set
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            Duplicate(a, 1.0f, 8);
            q.FreeTensor(a);
            const int32_t id = good ? pipe->FetchEventID<HardEvent::V_MTE2>() : 0;
            SetFlag<HardEvent::V_MTE2>(id);
            WaitFlag<HardEvent::V_MTE2>(id);
            break;
        }
        case WAITFLAG_ON_QUEUE_ID: {  // a kernel WaitFlag consumes the flag the queue set: the next AllocTensor hangs
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            Duplicate(a, 1.0f, 8);
            q.FreeTensor(a);
#if __NPU_ARCH__ != 3510
            if (!good) WaitFlag<HardEvent::V_MTE2>(0);
#endif
            a = q.AllocTensor<F>();
            q.FreeTensor(a);
            break;
        }
        case BUFFER_IDS_3510: {  // NpuArch 3510: 28 TQue buffer IDs per TPipe
            pipe->InitBuffer(q, 20, 32);
            pipe->InitBuffer(q2, good ? 8 : 9, 32);
            break;
        }
        // ---- the scalar data cache (64-byte lines) --------------------------------------------------------------
        case SCALAR_LINE_TWO_CORES: {  // block_dim 2: broken writes y[0] and y[1], one line; good is 16 floats apart
            const uint32_t at = GetBlockIdx() * (good ? 16 : 1);
            yGm.SetValue(at, 10.0f + GetBlockIdx());
#if STRICT_HAS_DCCI
            FlushLineComplete(yGm[at]);
#endif
            break;
        }
        case SCALAR_LINE_THEN_MTE3: {  // SetValue y[0], then MTE3 writes y[8..16) of the same line
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            yGm.SetValue(0, 3.0f);
#if STRICT_HAS_DCCI
            if (good) FlushLineComplete(yGm);
            const uint32_t dst = 8;
#else
            const uint32_t dst = good ? 16 : 8;
#endif
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm[dst], s, 8);
            break;
        }
        case STALE_GETVALUE: {  // GetValue caches y's first line; MTE3 then writes it; a second GetValue is stale
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            F v = yGm.GetValue(0);
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s, 8);
            Sync<HardEvent::MTE3_S>();
#if STRICT_HAS_DCCI
            if (good) FlushLineComplete(yGm);
            v += yGm.GetValue(1);
#else
            v += yGm.GetValue(good ? 16 : 1);
#endif
            (void)v;
            break;
        }
        case SETVALUE_INTO_STALE_LINE: {  // the write-back of the stale line would undo the DataCopy
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            (void)yGm.GetValue(12);
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s, 8);
            Sync<HardEvent::MTE3_S>();
#if STRICT_HAS_DCCI
            if (good) FlushLineComplete(yGm);
            yGm.SetValue(12, 5.0f);
#else
            yGm.SetValue(good ? 16 : 12, 5.0f);
#endif
            break;
        }
        case MTE2_READS_DIRTY_LINE: {  // the SetValue data is still in the cache when MTE2 reads the line
            pipe->InitBuffer(buf, 64);
            LocalTensor<F> s = buf.Get<F>();
            yGm.SetValue(2, 4.0f);
#if STRICT_HAS_DCCI
            if (good) FlushLineComplete(yGm);
            DataCopy(s, yGm, 8);
#else
            DataCopy(s, yGm[good ? 16 : 0], 8);
#endif
            break;
        }
        case SCALAR_LINE_VS_OTHER_CORE_DMA: {  // block_dim 2: core 0 SetValue y[0], core 1 DataCopy into the line
            if (GetBlockIdx() == 0) {
                yGm.SetValue(0, 1.0f);
            } else {
                LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
                Sync<HardEvent::V_MTE3>();
                DataCopy(yGm[good ? 16 : 8], s, 8);
            }
            break;
        }
        case DCCI_UB_DOES_NOT_FLUSH_GM: {
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            yGm.SetValue(0, 2.0f);
            if (good) {
                DataCacheCleanAndInvalid<F, CacheLine::ENTIRE_DATA_CACHE, DcciDst::CACHELINE_OUT>(yGm);
                DataSyncBarrier<MemDsbT::DDR>();
                PipeBarrier<PIPE_ALL>();
            } else {
                DataCacheCleanAndInvalid<F, CacheLine::ENTIRE_DATA_CACHE, DcciDst::CACHELINE_UB>(yGm);
            }
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm[8], s, 8);
#endif
            break;
        }
        // ---- auto-sync: no manual synchronisation around scalar UB access ----------------------------------------
        case AUTO_V_S: {
            LocalTensor<F> s = Scratch(pipe, buf, 256, 64);
            Keep(yGm, s.GetValue(3));
            break;
        }
        case AUTO_S_V: {
            LocalTensor<F> s = Scratch(pipe, buf, 512, 0);
            for (uint32_t i = 0; i < 64; ++i) s.SetValue(i, 1.0f);
            Adds(s[64], s, 1.0f, 64);
            break;
        }
        case AUTO_S_MTE3: {
            pipe->InitBuffer(buf, 32);
            LocalTensor<F> s = buf.Get<F>();
            for (uint32_t i = 0; i < 8; ++i) s.SetValue(i, static_cast<F>(i));
            DataCopy(yGm, s, 8);
            break;
        }
        case AUTO_MTE2_S: {
            pipe->InitBuffer(buf, 32);
            LocalTensor<F> s = buf.Get<F>();
            DataCopy(s, xGm, 8);
            Keep(yGm, s.GetValue(5));
            break;
        }
        // ---- pad register, GlobalTensor size -------------------------------------------------------------------
        case PAD_REGISTER_FROM_ISPAD: {  // isPad=true sets the register; a later isPad=false copy pads with it
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            pipe->InitBuffer(buf, 128);
            LocalTensor<F> s = buf.Get<F>();
            if (good) DataCopyPad(s[16], xGm, DataCopyExtParams(1, 5 * sizeof(F), 0, 0, 0),
                                  DataCopyPadExtParams<F>(true, 0, 3, 7.0f));
            DataCopyPad(s, xGm, DataCopyExtParams(1, 5 * sizeof(F), 0, 0, 0),
                        DataCopyPadExtParams<F>(false, 0, 3, 0.0f));
            Sync<HardEvent::MTE2_V>();
            Muls(s[24], s, 2.0f, 8);
#endif
            break;
        }
        case GLOBAL_BUFFER_LARGER_THAN_HOST: {  // y has n floats; declaring 4n is legal, touching element n is not
            GlobalTensor<F> big, idle;
            big.SetGlobalBuffer((__gm__ F*)y, 4 * n);
            idle.SetGlobalBuffer((__gm__ F*)y + 2 * n, n);  // an idle core's base past the end: no access, no fault
            (void)yGm[2 * n];                               // likewise an offset view past the end
            (void)idle;
            big.SetValue(good ? n - 1 : n, 1.0f);
            break;
        }
        case FREE_ALL_EVENT: {  // as KERNEL_IDS_SHARE_POOL's broken variant; FreeAllEvent returns the queue's IDs
            TEventID held[8];
            const uint32_t k = t.param - 1;
            for (uint32_t i = 0; i < k; ++i) held[i] = pipe->AllocEventID<HardEvent::V_MTE2>();
            pipe->InitBuffer(q, 2, 32);
            for (uint32_t tile = 0; tile < 2; ++tile) {
                LocalTensor<F> a = q.AllocTensor<F>();
                Duplicate(a, 1.0f, 8);
                q.FreeTensor(a);
                if (good) q.FreeAllEvent();
            }
            for (uint32_t i = 0; i < k; ++i) pipe->ReleaseEventID<HardEvent::V_MTE2>(held[i]);
            break;
        }
        // ---- issue 16 ------------------------------------------------------------------------------------------
        case V_V_ORDER: {  // run with auto_sync=False: Adds reads what Duplicate wrote
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            if (good) PipeBarrier<PIPE_V>();
            Adds(s, s, 1.0f, 8);
            break;
        }
        case UB_TO_UB_QUEUE: {  // TQueBind<VECIN, VECCALC> is UB -> UB: its EnQue/DeQue is MTE2_MTE3, not MTE2_V
            TQueBind<TPosition::VECIN, TPosition::VECCALC, 1> ub;
            TQue<TPosition::VECIN, 1> in;  // GM -> VECIN: MTE2_V
            pipe->InitBuffer(ub, 1, 32);
            pipe->InitBuffer(in, 1, 32);
            LocalTensor<F> a = good ? in.AllocTensor<F>() : ub.AllocTensor<F>();
            DataCopy(a, xGm, 8);
            if (good) {
                in.EnQue(a);
                a = in.DeQue<F>();
            } else {
                ub.EnQue(a);
                a = ub.DeQue<F>();
            }
            Adds(a, a, 1.0f, 8);
            if (good) in.FreeTensor(a); else ub.FreeTensor(a);
            break;
        }
        case VECCALC_QUEUE_IDS: {  // TQue<VECCALC> is UB -> UB: each FreeTensor holds an MTE3_MTE2 ID (param = pool)
            TQue<TPosition::VECCALC, 1> tmp[9];
            const uint32_t k = good ? t.param : t.param + 1;
            for (uint32_t i = 0; i < k; ++i) {
                pipe->InitBuffer(tmp[i], 1, 32);
                LocalTensor<F> a = tmp[i].AllocTensor<F>();
                Duplicate(a, 1.0f, 8);
                tmp[i].FreeTensor(a);
            }
            break;
        }
        case SETVALUE_AFTER_MTE3: {  // MTE3 writes y[0..8); SetValue(y[10]) is in the same 64-byte line
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            Sync<HardEvent::V_MTE3>();
            DataCopy(yGm, s, 8);
            if (good) Sync<HardEvent::MTE3_S>();
#if __NPU_ARCH__ == 1001
            if (good) {  // 1001 cannot write GM by scalar at all (no write-back): read the line instead
                (void)yGm.GetValue(10);
                break;
            }
#endif
            yGm.SetValue(10, 1.0f);
            break;
        }
        case DCCI_THEN_DMA_NO_DSB: {  // SetValue y[0]; DCCI; MTE3 into the same line before DataSyncBarrier
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            yGm.SetValue(0, 2.0f);
            FlushLine(yGm);
            if (good) DataSyncBarrier<MemDsbT::DDR>();
            PipeBarrier<PIPE_ALL>();
            DataCopy(yGm[8], s, 8);
#endif
            break;
        }
        case DCCI_THEN_DMA_NO_PIPE_SYNC: {  // as above with the barrier, but no S -> MTE3 synchronisation
#if STRICT_HAS_DCCI
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            Sync<HardEvent::V_MTE3>();
            yGm.SetValue(0, 2.0f);
            FlushLine(yGm);
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            DataSyncBarrier<MemDsbT::ALL>();
#endif
            if (good) Sync<HardEvent::S_MTE3>();
            DataCopy(yGm[8], s, 8);
#endif
            break;
        }
        case BRCB_B16_BEHIND_OUTPUT: {  // Brcb<half> output [0, 256); MTE2 fills the buffer behind it at [256, 288)
#if __NPU_ARCH__ != 1001
            pipe->InitBuffer(buf, 1024);
            LocalTensor<half> h = buf.Get<half>();
            LocalTensor<F> behind = buf.Get<F>()[64];
            Duplicate(h[256], half(1.0f), 16);  // src: 8 halves in the last 512 bytes
            DataCopy(behind, xGm, 8);
            if (good) Sync<HardEvent::MTE2_V>();
            PipeBarrier<PIPE_V>();
            Brcb(h, h[256], 1, BrcbRepeatParams(1, 8));
#endif
            break;
        }
        case DIRTY_LINE_AT_KERNEL_END: {  // SetValue leaves a dirty line; only 1001 never writes it back
            if (!good) yGm.SetValue(0, 1.0f);
            break;
        }
        // ---- false positives (run with good = 0) ----------------------------------------------------------------
        case FP_TENSOR_ALLOCATED_AT_END: {
            pipe->InitBuffer(q, 1, 32);
            LocalTensor<F> a = q.AllocTensor<F>();
            Duplicate(a, 1.0f, 8);
            break;
        }
        case FP_DCCI_DSB_FORM: {  // the documented form: SetValue, DCCI, DataSyncBarrier, pipe sync, then DMA
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            LocalTensor<F> s = Scratch(pipe, buf, 32, 8);
            Sync<HardEvent::V_MTE3>();
            yGm.SetValue(0, 2.0f);
            DataCacheCleanAndInvalid<F, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(yGm);
            DataSyncBarrier<MemDsbT::ALL>();
            Sync<HardEvent::S_MTE3>();
            DataCopy(yGm[8], s, 8);
#endif
            break;
        }
        case FP_TQUE_CONFIG: {  // a queue declared with a TQueConfig
            TQue<TPosition::VECIN, 1, &kQueConf> cq;
            pipe->InitBuffer(cq, 1, 32);
            LocalTensor<F> a = cq.AllocTensor<F>();
            DataCopy(a, xGm, 8);
            cq.EnQue(a);
            a = cq.DeQue<F>();
            Adds(a, a, 1.0f, 8);
            cq.FreeTensor(a);
            break;
        }
        case FP_UB_FULL_BUDGET: {  // param = the arch's kernel UB (248 KB on 950 per kernel_utils_constants.h)
            pipe->InitBuffer(buf, t.param);
            break;
        }
        case FP_DATACOPYPAD_ODD_GM_STRIDE: {  // GM rows 2 floats long, 2 bytes apart: byte strides need not be elements
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            pipe->InitBuffer(buf, 128);
            LocalTensor<F> s = buf.Get<F>();
            DataCopyPad(s, xGm, DataCopyExtParams(2, 2 * sizeof(F), 2, 0, 0), DataCopyPadExtParams<F>(true, 0, 6, 0.0f));
            Sync<HardEvent::MTE2_MTE3>();
            DataCopyPad(yGm, s, DataCopyExtParams(2, 2 * sizeof(F), 0, 2, 0));
#endif
            break;
        }
        // ---- value checks --------------------------------------------------------------------------------------
        case ALLOC_ORDER: {  // y[i] = UB address of the i-th AllocTensor of a 3-buffer queue, freed right away
            pipe->InitBuffer(q, 3, 32);
            LocalTensor<F> s = Scratch(pipe, buf, 32, 0);  // staged in UB: 1001 cannot write GM by scalar
            for (uint32_t i = 0; i < 8; ++i) {
                LocalTensor<F> a = q.AllocTensor<F>();
                s.SetValue(i, i < 5 ? static_cast<F>(a.GetPhyAddr()) : 0.0f);
                q.FreeTensor(a);
            }
            Sync<HardEvent::S_MTE3>();
            DataCopy(yGm, s, 8);
            break;
        }
        case PAD_REGISTER_VALUES: {  // y[0..8): SetPadValue(1) then isPad=true (7): the register holds 7
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
            pipe->InitBuffer(buf, 128);
            LocalTensor<F> s = buf.Get<F>();
            SetPadValue(1.0f);
            DataCopyPad(s[16], xGm, DataCopyExtParams(1, 5 * sizeof(F), 0, 0, 0),
                        DataCopyPadExtParams<F>(true, 0, 3, 7.0f));
            DataCopyPad(s, xGm, DataCopyExtParams(1, 5 * sizeof(F), 0, 0, 0),
                        DataCopyPadExtParams<F>(false, 0, 3, 0.0f));
            Sync<HardEvent::MTE2_MTE3>();
            DataCopy(yGm, s, 8);
#endif
            break;
        }
        case FREE_WITHOUT_ENQUE: {  // legal: a buffer may be freed without ever being enqueued
            pipe->InitBuffer(q, 2, 32);
            for (uint32_t i = 0; i < 4; ++i) {
                LocalTensor<F> a = q.AllocTensor<F>();
                PipeBarrier<PIPE_V>();  // run with auto-sync off: the buffer's last Duplicate wrote it too
                Duplicate(a, 1.0f, 8);
                q.FreeTensor(a);
            }
            break;
        }
        default:
            break;
    }
    (void)z;
}

extern "C" __global__ __aicore__ void strict(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
    GET_TILING_DATA_WITH_STRUCT(StrictTiling, t, tiling);
    const uint32_t key = static_cast<uint32_t>(TILING_KEY_VAR);
    if (key == NO_PIPE) {  // GetTPipePtr needs a live TPipe
        if (t.good) {
            TPipe pipe;
            (void)GetTPipePtr()->FetchEventID(HardEvent::V_S);
        } else {
            (void)GetTPipePtr()->FetchEventID(HardEvent::V_S);
        }
        return;
    }
    TPipe pipe;
    Run(key, t, &pipe, x, y, z);
}
