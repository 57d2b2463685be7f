// Kernel-side exception detection (asc-devkit docs/zh/api/SIMD-API/基础API/调试接口/异常检测: Trap.md,
// ascendc_assert.md, assert.md): AscendC::Trap() stops the AI Core; assert / ascendc_assert (include/utils/debug/
// asc_assert.h, which kernel_operator.h reaches through kernel_operator_dump_tensor_intf.h) print the condition and an
// optional printf-style message and stop the kernel when the condition is false. The twin turns each into a
// KernelFault naming it. Per arch as the docs list them: Trap on 950/A2/A3/310P AI Core (2201, 3510, 2002), not on
// Atlas training (1001, where impl/basic_api/dav_c100 TrapImpl only reports "not supported" and the device build
// compiles it to nothing); assert/ascendc_assert the same three (asc_assert.h pulls the AI Core implementation only for
// 2002/2201/3510). On 1001 they do not compile. With NDEBUG or ASCENDC_DUMP=0 both assert macros expand to nothing
// and the condition is not evaluated, as in asc_assert.h.
#pragma once

#include <cstdio>
#include <string>
#include <type_traits>

#include "core.h"
#include "types.h"

namespace twin {

constexpr bool kHasKernelAssert = kArch == 2201 || kArch == 3510 || kArch == 2002;

// printf arguments as C varargs take them (half and bfloat16_t print with %f, as the NPU's assert allows for half).
template <typename A> inline auto AssertArg(const A& a) {
    if constexpr (std::is_same<A, half>::value) return static_cast<double>(static_cast<float>(a));
    else if constexpr (std::is_same<A, bfloat16_t>::value) return static_cast<double>(DecodeBf16(a.bits));
    else if constexpr (std::is_floating_point<A>::value) return static_cast<double>(a);
    else if constexpr (std::is_enum<A>::value) return static_cast<long long>(a);
    else return a;
}

template <typename... Args>
[[noreturn]] inline void AssertFailed(const char* api, const char* expr, const char* file, int line, const char* fmt,
                                      const Args&... args) {
    static_assert(kHasKernelAssert && sizeof...(Args) >= 0,
                  "assert/ascendc_assert: not supported on NpuArch 1001 (Atlas training series)");
    std::string message;
    if constexpr (sizeof...(Args) > 0) {
        char buf[512];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
        std::snprintf(buf, sizeof buf, fmt, AssertArg(args)...);
#pragma GCC diagnostic pop
        message = std::string(" ") + buf;
    } else if (fmt != nullptr) {
        message = std::string(" ") + fmt;
    }
    Fault(api, "assertion failed: %s (%s:%d)%s", expr, file, line, message.c_str());
}

}  // namespace twin

namespace AscendC {

// kernel_operator_sys_var_intf.h: interrupts the AI Core (NPU), an assert in CPU debug.
template <int kTwinUnused = 0> inline void Trap() {
    static_assert(twin::kArch != 1001 && kTwinUnused == 0,
                  "Trap: not supported on NpuArch 1001 (Atlas training series)");
    twin::Fault("Trap", "AscendC::Trap() called: the AI Core stops here (the kernel is aborted)");
}

}  // namespace AscendC

// The condition, then an optional format string and its arguments; the argument count selects the form.
#define TWIN_ASSERT_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define TWIN_ASSERT_NARGS(...) TWIN_ASSERT_NARGS_(__VA_ARGS__, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, 1, 0)
#define TWIN_ASSERT_JOIN_(a, b) a##b
#define TWIN_ASSERT_JOIN(a, b) TWIN_ASSERT_JOIN_(a, b)
#define TWIN_ASSERT_1(api, expr)                                                                                      \
    (static_cast<bool>(expr) ? void(0) : ::twin::AssertFailed(api, #expr, __FILE__, __LINE__, nullptr))
#define TWIN_ASSERT_M(api, expr, ...)                                                                                 \
    (static_cast<bool>(expr) ? void(0) : ::twin::AssertFailed(api, #expr, __FILE__, __LINE__, __VA_ARGS__))
#define TWIN_ASSERT(api, ...) TWIN_ASSERT_JOIN(TWIN_ASSERT_, TWIN_ASSERT_NARGS(__VA_ARGS__))(api, __VA_ARGS__)

#undef assert
#undef ascendc_assert
#if !(defined(ASCENDC_DUMP) && ASCENDC_DUMP == 0) && !defined(NDEBUG)
#define assert(...) TWIN_ASSERT("assert", __VA_ARGS__)
#define ascendc_assert(...) TWIN_ASSERT("ascendc_assert", __VA_ARGS__)
#else
#define assert(...)
#define ascendc_assert(...)
#endif
