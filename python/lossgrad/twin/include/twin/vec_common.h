// Shared machinery for the vector (PIPE_V) APIs: operand checks, overlap rules, repeat accounting and the
// elementwise drivers every level-2 API is built on.
#pragma once

#include <vector>

#include "pipe.h"

namespace AscendC {

struct BinaryRepeatParams {
    BinaryRepeatParams() {}
    BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn, const uint8_t src1BlkStrideIn,
                       const uint8_t dstRepStrideIn, const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint32_t blockNumber = 8;
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct UnaryRepeatParams {
    UnaryRepeatParams() {}
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                      const uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}
    uint32_t blockNumber = 8;
    uint16_t dstBlkStride = 1;
    uint16_t srcBlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t srcRepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

constexpr uint64_t MASK_PLACEHOLDER = 0;

}  // namespace AscendC

namespace twin {

template <typename... Ts> constexpr bool kAlwaysFalse = false;

// Saturation mode (310P and Atlas 910 support no other: CANN runtime aclrtFloatOverflowMode / set_device_sat_mode):
// a computed Inf becomes +-MAX of the dtype, a NaN becomes 0. Documented for half and bfloat16 results (asc-devkit
// docs/zh SetCtrlSpr(ISASI).md CTRL[48]: the bit covers half/bfloat16 arithmetic and conversions; ReduceDataBlock.md's
// half example); for float32 the sources disagree (the runtime docs name no dtype, CTRL[48] excludes float and
// ReduceDataBlock.md says float supports only the non-saturating mode), so a float32 Inf/NaN result is the open
// question Q_FLOAT32_SATURATION (docs/twin.md). Data that is only moved (DataCopy, Duplicate, Select, Brcb, ...)
// keeps its Inf/NaN.
template <typename T> inline T Saturate(T v) {
    if constexpr (kSaturation && (std::is_same<T, float>::value || std::is_same<T, half>::value ||
                                  std::is_same<T, bfloat16_t>::value)) {
        const double d = ToDouble(v);
        if (!std::isnan(d) && !std::isinf(d)) return v;
        if constexpr (std::is_same<T, float>::value) {
            if (Alternative(Q_FLOAT32_SATURATION, "a float32 result is Inf or NaN in saturation mode, where public "
                                                  "sources do not establish whether float32 saturates"))
                return v;
        }
        if (std::isnan(d)) return FromDouble<T>(0.0);
        const double mx = std::is_same<T, float>::value ? kFloat.maxFinite
                          : std::is_same<T, half>::value ? kHalf.maxFinite : kBf16.maxFinite;
        return FromDouble<T>(d > 0 ? mx : -mx);
    }
    return v;
}

inline uint64_t RepeatsFor(uint64_t count, uint32_t elemBytes) {
    return (count * elemBytes + kRepeat - 1) / kRepeat;
}

inline void RequireCount(const char* api, int64_t count) {
    if (count < 0) Fault(api, "count %lld is negative", (long long)count);
    if (count == 0 && kArch == 3510)
        Fault(api, "count 0: a zero-length call is not guaranteed to be a no-op on NpuArch 3510");
}

// Level-2 APIs run in counter mode: they set the mask internally and end with ResetMask + SetMaskNorm, so any mask
// the kernel set for later isSetMask=false calls is gone afterwards.
inline void Level2MaskReset(const char* api) {
    VectorMaskState& m = Core().vmask;
    m.counter = false;
    m.hi = m.lo = ~0ull;
    m.valid = false;
    m.resetBy = api;
}

// The element count of a level-2 call made with isSetMask=false: the kernel's own counter-mode mask.
inline int64_t CounterMaskCount(const char* api) {
    const VectorMaskState& m = Core().vmask;
    if (!m.counter)
        Fault(api, "isSetMask=false on a level-2 call uses the counter-mode mask: call SetMaskCount() and "
                   "SetVectorMask<T, MaskMode::COUNTER>(count) first (the mask mode is NORMAL)");
    if (!m.valid)
        Fault(api, "isSetMask=false but the mask register was reset by %s after the last SetVectorMask",
              m.resetBy);
    if (m.lo > 0x7FFFFFFFull) Fault(api, "counter-mode mask %llu exceeds the int32 count range",
                                    (unsigned long long)m.lo);
    return static_cast<int64_t>(m.lo);
}

// Level-2 operands must coincide exactly with dst or not overlap it at all.
inline void RequireNoPartialOverlap(const char* api, const char* operand, uint32_t srcAddr, uint64_t srcLen,
                                    uint32_t dstAddr, uint64_t dstLen) {
    bool overlap = srcAddr < dstAddr + dstLen && dstAddr < srcAddr + srcLen;
    if (overlap && srcAddr != dstAddr)
        Fault(api, "%s partially overlaps dst (src UB 0x%x, dst UB 0x%x): operands must coincide or be disjoint",
              operand, srcAddr, dstAddr);
}

// One read operand of an elementwise API: checked, then copied out (so in-place calls see the old values).
template <typename T>
inline std::vector<T> ReadOperand(const char* api, const char* name, const AscendC::LocalTensor<T>& t, uint64_t n,
                                  uint32_t dstAddr, uint64_t dstLen) {
    RequireOperand(api, name, t.TwinRef(), n * sizeof(T));
    RequireNoPartialOverlap(api, name, t.TwinRef().addr, n * sizeof(T), dstAddr, dstLen);
    UbRead(api, name, P_V, t.TwinRef().addr, static_cast<uint32_t>(n * sizeof(T)));
    std::vector<T> v(n);
    std::memcpy(v.data(), UbPtr<T>(t.TwinRef().addr), n * sizeof(T));
    return v;
}

template <typename T>
inline T* WriteOperand(const char* api, const AscendC::LocalTensor<T>& t, uint64_t n) {
    UbWrite(api, P_V, t.TwinRef().addr, static_cast<uint32_t>(n * sizeof(T)));
    return UbPtr<T>(t.TwinRef().addr);
}

// dst[i] = f(src[i]) for i < count (level-2, counter mode).
template <typename TD, typename TS, typename F>
inline void Unary2(const char* api, const AscendC::LocalTensor<TD>& dst, const AscendC::LocalTensor<TS>& src,
                   int64_t count, F f, bool setsMask = true) {
    RequireCount(api, count);
    if (setsMask) Level2MaskReset(api);
    if (count == 0) return;
    uint64_t n = static_cast<uint64_t>(count);
    RequireOperand(api, "dst", dst.TwinRef(), n * sizeof(TD));
    std::vector<TS> a = ReadOperand(api, "src", src, n, dst.TwinRef().addr, n * sizeof(TD));
    TD* out = WriteOperand(api, dst, n);
    for (uint64_t i = 0; i < n; ++i) out[i] = Saturate(f(a[i]));
    NextOp(P_V);
    CountApi(api, RepeatsFor(n, static_cast<uint32_t>(sizeof(TD) > sizeof(TS) ? sizeof(TD) : sizeof(TS))), n,
             WiderCode<TD, TS>());
}

// dst[i] = f(src0[i], src1[i]) for i < count.
template <typename TD, typename TS, typename F>
inline void Binary2(const char* api, const AscendC::LocalTensor<TD>& dst, const AscendC::LocalTensor<TS>& src0,
                    const AscendC::LocalTensor<TS>& src1, int64_t count, F f) {
    RequireCount(api, count);
    Level2MaskReset(api);
    if (count == 0) return;
    uint64_t n = static_cast<uint64_t>(count);
    RequireOperand(api, "dst", dst.TwinRef(), n * sizeof(TD));
    std::vector<TS> a = ReadOperand(api, "src0", src0, n, dst.TwinRef().addr, n * sizeof(TD));
    std::vector<TS> b = ReadOperand(api, "src1", src1, n, dst.TwinRef().addr, n * sizeof(TD));
    TD* out = WriteOperand(api, dst, n);
    for (uint64_t i = 0; i < n; ++i) out[i] = Saturate(f(a[i], b[i]));
    NextOp(P_V);
    CountApi(api, RepeatsFor(n, static_cast<uint32_t>(sizeof(TD) > sizeof(TS) ? sizeof(TD) : sizeof(TS))), n,
             WiderCode<TD, TS>());
}

// dst[i] = f() for i < count (Duplicate).
template <typename TD, typename F>
inline void Fill2(const char* api, const AscendC::LocalTensor<TD>& dst, int64_t count, F f) {
    RequireCount(api, count);
    Level2MaskReset(api);
    if (count == 0) return;
    uint64_t n = static_cast<uint64_t>(count);
    RequireOperand(api, "dst", dst.TwinRef(), n * sizeof(TD));
    TD* out = WriteOperand(api, dst, n);
    for (uint64_t i = 0; i < n; ++i) out[i] = f();
    NextOp(P_V);
    CountApi(api, RepeatsFor(n, sizeof(TD)), n, DtypeCode<TD>());
}

}  // namespace twin
