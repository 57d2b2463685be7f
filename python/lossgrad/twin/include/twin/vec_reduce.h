// ReduceSum (level 2): the sum of the first `count` elements of src, written to dst[0].
//
// Summation order (deterministic, and the twin's definition of the result): src is cut into repeats of
// E = 256/sizeof(T) elements; each repeat is summed as a binary tree of adjacent pairs ((x0+x1)+(x2+x3))+..., an
// odd element at a level passing up unchanged. The repeat sums are then combined as the architecture's documented
// accumulation mode says: on NpuArch 2201 (A2/A3, level 2: "方式一") sequentially in repeat order; elsewhere
// ("方式二") by the same per-repeat tree applied again to the vector of repeat sums until one value remains. Every
// addition is rounded to T (the vector unit adds in the element type).
//
// sharedTmpBuffer must be a live UB tensor of at least ceil(max(1, count / E) / (32/sizeof(T))) * (32/sizeof(T))
// elements (the documented "方式二" size) on every architecture, even where the hardware does not use it, and its
// contents are garbage afterwards (the twin marks them unwritten). dst may overlap sharedTmpBuffer, not src.
#pragma once

#include "vec_level0.h"

namespace twin {

template <typename T> constexpr bool kReduceSumOk = kArch == 1001 ? kOneOf<T, half> : kOneOf<T, half, float>;

// Each addition saturates on 310P/910 (vec_common.h Saturate).
template <typename T> inline T AddRounded(T a, T b) { return Saturate(Store<T>(Load(a) + Load(b))); }

template <typename T> inline T TreeSum(std::vector<T> v) {
    while (v.size() > 1) {
        std::vector<T> next((v.size() + 1) / 2);
        for (size_t i = 0; i < next.size(); ++i)
            next[i] = 2 * i + 1 < v.size() ? AddRounded(v[2 * i], v[2 * i + 1]) : v[2 * i];
        v.swap(next);
    }
    return v[0];
}

// Sum of `v` by per-repeat trees of `lanes` elements; returns the partial sums and counts the repeats issued.
template <typename T> inline std::vector<T> RepeatSums(const std::vector<T>& v, uint32_t lanes, uint64_t& repeats) {
    std::vector<T> out;
    for (size_t s = 0; s < v.size(); s += lanes) {
        out.push_back(TreeSum(std::vector<T>(v.begin() + s, v.begin() + std::min(v.size(), s + lanes))));
        ++repeats;
    }
    return out;
}

}  // namespace twin

namespace AscendC {

template <typename T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count) {
    static_assert(twin::kReduceSumOk<T>, "ReduceSum: element type not supported on this NpuArch (ascendc_api.md §2.6)");
    const char* api = "ReduceSum";
    // isSetMask=false takes the count from the counter-mode mask, on A2/A3 only (elsewhere the flag has no effect).
    const bool userMask = !isSetMask && twin::kArch == 2201;
    const int64_t n = userMask ? twin::CounterMaskCount(api) : static_cast<int64_t>(count);
    twin::RequireCount(api, n);
    if (!userMask) twin::Level2MaskReset(api);
    if (n == 0) return;
    if (twin::kArch != 3510)
        twin::RequireTPipe(api, twin::kArch == 2201 ? "impl/basic_api/dav_c220/kernel_operator_vec_reduce_impl.h "
                                                      "ReduceSumImpl"
                                                    : "impl/basic_api/kernel_operator_vec_reduce_intf_impl.h ReduceSum");
    constexpr uint32_t lanes = twin::kRepeat / sizeof(T), perBlock = twin::kBlock / sizeof(T);
    const uint64_t firstMaxRepeat = std::max<uint64_t>(1, static_cast<uint64_t>(n) / lanes);
    const uint64_t tmpBytes = (firstMaxRepeat + perBlock - 1) / perBlock * perBlock * sizeof(T);
    const twin::TensorRef& d = dst.TwinRef();
    const twin::TensorRef& s = src.TwinRef();
    const twin::TensorRef& t = sharedTmpBuffer.TwinRef();
    const uint64_t srcBytes = static_cast<uint64_t>(n) * sizeof(T);
    twin::RequireOperand(api, "dst", d, sizeof(T));
    twin::RequireOperand(api, "src", s, srcBytes);
    twin::RequireLive(api, "sharedTmpBuffer", t);
    if (t.len < tmpBytes)
        twin::Fault(api, "sharedTmpBuffer has %u bytes but a ReduceSum of %lld elements needs at least %llu "
                         "(ceil(max(1, count/%u) / %u) * %u elements)",
                    t.len, (long long)n, (unsigned long long)tmpBytes, lanes, perBlock, perBlock);
    twin::RequireOperand(api, "sharedTmpBuffer", t, tmpBytes);
    twin::RequireDisjoint(api, "sharedTmpBuffer", t.addr, tmpBytes, "src", s.addr, srcBytes);
    twin::RequireDisjoint(api, "dst", d.addr, sizeof(T), "src", s.addr, srcBytes);  // dst may not overlap src
    twin::UbRead(api, "src", twin::P_V, s.addr, static_cast<uint32_t>(srcBytes));
    std::vector<T> v(static_cast<size_t>(n));
    std::memcpy(v.data(), twin::UbPtr<T>(s.addr), srcBytes);
    uint64_t repeats = 0;
    std::vector<T> partial = twin::RepeatSums(v, lanes, repeats);
    T sum;
    if (twin::kArch == 2201) {
        sum = partial[0];
        for (size_t i = 1; i < partial.size(); ++i) sum = twin::AddRounded(sum, partial[i]);
    } else {
        while (partial.size() > 1) partial = twin::RepeatSums(partial, lanes, repeats);
        sum = partial[0];
    }
    // The work area holds intermediate garbage afterwards; a kernel must not read it as data.
    twin::UbWrite(api, twin::P_V, t.addr, static_cast<uint32_t>(tmpBytes));
    twin::PoisonUb(t.addr, static_cast<uint32_t>(tmpBytes));
    twin::UbWrite(api, twin::P_V, d.addr, sizeof(T));
    std::memcpy(twin::Core().ub.data() + d.addr, &sum, sizeof(T));
    twin::NextOp(twin::P_V);
    twin::CountApi(api, repeats, static_cast<uint64_t>(n), twin::DtypeCode<T>());
}

}  // namespace AscendC

// ReduceMax (level 2, tensor-front-n form): dst[0] = the largest of the first `count` elements; with calIndex,
// dst[1] holds its index (the smallest on ties) as an integer bit pattern of T's width (read it through
// ReinterpretCast to uint16_t/uint32_t). sharedTmpBuffer must hold the documented size on 2201/2002/1001 (ReduceMax.md
// 关键特性说明: without index ceil(2 * max(1, count / E) / perBlock) * perBlock elements; with index the summed rounds);
// 3510 needs none (any tensor, src included). NaN in src faults (the result is not documented). half indices must
// stay below 65536.
namespace twin {

template <typename T> constexpr bool kReduceMaxOk =
    kArch == 3510 ? kOneOf<T, int16_t, uint16_t, half, int32_t, uint32_t, float>
    : kArch == 1001 ? kOneOf<T, half> : kOneOf<T, half, float>;

inline uint64_t RoundUpTo(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

// Elements of sharedTmpBuffer ReduceMax needs (the doc's algorithm, first round at least one repeat).
inline uint64_t ReduceMaxTmpElems(uint64_t count, uint32_t lanes, uint32_t perBlock, bool calIndex) {
    const uint64_t first = std::max<uint64_t>(1, count / lanes);
    const uint64_t out1 = first * 2;
    if (!calIndex) return RoundUpTo(out1, perBlock);
    // The doc's RoundUp(a, b) is the number of b-element units (ceil(a / b)): each round keeps (value, index) per
    // repeat of the previous round's output.
    const uint64_t start2 = RoundUpTo(out1, perBlock);
    const uint64_t out2 = (out1 + lanes - 1) / lanes * 2;
    const uint64_t end2 = RoundUpTo(out2, perBlock);
    if (out2 <= 2) return start2 + end2;
    const uint64_t out3 = (out2 + lanes - 1) / lanes * 2;
    return start2 + end2 + RoundUpTo(out3, perBlock);
}

}  // namespace twin

namespace AscendC {

template <typename T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = 0) {
    static_assert(twin::kReduceMaxOk<T>, "ReduceMax: element type not supported on this NpuArch (ReduceMax.md)");
    const char* api = "ReduceMax";
    twin::RequireCount(api, count);
    twin::Level2MaskReset(api);
    if (count == 0) return;
    constexpr uint32_t lanes = twin::kRepeat / sizeof(T), perBlock = twin::kBlock / sizeof(T);
    // Only one repeat with its index (ReduceImplWithIndex's repeatTimes == 1 branch) takes no event IDs.
    if (twin::kArch != 3510 && !(calIndex && static_cast<uint32_t>(count) <= lanes))
        twin::RequireTPipe(api, "impl/basic_api/dav_c220, dav_m200, dav_c100 kernel_operator_vec_reduce_impl.h "
                                "ReduceImplNoIndex/ReduceImplThirdStep/ReduceTailCompute");
    const uint64_t n = static_cast<uint64_t>(count), srcBytes = n * sizeof(T);
    const uint32_t dstBytes = static_cast<uint32_t>((calIndex ? 2 : 1) * sizeof(T));
    const twin::TensorRef& d = dst.TwinRef();
    const twin::TensorRef& s = src.TwinRef();
    twin::RequireOperand(api, "dst", d, dstBytes);
    twin::RequireOperand(api, "src", s, srcBytes);
    twin::RequireDisjoint(api, "dst", d.addr, dstBytes, "src", s.addr, srcBytes);
    uint64_t tmpBytes = 0;
    if (twin::kArch != 3510) {
        const twin::TensorRef& t = sharedTmpBuffer.TwinRef();
        tmpBytes = twin::ReduceMaxTmpElems(n, lanes, perBlock, calIndex) * sizeof(T);
        twin::RequireLive(api, "sharedTmpBuffer", t);
        if (t.len < tmpBytes)
            twin::Fault(api, "sharedTmpBuffer has %u bytes but a ReduceMax of %llu elements%s needs at least %llu "
                             "(ReduceMax.md, sharedTmpBuffer size)",
                        t.len, (unsigned long long)n, calIndex ? " with index" : "", (unsigned long long)tmpBytes);
        twin::RequireOperand(api, "sharedTmpBuffer", t, tmpBytes);
        twin::RequireDisjoint(api, "sharedTmpBuffer", t.addr, tmpBytes, "src", s.addr, srcBytes);
    }
    if (std::is_same<T, half>::value && calIndex && n > 65536)
        twin::Fault(api, "a half ReduceMax returns indices up to 65535 only (count %llu)", (unsigned long long)n);
    twin::UbRead(api, "src", twin::P_V, s.addr, static_cast<uint32_t>(srcBytes));
    const T* in = twin::UbPtr<T>(s.addr);
    uint64_t best = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const double v = twin::ToDouble(in[i]);
        if (std::isnan(v)) twin::Fault(api, "src element %llu is NaN: ReduceMax's result is not documented for NaN",
                                       (unsigned long long)i);
        if (v > twin::ToDouble(in[best])) best = i;
    }
    T out[2];
    out[0] = in[best];
    if (calIndex) {
        std::memset(static_cast<void*>(&out[1]), 0, sizeof(T));
        if (sizeof(T) == 2) { const uint16_t idx = static_cast<uint16_t>(best); std::memcpy(&out[1], &idx, 2); }
        else { const uint32_t idx = static_cast<uint32_t>(best); std::memcpy(&out[1], &idx, 4); }
    }
    if (tmpBytes > 0) {
        twin::UbWrite(api, twin::P_V, sharedTmpBuffer.TwinRef().addr, static_cast<uint32_t>(tmpBytes));
        twin::PoisonUb(sharedTmpBuffer.TwinRef().addr, static_cast<uint32_t>(tmpBytes));
    }
    twin::UbWrite(api, twin::P_V, d.addr, dstBytes);
    std::memcpy(twin::Core().ub.data() + d.addr, out, dstBytes);
    twin::NextOp(twin::P_V);
    twin::CountApi(api, twin::RepeatsFor(n, sizeof(T)), n, twin::DtypeCode<T>());
}

}  // namespace AscendC
