// The soft SyncAll on the twin (twin/sync_all.h): every core zeroes the counters, writes its value into its own
// 32-byte slot of the workspace, waits in SyncAll, then sums every core's slot and writes the sum into its own
// 32-byte block of `out`. Other modes break one rule each (tests/twin/test_sync_all.py).
#include "kernel_operator.h"

using namespace AscendC;

struct SyncTiling {
    uint32_t mode;
    int32_t usedCores;
};

enum Mode : uint32_t {
    kSum = 0,          // the correct protocol
    kOnlyCoreZero = 1, // only core 0 reaches SyncAll: a hang on hardware
    kNoZeroing = 2,    // the counters are not zeroed first
    kSmallGm = 3,      // the GM workspace holds one core too few
    kSmallUb = 4,      // the UB workspace holds one core too few
    kTooManyCores = 5, // usedCores > GetBlockNum()
    kCoreOneFaults = 6,// core 1 faults while the others wait in SyncAll
    kSameSlot = 7,     // every core writes slot 0 (a race outside the counters)
    kVectorCore = 8,   // 310P: the kernel also runs on the Vector Cores (no inter-core synchronisation there)
};

template <HardEvent E> __aicore__ inline void Sync() {
    event_t e = static_cast<event_t>(GetTPipePtr()->FetchEventID(E));
    SetFlag<E>(e);
    WaitFlag<E>(e);
}

extern "C" __global__ __aicore__ void sync_all(GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling) {
    SyncTiling t;
    GlobalTensor<uint32_t> tg;
    tg.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(tiling), 2);
    t.mode = tg.GetValue(0);
    t.usedCores = static_cast<int32_t>(tg.GetValue(1));
#if __NPU_ARCH__ == 2002
    if (t.mode == kVectorCore) {
        KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_VECTOR_CORE);
    }
#endif
    const uint32_t n = static_cast<uint32_t>(GetBlockNum());
    const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64 * 32 * 2);
    LocalTensor<float> ub = buf.Get<float>();
    GlobalTensor<float> counters;
    counters.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace), n * 8);
    GlobalTensor<float> slots;
    slots.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace + n * 32), n * 8);
    if (t.mode != kNoZeroing) {
        Duplicate(ub, 0.0f, n * 8);
        Sync<HardEvent::V_MTE3>();
        DataCopy(counters, ub, n * 8);
        Sync<HardEvent::MTE3_V>();
    }
    Duplicate(ub, static_cast<float>(idx + 1), 8);
    Sync<HardEvent::V_MTE3>();
    DataCopy(slots[t.mode == kSameSlot ? 0 : idx * 8], ub, 8);
    Sync<HardEvent::MTE3_V>();
    if (t.mode == kOnlyCoreZero && idx != 0) return;
    if (t.mode == kCoreOneFaults && idx == 1) Duplicate(ub, 0.0f, 1u << 20);  // beyond the buffer: a fault
    GlobalTensor<int32_t> gmSync;
    gmSync.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace), t.mode == kSmallGm ? n * 8 - 8 : n * 8);
    LocalTensor<int32_t> ubSync = buf.GetWithOffset<int32_t>(t.mode == kSmallUb ? (n - 1) * 8 : n * 8, 64 * 32);
    SyncAll(gmSync, ubSync, t.usedCores);
    DataCopy(ub, slots, n * 8);
    Sync<HardEvent::MTE2_V>();
    for (uint32_t i = 1; i < n; ++i) Add(ub, ub, ub[i * 8], 8);
    Sync<HardEvent::V_MTE3>();
    GlobalTensor<float> o;
    o.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), n * 8);
    DataCopy(o[idx * 8], ub, 8);
}
