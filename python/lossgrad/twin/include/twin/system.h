// System variables, kernel-entry macros (tiling data, tiling keys, kernel type) and scalar conversions.
#pragma once

#include "core.h"
#include "types.h"

namespace AscendC {

inline int64_t GetBlockIdx() { return twin::Core().idx; }
inline int64_t GetBlockNum() { return twin::Core().num; }
inline int64_t GetTaskRatio() { return 1; }
constexpr uint32_t GetUBSizeInBytes() { return twin::kUbBytes; }
constexpr int16_t GetDataBlockSizeInBytes() { return 32; }
constexpr uint32_t GetVecLen() { return 256; }
// Static tensor programming must call it at the kernel entry (a TPipe does it otherwise); see LocalTensor(pos, ..).
inline void InitSocState() { twin::Core().socStateInit = true; }

enum KernelMetaType {
    KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_AICORE, KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE, KERNEL_TYPE_MIX_VECTOR_CORE, KERNEL_TYPE_MAX
};

// Scalar bf16 conversions (标量计算/Cast, impl/basic_api/kernel_scalar_convert.h), per arch as the devkit declares
// them: float -> bfloat16_t (round to nearest even, NaN -> 0x7FFF) and its deprecated alias ToBfloat16 on 2201 and
// 3510; bfloat16_t -> float as a plain function on 2201 and as a template (U = float) on 3510, each with the
// deprecated alias ToFloat. None exist on 2002/1001.
#if __NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510
inline bfloat16_t Cast(const float& fVal) { return bfloat16_t(twin::Bf16FromFloat(fVal), twin::Bf16Bits{}); }
inline bfloat16_t ToBfloat16(const float& fVal) { return Cast(fVal); }
#endif
#if __NPU_ARCH__ == 2201
inline float Cast(const bfloat16_t& bVal) { return twin::DecodeBf16(bVal.bits); }
inline float ToFloat(const bfloat16_t& bVal) { return Cast(bVal); }
#elif __NPU_ARCH__ == 3510
template <typename T, typename U = float,
          typename = typename std::enable_if<std::is_same<T, bfloat16_t>::value, void>::type>
constexpr inline U Cast(T bVal) {
    static_assert(std::is_same<U, float>::value, "Cast to float only support return float");
    return twin::DecodeBf16(bVal.bits);
}
template <typename T> constexpr inline float ToFloat(const T& bVal) {
    static_assert(std::is_same<T, bfloat16_t>::value,
                  "ToFloat only support bfloat16_t (and the fp8/fp4 types the twin does not model) on this device");
    return Cast<T, float>(bVal);
}
#endif

}  // namespace AscendC

namespace twin {

constexpr bool KernelTypeAllowed(AscendC::KernelMetaType t) {
    using namespace AscendC;
    if (kArch == 1001) return false;  // Atlas training parts have no KERNEL_TASK_TYPE macro
    if (kArch == 2002) return t == KERNEL_TYPE_AICORE || t == KERNEL_TYPE_MIX_VECTOR_CORE;
    return t == KERNEL_TYPE_AIV_ONLY || t == KERNEL_TYPE_AIC_ONLY || t == KERNEL_TYPE_MIX_AIV_1_0 ||
           t == KERNEL_TYPE_MIX_AIC_1_0 || t == KERNEL_TYPE_MIX_AIC_1_1 || t == KERNEL_TYPE_MIX_AIC_1_2;
}

// KERNEL_TASK_TYPE(_DEFAULT) at run time: the type this launch's kernel runs as.
inline void DeclareKernelType(AscendC::KernelMetaType t, bool forKey) {
    static bool keyed = false;  // a key's own type was declared in this launch (it wins over the default)
    Runtime& r = Rt();
    if (r.kernelType < 0) keyed = false;
    if (forKey || !keyed) r.kernelType = static_cast<int32_t>(t);
    keyed = keyed || forKey;
}

// NpuArch 2002 with KERNEL_TYPE_MIX_VECTOR_CORE: the kernel also runs on the 310P Vector Cores (and the AI Cores run
// as Vector Cores: guide 如何在矢量编程时启用Vector-Core.md), whose build lacks what the devkit compiles out under
// __DAV_M200_VEC__ (impl/basic_api/dav_m200/kernel_operator_data_copy_impl.h: UB->UB DataCopy) and the inter-core
// synchronisation (the same guide: IBSet, IBWait, SyncAll are not supported with the Vector Core).
inline void RequireNotOnVectorCore(const char* api, const char* why) {
    if (kArch == 2002 && Rt().kernelType == static_cast<int32_t>(AscendC::KERNEL_TYPE_MIX_VECTOR_CORE))
        Fault(api, "not supported on the Atlas inference (310P) Vector Core, where KERNEL_TYPE_MIX_VECTOR_CORE also "
                   "runs this kernel: %s", why);
}

// GET_TILING_DATA reads the struct from the tiling GM buffer; the host must have passed at least sizeof(struct).
template <typename T> inline void ReadTiling(T* out, const uint8_t* tiling) {
    static_assert(std::is_trivially_copyable<T>::value, "tiling data must be trivially copyable");
    if (tiling == nullptr) Fault("GET_TILING_DATA", "tiling pointer is null");
    int buf = FindGm("GET_TILING_DATA", tiling, 0);
    const GmBuffer& b = Rt().gm[buf];
    uint64_t off = static_cast<uint64_t>(tiling - b.base);
    if (off + sizeof(T) > b.size)
        Fault("GET_TILING_DATA", "the tiling buffer holds %llu bytes but the struct needs %zu",
              (unsigned long long)(b.size - off), sizeof(T));
    // The package build's GET_TILING_DATA copies the struct in 32-bit scalar GM loads (asc-tools utils/templates/
    // op_project_templates/ascendc/customize/cmake/util/tiling_data_def_build.py): timed as such, and counted
    // apart from the kernel's own data accesses (tiling_reads).
    const uint32_t words = static_cast<uint32_t>((sizeof(T) + 3) / 4);
    Counters().tilingReads += words;
    if (Rt().timing) LogScalar(0, words, 0);
    std::memcpy(out, tiling, sizeof(T));
}

}  // namespace twin

// The kernel type also holds at run time: a key's own KERNEL_TASK_TYPE wins over the default for that tiling key.
#define KERNEL_TASK_TYPE_DEFAULT(value)                                                                               \
    static_assert(::twin::KernelTypeAllowed(::AscendC::value),                                                        \
                  "KERNEL_TASK_TYPE_DEFAULT(" #value ") is not supported on this NpuArch");                            \
    ::twin::DeclareKernelType(::AscendC::value, false)
#define KERNEL_TASK_TYPE(key, value)                                                                                  \
    static_assert(::twin::KernelTypeAllowed(::AscendC::value),                                                        \
                  "KERNEL_TASK_TYPE(" #key ", " #value ") is not supported on this NpuArch");                          \
    if (TILING_KEY_IS(key)) ::twin::DeclareKernelType(::AscendC::value, true)

#define REGISTER_TILING_DEFAULT(tilingStruct) using TwinDefaultTiling = tilingStruct
#define REGISTER_TILING_FOR_TILINGKEY(expr, tilingStruct)
#define REGISTER_NONE_TILING
#define GET_TILING_DATA(var, tiling)                                                                                  \
    TwinDefaultTiling var;                                                                                            \
    ::twin::ReadTiling(&var, reinterpret_cast<const uint8_t*>(tiling))
#define GET_TILING_DATA_WITH_STRUCT(tilingStruct, var, tiling)                                                        \
    tilingStruct var;                                                                                                 \
    ::twin::ReadTiling(&var, reinterpret_cast<const uint8_t*>(tiling))

#ifndef TILING_KEY_VAR
#define TILING_KEY_VAR (::twin::Rt().tilingKey)
#endif
#define TILING_KEY_IS(k) (TILING_KEY_VAR == static_cast<uint64_t>(k))
