// TEST SCAFFOLDING (tests/cann/fake_cann/README.md): the kernel qualifiers only, standing in for CANN's
// "kernel_operator.h" so kernel-variant wrappers around the stand-in kernels can be syntax-checked. In CANN's CPU
// mode these qualifiers are empty macros too (asc-tools cpudebug/include/stub_def.h, per ascendc_api.md §1.1).
#ifndef FAKE_CANN_KERNEL_OPERATOR_H_
#define FAKE_CANN_KERNEL_OPERATOR_H_

#include <cstdint>

#ifndef __global__
#define __global__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t*
#endif

// Element types named by the DTYPE_<NAME> macros (CPU mode defines them as host classes).
struct half { uint16_t bits; };
struct bfloat16_t { uint16_t bits; };

#endif // FAKE_CANN_KERNEL_OPERATOR_H_
