// TEST STAND-IN for op_host/tiling_core/*.cpp (the lead implements lossgrad_tiling::Compute). Records the Inputs it
// was given so the adapter tests can check what the TilingFunc read from the context, and returns a fixed Result.
#include <cstdio>
#include <cstring>

#include "../../../op_host/tiling_core/lossgrad_tiling_core.h"
#include "op_kernel/lossgrad_tiling_data.h"

namespace lossgrad_tiling {

Inputs g_last_inputs{};
int g_calls = 0;

Status Compute(const Inputs& in, Result* out)
{
    g_last_inputs = in;
    ++g_calls;
    *out = Result{};
    if (in.inputs[0].rank == 7) { // the tests' way to ask for a failure
        out->status = Status::kUnsupported;
        std::snprintf(out->message, kMessageBytes, "stand-in refuses rank 7");
        return out->status;
    }
    LossGradTilingData data{};
    data.totalLength = 1;
    for (int32_t d = 0; d < in.output.rank; ++d) {
        data.totalLength *= static_cast<uint64_t>(in.output.dims[d]);
    }
    data.blockDim = 2;
    data.beta = static_cast<float>(in.beta);
    data.flags = in.log_target ? 1U : 0U;
    out->status = Status::kOk;
    out->block_dim = 2;
    out->tiling_key = 7;
    out->workspace_bytes = 64;
    out->tiling_size = sizeof(data);
    std::memcpy(out->tiling_data, &data, sizeof(data));
    return out->status;
}

} // namespace lossgrad_tiling
