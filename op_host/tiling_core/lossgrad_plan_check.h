// The plan check: what the kernels will do with a tiling, proved safe before any launch (docs/tiling.md, "The plan
// check"). lossgrad_tiling::Compute runs it on every plan it makes, so CANN's TilingFunc and every Python caller
// refuse a plan that fails it; tests run it on perturbed plans too (lossgrad_tiling_check in the C ABI).
#ifndef LOSSGRAD_PLAN_CHECK_H_
#define LOSSGRAD_PLAN_CHECK_H_

#include <cstddef>
#include <cstdint>

#include "lossgrad_tiling_core.h"

struct LossGradTilingData;

namespace lossgrad_tiling {

// What the check knows of the call besides its tiling data.
struct PlanFacts {
    uint64_t input_elems[kNumInputs] = {};  // elements of each input buffer (by role), as the kernel reads them
    uint64_t output_elems = 0;
    uint32_t output_bytes = 4;     // the output's element size
    bool input_float[kNumInputs] = {};  // each input's element type is float32 (the walk's room for 16-bit rows)
    bool reads[kNumInputs] = {};        // the op reads the input's values (KL reads only self's shape)
    bool blocks_only = false;      // no DataCopyPad (310P, Atlas 910): whole 32-byte blocks, RowWriter
    uint32_t core_num = 1;         // cores the part has
    uint64_t workspace_bytes = 0;  // the user workspace the plan asks for
};

// Tiles the check walks at most, over all cores (about 0.3 s): a plan with more (over 2^34 elements at the default
// UB budgets) has every split-level fact checked and each core's first kMaxWalkTiles / blockDim tiles walked.
constexpr uint64_t kMaxWalkTiles = uint64_t{1} << 24;

// True when the plan is safe: every core's GM writes (output and workspace) are disjoint from every other core's,
// together cover the output exactly once, and stay inside their buffers; every core reads inside the inputs; every
// tile fits its UB buffers. Otherwise false, with the first violation in `message`. `complete` (may be null) is
// false when the plan has more tiles than the check walks (kMaxWalkTiles).
bool CheckPlan(const LossGradTilingData& td, const PlanFacts& facts, char* message, size_t capacity,
               bool* complete = nullptr);

} // namespace lossgrad_tiling

#endif // LOSSGRAD_PLAN_CHECK_H_
