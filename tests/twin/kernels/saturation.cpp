// Saturation mode (310P/910): y[0, 16) = Muls(x, 1) (computed), y[16, 32) = Add(x, x) (computed), y[32, 48) =
// DataCopy UB->UB of x (moved), y[48, 64) = Duplicate(x[0]) read by the scalar unit (moved).
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void saturation(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 1, 64);
    pipe.InitBuffer(out, 1, 256);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 16);
    yGm.SetGlobalBuffer((__gm__ float*)y, 64);
    LocalTensor<float> a = in.AllocTensor<float>();
    DataCopy(a, xGm, 16);
    in.EnQue(a);
    a = in.DeQue<float>();
    LocalTensor<float> o = out.AllocTensor<float>();
    Muls(o, a, 1.0f, 16);
    Add(o[16], a, a, 16);
    DataCopy(o[32], a, 16);
    const float first = a.GetValue(0);
    Duplicate(o[48], first, 16);
    out.EnQue(o);
    o = out.DeQue<float>();
    DataCopy(yGm, o, 64);
    out.FreeTensor(o);
    in.FreeTensor(a);
}
