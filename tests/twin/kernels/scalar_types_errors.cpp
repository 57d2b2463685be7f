// Scalar half / bfloat16_t uses that the real types (CPU-debug kernel_fp16.h / kernel_bf16.h, and the device
// compiler for bf16) reject: every line marked REJECT must produce a compile error, the rest must compile
// (tests/twin/test_scalar_types.py compiles this once per listed arch and matches errors to line numbers).
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void scalar_types_errors(GM_ADDR x) {
    (void)x;
    half h = 1.0f;
    float ok = h;                          // legal: half converts to float implicitly
    (void)ok;
    half amb = h * 2.0f;                   // REJECT: ambiguous (half::operator* vs the built-in float *)
    (void)amb;
    bool cmp = h < 0.5f;                   // REJECT: ambiguous for the same reason
    (void)cmp;
    long wide = 5;
    half fromLong = wide;                  // REJECT: no half(long): int32/uint32/... are equally good
    (void)fromLong;
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
    bfloat16_t b = 1.0f;                   // legal on 2201/3510
    bfloat16_t sum = b + b;                // REJECT: no scalar bf16 arithmetic
    (void)sum;
    float back = b;                        // REJECT: no implicit bf16 -> float (use Cast / ToFloat)
    (void)back;
    float viaHalf = ToFloat(h);            // REJECT: ToFloat takes bfloat16_t only
    (void)viaHalf;
#else
    bfloat16_t b = 1.0f;                   // REJECT: no bf16 scalar conversion on 2002/1001
    (void)b;
    bfloat16_t zero{};                     // legal: value-initialised
    (void)zero;
#endif
}
