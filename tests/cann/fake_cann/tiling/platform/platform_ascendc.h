// TEST SCAFFOLDING (tests/cann/fake_cann/README.md): a minimal stand-in for CANN's
// "tiling/platform/platform_ascendc.h". Member signatures as declared in public copies of that header
// (e.g. GetCoreMemSize(const CoreMemType&, uint64_t&) const) and as called in hicann/ops-nn
// loss/mse_loss_grad_v2/op_host/arch35/mse_loss_grad_v2_tiling_arch35.cpp (ReadPlatform).
#ifndef FAKE_CANN_PLATFORM_ASCENDC_H_
#define FAKE_CANN_PLATFORM_ASCENDC_H_

#include <cstdint>

#include "register/op_def_registry.h" // fe::PlatFormInfos (opaque in CANN, a plain struct here)

namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };
// The enumerators every toolkit version declares; newer ones add more after these. FAKE_CANN_SOC_VERSIONS selects
// a generation: 0 (default) only these, 1 adds ASCEND910_95 (the 950's older name), 2 the current list's ASCEND950
// (ASCEND910_95 kept as its deprecated alias) and ASCEND910_93 with their values (asc-devkit
// include/utils/tiling/platform/platform_ascendc.h; the enumerators in between are left out).
#ifndef FAKE_CANN_SOC_VERSIONS
#define FAKE_CANN_SOC_VERSIONS 0
#endif
enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND310P,
    ASCEND310B,
#if FAKE_CANN_SOC_VERSIONS == 1
    ASCEND910_95 = 4,
#elif FAKE_CANN_SOC_VERSIONS == 2
    ASCEND950 = 4,
    ASCEND910_95 = ASCEND950,
    ASCEND910_93 = 11,  // ASCEND910_95 = ASCEND950 restarts the count at 4, so the enumerators after it run on from 5
#endif
    RESERVED_VERSION = 99999
};

class PlatformAscendC {
public:
    PlatformAscendC() = delete;
    explicit PlatformAscendC(fe::PlatFormInfos* info) : info_(info) {}
    uint32_t GetCoreNumAiv() const { return info_->core_num_aiv; }
    void GetCoreMemSize(const CoreMemType& type, uint64_t& size) const
    { size = type == CoreMemType::UB ? info_->ub_bytes : 0; }
    uint32_t GetLibApiWorkSpaceSize() const { return info_->lib_api_workspace; }
    SocVersion GetSocVersion() const { return static_cast<SocVersion>(info_->soc_version); }
private:
    fe::PlatFormInfos* info_;
};
} // namespace platform_ascendc

#endif // FAKE_CANN_PLATFORM_ASCENDC_H_
