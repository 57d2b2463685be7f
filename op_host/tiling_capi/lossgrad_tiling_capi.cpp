// C ABI of the tiling core for the Python package (lossgrad.tiling.native loads it with ctypes).
//
// lossgrad_tiling::Compute is the only implementation of the tiling; CANN's TilingFunc adapter calls it in C++,
// Python calls it through this flat extern "C" function (plain integers, doubles and caller-owned buffers, so no
// C++ layout crosses the boundary). Not part of the CANN package: its CMake globs op_host/tiling_core/*.cpp only.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

#include "lossgrad_tiling_core.h"

namespace {

// Bump when the signature or the meaning of an argument changes; Python refuses a library of another version.
constexpr int32_t kAbiVersion = 4;

void CopyMessage(char* dst, uint32_t capacity, const char* src)
{
    if (dst != nullptr && capacity > 0) {
        std::snprintf(dst, capacity, "%s", src);
    }
}

// The core's Inputs from the flat arguments (see lossgrad_tiling_compute).
lossgrad_tiling::Inputs MakeInputs(int32_t op, int32_t num_inputs, uint32_t absent, const int32_t* ranks,
                                   const int64_t* dims, const int32_t* dtypes,
                                   const int32_t* logical_ranks, const int64_t* logical_dims, int32_t reduction,
                                   double beta, int32_t log_target, uint32_t core_num, uint64_t ub_bytes,
                                   int32_t npu_arch, uint32_t kl_fold_tiles)
{
    using namespace lossgrad_tiling;
    Inputs in{};
    in.op = static_cast<OpId>(op);
    in.num_inputs = num_inputs;
    in.absent = absent;
    if (num_inputs < 0 || num_inputs > kNumInputs) {
        return in; // Compute refuses it: no op takes that many inputs
    }
    for (int32_t t = 0; t <= num_inputs; ++t) {
        TensorDesc& d = t < num_inputs ? in.inputs[t] : in.output;
        d.rank = ranks[t];
        d.dtype = static_cast<DataType>(dtypes[t]);
        std::memcpy(d.dims, dims + t * kMaxRank, sizeof(d.dims));
    }
    in.has_logical = logical_ranks != nullptr && logical_dims != nullptr;
    for (int32_t t = 0; in.has_logical && t < num_inputs; ++t) {
        in.logical[t].rank = logical_ranks[t];
        in.logical[t].dtype = in.inputs[t].dtype;
        std::memcpy(in.logical[t].dims, logical_dims + t * kMaxRank, sizeof(in.logical[t].dims));
    }
    in.reduction = static_cast<Reduction>(reduction);
    in.beta = beta;
    in.log_target = log_target != 0;
    in.core_num = core_num;
    in.ub_bytes = ub_bytes;
    in.npu_arch = npu_arch;
    in.kl_fold_tiles = kl_fold_tiles;
    return in;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int32_t lossgrad_tiling_abi_version()
{
    return kAbiVersion;
}

__attribute__((visibility("default"))) uint32_t lossgrad_tiling_data_capacity()
{
    return static_cast<uint32_t>(lossgrad_tiling::kMaxTilingDataBytes);
}

// num_inputs: the op's kernel inputs (<= kNumInputs); absent: bit i set when input i is an absent optional one (its
// entries are ignored). ranks[num_inputs + 1] and dims[(num_inputs + 1) * kMaxRank]: the kernel inputs in the op's
// kernel input order, then the output; dtypes[num_inputs + 1] likewise (ge::DataType numbers).
// logical_ranks[num_inputs] and logical_dims[num_inputs * kMaxRank], or null: the inputs'
// shapes as the caller sees them when the inputs are kernel views (Inputs::logical). Returns
// lossgrad_tiling::Status; on kOk fills every output (check_complete: Result::plan_check_complete), otherwise only
// `message`. Never throws: an exception from the core becomes kInternal with its text.
__attribute__((visibility("default"))) int32_t lossgrad_tiling_compute(
    int32_t op, int32_t num_inputs, uint32_t absent, const int32_t* ranks, const int64_t* dims, const int32_t* dtypes, const int32_t* logical_ranks,
    const int64_t* logical_dims, int32_t reduction, double beta,
    int32_t log_target, uint32_t core_num, uint64_t ub_bytes, int32_t npu_arch, uint32_t kl_fold_tiles,
    uint32_t* block_dim,
    uint64_t* tiling_key, uint64_t* workspace_bytes, uint64_t* ub_alloc_bytes, uint8_t* data, uint32_t data_capacity,
    uint32_t* data_size, int32_t* check_complete, char* message, uint32_t message_capacity)
{
    using namespace lossgrad_tiling;
    if (ranks == nullptr || dims == nullptr || dtypes == nullptr || block_dim == nullptr || tiling_key == nullptr ||
        workspace_bytes == nullptr || ub_alloc_bytes == nullptr || data == nullptr || data_size == nullptr ||
        check_complete == nullptr) {
        CopyMessage(message, message_capacity, "null argument");
        return static_cast<int32_t>(Status::kInvalidArgument);
    }
    try {
        const Inputs in = MakeInputs(op, num_inputs, absent, ranks, dims, dtypes, logical_ranks, logical_dims,
                                     reduction, beta, log_target, core_num, ub_bytes, npu_arch, kl_fold_tiles);
        static thread_local Result result; // ~1.3 KB: off the caller's stack, one per thread (Compute is pure)
        const Status status = Compute(in, &result);
        if (status != Status::kOk) {
            CopyMessage(message, message_capacity, result.message);
            return static_cast<int32_t>(status);
        }
        if (result.tiling_size > data_capacity) {
            CopyMessage(message, message_capacity, "tiling data buffer too small");
            return static_cast<int32_t>(Status::kInternal);
        }
        *block_dim = result.block_dim;
        *tiling_key = result.tiling_key;
        *workspace_bytes = result.workspace_bytes;
        *ub_alloc_bytes = result.ub_bytes;
        *data_size = result.tiling_size;
        *check_complete = result.plan_check_complete ? 1 : 0;
        std::memcpy(data, result.tiling_data, result.tiling_size);
        return static_cast<int32_t>(Status::kOk);
    } catch (const std::exception& e) {
        CopyMessage(message, message_capacity, e.what());
    } catch (...) {
        CopyMessage(message, message_capacity, "unknown exception in the tiling core");
    }
    return static_cast<int32_t>(Status::kInternal);
}

// The plan check of `data` (a packed LossGradTilingData, e.g. an altered plan) for the call the other arguments
// describe, as lossgrad_tiling_compute takes them. Returns lossgrad_tiling::Status: kOk when the plan is safe,
// kInternal with the violation in `message`, another status when the call itself is refused.
__attribute__((visibility("default"))) int32_t lossgrad_tiling_check(
    int32_t op, int32_t num_inputs, uint32_t absent, const int32_t* ranks, const int64_t* dims, const int32_t* dtypes, const int32_t* logical_ranks,
    const int64_t* logical_dims, int32_t reduction, double beta, int32_t log_target, uint32_t core_num,
    uint64_t ub_bytes, int32_t npu_arch, uint32_t kl_fold_tiles, const uint8_t* data, uint32_t data_size,
    uint64_t workspace_bytes, char* message, uint32_t message_capacity)
{
    using namespace lossgrad_tiling;
    if (ranks == nullptr || dims == nullptr || dtypes == nullptr || data == nullptr) {
        CopyMessage(message, message_capacity, "null argument");
        return static_cast<int32_t>(Status::kInvalidArgument);
    }
    try {
        const Inputs in = MakeInputs(op, num_inputs, absent, ranks, dims, dtypes, logical_ranks, logical_dims,
                                     reduction, beta, log_target, core_num, ub_bytes, npu_arch, kl_fold_tiles);
        static thread_local Result result;
        const Status status = CheckTiling(in, data, data_size, workspace_bytes, &result);
        if (status != Status::kOk) {
            CopyMessage(message, message_capacity, result.message);
        }
        return static_cast<int32_t>(status);
    } catch (const std::exception& e) {
        CopyMessage(message, message_capacity, e.what());
    } catch (...) {
        CopyMessage(message, message_capacity, "unknown exception in the tiling core");
    }
    return static_cast<int32_t>(Status::kInternal);
}

} // extern "C"
