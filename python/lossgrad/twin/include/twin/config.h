// Architecture selection for the twin. The launcher passes the SoC table's figures as defines, so the twin and the
// Python tiling read the same numbers (lossgrad/socs.py is their single source).
#pragma once

#ifndef __NPU_ARCH__
#error "twin: compile with -D__NPU_ARCH__=2201|3510|2002|1001 (lossgrad.twin.run_kernel does this from the SoC)"
#endif

#if __NPU_ARCH__ != 2201 && __NPU_ARCH__ != 3510 && __NPU_ARCH__ != 2002 && __NPU_ARCH__ != 1001
#error "twin: unsupported __NPU_ARCH__ (the twin models 2201, 3510, 2002 and 1001)"
#endif

#ifndef TWIN_UB_BYTES
#error "twin: TWIN_UB_BYTES (physical UB per core) must be defined"
#endif
#ifndef TWIN_UB_KERNEL_BYTES
#error "twin: TWIN_UB_KERNEL_BYTES (UB a kernel's TPipe may allocate) must be defined"
#endif
#ifndef TWIN_EVENTS_PER_POSITION
#error "twin: TWIN_EVENTS_PER_POSITION must be defined"
#endif

// Empty qualifiers, as in CANN's CPU-debug mode.
#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define __host__
#define __vector__
#define __inout_pipe__(x)

#include <cstdint>
using GM_ADDR = __gm__ uint8_t*;

namespace twin {
constexpr int kArch = __NPU_ARCH__;
constexpr bool kHasDataCopyPad = (kArch == 2201 || kArch == 3510);
constexpr bool kBf16Io = (kArch == 2201 || kArch == 3510);
constexpr bool kBf16Arith = (kArch == 3510);
// DataSyncBarrier exists on A2/A3 and 950 only (asc-devkit docs/zh DataSyncBarrier(ISASI).md 产品支持情况).
constexpr bool kHasDataSyncBarrier = (kArch == 2201 || kArch == 3510);
// Float overflow mode of the part (socs.py overflow_mode): 310P and Atlas 910 support saturation mode only.
#ifndef TWIN_SATURATION
#error "twin: TWIN_SATURATION (1: the part's float overflow mode is saturation) must be defined"
#endif
constexpr bool kSaturation = TWIN_SATURATION != 0;
constexpr uint32_t kUbBytes = TWIN_UB_BYTES;
constexpr uint32_t kUbKernelBytes = TWIN_UB_KERNEL_BYTES;
constexpr uint32_t kEventsPerPosition = TWIN_EVENTS_PER_POSITION;
constexpr uint32_t kMaxEventId = (kArch == 1001) ? 4 : 8;
// The SoC table's events_per_position is QUE_MAX_EVENT (asc-devkit impl/basic_api/kernel_macros.h), the size of
// each HardEvent's ID pool; on every modelled arch it equals the number of hardware flag IDs.
static_assert(kEventsPerPosition == kMaxEventId, "TWIN_EVENTS_PER_POSITION must be QUE_MAX_EVENT of the arch");
constexpr uint32_t kMaxBuffers = 64;
// The system workspace's part the library keeps before the user workspace (GetUserWorkspace): RESERVED_WORKSPACE of
// asc-devkit impl/basic_api/utils/kernel_utils_constants.h, 2 MiB on 1001/2002 and 16 MiB on 2201/3510.
constexpr uint64_t kReservedWorkspace = (kArch == 1001 || kArch == 2002) ? 2ull << 20 : 16ull << 20;
constexpr uint32_t kBlock = 32;    // DataBlock bytes
constexpr uint32_t kRepeat = 256;  // bytes per vector repeat
}  // namespace twin
