// TPipe, TQue/TQueBind, TBuf, hardware events and pipe barriers, with queue discipline and sync checking.
#pragma once

#include <exception>

#include "tensor.h"

// Pipe ids as the CPU-debug stub defines them (global scope, C enum).
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX, PIPE_V2, PIPE_MTE4,
              PIPE_MTE5 };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace AscendC {

using TEventID = int8_t;

enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3, MTE1_V,
    MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX,
    FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};

}  // namespace AscendC

namespace twin {

// Source and destination pipes of an event, in the twin's pipe ids (P_OTHER for cube/fixpipe pipes).
inline void EventPipes(AscendC::HardEvent e, int& from, int& to) {
    using H = AscendC::HardEvent;
    from = to = P_OTHER;
    switch (e) {
        case H::MTE2_V: from = P_MTE2; to = P_V; break;
        case H::V_MTE2: from = P_V; to = P_MTE2; break;
        case H::MTE3_V: from = P_MTE3; to = P_V; break;
        case H::V_MTE3: from = P_V; to = P_MTE3; break;
        case H::V_V: from = P_V; to = P_V; break;
        case H::MTE3_MTE2: from = P_MTE3; to = P_MTE2; break;
        case H::MTE2_MTE3: from = P_MTE2; to = P_MTE3; break;
        case H::S_V: from = P_S; to = P_V; break;
        case H::V_S: from = P_V; to = P_S; break;
        case H::S_MTE2: from = P_S; to = P_MTE2; break;
        case H::MTE2_S: from = P_MTE2; to = P_S; break;
        case H::S_MTE3: from = P_S; to = P_MTE3; break;
        case H::MTE3_S: from = P_MTE3; to = P_S; break;
        default: break;
    }
}

static_assert(static_cast<int>(AscendC::HardEvent::MAX) == kHardEventCount, "kHardEventCount must match HardEvent");

inline const char* HardEventName(int e) {
    static const char* names[] = {
        "MTE2_MTE1", "MTE1_MTE2", "MTE1_M", "M_MTE1", "MTE2_V", "V_MTE2", "MTE3_V", "V_MTE3", "M_V", "V_M", "V_V",
        "MTE3_MTE1", "MTE1_MTE3", "MTE1_V", "MTE2_M", "M_MTE2", "V_MTE1", "M_FIX", "FIX_M", "MTE3_MTE2", "MTE2_MTE3",
        "S_V", "V_S", "S_MTE2", "MTE2_S", "S_MTE3", "MTE3_S", "MTE2_FIX", "FIX_MTE2", "FIX_S", "M_S", "FIX_MTE3",
        "MTE1_FIX", "FIX_MTE1", "FIX_FIX"};
    return e >= 0 && e < kHardEventCount ? names[e] : "?";
}

// The event carrying pipe `from`'s completion to pipe `to` (the queue events of GetQueEvt for vector queues).
inline AscendC::HardEvent PipesEvent(int from, int to) {
    using H = AscendC::HardEvent;
    if (from == P_MTE2 && to == P_V) return H::MTE2_V;
    if (from == P_V && to == P_MTE2) return H::V_MTE2;
    if (from == P_V && to == P_MTE3) return H::V_MTE3;
    if (from == P_MTE3 && to == P_V) return H::MTE3_V;
    if (from == P_MTE2 && to == P_MTE3) return H::MTE2_MTE3;
    if (from == P_MTE3 && to == P_MTE2) return H::MTE3_MTE2;
    return H::V_V;
}

inline void CheckEventId(const char* api, int id) {
    if (id < 0 || static_cast<uint32_t>(id) >= kMaxEventId)
        Fault(api, "event id %d out of range [0, %u) on this architecture", id, kMaxEventId);
}

inline const char* OwnerText(IdOwner o) {
    switch (o) {
        case IdOwner::KERNEL: return "the kernel's TPipe::AllocEventID";
        case IdOwner::QUE_FREE: return "a TQue buffer freed by FreeTensor and not yet allocated again";
        case IdOwner::QUE_ENQUE: return "a TQue buffer enqueued by EnQue and not yet dequeued";
        case IdOwner::QUE_DEPTH0: return "a depth-0 TQue buffer (from InitBuffer until TPipe::Reset/Destroy)";
        default: return "nobody";
    }
}

// TPipe::AllocEventID: the first free ID of the event type's pool (sff0 of the occupancy word). The pool has
// QUE_MAX_EVENT IDs (asc-devkit impl/basic_api/kernel_macros.h); beyond them the device hangs (the check is a debug
// assertion only), so the twin faults naming who holds the IDs.
inline int AllocEventIdImpl(const char* api, AscendC::HardEvent e, IdOwner owner) {
    CoreState& c = Core();
    const int ei = static_cast<int>(e);
    uint32_t& occ = c.eventOccupy[ei];
    int id = 0;
    while (id < 32 && (occ >> id & 1u)) ++id;
    if (static_cast<uint32_t>(id) >= kMaxEventId) {
        unsigned n[static_cast<int>(IdOwner::COUNT)] = {};
        for (uint32_t i = 0; i < kMaxEventId; ++i) n[static_cast<int>(c.eventOwner[ei][i])] += 1;
        char depth0[64] = "";
        if (n[static_cast<int>(IdOwner::QUE_DEPTH0)] > 0)
            std::snprintf(depth0, sizeof depth0, ", %u by depth-0 TQue buffers", n[static_cast<int>(IdOwner::QUE_DEPTH0)]);
        Fault(api, "no free event ID of HardEvent::%s: all %u IDs of its pool are held (%u by TQue FreeTensor, %u by "
                   "TQue EnQue, %u by the kernel's AllocEventID%s); NpuArch %d has %u per event type (QUE_MAX_EVENT) "
                   "and the device hangs when a queue or AllocEventID needs one more",
              HardEventName(ei), kMaxEventId, n[2], n[3], n[1], depth0, kArch, kMaxEventId);
    }
    occ |= 1u << id;
    c.eventOwner[ei][id] = owner;
    uint32_t held = 0;
    for (uint32_t v = occ; v != 0; v &= v - 1) ++held;
    if (held > c.counters.eventIdsPeak[ei]) c.counters.eventIdsPeak[ei] = static_cast<uint8_t>(held);
    return id;
}

inline void ReleaseEventIdImpl(AscendC::HardEvent e, int id) {
    CoreState& c = Core();
    c.eventOccupy[static_cast<int>(e)] &= ~(1u << id);
    c.eventOwner[static_cast<int>(e)][id] = IdOwner::NONE;
}

inline void SetFlagImpl(AscendC::HardEvent e, int id, const char* api = "SetFlag") {
    CheckEventId(api, id);
    CoreState& c = Core();
    const int ei = static_cast<int>(e);
    Flag& f = c.flags[ei * 16 + id];
    if (f.set)
        Fault(api, "event HardEvent::%s id %d set twice without a WaitFlag (undefined; hangs on hardware); the ID "
                   "is held by %s", HardEventName(ei), id, OwnerText(c.eventOwner[ei][id]));
    int from, to;
    EventPipes(e, from, to);
    f.set = true;
    // the source pipe's issued work and what it knows
    f.know = from < P_COUNT ? Signal(from, api, static_cast<uint32_t>(ei)) : Knowledge{};
}

inline void WaitFlagImpl(AscendC::HardEvent e, int id, const char* api = "WaitFlag") {
    CheckEventId(api, id);
    CoreState& c = Core();
    const int ei = static_cast<int>(e);
    Flag& f = c.flags[ei * 16 + id];
    if (!f.set)
        Fault(api, "event HardEvent::%s id %d waited without a matching SetFlag (hangs on hardware)%s",
              HardEventName(ei), id,
              c.eventOwner[ei][id] == IdOwner::QUE_FREE || c.eventOwner[ei][id] == IdOwner::QUE_ENQUE ||
                      c.eventOwner[ei][id] == IdOwner::QUE_DEPTH0
                  ? "; the kernel's own WaitFlag consumed a flag the TQue had set on an ID it holds" : "");
    int from, to;
    EventPipes(e, from, to);
    if (from < P_COUNT && to < P_COUNT) Receive(to, f.know, api);
    f.set = false;
}

// The free event a TQue buffer of `s` still holds (TPipe::Reset/Destroy wait for it; the pool is then reset), and a
// depth-0 buffer's enqueue ID (held since InitBuffer; an enqueued buffer was refused before).
inline void DropQueueEvents(Slot& s) {
    if (s.freeEvtId >= 0 && s.freeEvt >= 0) {
        Core().flags[s.freeEvt * 16 + s.freeEvtId].set = false;
        ReleaseEventIdImpl(static_cast<AscendC::HardEvent>(s.freeEvt), s.freeEvtId);
    }
    if (s.depth0 && s.enqEvtId >= 0 && s.enqEvt >= 0) ReleaseEventIdImpl(static_cast<AscendC::HardEvent>(s.enqEvt),
                                                                          s.enqEvtId);
    s.freeEvtId = -1;
    s.freeEvt = -1;
    s.enqEvtId = -1;
}

// Producer/consumer pipes of a TQueBind<src, dst>, from the hardware of its two ends, not their names (asc-devkit
// include/basic_api/kernel_tpipe.h enQueEvt = GetQueEvt(GetPhyType(src), GetPhyType(dst)), impl/basic_api/
// kernel_event.h GetQueEvt): GM -> UB is MTE2_V, UB -> GM is V_MTE3, and UB -> UB (TQueBind<VECIN, VECCALC>,
// <VECCALC, VECOUT>, <VECIN, VECOUT>, TQue<VECCALC>) is MTE2_MTE3, so such a queue does not synchronise the vector
// unit with anything. The free event is the reverse pair, whose ID pool the queue's FreeTensor draws from.
inline void QueuePipes(uint8_t src, uint8_t dst, int& producer, int& consumer) {
    const bool srcGm = src == static_cast<uint8_t>(AscendC::TPosition::GM);
    const bool dstGm = dst == static_cast<uint8_t>(AscendC::TPosition::GM);
    producer = srcGm ? P_MTE2 : dstGm ? P_V : P_MTE2;
    consumer = srcGm ? P_V : dstGm ? P_MTE3 : P_MTE3;
}

}  // namespace twin

namespace AscendC {

template <HardEvent event> inline void SetFlag(int32_t eventID) { twin::SetFlagImpl(event, eventID); }
template <HardEvent event> inline void WaitFlag(int32_t eventID) { twin::WaitFlagImpl(event, eventID); }

template <pipe_t pipe> inline void PipeBarrier() {
    static_assert(pipe != PIPE_S, "PipeBarrier<PIPE_S> is not allowed");
    if (pipe == PIPE_ALL) twin::BarrierAll();
    if (pipe == PIPE_MTE2) twin::BarrierPipe(twin::P_MTE2);
    if (pipe == PIPE_MTE3) twin::BarrierPipe(twin::P_MTE3);
    if (pipe == PIPE_V) twin::BarrierPipe(twin::P_V);
    if (twin::Rt().timing) {
        const uint16_t id = twin::Rt().ApiId("PipeBarrier");
        if (pipe == PIPE_ALL) twin::LogRecord(twin::TK_BARRIER_ALL, twin::P_S, id);
        else if (pipe == PIPE_V) twin::LogRecord(twin::TK_BARRIER, twin::P_V, id);
        else if (pipe == PIPE_MTE2) twin::LogRecord(twin::TK_BARRIER, twin::P_MTE2, id);
        else if (pipe == PIPE_MTE3) twin::LogRecord(twin::TK_BARRIER, twin::P_MTE3, id);
    }
    twin::CountApi("PipeBarrier", 0, 0);
}

// DataSyncBarrier (asc-devkit impl/basic_api/kernel_event.h MemDsbT; docs/zh DataSyncBarrier(ISASI).md): the
// scalar unit waits until its earlier memory accesses are complete. A2/A3 and 950 only.
enum class MemDsbT : uint8_t { ALL = 0, DDR, UB, SEQ };
template <MemDsbT arg0> inline void DataSyncBarrier() {
    static_assert(twin::kHasDataSyncBarrier && arg0 <= MemDsbT::SEQ,
                  "DataSyncBarrier is not supported on NpuArch 2002/1001 (DataSyncBarrier(ISASI).md)");
    if (arg0 == MemDsbT::ALL || arg0 == MemDsbT::DDR)
        for (auto& kv : twin::Core().pendingWb) kv.second.dsb = true;
    twin::CountApi("DataSyncBarrier", 0, 0);
}

// TQueConfig (asc-devkit impl/basic_api/utils/kernel_utils_ceil_oom_que.h), passed as TQue's mask template argument
// (`TQue<pos, depth, &conf>`). The twin models bufferNumber (1: the queue never rotates, see TQueBind::Alloc);
// nd2nz/nz2nd and scmBlockGroup concern cube positions, bufferLen/consumer const-buffer planning, none modelled.
struct TQueConfig {
    bool nd2nz = false;
    bool nz2nd = false;
    bool scmBlockGroup = false;
    uint32_t bufferLen = 0;
    uint32_t bufferNumber = 0;
    uint32_t consumerSize = 0;
    TPosition consumer[8] = {};
    bool enableStaticEvtId = false;
    bool enableLoopQueue = false;
};

class TPipe;
inline TPipe*& TwinCurrentPipe() {
    static TPipe* p = nullptr;
    return p;
}
inline TPipe* GetTPipePtr() {
    TPipe* p = TwinCurrentPipe();
    if (p == nullptr) twin::Fault("GetTPipePtr", "no TPipe is alive");
    return p;
}

}  // namespace AscendC

namespace twin {
// An API whose devkit implementation on this arch reaches the live TPipe (GetTPipePtr()->FetchEventID for its own
// flags, PopStackBuffer): without one (static tensor programming) the device dereferences a null TPipe pointer.
inline void RequireTPipe(const char* api, const char* impl) {
    if (AscendC::TwinCurrentPipe() == nullptr)
        Fault(api, "no TPipe is alive, but the devkit's implementation on NpuArch %d takes event IDs or stack "
                   "buffers from it (asc-devkit %s); static tensor programming may use only APIs that do not",
              kArch, impl);
}
}  // namespace twin

namespace AscendC {

// Base of TQue: a set of equal-sized UB buffers handed out by AllocTensor and passed on by EnQue/DeQue.
template <TPosition src, TPosition dst, int32_t depth, auto mask = 0> class TQueBind {
public:
    TQueBind() = default;
    TQueBind(const TQueBind&) = delete;
    TQueBind& operator=(const TQueBind&) = delete;

    template <typename T> LocalTensor<T> AllocTensor() {
        static_assert(depth != 0 && sizeof(T) > 0, "must use AllocTensor<LocalTensor&> api while tque's depth is "
                                                   "zero (asc-devkit impl/basic_api/kernel_tquebind_impl.h)");
        return Alloc<T>("TQue::AllocTensor");
    }
    template <typename T> void AllocTensor(LocalTensor<T>& tensor) {
        static_assert(depth == 0 && sizeof(T) > 0, "can not AllocTensor in place while tque's depth is non zero "
                                                   "(asc-devkit impl/basic_api/kernel_tquebind_impl.h)");
        tensor = Alloc<T>("TQue::AllocTensor");
    }

    template <typename T> bool EnQue(const LocalTensor<T>& tensor) {
        const char* api = "TQue::EnQue";
        if (twin::Rt().cancel.load(std::memory_order_relaxed)) throw twin::KernelFaultError("twin: launch cancelled");
        twin::Slot& s = Own(api, tensor.TwinRef());
        if (s.state != twin::SlotState::ALLOCATED && s.state != twin::SlotState::DEQUEUED)
            twin::Fault(api, "tensor is not in the allocated state (already enqueued or freed)");
        if (depth == 0) {  // the buffer's own enqueue flag, on the ID it holds since InitBuffer
            int producer, consumer;
            twin::QueuePipes(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), producer, consumer);
            s.state = twin::SlotState::ENQUEUED;
            if (kQueueEventIds) twin::SetFlagImpl(static_cast<AscendC::HardEvent>(s.enqEvt), s.enqEvtId, api);
            else s.enqRecord = twin::Signal(producer, api);
            if (src == TPosition::VECOUT) twin::Counters().tiles += 1;
            return true;
        }
        if (static_cast<int32_t>(queue_.size()) >= (depth > 0 ? depth : 1))
            twin::Fault(api, "queue depth %d exceeded: EnQue without a DeQue of the previous tensor", depth);
        int producer, consumer;
        twin::QueuePipes(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), producer, consumer);
        s.state = twin::SlotState::ENQUEUED;
        // With event IDs the queue's flag carries the signal; without (3510) the EnQue itself does.
        queue_.push_back({tensor.TwinRef().slot, kQueueEventIds ? twin::Snapshot(producer) : twin::Signal(producer, api)});
        if (kQueueEventIds) {  // holds an ID of the enqueue event until DeQue (kernel_tquebind_impl.h EnQue)
            const AscendC::HardEvent e = twin::PipesEvent(producer, consumer);
            s.enqEvtId = static_cast<int8_t>(twin::AllocEventIdImpl(api, e, twin::IdOwner::QUE_ENQUE));
            twin::SetFlagImpl(e, s.enqEvtId, api);
        }
        if (src == TPosition::VECOUT) twin::Counters().tiles += 1;
        return true;
    }

    template <typename T> LocalTensor<T> DeQue() {
        static_assert(depth != 0 && sizeof(T) > 0, "must use DeQue<LocalTensor&> api while tque's depth is zero "
                                                   "(asc-devkit impl/basic_api/kernel_tquebind_impl.h)");
        const char* api = "TQue::DeQue";
        if (queue_.empty()) twin::Fault(api, "DeQue on an empty queue (hangs on hardware)");
        Entry e = queue_.front();
        queue_.erase(queue_.begin());
        twin::Slot& s = twin::Core().slots[e.slot];
        int producer, consumer;
        twin::QueuePipes(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), producer, consumer);
        twin::Receive(consumer, e.know, api);
        if (s.enqEvtId >= 0) {
            const AscendC::HardEvent ev = twin::PipesEvent(producer, consumer);
            twin::WaitFlagImpl(ev, s.enqEvtId, api);
            twin::ReleaseEventIdImpl(ev, s.enqEvtId);
            s.enqEvtId = -1;
        }
        s.state = twin::SlotState::DEQUEUED;
        return LocalTensor<T>::TwinMake({s.addr, s.len, e.slot, s.epoch, s.pos});
    }
    template <typename T> void DeQue(LocalTensor<T>& tensor) {
        static_assert(depth == 0 && sizeof(T) > 0, "can not DeQue tensor in place while tque's depth is non zero "
                                                   "(asc-devkit impl/basic_api/kernel_tquebind_impl.h)");
        const char* api = "TQue::DeQue";
        const twin::TensorRef& r = tensor.TwinRef();  // depth 0: the tensor names its buffer; its flag, not a FIFO
        if (r.slot < 0 || !Holds(api, r.slot)) twin::Fault(api, "tensor does not belong to this queue");
        twin::Slot& s = twin::Core().slots[r.slot];
        if (s.epoch != r.epoch || s.state != twin::SlotState::ENQUEUED || r.addr != s.addr)
            twin::Fault(api, "tensor is not this queue's enqueued buffer (the device waits for its flag forever)");
        int producer, consumer;
        twin::QueuePipes(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), producer, consumer);
        if (kQueueEventIds) twin::WaitFlagImpl(static_cast<AscendC::HardEvent>(s.enqEvt), s.enqEvtId, api);
        else twin::Receive(consumer, s.enqRecord, api);
        s.state = twin::SlotState::DEQUEUED;
        tensor = LocalTensor<T>::TwinMake({s.addr, s.len, tensor.TwinRef().slot, s.epoch, s.pos});
    }

    template <typename T> void FreeTensor(LocalTensor<T>& tensor) {
        const char* api = "TQue::FreeTensor";
        // A stale handle to one of this queue's buffers means it was freed before (Own would call it a use after free).
        const twin::TensorRef& r = tensor.TwinRef();
        if (r.slot >= 0 && r.slot < static_cast<int32_t>(twin::Core().slots.size()) &&
            twin::Core().slots[r.slot].epoch != r.epoch && Holds(api, r.slot))
            twin::Fault(api, "double free: this tensor was already freed by an earlier FreeTensor");
        twin::Slot& s = Own(api, tensor.TwinRef());
        if (s.state == twin::SlotState::ENQUEUED)
            twin::Fault(api, "tensor is still enqueued: DeQue it before FreeTensor");
        if (s.state == twin::SlotState::FREE) twin::Fault(api, "double free");
        int producer, consumer;
        twin::QueuePipes(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), producer, consumer);
        // the consumer's reads must finish before reuse
        s.freeRecord = kQueueEventIds ? twin::Snapshot(consumer) : twin::Signal(consumer, api);
        if (kQueueEventIds && depth == 0) {  // the buffer's own free flag, on the ID it holds since InitBuffer
            twin::SetFlagImpl(static_cast<AscendC::HardEvent>(s.freeEvt), s.freeEvtId, api);
        } else if (kQueueEventIds) {  // reserves an ID of the free event until the buffer is allocated again
            const AscendC::HardEvent e = twin::PipesEvent(consumer, producer);
            s.freeEvtId = static_cast<int8_t>(twin::AllocEventIdImpl(api, e, twin::IdOwner::QUE_FREE));
            s.freeEvt = static_cast<int8_t>(e);
            twin::SetFlagImpl(e, s.freeEvtId, api);
        }
        s.state = twin::SlotState::FREE;
        s.epoch = twin::NewEpoch();
    }

    // Waits for and releases the free-event IDs the queue's buffers hold (kernel_tquebind_impl.h FreeAllEvent); no
    // buffer may be enqueued.
    void FreeAllEvent() {
        const char* api = "TQue::FreeAllEvent";
        for (int32_t id : Slots(api)) {
            twin::Slot& s = twin::Core().slots[id];
            if (s.state == twin::SlotState::ENQUEUED)
                twin::Fault(api, "a buffer of the queue is still enqueued: DeQue it first");
            ReturnFreeEvent(s, api);
        }
    }

    bool VacantInQue() { return static_cast<int32_t>(queue_.size()) < (depth > 0 ? depth : 1); }
    bool HasTensorInQue() { return !queue_.empty(); }
    int32_t GetTensorCountInQue() { return static_cast<int32_t>(queue_.size()); }
    bool HasIdleBuffer() {
        for (int32_t id : Slots("TQue::HasIdleBuffer"))
            if (twin::Core().slots[id].state == twin::SlotState::FREE) return true;
        return false;
    }

    // Twin internal: called by TPipe::InitBuffer. A depth-0 buffer takes an ID of the enqueue and of the free event
    // and sets its free flag, holding both IDs until TPipe::Reset/Destroy (kernel_tpipe_impl.h AllocAddrs,
    // queDepth == 0); on 3510 TQue buffers take buffer IDs instead (InitBuffer).
    void TwinAttach(const std::vector<int32_t>& slots) {
        const char* api = "TPipe::InitBuffer";
        slots_ = slots;
        queue_.clear();
        cursor_ = 0;
        for (int32_t id : slots_) {
            twin::Slot& s = twin::Core().slots[id];
            s.owner = this;
            if (depth != 0 || !kQueueEventIds) continue;
            int producer, consumer;
            twin::QueuePipes(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), producer, consumer);
            const AscendC::HardEvent enq = twin::PipesEvent(producer, consumer), free = twin::PipesEvent(consumer, producer);
            s.depth0 = true;
            s.enqEvt = static_cast<int8_t>(enq);
            s.enqEvtId = static_cast<int8_t>(twin::AllocEventIdImpl(api, enq, twin::IdOwner::QUE_DEPTH0));
            s.freeEvt = static_cast<int8_t>(free);
            s.freeEvtId = static_cast<int8_t>(twin::AllocEventIdImpl(api, free, twin::IdOwner::QUE_DEPTH0));
            twin::SetFlagImpl(free, s.freeEvtId, api);
        }
    }

private:
    struct Entry {
        int32_t slot;
        twin::Knowledge know;
    };

    // The wait for the free event a buffer holds since its FreeTensor, whose ID then returns to the pool
    // (AllocBuffer and FreeAllEvent in kernel_tquebind_impl.h).
    static void ReturnFreeEvent(twin::Slot& s, const char* api) {
        if (s.freeEvtId < 0) return;
        const AscendC::HardEvent e = static_cast<AscendC::HardEvent>(s.freeEvt);
        twin::WaitFlagImpl(e, s.freeEvtId, api);
        if (s.depth0) return;  // a depth-0 buffer keeps its ID
        twin::ReleaseEventIdImpl(e, s.freeEvtId);
        s.freeEvtId = -1;
        s.freeEvt = -1;
    }

    // AllocBuffer: starting at the rotating cursor, the next FREE buffer (0, 1, 0, 1, ... for two buffers, not the
    // first free one); then the wait for its reserved free event, whose ID returns to the pool.
    template <typename T> LocalTensor<T> Alloc(const char* api) {
        Slots(api);
        twin::CoreState& c = twin::Core();
        const size_t n = slots_.size();
        // TQueConfig::bufferNumber 1: the cursor never moves, so only the first buffer is ever taken and an
        // AllocTensor while it is in use spins forever (kernel_tquebind_impl.h AllocBuffer; dav_3510
        // kernel_tpipe_impl_c310_vec.h takes bufStart).
        if (kConfig.bufferNumber == 1 && c.slots[slots_[0]].state != twin::SlotState::FREE)
            twin::Fault(api, "TQueConfig::bufferNumber is 1, so the queue only ever takes its first buffer, which is "
                             "still in use: the device waits for it forever (hangs); the other %zu buffer(s) from "
                             "InitBuffer are never used", n - 1);
        for (size_t k = 0; k < n; ++k) {
            const int32_t id = slots_[cursor_];
            if (kConfig.bufferNumber != 1) cursor_ = (cursor_ + 1) % n;
            twin::Slot& s = c.slots[id];
            if (s.state != twin::SlotState::FREE) continue;
            int producer, consumer;
            twin::QueuePipes(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), producer, consumer);
            twin::Receive(producer, s.freeRecord, api);
            s.freeRecord.token = 0;
            ReturnFreeEvent(s, api);
            s.state = twin::SlotState::ALLOCATED;
            twin::PoisonUb(s.addr, s.len);
            return LocalTensor<T>::TwinMake({s.addr, s.len, id, s.epoch, s.pos});
        }
        twin::Fault(api, "all %zu buffers are in use: AllocTensor beyond the buffer count given to InitBuffer "
                         "(hangs on hardware)", slots_.size());
    }

    twin::Slot& Own(const char* api, const twin::TensorRef& r) {
        twin::RequireLive(api, "tensor", r);
        if (!Holds(api, r.slot)) twin::Fault(api, "tensor does not belong to this queue");
        twin::Slot& s = twin::Core().slots[r.slot];
        if (r.addr != s.addr) twin::Fault(api, "tensor is a sub-view; pass the tensor returned by AllocTensor/DeQue");
        return s;
    }

    // This queue's buffer ids, checked to be still its own: TPipe::Reset/Destroy release every buffer, and the ids
    // may since have been given to another queue or TBuf.
    const std::vector<int32_t>& Slots(const char* api) {
        if (slots_.empty()) twin::Fault(api, "queue has no buffers: call TPipe::InitBuffer first");
        const twin::CoreState& c = twin::Core();
        for (int32_t id : slots_)
            if (id >= static_cast<int32_t>(c.slots.size()) || c.slots[id].owner != this)
                twin::Fault(api, "the queue's buffers were released by TPipe::Reset/Destroy: call InitBuffer again");
        return slots_;
    }
    bool Holds(const char* api, int32_t slot) {
        const std::vector<int32_t>& ids = Slots(api);
        return std::find(ids.begin(), ids.end(), slot) != ids.end();
    }

    // The queue's TQueConfig: `mask` is a `const TQueConfig*` or an integer (GetTQueConfig in asc-devkit
    // impl/basic_api/utils/kernel_utils_ceil_oom_que.h); only bufferNumber is modelled.
    static constexpr TQueConfig TwinConfig() {
        if constexpr (std::is_pointer<decltype(mask)>::value) return *mask;
        else return TQueConfig{};
    }
    static constexpr TQueConfig kConfig = TwinConfig();

    // NpuArch 3510 vector cores synchronise TQue buffers with buffer IDs, not event IDs
    // (asc-devkit impl/basic_api/dav_3510/kernel_tpipe_impl_c310_vec.h: GetBuffImpl/ReleaseBuffImpl under ASCEND_IS_AIV).
    static constexpr bool kQueueEventIds = twin::kArch != 3510;

    std::vector<int32_t> slots_;
    std::vector<Entry> queue_;
    size_t cursor_ = 0;
};

// TQue<pos> is TQueBind<GetBufferLogicPos(pos, true), GetBufferLogicPos(pos, false)> (asc-devkit include/basic_api/
// kernel_tpipe.h, impl/basic_api/kernel_event.h): VECIN is GM -> VECIN, VECOUT is VECOUT -> GM; VECCALC has no logic
// positions (MAX, whose hardware is UB), i.e. a UB -> UB queue, kept as VECCALC -> VECCALC here.
constexpr TPosition TQueSrc(TPosition pos) { return pos == TPosition::VECIN ? TPosition::GM : pos; }
constexpr TPosition TQueDst(TPosition pos) { return pos == TPosition::VECOUT ? TPosition::GM : pos; }

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<TQueSrc(pos), TQueDst(pos), depth, mask> {
public:
    TQue() = default;
};

// Scratch buffer: one block from InitBuffer, no queueing, no automatic synchronisation.
template <TPosition pos = TPosition::LCM> class TBuf {
public:
    TBuf() = default;
    TBuf(const TBuf&) = delete;
    TBuf& operator=(const TBuf&) = delete;

    template <typename T> LocalTensor<T> Get() { return Make<T>("TBuf::Get", 0, Slot("TBuf::Get").len); }
    template <typename T> LocalTensor<T> Get(uint32_t len) {
        uint64_t bytes = static_cast<uint64_t>(len) * sizeof(T);
        if (bytes > Slot("TBuf::Get").len)
            twin::Fault("TBuf::Get", "len %u elements (%llu bytes) exceeds the buffer's %u bytes", len,
                        (unsigned long long)bytes, Slot("TBuf::Get").len);
        return Make<T>("TBuf::Get", 0, static_cast<uint32_t>(bytes));
    }
    template <typename T> LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        const char* api = "TBuf::GetWithOffset";
        if (bufOffset % twin::kBlock != 0) twin::Fault(api, "bufOffset %u is not 32-byte aligned", bufOffset);
        uint64_t bytes = static_cast<uint64_t>(size) * sizeof(T);
        if (bytes + bufOffset > Slot(api).len)
            twin::Fault(api, "size %u elements at offset %u exceeds the buffer's %u bytes", size, bufOffset,
                        Slot(api).len);
        return Make<T>(api, bufOffset, static_cast<uint32_t>(bytes));
    }

    void TwinAttach(int32_t slot) {
        slot_ = slot;
        twin::Core().slots[slot].owner = this;
    }

private:
    twin::Slot& Slot(const char* api) {
        twin::CoreState& c = twin::Core();
        if (slot_ < 0) twin::Fault(api, "TBuf has no buffer: call TPipe::InitBuffer first");
        // The id may have been given to another buffer since TPipe::Reset/Destroy released this one.
        if (slot_ >= static_cast<int32_t>(c.slots.size()) || c.slots[slot_].owner != this ||
            c.slots[slot_].state != twin::SlotState::TBUF)
            twin::Fault(api, "TBuf's buffer was released by TPipe::Reset/Destroy: call InitBuffer again");
        return c.slots[slot_];
    }
    template <typename T> LocalTensor<T> Make(const char* api, uint32_t offset, uint32_t bytes) {
        twin::Slot& s = Slot(api);
        return LocalTensor<T>::TwinMake({s.addr + offset, bytes, slot_, s.epoch, s.pos});
    }
    int32_t slot_ = -1;
};

class TPipe {
public:
    TPipe() {
        twin::CoreState& c = twin::Core();
        if (c.pipe != nullptr) twin::Fault("TPipe", "a second TPipe while one is alive (hangs on hardware)");
        c.pipe = this;
        c.socStateInit = c.pipeSeen = true;
        c.poolCursor = 0;
        c.buffersUsed = 0;
        TwinCurrentPipe() = this;
    }
    ~TPipe() {
        if (twin::Rt().core != nullptr && twin::Core().pipe == this) {
            CheckQuiescent("TPipe::~TPipe", true);
            Release();
        }
    }
    // NpuArch 2002's TPipe::Destroy (also run by ~TPipe) ends with a DCCI of the entire data cache
    // (asc-devkit impl/basic_api/kernel_tpipe_impl.h); no other arch's TPipe writes dirty lines back.
    static void FlushOnDestroy() {
        if (twin::kArch == 2002) twin::FlushAllLines();
    }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    void Init() {}

    template <class T> bool InitBuffer(T& que, uint8_t num, uint32_t len) {
        const char* api = "TPipe::InitBuffer";
        if (num == 0 || len == 0) twin::Fault(api, "num (%u) and len (%u) must be positive", num, len);
        if (twin::kArch == 3510) {  // each TQue buffer takes a buffer ID (AllocMutexID, ids 0..MAX_MUTEXID = 27)
            twin::CoreState& c = twin::Core();
            if (c.bufferIds + num > kBufferIds)
                twin::Fault(api, "more than %u TQue buffers in one TPipe: NpuArch 3510 gives every TQue buffer one of "
                                 "%u buffer IDs (%u already taken, %u requested)", kBufferIds, kBufferIds,
                            c.bufferIds, num);
            c.bufferIds += num;
            if (c.bufferIds > c.counters.bufferIdsPeak) c.counters.bufferIdsPeak = c.bufferIds;
        }
        std::vector<int32_t> ids;
        for (uint8_t i = 0; i < num; ++i) ids.push_back(NewSlot(api, len, QueuePos<T>(), twin::SlotState::FREE));
        que.TwinAttach(ids);
        return true;
    }

    template <TPosition pos> bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
        const char* api = "TPipe::InitBuffer";
        if (len == 0) twin::Fault(api, "len must be positive");
        int32_t id = NewSlot(api, len, static_cast<uint8_t>(pos), twin::SlotState::TBUF);
        twin::Slot& s = twin::Core().slots[id];
        twin::PoisonUb(s.addr, s.len);
        buf.TwinAttach(id);
        return true;
    }

    // One pool per event type, shared with the TQue internals (kernel_tpipe_impl.h AllocEventID/ReleaseEventID).
    template <HardEvent evt> TEventID AllocEventID() {
        return static_cast<TEventID>(twin::AllocEventIdImpl("TPipe::AllocEventID", evt, twin::IdOwner::KERNEL));
    }
    template <HardEvent evt> void ReleaseEventID(TEventID id) {
        const char* api = "TPipe::ReleaseEventID";
        twin::CheckEventId(api, id);
        const twin::IdOwner o = twin::Core().eventOwner[static_cast<int>(evt)][id];
        if (o != twin::IdOwner::KERNEL)
            twin::Fault(api, "event id %d of HardEvent::%s was not allocated by the kernel's AllocEventID (held by "
                             "%s)", id, twin::HardEventName(static_cast<int>(evt)), twin::OwnerText(o));
        twin::ReleaseEventIdImpl(evt, id);
    }
    template <HardEvent evt> TEventID FetchEventID() { return FetchEventID(evt); }
    // The first free ID of the pool, without reserving it.
    TEventID FetchEventID(HardEvent evt) {
        const uint32_t occ = twin::Core().eventOccupy[static_cast<int>(evt)];
        for (uint32_t id = 0; id < twin::kMaxEventId; ++id)
            if (!(occ >> id & 1u)) return static_cast<TEventID>(id);
        twin::Fault("TPipe::FetchEventID", "no free event ID of HardEvent::%s: all %u are held",
                    twin::HardEventName(static_cast<int>(evt)), twin::kMaxEventId);
    }

    void Reset() {
        CheckQuiescent("TPipe::Reset", false);
        twin::CoreState& c = twin::Core();
        for (twin::Slot& s : c.slots) twin::DropQueueEvents(s);
        c.bufferIds = 0;
        c.slots.clear();
        c.poolCursor = 0;
        c.buffersUsed = 0;
    }

    void Destroy() {
        CheckQuiescent("TPipe::Destroy", false);
        Release();
    }

private:
    static constexpr uint32_t kBufferIds = 28;  // asc-devkit impl/basic_api/kernel_event.h MAX_MUTEXID = 27
    template <class T> static uint8_t QueuePos() { return QueuePosImpl(static_cast<T*>(nullptr)); }
    template <TPosition s, TPosition d, int32_t dep, auto m>
    static uint8_t QueuePosImpl(TQueBind<s, d, dep, m>*) {
        return static_cast<uint8_t>(s == TPosition::GM ? d : s);
    }

    int32_t NewSlot(const char* api, uint32_t len, uint8_t pos, twin::SlotState state) {
        twin::CoreState& c = twin::Core();
        uint32_t rounded = (len + twin::kBlock - 1) / twin::kBlock * twin::kBlock;
        if (c.buffersUsed + 1 > twin::kMaxBuffers)
            twin::Fault(api, "more than %u buffers in one TPipe", twin::kMaxBuffers);
        if (static_cast<uint64_t>(c.poolCursor) + rounded > twin::kUbKernelBytes)
            twin::Fault(api, "UB exhausted: buffer of %u bytes at offset %u exceeds the %u bytes a kernel may use "
                             "on this architecture", rounded, c.poolCursor, twin::kUbKernelBytes);
        twin::Slot s;
        s.addr = c.poolCursor;
        s.len = rounded;
        s.pos = pos;
        s.state = state;
        s.epoch = twin::NewEpoch();
        c.poolCursor += rounded;
        c.buffersUsed += 1;
        if (c.poolCursor > c.counters.ubPeakBytes) c.counters.ubPeakBytes = c.poolCursor;
        c.slots.push_back(s);
        return static_cast<int32_t>(c.slots.size() - 1);
    }

    void CheckQuiescent(const char* api, bool deferred) {
        twin::CoreState& c = twin::Core();
        for (const twin::Slot& s : c.slots) {
            if (s.state == twin::SlotState::ALLOCATED || s.state == twin::SlotState::DEQUEUED ||
                s.state == twin::SlotState::ENQUEUED) {
                const char* what = s.state == twin::SlotState::ENQUEUED ? "still enqueued" : "never freed";
                if (deferred) {
                    // At kernel end an allocated (or dequeued) tensor is harmless: the device's TPipe destruction
                    // checks nothing (kernel_tpipe_impl.h ~TPipe/Destroy); an enqueued one leaves its EnQue flag set.
                    if (s.state != twin::SlotState::ENQUEUED) continue;
                    if (std::uncaught_exceptions() == 0)
                        twin::DeferFault(api, "tensor still enqueued at kernel end: a %s buffer at UB 0x%x was "
                                              "enqueued and never dequeued (its EnQue flag stays set)",
                                         twin::PositionName(s.pos), s.addr);
                } else {
                    twin::Fault(api, "a %s buffer at UB 0x%x is %s", twin::PositionName(s.pos), s.addr, what);
                }
                return;
            }
        }
    }

    void Release() {
        FlushOnDestroy();
        twin::CoreState& c = twin::Core();
        for (twin::Slot& s : c.slots) twin::DropQueueEvents(s);
        c.bufferIds = 0;
        c.slots.clear();
        c.pipe = nullptr;
        c.poolCursor = 0;
        c.buffersUsed = 0;
        TwinCurrentPipe() = nullptr;
    }
};

}  // namespace AscendC
