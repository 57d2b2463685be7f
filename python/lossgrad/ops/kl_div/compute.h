    // aclnn's op_api keeps all-float16 inputs in float16 and casts every other mix to float32 (TC, from the registry's
    // aclnn_compute "float32_unless_all_float16"; ops-nn loss/kl_div_loss_grad/op_api/aclnn_kl_div_backward.cpp).
    // Its kernel computes each term in float32 and writes it as TC, so in float16 every term is rounded to float16
    // (beyond +-65504 it is +-Inf) before ReduceSum, which sums the float16 terms in float32 and rounds once to
    // float16; the result is then cast to out's dtype (Emit rounds through TC; docs/semantics.md, "Rounding").

    // Contribution of each broadcast element: T * gradOutput with T = exp(target) when log_target, else target.
    // self's values never enter (only its shape); out = -c * contribution, summed over broadcast axes of self.
    __aicore__ inline void Contribution(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                        const LocalTensor<float>& x, uint32_t n) {
        const LocalTensor<float>& t = (td_->flags & LOSSGRAD_FLAG_LOG_TARGET) ? r : x;
        if (td_->flags & LOSSGRAD_FLAG_LOG_TARGET) {
            Exp(r, x, n);
            VBarrier();
        }
        if constexpr (GRAD_SCALAR) {
            Muls(r, t, gradScalar_, n);
        } else {
            Mul(r, t, g, n);
        }
    }

    __aicore__ inline void Compute(const LocalTensor<float>& r, const LocalTensor<float>& g,
                                   const LocalTensor<float>& s, const LocalTensor<float>& x, uint32_t n) {
        (void)s;
        Contribution(r, g, x, n);
        VBarrier();
        Muls(r, r, -td_->coef, n);
    }

    // KL with self broadcast against target: the output elements are split over the cores in ranges; when the
    // output is too small for the cores, `segments` cores share each range, each summing one contiguous segment of
    // its reduced (broadcast) range (two-stage reduction, docs/kernels.md). Every sum is in float32 and in a fixed
    // order (no atomics: bit-reproducible for a given tiling): tiles add lane-wise into a block accumulator, which
    // after foldTiles tiles (or at a change of row layout) folds pairwise. Kept columns then sum in two levels, each
    // a plain sequence of at most foldTiles additions (a block into the middle sums, every foldTiles blocks the
    // middle sums into the running sums): a sum of n tiles adds each value through at most foldTiles + log2(rows)
    // + foldTiles + n / foldTiles^2 roundings, and no level subtracts, so an Inf term, or finite terms whose float32
    // sum overflows, give +-Inf (a saturated MAX on 310P/910), never the NaN of a compensation's Inf - Inf. Folds to
    // single elements sum on the scalar unit, compensated (Kahan), its compensation dropped once the sum leaves the
    // finite range. The segments' partials, through the workspace and SyncAll, add in segment order. Each term is
    // -c * contribution, as aclnn writes it before its ReduceSum (float16-rounded on the all-float16 path).
    static constexpr uint32_t kStageLanes = 64;
    static constexpr float kFloatMax = 3.40282346638528859812e+38f;  // a two-stage group of several output rows: at most 64 elements

    __aicore__ inline void ProcessReduce() {
        const uint32_t S = td_->segments;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t groups = td_->blockDim / S;
        const uint32_t seg = idx % S;
        uint64_t pos, end;
        UnitRange(idx / S, groups, td_->unitElems, td_->baseUnits, td_->extraUnits, td_->splitTotal, pos, end);
        const uint32_t rank = td_->rank;
        const uint64_t E = td_->dims[rank - 1];
        const uint32_t L = td_->tileLen;
        uint64_t aRows = 1;  // loop rows that fold into one output row
        for (uint32_t d = td_->outRank; d + 1 < rank; ++d) aRows *= td_->dims[d];
        LocalTensor<float> acc = acc_.Get<float>();
        LocalTensor<float> r = result_.Get<float>();
        if (S > 1) ZeroSyncCounters(r);
        const uint64_t start = pos;
        if (OutputHas(*td_, rank - 1)) {
            // The output keeps the inner dim: whole rows of contributions fold onto a running row. acc_ holds the
            // block accumulator (rows of `pitch` lanes), then the running row and its compensation. One pitch for
            // every tile of the core (its widest column piece, at most L/4), so resident tiles serve them all.
            uint64_t aBegin = 0, aEnd = aRows;
            SegmentRange(aRows, S, seg, 1, aBegin, aEnd);
            const uint32_t pitch = static_cast<uint32_t>(RoundUp(Min(Min(E, end - pos), L / 4), td_->padElems));
            // Two-stage with several output rows: a group's pieces span rows, their sums are staged (64 lanes
            // before the running row) until the group's partial goes out whole.
            const bool staged = S > 1 && td_->outRank > 0;
            const uint32_t stage = L - 2 * pitch - kStageLanes;
            const uint64_t rowsMax = pitch == 0 ? 1 : (staged ? stage : L - 2 * pitch) / pitch;
            const LocalTensor<float> blk = acc;
            if (staged) Duplicate(acc[stage], 0.0f, kStageLanes);
            while (pos < end) {
                const uint64_t prow = pos / E, col = pos % E;
                const uint32_t w = static_cast<uint32_t>(Min(Min(E - col, end - pos), L / 4));
                Tile t;
                VBarrier();  // the last EmitSum read acc
                LocalTensor<float> sum = acc[L - 2 * pitch];
                LocalTensor<float> mid = acc[L - pitch];
                if (staged) {
                    Duplicate(acc, 0.0f, stage);
                    Duplicate(sum, 0.0f, 2 * pitch);
                } else {
                    Duplicate(acc, 0.0f, L);
                }
                uint32_t used = 0, tiles = 0, folds = 0;  // block rows in use, tiles since the last fold, folds in mid
                for (uint64_t a = aBegin; a < aEnd;) {
                    SetRow(t, prow * aRows + a);
                    const uint64_t inRun = td_->dims[rank - 2] - t.idx[rank - 2];
                    Shape(t, static_cast<uint32_t>(Min(Min(rowsMax, inRun), aEnd - a)), w, col);
                    t.pitch = pitch;
                    t.lanes = t.rows * pitch;  // KL computes no Compare: no lanes past the rows
                    t.nextRow = pos + w < end && a == aBegin ? (prow + 1) * aRows + aBegin : kNoRow;
                    FetchContribution(r, t);
                    VBarrier();
                    Add(blk, blk, r, t.rows * pitch);
                    used = used > t.rows ? used : t.rows;
                    a += t.rows;
                    if (++tiles == td_->foldTiles || a == aEnd) {
                        FoldRows(blk, used, pitch);
                        VBarrier();
                        Add(mid, mid, blk, pitch);
                        if (++folds == td_->foldTiles || a == aEnd) {
                            VBarrier();
                            Add(sum, sum, mid, pitch);
                            VBarrier();
                            Duplicate(mid, 0.0f, pitch);
                            folds = 0;
                        }
                        VBarrier();
                        Duplicate(blk, 0.0f, used * pitch);
                        used = 0;
                        tiles = 0;
                    }
                }
                SetRow(t, prow * aRows);
                Shape(t, 1, w, col);
                if (staged) {
                    SyncVectorToScalar();
                    for (uint32_t i = 0; i < w; ++i) acc.SetValue(stage + (pos - start) + i, sum.GetValue(i));
                    SyncScalarToVector();
                } else if (S > 1) {
                    StorePartial(sum, seg, idx / S, static_cast<uint32_t>(RoundUp(w, 8)));
                } else {
                    EmitSum(sum, t, OutBase(t));
                }
                pos += w;
            }
            if (staged) StorePartial(acc[stage], seg, idx / S, GroupPitch());
        } else {
            // The output drops the inner dim: each row of contributions sums to one output element, for k output
            // elements at once. acc_ holds the block accumulator (tiles of one row layout add into it; a single
            // row's shorter last piece adds into its first lanes), then the running sums and their compensations
            // (half of `reserve` each, which holds k). A segment is a contiguous range of each output element's
            // aRows * E contributions.
            const uint32_t reserve = E > L / 4 ? 64 : L / 4;  // k <= 3 rows of E > L/4 (or a group of 8)
            const uint32_t blkLanes = L - reserve;
            const uint32_t sums = blkLanes, comps = blkLanes + reserve / 2;
            const uint32_t rowDim = td_->rowDim;
            const uint64_t chunk = E <= blkLanes ? E : blkLanes;
            const uint64_t rowsMax = E <= blkLanes ? blkLanes / RoundUp(E, td_->padElems) : 1;
            uint64_t fBegin = 0, fEnd = aRows * E;
            SegmentRange(aRows * E, S, seg, 64, fBegin, fEnd);
            VBarrier();  // the last EmitSum read acc
            Duplicate(acc[sums], 0.0f, reserve);
            while (pos < end) {
                Tile t;
                SetRow(t, pos * aRows);
                const uint64_t inRun = td_->outRank > 0 ? td_->dims[rowDim] - t.idx[rowDim] : 1;
                const uint32_t k = static_cast<uint32_t>(Min(Min(rowsMax, inRun), end - pos));
                const uint32_t at = S > 1 ? static_cast<uint32_t>(pos - start) : 0;
                if (S == 1) {
                    VBarrier();  // the last EmitSum read acc
                    Duplicate(acc[sums], 0.0f, reserve);
                }
                Tile held;  // the block accumulator's row layout
                held.rows = 0;
                uint32_t tiles = 0;
                for (uint64_t f = fBegin; f < fEnd;) {
                    const uint64_t a = f / E, c0 = f % E;
                    const uint32_t n = static_cast<uint32_t>(Min(Min(chunk, E - c0), fEnd - f));
                    SetRow(t, pos * aRows + a);
                    Shape(t, k, n, c0);
                    t.lanes = t.rows * t.pitch;  // KL computes no Compare: no lanes past the rows
                    const bool merge = t.rows == 1 && held.rows == 1 && t.cols <= held.cols;
                    if (held.rows != 0 && !merge && (t.pitch != held.pitch || t.cols != held.cols)) {
                        FlushRowSums(acc, held, at, sums, comps);
                        tiles = 0;
                    }
                    FetchContribution(r, t);
                    VBarrier();
                    if (tiles == 0) {
                        Muls(acc, r, 1.0f, t.rows * t.pitch);  // a block's first tile
                        held = t;
                    } else {
                        Add(acc, acc, r, t.rows == 1 ? t.cols : t.rows * t.pitch);
                    }
                    f += n;
                    if (++tiles == td_->foldTiles) {
                        FlushRowSums(acc, held, at, sums, comps);
                        held.rows = 0;
                        tiles = 0;
                    }
                }
                if (held.rows != 0) FlushRowSums(acc, held, at, sums, comps);
                if (S == 1) {
                    SetRow(t, pos * aRows);
                    Shape(t, 1, k, 0);
                    EmitSum(acc[sums], t, OutBase(t));
                }
                pos += k;
            }
            if (S > 1) StorePartial(acc[sums], seg, idx / S, GroupPitch());
        }
        if (S > 1) SumPartials();
    }

    // blk[0, pitch) = sum of its `rows` rows (pairwise halving).
    __aicore__ inline void FoldRows(const LocalTensor<float>& blk, uint32_t rows, uint32_t pitch) {
        for (uint32_t k = rows; k > 1;) {
            const uint32_t keep = FoldKeepRows(k, pitch);
            VBarrier();
            Add(blk, blk, blk[keep * pitch], (k - keep) * pitch);
            k = keep;
        }
    }

    // The block accumulator's rows (layout `t`) summed into the running sums acc[sums + at + row] (compensations at
    // acc[comps + at + row]); the next block's first tile overwrites the accumulator.
    __aicore__ inline void FlushRowSums(const LocalTensor<float>& acc, const Tile& t, uint32_t at, uint32_t sums,
                                        uint32_t comps) {
        RowSums(acc, t, acc, at, sums, comps);
    }

    // ---- Two-stage reduction. Workspace: SyncAll's GM counters (32 bytes a core), then the partials: a row per
    // segment, in it a slot of GroupPitch() floats per group (a group is one unit of output elements, so every core
    // writes whole 32-byte blocks of its own).
    __aicore__ inline uint32_t GroupPitch() const { return static_cast<uint32_t>(RoundUp(td_->unitElems, 8)); }
    __aicore__ inline uint64_t PartialPitch() const {
        return static_cast<uint64_t>(td_->blockDim / td_->segments) * GroupPitch();
    }

    __aicore__ inline GlobalTensor<int32_t> SyncCounters() const {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace_), td_->blockDim * 8);
        return g;
    }

    __aicore__ inline GlobalTensor<float> Partials() const {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace_ + td_->blockDim * 32),
                          td_->segments * PartialPitch());
        return g;
    }

    // Every core zeroes all of SyncAll's counters before its first SyncAll: the workspace is not initialised, and
    // the soft SyncAll's first call tolerates a late core's zeroing (asc-devkit SyncAll.md 约束说明).
    __aicore__ inline void ZeroSyncCounters(const LocalTensor<float>& scratch) {
        VBarrier();
        Duplicate(scratch, 0.0f, td_->blockDim * 8);
        SyncPipes<HardEvent::V_MTE3>();
        GlobalTensor<float> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace_), td_->blockDim * 8);
        DataCopy(g, scratch, td_->blockDim * 8);
        SyncPipes<HardEvent::MTE3_V>();
    }

    // This core's partial sums of its group: the first `lanes` (whole 32-byte blocks) of its slot. Lanes past the
    // group's elements, and a slot's lanes past the last group's columns (never written), are read by the second
    // stage but never emitted.
    __aicore__ inline void StorePartial(const LocalTensor<float>& sums, uint32_t seg, uint32_t group, uint32_t lanes) {
        SyncPipes<HardEvent::V_MTE3>();
        DataCopy(Partials()[seg * PartialPitch() + group * GroupPitch()], sums, lanes);
        SyncPipes<HardEvent::MTE3_V>();
    }

    // After every partial is in GM: each core sums a range of output elements (whole groups, and whole output
    // blocks on 310P/910 so their block writes stay in the core's range) over the segments, in a fixed pairwise
    // order, and writes them.
    __aicore__ inline void SumPartials() {
        LocalTensor<int32_t> ubSync = result_.Get<int32_t>();
        SyncAll(SyncCounters(), ubSync);
        const uint32_t B = td_->blockDim;
        const uint32_t S = td_->segments;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        const uint64_t total = td_->splitTotal;
        const uint64_t unitG = td_->unitElems;
        const uint32_t GP = GroupPitch();
#if LOSSGRAD_HAS_DATACOPYPAD
        const uint64_t blockOut = 1;
#else
        const uint64_t blockOut = 32 / sizeof(TO);
#endif
        const uint64_t unit = blockOut > unitG ? blockOut : unitG;  // powers of two: a multiple of both
        uint64_t units = (total + unit - 1) / unit;
        if (!LOSSGRAD_HAS_DATACOPYPAD) units = total / unit > 0 ? total / unit : 1;  // whole output blocks
        const uint32_t parts = static_cast<uint32_t>(Min(B, units));
        if (idx >= parts) return;
        uint64_t pos, end;
        UnitRange(idx, parts, unit, units / parts, units % parts, total, pos, end);
        LocalTensor<float> acc = acc_.Get<float>();
        // A chunk's groups come in one strided copy, S rows of their slots, into an inQ_ buffer (>= 2 bytes per
        // tile lane: L / 2 floats).
        const uint64_t groupsMax = td_->tileLen / 2 / S / GP;
        const GlobalTensor<float> partials = Partials();
        while (pos < end) {
            const uint64_t g0 = pos / unitG;
            const uint64_t g1 = Min((end + unitG - 1) / unitG, g0 + groupsMax);
            const uint32_t n = static_cast<uint32_t>(Min(end, g1 * unitG) - pos);
            const uint32_t width = static_cast<uint32_t>((g1 - g0) * GP);
            Tile t;
            t.rows = 1;
            t.cols = n;
            t.col = 0;
            t.pitch = static_cast<uint32_t>(RoundUp(n, td_->padElems));
            t.lanes = static_cast<uint32_t>(RoundUp(t.pitch, kCompareLanes));
            LocalTensor<float> in = inQ_.template AllocTensor<float>();
            DataCopy(in, partials[g0 * GP], DataCopyParams(static_cast<uint16_t>(S), static_cast<uint16_t>(width / 8),
                                                           static_cast<uint16_t>((PartialPitch() - width) / 8), 0));
            inQ_.EnQue(in);
            in = inQ_.template DeQue<float>();
            FoldRows(in, S, width);  // a fixed pairwise order
            VBarrier();  // the last EmitSum read acc
            Duplicate(acc, 0.0f, t.pitch);
            if (GP == unitG) {
                VBarrier();
                Add(acc, acc, in, n);
            } else {  // slots wider than their groups: gather each group's lanes
                SyncVectorToScalar();
                for (uint32_t j = 0; j < n; ++j) acc.SetValue(j, in.GetValue(j / unitG * GP + j % unitG));
                SyncScalarToVector();
            }
            inQ_.FreeTensor(in);
            EmitSum(acc, t, pos);
            pos += n;
        }
    }

    template <HardEvent E> __aicore__ inline void SyncPipes() {
        event_t e = static_cast<event_t>(GetTPipePtr()->FetchEventID(E));
        SetFlag<E>(e);
        WaitFlag<E>(e);
    }

    __aicore__ inline void FetchContribution(const LocalTensor<float>& r, const Tile& t) {
        LocalTensor<float> g, s, x;
        FetchInputs(t, g, s, x);
        VBarrier();
        Contribution(r, g, x, t.lanes);
        VBarrier();
        Muls(r, r, -td_->coef, t.lanes);
        RoundToTC(r, t.lanes);  // a float16 term (no-op on the float32 path)
        Release();
    }

    // Lanes a fold of `lanes` keeps (it adds the rest onto them): about half, a whole number of blocks. Past two
    // repeats, the kept part is an odd number of half-cycles of the UB bank groups (kBankSkew), so the two sources
    // of the fold's Add read disjoint bank groups (ub_plan; A2/A3).
    __aicore__ inline uint32_t FoldKeep(uint32_t lanes) const {
        const uint32_t half = static_cast<uint32_t>(RoundUp((lanes + 1) / 2, 8));
        if (kBankSkewLanes == 0 || lanes <= 4 * kBankSkewLanes) return half;
        // >= half, = kBankSkewLanes mod kBankCycleLanes
        return static_cast<uint32_t>(RoundUp(half + kBankSkewLanes, kBankCycleLanes)) - kBankSkewLanes;
    }

    // Rows a fold of `rows` rows `pitch` lanes apart keeps: half (rounded up), or a few more where that puts the
    // added rows half a bank-group cycle away from the kept ones (as FoldKeep) and the fold is over two repeats.
    __aicore__ inline uint32_t FoldKeepRows(uint32_t rows, uint32_t pitch) const {
        const uint32_t half = (rows + 1) / 2;
        if (kBankSkewLanes == 0 || (rows - half) * pitch <= 2 * kCompareLanes) return half;
        for (uint32_t keep = half; keep < rows && keep <= half + kBankCycleLanes; ++keep) {
            if (keep * pitch % kBankCycleLanes == kBankSkewLanes) return keep;
        }
        return half;
    }

    // acc[sums + at + row] += sum of the row's `cols` lanes: fold on the vector unit (pairwise), finish on the
    // scalar unit, compensated (Kahan; the compensations at acc[comps + at + row]). Once a running sum is no longer
    // within (-MAX, MAX) (an Inf or NaN term, a float32 overflow, 310P/910's saturation at MAX), its compensation is
    // 0: (t - s) - y would be Inf - Inf (NaN) or a MAX-sized error, where the sum itself is already final.
    __aicore__ inline void RowSums(const LocalTensor<float>& r, const Tile& t, const LocalTensor<float>& acc,
                                   uint32_t at, uint32_t sums, uint32_t comps) {
        // One row: the vector unit folds to 64 lanes (one repeat) and the scalar unit adds those; several rows
        // fold to 8 lanes each (fewer scalar reads per row).
        const uint32_t floor = t.rows == 1 ? 64 : 8;
        uint32_t lanes = t.cols;  // the folded width (the same for every row)
        for (uint32_t row = 0; row < t.rows; ++row) {
            const LocalTensor<float> v = r[row * t.pitch];
            for (lanes = t.cols; lanes > floor;) {
                const uint32_t keep = FoldKeep(lanes);
                VBarrier();
                Add(v, v, v[keep], lanes - keep);
                lanes = keep;
            }
        }
        SyncVectorToScalar();
        for (uint32_t row = 0; row < t.rows; ++row) {
            float sum = 0.0f;
            for (uint32_t i = 0; i < lanes; ++i) sum += r.GetValue(row * t.pitch + i);
            const float s0 = acc.GetValue(sums + at + row);
            const float y = sum - acc.GetValue(comps + at + row);
            const float s1 = s0 + y;
            const bool finite = s1 < kFloatMax && s1 > -kFloatMax;  // false for NaN too
            acc.SetValue(comps + at + row, finite ? (s1 - s0) - y : 0.0f);
            acc.SetValue(sums + at + row, s1);
        }
        SyncScalarToVector();
    }

    // out = acc (the sum; Emit rounds it once to float16 on the all-float16 path), cast and written as one row of
    // the tile's columns.
    __aicore__ inline void EmitSum(const LocalTensor<float>& acc, const Tile& t, uint64_t base) {
        LocalTensor<TO> o = outQ_.template AllocTensor<TO>();
        if constexpr (std::is_same<TO, float>::value) {
            VBarrier();
            Muls(o, acc, 1.0f, t.pitch);  // a float output is written from its own tile
            Emit(o, o, t, base);
        } else {
            Emit(o, acc, t, base);
        }
    }
