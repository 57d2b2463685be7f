// TEST STAND-IN for the lead's generated op_kernel/lossgrad_tiling_data.h (contract: struct LossGradTilingData,
// trivially copyable, shared by host and kernel). Only its shape matters to these tests.
#ifndef LOSSGRAD_TILING_DATA_STANDIN_H_
#define LOSSGRAD_TILING_DATA_STANDIN_H_

#include <cstdint>

struct LossGradTilingData {
    uint64_t totalLength;
    uint32_t blockDim;
    uint32_t tileLength;
    float coefficient;
    float beta;
    uint32_t flags;
    uint32_t reserved;
};

#endif // LOSSGRAD_TILING_DATA_STANDIN_H_
