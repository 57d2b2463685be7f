// Kernel-side utilities of the devkit that production kernels use next to the API: ASSERT, AscendC::IsSameType and
// the AscendC::Std subset (include/utils/std/*.h, impl/utils/std/*).
#pragma once

#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "core.h"

// ASSERT (impl/basic_api/kernel_macros.h): assert(x) in CPU debug builds, empty in device builds (the expression is
// not evaluated there). The twin checks it like CPU debug, as a KernelFault instead of an abort, so a kernel whose
// assertion fails is caught; keep side effects out of ASSERT, the device never evaluates it.
#ifndef ASSERT
#define ASSERT(x)                                                                                                     \
    do {                                                                                                              \
        if (!(x)) ::twin::Fault("ASSERT", "assertion failed: %s (%s:%d)", #x, __FILE__, __LINE__);                   \
    } while (0)
#endif

namespace AscendC {

// impl/basic_api/utils/kernel_utils_ceil_oom_que.h
template <bool b> struct BoolInst {
    using Type = BoolInst<b>;
    static constexpr bool value = b;
};
using TrueType = BoolInst<true>;
using FalseType = BoolInst<false>;
template <typename T, typename U> struct IsSameType : public FalseType {};
template <typename T> struct IsSameType<T, T> : public TrueType {};

template <typename T, typename U, typename... Args> constexpr bool SupportType() {
    if constexpr (sizeof...(Args) > 0) return std::is_same<T, U>::value || SupportType<T, Args...>();
    else return std::is_same<T, U>::value;
}

namespace Std {

// Type traits: the devkit's own implementations behave as the standard ones.
using std::conditional;
using std::conditional_t;
using std::decay;
using std::decay_t;
using std::enable_if;
using std::enable_if_t;
using std::false_type;
using std::integral_constant;
using std::is_floating_point;
using std::is_floating_point_v;
using std::is_integral;
using std::is_integral_v;
using std::is_same;
using std::is_same_v;
using std::remove_const;
using std::remove_const_t;
using std::remove_cv;
using std::remove_cv_t;
using std::remove_reference;
using std::remove_reference_t;
using std::true_type;
template <typename T> using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;
template <typename T> struct remove_cvref { using type = remove_cvref_t<T>; };

template <typename T, typename... Args> struct is_one_of : false_type {};
template <typename T, typename Head, typename... Tail>
struct is_one_of<T, Head, Tail...> : conditional_t<is_same_v<T, Head>, true_type, is_one_of<T, Tail...>> {};
template <typename T, typename... Args> inline constexpr bool is_one_of_v = is_one_of<T, Args...>::value;

// algorithm/min.h, max.h: mixed argument types, the conditional's common type.
template <typename T, typename U> inline constexpr auto min(const T& src0, const U& src1) {
    return (src0 < src1) ? src0 : src1;
}
template <typename T, typename U> inline constexpr auto max(const T& src0, const U& src1) {
    return (src0 > src1) ? src0 : src1;
}

// cmath/*.h
template <typename T, typename U> inline constexpr auto ceil_division(const T& num1, const U& num2) {
    return (num1 + num2 - 1) / num2;
}
template <typename T, typename U> inline constexpr auto ceil_align(const T& num1, const U& num2) {
    return ceil_division(num1, num2) * num2;
}
template <typename T, typename U> inline constexpr auto divide(const T& num1, const U& num2) { return num1 / num2; }
template <typename T> inline T abs(const T src) {
    static_assert(is_one_of<T, int8_t, int16_t, int32_t, float, int64_t>(),
                  "current data type is not supported on current device!");
    if constexpr (std::is_floating_point<T>::value) return std::fabs(src);
    else return static_cast<T>(src < 0 ? -src : src);
}

}  // namespace Std
}  // namespace AscendC
