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

template <typename T> inline T AddRounded(T a, T b) { return Store<T>(Load(a) + Load(b)); }

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
    twin::CountApi(api, repeats, static_cast<uint64_t>(n));
}

}  // namespace AscendC
