// Twin launcher: runs a kernel entry on `blockDim` simulated cores, one at a time (core 0, 1, ... unless a core
// waits in SyncAll: twin/sync_all.h), and reports faults and counters as JSON. Included once by the generated shim, after the kernel source; `TwinInvoke` calls the entry.
#pragma once

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_operator.h"

void TwinInvoke(GM_ADDR* args);  // defined by the shim: calls the kernel entry with the right arity

namespace twin {

struct LaunchResult {
    std::string json;
};

inline LaunchResult& Result() {
    static LaunchResult r;
    return r;
}

inline std::string JsonEscape(const std::string& s) {
    std::string o;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') { o += '\\'; o += ch; }
        else if (ch == '\n') o += "\\n";
        else if (static_cast<unsigned char>(ch) < 0x20) o += ' ';
        else o += ch;
    }
    return o;
}

// Union of intervals (sorted by begin), optionally restricted to one core.
inline std::vector<Interval> Merge(std::vector<Interval> v, int core = -1) {
    if (core >= 0) v.erase(std::remove_if(v.begin(), v.end(), [core](const Interval& i) { return i.core != core; }),
                           v.end());
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    std::vector<Interval> out;
    for (const Interval& i : v) {
        if (!out.empty() && i.begin <= out.back().end) out.back().end = std::max(out.back().end, i.end);
        else out.push_back(i);
    }
    return out;
}

inline uint64_t Length(const std::vector<Interval>& v) {
    uint64_t n = 0;
    for (const Interval& i : v) n += i.end - i.begin;
    return n;
}

inline uint64_t Total(const std::vector<Interval>& v, int core) {
    uint64_t n = 0;
    for (const Interval& i : v)
        if (i.core == core) n += i.end - i.begin;
    return n;
}

// Two cores writing the same GM bytes is a race on hardware (npuchk's multi-core overlap check).
inline void CheckCrossCoreWrites() {
    for (size_t b = 0; b < Rt().gm.size(); ++b) {
        std::vector<Interval> w;
        for (const Interval& i : Rt().gm[b].writes) {
            const std::vector<Interval> kept = OutsideSyncRanges(static_cast<int>(b), i);
            w.insert(w.end(), kept.begin(), kept.end());
        }
        std::sort(w.begin(), w.end(), [](const Interval& x, const Interval& y) { return x.begin < y.begin; });
        uint64_t maxEnd = 0;
        int owner = -1;
        for (const Interval& i : w) {
            if (owner >= 0 && i.begin < maxEnd && i.core != owner) {
                char msg[256];
                std::snprintf(msg, sizeof msg,
                              "core %d: GM write: cores %d and %d both write bytes [%llu, %llu) of GM argument %zu "
                              "(overlapping GM writes from different cores)",
                              i.core, owner, i.core, (unsigned long long)i.begin,
                              (unsigned long long)std::min(maxEnd, i.end), b);
                throw KernelFaultError(msg);
            }
            if (i.end > maxEnd) {
                maxEnd = i.end;
                owner = i.core;
            }
        }
    }
}

// A 64-byte line one core wrote with SetValue and another core wrote by DMA: the cores run unordered, and the
// scalar core writes the whole line back, so either side's bytes may be lost (SetValue.md, 缓存一致性.md).
inline void CheckCrossCoreLines() {
    if (Rt().scalarLineWriter.empty()) return;
    std::map<int, std::vector<std::pair<uint64_t, int32_t>>> lines;  // buffer -> (line offset, scalar core)
    for (const auto& kv : Rt().scalarLineWriter) lines[KeyBuf(kv.first)].push_back({KeyOff(kv.first), kv.second});
    for (auto& bl : lines) {
        std::vector<Interval> w = Rt().gm[bl.first].writes;
        std::sort(w.begin(), w.end(), [](const Interval& x, const Interval& y) { return x.begin < y.begin; });
        std::vector<uint64_t> maxEnd(w.size());
        for (size_t i = 0; i < w.size(); ++i) maxEnd[i] = std::max(i ? maxEnd[i - 1] : 0, w[i].end);
        std::sort(bl.second.begin(), bl.second.end());
        for (const auto& line : bl.second) {
            const uint64_t lo = line.first, hi = lo + kLine;
            size_t j = std::lower_bound(w.begin(), w.end(), hi,
                                        [](const Interval& x, uint64_t v) { return x.begin < v; }) - w.begin();
            while (j > 0 && maxEnd[j - 1] > lo) {
                --j;
                if (w[j].end > lo && w[j].core != line.second) {
                    char msg[400];
                    std::snprintf(msg, sizeof msg,
                                  "core %d: GM write: core %d wrote bytes [%llu, %llu) of GM argument %d by DMA inside "
                                  "the 64-byte line [%llu, %llu) that core %d wrote with GlobalTensor::SetValue: the "
                                  "cores run unordered and the data cache writes the whole line back, so either "
                                  "core's bytes can be lost (keep scalar-written lines of different cores apart)",
                                  std::max(w[j].core, line.second), w[j].core, (unsigned long long)std::max(lo, w[j].begin),
                                  (unsigned long long)std::min(hi, w[j].end), bl.first, (unsigned long long)lo,
                                  (unsigned long long)hi, line.second);
                    throw KernelFaultError(msg);
                }
            }
        }
    }
}

inline void CheckCoreEnd(CoreState& c) {
    if (!Rt().pendingFault.empty()) throw KernelFaultError(Rt().pendingFault);
    for (const auto& kv : c.flags)
        if (kv.second.set) {
            char msg[200];
            std::snprintf(msg, sizeof msg, "core %d: SetFlag: event %d id %d set but never waited (unpaired "
                                           "SetFlag at kernel end)", c.idx, kv.first / 16, kv.first % 16);
            throw KernelFaultError(msg);
        }
    for (int e = 0; e < kHardEventCount; ++e)
        for (int id = 0; id < 16; ++id)
            if (c.eventOwner[e][id] == IdOwner::KERNEL) {
                char msg[200];
                std::snprintf(msg, sizeof msg, "core %d: TPipe::AllocEventID: event HardEvent::%s id %d never released",
                              c.idx, HardEventName(e), id);
                throw KernelFaultError(msg);
            }
    if (c.pipe != nullptr) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "core %d: TPipe: a TPipe outlived the kernel call", c.idx);
        throw KernelFaultError(msg);
    }
    // Static tensor programming (no TPipe) must end with PipeBarrier<PIPE_ALL>() (asc-devkit guide 静态Tensor编程,
    // 使用约束和限制): at the end the scalar pipe must know every pipe's issued work complete.
    if (c.staticTensors && !c.pipeSeen)
        for (int p = P_V; p < P_COUNT; ++p)
            if (c.sync[p][P_S] + 1 < c.seq[p]) {
                char msg[400];
                std::snprintf(msg, sizeof msg, "core %d: kernel end: pipe %s still has work the kernel never waited "
                              "for: static tensor programming (raw-address LocalTensor, no TPipe) must end with "
                              "PipeBarrier<PIPE_ALL>() (asc-devkit guide 静态Tensor编程, 使用约束和限制)", c.idx,
                              PipeName(p));
                throw KernelFaultError(msg);
            }
    // The DCCI bisheng puts at the kernel's tail by default writes dirty lines back: documented for 950 (asc-devkit
    // docs/zh guide 设置DCI编译选项来减少算子尾开销.md: without --cce-no-dcache-flush). For 2201 no document says so, but
    // the option exists for every target (cmake/asc/legacy_modules/bisheng_intf.cmake turns
    // -cce-aicore-dcci-before-kernel-end off for the c310 cube target only; the c220 targets keep the default) and
    // Huawei's A2 kernels rely on it (hicann/ops-nn loss/cross_entropy_loss/op_kernel/cross_entropy_loss.h ends with a
    // GlobalTensor::SetValue of the loss and no DataCacheCleanAndInvalid). 2002 writes back at TPipe destruction
    // (pipe.h); 1001 has no cache-flush instruction at all, so a line still dirty here reaches GM at no defined time.
    if (kArch == 2201 || kArch == 3510) {
        FlushAllLines();
    } else if (c.dirtyLines > 0) {
        for (auto& kv : c.dcache)
            if (kv.second.dirty) {
                char msg[400];
                std::snprintf(msg, sizeof msg, "core %d: GlobalTensor::SetValue: the 64-byte line [%llu, %llu) of GM "
                              "argument %d is still dirty in the data cache at kernel end: NpuArch %d %s", c.idx,
                              (unsigned long long)KeyOff(kv.first), (unsigned long long)(KeyOff(kv.first) + kLine),
                              KeyBuf(kv.first), kArch, kArch == 1001
                                  ? "has no data-cache write-back (no DataCacheCleanAndInvalid, no kernel-end DCCI)"
                                  : "writes dirty lines back only in TPipe::Destroy/~TPipe or DataCacheCleanAndInvalid");
                // Raised after the cross-core checks, whose faults name the cause more precisely.
                if (Rt().lostLineFault.empty()) Rt().lostLineFault = msg;
                break;
            }
    }
}

inline void ResetCore(CoreState& c, int idx, int num) {
    c.idx = idx;
    c.num = num;
    c.ub.assign(kUbBytes, 0xFF);
    c.init.assign(kUbBytes, 0);
    c.blocks.assign(kUbBytes / kBlock, BlockState{});
    for (int p = 0; p < P_COUNT; ++p) {
        c.seq[p] = 1;
        for (int q = 0; q < P_COUNT; ++q) c.sync[p][q] = 0;
    }
    c.slots.clear();
    c.pipe = nullptr;
    c.poolCursor = 0;
    c.buffersUsed = 0;
    c.flags.clear();
    std::memset(c.eventOccupy, 0, sizeof c.eventOccupy);
    std::memset(c.eventOwner, 0, sizeof c.eventOwner);
    c.bufferIds = 0;
    c.dcache.clear();
    c.dirtyLines = 0;
    c.mte3Lines.clear();
    c.pendingWb.clear();
    c.padValueSet = false;
    c.epochs = 0;
    c.vmask = VectorMaskState{};
    c.counters = CoreCounters{};
    c.tlog.clear();
    c.acc = OpAccum{};
    c.pendingVec = -1;
    c.tokens = 0;
    c.socStateInit = c.pipeSeen = c.staticTensors = false;
    c.mte3Pending.clear();
    c.mte3PendingOrder.clear();
    c.mte3PendingHead = 0;
    c.scalarReads.clear();
}

inline std::string ReportJson(int blockDim, const std::string& fault, double seconds) {
    std::ostringstream o;
    o << "{\"fault\":\"" << JsonEscape(fault) << "\",\"seconds\":" << seconds << ",\"block_dim\":" << blockDim
      << ",\"ub_kernel_bytes\":" << kUbKernelBytes << ",\"met\":" << Rt().met << ",\"first_met\":\""
      << JsonEscape(Rt().firstMet) << "\"";
    if (Rt().timing) {  // the event log's API names, by the ids its records carry
        o << ",\"api_names\":[";
        for (size_t i = 0; i < Rt().apiNames.size(); ++i) o << (i ? "," : "") << "\"" << JsonEscape(Rt().apiNames[i]) << "\"";
        o << "]";
    }
    o << ",\"cores\":[";
    const auto& cores = Rt().perCore;
    for (size_t i = 0; i < cores.size(); ++i) {
        const CoreCounters& c = cores[i];
        uint64_t mn = 0, mx = 0, small = 0, total = 0;
        for (size_t k = 0; k < c.dataCopyBytes.size(); ++k) {
            uint64_t v = c.dataCopyBytes[k];
            mn = k == 0 ? v : std::min(mn, v);
            mx = std::max(mx, v);
            small += v < 16384;
            total += v;
        }
        o << (i ? "," : "") << "{\"core\":" << i << ",\"gm_read_bytes\":" << c.gmReadBytes
          << ",\"gm_write_bytes\":" << c.gmWriteBytes << ",\"scalar_gm_reads\":" << c.scalarGmReads
          << ",\"scalar_gm_writes\":" << c.scalarGmWrites << ",\"tiling_reads\":" << c.tilingReads
          << ",\"data_copy_calls\":" << c.dataCopyCalls
          << ",\"data_copy_pad_calls\":" << c.dataCopyPadCalls << ",\"ub_peak_bytes\":" << c.ubPeakBytes
          << ",\"tiles\":" << c.tiles << ",\"vec_repeats\":" << c.vecRepeats << ",\"vec_elements\":" << c.vecElements
          << ",\"copy_bytes\":{\"count\":" << c.dataCopyBytes.size() << ",\"min\":" << mn << ",\"max\":" << mx
          << ",\"below_16k\":" << small << ",\"total\":" << total << "},\"buffer_ids_peak\":" << c.bufferIdsPeak
          << ",\"event_ids_peak\":{";
        bool firstEvent = true;
        for (int e = 0; e < kHardEventCount; ++e)
            if (c.eventIdsPeak[e] != 0) {
                o << (firstEvent ? "" : ",") << "\"" << HardEventName(e) << "\":" << int(c.eventIdsPeak[e]);
                firstEvent = false;
            }
        o << "},\"api\":{";
        bool first = true;
        for (const auto& kv : c.api) {
            o << (first ? "" : ",") << "\"" << JsonEscape(kv.first) << "\":[" << kv.second.calls << ","
              << kv.second.repeats << "," << kv.second.elements << "]";
            first = false;
        }
        o << "}}";
    }
    o << "],\"buffers\":[";
    for (size_t b = 0; b < Rt().gm.size(); ++b) {
        const GmBuffer& g = Rt().gm[b];
        o << (b ? "," : "") << "{\"size\":" << g.size << ",\"read_distinct\":" << Length(Merge(g.reads))
          << ",\"write_distinct\":" << Length(Merge(g.writes)) << ",\"by_core\":[";
        for (size_t i = 0; i < cores.size(); ++i) {
            int ci = static_cast<int>(i);
            std::vector<Interval> wr = Merge(g.writes, ci);
            o << (i ? "," : "") << "{\"read\":" << Total(g.reads, ci)
              << ",\"read_distinct\":" << Length(Merge(g.reads, ci)) << ",\"write\":" << Total(g.writes, ci)
              << ",\"write_distinct\":" << Length(wr) << ",\"write_ranges\":[";
            size_t shown = std::min<size_t>(wr.size(), 4096);
            for (size_t k = 0; k < shown; ++k)
                o << (k ? "," : "") << "[" << wr[k].begin << "," << wr[k].end << "]";
            o << "],\"write_ranges_truncated\":" << (wr.size() > shown ? "true" : "false") << "}";
        }
        o << "]}";
    }
    o << "]}";
    return o.str();
}

}  // namespace twin

extern "C" __attribute__((visibility("default"))) int twin_launch(int blockDim, int nargs, void** ptrs,
                                                                 const uint64_t* sizes, uint64_t tilingKey) {
    using namespace twin;
    Runtime& rt = Rt();
    rt.gm.clear();
    rt.perCore.clear();
    rt.pendingFault.clear();
    rt.tilingKey = tilingKey;
    rt.cancel = false;
    rt.scalarLineWriter.clear();
    rt.lostLineFault.clear();
    rt.logs.clear();
    rt.met = 0;
    rt.firstMet.clear();
    rt.kernelType = -1;
    for (int i = 0; i < nargs; ++i) {
        GmBuffer b;
        b.base = static_cast<uint8_t*>(ptrs[i]);
        b.size = sizes[i];
        rt.gm.push_back(b);
    }
    std::vector<GM_ADDR> args(nargs);
    for (int i = 0; i < nargs; ++i) args[i] = static_cast<GM_ADDR>(ptrs[i]);
    // One state per core: cores waiting in SyncAll keep theirs while others run (sync_all.h).
    static std::vector<CoreState> cores;
    if (cores.size() < static_cast<size_t>(blockDim)) cores.resize(blockDim);
    std::string fault;
    std::vector<uint8_t> ran(blockDim > 0 ? blockDim : 0, 0);
    auto t0 = std::chrono::steady_clock::now();
    RunCores(blockDim, cores, [&](int idx) {
        CoreState& core = cores[idx];
        ResetCore(core, idx, blockDim);
        rt.core = &core;
        ran[idx] = 1;
        std::string mine;
        if (rt.cancel) {
            mine = "twin: launch cancelled";
        } else {
            try {
                TwinInvoke(args.data());
                CheckCoreEnd(core);
            } catch (const AbortCore&) {
            } catch (const KernelFaultError& e) {
                mine = e.what();
            } catch (const std::exception& e) {
                mine = std::string("core ") + std::to_string(idx) + ": C++ exception: " + e.what();
            }
        }
        if (mine.empty() && fault.empty() && !rt.pendingFault.empty()) mine = rt.pendingFault;
        if (!mine.empty()) {
            if (fault.empty()) fault = mine;
            AbortLaunch();
        }
    });
    for (int idx = 0; idx < blockDim; ++idx)
        if (ran[idx]) {
            rt.perCore.push_back(cores[idx].counters);
            if (rt.timing) rt.logs.push_back(std::move(cores[idx].tlog));
        }
    AscendC::TwinCurrentPipe() = nullptr;
    rt.core = nullptr;
    if (fault.empty()) {
        try {
            CheckCrossCoreLines();
            CheckCrossCoreWrites();
            if (!rt.lostLineFault.empty()) fault = rt.lostLineFault;
        } catch (const KernelFaultError& e) {
            fault = e.what();
        }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Result().json = ReportJson(blockDim, fault, secs);
    return fault.empty() ? 0 : 1;
}

// Run-time options of the next launches (no rebuild): 1 = bisheng --cce-auto-sync=on, 0 = off.
extern "C" __attribute__((visibility("default"))) void twin_set_auto_sync(int on) { twin::Rt().autoSync = on != 0; }

// The open questions (core.h Question) the next launches answer the alternative way (bit set); 0 = primary answers.
extern "C" __attribute__((visibility("default"))) void twin_set_answers(uint32_t answers) { twin::Rt().answers = answers; }

// Blocks the SoC runs at once (its cores for a vector kernel); SyncAll with more blocks would hang. 0 = not given.
extern "C" __attribute__((visibility("default"))) void twin_set_soc_cores(int cores) { twin::Rt().socCores = cores; }

// 1 = record the event log of the time model in the next launches (no rebuild), 0 = off (the default).
extern "C" __attribute__((visibility("default"))) void twin_set_timing(int on) { twin::Rt().timing = on != 0; }

// The event log of core `core` of the last launch: `*count` TimeRecords of 40 bytes (nullptr when there is none).
extern "C" __attribute__((visibility("default"))) const void* twin_timing_log(int core, uint64_t* count) {
    const auto& logs = twin::Rt().logs;
    if (core < 0 || static_cast<size_t>(core) >= logs.size()) {
        *count = 0;
        return nullptr;
    }
    *count = logs[static_cast<size_t>(core)].size();
    return logs[static_cast<size_t>(core)].data();
}

// Stops the running launch (from another thread: Python's Ctrl-C); it ends with the fault "twin: launch cancelled".
extern "C" __attribute__((visibility("default"))) void twin_cancel() { twin::Rt().cancel = true; }

extern "C" __attribute__((visibility("default"))) const char* twin_result() { return twin::Result().json.c_str(); }
