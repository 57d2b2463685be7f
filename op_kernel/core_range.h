// ---- Core ranges: which elements each core owns, from the tiling data alone --------------------------------------
// Plain C++ shared by every kernel path (rendered into each kernel source) and the host's plan check
// (op_host/tiling_core/lossgrad_plan_check.cpp): the split of the space among the cores and the same-shape path's
// walk, decided here once. The broadcast paths' tile walks build on it (tile_walk.h).
#ifndef LOSSGRAD_CORE_RANGE_H
#define LOSSGRAD_CORE_RANGE_H

#ifndef __aicore__
#define __aicore__  // a host build: the device qualifier means nothing here
#endif

// Deliberately broken walks, for the tests that show the plan check and the fuzz search catch a broken tiling
// (tests/op_host/test_plan_check.py builds the check, and the twin the kernels, with -DLOSSGRAD_WALK_MUTANT=n):
// 1 tiles span runs whatever the output's strides (the rank 5-8 broadcast regression of issue 22); 2 every core
// but the first starts one unit early (its range overlaps the one before); 3 packed tiles whatever the output's
// row stride; 4 the same-shape path's pieces one element long. Never defined in a real build.
#ifndef LOSSGRAD_WALK_MUTANT
#define LOSSGRAD_WALK_MUTANT 0
#endif

namespace lossgrad {

constexpr uint32_t kCompareLanes = 64;  // Compare/Select work on whole 256-byte repeats of float
constexpr uint32_t kFloatBlock = 8;     // floats per 32-byte block

__aicore__ inline uint64_t RoundUp(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }
__aicore__ inline uint64_t Min(uint64_t a, uint64_t b) { return a < b ? a : b; }

// Units [first, first + units) of a split of `total` elements in units of `unit` over `parts` cores: balanced, the
// first `extra` parts one more; the last part ends the space (on 310P/910 the tiling counts whole units only, so it
// also takes the partial one and no core's range is shorter than one 32-byte block of the output).
__aicore__ inline void UnitRange(uint64_t part, uint64_t parts, uint64_t unit, uint64_t base, uint64_t extra,
                                 uint64_t total, uint64_t& start, uint64_t& end) {
    const uint64_t units = base + (part < extra ? 1 : 0);
    const uint64_t first = part * base + Min(part, extra);
    start = Min(first * unit, total);
    end = part + 1 == parts ? total : Min((first + units) * unit, total);
}

// This core's range of the flat or column split, in elements (columns for the column split).
__aicore__ inline void CoreRange(const LossGradTilingData& td, uint64_t core, uint64_t& start, uint64_t& end) {
    UnitRange(core, td.blockDim, td.unitElems, td.baseUnits, td.extraUnits, td.splitTotal, start, end);
    if (LOSSGRAD_WALK_MUTANT == 2 && core > 0 && start >= td.unitElems) start -= td.unitElems;
}

// The length of a piece of one row from element `pos` up to `end`: at most a tile; a one-dim loop's first piece of a
// core ends on a 512-byte boundary of the output (alignElems), so that the core's later pieces start aligned.
__aicore__ inline uint64_t PieceLen(const LossGradTilingData& td, uint64_t pos, uint64_t end) {
    uint64_t w = Min(end - pos, td.tileLen);
    if (td.rank == 1 && td.alignElems > 0 && pos % td.alignElems != 0) {
        const uint64_t toAlign = td.alignElems - pos % td.alignElems;
        if (toAlign < w && w - toAlign >= td.alignElems) w = toAlign + (w - toAlign) / td.alignElems * td.alignElems;
    }
    return w;
}

// The same-shape path's walk (tile_walk.h SameShapePlan): this core's range of the flat split, piece by piece
// (PieceLen).
class StreamWalk {
public:
    __aicore__ inline StreamWalk(const LossGradTilingData& td, uint64_t core) : td_(&td) {
        CoreRange(td, core, pos_, end_);
    }

    // The next piece [at, at + n) of this core; false when its range is done.
    __aicore__ inline bool Next(uint64_t& at, uint32_t& n) {
        if (pos_ >= end_) return false;
        at = pos_;
        n = static_cast<uint32_t>(PieceLen(*td_, pos_, end_)) + (LOSSGRAD_WALK_MUTANT == 4 ? 1u : 0u);
        pos_ += n;
        return true;
    }

private:
    const LossGradTilingData* td_;
    uint64_t pos_ = 0, end_ = 0;
};

}  // namespace lossgrad

#endif  // LOSSGRAD_CORE_RANGE_H
