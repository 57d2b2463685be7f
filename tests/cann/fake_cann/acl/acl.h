// TEST SCAFFOLDING (tests/cann/fake_cann/README.md): declarations only, standing in for CANN's "acl/acl.h" so the
// kernel-launch host main can be syntax-checked. Signatures as used by hicann/asc-tools
// examples/03_msopgen/aclnn_invocation/main.cpp and the kernel-launch samples (AddKernelInvocationTilingNeo main.cpp,
// mirrored in tjulitianyi1997/AscendProjects operator/AddCustomSample/KernelLaunch/...).
#ifndef FAKE_CANN_ACL_H_
#define FAKE_CANN_ACL_H_

#include <cstddef>
#include <cstdint>

extern "C" {
typedef int aclError;
typedef void* aclrtStream;
typedef void* aclrtEvent;
typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
} aclrtMemcpyKind;
typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
} aclrtMemMallocPolicy;
#define ACL_SUCCESS 0

aclError aclInit(const char* configPath);
aclError aclFinalize();
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);
const char* aclGetRecentErrMsg();
}

#endif // FAKE_CANN_ACL_H_
