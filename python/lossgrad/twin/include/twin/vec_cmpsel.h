// Compare, Compares (and the deprecated alias CompareScalar), the CMPMASK register (Compare without dst,
// GetCmpMask, SetCmpMask) and Select, level 2 and level 0 (ascendc_api.md §2.7).
//
// Bitmask layout: bit i of the mask (bit i % 8 of byte i / 8, LSB first) belongs to element i. Compare results are
// 1 when the condition holds; NaN compares false in every mode except NE (IEEE). Select takes src0 where the bit is
// 1 and src1 (tensor or scalar) where it is 0; SELMODE::VSEL_CMPMASK_SPR reuses the first 256/sizeof(T) bits for
// every repeat, the other modes consume the mask continuously.
//
// Stricter than hardware: Compare/Compares counts must be a multiple of 256 bytes (hardware silently skips the
// partial repeat); the level-0 Compare mask must be full (A2/A3/310P/910 ignore it, so a partial mask is a bug);
// the bitmask dst must not overlap the sources; Select's selMask must not overlap dst.
#pragma once

#include "vec_level0.h"

namespace AscendC {

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

}  // namespace AscendC

namespace twin {

template <typename T> constexpr bool kCompareOk =
    kArch == 3510 ? kOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>
    : kArch == 2201 ? kOneOf<T, half, float, int32_t>  // int32_t: CMPMODE::EQ only (run-time check)
                    : kOneOf<T, half, float>;
template <typename T> constexpr bool kComparesOk = kArch != 1001 && kCompareOk<T>;
template <typename T> constexpr bool kSelectOk =
    kArch == 3510 ? kOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float> : kOneOf<T, half, float>;
template <typename U> constexpr bool kSelMaskOk = kOneOf<U, uint8_t, uint16_t, uint32_t, uint64_t>;

inline const char* CmpModeName(AscendC::CMPMODE m) {
    static const char* names[] = {"LT", "GT", "EQ", "LE", "GE", "NE"};
    uint8_t v = static_cast<uint8_t>(m);
    return v < 6 ? names[v] : "?";
}

inline const char* SelModeName(AscendC::SELMODE m) {
    static const char* names[] = {"VSEL_CMPMASK_SPR", "VSEL_TENSOR_SCALAR_MODE", "VSEL_TENSOR_TENSOR_MODE"};
    uint8_t v = static_cast<uint8_t>(m);
    return v < 3 ? names[v] : "?";
}

template <typename T> inline void RequireCmpMode(const char* api, AscendC::CMPMODE m) {
    if (static_cast<uint8_t>(m) > 5) Fault(api, "cmpMode %u is not a CMPMODE", static_cast<unsigned>(m));
    if (kArch == 2201 && std::is_same<T, int32_t>::value && m != AscendC::CMPMODE::EQ)
        Fault(api, "CMPMODE::%s on int32_t: NpuArch 2201 compares int32_t with CMPMODE::EQ only", CmpModeName(m));
}

// IEEE comparison: every mode is false on NaN except NE.
template <typename C> inline bool CmpValues(C x, C y, AscendC::CMPMODE m) {
    switch (m) {
        case AscendC::CMPMODE::LT: return x < y;
        case AscendC::CMPMODE::GT: return x > y;
        case AscendC::CMPMODE::EQ: return x == y;
        case AscendC::CMPMODE::LE: return x <= y;
        case AscendC::CMPMODE::GE: return x >= y;
        default: return x != y;
    }
}

template <typename T> inline bool CmpElem(T a, T b, AscendC::CMPMODE m) {
    if constexpr (IsFloatLike<T>::value) {
        return CmpValues(ToDouble(a), ToDouble(b), m);
    } else {
        return CmpValues(a, b, m);
    }
}

// Level-2 Compare / Compares: src1 == nullptr compares against `scalar`.
template <typename T, typename U>
inline void Compare2(const char* api, const AscendC::LocalTensor<U>& dst, const AscendC::LocalTensor<T>& src0,
                     const AscendC::LocalTensor<T>* src1, T scalar, AscendC::CMPMODE mode, uint32_t count) {
    RequireCmpMode<T>(api, mode);
    RequireCount(api, count);
    Level2MaskReset(api);
    if (count == 0) return;
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % kRepeat != 0)
        Fault(api, "%u elements = %llu bytes: Compare/Compares counts not a multiple of 256 bytes leave the "
                   "trailing partial repeat uncomputed on hardware", count, (unsigned long long)bytes);
    const uint64_t dbytes = count / 8;
    const TensorRef& d = dst.TwinRef();
    RequireOperand(api, "dst", d, dbytes);
    RequireOperand(api, "src0", src0.TwinRef(), bytes);
    RequireDisjoint(api, "src0", src0.TwinRef().addr, bytes, "dst", d.addr, dbytes);
    UbRead(api, "src0", P_V, src0.TwinRef().addr, static_cast<uint32_t>(bytes));
    std::vector<T> a(count), b;
    std::memcpy(a.data(), UbPtr<T>(src0.TwinRef().addr), bytes);
    if (src1 != nullptr) {
        RequireOperand(api, "src1", src1->TwinRef(), bytes);
        RequireDisjoint(api, "src1", src1->TwinRef().addr, bytes, "dst", d.addr, dbytes);
        UbRead(api, "src1", P_V, src1->TwinRef().addr, static_cast<uint32_t>(bytes));
        b.resize(count);
        std::memcpy(b.data(), UbPtr<T>(src1->TwinRef().addr), bytes);
    }
    std::vector<uint8_t> bits(dbytes, 0);
    for (uint32_t i = 0; i < count; ++i)
        if (CmpElem(a[i], src1 != nullptr ? b[i] : scalar, mode)) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    UbWrite(api, P_V, d.addr, static_cast<uint32_t>(dbytes));
    std::memcpy(Core().ub.data() + d.addr, bits.data(), dbytes);
    NextOp(P_V);
    CountApi(api, bytes / kRepeat, count, DtypeCode<T>());
}

// Level-0 Compare / Compares. The mask must be full; the bitmask dst is packed (256/sizeof(T) bits per repeat).
template <typename T, typename U, size_t NS>
inline void Compare0(const char* api, bool isSetMask, const AscendC::LocalTensor<U>& dst,
                     const std::array<L0Operand, NS>& srcs, T scalar, AscendC::CMPMODE mode, const uint64_t* bits,
                     uint64_t count, uint8_t repeatTime, uint32_t dstBlkStride) {
    RequireCmpMode<T>(api, mode);
    L0Geometry g;
    g.lanes = kRepeat / sizeof(T);
    const auto fullBits = [&g](uint64_t hi, uint64_t lo) {
        return g.lanes == 128 ? hi == ~0ull && lo == ~0ull
                              : hi == 0 && lo == (g.lanes == 64 ? ~0ull : ((1ull << g.lanes) - 1));
    };
    bool full;
    if (isSetMask) {
        full = bits != nullptr ? fullBits(bits[1], bits[0]) : count == g.lanes;
    } else {  // the mask register the kernel set with SetVectorMask must meet the same rule
        const VectorMaskState& m = Core().vmask;
        if (!m.valid)
            Fault(api, "isSetMask=false but the kernel set no mask with SetVectorMask since %s reset the mask "
                       "register", m.resetBy);
        if (m.counter)
            Fault(api, "isSetMask=false in counter mode: the level-0 Compare/Compares take a normal-mode mask "
                       "(SetMaskNorm, then SetVectorMask)");
        full = fullBits(m.hi, m.lo);
    }
    if (!full)
        Fault(api, "partial mask: the level-0 Compare/Compares mask is ignored on hardware (every lane is "
                   "compared), so pass a full mask of %u lanes", g.lanes);
    g.bits[0] = g.lanes >= 64 ? ~0ull : ((1ull << g.lanes) - 1);
    g.bits[1] = g.lanes == 128 ? ~0ull : 0;
    g.repeats = repeatTime;
    RequireRepeats(api, g.repeats);
    if (dstBlkStride == 0) Fault(api, "dstBlkStride 0 is illegal");
    const TensorRef& d = dst.TwinRef();
    RequireOperand(api, "dst", d, 0);
    for (const L0Operand& s : srcs) RequireOperand(api, s.name, s.ref, 0);
    if (g.repeats == 0) return;
    const uint64_t perRepeat = g.lanes / 8, dbytes = g.repeats * perRepeat;
    RequireOperand(api, "dst", d, dbytes);
    std::vector<Seg> dseg{Seg{d.addr, dbytes}};
    for (const L0Operand& s : srcs) {
        std::vector<Seg> ss = L0Segments(s, g);
        L0CheckOperand(api, s, ss);
        if (Intersects(dseg, ss)) Fault(api, "%s overlaps the bitmask dst: they must be disjoint", s.name);
        for (const Seg& x : ss) UbRead(api, s.name, P_V, static_cast<uint32_t>(x.addr), static_cast<uint32_t>(x.len));
    }
    std::vector<uint8_t> out(dbytes, 0);
    const uint8_t* ub = Core().ub.data();
    for (uint64_t r = 0; r < g.repeats; ++r)
        for (uint32_t i = 0; i < g.lanes; ++i) {
            T a, b = scalar;
            std::memcpy(&a, ub + LaneAddr(srcs[0], r, i), sizeof(T));
            if (NS > 1) std::memcpy(&b, ub + LaneAddr(srcs[NS - 1], r, i), sizeof(T));
            if (CmpElem(a, b, mode)) out[r * perRepeat + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
        }
    UbWrite(api, P_V, d.addr, static_cast<uint32_t>(dbytes));
    std::memcpy(Core().ub.data() + d.addr, out.data(), dbytes);
    NextOp(P_V);
    CountApi(api, g.repeats, g.repeats * g.lanes, DtypeCode<T>());
}

// Compare with the result in the 128-bit CMPMASK register (one repeat; masked-off lanes give 0).
template <typename T, bool isSetMask>
inline void CompareToCmpMask(const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>& src1,
                             AscendC::CMPMODE mode, const uint64_t* bits, uint64_t count,
                             const AscendC::BinaryRepeatParams& p) {
    const char* api = "Compare(CMPMASK)";
    RequireCmpMode<T>(api, mode);
    if (Core().vmask.counter) Fault(api, "counter mode is not modelled for the CMPMASK form (one repeat)");
    // NpuArch 3510 builds it from register compares framed by its own S->V and V->S flags on IDs from the TPipe
    // (impl/basic_api/dav_3510/kernel_operator_vec_cmp_impl.h VcmpImpl without dst).
    if (kArch == 3510) {
        RequireTPipe(api, "impl/basic_api/dav_3510/kernel_operator_vec_cmp_impl.h VcmpImpl");
        Receive(P_V, Signal(P_S, api), api);
    }
    L0Geometry g = ResolveL0(api, isSetMask, bits, count, 1, sizeof(T));
    std::array<L0Operand, 2> srcs{L0Op("src0", src0, p.src0BlkStride, p.src0RepStride),
                                  L0Op("src1", src1, p.src1BlkStride, p.src1RepStride)};
    for (const L0Operand& s : srcs) {
        std::vector<Seg> ss = L0Segments(s, g);
        L0CheckOperand(api, s, ss);
        for (const Seg& x : ss) UbRead(api, s.name, P_V, static_cast<uint32_t>(x.addr), static_cast<uint32_t>(x.len));
    }
    uint64_t reg[2] = {0, 0};
    const uint8_t* ub = Core().ub.data();
    for (uint32_t i = 0; i < g.lanes; ++i) {
        if (!g.Active(0, i)) continue;
        T a, b;
        std::memcpy(&a, ub + LaneAddr(srcs[0], 0, i), sizeof(T));
        std::memcpy(&b, ub + LaneAddr(srcs[1], 0, i), sizeof(T));
        if (CmpElem(a, b, mode)) reg[i >> 6] |= 1ull << (i & 63);
    }
    Core().vmask.cmp[0] = reg[0];
    Core().vmask.cmp[1] = reg[1];
    Core().vmask.cmpValid = true;
    NextOp(P_V);
    CountApi(api, 1, g.lanes, DtypeCode<T>());
    if (kArch == 3510) Receive(P_S, Signal(P_V, api), api);
}

// Selection bit of element i in repeat r (E lanes per repeat) for each mode.
inline bool SelBit(const uint8_t* mask, AscendC::SELMODE mode, uint64_t r, uint32_t i, uint32_t lanes) {
    uint64_t bit = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR ? i : r * lanes + i;
    return ((mask[bit / 8] >> (bit % 8)) & 1u) != 0;
}

template <typename T> inline void RequireSelTensorMode(const char* api, AscendC::SELMODE mode) {
    if (static_cast<uint8_t>(mode) > 2) Fault(api, "selMode %u is not a SELMODE", static_cast<unsigned>(mode));
    if (mode == AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE)
        Fault(api, "SELMODE::VSEL_TENSOR_SCALAR_MODE selects against a scalar: use the overload with a scalar src1");
    if (kArch == 1001 && mode != AscendC::SELMODE::VSEL_CMPMASK_SPR)
        Fault(api, "SELMODE::%s is not supported on NpuArch 1001 (Atlas training supports VSEL_CMPMASK_SPR only)",
              SelModeName(mode));
}

inline void RequireSelScalarMode(const char* api, AscendC::SELMODE mode) {
    if (mode != AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE)
        Fault(api, "a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE, not %s", SelModeName(mode));
}

// What Select does before its vsel on 2201/2002/1001 (asc-devkit impl/basic_api/dav_c220, dav_m200, dav_c100
// kernel_operator_vec_cmpsel_impl.h, VselIntrinsicsImplPre / VselImpl): SELMODE 0 loads the mask into CMPMASK
// (set_cmpmask reads selMask now); SELMODE 1/2 on 2201/2002 stage the scalar or the mask's address through the
// reserved scratch at TMP_UB_OFFSET (a Duplicate, then set_cmpmask reads it). Each step ends with
// PipeBarrier<PIPE_V>, so every earlier vector instruction (an earlier Select's use of the scratch included) is
// complete before the vsel, which reads src0, src1 and selMask (modes 1/2; the caller reads it after the sources, so
// the event log's two source operands are vsel's: mode 1 src0 and the mask, mode 2 src0 and src1) and writes dst.
// 3510 orders PIPE_V in hardware (its Select is a register-level sequence). Returns whether selMask is still to read.
inline bool SelectPrologue(const char* api, AscendC::SELMODE mode, uint32_t maskAddr, uint32_t maskBytes) {
    const bool mode0 = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR;
    if (mode0) UbRead(api, "selMask", P_V, maskAddr, maskBytes);
    if (kArch == 3510) return !mode0;
    if (!mode0) ReservedScratchWrite(api, 0, kBlock);  // the CMPMASK staging block (2201/2002: 1001 has mode 0 only)
    BarrierPipe(P_V);
    if (mode0) return false;
    // The staging is complete at the barrier after it: the block's writer is taken to be the vector op before this
    // Select (what the barrier covers), so the next Select's staging does not depend on this one's.
    CoreState& c = Core();
    c.blocks[kUbKernelBytes / kBlock].wseq = c.seq[P_V] - 1;
    return true;
}

// Level-2 Select: src1 == nullptr selects against `scalar`.
template <typename T, typename U>
inline void Select2(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& selMask,
                    const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>* src1, T scalar,
                    AscendC::SELMODE mode, uint32_t count) {
    RequireCount(api, count);
    Level2MaskReset(api);
    if (count == 0) return;
    const uint32_t lanes = kRepeat / sizeof(T);
    const uint64_t n = count, repeats = (n + lanes - 1) / lanes;
    const bool mode0 = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR;
    // Bytes the hardware reads from selMask, and the bytes holding bits that select something.
    const uint64_t readBytes = (mode0 ? lanes : repeats * lanes) / 8;
    const uint64_t usedBytes = ((mode0 ? std::min<uint64_t>(n, lanes) : n) + 7) / 8;
    const TensorRef& m = selMask.TwinRef();
    const TensorRef& d = dst.TwinRef();
    RequireOperand(api, "dst", d, n * sizeof(T));
    RequireOperand(api, "selMask", m, readBytes);
    RequireDisjoint(api, "selMask", m.addr, readBytes, "dst", d.addr, n * sizeof(T));
    const bool maskLater = SelectPrologue(api, mode, m.addr, static_cast<uint32_t>(usedBytes));
    std::vector<uint8_t> bits(readBytes);
    std::memcpy(bits.data(), Core().ub.data() + m.addr, readBytes);
    std::vector<T> a = ReadOperand(api, "src0", src0, n, d.addr, n * sizeof(T)), b;
    if (src1 != nullptr) b = ReadOperand(api, "src1", *src1, n, d.addr, n * sizeof(T));
    if (maskLater) UbRead(api, "selMask", P_V, m.addr, static_cast<uint32_t>(usedBytes));
    T* out = WriteOperand(api, dst, n);
    for (uint64_t i = 0; i < n; ++i)
        out[i] = SelBit(bits.data(), mode, i / lanes, static_cast<uint32_t>(i % lanes), lanes)
                     ? a[i]
                     : (src1 != nullptr ? b[i] : scalar);
    NextOp(P_V);
    CountApi(api, repeats, n, DtypeCode<T>());
    // the level-2 forms end with a barrier: on 2002 always, on 2201 except with a scalar src1 (VselImpl)
    if (kArch == 2002 || (kArch == 2201 && src1 != nullptr)) BarrierPipe(P_V);
}

// Level-0 Select (mask filters lanes; masked-off dst lanes keep their values).
template <typename T, typename U, bool isSetMask, size_t NS>
inline void Select0(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& selMask,
                    const std::array<L0Operand, NS>& srcs, T scalar, AscendC::SELMODE mode, const uint64_t* maskBits,
                    uint64_t maskCount, uint8_t repeatTime, const AscendC::BinaryRepeatParams& p) {
    L0Geometry g = ResolveL0(api, isSetMask, maskBits, maskCount, repeatTime, sizeof(T));
    const TensorRef& m = selMask.TwinRef();
    RequireOperand(api, "selMask", m, 0);
    const bool mode0 = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR;
    const uint64_t readBytes = g.repeats == 0 ? 0 : (mode0 ? g.lanes : g.repeats * g.lanes) / 8;
    std::vector<uint8_t> bits(readBytes);
    bool maskLater = false;
    if (readBytes > 0) {
        RequireOperand(api, "selMask", m, readBytes);
        L0Operand dop = L0Op("dst", dst, p.dstBlkStride, p.dstRepStride);
        if (dop.blk != 0 && Intersects(SortedUnion(L0Segments(dop, g)), std::vector<Seg>{Seg{m.addr, readBytes}}))
            Fault(api, "selMask overlaps dst: they must be disjoint");
        maskLater = SelectPrologue(api, mode, m.addr, static_cast<uint32_t>(readBytes));
        std::memcpy(bits.data(), Core().ub.data() + m.addr, readBytes);
    }
    const uint32_t lanes = g.lanes;
    const std::function<void()> readMask = [&] {  // after the sources, as the level-2 form (Select2)
        if (maskLater) UbRead(api, "selMask", P_V, m.addr, static_cast<uint32_t>(readBytes));
    };
    L0Elementwise<T, T, NS>(
        api, g, L0Op("dst", dst, p.dstBlkStride, p.dstRepStride), srcs, false,
        [&](const T* v, uint64_t r, uint32_t i) {
            return SelBit(bits.data(), mode, r, i, lanes) ? v[0] : (NS > 1 ? v[NS - 1] : scalar);
        },
        readMask);
}

}  // namespace twin

namespace AscendC {

// ---- Compare --------------------------------------------------------------------------------------------------
template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    CMPMODE cmpMode, uint32_t count) {
    static_assert(twin::kCompareOk<T>, "Compare: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    static_assert(twin::kOneOf<U, uint8_t, int8_t>, "Compare: dst must be a uint8_t or int8_t bitmask");
    twin::Compare2("Compare", dst, src0, &src1, T(), cmpMode, count);
}

template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    CMPMODE cmpMode, const uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
    static_assert(twin::kCompareOk<T>, "Compare: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    static_assert(twin::kOneOf<U, uint8_t, int8_t>, "Compare: dst must be a uint8_t or int8_t bitmask");
    const BinaryRepeatParams& p = repeatParams;
    twin::Compare0<T, U, 2>("Compare", isSetMask, dst,
                            {twin::L0Op("src0", src0, p.src0BlkStride, p.src0RepStride),
                             twin::L0Op("src1", src1, p.src1BlkStride, p.src1RepStride)},
                            T(), cmpMode, mask, 0, repeatTime, p.dstBlkStride);
}

template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    CMPMODE cmpMode, const uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
    static_assert(twin::kCompareOk<T>, "Compare: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    static_assert(twin::kOneOf<U, uint8_t, int8_t>, "Compare: dst must be a uint8_t or int8_t bitmask");
    const BinaryRepeatParams& p = repeatParams;
    twin::Compare0<T, U, 2>("Compare", isSetMask, dst,
                            {twin::L0Op("src0", src0, p.src0BlkStride, p.src0RepStride),
                             twin::L0Op("src1", src1, p.src1BlkStride, p.src1RepStride)},
                            T(), cmpMode, nullptr, mask, repeatTime, p.dstBlkStride);
}

// Compare into the CMPMASK register (not on NpuArch 1001).
template <typename T, bool isSetMask = true>
inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask[],
                    const BinaryRepeatParams& repeatParams) {
    static_assert(twin::kArch != 1001 && twin::kOneOf<T, half, float>,
                  "Compare (result in CMPMASK): half/float only, and not available on NpuArch 1001");
    twin::CompareToCmpMask<T, isSetMask>(src0, src1, cmpMode, mask, 0, repeatParams);
}

template <typename T, bool isSetMask = true>
inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask,
                    const BinaryRepeatParams& repeatParams) {
    static_assert(twin::kArch != 1001 && twin::kOneOf<T, half, float>,
                  "Compare (result in CMPMASK): half/float only, and not available on NpuArch 1001");
    twin::CompareToCmpMask<T, isSetMask>(src0, src1, cmpMode, nullptr, mask, repeatParams);
}

// The 128-bit CMPMASK register to/from UB (16 bytes).
template <typename T> inline void GetCmpMask(const LocalTensor<T>& dst) {
    const char* api = "GetCmpMask";
    if (!twin::Core().vmask.cmpValid) twin::Fault(api, "the CMPMASK register was never written");
    twin::RequireOperand(api, "dst", dst.TwinRef(), 16);
    twin::UbWrite(api, twin::P_V, dst.TwinRef().addr, 16);
    std::memcpy(twin::Core().ub.data() + dst.TwinRef().addr, twin::Core().vmask.cmp, 16);
    twin::NextOp(twin::P_V);
}

template <typename T> inline void SetCmpMask(const LocalTensor<T>& src) {
    const char* api = "SetCmpMask";
    twin::RequireOperand(api, "src", src.TwinRef(), 16);
    twin::UbRead(api, "src", twin::P_V, src.TwinRef().addr, 16);
    std::memcpy(twin::Core().vmask.cmp, twin::Core().ub.data() + src.TwinRef().addr, 16);
    twin::Core().vmask.cmpValid = true;
    twin::NextOp(twin::P_V);
}

// ---- Compares (tensor vs scalar) and the deprecated alias CompareScalar ---------------------------------------
#define TWIN_COMPARES(NAME)                                                                                           \
    template <typename T, typename U>                                                                                 \
    inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,      \
                     uint32_t count) {                                                                                \
        static_assert(twin::kComparesOk<T>, #NAME ": element type not supported on this NpuArch (not on 1001)");      \
        static_assert(std::is_same<U, uint8_t>::value, #NAME ": dst must be a uint8_t bitmask");                      \
        twin::Compare2(#NAME, dst, src0, static_cast<const LocalTensor<T>*>(nullptr), src1Scalar, cmpMode, count);    \
    }                                                                                                                 \
    template <typename T, typename U, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,      \
                     const uint64_t mask[], uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {              \
        static_assert(twin::kComparesOk<T>, #NAME ": element type not supported on this NpuArch (not on 1001)");      \
        static_assert(std::is_same<U, uint8_t>::value, #NAME ": dst must be a uint8_t bitmask");                      \
        twin::Compare0<T, U, 1>(#NAME, isSetMask, dst,                                                                \
                                {twin::L0Op("src0", src0, repeatParams.srcBlkStride, repeatParams.srcRepStride)},     \
                                src1Scalar, cmpMode, mask, 0, repeatTime, repeatParams.dstBlkStride);                 \
    }                                                                                                                 \
    template <typename T, typename U, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,      \
                     const uint64_t mask, uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                \
        static_assert(twin::kComparesOk<T>, #NAME ": element type not supported on this NpuArch (not on 1001)");      \
        static_assert(std::is_same<U, uint8_t>::value, #NAME ": dst must be a uint8_t bitmask");                      \
        twin::Compare0<T, U, 1>(#NAME, isSetMask, dst,                                                                \
                                {twin::L0Op("src0", src0, repeatParams.srcBlkStride, repeatParams.srcRepStride)},     \
                                src1Scalar, cmpMode, nullptr, mask, repeatTime, repeatParams.dstBlkStride);           \
    }

TWIN_COMPARES(Compares)
TWIN_COMPARES(CompareScalar)  // deprecated name of Compares
#undef TWIN_COMPARES

// ---- Select ---------------------------------------------------------------------------------------------------
// Modes 0 and 2: src1 is a tensor.
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint32_t count) {
    static_assert(twin::kSelectOk<T>, "Select: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    static_assert(twin::kSelMaskOk<U>, "Select: selMask must be uint8_t/uint16_t/uint32_t/uint64_t");
    twin::RequireSelTensorMode<T>("Select", selMode);
    twin::Select2("Select", dst, selMask, src0, &src1, T(), selMode, count);
}

// Mode 1: src1 is a scalar (not on NpuArch 1001, which has mode 0 only).
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
                   SELMODE selMode, uint32_t count) {
    static_assert(twin::kSelectOk<T>, "Select: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    static_assert(twin::kSelMaskOk<U>, "Select: selMask must be uint8_t/uint16_t/uint32_t/uint64_t");
    static_assert(twin::kArch != 1001 || sizeof(T) == 0,
                  "Select with a scalar src1 (VSEL_TENSOR_SCALAR_MODE) is not supported on NpuArch 1001");
    twin::RequireSelScalarMode("Select", selMode);
    twin::Select2("Select", dst, selMask, src0, static_cast<const LocalTensor<T>*>(nullptr), src1, selMode, count);
}

#define TWIN_SELECT_L0(MASKTYPE, BITS, COUNT)                                                                         \
    template <typename T, typename U, bool isSetMask = true>                                                          \
    inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,          \
                       const LocalTensor<T>& src1, SELMODE selMode, MASKTYPE mask, uint8_t repeatTime,                \
                       const BinaryRepeatParams& repeatParams) {                                                      \
        static_assert(twin::kSelectOk<T>, "Select: element type not supported on this NpuArch (ascendc_api.md §2.6)"); \
        static_assert(twin::kSelMaskOk<U>, "Select: selMask must be uint8_t/uint16_t/uint32_t/uint64_t");             \
        twin::RequireSelTensorMode<T>("Select", selMode);                                                             \
        const BinaryRepeatParams& p = repeatParams;                                                                   \
        twin::Select0<T, U, isSetMask, 2>("Select", dst, selMask,                                                     \
                                          {twin::L0Op("src0", src0, p.src0BlkStride, p.src0RepStride),                \
                                           twin::L0Op("src1", src1, p.src1BlkStride, p.src1RepStride)},               \
                                          T(), selMode, BITS, COUNT, repeatTime, p);                                  \
    }                                                                                                                 \
    template <typename T, typename U, bool isSetMask = true>                                                          \
    inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,  \
                       SELMODE selMode, MASKTYPE mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {  \
        static_assert(twin::kSelectOk<T>, "Select: element type not supported on this NpuArch (ascendc_api.md §2.6)"); \
        static_assert(twin::kSelMaskOk<U>, "Select: selMask must be uint8_t/uint16_t/uint32_t/uint64_t");             \
        static_assert(twin::kArch != 1001 || sizeof(T) == 0,                                                          \
                      "Select with a scalar src1 (VSEL_TENSOR_SCALAR_MODE) is not supported on NpuArch 1001");        \
        twin::RequireSelScalarMode("Select", selMode);                                                                \
        const BinaryRepeatParams& p = repeatParams;                                                                   \
        twin::Select0<T, U, isSetMask, 1>("Select", dst, selMask,                                                     \
                                          {twin::L0Op("src0", src0, p.src0BlkStride, p.src0RepStride)}, src1,         \
                                          selMode, BITS, COUNT, repeatTime, p);                                       \
    }

TWIN_SELECT_L0(uint64_t*, mask, 0)
TWIN_SELECT_L0(uint64_t, nullptr, mask)
#undef TWIN_SELECT_L0

// Mode 0 without selMask: the selection bits come from the CMPMASK register (Compare without dst, or SetCmpMask)
// and the lane mask from SetVectorMask. The twin models this form for VSEL_CMPMASK_SPR only.
template <typename T, SELMODE selMode>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                   uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
    static_assert(twin::kSelectOk<T>, "Select: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    static_assert(selMode == SELMODE::VSEL_CMPMASK_SPR,
                  "Select<T, selMode> without selMask: the twin models SELMODE::VSEL_CMPMASK_SPR only");
    const char* api = "Select";
    if (!twin::Core().vmask.cmpValid) twin::Fault(api, "the CMPMASK register was never written (Compare/SetCmpMask)");
    twin::L0Geometry g = twin::ResolveL0(api, false, nullptr, 0, repeatTime, sizeof(T));
    const uint64_t reg[2] = {twin::Core().vmask.cmp[0], twin::Core().vmask.cmp[1]};
    const BinaryRepeatParams& p = repeatParams;
    twin::L0Elementwise<T, T, 2>(api, g, twin::L0Op("dst", dst, p.dstBlkStride, p.dstRepStride),
                                 std::array<twin::L0Operand, 2>{twin::L0Op("src0", src0, p.src0BlkStride,
                                                                           p.src0RepStride),
                                                                twin::L0Op("src1", src1, p.src1BlkStride,
                                                                           p.src1RepStride)},
                                 false, [reg](const T* v, uint64_t, uint32_t i) {
                                     return ((reg[i >> 6] >> (i & 63)) & 1u) ? v[0] : v[1];
                                 });
}

}  // namespace AscendC
