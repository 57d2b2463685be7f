// Brcb (基础API/数据填充/Brcb): each repeat reads 8 consecutive src elements and fills one 32-byte dst block with each
// (block j of repeat r at dst block r * dstRepStride + j * dstBlkStride). Not on NpuArch 1001; dtypes per the doc.
// Checked: dstBlkStride 0 (undefined on the device), src/dst overlap (forbidden), dst blocks written twice by one
// call (the write order is not documented), repeatTime 0 (a NOP on 2201/2002, a fault on 3510 like every count 0),
// 2002's uint16_t offsets. The strides are uint16_t in BrcbRepeatParams and in the vbrcb intrinsic (asc-devkit
// impl/c_api/instr_impl/npu_arch_2201/vector_compute_impl/asc_brcb_impl.h), the full range the twin accepts on
// 2201/3510 (docs/twin.md, "Brcb repeat strides").
#pragma once

#include "vec_common.h"

namespace AscendC {

struct BrcbRepeatParams {
    BrcbRepeatParams() {}
    BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
    uint32_t blockNumber = 8;
    uint16_t dstRepStride = 8;
    uint16_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

}  // namespace AscendC

namespace twin {
template <typename T> constexpr bool kBrcbOk =
    kArch == 3510 ? kOneOf<T, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float, int64_t,
                           uint64_t>
    : kArch == 2201 ? kOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>
    : kArch == 2002 ? kOneOf<T, int16_t, uint16_t, half, int32_t, uint32_t, float>
                    : false;

// NpuArch 2002, 16-bit types, dstBlkStride 1: each repeat runs a 16x16 vtranspose that writes 512 bytes from the
// repeat's output, so the 256 bytes behind the output are first saved to scratch and then written back (asc-devkit
// impl/basic_api/dav_m200/kernel_operator_vec_brcb_impl.h BrcbImplB16Impl). The vector unit thus reads and rewrites
// those bytes: a neighbouring buffer another pipe is writing (or reading) there races with it, and gets its old bytes
// back. Their contents and initialisation are unchanged.
inline void BrcbB16Behind(uint32_t dstAddr, uint8_t repeatTime, const AscendC::BrcbRepeatParams& p) {
    CoreState& c = Core();
    for (uint32_t r = 0; r < repeatTime; ++r) {
        const uint64_t lo = dstAddr + static_cast<uint64_t>(r) * p.dstRepStride * kBlock + 256;
        if (lo >= kUbBytes) break;
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(256, kUbBytes - lo));
        for (uint32_t b = static_cast<uint32_t>(lo / kBlock), e = (static_cast<uint32_t>(lo) + len) / kBlock; b < e; ++b) {
            const BlockState& st = c.blocks[b];
            int other = -1;
            bool wrote = false;
            if (st.wpipe >= 0 && st.wpipe != P_V && st.wseq > c.sync[st.wpipe][P_V] && !AutoSync(st.wpipe, P_V)) {
                other = st.wpipe;
                wrote = true;
            }
            for (int q = 0; q < P_COUNT && other < 0; ++q)
                if (q != P_V && st.rseq[q] > c.sync[q][P_V] && !AutoSync(q, P_V)) other = q;
            if (other >= 0)
                Fault("Brcb", "16-bit Brcb on NpuArch 2002 saves and restores the 256 bytes behind each repeat's output "
                              "(asc-devkit impl/basic_api/dav_m200/kernel_operator_vec_brcb_impl.h): UB block 0x%x, "
                              "which %s on pipe %s %s with no %s->V synchronisation, would get its old bytes back",
                      b * kBlock, Rt().apiNames[wrote ? st.wapi : st.rapi[other]].c_str(), PipeName(other),
                      wrote ? "wrote" : "reads", PipeName(other));
        }
        std::vector<uint8_t> init(c.init.begin() + lo, c.init.begin() + lo + len);
        Access("Brcb", P_V, static_cast<uint32_t>(lo), len, false);
        Access("Brcb", P_V, static_cast<uint32_t>(lo), len, true);
        std::copy(init.begin(), init.end(), c.init.begin() + lo);
    }
}
// NpuArch 2002 builds Brcb from software loops that keep element offsets in uint16_t (asc-devkit impl/basic_api/
// dav_m200/kernel_operator_vec_brcb_impl.h): dstBlkStride 1 runs a transpose per repeat at dstOffset, which
// accumulates dstRptEle = 32 / sizeof(T) * dstRepStride; a larger dstBlkStride duplicates block by block at
// i * dstRptEle + j * dstblkEle (int arithmetic, but both factors are uint16_t). A wrapped offset writes elsewhere:
// the twin faults instead. (2201 passes the uint16_t strides to the vbrcb instruction, 3510 computes in int32.)
inline void Brcb2002Limits(const char* api, uint32_t elemBytes, uint8_t repeatTime, const AscendC::BrcbRepeatParams& p) {
    const uint64_t perBlock = kBlock / elemBytes;
    const uint64_t rptEle = perBlock * p.dstRepStride, blkEle = perBlock * p.dstBlkStride;
    const uint64_t lastOffset = p.dstBlkStride <= 1 ? (repeatTime - 1ull) * rptEle : 0;
    if (rptEle > 0xFFFF || blkEle > 0xFFFF || lastOffset > 0xFFFF)
        Fault(api, "NpuArch 2002's Brcb keeps element offsets in uint16_t (impl/basic_api/dav_m200/"
                   "kernel_operator_vec_brcb_impl.h): dstRepStride %u, dstBlkStride %u over %u repeats reach element "
                   "offset %llu, which wraps", p.dstRepStride, p.dstBlkStride, repeatTime,
              (unsigned long long)std::max({rptEle, blkEle, lastOffset}));
}
}  // namespace twin

namespace AscendC {

template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                 const BrcbRepeatParams& repeatParams) {
    static_assert(twin::kBrcbOk<T>, "Brcb: element type not supported on this NpuArch (Brcb.md; none on 1001)");
    const char* api = "Brcb";
    twin::RequireCount(api, repeatTime);
    if (repeatTime == 0) return;
    if (repeatParams.dstBlkStride == 0) twin::Fault(api, "dstBlkStride 0 is undefined behaviour (Brcb.md)");
    constexpr uint32_t perBlock = twin::kBlock / sizeof(T);
    const uint64_t srcBytes = static_cast<uint64_t>(repeatTime) * 8 * sizeof(T);
    std::vector<uint64_t> blocks;
    for (uint32_t r = 0; r < repeatTime; ++r)
        for (uint32_t j = 0; j < 8; ++j)
            blocks.push_back(static_cast<uint64_t>(r) * repeatParams.dstRepStride +
                             static_cast<uint64_t>(j) * repeatParams.dstBlkStride);
    const uint64_t dstBytes = (*std::max_element(blocks.begin(), blocks.end()) + 1) * twin::kBlock;
    const twin::TensorRef& d = dst.TwinRef();
    const twin::TensorRef& s = src.TwinRef();
    twin::RequireOperand(api, "dst", d, dstBytes);
    twin::RequireOperand(api, "src", s, srcBytes);
    twin::RequireDisjoint(api, "src", s.addr, srcBytes, "dst", d.addr, dstBytes);
    std::vector<uint64_t> sorted(blocks);
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        twin::Fault(api, "dst blocks overlap (dstBlkStride %u, dstRepStride %u): one call writes a block twice",
                    repeatParams.dstBlkStride, repeatParams.dstRepStride);
    const bool scalarPath = twin::kArch == 2002 && repeatParams.dstBlkStride > 1;
    if (twin::kArch == 2002) twin::Brcb2002Limits(api, sizeof(T), repeatTime, repeatParams);
    if (twin::kArch == 2002 && sizeof(T) == 2 && repeatParams.dstBlkStride == 1) twin::BrcbB16Behind(d.addr,
                                                                                     repeatTime, repeatParams);
    if (scalarPath) {  // 2002's strided form: the scalar unit reads src after waiting for every pipe, then S->V
        twin::RequireTPipe(api, "impl/basic_api/dav_m200/kernel_operator_vec_brcb_impl.h BrcbImpl");
        for (int p : {twin::P_MTE2, twin::P_V, twin::P_MTE3}) twin::Receive(twin::P_S, twin::Signal(p, api), api);
        twin::UbRead(api, "src", twin::P_S, s.addr, static_cast<uint32_t>(srcBytes));
        twin::NextOp(twin::P_S);
        twin::Receive(twin::P_V, twin::Signal(twin::P_S, api), api);
    } else {
        twin::UbRead(api, "src", twin::P_V, s.addr, static_cast<uint32_t>(srcBytes));
    }
    std::vector<T> in(static_cast<size_t>(repeatTime) * 8);
    std::memcpy(static_cast<void*>(in.data()), twin::UbPtr<T>(s.addr), srcBytes);
    for (size_t k = 0; k < blocks.size(); ++k) {
        const uint32_t a = d.addr + static_cast<uint32_t>(blocks[k] * twin::kBlock);
        twin::UbWrite(api, twin::P_V, a, twin::kBlock);
        T* out = twin::UbPtr<T>(a);
        for (uint32_t e = 0; e < perBlock; ++e) out[e] = in[k];
    }
    twin::NextOp(twin::P_V);
    twin::CountApi(api, repeatTime, static_cast<uint64_t>(repeatTime) * 8 * perBlock, twin::DtypeCode<T>());
}

}  // namespace AscendC
