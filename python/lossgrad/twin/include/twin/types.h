// Twin of the Ascend C scalar types: half (IEEE binary16) and bfloat16_t, plus exact rounding helpers.
//
// The conversions and operators mirror CANN's CPU-debug types (asc-tools cpudebug/include/kernel_fp16.h and
// kernel_bf16.h), so the same overload resolution applies (e.g. `h * 2.0f` is ambiguous there and here):
// - half: implicit constructors from float, double, int8/uint8/int16/uint16/int32/uint32 (round to nearest even),
//   implicit conversions to float/double and those integers, + - * / (and the compound forms, ++/--, unary -),
//   comparisons, && and ||. Where the CPU-debug emulation and the device's native conversion disagree (a value
//   outside half's range, Inf/NaN into half, a non-integral half into an integer: the emulation saturates and
//   rounds to nearest, the compiler's conversion gives Inf and truncates) the twin faults.
// - bfloat16_t: built from a float (and so from any arithmetic value, through float), with the rounding of the
//   devkit's scalar Cast (impl/basic_api/kernel_scalar_convert.h: round to nearest even on the bits, NaN -> 0x7FFF),
//   on NpuArch 2201/3510 only (the devkit has no bf16 scalar conversion elsewhere). No arithmetic and no conversion
//   back to float: the device compiler rejects scalar bf16 arithmetic and casts (production kernels route them
//   through AscendC::Cast/ToFloat or vector Casts), so the twin keeps only AscendC::Cast/ToFloat for bf16 -> float.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "config.h"

namespace twin {

[[noreturn]] inline void Fault(const char* api, const char* fmt, ...);  // core.h

// Rounding modes used by every conversion in the twin (mirrors AscendC::RoundMode semantics).
enum class Rounding : uint8_t { RINT, FLOOR, CEIL, ROUND, TRUNC, ODD };

// A binary floating-point format described by its precision (incl. the implicit bit), minimum normal exponent and
// largest finite value. Every float/half/bf16 value is exactly representable in double, so rounding is done exactly
// in double arithmetic and then encoded.
struct FloatFormat {
    int precision;       // significand bits including the implicit one
    int emin;            // exponent of the smallest normal number
    double maxFinite;
};
inline constexpr FloatFormat kHalf{11, -14, 65504.0};
inline constexpr FloatFormat kBf16{8, -126, 3.3895313892515355e38};
inline constexpr FloatFormat kFloat{24, -126, 3.4028234663852886e38};

// Round x (exact double) to the grid of `fmt` with mode `m`. Overflow follows IEEE for the direction (RINT/ROUND
// overflow to infinity, TRUNC/ODD saturate to the largest finite, FLOOR/CEIL depend on the sign). NaN stays NaN.
inline double RoundToFormat(double x, const FloatFormat& fmt, Rounding m) {
    if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
    int e;
    std::frexp(std::fabs(x), &e);        // |x| = f * 2^e, f in [0.5, 1)
    int exp = e - 1;                     // |x| in [2^exp, 2^(exp+1))
    if (exp < fmt.emin) exp = fmt.emin;  // subnormal grid
    double quantum = std::ldexp(1.0, exp - fmt.precision + 1);
    double scaled = x / quantum;         // exact (power-of-two scaling) unless it underflows, which cannot happen here
    double lo = std::floor(scaled), hi = std::ceil(scaled);
    double pick;
    if (lo == hi) {
        pick = lo;
    } else {
        switch (m) {
            case Rounding::FLOOR: pick = lo; break;
            case Rounding::CEIL: pick = hi; break;
            case Rounding::TRUNC: pick = x > 0 ? lo : hi; break;
            case Rounding::ODD: pick = std::fmod(lo, 2.0) != 0.0 ? lo : hi; break;
            case Rounding::ROUND: {
                double d = scaled - lo;
                pick = d > 0.5 ? hi : d < 0.5 ? lo : (x > 0 ? hi : lo);
                break;
            }
            case Rounding::RINT:
            default: {
                double d = scaled - lo;
                pick = d > 0.5 ? hi : d < 0.5 ? lo : (std::fmod(lo, 2.0) == 0.0 ? lo : hi);
                break;
            }
        }
    }
    double r = pick * quantum;
    if (std::fabs(r) > fmt.maxFinite) {
        bool neg = r < 0;
        switch (m) {
            case Rounding::TRUNC:
            case Rounding::ODD: return neg ? -fmt.maxFinite : fmt.maxFinite;
            case Rounding::FLOOR: return neg ? -std::numeric_limits<double>::infinity() : fmt.maxFinite;
            case Rounding::CEIL: return neg ? -fmt.maxFinite : std::numeric_limits<double>::infinity();
            default: return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
        }
    }
    return r;
}

// Encode an exactly representable value (result of RoundToFormat) as binary16 / bfloat16 bits.
inline uint16_t EncodeHalf(double v) {
    if (std::isnan(v)) return std::signbit(v) ? 0xFE00 : 0x7E00;
    uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    double a = std::fabs(v);
    if (std::isinf(a)) return sign | 0x7C00;
    if (a == 0.0) return sign;
    int e;
    std::frexp(a, &e);
    int exp = e - 1;
    if (exp < -14) {  // subnormal: a = m * 2^-24
        return sign | static_cast<uint16_t>(std::ldexp(a, 24));
    }
    uint32_t mant = static_cast<uint32_t>(std::ldexp(a, -exp) * 1024.0) - 1024u;
    return sign | static_cast<uint16_t>(((exp + 15) << 10) | mant);
}

inline double DecodeHalf(uint16_t h) {
    int exp = (h >> 10) & 0x1F;
    int mant = h & 0x3FF;
    double v;
    if (exp == 0x1F) v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else if (exp == 0) v = std::ldexp(static_cast<double>(mant), -24);
    else v = std::ldexp(static_cast<double>(mant + 1024), exp - 25);
    return (h & 0x8000) ? -v : v;
}

inline uint16_t EncodeBf16(double v) {
    float f = static_cast<float>(v);  // exact: v is on the bf16 grid
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x0040);
    return static_cast<uint16_t>(bits >> 16);
}

inline float DecodeBf16(uint16_t b) {
    uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

struct HalfBits {};
struct Bf16Bits {};

}  // namespace twin

namespace twin {

// half from an exact double value: round to nearest even; out-of-range and non-finite values fault (CPU debug
// saturates them to +-65504, the device's conversion gives Inf / NaN).
inline uint16_t HalfFromValue(const char* api, double v) {
    double r = RoundToFormat(v, kHalf, Rounding::RINT);
    if (!std::isfinite(r))
        Fault(api, "%g does not fit in half (CPU debug saturates to +-65504, the device converts to Inf/NaN): "
                   "implementation-defined, clamp it first", v);
    return EncodeHalf(r);
}

// half -> integer: exact for integral values in range; otherwise CPU debug (round to nearest, saturate) and the
// compiler's conversion (truncate) disagree.
template <typename I> inline I HalfToInt(uint16_t bits) {
    double v = DecodeHalf(bits);
    if (!(v == std::trunc(v)) || v < static_cast<double>(std::numeric_limits<I>::lowest()) ||
        v > static_cast<double>(std::numeric_limits<I>::max()))
        Fault("half", "converting %g to an integer is implementation-defined (CPU debug rounds to nearest and "
                      "saturates, the device truncates): Cast explicitly", v);
    return static_cast<I>(v);
}

}  // namespace twin

// IEEE binary16 with the CPU-debug type's interface (see the file comment).
struct half {
    uint16_t bits = 0;
    half() = default;
    constexpr half(uint16_t b, twin::HalfBits) : bits(b) {}
    half(const float& f) : bits(twin::HalfFromValue("half(float)", f)) {}
    half(const double& d) : bits(twin::HalfFromValue("half(double)", d)) {}
    half(const int8_t& i) : bits(twin::HalfFromValue("half(int8_t)", i)) {}
    half(const uint8_t& i) : bits(twin::HalfFromValue("half(uint8_t)", i)) {}
    half(const int16_t& i) : bits(twin::HalfFromValue("half(int16_t)", i)) {}
    half(const uint16_t& i) : bits(twin::HalfFromValue("half(uint16_t)", i)) {}
    half(const int32_t& i) : bits(twin::HalfFromValue("half(int32_t)", i)) {}
    half(const uint32_t& i) : bits(twin::HalfFromValue("half(uint32_t)", i)) {}
    operator float() const { return static_cast<float>(twin::DecodeHalf(bits)); }
    operator double() const { return twin::DecodeHalf(bits); }
    operator int8_t() const { return twin::HalfToInt<int8_t>(bits); }
    operator uint8_t() const { return twin::HalfToInt<uint8_t>(bits); }
    operator int16_t() const { return twin::HalfToInt<int16_t>(bits); }
    operator uint16_t() const { return twin::HalfToInt<uint16_t>(bits); }
    operator int32_t() const { return twin::HalfToInt<int32_t>(bits); }
    operator uint32_t() const { return twin::HalfToInt<uint32_t>(bits); }
    float ToFloat() const { return static_cast<float>(twin::DecodeHalf(bits)); }
    double ToDouble() const { return twin::DecodeHalf(bits); }
    // Arithmetic: the exact result rounded once to half (round to nearest even).
    half operator+(const half o) const { return Op("half::operator+", V() + o.V()); }
    half operator-(const half o) const { return Op("half::operator-", V() - o.V()); }
    half operator*(const half o) const { return Op("half::operator*", V() * o.V()); }
    half operator/(const half o) const { return Op("half::operator/", V() / o.V()); }
    half operator-() const { return half(static_cast<uint16_t>(bits ^ 0x8000u), twin::HalfBits{}); }
    half operator+=(const half o) { return *this = *this + o; }
    half operator-=(const half o) { return *this = *this - o; }
    half operator*=(const half o) { return *this = *this * o; }
    half operator/=(const half o) { return *this = *this / o; }
    half operator++() { return *this = Op("half::operator++", V() + 1.0); }
    half operator++(int) { half old = *this; ++*this; return old; }
    half operator--() { return *this = Op("half::operator--", V() - 1.0); }
    half operator--(int) { half old = *this; --*this; return old; }
    bool operator&&(const half o) const { return bits != 0 && o.bits != 0; }
    bool operator||(const half o) const { return bits != 0 || o.bits != 0; }
    bool operator==(const half& o) const { return V() == o.V(); }
    bool operator!=(const half& o) const { return !(*this == o); }
    bool operator>(const half& o) const { return V() > o.V(); }
    bool operator>=(const half& o) const { return V() >= o.V(); }
    bool operator<(const half& o) const { return V() < o.V(); }
    bool operator<=(const half& o) const { return V() <= o.V(); }
    // Bitwise identity, for tests and containers.
    bool SameBits(half o) const { return bits == o.bits; }

private:
    double V() const { return twin::DecodeHalf(bits); }
    static half Op(const char* api, double exact) { return half(twin::HalfFromValue(api, exact), twin::HalfBits{}); }
};

namespace twin {
// float -> bfloat16 as the devkit's scalar Cast: round to nearest even on the bits (overflow -> Inf), NaN -> 0x7FFF.
inline uint16_t Bf16FromFloat(float f) {
    if (std::isnan(f)) return 0x7FFF;
    return EncodeBf16(RoundToFormat(f, kBf16, Rounding::RINT));
}
}  // namespace twin

// bfloat16: the upper half of an IEEE float (see the file comment for what it accepts).
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    constexpr bfloat16_t(uint16_t b, twin::Bf16Bits) : bits(b) {}
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
    bfloat16_t(const float& f) : bits(twin::Bf16FromFloat(f)) {}
#endif
    bool SameBits(bfloat16_t o) const { return bits == o.bits; }
};

static_assert(sizeof(half) == 2 && std::is_trivially_copyable<half>::value, "half layout");
static_assert(sizeof(bfloat16_t) == 2 && std::is_trivially_copyable<bfloat16_t>::value, "bfloat16_t layout");

namespace twin {

// Value access used inside the twin (never by kernels): every element type to/from double.
template <typename T> inline double ToDouble(T v) { return static_cast<double>(v); }
template <> inline double ToDouble<half>(half v) { return DecodeHalf(v.bits); }
template <> inline double ToDouble<bfloat16_t>(bfloat16_t v) { return DecodeBf16(v.bits); }

template <typename T> struct IsFloatLike : std::is_floating_point<T> {};
template <> struct IsFloatLike<half> : std::true_type {};
template <> struct IsFloatLike<bfloat16_t> : std::true_type {};

// Convert an exact double to T with rounding mode m; integers round then saturate (NaN -> 0).
template <typename T> inline T FromDouble(double v, Rounding m = Rounding::RINT) {
    if constexpr (std::is_same<T, half>::value) {
        return half(EncodeHalf(RoundToFormat(v, kHalf, m)), HalfBits{});
    } else if constexpr (std::is_same<T, bfloat16_t>::value) {
        return bfloat16_t(EncodeBf16(RoundToFormat(v, kBf16, m)), Bf16Bits{});
    } else if constexpr (std::is_same<T, float>::value) {
        return static_cast<float>(RoundToFormat(v, kFloat, m));
    } else if constexpr (std::is_same<T, double>::value) {
        return v;
    } else if constexpr (std::is_same<T, bool>::value) {
        return v != 0.0;
    } else {
        static_assert(std::is_integral<T>::value, "unsupported element type");
        if (std::isnan(v)) return T(0);
        double r;
        switch (m) {
            case Rounding::FLOOR: r = std::floor(v); break;
            case Rounding::CEIL: r = std::ceil(v); break;
            case Rounding::TRUNC: r = std::trunc(v); break;
            case Rounding::ROUND: r = std::round(v); break;
            default: r = std::nearbyint(v); break;  // default FP env: round-half-even
        }
        const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
        const double hi = static_cast<double>(std::numeric_limits<T>::max());
        if (r <= lo) return std::numeric_limits<T>::lowest();
        if (r >= hi) return std::numeric_limits<T>::max();
        return static_cast<T>(r);
    }
}

// Arithmetic helpers for the vector twin: float-like types compute in float (as the vector unit does for f16/f32),
// integers in their own type.
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<half> { using type = float; };
template <> struct ComputeType<bfloat16_t> { using type = float; };

template <typename T> inline typename ComputeType<T>::type Load(T v) {
    if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
        return static_cast<float>(ToDouble(v));
    } else {
        return v;
    }
}

// Store a computed value into T: f16/bf16 results are rounded half-to-even, as the vector unit does.
template <typename T, typename C> inline T Store(C v) {
    if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
        return FromDouble<T>(static_cast<double>(v), Rounding::RINT);
    } else {
        return static_cast<T>(v);
    }
}

}  // namespace twin
