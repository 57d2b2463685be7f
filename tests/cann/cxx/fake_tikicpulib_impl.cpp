// TEST SCAFFOLDING: a trivial in-process implementation of the fake tikicpulib.h declarations, so the generated
// CPU-debug runner can be linked and run end to end on a machine without CANN (tests/cann/test_launch_glue.py).
#include <cstdlib>

#include "tikicpulib.h"

uint64_t g_tilingKey = 0;

namespace AscendC {
void* GmAlloc(size_t size) { return std::malloc(size); }
void GmFree(void* ptr) { std::free(ptr); }
void SetKernelMode(KernelMode mode) { (void)mode; }
} // namespace AscendC

#ifdef FAKE_CPUDEBUG_PRODUCT
// Built as a stand-in libcpudebug.so: says which product directory the loader took it from.
#include <cstdio>
namespace {
__attribute__((constructor)) void LgAnnounceProduct() { std::fprintf(stderr, "cpudebug product: %s\n", FAKE_CPUDEBUG_PRODUCT); }
} // namespace
#endif
