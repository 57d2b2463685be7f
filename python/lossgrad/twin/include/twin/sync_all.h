// Cross-core synchronisation: the soft SyncAll (软同步) and the scheduler that lets cores wait for each other.
//
// The launcher runs each core on its own thread, but only the core holding the baton runs, so the twin stays
// sequential and deterministic: core 0 runs until it ends or waits in SyncAll, then the next core that has not
// ended, and so on (a kernel without SyncAll runs core 0, 1, ... to completion, as before). What is per core on
// the device moves with the baton: the CoreState, the live TPipe and TILING_KEY_VAR. A core that waits in
// SyncAll hands the baton on and re-checks its condition when the baton comes back; when every core still running
// waits and none can pass, the launch faults (a hang on hardware), never hangs.
//
// SyncAll follows asc-devkit impl/basic_api/dav_c220/kernel_operator_sync_impl.h SoftSyncAllImpl (the same in
// dav_m200, dav_c100 and dav_3510): PipeBarrier<PIPE_ALL>; each core adds 1 to its own int32 counter in the GM
// workspace (32 bytes per core, slot blockIdx * 8) and polls every core's counter until their sum reaches
// usedCores * its new value. On its first call (new value 1) a core rewrites its counter as 1 on every poll and
// counts itself as 1 (ClcSyncCount's isFirst branch): this is what lets every core zero the whole GM workspace at
// its start (docs/zh SyncAll.md 约束说明, ops-nn ge_glu_grad_v2_base_310p.h) although the cores start unordered.
// Requirements checked (SyncAll.md): GM workspace >= usedCores * 32 bytes, UB workspace >= usedCores * 32 bytes in
// VECIN/VECCALC/VECOUT, usedCores <= GetBlockNum(), isAIVOnly = true, a live TPipe (the impl fetches event IDs);
// and every block running at once: blockDim within the SoC's cores (run_kernel passes them), no Vector Core kernel.
// The soft prototype exists on every arch the twin models (2201, 3510, 2002 AI Core, 1001); the hardware
// prototype SyncAll() (no workspace; A2/A3/950 only, __mix__ kernels) is not modelled and does not compile here.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core.h"
#include "pipe.h"
#include "system.h"
#include "tensor.h"

namespace AscendC {

// Workspace of a kernel-launch call: the caller passes CANN's system workspace, whose first RESERVED_WORKSPACE
// bytes the library keeps (twin::kReservedWorkspace, per arch); the user workspace follows (asc-devkit
// impl/basic_api/dav_*/kernel_operator_common_impl.h, device branch). The twin models the device, not the CPU-debug
// branch (which returns the workspace itself).
inline GM_ADDR& TwinSysWorkspace() {
    static GM_ADDR p = nullptr;
    return p;
}
}  // namespace AscendC

namespace twin {

struct AbortCore {};  // unwinds a core waiting in SyncAll when another core's fault ends the launch

struct SyncRange {
    int buf;
    uint64_t begin, end;
};

struct Scheduler {
    std::mutex m;
    std::condition_variable cv;
    int n = 0;
    int turn = -1;
    bool abort = false;
    std::vector<uint8_t> done, stalled;
    std::vector<CoreState*> core;
    std::vector<AscendC::TPipe*> pipe;
    std::vector<uint64_t> key;  // each core's TILING_KEY_VAR (a per-core value a kernel may change)
    std::vector<SyncRange> syncRanges;  // GM bytes used as SyncAll workspaces in this launch
};

inline Scheduler& Sched() {
    static Scheduler s;
    return s;
}

// With s.m held: the baton goes to the next core (cyclic) that has not ended.
inline void PassTurnLocked(Scheduler& s, int idx) {
    s.pipe[idx] = AscendC::TwinCurrentPipe();
    s.key[idx] = Rt().tilingKey;
    s.turn = -1;
    for (int k = 1; k <= s.n; ++k) {
        const int j = (idx + k) % s.n;
        if (!s.done[j]) {
            s.turn = j;
            break;
        }
    }
    s.cv.notify_all();
}

inline void WaitTurnLocked(Scheduler& s, std::unique_lock<std::mutex>& lk, int idx) {
    s.cv.wait(lk, [&] { return s.turn == idx; });
    Rt().core = s.core[idx];
    AscendC::TwinCurrentPipe() = s.pipe[idx];
    Rt().tilingKey = s.key[idx];
}

inline void ClearStallsLocked(Scheduler& s) { std::fill(s.stalled.begin(), s.stalled.end(), 0); }

// A fault ends the launch: cores not yet started never start, cores waiting in SyncAll unwind.
inline void AbortLaunch() {
    Scheduler& s = Sched();
    std::lock_guard<std::mutex> lk(s.m);
    s.abort = true;
}

// Runs body(idx) for every core on its own thread, one core at a time (see the file comment). `cores[idx]` is the
// state core idx runs with; body catches everything it throws.
template <typename Body> inline void RunCores(int n, std::vector<CoreState>& cores, Body body) {
    Scheduler& s = Sched();
    s.n = n;
    s.turn = n > 0 ? 0 : -1;
    s.abort = false;
    s.done.assign(n, 0);
    s.stalled.assign(n, 0);
    s.core.assign(n, nullptr);
    for (int i = 0; i < n; ++i) s.core[i] = &cores[i];
    s.pipe.assign(n, nullptr);
    s.key.assign(n, Rt().tilingKey);
    s.syncRanges.clear();
    AscendC::TwinSysWorkspace() = nullptr;
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([&s, &body, i] {
            std::unique_lock<std::mutex> lk(s.m);
            WaitTurnLocked(s, lk, i);
            if (!s.abort) {
                ClearStallsLocked(s);  // a core starting is progress
                lk.unlock();
                body(i);
                lk.lock();
            }
            s.done[i] = 1;
            ClearStallsLocked(s);
            AscendC::TwinCurrentPipe() = nullptr;
            Rt().core = nullptr;
            PassTurnLocked(s, i);
        });
    }
    for (std::thread& t : threads) t.join();
}

// The calling core waits: the baton goes round once; AbortCore when the launch has ended meanwhile.
inline void YieldCore(int idx) {
    Scheduler& s = Sched();
    std::unique_lock<std::mutex> lk(s.m);
    PassTurnLocked(s, idx);
    WaitTurnLocked(s, lk, idx);
    if (s.abort) throw AbortCore{};
}

inline void SoftSyncAll(const AscendC::GlobalTensor<int32_t>& gm, const TensorRef& ub, int32_t usedCores) {
    const char* api = "SyncAll";
    CoreState& c = Core();
    RequireNotOnVectorCore(api, "AI Cores and Vector Cores are scheduled as different tasks, so no inter-core "
                                "synchronisation (guide 如何在矢量编程时启用Vector-Core.md)");
    if (Rt().socCores > 0 && c.num > Rt().socCores)
        Fault(api, "blockDim %d exceeds the %d cores of the SoC: the device runs %d blocks at once and starts the "
                   "others as blocks end, so blocks waiting in SyncAll wait for blocks that never start (a hang)",
              c.num, Rt().socCores, Rt().socCores);
    AscendC::GetTPipePtr();  // the devkit's implementation fetches event IDs from the live TPipe
    if (usedCores < 0 || usedCores > c.num)
        Fault(api, "usedCores %d is outside 0..GetBlockNum() = %d", usedCores, c.num);
    const int32_t total = usedCores != 0 ? usedCores : c.num;
    if (c.idx >= total) Fault(api, "core %d takes part although usedCores is %d", c.idx, total);
    const uint64_t bytes = static_cast<uint64_t>(total) * 32;
    RequireOperand(api, "ubWorkspace", ub, bytes);
    int32_t* base = gm.GetPhyAddr();
    if (base == nullptr) Fault(api, "gmWorkspace has no global buffer (SetGlobalBuffer)");
    if (gm.GetSize() != 0 && gm.GetSize() * sizeof(int32_t) < bytes)
        Fault(api, "gmWorkspace holds %llu bytes; SyncAll needs usedCores * 32 = %llu",
              (unsigned long long)(gm.GetSize() * sizeof(int32_t)), (unsigned long long)bytes);
    const int buf = FindGm(api, base, bytes);
    const uint64_t off = static_cast<uint64_t>(reinterpret_cast<uint8_t*>(base) - Rt().gm[buf].base);
    Scheduler& s = Sched();
    {
        std::lock_guard<std::mutex> lk(s.m);
        s.syncRanges.push_back(SyncRange{buf, off, off + bytes});
    }
    BarrierAll();  // PipeBarrier<PIPE_ALL>
    // Time model: the PIPE_ALL barrier and the cross-core wait (the polls themselves are not logged as scalar work:
    // how many there are depends on the twin's core order, not the device's)
    if (Rt().timing) LogRecord(TK_BARRIER_ALL, P_S, Rt().ApiId("PipeBarrier"));
    LogSyncAll(api);
    int32_t* own = base + c.idx * 8;
    const int32_t value = own[0] + 1;
    const bool first = value == 1;
    own[0] = value;
    RecordGm(buf, own, 32, false);
    RecordGm(buf, own, 32, true);
    RecordGm(buf, base, bytes, false);  // one poll's read (the number of polls depends on the other cores)
    {
        std::lock_guard<std::mutex> lk(s.m);
        ClearStallsLocked(s);
    }
    for (;;) {
        if (Rt().cancel) throw KernelFaultError("twin: launch cancelled");
        bool progress = false;
        int64_t count = 0;
        if (first) {
            progress = own[0] != 1;  // a late core's zeroing undone
            own[0] = 1;
            count = 1;
            for (int32_t i = 0; i < total; ++i)
                if (i != c.idx) count += base[i * 8];
        } else {
            for (int32_t i = 0; i < total; ++i) count += base[i * 8];
        }
        if (count >= static_cast<int64_t>(total) * value) break;
        {
            std::lock_guard<std::mutex> lk(s.m);
            if (progress) ClearStallsLocked(s);
            s.stalled[c.idx] = 1;
            bool all = true;
            for (int i = 0; i < s.n; ++i) all = all && (s.done[i] || s.stalled[i]);
            if (all) {
                std::string waiting;
                for (int i = 0; i < s.n; ++i)
                    if (!s.done[i]) waiting += (waiting.empty() ? "" : ",") + std::to_string(i);
                Fault(api, "deadlock: cores {%s} wait in SyncAll and no core can reach it any more (the counters in "
                           "the GM workspace sum to %lld of the %lld needed; a kernel hang on hardware)",
                      waiting.c_str(), (long long)count, (long long)total * value);
            }
        }
        YieldCore(c.idx);
    }
    {
        std::lock_guard<std::mutex> lk(s.m);
        ClearStallsLocked(s);
    }
    // The UB workspace holds the last poll's copy of the counters (MTE2 and scalar writes, all complete).
    std::memcpy(Core().ub.data() + ub.addr, base, bytes);
    MarkInit(ub.addr, static_cast<uint32_t>(bytes));
    BarrierAll();
    CountApi(api, 0, 0);
}

// Byte ranges of a write interval outside every SyncAll workspace of its buffer: concurrent writes there are the
// devkit's documented protocol (every core zeroes the workspace; counters are per core), not a race.
inline std::vector<Interval> OutsideSyncRanges(int buf, const Interval& w) {
    std::vector<Interval> out{w};
    for (const SyncRange& r : Sched().syncRanges) {
        if (r.buf != buf) continue;
        std::vector<Interval> next;
        for (const Interval& i : out) {
            if (i.end <= r.begin || i.begin >= r.end) {
                next.push_back(i);
                continue;
            }
            if (i.begin < r.begin) next.push_back(Interval{i.begin, r.begin, i.core});
            if (i.end > r.end) next.push_back(Interval{r.end, i.end, i.core});
        }
        out.swap(next);
    }
    return out;
}

}  // namespace twin

namespace AscendC {

inline void SetSysWorkspace(GM_ADDR workspace) { TwinSysWorkspace() = workspace; }
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) {
    (void)workspace;
    if (TwinSysWorkspace() == nullptr) twin::Fault("GetUserWorkspace", "no system workspace was set (SetSysWorkspace)");
    return TwinSysWorkspace() + twin::kReservedWorkspace;
}

template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                    const int32_t usedCores = 0) {
    static_assert(isAIVOnly, "the soft SyncAll synchronises Vector cores only (isAIVOnly = false is unsupported)");
    twin::SoftSyncAll(gmWorkspace, ubWorkspace.TwinRef(), usedCores);
}

}  // namespace AscendC
