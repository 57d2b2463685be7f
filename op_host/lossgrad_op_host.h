// Host-side helpers shared by every generated op_host/<entry_name>.cpp: shape and dtype inference, and the
// TilingFunc adapter that turns a gert::TilingContext into lossgrad_tiling::Inputs, calls the portable tiling core
// and copies its Result back into the context.
//
// CANN API facts used here (no CANN code is copied; signatures as used by CANN's own ops):
//   gert::TilingContext: GetInputShape(i)->GetStorageShape(), GetInputDesc(i)->GetDataType(), GetOutputShape(0),
//     GetOutputDesc(0), GetAttrs()->GetStr(i) / GetAttrPointer<T>(i), GetPlatformInfo(), GetRawTilingData()
//     (GetData/GetCapacity/SetDataSize), SetBlockDim, SetTilingKey, GetWorkspaceSizes(1)
//     -- hicann/ops-nn loss/mse_loss_grad_v2/op_host/arch35/mse_loss_grad_v2_tiling_arch35.cpp
//   platform_ascendc::PlatformAscendC: GetCoreNumAiv, GetCoreMemSize(CoreMemType::UB, uint64_t&) (only when the
//     architecture is not in the generated table, see KernelUbBudget),
//     GetLibApiWorkSpaceSize, GetSocVersion -- "tiling/platform/platform_ascendc.h" as shipped with CANN
//   gert::InferShapeContext / gert::InferDataTypeContext: GetInputShape/GetOutputShape, GetInputDataType/
//     SetOutputDataType -- hicann/ops-nn loss/mse_loss_grad_v2/op_host/mse_loss_grad_v2_infershape.cpp
#ifndef LOSSGRAD_OP_HOST_H_
#define LOSSGRAD_OP_HOST_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

// The msOpGen layout keeps the kernel headers in ../op_kernel; other layouts put them on the include path.
#if __has_include("../op_kernel/lossgrad_tiling_data.h")
#include "../op_kernel/lossgrad_tiling_data.h"
#else
#include "lossgrad_tiling_data.h"
#endif
#include "tiling_core/lossgrad_tiling_core.h"
// Generated with the package from lossgrad.socs/registry/tiling (lossgrad.tiling.cxx_tables): kArchs, the kernel UB
// budget of each architecture.
#include "tiling_core/lossgrad_tiling_tables.h"

static_assert(std::is_trivially_copyable<LossGradTilingData>::value,
              "LossGradTilingData is memcpy'd between host and kernel; it must be trivially copyable");
static_assert(sizeof(LossGradTilingData) <= lossgrad_tiling::kMaxTilingDataBytes,
              "LossGradTilingData does not fit lossgrad_tiling::Result::tiling_data");

// CANN 9.x docs name the block-count setter SetSimdNumBlocks; SetBlockDim is accepted by every version we target
// (CANN's own 2026 ops still call it). Override with -DLOSSGRAD_SET_BLOCK_DIM=SetSimdNumBlocks if a toolkit drops it.
#ifndef LOSSGRAD_SET_BLOCK_DIM
#define LOSSGRAD_SET_BLOCK_DIM SetBlockDim
#endif

namespace lossgrad_host {

constexpr int64_t kUnknownDim = -1;  // gert's marker for a dim known only at run time
constexpr int64_t kUnknownRank = -2; // gert's marker (as dim 0 of a 1-d shape) for an unknown rank

// CANN's OP_LOGE lives in internal headers; stderr reaches plain runs, plog-less containers and test logs alike.
inline void LogError(const char* node, const char* what)
{
    std::fprintf(stderr, "[lossgrad][ERROR] %s: %s\n", node != nullptr ? node : "lossgrad", what);
}

inline bool IsUnknownRank(const gert::Shape& s)
{
    return s.GetDimNum() == 1 && s.GetDim(0) == kUnknownRank;
}

// NumPy broadcasting of two shapes whose dims may be unknown (-1). A 1 yields to the other side; an unknown dim
// against a known d > 1 must be 1 or d at run time, so the result is d; two unknowns stay unknown.
inline bool BroadcastInto(const gert::Shape& a, const gert::Shape& b, gert::Shape* out)
{
    const size_t ra = a.GetDimNum();
    const size_t rb = b.GetDimNum();
    const size_t rank = ra > rb ? ra : rb;
    if (rank > static_cast<size_t>(lossgrad_tiling::kMaxRank)) {
        return false;
    }
    gert::Shape result;
    result.SetDimNum(rank);
    for (size_t k = 0; k < rank; ++k) { // k counts from the innermost dim
        const int64_t da = k < ra ? a.GetDim(ra - 1 - k) : 1;
        const int64_t db = k < rb ? b.GetDim(rb - 1 - k) : 1;
        int64_t d = 0;
        if (da == db || db == 1) {
            d = da;
        } else if (da == 1) {
            d = db;
        } else if (da < 0) {
            d = db;
        } else if (db < 0) {
            d = da;
        } else {
            return false;
        }
        result.SetDim(rank - 1 - k, d);
    }
    *out = result;
    return true;
}

inline void SetUnknownRank(gert::Shape* s)
{
    s->SetDimNum(1);
    s->SetDim(0, kUnknownRank);
}

// Output = broadcast of all inputs (L1, MSE, SmoothL1: registry OutputShape.BROADCAST_ALL).
inline ge::graphStatus InferBroadcastAll(gert::InferShapeContext* context, size_t num_inputs, uint32_t optional)
{
    if (context == nullptr) {
        return ge::GRAPH_FAILED;
    }
    gert::Shape* out = context->GetOutputShape(0);
    if (out == nullptr) {
        return ge::GRAPH_FAILED;
    }
    gert::Shape acc;
    bool first = true;
    for (size_t i = 0; i < num_inputs; ++i) {
        const bool is_optional = (optional >> i & 1U) != 0;
        const gert::Shape* in = is_optional ? context->GetOptionalInputShape(i) : context->GetInputShape(i);
        if (in == nullptr) {
            if (is_optional) {
                continue; // an absent optional input takes no part
            }
            return ge::GRAPH_FAILED;
        }
        if (IsUnknownRank(*in)) {
            SetUnknownRank(out);
            return ge::GRAPH_SUCCESS;
        }
        if (first) {
            first = false;
            acc = *in;
        } else if (!BroadcastInto(acc, *in, &acc)) {
            LogError(context->GetNodeName(), "input shapes do not broadcast");
            return ge::GRAPH_FAILED;
        }
    }
    *out = acc;
    return ge::GRAPH_SUCCESS;
}

// Output = one input's shape (KL: self's shape, registry OutputShape.SELF).
inline ge::graphStatus InferSameAs(gert::InferShapeContext* context, size_t index)
{
    if (context == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape* in = context->GetInputShape(index);
    gert::Shape* out = context->GetOutputShape(0);
    if (in == nullptr || out == nullptr) {
        return ge::GRAPH_FAILED;
    }
    *out = *in;
    return ge::GRAPH_SUCCESS;
}

inline ge::graphStatus InferDtypeSameAs(gert::InferDataTypeContext* context, size_t index)
{
    if (context == nullptr) {
        return ge::GRAPH_FAILED;
    }
    return context->SetOutputDataType(0, context->GetInputDataType(index));
}

// aclnn's promotion restricted to the kernel's float types: equal types stay, anything else meets in float32
// (f16 + bf16 -> f32, x + f32 -> f32).
inline ge::graphStatus InferDtypePromoted(gert::InferDataTypeContext* context, size_t num_inputs, uint32_t optional)
{
    if (context == nullptr || num_inputs == 0 || (optional & 1U) != 0) {
        return ge::GRAPH_FAILED;
    }
    ge::DataType acc = context->GetInputDataType(0);
    for (size_t i = 1; i < num_inputs; ++i) {
        const bool is_optional = (optional >> i & 1U) != 0;
        const ge::DataType dt = is_optional ? context->GetOptionalInputDataType(i) : context->GetInputDataType(i);
        if (is_optional && (dt == ge::DT_UNDEFINED || dt == ge::DT_MAX)) {
            continue; // an absent optional input takes no part
        }
        if (dt != acc) {
            acc = ge::DT_FLOAT;
        }
    }
    return context->SetOutputDataType(0, acc);
}

inline bool ToTilingDtype(ge::DataType dt, lossgrad_tiling::DataType* out)
{
    if (dt == ge::DT_FLOAT) {
        *out = lossgrad_tiling::DataType::kFloat32;
    } else if (dt == ge::DT_FLOAT16) {
        *out = lossgrad_tiling::DataType::kFloat16;
    } else if (dt == ge::DT_BF16) {
        *out = lossgrad_tiling::DataType::kBFloat16;
    } else {
        return false;
    }
    return true;
}

inline bool ToReduction(const char* label, lossgrad_tiling::Reduction* out)
{
    if (label == nullptr || std::strcmp(label, "mean") == 0) { // OPTIONAL attr, default "mean"
        *out = lossgrad_tiling::Reduction::kMean;
    } else if (std::strcmp(label, "none") == 0) {
        *out = lossgrad_tiling::Reduction::kNone;
    } else if (std::strcmp(label, "sum") == 0) {
        *out = lossgrad_tiling::Reduction::kSum;
    } else if (std::strcmp(label, "batchmean") == 0) {
        *out = lossgrad_tiling::Reduction::kBatchMean;
    } else {
        return false;
    }
    return true;
}

// SocVersion enumerators only newer toolkits declare (ASCEND950, formerly ASCEND910_95; ASCEND910_93), looked up
// through a template so that older headers, which lack them, still compile: a missing one yields RESERVED_VERSION,
// which no platform reports for a supported part.
template <typename E> constexpr auto SocAscend950(int) -> decltype(E::ASCEND950) { return E::ASCEND950; }
template <typename E> constexpr auto SocAscend950(long) -> decltype(E::ASCEND910_95) { return E::ASCEND910_95; }
template <typename E> constexpr E SocAscend950(...) { return E::RESERVED_VERSION; }
template <typename E> constexpr auto SocAscend910_93(int) -> decltype(E::ASCEND910_93) { return E::ASCEND910_93; }
template <typename E> constexpr E SocAscend910_93(...) { return E::RESERVED_VERSION; }

// The NpuArch of the platform's SocVersion (asc-devkit include/utils/tiling/platform/platform_ascendc.h: ASCEND910B
// covers A2 and A3 parts, ASCEND950 the 950 parts); 0 for anything else, see lossgrad_tiling::Inputs::npu_arch.
inline int32_t NpuArchOf(const platform_ascendc::PlatformAscendC& platform)
{
    using platform_ascendc::SocVersion;
    const SocVersion soc = platform.GetSocVersion();
    if (soc == SocVersion::RESERVED_VERSION) {
        return 0;
    }
    if (soc == SocVersion::ASCEND910B || soc == SocAscend910_93<SocVersion>(0)) {
        return 2201;
    }
    if (soc == SocAscend950<SocVersion>(0)) {
        return 3510;
    }
    if (soc == SocVersion::ASCEND310P) {
        return 2002;
    }
    if (soc == SocVersion::ASCEND910) {
        return 1001;
    }
    return 0;
}

// lossgrad_tiling::Inputs::ub_bytes: the kernel UB budget the Python tiling uses for the architecture
// (socs ARCHS[npu_arch].ub_kernel_bytes, rendered into lossgrad_tiling_tables.h). For an architecture the adapter
// cannot name (npu_arch 0), the platform's UB size minus the 8 KB the Ascend C library reserves as scratch
// (kUbReservedBytes); 0 when the platform reports less than that.
inline uint64_t KernelUbBudget(int32_t npu_arch, uint64_t platform_ub_bytes)
{
    for (const lossgrad_tables::ArchFacts& arch : lossgrad_tables::kArchs) {
        if (arch.npuArch == npu_arch) {
            return arch.ubKernelBytes;
        }
    }
    const uint64_t reserved = lossgrad_tables::kUbReservedBytes;
    return platform_ub_bytes > reserved ? platform_ub_bytes - reserved : 0;
}

// Positions of the op's scalar attributes in its OpDef (after "reduction" at 0); -1 when the op has none.
struct AttrLayout {
    int32_t beta_index;
    double beta_default;
    int32_t log_target_index;
    bool log_target_default;
};

// The op's tensor inputs (OpDef Input() order): how many, and which are ParamType(OPTIONAL) (bit i).
struct InputLayout {
    int32_t num_inputs;
    uint32_t optional;
};

inline bool ReadTensor(const gert::StorageShape* shape, const gert::CompileTimeTensorDesc* desc,
                       lossgrad_tiling::TensorDesc* out)
{
    if (shape == nullptr || desc == nullptr) {
        return false;
    }
    const gert::Shape& s = shape->GetStorageShape();
    const size_t rank = s.GetDimNum();
    if (rank > static_cast<size_t>(lossgrad_tiling::kMaxRank)) {
        return false;
    }
    out->rank = static_cast<int32_t>(rank);
    for (size_t d = 0; d < rank; ++d) {
        const int64_t dim = s.GetDim(d);
        if (dim < 0) { // tiling runs on concrete shapes only
            return false;
        }
        out->dims[d] = dim;
    }
    return ToTilingDtype(desc->GetDataType(), &out->dtype);
}

inline ge::graphStatus Fail(const char* node, const char* what)
{
    LogError(node, what);
    return ge::GRAPH_FAILED;
}

// The TilingFunc body of every op: context -> Inputs -> Compute -> context. Any failure returns GRAPH_FAILED,
// which aclnn reports as a tiling error before anything is launched.
inline ge::graphStatus RunTiling(gert::TilingContext* context, lossgrad_tiling::OpId op, const InputLayout& inputs,
                                 const AttrLayout& layout)
{
    if (context == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const char* node = context->GetNodeName();
    fe::PlatFormInfos* platform_info = context->GetPlatformInfo();
    if (platform_info == nullptr) {
        return Fail(node, "no platform info in the tiling context");
    }
    const platform_ascendc::PlatformAscendC platform(platform_info);

    // CANN's system workspace for the Ascend C library APIs. (uint32_t)-1 is its error value when the platform
    // cannot name the NPU architecture (asc-devkit impl/utils/tiling/platform/platform_ascendc.cpp), not a request
    // for 4 GiB.
    const uint32_t lib_api_workspace = platform.GetLibApiWorkSpaceSize();
    if (lib_api_workspace == std::numeric_limits<uint32_t>::max()) {
        return Fail(node, "GetLibApiWorkSpaceSize() failed (returned (uint32_t)-1): the platform cannot name the NPU "
                          "architecture, so the system workspace size is unknown");
    }

    lossgrad_tiling::Inputs in{};
    in.op = op;
    in.core_num = platform.GetCoreNumAiv();
    uint64_t platform_ub_bytes = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, platform_ub_bytes);
    in.npu_arch = NpuArchOf(platform);
    in.ub_bytes = KernelUbBudget(in.npu_arch, platform_ub_bytes);
    if (in.core_num == 0 || in.ub_bytes == 0) {
        return Fail(node, "the platform reports 0 vector cores or 0 bytes of UB");
    }

    if (inputs.num_inputs < 0 || inputs.num_inputs > lossgrad_tiling::kNumInputs) {
        return Fail(node, "the op declares more tensor inputs than the tiling core takes");
    }
    in.num_inputs = inputs.num_inputs;
    for (size_t i = 0; i < static_cast<size_t>(inputs.num_inputs); ++i) {
        const bool optional = (inputs.optional >> i & 1U) != 0;
        const gert::StorageShape* shape = optional ? context->GetOptionalInputShape(i) : context->GetInputShape(i);
        // An optional input the caller leaves out (a null aclTensor*) has no shape in the context: the kernel's
        // variant for it never reads its GM address (the tiling key says which).
        if (optional && shape == nullptr) {
            in.absent |= 1U << i;
            continue;
        }
        const gert::CompileTimeTensorDesc* desc =
            optional ? context->GetOptionalInputDesc(i) : context->GetInputDesc(i);
        if (!ReadTensor(shape, desc, &in.inputs[i])) {
            return Fail(node, "an input has no shape/desc, an unknown dim, rank > 8 or a dtype other than "
                              "float32/float16/bfloat16");
        }
    }
    if (!ReadTensor(context->GetOutputShape(0), context->GetOutputDesc(0), &in.output)) {
        return Fail(node, "the output has no shape/desc, an unknown dim, rank > 8 or an unsupported dtype");
    }

    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const char* reduction = attrs != nullptr ? attrs->GetStr(0) : nullptr;
    if (!ToReduction(reduction, &in.reduction)) {
        return Fail(node, "reduction must be one of none, mean, sum, batchmean");
    }
    in.beta = layout.beta_default;
    if (layout.beta_index >= 0 && attrs != nullptr) {
        const float* beta = attrs->GetAttrPointer<float>(static_cast<size_t>(layout.beta_index));
        if (beta != nullptr) {
            in.beta = static_cast<double>(*beta);
        }
    }
    in.log_target = layout.log_target_default;
    if (layout.log_target_index >= 0 && attrs != nullptr) {
        const bool* log_target = attrs->GetAttrPointer<bool>(static_cast<size_t>(layout.log_target_index));
        if (log_target != nullptr) {
            in.log_target = *log_target;
        }
    }

    lossgrad_tiling::Result result{};
    if (lossgrad_tiling::Compute(in, &result) != lossgrad_tiling::Status::kOk ||
        result.status != lossgrad_tiling::Status::kOk) {
        result.message[lossgrad_tiling::kMessageBytes - 1] = '\0';
        return Fail(node, result.message[0] != '\0' ? result.message : "tiling core failed");
    }
    if (result.block_dim == 0) {
        return Fail(node, "tiling core returned block_dim 0");
    }
    if (result.tiling_size != sizeof(LossGradTilingData)) {
        return Fail(node, "tiling core returned a tiling size other than sizeof(LossGradTilingData)");
    }
    gert::TilingData* raw = context->GetRawTilingData();
    if (raw == nullptr || raw->GetData() == nullptr || raw->GetCapacity() < result.tiling_size) {
        return Fail(node, "the context's tiling buffer is missing or too small");
    }
    std::memcpy(raw->GetData(), result.tiling_data, result.tiling_size);
    raw->SetDataSize(result.tiling_size);

    if (context->LOSSGRAD_SET_BLOCK_DIM(result.block_dim) != ge::GRAPH_SUCCESS) {
        return Fail(node, "setting the block dim failed");
    }
    if (context->SetTilingKey(result.tiling_key) != ge::GRAPH_SUCCESS) {
        return Fail(node, "setting the tiling key failed");
    }
    size_t* workspaces = context->GetWorkspaceSizes(1);
    if (workspaces == nullptr) {
        return Fail(node, "no workspace size slot in the tiling context");
    }
    // CANN's system workspace (for the Ascend C library APIs) plus our user workspace (0 today).
    workspaces[0] = static_cast<size_t>(lib_api_workspace) +
                    static_cast<size_t>(result.workspace_bytes);
    return ge::GRAPH_SUCCESS;
}

} // namespace lossgrad_host

#endif // LOSSGRAD_OP_HOST_H_
