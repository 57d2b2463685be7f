// Scalar half / bfloat16_t values as production kernels write them (implicit conversions from float and integer
// literals, static_cast<T>(0), T{}, DataCopyPadExtParams<T>{false, 0, 0, 0}), written to GM for bit-exact checks
// in tests/twin/test_scalar_types.py. Tiling key 0: the values; keys 1-3: conversions whose result is
// implementation-defined and must fault.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t kHalfSlots = 32, kFloatSlots = 16, kBf16Slots = 16;

extern "C" __global__ __aicore__ void scalar_types(GM_ADDR hOut, GM_ADDR fOut, GM_ADDR bOut) {
    TPipe pipe;
    TBuf<TPosition::VECOUT> hBuf, fBuf;
    pipe.InitBuffer(hBuf, kHalfSlots * sizeof(half));
    pipe.InitBuffer(fBuf, kFloatSlots * sizeof(float));
    LocalTensor<half> h = hBuf.Get<half>();
    LocalTensor<float> f = fBuf.Get<float>();
    volatile float big = 70000.0f;
    if (TILING_KEY_IS(1)) { half bad = big; (void)bad; }                    // out of half's range
    if (TILING_KEY_IS(2)) { half q = 2.5f; int32_t i = q; (void)i; }       // non-integral half -> int
    if (TILING_KEY_IS(3)) { half a = 60000.0f; half s = a + a; (void)s; }  // overflowing half arithmetic
    Duplicate(h, half(0), kHalfSlots);
    Duplicate(f, 0.0f, kFloatSlots);
    int32_t n2049 = 2049, n2051 = 2051;
    int8_t m7 = -7;
    half a = 0.1f, b = 0.2f;
    h.SetValue(0, a);                        // implicit from float
    h.SetValue(1, half(1e-7f));              // subnormal
    h.SetValue(2, half(65519.0f));           // below the overflow tie: 65504
    h.SetValue(3, half(n2049));              // int32 tie -> even (2048)
    h.SetValue(4, half(n2051));              // int32 tie -> even (2052)
    h.SetValue(5, half(m7));                 // int8
    h.SetValue(6, static_cast<half>(0));
    h.SetValue(7, half{});
    half c = 3;                              // copy-initialisation from an int literal
    h.SetValue(8, c);
    h.SetValue(9, a + b);                    // arithmetic rounds once
    h.SetValue(10, a * b);
    h.SetValue(11, b / a);
    h.SetValue(12, -a);
    half d = 1.0;                            // from double
    d += a;
    h.SetValue(13, d);
    half e = 0.5f;
    ++e;
    h.SetValue(14, e);
    h.SetValue(15, half(0.00006103515625)); // smallest normal, from double
    f.SetValue(0, static_cast<float>(a));    // back to float, exact
    f.SetValue(1, a < b ? 1.0f : 0.0f);
    f.SetValue(2, a == half(0.1f) ? 1.0f : 0.0f);
    f.SetValue(3, static_cast<double>(b) > 0.19 ? 1.0f : 0.0f);
    int32_t whole = half(12.0f);             // integral half -> int is exact
    f.SetValue(4, static_cast<float>(whole));
    f.SetValue(5, Std::min(2.5f, 1.5f));
    f.SetValue(6, static_cast<float>(Std::max(3, 7)));
    f.SetValue(7, AscendC::IsSameType<half, half>::value && !AscendC::IsSameType<half, float>::value ? 1.0f : 0.0f);
    f.SetValue(8, static_cast<float>(Std::ceil_division(10u, 4u)));
    f.SetValue(9, static_cast<float>(Std::ceil_align(10u, 8u)));
    GlobalTensor<half> hGm;
    GlobalTensor<float> fGm;
    hGm.SetGlobalBuffer((__gm__ half*)hOut, kHalfSlots);
    fGm.SetGlobalBuffer((__gm__ float*)fOut, kFloatSlots);
    DataCopy(hGm, h, kHalfSlots);
    DataCopy(fGm, f, kFloatSlots);
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
    TBuf<TPosition::VECOUT> bBuf;
    pipe.InitBuffer(bBuf, kBf16Slots * sizeof(bfloat16_t));
    LocalTensor<bfloat16_t> bt = bBuf.Get<bfloat16_t>();
    DataCopyPadExtParams<bfloat16_t> pad{false, 0, 0, 0};
    bt.SetValue(0, pad.paddingValue);
    bt.SetValue(1, static_cast<bfloat16_t>(0));
    bt.SetValue(2, bfloat16_t{});
    bfloat16_t one = 1.00390625f;            // tie between 1 and 1.0078125 -> even (1.0)
    bt.SetValue(3, one);
    bt.SetValue(4, bfloat16_t(1.01171875f)); // tie -> even (1.015625)
    bt.SetValue(5, bfloat16_t(3));           // int through float
    bt.SetValue(6, Cast(__builtin_nanf("")));  // scalar Cast: NaN -> 0x7FFF
    bt.SetValue(7, ToBfloat16(-2.5f));
    volatile float nearMax = 3.4e38f;
    bt.SetValue(8, bfloat16_t(static_cast<float>(nearMax)));  // rounds up past the max -> Inf
    bfloat16_t tenth = 0.1f;
    bt.SetValue(9, tenth);
    f.SetValue(10, ToFloat(tenth));          // deprecated alias of Cast, exact
    f.SetValue(11, Cast(tenth));
    for (uint32_t i = 10; i < kBf16Slots; ++i) bt.SetValue(i, bfloat16_t{});
    GlobalTensor<bfloat16_t> bGm;
    bGm.SetGlobalBuffer((__gm__ bfloat16_t*)bOut, kBf16Slots);
    DataCopy(bGm, bt, kBf16Slots);
    DataCopy(fGm, f, kFloatSlots);
#else
    (void)bOut;
#endif
}
