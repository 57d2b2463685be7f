// Twin runtime state: simulated cores, GM buffers, UB with an initialisation shadow, pipe hazard tracking, faults and
// counters. Header-only (C++17 inline variables); one Runtime per loaded kernel library.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "config.h"

namespace twin {

// ----------------------------------------------------------------------------------------------------------------
// Faults
// ----------------------------------------------------------------------------------------------------------------

// Thrown at the first violated rule; the launcher turns it into lossgrad.twin.KernelFault.
struct KernelFaultError : std::runtime_error {
    explicit KernelFaultError(const std::string& m) : std::runtime_error(m) {}
};

inline std::string Format(const char* fmt, va_list ap) {
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    return buf;
}

// ----------------------------------------------------------------------------------------------------------------
// Pipes (for hazard tracking). Only the pipes a vector kernel uses are modelled.
// ----------------------------------------------------------------------------------------------------------------
enum PipeId : int { P_S = 0, P_V = 1, P_MTE2 = 2, P_MTE3 = 3, P_COUNT = 4, P_OTHER = 5 };
inline const char* PipeName(int p) {
    static const char* names[] = {"S", "V", "MTE2", "MTE3", "?", "other"};
    return names[p];
}

// Per 32-byte UB block: who wrote it last and when each pipe last read it (sequence numbers per pipe).
struct BlockState {
    uint64_t wseq = 0;
    uint64_t rseq[P_COUNT] = {0, 0, 0, 0};
    int8_t wpipe = -1;
    uint16_t wapi = 0;
    uint16_t rapi[P_COUNT] = {0, 0, 0, 0};
};

// What one pipe knows to be complete of every pipe's work (a vector clock). Synchronisation is transitive: when
// V waited for MTE2 and MTE3 then waits for V, MTE3 also knows MTE2's earlier work is complete.
struct Knowledge {
    uint64_t done[P_COUNT] = {0, 0, 0, 0};
    uint64_t token = 0;  // event-log token of the signal that carries this knowledge (0: none, or timing off)
};

// Number of AscendC::HardEvent values (HardEvent::MAX); pipe.h checks it against the enum.
constexpr int kHardEventCount = 35;

// ----------------------------------------------------------------------------------------------------------------
// Counters
// ----------------------------------------------------------------------------------------------------------------
struct ApiCount {
    uint64_t calls = 0;
    uint64_t repeats = 0;   // hardware instructions: 256-byte repeats issued
    uint64_t elements = 0;  // elements processed
};

struct CoreCounters {
    uint64_t gmReadBytes = 0, gmWriteBytes = 0;
    uint64_t scalarGmReads = 0, scalarGmWrites = 0;
    uint64_t tilingReads = 0;  // GET_TILING_DATA's 32-bit scalar loads of the tiling struct (not in the above)
    uint64_t dataCopyCalls = 0, dataCopyPadCalls = 0;
    uint64_t ubPeakBytes = 0;
    uint64_t tiles = 0;  // EnQue calls on VECOUT queues: one per pipeline tile of output
    uint64_t vecRepeats = 0, vecElements = 0;
    std::map<std::string, ApiCount> api;
    std::vector<uint64_t> dataCopyBytes;  // bytes moved per DataCopy/DataCopyPad call (GM side), in call order
    uint8_t eventIdsPeak[kHardEventCount] = {};  // per HardEvent: most IDs of its pool held at once
    uint32_t bufferIdsPeak = 0;                  // NpuArch 3510: TQue buffer (mutex) IDs allocated at once
};

// ----------------------------------------------------------------------------------------------------------------
// Event log of the time model (lossgrad.timing, docs/timing.md "Event log"): off unless twin_set_timing(1). One
// fixed-size binary record per pipe operation, per core, in program order; Python reads them as a NumPy structured
// array (lossgrad/timing/events.py mirrors this layout).
// ----------------------------------------------------------------------------------------------------------------
enum TimeKind : uint8_t {
    TK_COPY = 1,         // MTE2 (GM->UB) / MTE3 (UB->GM): a = UB addr, b = bursts, c = longest burst bytes,
                         //   gmBuf, x = GM bytes, y = GM offset of the first burst in its buffer, d = bursts whose
                         //   GM offset is not 32-byte aligned (bits 0-15) and not 128-byte aligned (bits 16-31),
                         //   flags = the GlobalTensor's CacheMode (0 = CACHE_MODE_DISABLE)
    TK_VEC = 2,          // V: a = dst, b = src0, c = src1 UB addr (kNoAddr: none), d = repeats, dtype,
                         //   x = elements, y = V sequence number of the vector op it depends on (0: none),
                         //   gmBuf = chunks of a high-level API's instruction sequence (Sign; -1: one instruction)
    TK_SCALAR = 3,       // S: a = UB scalar accesses, b = GM scalar reads, c = GM scalar writes (aggregated)
    TK_SET = 4,          // pipe signals token x (a = HardEvent, kNoAddr for a queue's internal signal)
    TK_WAIT = 5,         // pipe waits for token x
    TK_BARRIER = 6,      // PipeBarrier<pipe>
    TK_BARRIER_ALL = 7,  // PipeBarrier<PIPE_ALL>: every pipe waits for every pipe's earlier work
    TK_SYNC_ALL = 8,     // cross-core barrier: every core waits until every core reached it
};
constexpr uint32_t kNoAddr = 0xFFFFFFFFu;

struct TimeRecord {
    uint8_t kind = 0, pipe = 0, dtype = 0, flags = 0;
    uint16_t api = 0;
    int16_t gmBuf = -1;
    uint32_t a = kNoAddr, b = kNoAddr, c = kNoAddr, d = 0;
    uint64_t x = 0, y = 0;
};
static_assert(sizeof(TimeRecord) == 40, "TimeRecord layout is mirrored by lossgrad/timing/events.py");

// What the accesses of the operation in progress have shown, until NextOp(pipe) logs it.
struct OpAccum {
    uint16_t api = 0;
    uint32_t ub = kNoAddr, dst = kNoAddr, src0 = kNoAddr, src1 = kNoAddr;
    const char* src0Name = nullptr;
    uint32_t bursts = 0, mis32 = 0, mis128 = 0;
    uint64_t burstMax = 0, bytes = 0, gmOff = 0, dep = 0;
    int16_t gmBuf = -1;
    uint8_t cache = 1;  // AscendC::CacheMode of the copy's GlobalTensor (1: CACHE_MODE_NORMAL)
};

// ----------------------------------------------------------------------------------------------------------------
// GM buffers passed by the host (exact bounds, access intervals for read-once and cross-core overlap checks)
// ----------------------------------------------------------------------------------------------------------------
struct Interval {
    uint64_t begin, end;  // byte offsets within the buffer
    int32_t core;
};

struct GmBuffer {
    uint8_t* base = nullptr;
    uint64_t size = 0;
    std::vector<Interval> reads, writes;
};

// ----------------------------------------------------------------------------------------------------------------
// UB slots: every buffer handed out by TPipe (a TQue buffer or a TBuf), with its ownership state.
// ----------------------------------------------------------------------------------------------------------------
enum class SlotState : uint8_t { FREE, ALLOCATED, ENQUEUED, DEQUEUED, TBUF };

struct Slot {
    uint32_t addr = 0, len = 0;
    uint8_t pos = 0;            // TPosition value
    SlotState state = SlotState::FREE;
    uint32_t epoch = 0;         // renewed on alloc/free so stale LocalTensor handles are caught
    const void* owner = nullptr;
    Knowledge freeRecord;       // consumer's knowledge at FreeTensor (WAR sync for the next AllocTensor)
    int8_t freeEvtId = -1;      // ID of the queue's free event reserved by FreeTensor until the next AllocTensor
    int8_t freeEvt = -1;        // its HardEvent
    int8_t enqEvtId = -1;       // ID of the queue's enqueue event held from EnQue to DeQue
    int8_t enqEvt = -1;         // its HardEvent
    bool depth0 = false;        // a depth-0 queue's buffer: both IDs held from InitBuffer until Reset/Destroy
    Knowledge enqRecord;        // depth 0 without event IDs (3510): the producer's signal at EnQue
};

// Who holds an event ID of a per-core pool (asc-devkit impl/basic_api/kernel_tpipe_impl.h: one pool per HardEvent,
// shared by the TQue internals and the kernel's own TPipe::AllocEventID).
enum class IdOwner : uint8_t { NONE, KERNEL, QUE_FREE, QUE_ENQUE, QUE_DEPTH0, COUNT };

// One 64-byte line of a core's scalar data cache (DCache), keyed by GM buffer and line index within the buffer.
struct CacheLine {
    uint8_t bytes[64];
    uint32_t valid = 0;          // bytes of the line inside the host buffer
    bool dirty = false;          // written by SetValue since it was cached
    const char* staleBy = nullptr;  // an MTE3 write changed the GM bytes after the line was cached
};

// A DataCacheCleanAndInvalid write-back issued by the scalar unit and not yet known complete.
struct PendingWriteBack {
    uint64_t sSeq = 0;     // the DCCI's place on PIPE_S: a DMA pipe must know PIPE_S's work up to here
    bool dsb = false;      // a DataSyncBarrier followed it (NpuArch 2201/3510)
};

// A DMA write to GM by MTE3 that MTE3 does not yet know complete: a later MTE3 write overlapping it needs
// PipeBarrier<PIPE_MTE3> (or a signal carrying that knowledge back to MTE3) first.
struct PendingGmWrite {
    uint64_t end = 0;   // byte offset just past the write, in its GM buffer
    uint64_t seq = 0;   // the copy's place on PIPE_MTE3
    uint16_t api = 0;
};

// Scalar GM reads (GlobalTensor::GetValue) of one 64-byte line: per byte, the PIPE_S place of its last read (0: none).
struct ScalarReadLine {
    uint32_t seq[64] = {};
    uint64_t last = 0;  // the largest of them
};

struct Flag {
    bool set = false;
    Knowledge know;             // the source pipe's knowledge when the flag was set
};

// The vector mask register (SetVectorMask / SetMaskCount / SetMaskNorm) and the 128-bit CMPMASK register.
// `valid` is the twin's strictness addition: a level-0 call with isSetMask=false may only use a mask the kernel set
// itself since the last reset (level-2 APIs end with ResetMask + SetMaskNorm, clobbering any user mask).
struct VectorMaskState {
    bool counter = false;          // MaskMode::COUNTER (SetMaskCount) vs NORMAL
    uint64_t hi = ~0ull, lo = ~0ull;
    bool valid = false;
    const char* resetBy = "kernel start";
    uint64_t cmp[2] = {0, 0};
    bool cmpValid = false;
};

struct CoreState {
    int32_t idx = 0, num = 1;
    std::vector<uint8_t> ub, init;     // UB bytes and a per-byte "written since allocation" shadow
    std::vector<BlockState> blocks;    // per 32-byte block hazard state
    uint64_t seq[P_COUNT] = {1, 1, 1, 1};
    uint64_t sync[P_COUNT][P_COUNT] = {};  // sync[P][Q]: ops of pipe P with seq <= value are visible to pipe Q
    std::vector<Slot> slots;
    const void* pipe = nullptr;        // the live TPipe
    uint32_t poolCursor = 0;           // bump allocator inside the TPipe pool
    uint32_t buffersUsed = 0;          // InitBuffer buffers (limit 64)
    std::map<int, Flag> flags;         // key: event * 16 + id
    uint32_t eventOccupy[kHardEventCount] = {};       // per HardEvent: bit i set = ID i held
    IdOwner eventOwner[kHardEventCount][16] = {};
    uint32_t bufferIds = 0;            // NpuArch 3510: TQue buffer IDs allocated by InitBuffer
    std::map<uint64_t, CacheLine> dcache;  // key: GM buffer << 40 | line index
    uint32_t dirtyLines = 0;
    std::unordered_map<uint64_t, uint64_t> mte3Lines;  // GM line -> MTE3 seq of this core's last DMA write into it
    std::map<uint64_t, PendingWriteBack> pendingWb;   // GM line -> DCCI write-back not yet known complete
    bool padValueSet = false;          // the MOV_PAD_VAL register: SetPadValue and DataCopyPad(isPad=true) write it
    uint64_t padValueBits = 0;
    uint32_t padValueSize = 0;
    uint32_t epochs = 0;               // epoch source: never reused within a launch
    VectorMaskState vmask;
    CoreCounters counters;
    std::vector<TimeRecord> tlog;      // the event log (timing on only)
    OpAccum acc;                       // the operation in progress (timing on only)
    int64_t pendingVec = -1;           // tlog index of the last TK_VEC, until CountApi gives its repeats
    uint64_t tokens = 0;               // event-log tokens issued
    bool socStateInit = false;         // InitSocState() called or a TPipe constructed (which initialises the state)
    bool pipeSeen = false;             // a TPipe was constructed on this core
    bool staticTensors = false;        // a raw-address LocalTensor was built (static tensor programming)
    std::map<uint64_t, PendingGmWrite> mte3Pending;  // key: GM buffer << 40 | begin offset; disjoint intervals
    std::vector<uint64_t> mte3PendingOrder;           // their keys in PIPE_MTE3 order (oldest first)
    size_t mte3PendingHead = 0;                       // entries of mte3PendingOrder before it are purged
    std::unordered_map<uint64_t, ScalarReadLine> scalarReads;  // GM line -> GetValue reads MTE3 may not know of
};

// Device behaviour public sources leave open (docs/twin.md, "Questions the sources leave open"). A launch answers each
// question one way (twin_set_answers: bit set = the alternative answer) and records which it met; the caller
// (lossgrad.twin.run_kernel) then runs the launch again with the other answers and faults when the outputs differ.
enum Question : uint32_t {
    Q_FLOAT32_SATURATION = 1u << 0,  // 310P/910: a computed float32 Inf/NaN saturates (primary) or stays IEEE
    Q_NAN_IN_MAX_MIN = 1u << 1,      // Max/Min/Maxs/Mins with one NaN operand: NaN (primary) or the other operand
};

struct Runtime {
    std::vector<GmBuffer> gm;
    std::vector<CoreCounters> perCore;
    CoreState* core = nullptr;
    std::string pendingFault;  // first fault recorded where throwing is impossible (destructors)
    uint64_t tilingKey = 0;
    std::atomic<bool> cancel{false};  // twin_cancel() (Ctrl-C): the launch stops at the next output tile or core
    bool autoSync = true;      // bisheng --cce-auto-sync=on: S<->V/MTE2/MTE3 synchronisation inserted by the compiler
    bool timing = false;       // twin_set_timing: record the event log of the time model
    std::vector<std::vector<TimeRecord>> logs;  // per core, moved from CoreState::tlog when the core ends
    std::unordered_map<uint64_t, int32_t> scalarLineWriter;  // GM line (buffer << 40 | line) -> core that SetValue'd it
    std::string lostLineFault;  // a core ended with a dirty line its arch never writes back (launcher.h CheckCoreEnd)
    std::vector<std::string> apiNames{"?"};
    uint16_t lastApi = 0;      // the API of the latest UB access (names where an open question was met)
    uint32_t answers = 0;      // twin_set_answers: the Questions answered the alternative way in this launch
    uint32_t met = 0;          // the Questions this launch met
    std::string firstMet;      // where it first met one: "core N: API: question"
    int32_t socCores = 0;      // twin_set_soc_cores: blocks the SoC runs at once (0: not given)
    int32_t kernelType = -1;   // the KERNEL_TASK_TYPE(_DEFAULT) in force for this launch (-1: none declared)
    uint16_t ApiId(const char* name) {
        for (size_t i = 0; i < apiNames.size(); ++i)
            if (apiNames[i] == name) return static_cast<uint16_t>(i);
        apiNames.emplace_back(name);
        return static_cast<uint16_t>(apiNames.size() - 1);
    }
};

inline Runtime& Rt() {
    static Runtime r;
    return r;
}

inline CoreState& Core() {
    CoreState* c = Rt().core;
    if (c == nullptr) throw KernelFaultError("twin: Ascend C API used outside a kernel launch");
    return *c;
}

// "core N: API: detail", the form every fault message takes.
inline std::string FaultMessage(const char* api, const char* fmt, va_list ap) {
    int core = Rt().core ? Rt().core->idx : -1;
    char head[128];
    std::snprintf(head, sizeof head, "core %d: %s: ", core, api);
    return head + Format(fmt, ap);
}

[[noreturn]] inline void Fault(const char* api, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string message = FaultMessage(api, fmt, ap);
    va_end(ap);
    throw KernelFaultError(message);
}

// Record a fault where an exception cannot propagate (destructors). The launcher raises it after the core returns.
inline void DeferFault(const char* api, const char* fmt, ...) {
    if (!Rt().pendingFault.empty()) return;
    va_list ap;
    va_start(ap, fmt);
    Rt().pendingFault = FaultMessage(api, fmt, ap);
    va_end(ap);
}

inline CoreCounters& Counters() { return Core().counters; }

// The kernel meets an open question (the Question enum): recorded, with the API of the latest UB access and `what`;
// returns whether this launch answers it the alternative way.
inline bool Alternative(Question q, const char* what) {
    Runtime& r = Rt();
    if (r.firstMet.empty()) {
        char head[160];
        std::snprintf(head, sizeof head, "core %d: %s: ", r.core ? r.core->idx : -1, r.apiNames[r.lastApi].c_str());
        r.firstMet = std::string(head) + what;
    }
    r.met |= q;
    return (r.answers & q) != 0;
}

inline uint32_t NewEpoch() { return ++Core().epochs; }

// `dtype`: DtypeCode<T>() of a vector instruction, for the event log.
inline void CountApi(const char* api, uint64_t repeats, uint64_t elements, uint8_t dtype = 0) {
    if (Rt().timing) {
        CoreState& cs = Core();
        // The vector instruction NextOp(P_V) just logged (nothing logged since) takes the call's figures.
        if (cs.pendingVec >= 0 && static_cast<size_t>(cs.pendingVec) + 1 == cs.tlog.size()) {
            TimeRecord& r = cs.tlog[static_cast<size_t>(cs.pendingVec)];
            const uint16_t id = Rt().ApiId(api);
            if (r.api == id || repeats > 0) {
                r.d = static_cast<uint32_t>(repeats);
                r.x = elements;
                r.dtype = dtype;
                r.api = id;
            }
        }
        cs.pendingVec = -1;
    }
    CoreCounters& c = Counters();
    ApiCount& a = c.api[api];
    a.calls += 1;
    a.repeats += repeats;
    a.elements += elements;
    c.vecRepeats += repeats;
    c.vecElements += elements;
}

// ----------------------------------------------------------------------------------------------------------------
// GM access
// ----------------------------------------------------------------------------------------------------------------

// Index of the host GM buffer containing [p, p + bytes), or a fault naming the nearest buffer.
inline int FindGm(const char* api, const void* p, uint64_t bytes) {
    const auto* q = static_cast<const uint8_t*>(p);
    const auto& gm = Rt().gm;
    for (size_t i = 0; i < gm.size(); ++i) {
        const GmBuffer& b = gm[i];
        if (q >= b.base && q <= b.base + b.size) {
            uint64_t off = static_cast<uint64_t>(q - b.base);
            if (off + bytes > b.size)
                Fault(api, "GM access [%llu, %llu) past the end of GM argument %zu (%llu bytes)",
                      (unsigned long long)off, (unsigned long long)(off + bytes), i, (unsigned long long)b.size);
            return static_cast<int>(i);
        }
    }
    Fault(api, "address %p is not inside any GM buffer the host passed", p);
}

inline void RecordGm(int buf, const void* p, uint64_t bytes, bool write) {
    if (bytes == 0) return;
    GmBuffer& b = Rt().gm[buf];
    uint64_t off = static_cast<uint64_t>(static_cast<const uint8_t*>(p) - b.base);
    Interval iv{off, off + bytes, Core().idx};
    std::vector<Interval>& list = write ? b.writes : b.reads;
    // Coalesce with the previous access of the same core when contiguous (keeps the lists short).
    if (!list.empty() && list.back().core == iv.core && list.back().end == iv.begin) {
        list.back().end = iv.end;
    } else {
        list.push_back(iv);
    }
    CoreCounters& c = Counters();
    (write ? c.gmWriteBytes : c.gmReadBytes) += bytes;
}

// Event log: one burst of the DMA copy in progress (GM side).
inline void LogBurst(int buf, const void* p, uint64_t bytes, uint8_t cacheMode) {
    OpAccum& a = Core().acc;
    a.cache = cacheMode;
    const uint64_t off = static_cast<uint64_t>(static_cast<const uint8_t*>(p) - Rt().gm[buf].base);
    if (a.bursts == 0) {
        a.gmBuf = static_cast<int16_t>(buf);
        a.gmOff = off;
    }
    a.mis32 += off % 32 != 0;
    a.mis128 += off % 128 != 0;
    a.bursts += 1;
    a.bytes += bytes;
    if (bytes > a.burstMax) a.burstMax = bytes;
}

// Event log: scalar accesses, merged into the S record they follow (S work between other events).
inline void LogScalar(uint32_t ub, uint32_t gmRead, uint32_t gmWrite) {
    std::vector<TimeRecord>& log = Core().tlog;
    if (log.empty() || log.back().kind != TK_SCALAR) {
        TimeRecord r;
        r.kind = TK_SCALAR;
        r.pipe = P_S;
        r.a = r.b = r.c = 0;
        log.push_back(r);
    }
    TimeRecord& r = log.back();
    r.a += ub;
    r.b += gmRead;
    r.c += gmWrite;
}

inline void LogRecord(uint8_t kind, int pipe, uint16_t api, uint64_t token = 0, uint32_t a = kNoAddr) {
    TimeRecord r;
    r.kind = kind;
    r.pipe = static_cast<uint8_t>(pipe);
    r.api = api;
    r.x = token;
    r.a = a;
    Core().tlog.push_back(r);
}

// A cross-core barrier (SyncAll): every core waits until all cores reached it. For the APIs that add one.
inline void LogSyncAll(const char* api) {
    if (Rt().timing) LogRecord(TK_SYNC_ALL, P_S, Rt().ApiId(api));
}

// ----------------------------------------------------------------------------------------------------------------
// Scalar GM access through the core's data cache (DCache): 64-byte lines, write-back. GlobalTensor::GetValue/SetValue
// go through it; SetValue only dirties the line, which reaches GM as a whole line at DataCacheCleanAndInvalid,
// eviction or the kernel's tail DCCI (asc-devkit docs/zh: GlobalTensor/SetValue.md, GetValue.md 约束说明,
// DataCacheCleanAndInvalid.md, guide 缓存一致性.md and Scalar读写数据.md). Lines are counted from each GM buffer's
// start (device allocations are at least 64-byte aligned). Where the outcome on the device is undefined the twin
// faults. Only scalar accesses create lines, so DMA copies pay for the checks only while lines are cached.
// ----------------------------------------------------------------------------------------------------------------
constexpr uint64_t kLine = 64;

inline bool AutoSync(int from, int to);

inline uint64_t LineKey(int buf, uint64_t off) { return static_cast<uint64_t>(buf) << 40 | off / kLine; }
inline int KeyBuf(uint64_t key) { return static_cast<int>(key >> 40); }
inline uint64_t KeyOff(uint64_t key) { return (key & ((1ull << 40) - 1)) * kLine; }
inline uint64_t KeyOffset(uint64_t key) { return key & ((1ull << 40) - 1); }  // of a byte-offset key (not a line's)

inline CacheLine& LoadLine(int buf, uint64_t off) {
    CoreState& c = Core();
    const uint64_t key = LineKey(buf, off);
    auto it = c.dcache.find(key);
    if (it != c.dcache.end()) return it->second;
    CacheLine& l = c.dcache[key];
    const GmBuffer& b = Rt().gm[buf];
    const uint64_t base = KeyOff(key);
    l.valid = static_cast<uint32_t>(std::min<uint64_t>(kLine, b.size - base));
    std::memcpy(l.bytes, b.base + base, l.valid);
    return l;
}

inline void WriteBack(uint64_t key, CacheLine& l) {
    if (!l.dirty) return;
    std::memcpy(Rt().gm[KeyBuf(key)].base + KeyOff(key), l.bytes, l.valid);
    l.dirty = false;
    Core().dirtyLines -= 1;
}

// DataCacheCleanAndInvalid of one line (clean = write back if dirty, invalid = drop) or of the whole cache.
inline void FlushLine(int buf, uint64_t off) {
    CoreState& c = Core();
    auto it = c.dcache.find(LineKey(buf, off));
    if (it == c.dcache.end()) return;
    WriteBack(it->first, it->second);
    c.dcache.erase(it);
}

inline void FlushAllLines() {
    CoreState& c = Core();
    for (auto& kv : c.dcache) WriteBack(kv.first, kv.second);
    c.dcache.clear();
}

// A scalar access of a GM line this core's MTE3 wrote, with no MTE3->S synchronisation since: the data cache can
// load the line before the DMA's bytes land (a stale read), and a SetValue's later write-back puts those old bytes
// back over the DMA's. Auto-sync covers GlobalTensor::GetValue but not SetValue (asc-devkit docs/zh/api/SIMD-API/
// 基础API/同步控制/核内同步/关键特性说明.md: the PIPE_S APIs bisheng synchronises).
inline void ScalarAfterMte3(const char* api, int buf, uint64_t at, bool write) {
    CoreState& c = Core();
    if (c.mte3Lines.empty()) return;
    auto it = c.mte3Lines.find(LineKey(buf, at));
    if (it == c.mte3Lines.end() || it->second <= c.sync[P_MTE3][P_S]) return;
    if (!write && AutoSync(P_MTE3, P_S)) return;
    const uint64_t lo = at - at % kLine;
    Fault(api, "%s the 64-byte line [%llu, %llu) of GM argument %d that this core's MTE3 wrote, with no MTE3->S "
               "synchronisation: the data cache can load the line before the DMA's bytes land%s (SetFlag/WaitFlag"
               "<HardEvent::MTE3_S> first%s)", write ? "SetValue into" : "GetValue from", (unsigned long long)lo,
          (unsigned long long)(lo + kLine), buf,
          write ? " and write the old bytes back over them" : "",
          write ? "; auto-sync does not cover GlobalTensor::SetValue (asc-devkit 关键特性说明.md)" : "");
}

// Bytes [off, off + n) of GM buffer `buf` through the cache.
inline void ScalarGmRead(const char* api, int buf, uint64_t off, void* out, uint64_t n) {
    for (uint64_t done = 0; done < n;) {
        const uint64_t at = off + done, in = at % kLine, take = std::min(n - done, kLine - in);
        ScalarAfterMte3(api, buf, at, false);
        const CacheLine& l = LoadLine(buf, at);
        if (l.staleBy != nullptr)
            Fault(api, "stale read of GM argument %d bytes [%llu, %llu): its 64-byte line [%llu, %llu) was in this "
                       "core's data cache before %s (MTE3) wrote GM there, so GetValue returns the old bytes; call "
                       "DataCacheCleanAndInvalid on the line before reading it", buf, (unsigned long long)at,
                  (unsigned long long)(at + take), (unsigned long long)(at - in),
                  (unsigned long long)(at - in + kLine), l.staleBy);
        std::memcpy(static_cast<uint8_t*>(out) + done, l.bytes + in, take);
        ScalarReadLine& r = Core().scalarReads[LineKey(buf, at)];
        const uint64_t s = Core().seq[P_S];
        for (uint64_t b = in; b < in + take; ++b) r.seq[b] = static_cast<uint32_t>(s);
        r.last = s;
        done += take;
    }
    Core().seq[P_S] += 1;  // the read's own place on PIPE_S (a later S->MTE3 signal carries it); logged by GetValue
}

inline void ScalarGmWrite(const char* api, int buf, uint64_t off, const void* in, uint64_t n) {
    CoreState& c = Core();
    for (uint64_t done = 0; done < n;) {
        const uint64_t at = off + done, pos = at % kLine, take = std::min(n - done, kLine - pos);
        const uint64_t lo = at - pos;
        auto w = Rt().scalarLineWriter.emplace(LineKey(buf, at), c.idx).first;
        if (w->second != c.idx)
            Fault(api, "cores %d and %d both write the 64-byte line [%llu, %llu) of GM argument %d with SetValue: each "
                       "core's data cache writes the whole line back, so one core's bytes are lost at random "
                       "(cores must write addresses at least a cache line apart)", w->second, c.idx,
                  (unsigned long long)lo, (unsigned long long)(lo + kLine), buf);
        ScalarAfterMte3(api, buf, at, true);
        CacheLine& l = LoadLine(buf, at);
        if (l.staleBy != nullptr)
            Fault(api, "SetValue into the 64-byte line [%llu, %llu) of GM argument %d, which was in this core's data "
                       "cache before %s (MTE3) wrote GM there: the line's write-back would put the old bytes back; "
                       "call DataCacheCleanAndInvalid on the line first", (unsigned long long)lo,
                  (unsigned long long)(lo + kLine), buf, l.staleBy);
        std::memcpy(l.bytes + pos, static_cast<const uint8_t*>(in) + done, take);
        if (!l.dirty) {
            l.dirty = true;
            c.dirtyLines += 1;
        }
        done += take;
    }
}

// An MTE3 write of GM bytes [off, off + n) of `buf` overlapping an earlier MTE3 write MTE3 does not know complete:
// DMA writes to overlapping GM complete in no guaranteed order, so the later one needs PipeBarrier<PIPE_MTE3> (or a
// signal carrying that knowledge back to MTE3) first, with auto-sync on too (asc-devkit docs/zh PipeBarrier(ISASI).md
// 约束说明; 关键特性说明.md, 单流水同步). Bursts of one copy share its place on the pipe and never conflict.
inline void Mte3Overlap(const char* api, int buf, uint64_t off, uint64_t n) {
    CoreState& c = Core();
    const uint64_t known = c.sync[P_MTE3][P_MTE3], now = c.seq[P_MTE3];
    std::vector<uint64_t>& order = c.mte3PendingOrder;
    for (; c.mte3PendingHead < order.size(); ++c.mte3PendingHead) {  // oldest first: drop what MTE3 knows done
        auto it = c.mte3Pending.find(order[c.mte3PendingHead]);
        if (it == c.mte3Pending.end()) continue;  // a later burst of the same copy at the same offset replaced it
        if (it->second.seq > known) break;
        c.mte3Pending.erase(it);
    }
    if (c.mte3PendingHead == order.size()) {
        order.clear();
        c.mte3PendingHead = 0;
    }
    const uint64_t key = static_cast<uint64_t>(buf) << 40 | off, end = off + n;
    auto it = c.mte3Pending.upper_bound(key);
    if (it != c.mte3Pending.begin() && KeyBuf(std::prev(it)->first) == buf && std::prev(it)->second.end > off) --it;
    for (; it != c.mte3Pending.end() && KeyBuf(it->first) == buf && KeyOffset(it->first) < end; ++it) {
        const PendingGmWrite& w = it->second;
        if (w.end <= off || w.seq == now) continue;
        Fault(api, "MTE3 writes bytes [%llu, %llu) of GM argument %d, which the earlier %s (MTE3) also writes, with "
                   "no PipeBarrier<PIPE_MTE3> (or signal back to MTE3) between them: copies to overlapping GM "
                   "complete in no guaranteed order (asc-devkit docs/zh PipeBarrier(ISASI).md 约束说明; auto-sync does "
                   "not insert it)", (unsigned long long)std::max(off, KeyOffset(it->first)),
              (unsigned long long)std::min(end, w.end), buf, Rt().apiNames[w.api].c_str());
    }
    c.mte3Pending[key] = PendingGmWrite{end, now, Rt().ApiId(api)};
    order.push_back(key);
}

// An MTE3 write of GM bytes this core's scalar unit read with GlobalTensor::GetValue and MTE3 does not know the read
// done: the copy can land first, and the read returns the new bytes. Needs S->MTE3 synchronisation, which bisheng's
// auto-sync inserts (GlobalTensor::GetValue is among the PIPE_S APIs it covers, 关键特性说明.md table 3).
inline void Mte3AfterScalarRead(const char* api, int buf, uint64_t off, uint64_t n) {
    CoreState& c = Core();
    if (c.scalarReads.empty()) return;
    for (uint64_t k = LineKey(buf, off), last = LineKey(buf, off + n - 1); k <= last; ++k) {
        auto it = c.scalarReads.find(k);
        if (it == c.scalarReads.end()) continue;
        if (it->second.last <= c.sync[P_S][P_MTE3]) {
            c.scalarReads.erase(it);
            continue;
        }
        const uint64_t lo = KeyOff(k);
        for (uint64_t b = std::max(off, lo); b < std::min(off + n, lo + kLine); ++b) {
            if (it->second.seq[b - lo] <= c.sync[P_S][P_MTE3]) continue;
            if (AutoSync(P_S, P_MTE3)) break;
            Fault(api, "MTE3 writes byte %llu of GM argument %d, which GlobalTensor::GetValue read before it with no "
                       "S->MTE3 synchronisation: the copy can land before the scalar read (SetFlag/WaitFlag"
                       "<HardEvent::S_MTE3> between them; bisheng's --cce-auto-sync=on inserts it)",
                  (unsigned long long)b, buf);
        }
    }
}

// A DMA access of GM bytes [off, off + n) of `buf` by this core: MTE3 (write) or MTE2 (read).
inline void DmaTouchesLines(const char* api, int buf, uint64_t off, uint64_t n, bool write) {
    CoreState& c = Core();
    if (n == 0) return;
    const int pipe = write ? P_MTE3 : P_MTE2;
    if (write) {
        Mte3Overlap(api, buf, off, n);
        Mte3AfterScalarRead(api, buf, off, n);
    }
    if (write)  // for the MTE3 -> scalar rule (ScalarAfterMte3)
        for (uint64_t k = LineKey(buf, off), last = LineKey(buf, off + n - 1); k <= last; ++k) c.mte3Lines[k] = c.seq[P_MTE3];
    if (!c.pendingWb.empty()) {
        auto p = c.pendingWb.lower_bound(LineKey(buf, off));
        const uint64_t last = LineKey(buf, off + n - 1);
        while (p != c.pendingWb.end() && p->first <= last) {
            const uint64_t lo = KeyOff(p->first);
            if (kHasDataSyncBarrier && !p->second.dsb)
                Fault(api, "%s bytes [%llu, %llu) of GM argument %d while the DataCacheCleanAndInvalid write-back of "
                           "its 64-byte line [%llu, %llu) may still be in flight: call DataSyncBarrier<MemDsbT::DDR> "
                           "(or ALL) after the DCCI (asc-devkit docs/zh DataSyncBarrier(ISASI).md)",
                      write ? "MTE3 writes" : "MTE2 reads", (unsigned long long)off, (unsigned long long)(off + n), buf,
                      (unsigned long long)lo, (unsigned long long)(lo + kLine));
            if (c.sync[P_S][pipe] < p->second.sSeq)
                Fault(api, "%s bytes [%llu, %llu) of GM argument %d with no S->%s synchronisation after the "
                           "DataCacheCleanAndInvalid of its 64-byte line [%llu, %llu): the DMA can run before the "
                           "scalar unit's write-back (auto-sync does not cover DCCI; SetFlag/WaitFlag<HardEvent::S_%s> "
                           "or PipeBarrier<PIPE_ALL>)",
                      write ? "MTE3 writes" : "MTE2 reads", (unsigned long long)off, (unsigned long long)(off + n), buf,
                      PipeName(pipe), (unsigned long long)lo, (unsigned long long)(lo + kLine), PipeName(pipe));
            p = c.pendingWb.erase(p);
        }
    }
    if (c.dcache.empty() || (!write && c.dirtyLines == 0)) return;
    auto it = c.dcache.lower_bound(LineKey(buf, off));
    const uint64_t last = LineKey(buf, off + n - 1);
    for (; it != c.dcache.end() && it->first <= last; ++it) {
        const uint64_t lo = KeyOff(it->first);
        if (it->second.dirty)
            Fault(api, "%s bytes [%llu, %llu) of GM argument %d, inside the 64-byte line [%llu, %llu) that holds "
                       "SetValue data still dirty in this core's data cache: %s; call DataCacheCleanAndInvalid on "
                       "the line after SetValue", write ? "MTE3 writes" : "MTE2 reads", (unsigned long long)off,
                  (unsigned long long)(off + n), buf, (unsigned long long)lo, (unsigned long long)(lo + kLine),
                  write ? "the line's later write-back overwrites what the copy wrote (or the copy overwrites the "
                          "SetValue data)" : "the copy reads the old GM bytes");
        if (write) it->second.staleBy = api;
    }
}

// ----------------------------------------------------------------------------------------------------------------
// UB access: bounds, alignment, initialisation and pipe hazards
// ----------------------------------------------------------------------------------------------------------------

inline void PoisonUb(uint32_t addr, uint32_t len) {
    CoreState& c = Core();
    std::memset(c.ub.data() + addr, 0xFF, len);   // NaN pattern for every float type
    std::memset(c.init.data() + addr, 0, len);
}

inline void MarkInit(uint32_t addr, uint32_t len) { std::memset(Core().init.data() + addr, 1, len); }

inline void RequireInit(const char* api, const char* operand, uint32_t addr, uint32_t len) {
    const uint8_t* s = Core().init.data() + addr;
    const void* hole = std::memchr(s, 0, len);
    if (hole != nullptr) {
        uint32_t at = addr + static_cast<uint32_t>(static_cast<const uint8_t*>(hole) - s);
        const bool scratch = (kArch == 2201 || kArch == 2002 || kArch == 1001) && at >= kUbKernelBytes;
        Fault(api, "%s reads UB byte 0x%x that was never written since its buffer was allocated "
                   "(uninitialised data; on hardware this is stale garbage)%s", operand, at,
              scratch ? "; it lies in the reserved scratch at TMP_UB_OFFSET, which APIs such as Select overwrite" : "");
    }
}

inline void SyncPipes(int from, int to, uint64_t seq);
inline void Acquire(int pipe, const Knowledge& k);
inline Knowledge Snapshot(int pipe);
inline Knowledge Signal(int pipe, const char* api, uint32_t event = kNoAddr);
inline void Receive(int pipe, const Knowledge& k, const char* api);

// Event log: what an access of the operation in progress shows (operand UB addresses) and, with auto-sync, the
// vector op it depends on: the last earlier V op that wrote a block it reads or writes (RAW/WAW) or read a block it
// writes (WAR). Before the hazard bookkeeping below updates the blocks.
inline void LogAccess(CoreState& c, uint16_t id, int pipe, uint32_t addr, uint32_t len, bool write, uint64_t now) {
    OpAccum& a = c.acc;
    a.api = id;
    if (pipe == P_MTE2 || pipe == P_MTE3) {
        if (a.ub == kNoAddr) a.ub = addr;
        return;
    }
    if (pipe != P_V) return;
    if (write && a.dst == kNoAddr) a.dst = addr;
    if (!Rt().autoSync) return;
    for (uint32_t b = addr / 32, e = (addr + len + 31) / 32; b < e; ++b) {
        const BlockState& s = c.blocks[b];
        if (s.wpipe == P_V && s.wseq < now && s.wseq > a.dep) a.dep = s.wseq;
        if (write && s.rseq[P_V] < now && s.rseq[P_V] > a.dep) a.dep = s.rseq[P_V];
    }
}

// Event log: a read operand of the vector op in progress (the first name seen is src0, the next name src1).
inline void LogOperand(const char* operand, uint32_t addr) {
    OpAccum& a = Core().acc;
    if (a.src0 == kNoAddr) {
        a.src0 = addr;
        a.src0Name = operand;
    } else if (a.src1 == kNoAddr && std::strcmp(operand, a.src0Name) != 0) {
        a.src1 = addr;
    }
}

// bisheng --cce-auto-sync=on inserts set_flag/wait_flag between PIPE_S (LocalTensor::GetValue/SetValue, the only
// scalar UB accesses the twin has) and PIPE_V/MTE2/MTE3, both directions (asc-devkit docs/zh/api/SIMD-API/基础API/
// 同步控制/核内同步/关键特性说明.md, table 3). Modelled as the wait the compiler puts before the dependent access:
// `to` learns everything `from` has issued. Returns whether the dependency is covered.
inline bool AutoSync(int from, int to) {
    if (!Rt().autoSync || (from != P_S && to != P_S)) return false;
    Receive(to, Signal(from, "auto-sync"), "auto-sync");
    return true;
}

// Whether one vector instruction may depend on the previous one without PipeBarrier<PIPE_V>: NpuArch 3510 orders
// PIPE_V in hardware; on 2201 bisheng's auto-sync inserts the barrier (关键特性说明.md, "单流水同步"); on 2002/1001
// PipeBarrier(ISASI).md's example states the same for auto-sync without an architecture restriction, which the twin
// follows. With auto-sync off the kernel must place the barrier itself.
inline bool VectorOrdered() { return kArch == 3510 || Rt().autoSync; }

// Record an access of `pipe` to UB [addr, addr+len) and fault on a missing cross-pipe synchronisation.
inline void Access(const char* api, int pipe, uint32_t addr, uint32_t len, bool write) {
    if (len == 0) return;
    CoreState& c = Core();
    uint16_t id = Rt().ApiId(api);
    Rt().lastApi = id;
    uint64_t now = c.seq[pipe];
    if (Rt().timing) LogAccess(c, id, pipe, addr, len, write, now);
    for (uint32_t b = addr / 32, e = (addr + len + 31) / 32; b < e; ++b) {
        BlockState& s = c.blocks[b];
        if (s.wpipe >= 0 && s.wpipe != pipe && s.wseq > c.sync[s.wpipe][pipe] && !AutoSync(s.wpipe, pipe)) {
            Fault(api, "%s of UB block 0x%x by pipe %s races with the earlier write by %s on pipe %s: "
                       "no %s->%s synchronisation (EnQue/DeQue, or SetFlag/WaitFlag<HardEvent::%s_%s>)",
                  write ? "write" : "read", b * 32, PipeName(pipe), Rt().apiNames[s.wapi].c_str(),
                  PipeName(s.wpipe), PipeName(s.wpipe), PipeName(pipe), PipeName(s.wpipe), PipeName(pipe));
        }
        // Two dependent vector instructions (RAW, WAW, WAR) need PipeBarrier<PIPE_V> between them where the vector
        // pipe does not order them itself (VectorOrdered).
        if (pipe == P_V && !VectorOrdered()) {
            const bool raw = s.wpipe == P_V && s.wseq < now && s.wseq > c.sync[P_V][P_V];
            const bool war = write && s.rseq[P_V] < now && s.rseq[P_V] > c.sync[P_V][P_V];
            if (raw || war)
                Fault(api, "%s of UB block 0x%x by pipe V depends on the earlier %s by %s on pipe V with no "
                           "PipeBarrier<PIPE_V> between them: NpuArch %d does not order vector instructions "
                           "(bisheng --cce-auto-sync=on inserts the barrier; NpuArch 3510 orders them in hardware: "
                           "asc-devkit docs/zh/api/SIMD-API/基础API/同步控制/核内同步/关键特性说明.md, "
                           "PipeBarrier(ISASI).md)", write ? "write" : "read", b * 32, raw ? "write" : "read",
                      Rt().apiNames[raw ? s.wapi : s.rapi[P_V]].c_str(), kArch);
        }
        // Two MTE2 copies into the same UB block complete in no guaranteed order: the second needs a
        // PipeBarrier<PIPE_MTE2> (or anything else that shows MTE2 the first one done).
        if (write && pipe == P_MTE2 && s.wpipe == P_MTE2 && s.wseq > c.sync[P_MTE2][P_MTE2]) {
            Fault(api, "write of UB block 0x%x by pipe MTE2 overlaps the earlier MTE2 write by %s: copies into "
                       "overlapping UB need PipeBarrier<PIPE_MTE2> between them",
                  b * 32, Rt().apiNames[s.wapi].c_str());
        }
        if (write) {
            for (int r = 0; r < P_COUNT; ++r) {
                if (r != pipe && s.rseq[r] > c.sync[r][pipe] && !AutoSync(r, pipe)) {
                    Fault(api, "write of UB block 0x%x by pipe %s races with the earlier read by %s on pipe %s: "
                               "no %s->%s synchronisation (FreeTensor/AllocTensor, or "
                               "SetFlag/WaitFlag<HardEvent::%s_%s>)",
                          b * 32, PipeName(pipe), Rt().apiNames[s.rapi[r]].c_str(), PipeName(r), PipeName(r),
                          PipeName(pipe), PipeName(r), PipeName(pipe));
                }
            }
            s.wpipe = static_cast<int8_t>(pipe);
            s.wseq = now;
            s.wapi = id;
        } else {
            s.rseq[pipe] = now;
            s.rapi[pipe] = id;
        }
    }
}

// Event log: the operation in progress on `pipe` is complete; log it.
inline void LogOp(CoreState& c, int pipe) {
    OpAccum& a = c.acc;
    if (pipe == P_S) {
        LogScalar(1, 0, 0);
    } else if (pipe == P_V) {
        TimeRecord r;
        r.kind = TK_VEC;
        r.pipe = P_V;
        r.api = a.api;
        r.a = a.dst;
        r.b = a.src0;
        r.c = a.src1;
        r.y = a.dep;
        c.pendingVec = static_cast<int64_t>(c.tlog.size());
        c.tlog.push_back(r);
    } else {
        TimeRecord r;
        r.kind = TK_COPY;
        r.pipe = static_cast<uint8_t>(pipe);
        r.api = a.api;
        r.a = a.ub;
        r.b = a.bursts;
        r.c = static_cast<uint32_t>(a.burstMax);
        r.gmBuf = a.gmBuf;
        r.x = a.bytes;
        r.y = a.gmOff;
        r.d = std::min<uint32_t>(a.mis32, 0xFFFF) | std::min<uint32_t>(a.mis128, 0xFFFF) << 16;
        r.flags = a.cache;
        c.tlog.push_back(r);
    }
    a = OpAccum{};
}

inline void NextOp(int pipe) {
    CoreState& c = Core();
    if (Rt().timing) LogOp(c, pipe);
    c.seq[pipe] += 1;
}

inline void SyncPipes(int from, int to, uint64_t seq) {
    uint64_t& s = Core().sync[from][to];
    if (seq > s) s = seq;
}

// Everything `pipe` knows to be complete, including its own issued work (what a flag or EnQue it signals conveys).
inline Knowledge Snapshot(int pipe) {
    CoreState& c = Core();
    Knowledge k;
    for (int p = 0; p < P_COUNT; ++p) k.done[p] = p == pipe ? c.seq[p] - 1 : c.sync[p][pipe];
    return k;
}

// `pipe` waited for a signal carrying `k` (which may include that some of its own earlier work is complete).
inline void Acquire(int pipe, const Knowledge& k) {
    for (int p = 0; p < P_COUNT; ++p) SyncPipes(p, pipe, k.done[p]);
}

// A signal `pipe` sends (a flag it sets, an EnQue, a FreeTensor, an auto-sync set_flag): its knowledge, and with
// timing on a token the event log pairs with the wait that receives it. `event`: the HardEvent of a flag.
inline Knowledge Signal(int pipe, const char* api, uint32_t event) {
    Knowledge k = Snapshot(pipe);
    if (Rt().timing) {
        k.token = ++Core().tokens;
        LogRecord(TK_SET, pipe, Rt().ApiId(api), k.token, event);
    }
    return k;
}

// `pipe` waits for the signal `k` (a WaitFlag, DeQue, AllocTensor, auto-sync wait_flag).
inline void Receive(int pipe, const Knowledge& k, const char* api) {
    Acquire(pipe, k);
    if (Rt().timing && k.token != 0) LogRecord(TK_WAIT, pipe, Rt().ApiId(api), k.token);
}

// PipeBarrier<pipe>: the pipe's own earlier operations are complete before its next one starts.
inline void BarrierPipe(int pipe) { SyncPipes(pipe, pipe, Core().seq[pipe] - 1); }

// PipeBarrier<PIPE_ALL>: every pipe knows everything issued so far on every pipe is complete (seq[p] - 1: seq[p]
// is the number the next operation on p will take, which the barrier must not cover).
inline void BarrierAll() {
    CoreState& c = Core();
    for (int p = 0; p < P_COUNT; ++p)
        for (int q = 0; q < P_COUNT; ++q) SyncPipes(p, q, c.seq[p] - 1);
}

}  // namespace twin
