// DataCopy (contiguous and DataCopyParams forms, GM<->UB and UB->UB), DataCopyPad and SetPadValue.
//
// Stricter than hardware: a DataCopy whose byte count is not a multiple of 32 faults (hardware silently drops the
// tail); DataCopyPad does not exist on 2002/1001 (compile error); bytes DataCopyPad leaves as "dummy" stay
// uninitialised, so a kernel that reads them faults.
#pragma once

#include "pipe.h"
#include "system.h"

namespace AscendC {

struct DataCopyParams {
    DataCopyParams() {}
    DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    union {
        uint16_t srcGap = 0;
        uint16_t srcStride;
    };
    union {
        uint16_t dstGap = 0;
        uint16_t dstStride;
    };
};

#if __NPU_ARCH__ == 3510
using TwinStride = int64_t;
#else
using TwinStride = uint32_t;
#endif

struct DataCopyPadParams {
    DataCopyPadParams() {}
    DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                      const uint64_t padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

struct DataCopyExtParams {
    DataCopyExtParams() {}
    DataCopyExtParams(const uint16_t count, const uint32_t len, const TwinStride srcStrideIn,
                      const TwinStride dstStrideIn, const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    TwinStride srcStride = 0;
    TwinStride dstStride = 0;
    uint32_t rsv = 0;
};

template <typename T> struct DataCopyPadExtParams {
    DataCopyPadExtParams() {}
    DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue{};
};

enum class PaddingMode : uint8_t { Normal = 0, Compact };

}  // namespace AscendC

namespace twin {

template <typename T> constexpr bool kCopyDtypeOk =
    std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value || std::is_same<T, int16_t>::value ||
    std::is_same<T, uint16_t>::value || std::is_same<T, half>::value || std::is_same<T, int32_t>::value ||
    std::is_same<T, uint32_t>::value || std::is_same<T, float>::value || std::is_same<T, int64_t>::value ||
    std::is_same<T, uint64_t>::value || std::is_same<T, double>::value ||
    (std::is_same<T, bfloat16_t>::value && kBf16Io);

template <typename T> inline void CheckCopyType() {
    static_assert(kCopyDtypeOk<T>, "DataCopy/DataCopyPad: element type not supported on this architecture "
                                   "(bfloat16_t needs NpuArch 2201 or 3510)");
}

// The byte length of a contiguous DataCopy of `count` elements: whole 32-byte blocks (the hardware silently drops a
// partial tail) and at most 65535 of them (the block length is a uint16_t in the copy instruction).
template <typename T> inline uint64_t ContiguousBytes(const char* api, uint32_t count) {
    CheckCopyType<T>();
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % kBlock != 0)
        Fault(api, "%u elements = %llu bytes is not a multiple of 32 (hardware silently drops the tail; use "
                   "DataCopyPad or a tail strategy)", count, (unsigned long long)bytes);
    if (bytes / kBlock > 65535)
        Fault(api, "%u elements = %llu blocks of 32 bytes exceed the 65535 one copy can move", count,
              (unsigned long long)(bytes / kBlock));
    return bytes;
}

// The checks every DataCopyParams form shares.
template <typename T> inline void CheckCopyParams(const char* api, const AscendC::DataCopyParams& p) {
    CheckCopyType<T>();
    if (p.blockCount > 4095) Fault(api, "blockCount %u exceeds 4095", p.blockCount);
}

// DataCopyExtParams field ranges (docs/zh DataCopyPad（GMToUB非对齐数据搬运）.md and （UBToGM非对齐数据搬运）.md,
// 约束说明 table; impl/basic_api/dav_3510/kernel_operator_data_copy_impl.h CheckSrcGmDataCopyExtParamsRange and
// DataCopyPadUB2GMImpl): blockCount [0, 4095], blockLen [0, 2097151] bytes on every arch. Strides: uint32_t on
// 2201, so any value fits; on 3510 (int64_t) the UB-side stride is [0, 65535] blocks and the GM-side one
// [-blockLen, 2^40 - 1] bytes for GM->UB (-blockLen re-reads one block) and [0, 2^40 - 1] for UB->GM.
inline void CheckExtParams(const char* api, const AscendC::DataCopyExtParams& p, bool gmToUb) {
    const char* src = gmToUb ? "DataCopyPad（GMToUB非对齐数据搬运）.md" : "DataCopyPad（UBToGM非对齐数据搬运）.md";
    if (p.blockCount > 4095)
        Fault(api, "blockCount %u exceeds 4095, the range [0, 4095] of the instruction's field (asc-devkit docs %s)",
              p.blockCount, src);
    if (p.blockLen > 2097151u)
        Fault(api, "blockLen %u exceeds 2097151 bytes, the range [0, 2097151] of the instruction's field (asc-devkit "
                   "docs %s)", p.blockLen, src);
    if (kArch != 3510) return;
    const int64_t ub = static_cast<int64_t>(gmToUb ? p.dstStride : p.srcStride);
    const int64_t gm = static_cast<int64_t>(gmToUb ? p.srcStride : p.dstStride);
    const char* ubName = gmToUb ? "dstStride" : "srcStride";
    const char* gmName = gmToUb ? "srcStride" : "dstStride";
    if (ub < 0 || ub > 65535)
        Fault(api, "%s %lld (UB side, 32-byte blocks) is outside [0, 65535], what NpuArch 3510's copy instruction "
                   "holds (asc-devkit docs %s 约束说明; impl/basic_api/dav_3510/kernel_operator_data_copy_impl.h)",
              ubName, (long long)ub, src);
    const int64_t gmMin = gmToUb ? -static_cast<int64_t>(p.blockLen) : 0;
    if (gm < gmMin || gm > (int64_t{1} << 40) - 1)
        Fault(api, "%s %lld (GM side, bytes) is outside [%lld, 2^40 - 1] on NpuArch 3510 (asc-devkit docs %s 约束说明)",
              gmName, (long long)gm, (long long)gmMin, src);
}

inline void CountCopy(bool pad, uint64_t bytes) {
    CoreCounters& c = Counters();
    (pad ? c.dataCopyPadCalls : c.dataCopyCalls) += 1;
    c.dataCopyBytes.push_back(bytes);
}

// GM -> UB: `blocks` blocks of `blockBytes`; GM blocks `srcGapBytes` apart (end to start), UB blocks at `dstPitch`.
template <typename T>
inline void GmToUb(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src,
                   uint32_t blocks, uint64_t blockBytes, uint64_t srcGapBytes, uint64_t dstPitch) {
    if (blocks == 0 || blockBytes == 0) return;
    uint64_t ubBytes = (blocks - 1) * dstPitch + blockBytes;
    RequireOperand(api, "dst", dst.TwinRef(), ubBytes);
    if (reinterpret_cast<uintptr_t>(src.GetPhyAddr()) % sizeof(T) != 0)
        Fault(api, "GM source address is not aligned to the element size");
    uint64_t total = 0;
    for (uint32_t b = 0; b < blocks; ++b) {
        uint64_t srcOff = b * (blockBytes + srcGapBytes);
        if (srcOff % sizeof(T) != 0) Fault(api, "GM block offset %llu is not a whole element", (unsigned long long)srcOff);
        const T* p = src.Check(api, srcOff / sizeof(T), blockBytes / sizeof(T), false);
        uint32_t ua = dst.TwinRef().addr + static_cast<uint32_t>(b * dstPitch);
        UbWrite(api, P_MTE2, ua, static_cast<uint32_t>(blockBytes));
        std::memcpy(Core().ub.data() + ua, p, blockBytes);
        total += blockBytes;
    }
    NextOp(P_MTE2);
    CountCopy(false, total);
}

template <typename T>
inline void UbToGm(const char* api, const AscendC::GlobalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                   uint32_t blocks, uint64_t blockBytes, uint64_t srcPitch, uint64_t dstGapBytes, bool pad,
                   bool byteStrides = false) {
    if (blocks == 0 || blockBytes == 0) return;
    uint64_t ubBytes = (blocks - 1) * srcPitch + blockBytes;
    RequireOperand(api, "src", src.TwinRef(), ubBytes);
    if (reinterpret_cast<uintptr_t>(dst.GetPhyAddr()) % sizeof(T) != 0)
        Fault(api, "GM destination address is not aligned to the element size");
    uint64_t total = 0;
    for (uint32_t b = 0; b < blocks; ++b) {
        uint32_t ua = src.TwinRef().addr + static_cast<uint32_t>(b * srcPitch);
        UbRead(api, "src", P_MTE3, ua, static_cast<uint32_t>(blockBytes));
        uint64_t dstOff = b * (blockBytes + dstGapBytes);
        uint8_t* p;
        if (byteStrides) {  // DataCopyPad: dstStride in bytes, not necessarily whole elements
            p = const_cast<uint8_t*>(dst.CheckBytes(api, dstOff, blockBytes, true));
        } else {
            if (dstOff % sizeof(T) != 0)
                Fault(api, "GM block offset %llu is not a whole element", (unsigned long long)dstOff);
            p = reinterpret_cast<uint8_t*>(const_cast<T*>(dst.Check(api, dstOff / sizeof(T), blockBytes / sizeof(T), true)));
        }
        std::memcpy(p, Core().ub.data() + ua, blockBytes);
        total += blockBytes;
    }
    NextOp(P_MTE3);
    CountCopy(pad, total);
}

}  // namespace twin

namespace AscendC {

// ---- DataCopy, contiguous (level 2) ----------------------------------------------------------------------------
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
    const uint64_t bytes = twin::ContiguousBytes<T>("DataCopy", count);
    twin::GmToUb("DataCopy", dst, src, 1, bytes, 0, bytes);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    const uint64_t bytes = twin::ContiguousBytes<T>("DataCopy", count);
    twin::UbToGm("DataCopy", dst, src, 1, bytes, bytes, 0, false);
}

// ---- DataCopy with DataCopyParams: lengths and gaps in 32-byte blocks on both sides --------------------------------
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    twin::CheckCopyParams<T>("DataCopy", p);
    uint64_t len = static_cast<uint64_t>(p.blockLen) * twin::kBlock;
    twin::GmToUb("DataCopy", dst, src, p.blockCount, len, static_cast<uint64_t>(p.srcGap) * twin::kBlock,
                 len + static_cast<uint64_t>(p.dstGap) * twin::kBlock);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    twin::CheckCopyParams<T>("DataCopy", p);
    uint64_t len = static_cast<uint64_t>(p.blockLen) * twin::kBlock;
    twin::UbToGm("DataCopy", dst, src, p.blockCount, len, len + static_cast<uint64_t>(p.srcGap) * twin::kBlock,
                 static_cast<uint64_t>(p.dstGap) * twin::kBlock, false);
}

// ---- DataCopy UB -> UB (runs on the vector pipe) -----------------------------------------------------------------
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    const char* api = "DataCopy(UB->UB)";
    twin::RequireNotOnVectorCore(api, "the devkit compiles UB->UB DataCopy out of the Vector Core build "
                                      "(impl/basic_api/dav_m200/kernel_operator_data_copy_impl.h, __DAV_M200_VEC__)");
    twin::CheckCopyParams<T>(api, p);
    uint64_t len = static_cast<uint64_t>(p.blockLen) * twin::kBlock;
    if (p.blockCount == 0 || len == 0) return;
    uint64_t srcPitch = len + static_cast<uint64_t>(p.srcGap) * twin::kBlock;
    uint64_t dstPitch = len + static_cast<uint64_t>(p.dstGap) * twin::kBlock;
    twin::RequireOperand(api, "src", src.TwinRef(), (p.blockCount - 1) * srcPitch + len);
    twin::RequireOperand(api, "dst", dst.TwinRef(), (p.blockCount - 1) * dstPitch + len);
    std::vector<uint8_t> tmp(len);
    for (uint32_t b = 0; b < p.blockCount; ++b) {
        uint32_t sa = src.TwinRef().addr + static_cast<uint32_t>(b * srcPitch);
        uint32_t da = dst.TwinRef().addr + static_cast<uint32_t>(b * dstPitch);
        twin::UbRead(api, "src", twin::P_V, sa, static_cast<uint32_t>(len));
        std::memcpy(tmp.data(), twin::Core().ub.data() + sa, len);
        twin::UbWrite(api, twin::P_V, da, static_cast<uint32_t>(len));
        std::memcpy(twin::Core().ub.data() + da, tmp.data(), len);
    }
    twin::NextOp(twin::P_V);
    twin::CountApi("DataCopy(UB->UB)", p.blockCount, p.blockCount * len / sizeof(T), twin::DtypeCode<T>());
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    const uint64_t bytes = twin::ContiguousBytes<T>("DataCopy(UB->UB)", count);
    DataCopy(dst, src, DataCopyParams(1, static_cast<uint16_t>(bytes / twin::kBlock), 0, 0));
}

// ---- SetPadValue / DataCopyPad (A2/A3 and 950 only) ----------------------------------------------------------------
template <typename T, TPosition pos = TPosition::MAX> inline void SetPadValue(T paddingValue) {
    static_assert(twin::kHasDataCopyPad && sizeof(T) > 0, "SetPadValue/DataCopyPad are not supported on this architecture "
                                         "(NpuArch 2002/1001): use aligned DataCopy with a tail strategy");
    twin::CoreState& c = twin::Core();
    c.padValueSet = true;
    c.padValueBits = 0;
    std::memcpy(&c.padValueBits, &paddingValue, sizeof(T));
    c.padValueSize = sizeof(T);
}

template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad) {
    static_assert(twin::kHasDataCopyPad && sizeof(T) > 0, "DataCopyPad is not supported on this architecture (NpuArch 2002/1001): "
                                         "use aligned DataCopy with a tail strategy");
    twin::CheckCopyType<T>();
    const char* api = "DataCopyPad(GM->UB)";
    twin::CheckExtParams(api, p, true);
    if (p.blockLen % sizeof(T) != 0) twin::Fault(api, "blockLen %u is not a multiple of the element size", p.blockLen);
    if (pad.leftPadding * sizeof(T) > 32 || pad.rightPadding * sizeof(T) > 32)
        twin::Fault(api, "padding of %u/%u elements exceeds 32 bytes on a side", pad.leftPadding, pad.rightPadding);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    const uint64_t left = pad.leftPadding * sizeof(T), right = pad.rightPadding * sizeof(T);
    const uint64_t rowBlocks = (left + p.blockLen + right + 31) / 32;
    const uint64_t pitch = (rowBlocks + static_cast<uint64_t>(p.dstStride)) * 32;
    twin::RequireOperand(api, "dst", dst.TwinRef(), (p.blockCount - 1) * pitch + rowBlocks * 32);
    twin::CoreState& c = twin::Core();
    // One pad-value register (MOV_PAD_VAL): isPad=true writes paddingValue into it, as SetPadValue does
    // (asc-devkit impl/basic_api/dav_c220 and dav_3510 kernel_operator_data_copy_impl.h: set_mov_pad_val), so the
    // value outlives this call. Padding source: the register if it holds a value of this element size; otherwise
    // dummy bytes, which the twin leaves uninitialised so that any later read of them faults.
    if (pad.isPad) {
        c.padValueSet = true;
        c.padValueBits = 0;
        std::memcpy(&c.padValueBits, &pad.paddingValue, sizeof(T));
        c.padValueSize = sizeof(T);
    }
    bool fill = c.padValueSet && c.padValueSize == sizeof(T);
    T value{};
    if (fill) std::memcpy(static_cast<void*>(&value), &c.padValueBits, sizeof(T));
    uint64_t total = 0;
    for (uint32_t b = 0; b < p.blockCount; ++b) {
        // srcStride is in bytes and need not be a whole element (asc-devkit DataCopyPad.md: DataCopyExtParams).
        uint64_t srcOff = b * (static_cast<uint64_t>(p.blockLen) + p.srcStride);
        const uint8_t* g = src.CheckBytes(api, srcOff, p.blockLen, false);
        uint32_t row = dst.TwinRef().addr + static_cast<uint32_t>(b * pitch);
        // The whole row is written by MTE2; bytes without defined content are then marked uninitialised again.
        twin::UbWrite(api, twin::P_MTE2, row, static_cast<uint32_t>(rowBlocks * 32));
        uint8_t* u = c.ub.data() + row;
        std::memset(u, 0xFF, rowBlocks * 32);
        std::memcpy(u + left, g, p.blockLen);
        if (fill) {
            for (uint64_t i = 0; i < left; i += sizeof(T)) std::memcpy(u + i, &value, sizeof(T));
            for (uint64_t i = 0; i < right; i += sizeof(T)) std::memcpy(u + left + p.blockLen + i, &value, sizeof(T));
        } else {
            std::memset(c.init.data() + row, 0, left);
            std::memset(c.init.data() + row + left + p.blockLen, 0, right);
        }
        uint64_t defined = left + p.blockLen + right;
        std::memset(c.init.data() + row + defined, 0, rowBlocks * 32 - defined);
        total += p.blockLen;
    }
    twin::NextOp(twin::P_MTE2);
    twin::CountCopy(true, total);
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    static_assert(twin::kHasDataCopyPad && sizeof(T) > 0, "DataCopyPad is not supported on this architecture (NpuArch 2002/1001): "
                                         "use aligned DataCopy with a tail strategy");
    twin::CheckCopyType<T>();
    const char* api = "DataCopyPad(UB->GM)";
    twin::CheckExtParams(api, p, false);
    if (p.blockLen % sizeof(T) != 0) twin::Fault(api, "blockLen %u is not a multiple of the element size", p.blockLen);
    const uint64_t rowBlocks = (static_cast<uint64_t>(p.blockLen) + 31) / 32;
    twin::UbToGm(api, dst, src, p.blockCount, p.blockLen, (rowBlocks + static_cast<uint64_t>(p.srcStride)) * 32,
                 static_cast<uint64_t>(p.dstStride), true, /*byteStrides=*/true);
}

// ---- DataCopyPad, older DataCopyParams / DataCopyPadParams forms (kernel_operator_data_copy_intf.h) ------------
// Same geometry as the Ext forms (blockLen in bytes, GM strides in bytes, UB strides in 32-byte blocks), with 16-bit
// blockLen; DataCopyPadParams::paddingValue is the raw bit pattern written to the pad register (its low sizeof(T)
// bytes), not a value converted to T.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& dataCopyParams,
                        const DataCopyPadParams& padParams) {
    static_assert(twin::kHasDataCopyPad && sizeof(T) > 0, "DataCopyPad is not supported on this architecture "
                                                          "(NpuArch 2002/1001): use aligned DataCopy with a tail strategy");
    T value;
    std::memcpy(static_cast<void*>(&value), &padParams.paddingValue, sizeof(T));  // little-endian low bytes
    DataCopyPad(dst, src,
                DataCopyExtParams(dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                                  dataCopyParams.dstStride, 0),
                DataCopyPadExtParams<T>(padParams.isPad, padParams.leftPadding, padParams.rightPadding, value));
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& dataCopyParams) {
    static_assert(twin::kHasDataCopyPad && sizeof(T) > 0, "DataCopyPad is not supported on this architecture "
                                                          "(NpuArch 2002/1001): use aligned DataCopy with a tail strategy");
    DataCopyPad(dst, src,
                DataCopyExtParams(dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                                  dataCopyParams.dstStride, 0));
}

}  // namespace AscendC
