// NpuArch 1001 (Atlas training series) has neither static tensor programming nor Trap/assert/ascendc_assert: each
// construct below must trip its own static_assert (tests/twin/test_static_tensor.py).
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void static_tensor_errors(GM_ADDR x) {
    (void)x;
    LocalTensor<float> r(TPosition::VECCALC, 0, 8);
    Duplicate(r, 0.0f, 8);
    Trap();
    ascendc_assert(x != nullptr, "x is %p", x);
    assert(x != nullptr);
}
