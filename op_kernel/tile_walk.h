// ---- Tile walk: which tiles each core computes, from the tiling data alone ------------------------------------------
// Plain C++ shared by the kernels (rendered into every kernel source) and the host (the tiling core's plan check,
// op_host/tiling_core/lossgrad_plan_check.cpp): the flat and column splits' core ranges and tile sequences are
// decided here once, so the host can prove what the kernel will do with a plan before it is launched
// (docs/tiling.md, "The plan check"). Everything here is a function of LossGradTilingData, the core index, the
// inputs' element types and whether the architecture has DataCopyPad; no state outside the walk objects.
#ifndef LOSSGRAD_TILE_WALK_H
#define LOSSGRAD_TILE_WALK_H

// Builds on the core ranges and their constants (core_range.h), which every includer puts before this text: rendered
// just before it into a kernel, included just before it on the host.

namespace lossgrad {

constexpr uint32_t kMaxRepStride = 255; // a level-0 repeat stride, in 32-byte blocks (uint8_t)
constexpr uint64_t kNoRow = ~0ull;

__aicore__ inline uint64_t Max(uint64_t a, uint64_t b) { return a > b ? a : b; }

// A tile: `rows` rows of `cols` elements, rows `pitch` elements apart in UB, computed over `lanes` elements.
struct Tile {
    uint64_t idx[LOSSGRAD_MAX_DIMS];  // loop indices of the first row (dims 0..rank-2)
    uint64_t col;                     // first column (inner dim index)
    uint64_t nextRow = kNoRow;        // flat split: the loop row the core's next tile starts on
    uint64_t rowsLeft = kNoRow;       // rows this core has left from this tile's first row on (a resident row's reach)
    uint32_t rows;
    uint32_t cols;
    uint32_t pitch;
    uint32_t lanes;
    uint32_t period = 0;              // packed (310P/910): one run of cols / period whole rows of `period` elements
};

// Row-major loop indices (dims 0..rank-2) of a linear row number.
__aicore__ inline void SetRow(const LossGradTilingData& td, Tile& t, uint64_t row) {
    for (int32_t d = static_cast<int32_t>(td.rank) - 2; d >= 0; --d) {
        t.idx[d] = row % td.dims[d];
        row /= td.dims[d];
    }
}

__aicore__ inline void Shape(const LossGradTilingData& td, Tile& t, uint32_t rows, uint32_t cols, uint64_t col) {
    t.rows = rows;
    t.cols = cols;
    t.col = col;
    t.pitch = static_cast<uint32_t>(RoundUp(cols, td.padElems));
    t.lanes = static_cast<uint32_t>(RoundUp(static_cast<uint64_t>(rows) * t.pitch, kCompareLanes));
}

// An operand's element strides per loop dim (0 along a dim it lacks), for role LOSSGRAD_ROLE_* (the output's is
// LOSSGRAD_ROLE_OUT): the operand is a compact row-major buffer of the loop dims it has, in memory order (memDims),
// so the tiling sends presence bits and that order instead of a stride table (a smaller struct to read at launch).
__aicore__ inline void LoopStrides(const LossGradTilingData& td, uint32_t role, uint64_t* stride) {
    uint64_t acc = 1;
    for (uint32_t p = td.rank; p-- > 0;) {
        const uint32_t d = td.memDims >> (4 * p) & 15u;
        const bool has = (td.present >> (8 * role + d) & 1u) != 0;
        stride[d] = has ? acc : 0;
        acc = has ? acc * td.dims[d] : acc;
    }
}

// Whether the output has loop dim d (KL's reduced dims it lacks).
__aicore__ inline bool OutputHas(const LossGradTilingData& td, uint32_t d) {
    return (td.present >> (8 * LOSSGRAD_ROLE_OUT + d) & 1u) != 0;
}

// Element offset of a tile's first element in a tensor with these loop strides.
__aicore__ inline uint64_t TileBase(const LossGradTilingData& td, const uint64_t* stride, const Tile& t) {
    uint64_t base = t.col * stride[td.rank - 1];
    for (uint32_t d = 0; d + 1 < td.rank; ++d) base += t.idx[d] * stride[d];
    return base;
}

// Segment `seg` of S over [0, n): balanced, boundaries rounded down to multiples of `align` (KL's two-stage sum:
// the reduced range each of the cores sharing an output piece sums).
__aicore__ inline void SegmentRange(uint64_t n, uint64_t S, uint64_t seg, uint64_t align, uint64_t& b, uint64_t& e) {
    const uint64_t base = n / S, extra = n % S;
    b = (base * seg + Min(seg, extra)) / align * align;
    e = seg + 1 == S ? n : (base * (seg + 1) + Min(seg + 1, extra)) / align * align;
}

// Whether the tile loop reads an input (by role): the op reads its values, and it is not a scalar gradOutput, which
// Init reads once. The tiling, its same-shape key and the plan check all ask this.
__aicore__ inline bool TileLoopReads(bool reads, uint32_t role, bool gradScalar) {
    return reads && !(role == LOSSGRAD_ROLE_GRAD && gradScalar);
}

// The same-shape path (tiling key bit KEY_SAME_SHAPE, lossgrad.tiling): a one-dim loop split flat, whose every input the
// tile loop reads (`walked`, by role: TileLoopReads) is streamed element for element with the output. The tiling sets
// the key bit exactly when this holds; the plan check walks StreamWalk (core_range.h) then.
__aicore__ inline bool SameShapePlan(const LossGradTilingData& td, const bool* walked) {
    if (td.rank != 1 || td.splitMode != LOSSGRAD_SPLIT_FLAT || (td.present >> (8 * LOSSGRAD_ROLE_OUT) & 1u) == 0) {
        return false;
    }
    for (uint32_t r = 0; r < LOSSGRAD_NUM_INPUTS; ++r) {
        const bool streamed = (td.modes >> (2 * r) & 3u) == LOSSGRAD_MODE_STREAM && (td.present >> (8 * r) & 1u) != 0 &&
                              (td.bufMask >> (LOSSGRAD_BUF_REPEAT_FIRST + r) & 1u) == 0;
        if (walked[r] && !streamed) return false;
    }
    return true;
}

// What the walk needs of one kernel input: its mode and loop strides (tiling data), whether it keeps streamed tiles
// resident (KL's repeat bit), its element type, and whether the tile loop reads it at all (a scalar gradOutput is
// read once at Init; KL never reads self).
struct InputFacts {
    bool used = false;
    uint32_t mode = LOSSGRAD_MODE_SCALAR;
    uint64_t stride[LOSSGRAD_MAX_DIMS] = {};
    bool repeat = false;
    bool isFloat = true;
};

// role: the input's LOSSGRAD_ROLE_* (its presence bits, its 2 bits of modes, its LOSSGRAD_BUF_REPEAT_* bit).
__aicore__ inline InputFacts MakeInputFacts(const LossGradTilingData& td, uint32_t role, bool used, bool isFloat) {
    InputFacts f;
    f.used = used;
    f.mode = td.modes >> (2 * role) & 3u;
    LoopStrides(td, role, f.stride);
    f.repeat = (td.bufMask >> (LOSSGRAD_BUF_REPEAT_FIRST + role) & 1u) != 0;
    f.isFloat = isFloat;
    return f;
}

// Tiles may span several runs of the row dim when runs are short (FlatWalk): an input's rows must then follow one
// stride across a run boundary (streamed and column inputs), be one row per run (row mode: one row per run is loaded
// and expanded, Operand::ExpandRuns), or be one value throughout (scalar). `pitch`: the tiles' row pitch.
__aicore__ inline bool InputSpans(const LossGradTilingData& td, const InputFacts& f, uint32_t pitch) {
    if (!f.used) return true;
    const uint32_t rd = td.rowDim;
    if (rd == 0) return false;
    const uint64_t outer = f.stride[rd - 1], row = f.stride[rd], runRows = td.dims[rd];
    if (f.mode == LOSSGRAD_MODE_ROW) return outer == 0 || runRows * (pitch / kFloatBlock) <= kMaxRepStride;
    if (f.mode == LOSSGRAD_MODE_SCALAR) return outer == 0;
    return outer == runRows * row;
}

// The output's rows of a spanning tile are written with one row stride: the dim above the row dim must continue it.
__aicore__ inline bool OutputSpans(const LossGradTilingData& td) {
    const uint32_t rd = td.rowDim;
    if (rd == 0) return false;
    uint64_t out[LOSSGRAD_MAX_DIMS] = {};
    LoopStrides(td, LOSSGRAD_ROLE_OUT, out);
    return out[rd - 1] == td.dims[rd] * out[rd];
}

// Rows a spanning tile must leave free in a tile of `rowsMax` rows for this input (Operand::ExpandRuns): the cut
// runs' rows, a Compare repeat of tail lanes (8 rows at least) and, for a 16-bit input, its float rows, one per run.
__aicore__ inline uint64_t InputSpanRoom(const LossGradTilingData& td, const InputFacts& f, uint64_t rowsMax) {
    if (!f.used || f.mode != LOSSGRAD_MODE_ROW || f.stride[td.rowDim - 1] == 0) return 0;
    const uint64_t runRows = td.dims[td.rowDim];
    const uint64_t own = f.isFloat ? 0 : (rowsMax + runRows - 1) / runRows;
    return 2 * runRows + kCompareLanes / kFloatBlock + own;
}

// Packed tiles (310P/910, rows off the 32-byte block): several whole rows as one GM-contiguous run. The input's rows
// must be contiguous (streamed), one row repeated (row mode: its pattern's lcm(E, 8) lanes fit half the tile's work
// buffer) or one value (scalar).
__aicore__ inline bool InputPacks(const LossGradTilingData& td, const InputFacts& f, uint64_t E) {
    if (!f.used) return true;
    if (f.mode == LOSSGRAD_MODE_STREAM) return !f.repeat && f.stride[td.rank - 2] == E;
    if (f.mode == LOSSGRAD_MODE_ROW) {
        uint64_t unit = E;  // the pattern's first whole blocks (Operand::BuildPattern)
        while (unit % kFloatBlock != 0) unit += E;
        return unit <= td.tileLen / 2;
    }
    return f.mode == LOSSGRAD_MODE_SCALAR;
}

// The flat split: this core's elements in loop order. Whole rows go K to a tile (several runs of the row dim at once
// where every operand, the output included, can span them), ragged row pieces one at a time, and on 310P/910 (no
// DataCopyPad) rows off the 32-byte block as packed runs where every operand can pack.
class FlatWalk {
public:
    // `in`: grad, self, target. `packs`: the architecture moves ragged rows by whole blocks (no DataCopyPad).
    __aicore__ inline FlatWalk(const LossGradTilingData& td, uint64_t core, const InputFacts* in, bool packs)
        : td_(&td) {
        CoreRange(td, core, pos_, end_);
        const uint32_t rank = td.rank;
        E_ = td.dims[rank - 1];
        const uint32_t L = td.tileLen;
        const uint64_t pitch = RoundUp(E_, td.padElems);
        rowsMax_ = E_ <= L ? L / pitch : 1;
        // Runs of the row dim shorter than a tile: tiles span several runs (within one index of the dims above),
        // ending on run boundaries; a row-mode input expands whole runs, so room is left for the cut runs' rows, a
        // Compare repeat of tail, and one row per run.
        run_ = rank >= 3 ? td.dims[rank - 2] : 0;
        bool span = rank >= 3 && E_ <= L && run_ < rowsMax_ && (OutputSpans(td) || LOSSGRAD_WALK_MUTANT == 1);
        uint64_t room = 0;
        for (uint32_t r = 0; r < LOSSGRAD_NUM_INPUTS; ++r) {
            span = span && InputSpans(td, in[r], static_cast<uint32_t>(pitch));
            room = Max(room, span ? InputSpanRoom(td, in[r], rowsMax_) : 0);
        }
        span_ = span;
        spanMax_ = span && rowsMax_ > room ? rowsMax_ - room : 0;
        // A tile cut by its room ends on a run boundary and, from a run's start, on whole Compare repeats; runs of
        // under 8 rows expand 8 runs per vector repeat (Operand::RepeatRows): cut in groups of 8 runs.
        uint64_t lanesUnit = 1;
        while (lanesUnit * pitch % kCompareLanes != 0) ++lanesUnit;  // at most 8: the pitch is whole blocks
        unit_ = lanesUnit;
        const uint64_t runUnit = run_ < kFloatBlock ? kFloatBlock * run_ : run_;
        while (span && unit_ % runUnit != 0) unit_ += lanesUnit;
        // Packed tiles: one contiguous copy per input and one output piece for a run of whole rows, a row-broadcast
        // input as a pattern of period E, instead of a copy and a scalar tail per row.
        uint64_t out[LOSSGRAD_MAX_DIMS] = {};
        LoopStrides(td, LOSSGRAD_ROLE_OUT, out);
        bool packed = packs && rank >= 2 && pitch != E_ && 2 * E_ <= L &&
                      (out[rank - 2] == E_ || LOSSGRAD_WALK_MUTANT == 3);
        for (uint32_t r = 0; r < LOSSGRAD_NUM_INPUTS; ++r) packed = packed && InputPacks(td, in[r], E_);
        packed_ = packed;
    }

    // The next tile of this core; false when the core's range is done.
    __aicore__ inline bool Next(Tile& t) {
        if (pos_ >= end_) return false;
        const LossGradTilingData& td = *td_;
        const uint32_t rank = td.rank;
        const uint32_t L = td.tileLen;
        t = Tile();
        const uint64_t row = pos_ / E_, col = pos_ % E_;
        SetRow(td, t, row);
        if (packed_ && col == 0 && end_ - pos_ >= E_) {
            const uint64_t inRun = td.dims[rank - 2] - t.idx[rank - 2];
            const uint64_t k = Min(Min((L - kCompareLanes) / E_, inRun), (end_ - pos_) / E_);
            Shape(td, t, 1, static_cast<uint32_t>(k * E_), 0);
            t.period = static_cast<uint32_t>(E_);
        } else if (rank >= 2 && col == 0 && E_ <= L && end_ - pos_ >= E_) {
            const uint64_t inRun = td.dims[rank - 2] - t.idx[rank - 2];
            uint64_t k = Min(Min(rowsMax_, inRun), (end_ - pos_) / E_);
            if (span_ && k == inRun) {
                const uint64_t left = inRun + (td.dims[rank - 3] - 1 - t.idx[rank - 3]) * run_;
                uint64_t across = Min(left, (end_ - pos_) / E_);
                if (across > spanMax_) {  // cut by the tile's room: end on a run boundary when it can
                    across = spanMax_;
                    if (inRun == run_ && across >= unit_) {
                        across = across / unit_ * unit_;
                    } else if (across > inRun + run_) {
                        across = inRun + (across - inRun) / run_ * run_;
                    }
                }
                if (across > k) k = across;
            }
            Shape(td, t, static_cast<uint32_t>(k), static_cast<uint32_t>(E_), 0);
        } else {
            const uint64_t w = PieceLen(td, pos_, Min(end_, pos_ + E_ - col));
            Shape(td, t, 1, static_cast<uint32_t>(w), col);
        }
        const uint64_t next = pos_ + static_cast<uint64_t>(t.rows) * t.cols;
        t.nextRow = next < end_ ? next / E_ : kNoRow;
        t.rowsLeft = (end_ - 1) / E_ - row + 1;
        pos_ = next;
        return true;
    }

    __aicore__ inline bool Spans() const { return span_; }
    __aicore__ inline bool Packed() const { return packed_; }

private:
    const LossGradTilingData* td_;
    uint64_t pos_ = 0, end_ = 0, E_ = 0, rowsMax_ = 0, run_ = 0, spanMax_ = 0, unit_ = 1;
    bool span_ = false, packed_ = false;
};

// The column split: this core owns columns [c0, c1) of every row, so a row-broadcast input is read once in total.
// A piece that fits a tile goes several rows (within a run) to a tile; a wider piece goes in chunks of a tile, every
// row of a chunk before the next chunk.
class ColumnWalk {
public:
    __aicore__ inline ColumnWalk(const LossGradTilingData& td, uint64_t core) : td_(&td) {
        CoreRange(td, core, c0_, c1_);
        rowsTotal_ = 1;
        for (uint32_t d = 0; d + 1 < td.rank; ++d) rowsTotal_ *= td.dims[d];
        const uint64_t width = c1_ > c0_ ? c1_ - c0_ : 0;
        narrow_ = width <= td.tileLen;
        rowsMax_ = narrow_ && width > 0 ? td.tileLen / RoundUp(width, td.padElems) : 1;
        c_ = c0_;
        w_ = 0;
    }

    __aicore__ inline bool Next(Tile& t) {
        const LossGradTilingData& td = *td_;
        if (c0_ >= c1_ || rowsTotal_ == 0) return false;
        t = Tile();
        if (narrow_) {
            if (row_ >= rowsTotal_) return false;
            SetRow(td, t, row_);
            const uint64_t inRun = td.rank >= 2 ? td.dims[td.rank - 2] - t.idx[td.rank - 2] : 1;
            const uint64_t k = Min(Min(rowsMax_, inRun), rowsTotal_ - row_);
            Shape(td, t, static_cast<uint32_t>(k), static_cast<uint32_t>(c1_ - c0_), c0_);
            t.rowsLeft = rowsTotal_ - row_;
            row_ += k;
            return true;
        }
        if (row_ == 0 || row_ >= rowsTotal_) {  // the next chunk of columns
            if (w_ != 0) {
                c_ += w_;
                row_ = 0;
            }
            if (c_ >= c1_) return false;
            // A last chunk shorter than a block would leave a row piece too short for RowWriter's aligned copies:
            // take one block off the chunk before it.
            w_ = Min(td.tileLen, c1_ - c_);
            if (c1_ - c_ > td.tileLen && c1_ - c_ - td.tileLen < td.padElems) w_ = td.tileLen - td.padElems;
        }
        SetRow(td, t, row_);
        Shape(td, t, 1, static_cast<uint32_t>(w_), c_);
        ++row_;
        return true;
    }

private:
    const LossGradTilingData* td_;
    uint64_t c0_ = 0, c1_ = 0, rowsTotal_ = 0, rowsMax_ = 1, c_ = 0, w_ = 0, row_ = 0;
    bool narrow_ = true;
};

}  // namespace lossgrad

#endif  // LOSSGRAD_TILE_WALK_H
