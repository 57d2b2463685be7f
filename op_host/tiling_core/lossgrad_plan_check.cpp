// The plan check (lossgrad_plan_check.h): walks each core's tiles with the kernels' own tile walk
// (op_kernel/tile_walk.h, rendered into every kernel) and proves, from the tiling data alone, that the launch is safe.
//
// The argument, for the elementwise splits: the output's loop strides map the loop space one-to-one onto the
// output's elements (checked); the cores' ranges partition the split space (checked); each core's tiles partition
// its range in order (checked); and every tile writes exactly the output elements of its loop elements, because its
// rows either stay within one run of the row dim (where the kernel's row stride is the output's) or span runs only
// where the output's strides continue across them (checked per tile). So the cores' GM writes are disjoint, cover
// the output once and stay inside it. Reads: every tile lies inside the loop space, and every input's strides keep
// the whole space inside its buffer (checked), so every element a tile's rows touch is inside its input. 310P/910
// write whole 32-byte blocks (RowWriter): there each core's output must be one GM-contiguous run of at least a block
// when rows are ragged, and whole blocks otherwise (checked). KL's reduction: output units and segments partition
// their ranges, and the workspace holds SyncAll's counters and every core's partial slot (checked).
#include "lossgrad_plan_check.h"

#include <cstdarg>
#include <cstdio>

#if __has_include("../../op_kernel/lossgrad_tiling_data.h")
#include "../../op_kernel/lossgrad_tiling_data.h"
#else
#include "lossgrad_tiling_data.h"
#endif
#if __has_include("../../op_kernel/tile_walk.h")
#include "../../op_kernel/core_range.h"
#include "../../op_kernel/tile_walk.h"
#else
#include "core_range.h"
#include "tile_walk.h"
#endif

namespace lossgrad_tiling {
namespace {

using lossgrad::ColumnWalk;
using lossgrad::FlatWalk;
using lossgrad::InputFacts;
using lossgrad::StreamWalk;
using lossgrad::Tile;

constexpr uint64_t kMax = ~uint64_t{0};

// a * b, or kMax when it overflows (a perturbed plan may hold any values).
uint64_t MulSat(uint64_t a, uint64_t b)
{
    return a != 0 && b > kMax / a ? kMax : a * b;
}

uint64_t AddSat(uint64_t a, uint64_t b)
{
    return b > kMax - a ? kMax : a + b;
}

class Checker {
public:
    Checker(const LossGradTilingData& td, const PlanFacts& f, char* message, size_t capacity)
        : td_(td), f_(f), message_(message), capacity_(capacity)
    {
    }

    bool Complete() const { return complete_; }

    bool Run()
    {
        if (!General()) {
            return false;
        }
        if (total_ == 0) {
            return true; // nothing to read or write
        }
        if (!Strides()) {
            return false;
        }
        switch (td_.splitMode) {
        case LOSSGRAD_SPLIT_FLAT:
            return Flat();
        case LOSSGRAD_SPLIT_COLUMN:
            return Columns();
        case LOSSGRAD_SPLIT_KL_REDUCE:
            return Reduce();
        default:
            return Fail("unknown split mode %u", td_.splitMode);
        }
    }

private:
    bool Fail(const char* fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
    {
        if (message_ != nullptr && capacity_ > 0) {
            std::va_list args;
            va_start(args, fmt);
            std::vsnprintf(message_, capacity_, fmt, args);
            va_end(args);
        }
        return false;
    }

    static unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

    bool General()
    {
        if (td_.rank < 1 || td_.rank > LOSSGRAD_MAX_DIMS) {
            return Fail("rank %u is outside 1..%u", td_.rank, LOSSGRAD_MAX_DIMS);
        }
        total_ = 1;
        for (uint32_t d = 0; d < td_.rank; ++d) {
            total_ = MulSat(total_, td_.dims[d]);
        }
        if (total_ == kMax) {
            return Fail("the loop dims overflow 64 bits");
        }
        // memDims must order the loop dims (a permutation of 0..rank-1, no other bits) and `present` name only
        // loop dims of the 8 operands, or LoopStrides would read an unset stride.
        uint32_t seen = 0;
        for (uint32_t p = 0; p < td_.rank; ++p) {
            seen |= 1u << (td_.memDims >> (4 * p) & 15u);
        }
        if (seen != (1u << td_.rank) - 1 || (td_.rank < 8 && td_.memDims >> (4 * td_.rank) != 0)) {
            return Fail("memDims 0x%x is not an order of the %u loop dims", td_.memDims, td_.rank);
        }
        const uint64_t dimBits = (uint64_t{1} << td_.rank) - 1;
        for (uint32_t r = 0; r < 8; ++r) {
            const uint64_t bits = td_.present >> (8 * r) & 0xFFu;
            if ((bits & ~dimBits) != 0 || (r > LOSSGRAD_ROLE_OUT && bits != 0)) {
                return Fail("present 0x%llx names a dim beyond rank %u or an operand beyond the output", U(td_.present),
                            td_.rank);
            }
        }
        for (uint32_t r = 0; r < LOSSGRAD_NUM_INPUTS; ++r) {
            lossgrad::LoopStrides(td_, r, in_[r]);
        }
        lossgrad::LoopStrides(td_, LOSSGRAD_ROLE_OUT, out_);
        E_ = td_.dims[td_.rank - 1];
        if (td_.blockDim < 1 || td_.blockDim > (f_.core_num > 0 ? f_.core_num : 1)) {
            return Fail("block_dim %u is outside 1..%u cores", td_.blockDim, f_.core_num);
        }
        if (td_.tileLen < 256 || td_.tileLen % 256 != 0) {
            return Fail("tile length %u is not a positive multiple of 256", td_.tileLen);
        }
        if (td_.padElems != 8 && td_.padElems != 16) {
            return Fail("row pitch unit %u is not 32 bytes of a 4- or 2-byte type", td_.padElems);
        }
        if (td_.unitElems < 1) {
            return Fail("a balance unit of 0 elements");
        }
        if (td_.rank >= 2 && td_.rowDim >= td_.rank - 1) {
            return Fail("row dim %u is not a row dim of rank %u", td_.rowDim, td_.rank);
        }
        if (f_.output_bytes != 2 && f_.output_bytes != 4) {
            return Fail("output element of %u bytes", f_.output_bytes);
        }
        blockOut_ = 32 / f_.output_bytes;
        return true;
    }

    // Every input's strides keep the space inside its buffer; the output's map the output-present loop dims one to
    // one onto its elements (the others, KL's reduced dims only, are stride 0).
    bool Strides()
    {
        for (uint32_t r = 0; r < LOSSGRAD_NUM_INPUTS; ++r) {
            uint64_t last = 0;
            for (uint32_t d = 0; d < td_.rank; ++d) {
                last = AddSat(last, MulSat(td_.dims[d] - 1, in_[r][d]));
            }
            if (last >= f_.input_elems[r]) {
                return Fail("input %u (by role): the loop reaches element %llu of %llu", r, U(last),
                            U(f_.input_elems[r]));
            }
        }
        const bool reduce = td_.splitMode == LOSSGRAD_SPLIT_KL_REDUCE;
        uint32_t order[LOSSGRAD_MAX_DIMS] = {};
        uint32_t n = 0;
        for (uint32_t d = 0; d < td_.rank; ++d) {
            if (out_[d] != 0) {
                uint32_t k = n++;
                for (; k > 0 && out_[order[k - 1]] > out_[d]; --k) {
                    order[k] = order[k - 1];
                }
                order[k] = d;
            } else if (!reduce && td_.dims[d] > 1) {
                return Fail("output stride 0 on loop dim %u of an elementwise op", d);
            }
        }
        uint64_t expect = 1;
        for (uint32_t k = 0; k < n; ++k) {
            if (out_[order[k]] != expect) {
                return Fail("output stride %llu on loop dim %u: the output's layout is not one to one (expected %llu)",
                            U(out_[order[k]]), order[k], U(expect));
            }
            expect = MulSat(expect, td_.dims[order[k]]);
        }
        if (expect != f_.output_elems) {
            return Fail("the output's loop dims cover %llu elements of %llu", U(expect), U(f_.output_elems));
        }
        return true;
    }

    // The parts' ranges of the split space [0, total) are consecutive and cover it. `core`: the ranges are the
    // flat or column split's (the kernels' CoreRange), else UnitRange's over these units.
    bool Partition(uint64_t total, uint64_t parts, uint64_t unit, uint64_t base, uint64_t extra, const char* what,
                   bool core = false)
    {
        uint64_t expect = 0;
        for (uint64_t i = 0; i < parts; ++i) {
            uint64_t s = 0, e = 0;
            if (core) {
                lossgrad::CoreRange(td_, i, s, e);
            } else {
                lossgrad::UnitRange(i, parts, unit, base, extra, total, s, e);
            }
            if (s != expect || e < s) {
                return Fail("%s: part %llu covers [%llu, %llu) where [%llu, ...) was next", what, U(i), U(s), U(e),
                            U(expect));
            }
            expect = e;
        }
        if (expect != total) {
            return Fail("%s: the parts end at %llu of %llu", what, U(expect), U(total));
        }
        return true;
    }

    void Inputs(InputFacts* in) const
    {
        bool grad_scalar = true;
        for (uint32_t d = 0; d < td_.rank; ++d) {
            grad_scalar = grad_scalar && in_[LOSSGRAD_ROLE_GRAD][d] == 0;
        }
        for (uint32_t r = 0; r < LOSSGRAD_NUM_INPUTS; ++r) {
            in[r] = lossgrad::MakeInputFacts(td_, r, lossgrad::TileLoopReads(f_.reads[r], r, grad_scalar),
                                             f_.input_float[r]);
        }
    }

    uint64_t RowOf(const Tile& t) const
    {
        uint64_t row = 0;
        for (uint32_t d = 0; d + 1 < td_.rank; ++d) {
            row = row * td_.dims[d] + t.idx[d];
        }
        return row;
    }

    bool FitsUb(const Tile& t, uint64_t core)
    {
        if (t.rows < 1 || t.cols < 1 || t.pitch < t.cols || t.lanes > td_.tileLen ||
            static_cast<uint64_t>(t.rows) * t.pitch > td_.tileLen) {
            return Fail("core %llu: a tile of %u x %u (pitch %u, %u lanes) does not fit its %u-lane buffers", U(core),
                        t.rows, t.cols, t.pitch, t.lanes, td_.tileLen);
        }
        return true;
    }

    // A tile of several rows is written with the output's row-dim stride: its rows must stay within one run of the
    // row dim, or span runs where the output's strides continue across them (and every input can span).
    bool RowsAffine(const Tile& t, const InputFacts* in, uint64_t core)
    {
        const uint32_t rd = td_.rowDim;
        if (t.idx[rd] + t.rows <= td_.dims[rd]) {
            return true;
        }
        if (rd == 0 || rd + 2 != td_.rank) {
            return Fail("core %llu: %u rows from row %llu cross the end of loop dim %u", U(core), t.rows,
                        U(RowOf(t)), rd);
        }
        if (!lossgrad::OutputSpans(td_)) {
            return Fail("core %llu: %u rows from row %llu span runs of loop dim %u, where the output's rows do not "
                        "follow one stride (strides %llu and %llu, %llu rows a run)", U(core), t.rows, U(RowOf(t)), rd,
                        U(out_[rd - 1]), U(out_[rd]), U(td_.dims[rd]));
        }
        if (t.idx[rd - 1] * td_.dims[rd] + t.idx[rd] + t.rows > td_.dims[rd - 1] * td_.dims[rd]) {
            return Fail("core %llu: %u rows from row %llu cross the end of loop dim %u", U(core), t.rows,
                        U(RowOf(t)), rd - 1);
        }
        for (uint32_t r = 0; r < 3; ++r) {
            if (!lossgrad::InputSpans(td_, in[r], t.pitch)) {
                return Fail("core %llu: a tile spans runs that input %u cannot", U(core), r);
            }
        }
        return true;
    }

    // 310P/910: RowWriter writes whole blocks. Ragged rows need each core's output to be one GM-contiguous run of
    // at least a block (the loop order is the output's own); rows of whole blocks need pieces of whole blocks.
    bool Ragged() const { return E_ % blockOut_ != 0; }

    bool IdentityOutput() const
    {
        uint64_t expect = 1;
        for (uint32_t d = td_.rank; d-- > 0;) {
            if (out_[d] != expect && td_.dims[d] > 1) {
                return false;
            }
            expect *= td_.dims[d];
        }
        return true;
    }

    // The split's extent is the space it partitions, and its units partition it among the cores.
    bool SplitCovers(uint64_t space, const char* split, const char* what)
    {
        if (td_.splitTotal != space) {
            return Fail("the %s covers %llu %s of %llu", split, U(td_.splitTotal), what, U(space));
        }
        return Partition(space, td_.blockDim, td_.unitElems, td_.baseUnits, td_.extraUnits, split, true);
    }

    // Without DataCopyPad every row piece is whole 32-byte blocks, unless the rows are ragged (their tails are
    // written by a back-shifted block, checked by each walk).
    bool WholeBlocks(const Tile& t, uint64_t core, bool ragged)
    {
        if (f_.blocks_only && !ragged && t.cols % blockOut_ != 0) {
            return Fail("core %llu: a row piece of %u elements is not whole 32-byte blocks", U(core), t.cols);
        }
        return true;
    }

    bool Flat()
    {
        if (!SplitCovers(total_, "flat split", "elements")) {
            return false;
        }
        const bool ragged = f_.blocks_only && Ragged();
        if (ragged && !IdentityOutput()) {
            return Fail("whole-block writes of ragged rows need the output's own element order, the loop has another");
        }
        InputFacts in[LOSSGRAD_NUM_INPUTS];
        Inputs(in);
        bool used[LOSSGRAD_NUM_INPUTS] = {};
        for (uint32_t r = 0; r < LOSSGRAD_NUM_INPUTS; ++r) {
            used[r] = in[r].used;
        }
        const bool same_shape = lossgrad::SameShapePlan(td_, used); // the kernel walks StreamWalk then
        for (uint64_t core = 0; core < td_.blockDim; ++core) {
            uint64_t pos = 0, end = 0;
            lossgrad::CoreRange(td_, core, pos, end);
            if (ragged && end - pos < blockOut_ && td_.blockDim > 1) {
                return Fail("core %llu writes %llu elements, under one 32-byte block", U(core), U(end - pos));
            }
            FlatWalk walk(td_, core, in, f_.blocks_only);
            StreamWalk stream(td_, core);
            Tile t;
            uint64_t walked = 0;
            while (same_shape ? NextPiece(stream, t) : walk.Next(t)) {
                if (++walked > WalkBudget()) {
                    complete_ = false;
                    break;
                }
                if (!FitsUb(t, core)) {
                    return false;
                }
                const uint64_t at = RowOf(t) * E_ + t.col;
                if (at != pos) {
                    return Fail("core %llu: a tile starts at element %llu where %llu was next", U(core), U(at), U(pos));
                }
                uint64_t count = t.cols;
                if (t.period != 0) {
                    const uint64_t k = t.cols / E_;
                    if (t.period != E_ || t.col != 0 || t.rows != 1 || t.cols % E_ != 0 ||
                        t.idx[td_.rank - 2] + k > td_.dims[td_.rank - 2] || out_[td_.rank - 2] != E_) {
                        return Fail("core %llu: a packed tile of %u elements from row %llu is not %llu whole rows "
                                    "contiguous in the output", U(core), t.cols, U(RowOf(t)), U(k));
                    }
                } else if (t.rows > 1) {
                    if (t.col != 0 || t.cols != E_) {
                        return Fail("core %llu: a tile of %u rows is not whole rows", U(core), t.rows);
                    }
                    if (!RowsAffine(t, in, core)) {
                        return false;
                    }
                    count = static_cast<uint64_t>(t.rows) * E_;
                } else if (t.col + t.cols > E_) {
                    return Fail("core %llu: a row piece [%llu, %llu) passes the row's end %llu", U(core), U(t.col),
                                U(t.col + t.cols), U(E_));
                }
                if (!WholeBlocks(t, core, ragged)) {
                    return false;
                }
                pos += count;
                if (pos > end) {
                    return Fail("core %llu: its tiles pass its range's end %llu", U(core), U(end));
                }
            }
            if (walked <= WalkBudget() && pos != end) {
                return Fail("core %llu: its tiles end at %llu of [.., %llu)", U(core), U(pos), U(end));
            }
        }
        return true;
    }

    // The same-shape path's next piece, as the one-row tile the checks below take.
    bool NextPiece(StreamWalk& walk, Tile& t) const
    {
        uint64_t at = 0;
        uint32_t n = 0;
        if (!walk.Next(at, n)) {
            return false;
        }
        t = Tile();
        lossgrad::Shape(td_, t, 1, n, at);
        return true;
    }

    bool Columns()
    {
        if (!SplitCovers(E_, "column split", "columns")) {
            return false;
        }
        const bool ragged = f_.blocks_only && Ragged();
        const uint64_t rows_total = total_ / E_;
        for (uint64_t core = 0; core < td_.blockDim; ++core) {
            uint64_t c0 = 0, c1 = 0;
            lossgrad::CoreRange(td_, core, c0, c1);
            ColumnWalk walk(td_, core);
            Tile t;
            uint64_t c = c0, w = 0, row = 0; // the chunk [c, c + w) and its next row
            bool first = true;
            uint64_t walked = 0;
            while (walk.Next(t)) {
                if (++walked > WalkBudget()) {
                    complete_ = false;
                    break;
                }
                if (!FitsUb(t, core)) {
                    return false;
                }
                if (!first && row == rows_total) { // the next chunk starts where the last one, with every row, ends
                    if (t.col != c + w) {
                        return Fail("core %llu: columns from %llu follow the chunk [%llu, %llu)", U(core), U(t.col),
                                    U(c), U(c + w));
                    }
                    c = t.col;
                    row = 0;
                } else if (t.col != c) {
                    return Fail("core %llu: columns from %llu start before the chunk at %llu has every row", U(core),
                                U(t.col), U(c));
                }
                first = false;
                w = t.cols;
                if (RowOf(t) != row || c + w > c1) {
                    return Fail("core %llu: tile at row %llu, columns [%llu, %llu) is out of order or out of its "
                                "columns [%llu, %llu)", U(core), U(RowOf(t)), U(c), U(c + w), U(c0), U(c1));
                }
                if (t.rows > 1 && t.idx[td_.rowDim] + t.rows > td_.dims[td_.rowDim]) {
                    return Fail("core %llu: %u rows cross the end of loop dim %u", U(core), t.rows, td_.rowDim);
                }
                if (ragged && t.cols < blockOut_) {
                    return Fail("core %llu: a row piece of %u elements, under one 32-byte block", U(core), t.cols);
                }
                if (!WholeBlocks(t, core, ragged)) {
                    return false;
                }
                row += t.rows;
            }
            if (walked <= WalkBudget() && c0 < c1 && (row != rows_total || c + w != c1)) {
                return Fail("core %llu: its tiles end at row %llu, column %llu of %llu x [%llu, %llu)", U(core), U(row),
                            U(c + w), U(rows_total), U(c0), U(c1));
            }
        }
        return true;
    }

    bool Reduce()
    {
        const uint64_t S = td_.segments;
        if (S < 1 || td_.blockDim % S != 0) {
            return Fail("%llu segments do not divide %u cores", U(S), td_.blockDim);
        }
        const uint64_t groups = td_.blockDim / S;
        const bool out_inner = out_[td_.rank - 1] != 0;
        uint64_t out_rows = 1;
        for (uint32_t d = 0; d < td_.outRank && d + 1 < td_.rank; ++d) {
            out_rows *= td_.dims[d];
        }
        for (uint32_t d = td_.outRank; d + 1 < td_.rank; ++d) {
            if (out_[d] != 0) {
                return Fail("loop dim %u after the output's dims is not reduced", d);
            }
        }
        if (out_inner && out_[td_.rank - 1] != 1) {
            return Fail("the output's pieces of a row are not contiguous");
        }
        if (!out_inner && td_.outRank > 0 && (td_.rowDim + 1 != td_.outRank || out_[td_.rowDim] != 1)) {
            return Fail("the output elements a tile sums are not contiguous");
        }
        const uint64_t total = out_rows * (out_inner ? E_ : 1);
        if (td_.splitTotal != total) {
            return Fail("the reduction splits %llu output elements of %llu", U(td_.splitTotal), U(total));
        }
        if (!Partition(total, groups, td_.unitElems, td_.baseUnits, td_.extraUnits, "output split")) {
            return false;
        }
        const uint64_t reduced = total_ / total;
        const uint64_t a_rows = out_inner ? reduced : reduced / E_;
        const uint64_t n = out_inner ? a_rows : a_rows * E_;
        uint64_t expect = 0;
        for (uint64_t seg = 0; seg < S; ++seg) {
            uint64_t b = 0, e = 0;
            lossgrad::SegmentRange(n, S, seg, out_inner ? 1 : 64, b, e);
            if (b != expect || e < b) {
                return Fail("segment %llu sums [%llu, %llu) where [%llu, ...) was next", U(seg), U(b), U(e), U(expect));
            }
            expect = e;
        }
        if (expect != n) {
            return Fail("the segments end at %llu of %llu", U(expect), U(n));
        }
        if (S == 1) {
            for (uint64_t g = 0; f_.blocks_only && groups > 1 && g < groups; ++g) {
                uint64_t s = 0, e = 0;
                lossgrad::UnitRange(g, groups, td_.unitElems, td_.baseUnits, td_.extraUnits, total, s, e);
                if (e - s < blockOut_) {
                    return Fail("core %llu writes %llu output elements, under one 32-byte block", U(g), U(e - s));
                }
            }
            return true;
        }
        // Two-stage: a group is one unit; every core's partial slot and SyncAll's counters fit the workspace; the
        // second stage's parts partition the output (in whole output blocks on 310P/910).
        if (td_.baseUnits != 1 || td_.extraUnits != 0 || (total + td_.unitElems - 1) / td_.unitElems != groups) {
            return Fail("two-stage groups are not one unit each");
        }
        const uint64_t gp = lossgrad::RoundUp(td_.unitElems, 8);
        const uint64_t need = AddSat(MulSat(td_.blockDim, 32), MulSat(MulSat(S * groups, gp), 4));
        if (f_.workspace_bytes < need) {
            return Fail("the workspace has %llu bytes, the two-stage sum needs %llu", U(f_.workspace_bytes), U(need));
        }
        const uint64_t block = f_.blocks_only ? blockOut_ : 1;
        const uint64_t unit = block > td_.unitElems ? block : td_.unitElems;
        uint64_t units = (total + unit - 1) / unit;
        if (f_.blocks_only) {
            units = total / unit > 0 ? total / unit : 1;
        }
        const uint64_t parts = units < td_.blockDim ? units : td_.blockDim;
        if (!Partition(total, parts, unit, units / parts, units % parts, "second stage")) {
            return false;
        }
        for (uint64_t i = 0; f_.blocks_only && parts > 1 && i < parts; ++i) {
            uint64_t s = 0, e = 0;
            lossgrad::UnitRange(i, parts, unit, units / parts, units % parts, total, s, e);
            if (e - s < blockOut_) {
                return Fail("second stage: core %llu writes %llu elements, under one 32-byte block", U(i), U(e - s));
            }
        }
        return true;
    }

    const LossGradTilingData& td_;
    uint64_t in_[LOSSGRAD_NUM_INPUTS][LOSSGRAD_MAX_DIMS] = {};  // each input's loop strides (LoopStrides), by role
    uint64_t out_[LOSSGRAD_MAX_DIMS] = {};                      // the output's
    const PlanFacts& f_;
    char* message_;
    size_t capacity_;
    uint64_t total_ = 0;
    uint64_t E_ = 1;
    uint64_t blockOut_ = 8;
    bool complete_ = true;

    // Tiles each core's walk may take (kMaxWalkTiles shared by the cores); past it the walk stops, incomplete.
    uint64_t WalkBudget() const
    {
        const uint64_t per_core = kMaxWalkTiles / td_.blockDim;  // a share of one total: a huge blockDim stays fast
        return per_core > 0 ? per_core : 1;
    }
};

} // namespace

bool CheckPlan(const LossGradTilingData& td, const PlanFacts& facts, char* message, size_t capacity, bool* complete)
{
    if (message != nullptr && capacity > 0) {
        message[0] = '\0';
    }
    Checker checker(td, facts, message, capacity);
    const bool ok = checker.Run();
    if (complete != nullptr) {
        *complete = checker.Complete();
    }
    return ok;
}

} // namespace lossgrad_tiling
