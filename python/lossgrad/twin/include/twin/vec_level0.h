// Level-0 ("high-dimensional split") vector model: the mask register (SetVectorMask, SetMaskCount/SetMaskNorm,
// ResetMask), repeats of 256 bytes, per-operand block and repeat strides in 32-byte blocks, and the level-0 forms of
// the binary, tensor-scalar and Duplicate APIs. Other API families add their level-0 forms in their own headers on
// top of the engine here (L0Elementwise).
//
// Model (ascendc_api.md §2.5 and the SIMD计算说明/掩码 docs):
//  - a repeat covers E = 256 / (larger element size) lanes; lane i of repeat r of an operand with element size s,
//    block stride b and repeat stride p (blocks) lives at base + (r*p + (i / (32/s)) * b) * 32 + (i % (32/s)) * s;
//  - normal mode: the mask is a per-repeat lane bit set (count form = the first `mask` lanes); masked-off lanes of
//    dst keep their value; counter mode (SetMaskCount): the mask is the total element count and repeatTime is
//    ignored;
//  - within a repeat every lane is read before any lane is written; repeats run in order.
// Strictness beyond hardware: a mask of 0, a count mask above E, set bits above lane E, and isSetMask=false without
// a mask the kernel set since the last reset are faults (hardware would run with whatever the register holds).
#pragma once

#include <algorithm>
#include <array>
#include <functional>

#include "vec_binary.h"

namespace AscendC {

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

}  // namespace AscendC

namespace twin {

// ---------------------------------------------------------------------------------------------------------------
// Masks
// ---------------------------------------------------------------------------------------------------------------

inline void CheckMaskBits(const char* api, uint64_t hi, uint64_t lo, uint32_t lanes) {
    if (lanes <= 64 && hi != 0)
        Fault(api, "mask high word 0x%llx must be 0: a repeat of this element size has only %u lanes",
              (unsigned long long)hi, lanes);
    if (lanes < 64 && (lo >> lanes) != 0)
        Fault(api, "mask bits above lane %u are set (0x%llx): a repeat of this element size has only %u lanes",
              lanes - 1, (unsigned long long)lo, lanes);
    if (hi == 0 && lo == 0)
        Fault(api, "mask is 0: no lane enabled (an invalid mask on NpuArch 1001/2002, a silent NOP elsewhere)");
}

inline void MaskFromCount(const char* api, uint64_t n, uint32_t lanes, uint64_t& hi, uint64_t& lo) {
    if (n == 0 || n > lanes)
        Fault(api, "continuous mask %llu is outside [1, %u] for this element size", (unsigned long long)n, lanes);
    lo = n >= 64 ? ~0ull : ((1ull << n) - 1);
    hi = n <= 64 ? 0 : n >= 128 ? ~0ull : ((1ull << (n - 64)) - 1);
}

// Which lanes of which repeats a level-0 call touches.
struct L0Geometry {
    uint32_t lanes = 0;     // E: lanes per repeat
    uint64_t repeats = 0;
    bool counter = false;
    uint64_t total = 0;     // counter mode: element count
    uint64_t bits[2] = {0, 0};

    bool Active(uint64_t r, uint32_t i) const {
        if (counter) return r * lanes + i < total;
        return ((bits[i >> 6] >> (i & 63)) & 1u) != 0;
    }
};

inline void RequireRepeats(const char* api, uint64_t repeats) {
    if (repeats == 0 && kArch == 3510)
        Fault(api, "repeatTime 0 (or a counter-mode count of 0): a zero-length call is not guaranteed to be a no-op "
                   "on NpuArch 3510");
}

// Resolve the mask of a level-0 call. `bits` non-null selects the bit form (mask[2]), else `count` is the
// continuous form. With isSetMask the API writes the mask register (it keeps that value afterwards).
inline L0Geometry ResolveL0(const char* api, bool isSetMask, const uint64_t* bits, uint64_t count,
                            uint32_t repeatTime, uint32_t elemBytes) {
    // 8-bit element types exist only in the level-2 (count) forms: a repeat would have 256 lanes.
    if (elemBytes < 2) Fault(api, "level-0 (mask/repeat) forms do not support 8-bit element types");
    L0Geometry g;
    g.lanes = kRepeat / elemBytes;
    VectorMaskState& m = Core().vmask;
    if (isSetMask) {
        if (m.counter) {
            if (bits != nullptr && bits[1] != 0)
                Fault(api, "counter mode: mask[1] must be 0 (mask[0] is the element count)");
            m.hi = 0;
            m.lo = bits != nullptr ? bits[0] : count;
        } else if (bits != nullptr) {
            CheckMaskBits(api, bits[1], bits[0], g.lanes);
            m.hi = bits[1];
            m.lo = bits[0];
        } else {
            MaskFromCount(api, count, g.lanes, m.hi, m.lo);
        }
        m.valid = true;
    } else {
        if (!m.valid)
            Fault(api, "isSetMask=false but the kernel set no mask with SetVectorMask since %s reset the mask "
                       "register", m.resetBy);
        if (!m.counter) CheckMaskBits(api, m.hi, m.lo, g.lanes);
    }
    if (m.counter) {
        g.counter = true;
        g.total = m.lo;
        g.repeats = (m.lo + g.lanes - 1) / g.lanes;
    } else {
        g.bits[0] = m.lo;
        g.bits[1] = m.hi;
        g.repeats = repeatTime;
    }
    RequireRepeats(api, g.repeats);
    return g;
}

// ---------------------------------------------------------------------------------------------------------------
// Operands and their UB footprints
// ---------------------------------------------------------------------------------------------------------------

struct L0Operand {
    const char* name;
    TensorRef ref;
    uint32_t esize;
    uint32_t blk, rep;  // block and repeat strides, in 32-byte blocks
};

template <typename T>
inline L0Operand L0Op(const char* name, const AscendC::LocalTensor<T>& t, uint32_t blk, uint32_t rep) {
    return L0Operand{name, t.TwinRef(), static_cast<uint32_t>(sizeof(T)), blk, rep};
}

inline uint64_t LaneAddr(const L0Operand& o, uint64_t r, uint32_t i) {
    const uint32_t perBlock = kBlock / o.esize;
    return o.ref.addr + (r * o.rep + static_cast<uint64_t>(i / perBlock) * o.blk) * kBlock +
           static_cast<uint64_t>(i % perBlock) * o.esize;
}

struct Seg {
    uint64_t addr, len;
};

// UB byte ranges the active lanes of an operand touch, in lane order (adjacent lanes merged).
inline std::vector<Seg> L0Segments(const L0Operand& o, const L0Geometry& g) {
    std::vector<Seg> out;
    for (uint64_t r = 0; r < g.repeats; ++r)
        for (uint32_t i = 0; i < g.lanes; ++i) {
            if (!g.Active(r, i)) continue;
            uint64_t a = LaneAddr(o, r, i);
            if (!out.empty() && out.back().addr + out.back().len == a) out.back().len += o.esize;
            else out.push_back(Seg{a, o.esize});
        }
    return out;
}

inline std::vector<Seg> SortedUnion(std::vector<Seg> v) {
    std::sort(v.begin(), v.end(), [](const Seg& a, const Seg& b) { return a.addr < b.addr; });
    std::vector<Seg> out;
    for (const Seg& s : v) {
        if (!out.empty() && s.addr <= out.back().addr + out.back().len)
            out.back().len = std::max(out.back().addr + out.back().len, s.addr + s.len) - out.back().addr;
        else out.push_back(s);
    }
    return out;
}

inline bool SelfOverlaps(std::vector<Seg> v) {
    std::sort(v.begin(), v.end(), [](const Seg& a, const Seg& b) { return a.addr < b.addr; });
    uint64_t end = 0;
    for (size_t k = 0; k < v.size(); ++k) {
        if (k > 0 && v[k].addr < end) return true;
        end = std::max(end, v[k].addr + v[k].len);
    }
    return false;
}

// Does any segment of `b` intersect the sorted, disjoint union `a`?
inline bool Intersects(const std::vector<Seg>& a, const std::vector<Seg>& b) {
    for (const Seg& s : b) {
        auto it = std::upper_bound(a.begin(), a.end(), s.addr,
                                   [](uint64_t v, const Seg& x) { return v < x.addr + x.len; });
        if (it != a.end() && it->addr < s.addr + s.len) return true;
    }
    return false;
}

inline void RequireDisjoint(const char* api, const char* a, uint64_t aAddr, uint64_t aLen, const char* b,
                            uint64_t bAddr, uint64_t bLen) {
    if (aLen > 0 && bLen > 0 && aAddr < bAddr + bLen && bAddr < aAddr + aLen)
        Fault(api, "%s (UB 0x%llx, %llu bytes) overlaps %s (UB 0x%llx, %llu bytes): they must be disjoint", a,
              (unsigned long long)aAddr, (unsigned long long)aLen, b, (unsigned long long)bAddr,
              (unsigned long long)bLen);
}

inline bool SameMapping(const L0Operand& a, const L0Operand& b) {
    return a.ref.addr == b.ref.addr && a.esize == b.esize && a.blk == b.blk && a.rep == b.rep;
}

// Liveness, UB position, 32-byte alignment, and every touched byte inside the tensor.
inline void L0CheckOperand(const char* api, const L0Operand& o, const std::vector<Seg>& segs) {
    RequireOperand(api, o.name, o.ref, 0);
    uint64_t end = 0;
    for (const Seg& s : segs) end = std::max(end, s.addr + s.len);
    if (end > static_cast<uint64_t>(o.ref.addr) + o.ref.len)
        Fault(api, "%s: the level-0 access pattern reaches UB byte 0x%llx, past the end of the tensor (%u bytes at "
                   "0x%x; block stride %u, repeat stride %u)",
              o.name, (unsigned long long)(end - 1), o.ref.len, o.ref.addr, o.blk, o.rep);
}

inline void L0CheckSrcVsDst(const char* api, const L0Operand& src, const std::vector<Seg>& srcSegs,
                            const L0Operand& dst, const std::vector<Seg>& dstUnion) {
    if (Intersects(dstUnion, srcSegs) && !SameMapping(src, dst))
        Fault(api, "%s and dst overlap without coinciding (src UB 0x%x, dst UB 0x%x): level-0 src and dst must "
                   "overlap 100%% (same start, element size and strides) or not at all",
              src.name, src.ref.addr, dst.ref.addr);
}

inline void L0CheckDstStride(const char* api, const L0Operand& dst) {
    if (dst.blk == 0)
        Fault(api, "dstBlkStride 0 is illegal (all blocks of a repeat would write the same UB block)");
}

// dst[lane] = f(src values of the lane, repeat, lane) over the active lanes. `accumulate` permits the documented
// exception to the cross-repeat overlap rule (dst == src1 with repeat stride 0, for Add/Sub/Mul/Max/Min on
// half/int32/float): repeats then accumulate into dst in order. `lateRead` (Select's selMask) is read after the
// sources, as the level-2 form reads it, so the event log names the same two source operands at either level.
template <typename TD, typename TS, size_t NS, typename F>
inline void L0Elementwise(const char* api, const L0Geometry& g, const L0Operand& dst,
                          const std::array<L0Operand, NS>& srcs, bool accumulate, F f,
                          const std::function<void()>& lateRead = nullptr) {
    L0CheckDstStride(api, dst);
    for (const L0Operand& s : srcs) RequireOperand(api, s.name, s.ref, 0);
    RequireOperand(api, dst.name, dst.ref, 0);
    if (g.repeats == 0) return;  // a no-op (NpuArch 3510 already faulted)
    std::vector<Seg> dsegs = L0Segments(dst, g);
    L0CheckOperand(api, dst, dsegs);
    if (SelfOverlaps(dsegs)) {
        bool ok = accumulate && NS == 2 && dst.rep == 0 && SameMapping(srcs[NS - 1], dst);
        if (!ok)
            Fault(api, "dst lanes of different blocks or repeats overlap (dstBlkStride %u, dstRepStride %u): "
                       "cross-repeat overlap is not allowed",
                  dst.blk, dst.rep);
    }
    std::vector<Seg> dunion = SortedUnion(dsegs);
    for (const L0Operand& s : srcs) {
        std::vector<Seg> ss = L0Segments(s, g);
        L0CheckOperand(api, s, ss);
        L0CheckSrcVsDst(api, s, ss, dst, dunion);
        for (const Seg& x : ss) UbRead(api, s.name, P_V, static_cast<uint32_t>(x.addr), static_cast<uint32_t>(x.len));
    }
    if (lateRead) lateRead();
    uint8_t* ub = Core().ub.data();
    std::vector<TD> out(g.lanes);
    uint64_t active = 0;
    for (uint64_t r = 0; r < g.repeats; ++r) {
        for (uint32_t i = 0; i < g.lanes; ++i) {
            if (!g.Active(r, i)) continue;
            TS in[NS > 0 ? NS : 1];
            for (size_t k = 0; k < NS; ++k) std::memcpy(&in[k], ub + LaneAddr(srcs[k], r, i), sizeof(TS));
            out[i] = f(static_cast<const TS*>(in), r, i);
            ++active;
        }
        for (uint32_t i = 0; i < g.lanes; ++i)
            if (g.Active(r, i)) std::memcpy(ub + LaneAddr(dst, r, i), &out[i], sizeof(TD));
    }
    for (const Seg& x : dsegs) UbWrite(api, P_V, static_cast<uint32_t>(x.addr), static_cast<uint32_t>(x.len));
    NextOp(P_V);
    CountApi(api, g.repeats, active, WiderCode<TD, TS>());
}

// The cross-repeat accumulate exception applies to these element types only.
template <typename T> constexpr bool kAccumulateType = kOneOf<T, half, int32_t, float>;

template <typename T, bool isSetMask, typename F>
inline void Binary0(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                    const AscendC::LocalTensor<T>& src1, const uint64_t* bits, uint64_t count, uint8_t repeatTime,
                    const AscendC::BinaryRepeatParams& p, bool accumulate, F f) {
    // 8-bit and 64-bit types (950 only) exist in the count and operator forms alone (ascendc_api §2.6).
    static_assert(sizeof(T) >= 2 && sizeof(T) <= 4,
                  "level-0 (mask/repeat) binary forms support neither 8-bit nor 64-bit element types");
    L0Geometry g = ResolveL0(api, isSetMask, bits, count, repeatTime, sizeof(T));
    L0Elementwise<T, T, 2>(api, g, L0Op("dst", dst, p.dstBlkStride, p.dstRepStride),
                           std::array<L0Operand, 2>{L0Op("src0", src0, p.src0BlkStride, p.src0RepStride),
                                                    L0Op("src1", src1, p.src1BlkStride, p.src1RepStride)},
                           accumulate && kAccumulateType<T>,
                           [&f](const T* v, uint64_t, uint32_t) { return Saturate(f(v[0], v[1])); });
}

template <typename TD, typename TS, bool isSetMask, typename F>
inline void Unary0(const char* api, const AscendC::LocalTensor<TD>& dst, const AscendC::LocalTensor<TS>& src,
                   const uint64_t* bits, uint64_t count, uint8_t repeatTime, const AscendC::UnaryRepeatParams& p, F f) {
    constexpr uint32_t wide = sizeof(TD) > sizeof(TS) ? sizeof(TD) : sizeof(TS);
    static_assert(wide >= 2, "level-0 (mask/repeat) forms do not support 8-bit element types");
    L0Geometry g = ResolveL0(api, isSetMask, bits, count, repeatTime, wide);
    L0Elementwise<TD, TS, 1>(api, g, L0Op("dst", dst, p.dstBlkStride, p.dstRepStride),
                             std::array<L0Operand, 1>{L0Op("src", src, p.srcBlkStride, p.srcRepStride)}, false,
                             [&f](const TS* v, uint64_t, uint32_t) { return Saturate(f(v[0])); });
}

}  // namespace twin

namespace AscendC {

// ---------------------------------------------------------------------------------------------------------------
// Mask register
// ---------------------------------------------------------------------------------------------------------------

inline void SetMaskCount() {
    twin::Core().vmask.counter = true;
    twin::Core().vmask.valid = false;  // the mask value must be set for the new mode
    twin::Core().vmask.resetBy = "SetMaskCount";
}

inline void SetMaskNorm() {
    twin::Core().vmask.counter = false;
    twin::Core().vmask.valid = false;
    twin::Core().vmask.resetBy = "SetMaskNorm";
}

inline void ResetMask() {
    twin::VectorMaskState& m = twin::Core().vmask;
    m.hi = m.lo = ~0ull;
    m.valid = !m.counter;  // all lanes in normal mode; in counter mode an all-ones count is no usable mask
    m.resetBy = "ResetMask";
}

template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow) {
    const char* api = "SetVectorMask";
    twin::VectorMaskState& m = twin::Core().vmask;
    if ((mode == MaskMode::COUNTER) != m.counter)
        twin::Fault(api, "MaskMode::%s but the mask mode is %s: call %s first", mode == MaskMode::COUNTER ?
                    "COUNTER" : "NORMAL", m.counter ? "COUNTER" : "NORMAL",
                    mode == MaskMode::COUNTER ? "SetMaskCount()" : "SetMaskNorm()");
    if (mode == MaskMode::COUNTER) {
        if (maskHigh != 0) twin::Fault(api, "counter mode: maskHigh must be 0 (maskLow is the element count)");
    } else {
        twin::CheckMaskBits(api, maskHigh, maskLow, twin::kRepeat / static_cast<uint32_t>(sizeof(T)));
    }
    m.hi = maskHigh;
    m.lo = maskLow;
    m.valid = true;
}

template <typename T, MaskMode mode = MaskMode::NORMAL> inline void SetVectorMask(int32_t len) {
    const char* api = "SetVectorMask";
    twin::VectorMaskState& m = twin::Core().vmask;
    if ((mode == MaskMode::COUNTER) != m.counter)
        twin::Fault(api, "MaskMode::%s but the mask mode is %s: call %s first", mode == MaskMode::COUNTER ?
                    "COUNTER" : "NORMAL", m.counter ? "COUNTER" : "NORMAL",
                    mode == MaskMode::COUNTER ? "SetMaskCount()" : "SetMaskNorm()");
    if (len < 0) twin::Fault(api, "len %d is negative", len);
    if (mode == MaskMode::COUNTER) {
        m.hi = 0;
        m.lo = static_cast<uint64_t>(len);
    } else {
        twin::MaskFromCount(api, static_cast<uint64_t>(len), twin::kRepeat / static_cast<uint32_t>(sizeof(T)), m.hi,
                            m.lo);
    }
    m.valid = true;
}

// ---------------------------------------------------------------------------------------------------------------
// Level-0 forms of the binary, tensor-scalar and Duplicate APIs (dtype gates as their level-2 forms).
// ---------------------------------------------------------------------------------------------------------------

#define TWIN_BINARY_L0(NAME, OK, EXPR, ACC)                                                                           \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,               \
                     uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {             \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        twin::Binary0<T, isSetMask>(#NAME, dst, src0, src1, mask, 0, repeatTime, repeatParams, ACC,                   \
                                    twin::Elementwise2<T>([](auto a, auto b) { return EXPR; }));                      \
    }                                                                                                                 \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,               \
                     uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {               \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        twin::Binary0<T, isSetMask>(#NAME, dst, src0, src1, nullptr, mask, repeatTime, repeatParams, ACC,             \
                                    twin::Elementwise2<T>([](auto a, auto b) { return EXPR; }));                      \
    }

TWIN_BINARY_L0(Add, kAddSubOk, a + b, true)
TWIN_BINARY_L0(Sub, kAddSubOk, a - b, true)
TWIN_BINARY_L0(Mul, kMulOk, a * b, true)
TWIN_BINARY_L0(Div, kDivOk, twin::VDiv(a, b), false)
TWIN_BINARY_L0(Max, kMaxMinOk, twin::VMax(a, b), true)
TWIN_BINARY_L0(Min, kMaxMinOk, twin::VMin(a, b), true)
#undef TWIN_BINARY_L0

#define TWIN_SCALAR_L0(NAME, OK, EXPR)                                                                                \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask[],     \
                     const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                               \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        auto b = twin::Load(scalarValue);                                                                             \
        twin::Unary0<T, T, isSetMask>(#NAME, dst, src, mask, 0, repeatTime, repeatParams,                             \
                                      [b](T v) { auto a = twin::Load(v); return twin::Store<T>(EXPR); });             \
    }                                                                                                                 \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask,       \
                     const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                               \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        auto b = twin::Load(scalarValue);                                                                             \
        twin::Unary0<T, T, isSetMask>(#NAME, dst, src, nullptr, mask, repeatTime, repeatParams,                       \
                                      [b](T v) { auto a = twin::Load(v); return twin::Store<T>(EXPR); });             \
    }

TWIN_SCALAR_L0(Adds, kAddsMulsOk, a + b)
TWIN_SCALAR_L0(Muls, kAddsMulsOk, a * b)
TWIN_SCALAR_L0(Maxs, kMaxsMinsOk, twin::VMax(a, b))
TWIN_SCALAR_L0(Mins, kMaxsMinsOk, twin::VMin(a, b))
#undef TWIN_SCALAR_L0

template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
    static_assert(twin::kDuplicateOk<T> && sizeof(T) >= 2, "Duplicate (level 0): element type not supported on "
                                                           "this NpuArch");
    const char* api = "Duplicate";
    twin::L0Geometry g = twin::ResolveL0(api, isSetMask, nullptr, mask, repeatTime, sizeof(T));
    T v = scalarValue;
    twin::L0Elementwise<T, T, 0>(api, g, twin::L0Op("dst", dst, dstBlockStride, dstRepeatStride), {}, false,
                                 [v](const T*, uint64_t, uint32_t) { return v; });
}

template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask[], const uint8_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
    static_assert(twin::kDuplicateOk<T> && sizeof(T) >= 2, "Duplicate (level 0): element type not supported on "
                                                           "this NpuArch");
    const char* api = "Duplicate";
    twin::L0Geometry g = twin::ResolveL0(api, isSetMask, mask, 0, repeatTime, sizeof(T));
    T v = scalarValue;
    twin::L0Elementwise<T, T, 0>(api, g, twin::L0Op("dst", dst, dstBlockStride, dstRepeatStride), {}, false,
                                 [v](const T*, uint64_t, uint32_t) { return v; });
}

}  // namespace AscendC
