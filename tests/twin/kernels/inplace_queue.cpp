// In-place AllocTensor/DeQue on a queue of depth 1, and the returning forms on a queue of depth 0: device compile
// errors (asc-devkit impl/basic_api/kernel_tquebind_impl.h static_asserts "can not AllocTensor in place while tque's
// depth is non zero", "must use AllocTensor<LocalTensor&> api while tque's depth is zero" and their DeQue twins).
// INPLACE_BROKEN=1 builds the in-place forms, otherwise the returning forms; QUEUE_DEPTH (default 1) the depth.
#include "kernel_operator.h"

using namespace AscendC;

#ifndef QUEUE_DEPTH
#define QUEUE_DEPTH 1
#endif

extern "C" __global__ __aicore__ void inplace_queue(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, QUEUE_DEPTH> q;
    pipe.InitBuffer(q, 1, 32);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 8);
    yGm.SetGlobalBuffer((__gm__ float*)y, 8);
    LocalTensor<float> a;
#if INPLACE_BROKEN
    q.AllocTensor(a);
#else
    a = q.AllocTensor<float>();
#endif
    DataCopy(a, xGm, 8);
    q.EnQue(a);
#if INPLACE_BROKEN
    q.DeQue(a);
#else
    a = q.DeQue<float>();
#endif
    SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    DataCopy(yGm, a, 8);
    SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
    q.FreeTensor(a);
}
