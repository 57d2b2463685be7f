// Code that must not compile for the architecture it targets: every construct below trips its own static_assert,
// and tests/twin/test_compile_time.py checks that each expected message appears (one compile per architecture).
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void compile_errors(GM_ADDR x) {
#if __NPU_ARCH__ != 1001 && __NPU_ARCH__ != 2201
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);  // 2002: only KERNEL_TYPE_AICORE / MIX_VECTOR_CORE
#elif __NPU_ARCH__ == 1001
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);  // 1001: the macro does not exist
#endif
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<float> f = buf.Get<float>();
    LocalTensor<half> h = buf.Get<half>();
    LocalTensor<bfloat16_t> b = buf.Get<bfloat16_t>();
    LocalTensor<int32_t> i = buf.Get<int32_t>();
    LocalTensor<uint8_t> bits = buf.Get<uint8_t>();
    GlobalTensor<float> fGm;
    GlobalTensor<bfloat16_t> bGm;
    fGm.SetGlobalBuffer((__gm__ float*)x, 64);
    bGm.SetGlobalBuffer((__gm__ bfloat16_t*)x, 64);
#if __NPU_ARCH__ == 2201
    Add(b, b, b, 64);                                   // bf16 is storage only on A2/A3
    Cast(b, h, RoundMode::CAST_RINT, 64);               // no half <-> bf16 on A2/A3
    Exp(i, i, 64);                                      // transcendental ops are half/float only
#elif __NPU_ARCH__ == 3510
    Div(b, b, b, 64);                                   // Div has no bf16 even on 950
    Cast(i, h, RoundMode::CAST_RINT, 64);               // legal: must not add an error
    Cast(bits, f, RoundMode::CAST_RINT, 64);            // no float -> uint8 on 950
    LocalTensor<int64_t> l = buf.Get<int64_t>();
    Add(l, l, l, 64);                                   // legal: 64-bit Add in the count form
    Add(l, l, l, 16, 1, BinaryRepeatParams());          // 64-bit types have no level-0 form
#elif __NPU_ARCH__ == 2002
    DataCopyPad(f, fGm, DataCopyExtParams(1, 20, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    Cast(i, f, RoundMode::CAST_RINT, 64);               // no float -> int32 on 310P
    DataCopy(b, bGm, 64);                               // no bf16 tensors on 310P
    DataCopyPad(f, fGm, DataCopyParams(1, 20, 0, 0), DataCopyPadParams(false, 0, 0, 0));  // older form: neither
    Sign(f, f, 64);                                     // legal: stack-scratch Sign exists on 310P
    DataSyncBarrier<MemDsbT::DDR>();                    // A2/A3 and 950 only
#else  // 1001
    DataCopyPad(f, fGm, DataCopyExtParams(1, 20, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    Maxs(f, f, 1.0f, 64);
    Mins(f, f, 1.0f, 64);
    Compares(bits, f, 1.0f, CMPMODE::LT, 64);
    Sign(f, f, bits, 64);
    Sign(f, f, 64);                                     // nor the form without sharedTmpBuffer
    DataCopyPad(fGm, f, DataCopyParams(1, 20, 0, 0));   // older form: no DataCopyPad on 1001
    Relu(f, f, 64);                                     // Relu is half-only on 1001
    Select(f, bits, f, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
    Cast(b, f, RoundMode::CAST_RINT, 64);               // no bf16 on 1001
    Compare(f, f, CMPMODE::LT, 64, BinaryRepeatParams());  // no CMPMASK form on 1001
    (void)Cast<float, half, RoundMode::CAST_ODD>(1.0f);  // no scalar Cast on 1001
    DataSyncBarrier<MemDsbT::ALL>();                    // A2/A3 and 950 only
#endif
    (void)f, (void)h, (void)b, (void)i, (void)bits;
}
