// Bitwise And, Or, Not on 16-bit integer tensors (level 2 and level 0). Kernels use them on Compare bitmasks
// reinterpreted as uint16_t (ascendc_api.md §2.7).
#pragma once

#include "vec_level0.h"

namespace twin {
template <typename T> constexpr bool kLogicOk = kOneOf<T, int16_t, uint16_t>;
}  // namespace twin

namespace AscendC {

#define TWIN_LOGIC2(NAME, EXPR)                                                                                       \
    template <typename T>                                                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,               \
                     const int32_t& count) {                                                                          \
        static_assert(twin::kLogicOk<T>, #NAME ": element type not supported (int16_t/uint16_t only)");               \
        twin::Binary2(#NAME, dst, src0, src1, count, [](T a, T b) { return static_cast<T>(EXPR); });                  \
    }                                                                                                                 \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,               \
                     uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {             \
        static_assert(twin::kLogicOk<T>, #NAME ": element type not supported (int16_t/uint16_t only)");               \
        twin::Binary0<T, isSetMask>(#NAME, dst, src0, src1, mask, 0, repeatTime, repeatParams, false,                 \
                                    [](T a, T b) { return static_cast<T>(EXPR); });                                   \
    }                                                                                                                 \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,               \
                     uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {               \
        static_assert(twin::kLogicOk<T>, #NAME ": element type not supported (int16_t/uint16_t only)");               \
        twin::Binary0<T, isSetMask>(#NAME, dst, src0, src1, nullptr, mask, repeatTime, repeatParams, false,           \
                                    [](T a, T b) { return static_cast<T>(EXPR); });                                   \
    }

TWIN_LOGIC2(And, a & b)
TWIN_LOGIC2(Or, a | b)
#undef TWIN_LOGIC2

template <typename T> inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(twin::kLogicOk<T>, "Not: element type not supported (int16_t/uint16_t only)");
    twin::Unary2("Not", dst, src, count, [](T a) { return static_cast<T>(~a); });
}

template <typename T, bool isSetMask = true>
inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask[], const uint8_t repeatTime,
                const UnaryRepeatParams& repeatParams) {
    static_assert(twin::kLogicOk<T>, "Not: element type not supported (int16_t/uint16_t only)");
    twin::Unary0<T, T, isSetMask>("Not", dst, src, mask, 0, repeatTime, repeatParams,
                                  [](T a) { return static_cast<T>(~a); });
}

template <typename T, bool isSetMask = true>
inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeatTime,
                const UnaryRepeatParams& repeatParams) {
    static_assert(twin::kLogicOk<T>, "Not: element type not supported (int16_t/uint16_t only)");
    twin::Unary0<T, T, isSetMask>("Not", dst, src, nullptr, mask, repeatTime, repeatParams,
                                  [](T a) { return static_cast<T>(~a); });
}

}  // namespace AscendC
