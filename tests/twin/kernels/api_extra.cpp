// APIs added for production kernels, checked directly (tests/twin/test_api_extra.py), one tiling key each:
// 0 ReduceMax with index, 1 ReduceMax with a too-small sharedTmpBuffer, 2 Sign without sharedTmpBuffer,
// 3 a failing ASSERT, 4 the older DataCopyPad forms (DataCopyParams + DataCopyPadParams with a raw pad pattern),
// 5 Brcb (2 repeats, dstBlkStride 1, dstRepStride 8), 6 Brcb with overlapping dst blocks (dstRepStride 4).
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void api_extra(GM_ADDR x, GM_ADDR y) {
    constexpr uint32_t n = 300;
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> tmpBuf;
    pipe.InitBuffer(inQ, 1, 320 * sizeof(float));
    pipe.InitBuffer(outQ, 1, 320 * sizeof(float));
    pipe.InitBuffer(tmpBuf, 1024);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 320);
    yGm.SetGlobalBuffer((__gm__ float*)y, 320);
    ASSERT(!TILING_KEY_IS(3));
    LocalTensor<float> in = inQ.AllocTensor<float>();
    if (TILING_KEY_IS(4)) {
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
        // 3 rows of 37 floats; each padded right by 3 floats of the raw pattern 0x3F800000 (1.0f) to 40 (5 blocks).
        DataCopyPad(in, xGm, DataCopyParams(3, 37 * sizeof(float), 0, 0), DataCopyPadParams(true, 0, 3, 0x3F800000u));
#endif
    } else {
        DataCopy(in, xGm, 320);
    }
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    LocalTensor<float> out = outQ.AllocTensor<float>();
    Duplicate(out, 0.0f, 320);
    if (TILING_KEY_IS(0) || TILING_KEY_IS(1)) {
        LocalTensor<float> tmp = tmpBuf.Get<float>(TILING_KEY_IS(1) ? 8 : 256);
        ReduceMax(out, in, tmp, n, true);
    } else if (TILING_KEY_IS(2)) {
#if __NPU_ARCH__ != 1001
        Sign(out, in, n);
#endif
    } else if (TILING_KEY_IS(4)) {
        Adds(out, in, 0.0f, 120);  // reads the padded lanes: they must be defined
    } else if (TILING_KEY_IS(5) || TILING_KEY_IS(6)) {
#if __NPU_ARCH__ != 1001
        Brcb(out, in, 2, BrcbRepeatParams(1, TILING_KEY_IS(5) ? 8 : 4));
#endif
    }
    outQ.EnQue(out);
    out = outQ.DeQue<float>();
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
    if (TILING_KEY_IS(4)) {
        DataCopyPad(yGm, out, DataCopyParams(1, 120 * sizeof(float), 0, 0));
    } else {
        DataCopy(yGm, out, 320);
    }
#else
    DataCopy(yGm, out, 320);
#endif
    inQ.FreeTensor(in);
    outQ.FreeTensor(out);
}
