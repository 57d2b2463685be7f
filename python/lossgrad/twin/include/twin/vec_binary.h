// Level-2 binary (Add, Sub, Mul, Div, Max, Min), tensor-scalar (Adds, Muls, Maxs, Mins) and Duplicate.
// Dtype legality per architecture follows ../shared/reference/ascendc_api.md §2.6 and is a compile-time error.
#pragma once

#include <cmath>

#include "vec_common.h"

namespace twin {

template <typename T, typename... Ts> constexpr bool kOneOf = (std::is_same<T, Ts>::value || ...);

// Dtype tables (§2.6). 3510 (Ascend 950) is the superset that includes bf16.
template <typename T> constexpr bool kAddSubOk =
    kArch == 3510 ? kOneOf<T, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                           uint64_t>
    : kArch == 1001 ? kOneOf<T, half, int32_t, float>
                    : kOneOf<T, int16_t, half, int32_t, float>;
template <typename T> constexpr bool kMulOk =
    kArch == 3510 ? kOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t>
    : kArch == 1001 ? kOneOf<T, half, int32_t, float>
                    : kOneOf<T, int16_t, half, int32_t, float>;
template <typename T> constexpr bool kDivOk =
    kArch == 3510 ? kOneOf<T, int16_t, uint16_t, half, int32_t, uint32_t, float, int64_t, uint64_t>
                  : kOneOf<T, half, float>;
template <typename T> constexpr bool kMaxMinOk =
    kArch == 3510 ? kOneOf<T, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                           uint64_t>
    : kArch == 1001 ? kOneOf<T, half, int32_t, float>
                    : kOneOf<T, int16_t, half, int32_t, float>;
template <typename T> constexpr bool kAddsMulsOk =
    kArch == 3510 ? kOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t>
    : kArch == 1001 ? kOneOf<T, half, float>
                    : kOneOf<T, int16_t, half, int32_t, float>;
template <typename T> constexpr bool kMaxsMinsOk =
    kArch == 3510 ? kOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t, uint64_t>
    : kArch == 1001 ? false
                    : kOneOf<T, int16_t, half, int32_t, float>;
template <typename T> constexpr bool kDuplicateOk =
    kArch == 3510 ? kOneOf<T, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                           uint64_t>
                  : kOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>;

// Max/Min with exactly one NaN operand: whether the vector unit returns NaN or the other operand is not documented
// (the Max/Min/Maxs/Mins docs are silent; hicann/ops-nn arch35 kernels disagree: celu_v2.h reports a NaN that "leaked
// through Mins", fast_gelu_v2.h clamps with Mins/Maxs to drop one), so it is the open question Q_NAN_IN_MAX_MIN.
template <typename C> inline C VMaxMin(C a, C b, bool max) {
    if constexpr (std::is_floating_point<C>::value) {
        if (std::isnan(a) || std::isnan(b)) {
            if (std::isnan(a) && std::isnan(b)) return a;
            if (Alternative(Q_NAN_IN_MAX_MIN, "Max/Min with one NaN operand, whose result public sources do not "
                                              "establish"))
                return std::isnan(a) ? b : a;
            return std::numeric_limits<C>::quiet_NaN();
        }
    }
    return max ? (a > b ? a : b) : (a < b ? a : b);
}
template <typename C> inline C VMax(C a, C b) { return VMaxMin(a, b, true); }
template <typename C> inline C VMin(C a, C b) { return VMaxMin(a, b, false); }

// Integer division by zero (or INT_MIN / -1) has no defined result; on the host it would kill the process.
template <typename C> inline C VDiv(C a, C b) {
    if constexpr (std::is_integral<C>::value) {
        if (b == 0) Fault("Div", "integer division by zero");
        if (std::is_signed<C>::value && b == C(-1) && a == std::numeric_limits<C>::lowest())
            Fault("Div", "integer division overflow (INT_MIN / -1)");
    }
    return a / b;
}

template <typename T, typename F> inline auto Elementwise2(F f) {
    return [f](T a, T b) { return Store<T>(f(Load(a), Load(b))); };
}

}  // namespace twin

namespace AscendC {

#define TWIN_BINARY(NAME, OK, EXPR)                                                                                   \
    template <typename T>                                                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,               \
                     const int32_t& count) {                                                                          \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        twin::Binary2(#NAME, dst, src0, src1, count, twin::Elementwise2<T>([](auto a, auto b) { return EXPR; }));     \
    }

TWIN_BINARY(Add, kAddSubOk, a + b)
TWIN_BINARY(Sub, kAddSubOk, a - b)
TWIN_BINARY(Mul, kMulOk, a * b)
TWIN_BINARY(Div, kDivOk, twin::VDiv(a, b))
TWIN_BINARY(Max, kMaxMinOk, twin::VMax(a, b))
TWIN_BINARY(Min, kMaxMinOk, twin::VMin(a, b))
#undef TWIN_BINARY

// Tensor-scalar ops: the scalar has the element type exactly (the U overload requires PrimT<T> == U).
#define TWIN_SCALAR(NAME, OK, EXPR)                                                                                   \
    template <typename T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,                      \
                     const int32_t& count) {                                                                          \
        static_assert(twin::OK<T>, #NAME ": element type not supported on this NpuArch (ascendc_api.md §2.6)");       \
        auto s = twin::Load(scalarValue);                                                                             \
        /* isSetMask=false: the count is the kernel's counter-mode mask (the count argument is ignored). */          \
        const int64_t n = isSetMask ? static_cast<int64_t>(count) : twin::CounterMaskCount(#NAME);                   \
        twin::Unary2(#NAME, dst, src, n, [s](T v) {                                                                   \
            auto a = twin::Load(v);                                                                                   \
            auto b = s;                                                                                               \
            return twin::Store<T>(EXPR);                                                                              \
        }, isSetMask);                                                                                                \
    }

TWIN_SCALAR(Adds, kAddsMulsOk, a + b)
TWIN_SCALAR(Muls, kAddsMulsOk, a * b)
TWIN_SCALAR(Maxs, kMaxsMinsOk, twin::VMax(a, b))
TWIN_SCALAR(Mins, kMaxsMinsOk, twin::VMin(a, b))
#undef TWIN_SCALAR

template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
    static_assert(twin::kDuplicateOk<T>, "Duplicate: element type not supported on this NpuArch");
    T v = scalarValue;
    twin::Fill2("Duplicate", dst, count, [v]() { return v; });
}

}  // namespace AscendC
