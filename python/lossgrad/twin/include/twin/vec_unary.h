// Unary APIs (Abs, Exp, Ln, Sqrt, Rsqrt, Reciprocal, Relu) and LeakyRelu, level 2 and level 0.
// Dtype legality per architecture follows ascendc_api.md §2.6 and is a compile-time error.
//
// Numerics: every float-like result is the exact (double) value of the function rounded once to the element type,
// i.e. correctly rounded up to the accuracy of the C library in double. The device's transcendental units are not
// correctly rounded; kernels should be tested against a tolerance, never bit-exact against the twin.
#pragma once

#include <cmath>

#include "vec_level0.h"

namespace twin {

template <typename T> constexpr bool kAbsOk =
    kArch == 3510 ? kOneOf<T, int8_t, int16_t, half, int32_t, float, int64_t> : kOneOf<T, half, float>;
template <typename T> constexpr bool kTranscendentalOk = kOneOf<T, half, float>;  // Exp, Ln, Sqrt, Rsqrt, Reciprocal
template <typename T> constexpr bool kReluOk =
    kArch == 3510 ? kOneOf<T, half, int32_t, float, int64_t>
    : kArch == 1001 ? kOneOf<T, half>
                    : kOneOf<T, half, int32_t, float>;
template <typename T> constexpr bool kLeakyReluOk = kArch != 1001 && kOneOf<T, half, float>;

// Round an exact double result once to T (float by the hardware conversion, which rounds half-to-even).
template <typename T> inline T Round1(double v) {
    if constexpr (std::is_same<T, float>::value) return static_cast<float>(v);
    else return FromDouble<T>(v, Rounding::RINT);
}

template <typename T, typename F> inline T MathUnary(T x, F f) { return Round1<T>(f(ToDouble(x))); }

template <typename T> inline T VAbs(T x) {
    if constexpr (std::is_same<T, half>::value) return half(static_cast<uint16_t>(x.bits & 0x7FFF), HalfBits{});
    else if constexpr (std::is_floating_point<T>::value) return std::fabs(x);
    else return x < 0 ? (x == std::numeric_limits<T>::lowest() ? std::numeric_limits<T>::max() : static_cast<T>(-x))
                      : x;  // saturates: |INT_MIN| is not representable
}

// Relu: dst = src < 0 ? 0 : src (so NaN and -0 pass through unchanged).
template <typename T> inline T VRelu(T x) {
    if constexpr (IsFloatLike<T>::value) return ToDouble(x) < 0 ? FromDouble<T>(0.0) : x;
    else return x < 0 ? T(0) : x;
}

template <typename T> inline T VLeakyRelu(T x, T alpha) {
    double v = ToDouble(x);
    return v < 0 ? Round1<T>(v * ToDouble(alpha)) : x;
}

inline double FnExp(double v) { return std::exp(v); }
inline double FnLn(double v) { return std::log(v); }
inline double FnSqrt(double v) { return std::sqrt(v); }
inline double FnRsqrt(double v) { return 1.0 / std::sqrt(v); }
inline double FnReciprocal(double v) { return 1.0 / v; }

}  // namespace twin

namespace AscendC {

#define TWIN_UNARY(NAME, OK, FN)                                                                                      \
    template <typename T>                                                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {                    \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        twin::Unary2(#NAME, dst, src, count, [](T v) { return FN; });                                                 \
    }                                                                                                                 \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask[], const uint8_t repeatTime, \
                     const UnaryRepeatParams& repeatParams) {                                                         \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        twin::Unary0<T, T, isSetMask>(#NAME, dst, src, mask, 0, repeatTime, repeatParams, [](T v) { return FN; });    \
    }                                                                                                                 \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeatTime,   \
                     const UnaryRepeatParams& repeatParams) {                                                         \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        twin::Unary0<T, T, isSetMask>(#NAME, dst, src, nullptr, mask, repeatTime, repeatParams,                       \
                                      [](T v) { return FN; });                                                        \
    }

TWIN_UNARY(Abs, kAbsOk, twin::VAbs(v))
TWIN_UNARY(Exp, kTranscendentalOk, twin::MathUnary(v, twin::FnExp))
TWIN_UNARY(Ln, kTranscendentalOk, twin::MathUnary(v, twin::FnLn))
TWIN_UNARY(Sqrt, kTranscendentalOk, twin::MathUnary(v, twin::FnSqrt))
TWIN_UNARY(Rsqrt, kTranscendentalOk, twin::MathUnary(v, twin::FnRsqrt))
TWIN_UNARY(Reciprocal, kTranscendentalOk, twin::MathUnary(v, twin::FnReciprocal))
TWIN_UNARY(Relu, kReluOk, twin::VRelu(v))
#undef TWIN_UNARY

// LeakyRelu: dst = src < 0 ? src * scalarValue : src.
template <typename T, bool isSetMask = true>
inline void LeakyRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                      const int32_t& count) {
    static_assert(twin::kLeakyReluOk<T>, "LeakyRelu: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    T alpha = scalarValue;
    const int64_t n = isSetMask ? static_cast<int64_t>(count) : twin::CounterMaskCount("LeakyRelu");
    twin::Unary2("LeakyRelu", dst, src, n, [alpha](T v) { return twin::VLeakyRelu(v, alpha); }, isSetMask);
}

template <typename T, bool isSetMask = true>
inline void LeakyRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask[],
                      const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    static_assert(twin::kLeakyReluOk<T>, "LeakyRelu: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    T alpha = scalarValue;
    twin::Unary0<T, T, isSetMask>("LeakyRelu", dst, src, mask, 0, repeatTime, repeatParams,
                                  [alpha](T v) { return twin::VLeakyRelu(v, alpha); });
}

template <typename T, bool isSetMask = true>
inline void LeakyRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask,
                      const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    static_assert(twin::kLeakyReluOk<T>, "LeakyRelu: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    T alpha = scalarValue;
    twin::Unary0<T, T, isSetMask>("LeakyRelu", dst, src, nullptr, mask, repeatTime, repeatParams,
                                  [alpha](T v) { return twin::VLeakyRelu(v, alpha); });
}

}  // namespace AscendC
