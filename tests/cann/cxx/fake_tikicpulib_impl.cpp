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
