// GlobalTensor and LocalTensor with the real API's names; every access is checked.
#pragma once

#include <type_traits>

#include "core.h"
#include "types.h"

namespace AscendC {

enum class TPosition : uint8_t {
    GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, C2PIPE2GM,
    C2PIPE2LOCAL, MAX
};
using QuePosition = TPosition;

template <typename T> class LocalTensor;
template <typename T> class GlobalTensor;

// L2 cache hints of a GlobalTensor (asc-devkit impl/basic_api/utils/kernel_utils_macros.h): the time model reads the
// mode of every copy (CACHE_MODE_DISABLE: the copy bypasses L2); the data are the same whatever the mode.
enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
enum class CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

}  // namespace AscendC

namespace twin {

// Dtype codes of the event log (lossgrad/timing/events.py DTYPES lists the names in this order).
template <typename T> constexpr uint8_t DtypeCode() {
    using std::is_same;
    if constexpr (is_same<T, half>::value) return 1;
    else if constexpr (is_same<T, float>::value) return 2;
    else if constexpr (is_same<T, bfloat16_t>::value) return 3;
    else if constexpr (is_same<T, int8_t>::value) return 4;
    else if constexpr (is_same<T, uint8_t>::value) return 5;
    else if constexpr (is_same<T, int16_t>::value) return 6;
    else if constexpr (is_same<T, uint16_t>::value) return 7;
    else if constexpr (is_same<T, int32_t>::value) return 8;
    else if constexpr (is_same<T, uint32_t>::value) return 9;
    else if constexpr (is_same<T, int64_t>::value) return 10;
    else if constexpr (is_same<T, uint64_t>::value) return 11;
    else if constexpr (is_same<T, bool>::value) return 12;
    else if constexpr (is_same<T, double>::value) return 13;
    else return 0;
}

// The dtype of an instruction's repeats: the wider of destination and source (Cast).
template <typename TD, typename TS> constexpr uint8_t WiderCode() {
    return sizeof(TD) > sizeof(TS) ? DtypeCode<TD>() : DtypeCode<TS>();
}

inline bool IsUbPosition(uint8_t pos) {
    using P = AscendC::TPosition;
    return pos == static_cast<uint8_t>(P::VECIN) || pos == static_cast<uint8_t>(P::VECOUT) ||
           pos == static_cast<uint8_t>(P::VECCALC);
}

inline const char* PositionName(uint8_t pos) {
    static const char* names[] = {"GM", "A1", "A2", "B1", "B2", "C1", "C2", "CO1", "CO2", "VECIN", "VECOUT",
                                  "VECCALC", "SPM", "TSCM", "C2PIPE2GM", "C2PIPE2LOCAL", "MAX"};
    return pos < sizeof(names) / sizeof(names[0]) ? names[pos] : "?";
}

// What a LocalTensor handle refers to: a byte range of one slot at one epoch.
struct TensorRef {
    uint32_t addr = 0;   // UB byte address of element 0
    uint32_t len = 0;    // bytes visible through this handle
    int32_t slot = -1;
    uint32_t epoch = 0;
    uint8_t pos = 0;
};

// Slot of a LocalTensor built from a raw UB address (LocalTensor(TPosition, addr, tileSize)): no TPipe buffer.
constexpr int32_t kRawSlot = -2;

// A raw-address tensor may not alias a buffer the live TPipe has allocated: the devkit guide (静态Tensor编程, 使用约束和
// 限制) calls mixing static tensors with the TPipe/TQue/TBuf framework undefined behaviour, and TPipe-owned memory is
// poisoned, queued and synchronised by rules the raw tensor bypasses. Checked at construction and at every use (an
// InitBuffer after the construction may have handed the range to the TPipe).
inline void RequireNoPipeOverlap(const char* api, const char* operand, uint32_t addr, uint32_t len) {
    for (const Slot& s : Core().slots)
        if (addr < s.addr + s.len && s.addr < addr + len)
            Fault(api, "%s is a raw-address LocalTensor at UB [0x%x, 0x%x) that overlaps the TPipe buffer at UB "
                       "[0x%x, 0x%x): mixing static tensors with TPipe-managed memory is undefined (asc-devkit guide "
                       "静态Tensor编程, 使用约束和限制)", operand, addr, addr + len, s.addr, s.addr + s.len);
}

inline void RequireLive(const char* api, const char* operand, const TensorRef& r) {
    CoreState& c = Core();
    if (r.slot == kRawSlot) {
        RequireNoPipeOverlap(api, operand, r.addr, r.len);
        return;
    }
    if (r.slot < 0 || r.slot >= static_cast<int32_t>(c.slots.size()))
        Fault(api, "%s is not a tensor obtained from a TQue or TBuf of the current TPipe", operand);
    const Slot& s = c.slots[r.slot];
    if (s.epoch != r.epoch)
        Fault(api, "%s refers to a buffer that was freed or reset (use after FreeTensor / TPipe::Reset)", operand);
    if (s.state == SlotState::FREE)
        Fault(api, "%s refers to a buffer that is not allocated (FreeTensor already called)", operand);
    if (s.state == SlotState::ENQUEUED)
        Fault(api, "%s is still enqueued: DeQue it before using it (EnQue hands the tensor to the consumer)", operand);
}

// Validate a LocalTensor operand of a UB-side API: liveness, position, 32-byte alignment (when required), extent.
inline void RequireOperand(const char* api, const char* operand, const TensorRef& r, uint64_t bytes,
                           bool needAlign = true) {
    RequireLive(api, operand, r);
    if (!IsUbPosition(r.pos))
        Fault(api, "%s has position %s; supported positions are VECIN/VECOUT/VECCALC", operand, PositionName(r.pos));
    if (needAlign && r.addr % kBlock != 0)
        Fault(api, "%s start address 0x%x is not 32-byte aligned", operand, r.addr);
    if (bytes > r.len)
        Fault(api, "%s needs %llu bytes but the tensor only has %u", operand, (unsigned long long)bytes, r.len);
}

// Reads/writes of a UB range by a pipe: initialisation shadow plus hazard tracking.
inline void UbRead(const char* api, const char* operand, int pipe, uint32_t addr, uint32_t len) {
    if (len == 0) return;
    RequireInit(api, operand, addr, len);
    if (pipe == P_V && Rt().timing) LogOperand(operand, addr);
    Access(api, pipe, addr, len, false);
}

inline void UbWrite(const char* api, int pipe, uint32_t addr, uint32_t len) {
    if (len == 0) return;
    Access(api, pipe, addr, len, true);
    MarkInit(addr, len);
}

// The reserved UB scratch at TMP_UB_OFFSET (asc-devkit impl/basic_api/utils/kernel_utils_constants.h: 184 KB on
// 2201, 248 KB on 2002/1001, where the twin's kUbKernelBytes ends) that some APIs write on the vector pipe, e.g.
// Select with SELMODE 1/2 on 2201 and 2002 (impl/basic_api/dav_c220 and dav_m200 kernel_operator_vec_cmpsel_impl.h,
// VselIntrinsicsImplPre: one 32-byte block). A TPipe never allocates it; a raw-address LocalTensor there is
// clobbered: the block is written by `api` on PIPE_V (hazards checked) and left unwritten for the init shadow.
constexpr bool kHasTmpUbScratch = kArch == 2201 || kArch == 2002 || kArch == 1001;
inline void ReservedScratchWrite(const char* api, uint32_t offset, uint32_t len) {
    static_assert(kUbKernelBytes < kUbBytes || !kHasTmpUbScratch, "TMP_UB_OFFSET scratch outside UB");
    CoreState& c = Core();
    const uint32_t addr = kUbKernelBytes + offset;
    const uint32_t dst = c.acc.dst;
    Access(api, P_V, addr, len, true);
    c.acc.dst = dst;  // the event log keeps the API's own dst
    std::memset(c.ub.data() + addr, 0xFF, len);
    std::memset(c.init.data() + addr, 0, len);
}

template <typename T> inline T* UbPtr(uint32_t addr) { return reinterpret_cast<T*>(Core().ub.data() + addr); }

}  // namespace twin

namespace AscendC {

template <typename T> class LocalTensor {
public:
    using PrimType = T;

    LocalTensor() = default;

    // Static tensor programming (LocalTensor构造函数.md; impl/basic_api/kernel_tensor_impl.h CreateTensor): a tensor
    // of tileSize elements at UB byte address addr, no TPipe involved. Rules of the devkit's CPU-debug CreateTensor:
    // pos neither GM nor MAX, addr 32-byte aligned, 0 < tileSize, tileSize * sizeof(T) a multiple of 32 bytes and
    // addr + that within the position's physical memory (bufferInitLen: UB 192 KB on 2201, 256 KB on 3510/2002,
    // the twin's kUbBytes), reserved regions included. Not on 1001 (the doc's "是否支持C++ Tensor编程": Atlas
    // training series 不支持). Only the UB positions are modelled.
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize) {
        static_assert(twin::kArch != 1001 && sizeof(T) > 0,
                      "LocalTensor(TPosition, addr, tileSize): static tensor programming is not supported on NpuArch "
                      "1001 (Atlas training series)");
        const char* api = "LocalTensor(TPosition, addr, tileSize)";
        const uint8_t p = static_cast<uint8_t>(pos);
        if (pos == TPosition::GM || pos == TPosition::MAX)
            twin::Fault(api, "position %s: a LocalTensor cannot be placed in GM or MAX", twin::PositionName(p));
        if (!twin::IsUbPosition(p))
            twin::Fault(api, "position %s is not modelled by the twin (UB positions VECIN/VECOUT/VECCALC only)",
                        twin::PositionName(p));
        const uint64_t bytes = static_cast<uint64_t>(tileSize) * sizeof(T);
        if (addr % twin::kBlock != 0) twin::Fault(api, "addr %u is not 32-byte aligned", addr);
        if (tileSize == 0) twin::Fault(api, "tileSize 0: a tensor needs at least one element");
        if (bytes % twin::kBlock != 0)
            twin::Fault(api, "tileSize %u elements = %llu bytes is not a multiple of 32 bytes", tileSize,
                        (unsigned long long)bytes);
        if (addr + bytes > twin::kUbBytes)
            twin::Fault(api, "UB [%u, %llu) exceeds the %u bytes of this architecture's UB", addr,
                        (unsigned long long)(addr + bytes), twin::kUbBytes);
        twin::CoreState& c = twin::Core();
        if (!c.socStateInit)
            twin::Fault(api, "static tensor programming without InitSocState(): call it at the kernel entry (the "
                             "global state registers are undefined otherwise; a TPipe would initialise them) "
                             "(asc-devkit guide 静态Tensor编程, 使用约束和限制)");
        c.staticTensors = true;
        ref_ = {addr, static_cast<uint32_t>(bytes), twin::kRawSlot, 0, p};
        capacity_ = ref_.len;
        twin::RequireNoPipeOverlap(api, "tensor", addr, ref_.len);
    }

    LocalTensor operator[](const uint32_t offset) const {
        uint64_t bytes = static_cast<uint64_t>(offset) * sizeof(T);
        if (bytes > ref_.len) twin::Fault("LocalTensor::operator[]", "offset %u exceeds the tensor size %u",
                                          offset, GetSize());
        LocalTensor out = *this;
        out.ref_.addr += static_cast<uint32_t>(bytes);
        out.ref_.len -= static_cast<uint32_t>(bytes);
        out.capacity_ = capacity_ > bytes ? capacity_ - static_cast<uint32_t>(bytes) : 0;
        return out;
    }

    T GetValue(const uint32_t index) const {
        twin::RequireLive("LocalTensor::GetValue", "tensor", ref_);
        if (index >= GetSize()) twin::Fault("LocalTensor::GetValue", "index %u out of range (size %u)", index,
                                            GetSize());
        uint32_t a = ref_.addr + index * sizeof(T);
        twin::UbRead("LocalTensor::GetValue", "tensor", twin::P_S, a, sizeof(T));
        twin::NextOp(twin::P_S);
        T v;
        std::memcpy(&v, twin::Core().ub.data() + a, sizeof(T));
        return v;
    }

    template <typename T1> void SetValue(const uint32_t index, const T1 value) const {
        static_assert(std::is_same<T1, T>::value || (std::is_arithmetic<T1>::value && std::is_arithmetic<T>::value),
                      "SetValue: half/bfloat16_t tensors take a value of the same type (no scalar conversion on "
                      "the device)");
        twin::RequireLive("LocalTensor::SetValue", "tensor", ref_);
        if (index >= GetSize()) twin::Fault("LocalTensor::SetValue", "index %u out of range (size %u)", index,
                                            GetSize());
        uint32_t a = ref_.addr + index * sizeof(T);
        T v = static_cast<T>(value);
        twin::UbWrite("LocalTensor::SetValue", twin::P_S, a, sizeof(T));
        twin::NextOp(twin::P_S);
        std::memcpy(twin::Core().ub.data() + a, &v, sizeof(T));
    }

    template <typename CAST_T> LocalTensor<CAST_T> ReinterpretCast() const {
        LocalTensor<CAST_T> out;
        out.ref_ = ref_;
        out.capacity_ = capacity_;
        return out;
    }

    uint32_t GetSize() const { return ref_.len / static_cast<uint32_t>(sizeof(T)); }
    uint32_t GetLength() const { return ref_.len; }
    void SetSize(const uint32_t size) {
        if (static_cast<uint64_t>(size) * sizeof(T) > capacity_)
            twin::Fault("LocalTensor::SetSize", "size %u exceeds the buffer's %u bytes", size, capacity_);
        ref_.len = size * static_cast<uint32_t>(sizeof(T));
    }
    uint64_t GetPhyAddr() const { return ref_.addr; }
    TPosition GetPosition() const { return static_cast<TPosition>(ref_.pos); }

    // Twin internals (not part of the Ascend C API).
    const twin::TensorRef& TwinRef() const { return ref_; }
    static LocalTensor TwinMake(const twin::TensorRef& r) {
        LocalTensor t;
        t.ref_ = r;
        t.capacity_ = r.len;
        return t;
    }

private:
    template <typename U> friend class LocalTensor;
    twin::TensorRef ref_;
    uint32_t capacity_ = 0;
};

template <typename T> class GlobalTensor {
public:
    using PrimType = T;

    GlobalTensor() = default;

    // The real API checks neither the address nor the size: only accesses are checked (against the host buffers
    // and this size), so an idle core may set a base past the end of its buffer.
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        addr_ = buffer;
        size_ = bufferSize;
        bounded_ = true;
        set_ = true;
    }

    void SetGlobalBuffer(__gm__ T* buffer) {
        addr_ = buffer;
        size_ = 0;
        bounded_ = false;
        set_ = true;
    }

    // Scalar accesses go through the core's data cache (core.h).
    T GetValue(const uint64_t offset) const {
        const char* api = "GlobalTensor::GetValue";
        const T* p = Check(api, offset, 1, false, true);
        twin::Counters().scalarGmReads += 1;
        if (twin::Rt().timing) twin::LogScalar(0, 1, 0);
        T v;
        int buf = twin::FindGm(api, p, sizeof(T));
        twin::ScalarGmRead(api, buf, static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(p) - twin::Rt().gm[buf].base),
                           &v, sizeof(T));
        return v;
    }

    void SetValue(const uint64_t offset, T value) {
        const char* api = "GlobalTensor::SetValue";
        const T* p = Check(api, offset, 1, true, true);
        twin::Counters().scalarGmWrites += 1;
        if (twin::Rt().timing) twin::LogScalar(0, 0, 1);
        int buf = twin::FindGm(api, p, sizeof(T));
        twin::ScalarGmWrite(api, buf, static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(p) - twin::Rt().gm[buf].base),
                            &value, sizeof(T));
    }

    // No check at the call, as in the real API (an idle core may offset past the end); the view keeps the elements
    // left of the declared size, so any access beyond them faults.
    GlobalTensor operator[](const uint64_t offset) const {
        GlobalTensor out = *this;
        out.addr_ = addr_ + offset;
        if (bounded_) out.size_ = offset < size_ ? size_ - offset : 0;
        return out;
    }

    uint64_t GetSize() const { return size_; }
    __gm__ T* GetPhyAddr() const { return addr_; }

    // The mode travels with the tensor and its views (operator[] copies it); copies log it for the time model. Only
    // the modes the devkit turns into address bits reach the copies (impl/basic_api/kernel_tensor_impl.h
    // SetL2CacheHint, utils/kernel_utils_macros.h L2CacheAlter): on 3510 DISABLE and PERSISTENT (LAST sets no bit);
    // on 2201 DISABLE alone, under -DL2_CACHE_HINT, which the op compiler passes to every build but sanitizer and
    // debug ones (tools/build/asc_op_compile_base/asc_op_compiler/compile_op.py), so the twin models that build. 1001
    // compiles the call to nothing, and the docs (GlobalTensor/SetL2CacheHint.md) list Atlas inference and training
    // parts as unsupported: there the call is accepted and changes nothing.
    template <CacheRwMode rwMode = CacheRwMode::RW>
    void SetL2CacheHint(CacheMode mode) {
#if __NPU_ARCH__ == 3510
        const bool kept = mode == CacheMode::CACHE_MODE_DISABLE || mode == CacheMode::CACHE_MODE_PERSISTENT;
#elif __NPU_ARCH__ == 2201
        const bool kept = mode == CacheMode::CACHE_MODE_DISABLE;
#else
        const bool kept = false;
#endif
        cacheMode_ = static_cast<uint8_t>(kept ? mode : CacheMode::CACHE_MODE_NORMAL);
    }
    __gm__ T* GetPhyAddr(const uint64_t offset) const { return addr_ + offset; }

    // Twin internal: bounds-checked pointer to `count` elements from `offset`, recorded as a GM access.
    // `scalar`: a GetValue/SetValue (data cache); otherwise a DMA copy (MTE2 read / MTE3 write), checked against
    // the lines this core has cached.
    const T* Check(const char* api, uint64_t offset, uint64_t count, bool write, bool scalar = false) const {
        if (!set_) twin::Fault(api, "GlobalTensor used before SetGlobalBuffer");
        if (bounded_ && offset + count > size_)
            twin::Fault(api, "GM elements [%llu, %llu) are outside the GlobalTensor's %llu elements",
                        (unsigned long long)offset, (unsigned long long)(offset + count), (unsigned long long)size_);
        const T* p = addr_ + offset;
        int buf = twin::FindGm(api, p, count * sizeof(T));
        twin::RecordGm(buf, p, count * sizeof(T), write);
        if (!scalar) {
            twin::DmaTouchesLines(api, buf, static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(p) -
                                                                  twin::Rt().gm[buf].base),
                                  count * sizeof(T), write);
            if (twin::Rt().timing) twin::LogBurst(buf, p, count * sizeof(T), cacheMode_);
        }
        return p;
    }

    // The byte form, for DataCopyPad's byte strides (a GM block may start off an element boundary).
    const uint8_t* CheckBytes(const char* api, uint64_t offset, uint64_t bytes, bool write) const {
        if (!set_) twin::Fault(api, "GlobalTensor used before SetGlobalBuffer");
        if (bounded_ && offset + bytes > size_ * sizeof(T))
            twin::Fault(api, "GM bytes [%llu, %llu) are outside the GlobalTensor's %llu bytes",
                        (unsigned long long)offset, (unsigned long long)(offset + bytes),
                        (unsigned long long)(size_ * sizeof(T)));
        const uint8_t* p = reinterpret_cast<const uint8_t*>(addr_) + offset;
        int buf = twin::FindGm(api, p, bytes);
        twin::RecordGm(buf, p, bytes, write);
        twin::DmaTouchesLines(api, buf, static_cast<uint64_t>(p - twin::Rt().gm[buf].base), bytes, write);
        if (twin::Rt().timing) twin::LogBurst(buf, p, bytes, cacheMode_);
        return p;
    }

private:
    __gm__ T* addr_ = nullptr;
    uint64_t size_ = 0;
    bool bounded_ = false;
    bool set_ = false;
    uint8_t cacheMode_ = static_cast<uint8_t>(CacheMode::CACHE_MODE_NORMAL);
};

// ---- DataCacheCleanAndInvalid (asc-devkit include/basic_api/kernel_operator_cache_intf.h) ----------------------
// Declared per arch as in impl/basic_api/kernel_operator_cache_intf_impl.h: the dcciDst forms on 2201/3510, the
// two-parameter GlobalTensor form also on 2002, none on 1001. SINGLE_CACHE_LINE cleans and invalidates the line
// holding dst's first element, ENTIRE_DATA_CACHE every line of the core. CACHELINE_UB (UB coherence) does not touch
// GM lines; the LocalTensor form has no effect on GM (the twin does not cache scalar UB accesses).
enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

}  // namespace AscendC

namespace twin {
template <typename T, AscendC::CacheLine entireType, bool toGm>
inline void Dcci(const AscendC::GlobalTensor<T>& dst) {
    const char* api = "DataCacheCleanAndInvalid";
    CountApi(api, 0, 0);
    if (!toGm) return;
    // The write-back is issued by the scalar unit and is not complete when the call returns: a DMA touching the
    // line must wait for it (DataSyncBarrier where it exists, and S -> MTE pipe synchronisation; core.h
    // DmaTouchesLines). The twin writes GM now and checks that order.
    CoreState& c = Core();
    auto pend = [&c](uint64_t key) { c.pendingWb[key] = PendingWriteBack{c.seq[P_S], false}; };
    if (entireType == AscendC::CacheLine::ENTIRE_DATA_CACHE) {
        for (const auto& kv : c.dcache)
            if (kv.second.dirty) pend(kv.first);
        FlushAllLines();
    } else {
        const uint8_t* p = reinterpret_cast<const uint8_t*>(dst.GetPhyAddr());
        const int buf = FindGm(api, p, 0);
        const uint64_t off = static_cast<uint64_t>(p - Rt().gm[buf].base);
        auto it = c.dcache.find(LineKey(buf, off));
        if (it != c.dcache.end() && it->second.dirty) pend(it->first);
        FlushLine(buf, off);
    }
    NextOp(P_S);
}
}  // namespace twin

namespace AscendC {

template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    static_assert((twin::kArch == 2201 || twin::kArch == 3510) && sizeof(T) > 0,
                  "DataCacheCleanAndInvalid<T, CacheLine, DcciDst>: only on NpuArch 2201/3510 (2002 has the form "
                  "without DcciDst, 1001 none)");
    static_assert(dcciDst != DcciDst::CACHELINE_ATOMIC || twin::kArch == 3510,
                  "DataCacheCleanAndInvalid: DcciDst::CACHELINE_ATOMIC is supported on NpuArch 3510 only");
    twin::Dcci<T, entireType, dcciDst != DcciDst::CACHELINE_UB>(dst);
}

template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const LocalTensor<T>& dst) {
    static_assert((twin::kArch == 2201 || twin::kArch == 3510) && sizeof(T) > 0,
                  "DataCacheCleanAndInvalid(LocalTensor): only on NpuArch 2201/3510");
    twin::RequireLive("DataCacheCleanAndInvalid", "dst", dst.TwinRef());
    twin::CountApi("DataCacheCleanAndInvalid", 0, 0);
}

template <typename T, CacheLine entireType>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    static_assert((twin::kArch == 2201 || twin::kArch == 3510 || twin::kArch == 2002) && sizeof(T) > 0,
                  "DataCacheCleanAndInvalid: not supported on NpuArch 1001 (Atlas training series)");
    twin::Dcci<T, entireType, true>(dst);
}

}  // namespace AscendC
