// High-level Sign (高阶API/数学计算/Sign): dst = -1, 0 or +1 by the sign of src.
//
// NaN -> 0 and -0 -> +0 (the documented example maps nan, -nan, -0.0 and 0.0 to 0). Not available on NpuArch 1001.
// sharedTmpBuffer form: the buffer must be a live UB uint8_t tensor of at least 3 * 256 bytes (GetSignMaxMinTmpSize's
// minimum), disjoint from src and dst; src and dst must not overlap at all. The buffer's contents are garbage
// afterwards (marked unwritten). The forms without it (include/adv_api/math/sign.h) compute in registers on 3510 and
// take the scratch from the stack buffer (PopStackBuffer, the reserved UB outside the kernel's TPipe space) on
// 2201/2002; the twin checks them the same way minus the buffer.
#pragma once

#include "vec_cmpsel.h"

namespace twin {
template <typename T> constexpr bool kSignOk = kArch != 1001 && kOneOf<T, half, float>;
constexpr uint32_t kSignMinTmpBytes = 3 * kRepeat;
}  // namespace twin

namespace twin {
// Sign with an optional sharedTmpBuffer (nullptr: the stack/register form).
template <typename T>
inline void SignImpl(const AscendC::LocalTensor<T>& dstTensor, const AscendC::LocalTensor<T>& srcTensor,
                     const AscendC::LocalTensor<uint8_t>* tmp, const uint32_t calCount) {
    const char* api = "Sign";
    twin::RequireCount(api, calCount);
    twin::Level2MaskReset(api);  // built from level-2 calls
    if (calCount == 0) return;
    const uint64_t bytes = static_cast<uint64_t>(calCount) * sizeof(T);
    const twin::TensorRef& d = dstTensor.TwinRef();
    const twin::TensorRef& s = srcTensor.TwinRef();
    twin::RequireOperand(api, "dstTensor", d, bytes);
    twin::RequireOperand(api, "srcTensor", s, bytes);
    twin::RequireDisjoint(api, "srcTensor", s.addr, bytes, "dstTensor", d.addr, bytes);
    if (tmp != nullptr) {
        const twin::TensorRef& t = tmp->TwinRef();
        twin::RequireLive(api, "sharedTmpBuffer", t);
        if (t.len < twin::kSignMinTmpBytes)
            twin::Fault(api, "sharedTmpBuffer has %u bytes, below the minimum %u (GetSignMaxMinTmpSize)", t.len,
                        twin::kSignMinTmpBytes);
        twin::RequireOperand(api, "sharedTmpBuffer", t, t.len);
        twin::RequireDisjoint(api, "sharedTmpBuffer", t.addr, t.len, "srcTensor", s.addr, bytes);
        twin::RequireDisjoint(api, "sharedTmpBuffer", t.addr, t.len, "dstTensor", d.addr, bytes);
    }
    twin::UbRead(api, "srcTensor", twin::P_V, s.addr, static_cast<uint32_t>(bytes));
    const T* in = twin::UbPtr<T>(s.addr);
    std::vector<T> out(calCount);
    for (uint32_t i = 0; i < calCount; ++i) {
        double v = twin::ToDouble(in[i]);
        out[i] = twin::FromDouble<T>(v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0);
    }
    if (tmp != nullptr) {
        twin::UbWrite(api, twin::P_V, tmp->TwinRef().addr, tmp->TwinRef().len);
        twin::PoisonUb(tmp->TwinRef().addr, tmp->TwinRef().len);
    }
    twin::UbWrite(api, twin::P_V, d.addr, static_cast<uint32_t>(bytes));
    std::memcpy(twin::Core().ub.data() + d.addr, out.data(), bytes);
    twin::NextOp(twin::P_V);
    twin::CountApi(api, twin::RepeatsFor(calCount, sizeof(T)), calCount, twin::DtypeCode<T>());
    // Event log: the devkit's Sign runs its instruction sequence once per chunk of the scratch buffer
    // (impl/adv_api/detail/math/sign/sign_common_impl.h: splitCount = tmp bytes / sizeof(T) / 3, a multiple of
    // 32); the stack form and 3510's register form are taken as one chunk. lossgrad.timing costs the sequence.
    if (twin::Rt().timing && twin::kArch != 3510) {
        const uint64_t split = tmp != nullptr ? tmp->TwinRef().len / sizeof(T) / 3 / 32 * 32 : 0;
        const uint64_t chunks = split > 0 ? (calCount + split - 1) / split : 1;
        twin::Core().tlog.back().gmBuf = static_cast<int16_t>(chunks < 32767 ? chunks : 32767);
    }
}
}  // namespace twin

namespace AscendC {

template <typename T, bool isReuseSource = false>
inline void Sign(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {
    static_assert(twin::kSignOk<T>, "Sign: element type not supported on this NpuArch (half/float; not on 1001)");
    twin::SignImpl(dstTensor, srcTensor, &sharedTmpBuffer, calCount);
}

template <typename T, bool isReuseSource = false>
inline void Sign(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer) {
    Sign<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize());
}

template <typename T, bool isReuseSource = false>
inline void Sign(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {
    static_assert(twin::kSignOk<T>, "Sign: element type not supported on this NpuArch (half/float; not on 1001)");
    if (twin::kArch != 3510)  // the stack buffer's end comes from the TPipe
        twin::RequireTPipe("Sign", "include/adv_api/math/sign.h, impl/basic_api/kernel_pop_stack_buffer.h "
                                   "PopStackBuffer");
    twin::SignImpl<T>(dstTensor, srcTensor, nullptr, calCount);
}

template <typename T, bool isReuseSource = false>
inline void Sign(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Sign<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize());
}

}  // namespace AscendC
