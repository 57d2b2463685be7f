// TEST SCAFFOLDING (tests/cann/fake_cann/README.md): declarations only, standing in for the CANN CPU-debug header
// "tikicpulib.h". Usage as in the kernel-launch samples' CPU branch (AddKernelInvocationTilingNeo main.cpp:
// AscendC::GmAlloc/GmFree, AscendC::SetKernelMode(KernelMode::AIV_MODE), ICPU_RUN_KF) and hicann/ops-nn kernel UTs
// (ICPU_SET_TILING_KEY); semantics in ascendc_api.md §3.1.
#ifndef FAKE_CANN_TIKICPULIB_H_
#define FAKE_CANN_TIKICPULIB_H_

#include <cstddef>
#include <cstdint>

#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR __gm__ uint8_t*

enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE };

namespace AscendC {
void* GmAlloc(size_t size);
void GmFree(void* ptr);
void SetKernelMode(KernelMode mode);
template <typename Func, typename... Args>
void RunKernelFunctionOnCpu(Func func, const char* name, uint32_t blockDim, Args... args);
} // namespace AscendC

extern uint64_t g_tilingKey;
#define ICPU_SET_TILING_KEY(key) (g_tilingKey = (key))
#define ICPU_RUN_KF(func, blockDim, ...) AscendC::RunKernelFunctionOnCpu(func, #func, blockDim, __VA_ARGS__)

#if defined(FAKE_TIKICPULIB_IMPL)
// Test-only behaviour (see tests/cann/cxx/fake_tikicpulib_impl.cpp): every block runs in this process, one after
// the other. The real library forks a process per block and checks every pointer came from GmAlloc.
template <typename Func, typename... Args>
void AscendC::RunKernelFunctionOnCpu(Func func, const char* name, uint32_t blockDim, Args... args)
{
    (void)name;
    for (uint32_t block = 0; block < blockDim; ++block) {
        func(args...);
    }
}
#endif

#endif // FAKE_CANN_TIKICPULIB_H_
