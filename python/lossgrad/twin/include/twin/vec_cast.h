// Cast (level 2 and level 0) with RoundMode, and the scalar Cast<T, U, roundMode> helper.
//
// Legality follows the per-architecture tables of VEC/类型转换/Cast.md (ascendc_api.md §2.8): the (src, dst) dtype
// pair is checked at compile time (a pair the architecture lacks does not compile); the round mode is a run-time
// argument in the real signature, so a mode the pair does not support is a run-time fault naming pair and mode.
// Not modelled (compile error): int4b_t, fp8/hifloat8/fp4, double and complex pairs, and int32_t -> half (which
// needs SetDeqScale).
//
// Semantics: RINT = round half to even, ROUND = half away from zero, FLOOR/CEIL/TRUNC directed, ODD = round to odd,
// NONE = exact when the conversion is exact, else RINT. float -> float with a mode rounds to an integral value.
// Float overflow follows IEEE for the mode (RINT/ROUND/CEIL(+)/FLOOR(-) -> Inf, TRUNC/ODD -> largest finite);
// integer results saturate and NaN -> 0; integer narrowing saturates.
#pragma once

#include "vec_level0.h"

namespace AscendC {

enum class RoundMode : uint8_t {
    CAST_NONE = 0,
    CAST_RINT,
    CAST_FLOOR,
    CAST_CEIL,
    CAST_ROUND,
    CAST_TRUNC,
    CAST_ODD,
#if __NPU_ARCH__ == 3510
    CAST_HYBRID,
    CAST_EVEN,
    CAST_ZERO,
#endif
    UNKNOWN = 0xFF,
};

}  // namespace AscendC

namespace twin {

// Legal round modes of a (src, dst) pair as a bit set over RoundMode values 0..6 (0 = pair not supported).
constexpr uint32_t kCNone = 1u << 0, kCRint = 1u << 1, kCFloor = 1u << 2, kCCeil = 1u << 3, kCRound = 1u << 4,
                   kCTrunc = 1u << 5, kCOdd = 1u << 6;
constexpr uint32_t kC5 = kCRint | kCFloor | kCCeil | kCRound | kCTrunc;
constexpr uint32_t kC4 = kCFloor | kCCeil | kCRound | kCTrunc;

template <typename S, typename D, typename S2, typename D2>
constexpr bool kPair = std::is_same<S, S2>::value && std::is_same<D, D2>::value;

template <typename S, typename D> constexpr uint32_t CastModes() {
    if (kArch == 2201) {  // Atlas A2/A3
        if (kPair<S, D, int8_t, half> || kPair<S, D, uint8_t, half>) return kCNone;
        if (kPair<S, D, int16_t, half>) return kC5 | kCNone;
        if (kPair<S, D, int16_t, float>) return kCNone;
        if (kPair<S, D, half, int8_t> || kPair<S, D, half, uint8_t>) return kC5 | kCNone;
        if (kPair<S, D, half, int16_t> || kPair<S, D, half, int32_t>) return kC5;
        if (kPair<S, D, half, float>) return kCNone;
        if (kPair<S, D, bfloat16_t, int32_t>) return kC5;
        if (kPair<S, D, bfloat16_t, float>) return kCNone;
        if (kPair<S, D, int32_t, int16_t> || kPair<S, D, int32_t, int64_t>) return kCNone;
        if (kPair<S, D, int32_t, float>) return kC5 | kCNone;
        if (kPair<S, D, float, int16_t> || kPair<S, D, float, int32_t> || kPair<S, D, float, int64_t>) return kC5;
        if (kPair<S, D, float, half>) return kC5 | kCOdd | kCNone;
        if (kPair<S, D, float, bfloat16_t> || kPair<S, D, float, float>) return kC5;
        if (kPair<S, D, int64_t, int32_t>) return kCNone;
        if (kPair<S, D, int64_t, float>) return kC5;
        return 0;
    }
    if (kArch == 3510) {  // Ascend 950
        if (kPair<S, D, int8_t, int16_t> || kPair<S, D, int8_t, half> || kPair<S, D, int8_t, int32_t>) return kCNone;
        if (kPair<S, D, uint8_t, uint16_t> || kPair<S, D, uint8_t, half> || kPair<S, D, uint8_t, uint32_t>)
            return kCNone;
        if (kPair<S, D, int16_t, uint8_t> || kPair<S, D, int16_t, int32_t> || kPair<S, D, int16_t, uint32_t> ||
            kPair<S, D, int16_t, float>)
            return kCNone;
        if (kPair<S, D, int16_t, half>) return kC5;
        if (kPair<S, D, uint16_t, uint8_t> || kPair<S, D, uint16_t, uint32_t>) return kCNone;
        if (kPair<S, D, half, int8_t> || kPair<S, D, half, uint8_t> || kPair<S, D, half, int16_t> ||
            kPair<S, D, half, bfloat16_t> || kPair<S, D, half, int32_t>)
            return kC5;
        if (kPair<S, D, half, float>) return kCNone;
        if (kPair<S, D, bfloat16_t, half> || kPair<S, D, bfloat16_t, int32_t>) return kC5;
        if (kPair<S, D, bfloat16_t, float>) return kCNone;
        if (kPair<S, D, int32_t, uint8_t> || kPair<S, D, int32_t, int16_t> || kPair<S, D, int32_t, uint16_t> ||
            kPair<S, D, int32_t, int64_t>)
            return kCNone;
        if (kPair<S, D, int32_t, float>) return kC5;
        if (kPair<S, D, uint32_t, uint8_t> || kPair<S, D, uint32_t, int16_t> || kPair<S, D, uint32_t, uint16_t>)
            return kCNone;
        if (kPair<S, D, float, int16_t> || kPair<S, D, float, bfloat16_t> || kPair<S, D, float, int32_t> ||
            kPair<S, D, float, float> || kPair<S, D, float, int64_t>)
            return kC5;
        if (kPair<S, D, float, half>) return kC5 | kCOdd | kCNone;
        if (kPair<S, D, int64_t, int32_t>) return kCNone;
        if (kPair<S, D, int64_t, float>) return kC5;
        return 0;
    }
    if (kArch == 2002) {  // Atlas inference (310P AI Core)
        if (kPair<S, D, int8_t, half> || kPair<S, D, uint8_t, half> || kPair<S, D, int16_t, half>) return kCNone;
        if (kPair<S, D, half, int8_t> || kPair<S, D, half, uint8_t>) return kC4 | kCNone;
        if (kPair<S, D, half, int16_t>) return kCRint;
        if (kPair<S, D, half, int32_t>) return kC5;
        if (kPair<S, D, half, float>) return kCNone;
        if (kPair<S, D, int32_t, int16_t> || kPair<S, D, int32_t, float>) return kCNone;
        if (kPair<S, D, float, half>) return kCOdd | kCNone;
        if (kPair<S, D, float, int64_t>) return kC5;
        return 0;
    }
    // 1001: Atlas training (910)
    if (kPair<S, D, int8_t, half> || kPair<S, D, uint8_t, half> || kPair<S, D, int16_t, half>) return kCNone;
    if (kPair<S, D, half, int8_t> || kPair<S, D, half, uint8_t>) return kC4 | kCNone;
    if (kPair<S, D, half, int32_t>) return kC5;
    if (kPair<S, D, half, float>) return kCNone;
    if (kPair<S, D, int32_t, float>) return kCNone;
    if (kPair<S, D, float, half>) return kCOdd | kCNone;
    if (kPair<S, D, float, int64_t>) return kC5;
    return 0;
}

template <typename T> constexpr const char* TypeName() {
    if (std::is_same<T, half>::value) return "half";
    if (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
    if (std::is_same<T, float>::value) return "float";
    if (std::is_same<T, double>::value) return "double";
    if (std::is_same<T, int8_t>::value) return "int8_t";
    if (std::is_same<T, uint8_t>::value) return "uint8_t";
    if (std::is_same<T, int16_t>::value) return "int16_t";
    if (std::is_same<T, uint16_t>::value) return "uint16_t";
    if (std::is_same<T, int32_t>::value) return "int32_t";
    if (std::is_same<T, uint32_t>::value) return "uint32_t";
    if (std::is_same<T, int64_t>::value) return "int64_t";
    if (std::is_same<T, uint64_t>::value) return "uint64_t";
    return "?";
}

inline const char* RoundModeName(AscendC::RoundMode m) {
    static const char* names[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC",
                                  "CAST_ODD", "CAST_HYBRID", "CAST_EVEN", "CAST_ZERO"};
    uint8_t v = static_cast<uint8_t>(m);
    return v < 10 ? names[v] : "UNKNOWN";
}

inline std::string ModeList(uint32_t modes) {
    std::string s;
    for (uint8_t v = 0; v < 7; ++v)
        if (modes & (1u << v)) {
            if (!s.empty()) s += ", ";
            s += RoundModeName(static_cast<AscendC::RoundMode>(v));
        }
    return s;
}

inline Rounding ToRounding(AscendC::RoundMode m) {
    switch (m) {
        case AscendC::RoundMode::CAST_FLOOR: return Rounding::FLOOR;
        case AscendC::RoundMode::CAST_CEIL: return Rounding::CEIL;
        case AscendC::RoundMode::CAST_ROUND: return Rounding::ROUND;
        case AscendC::RoundMode::CAST_TRUNC: return Rounding::TRUNC;
        case AscendC::RoundMode::CAST_ODD: return Rounding::ODD;
        default: return Rounding::RINT;  // CAST_RINT, and CAST_NONE on a lossy conversion
    }
}

template <typename S, typename D> inline void RequireCastMode(const char* api, AscendC::RoundMode m) {
    constexpr uint32_t modes = CastModes<S, D>();
    uint8_t v = static_cast<uint8_t>(m);
    if (v > 6 || (modes & (1u << v)) == 0)
        Fault(api, "round mode %s is not legal for %s -> %s on NpuArch %d (legal: %s)", RoundModeName(m),
              TypeName<S>(), TypeName<D>(), kArch, ModeList(modes).c_str());
}

// int64 -> float-like: the value may not be exact in double, so round from the integer itself.
inline double RoundInt64(int64_t x, const FloatFormat& fmt, Rounding m) {
    const uint64_t mag = x < 0 ? static_cast<uint64_t>(-(x + 1)) + 1 : static_cast<uint64_t>(x);
    if (mag <= (1ull << 53)) return RoundToFormat(static_cast<double>(x), fmt, m);
    int bits = 64 - __builtin_clzll(mag);
    int shift = bits - fmt.precision;  // > 0 here: fmt.precision <= 24
    uint64_t lo = (mag >> shift) << shift, rem = mag - lo, quantum = 1ull << shift, halfq = quantum >> 1;
    bool neg = x < 0;
    bool up;  // move away from zero by one quantum?
    switch (m) {
        case Rounding::FLOOR: up = neg && rem != 0; break;
        case Rounding::CEIL: up = !neg && rem != 0; break;
        case Rounding::TRUNC: up = false; break;
        case Rounding::ROUND: up = rem >= halfq; break;
        case Rounding::ODD: up = rem != 0 && ((lo >> shift) & 1u) == 0; break;
        default: up = rem > halfq || (rem == halfq && ((lo >> shift) & 1u) != 0); break;
    }
    double r = static_cast<double>(lo) + (up ? static_cast<double>(quantum) : 0.0);  // exact: few significant bits
    return RoundToFormat(neg ? -r : r, fmt, Rounding::TRUNC);  // on the grid already; handles range
}

inline double RoundIntegral(double v, Rounding m) {
    switch (m) {
        case Rounding::FLOOR: return std::floor(v);
        case Rounding::CEIL: return std::ceil(v);
        case Rounding::TRUNC: return std::trunc(v);
        case Rounding::ROUND: return std::round(v);
        default: return std::nearbyint(v);
    }
}

template <typename D, typename S> inline D CastValue(S x, Rounding m) {
    if constexpr (std::is_same<S, int64_t>::value && IsFloatLike<D>::value) {
        const FloatFormat& f = std::is_same<D, half>::value ? kHalf : std::is_same<D, bfloat16_t>::value ? kBf16
                                                                                                          : kFloat;
        return FromDouble<D>(RoundInt64(x, f, m), Rounding::TRUNC);
    } else if constexpr (std::is_same<S, D>::value && IsFloatLike<D>::value) {
        return FromDouble<D>(RoundIntegral(ToDouble(x), m), Rounding::RINT);
    } else {
        return FromDouble<D>(ToDouble(x), m);
    }
}

template <typename D, typename S> inline void CheckCastPair() {
    static_assert(CastModes<S, D>() != 0 || sizeof(S) == 0,
                  "Cast: this (src, dst) dtype pair is not supported on this NpuArch (ascendc_api.md §2.8)");
}

// Cast between element sizes cannot work in place: a smaller-to-larger conversion overwrites unread source.
inline void RequireCastOverlap(const char* api, const TensorRef& d, uint64_t dBytes, const TensorRef& s,
                               uint64_t sBytes, bool sameSize) {
    bool overlap = s.addr < d.addr + dBytes && d.addr < s.addr + sBytes;
    if (overlap && !(sameSize && s.addr == d.addr))
        Fault(api, "src (UB 0x%x) and dst (UB 0x%x) overlap%s", s.addr, d.addr,
              sameSize ? " without coinciding" : ": a Cast between element sizes cannot run in place");
}

}  // namespace twin

namespace AscendC {

template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint32_t count) {
    twin::CheckCastPair<T, U>();
    const char* api = "Cast";
    twin::RequireCastMode<U, T>(api, roundMode);
    if (count > 0) {
        twin::RequireLive(api, "dst", dst.TwinRef());
        twin::RequireLive(api, "src", src.TwinRef());
        twin::RequireCastOverlap(api, dst.TwinRef(), uint64_t(count) * sizeof(T), src.TwinRef(),
                                 uint64_t(count) * sizeof(U), sizeof(T) == sizeof(U));
    }
    twin::Rounding m = twin::ToRounding(roundMode);
    twin::Unary2(api, dst, src, static_cast<int64_t>(count), [m](U v) { return twin::CastValue<T>(v, m); });
}

template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    twin::CheckCastPair<T, U>();
    twin::RequireCastMode<U, T>("Cast", roundMode);
    twin::Rounding m = twin::ToRounding(roundMode);
    twin::Unary0<T, U, isSetMask>("Cast", dst, src, mask, 0, repeatTime, repeatParams,
                                  [m](U v) { return twin::CastValue<T>(v, m); });
}

template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    twin::CheckCastPair<T, U>();
    twin::RequireCastMode<U, T>("Cast", roundMode);
    twin::Rounding m = twin::ToRounding(roundMode);
    twin::Unary0<T, U, isSetMask>("Cast", dst, src, nullptr, mask, repeatTime, repeatParams,
                                  [m](U v) { return twin::CastValue<T>(v, m); });
}

// Scalar conversion (标量计算/Cast): float -> half (CAST_ODD) and float -> int32_t (CAST_ROUND/CEIL/FLOOR/RINT),
// on A2/A3, 310P and 950.
template <typename T, typename U, RoundMode roundMode> inline U Cast(T valueIn) {
    static_assert(twin::kArch != 1001 || sizeof(T) == 0, "scalar Cast<T, U, roundMode> is not available on NpuArch 1001");
    static_assert((std::is_same<T, float>::value && std::is_same<U, half>::value &&
                   roundMode == RoundMode::CAST_ODD) ||
                      (std::is_same<T, float>::value && std::is_same<U, int32_t>::value &&
                       (roundMode == RoundMode::CAST_ROUND || roundMode == RoundMode::CAST_CEIL ||
                        roundMode == RoundMode::CAST_FLOOR || roundMode == RoundMode::CAST_RINT)),
                  "scalar Cast: supported are float->half with CAST_ODD and float->int32_t with "
                  "CAST_ROUND/CAST_CEIL/CAST_FLOOR/CAST_RINT");
    return twin::FromDouble<U>(static_cast<double>(valueIn), twin::ToRounding(roundMode));
}

}  // namespace AscendC
