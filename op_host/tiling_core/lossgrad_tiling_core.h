// Portable tiling core of ascend-lossgrad: the one interface between CANN's TilingFunc and our tiling algorithm.
//
// This header is declarations only. The implementation (op_host/tiling_core/*.cpp) is plain C++17 with no CANN
// header, so it builds and is tested on any host. It is the only implementation of the tiling: the Python package
// calls it too (lossgrad.tiling.native, through op_host/tiling_capi/lossgrad_tiling_capi.cpp).
//
// Callers: the generated op_host/<entry_name>.cpp TilingFunc adapters (lossgrad_op_host.h) fill an Inputs from
// the gert::TilingContext and platform info, call Compute, and copy a successful Result into the context.
#ifndef LOSSGRAD_TILING_CORE_H_
#define LOSSGRAD_TILING_CORE_H_

#include <cstddef>
#include <cstdint>

namespace lossgrad_tiling {

constexpr int32_t kMaxRank = 8;              // aclnn's rank limit for every op (registry MAX_RANK)
constexpr int32_t kNumInputs = 5;            // the most tensor inputs an op has: one per role of opspec.ROLES
                                             // (checked by lossgrad_tiling_tables.h)
constexpr size_t kMaxTilingDataBytes = 1024; // capacity of Result::tiling_data; sizeof(LossGradTilingData) must fit
constexpr size_t kMessageBytes = 256;
// A launch's numBlocks is in [1, 65535] (asc-devkit docs/zh, SIMD-BuiltIn keywords): a platform reporting more cores
// gets at most this many blocks.
constexpr uint32_t kMaxBlockDim = 65535;

// Which op is being tiled: the op's position in lossgrad.registry.OPS (the ops are discovered from their folders,
// python/lossgrad/ops/<name>/; nothing in C++ lists them). Generated sources name the value they pass
// (static_cast<OpId>(n), with the op's name beside it); the core checks it against its generated op table.
enum class OpId : int32_t {};

// Element types, numbered as ge::DataType / aclDataType (DT_FLOAT = 0, DT_FLOAT16 = 1, DT_BF16 = 27), which is
// also lossgrad.dtypes.DType.acl_enum. Any other ge::DataType never reaches Compute (the adapter rejects it).
enum class DataType : int32_t {
    kFloat32 = 0,
    kFloat16 = 1,
    kBFloat16 = 27,
};

// aclnn's reduction integers (lossgrad.registry.Reduction); the kernel attribute string is mapped to these.
enum class Reduction : int32_t {
    kNone = 0,
    kMean = 1,
    kSum = 2,
    kBatchMean = 3,
};

// One tensor as the kernel sees it: its own (not broadcast) shape, row-major and contiguous.
// rank 0 is a scalar (numel 1); dims[rank..kMaxRank) are unspecified and must be ignored.
struct TensorDesc {
    int32_t rank;
    int64_t dims[kMaxRank];
    DataType dtype;
};

struct Inputs {
    OpId op;
    // In the op's kernel input order (registry OpSpec.kernel_inputs, i.e. the OpDef Input() order), not aclnn's
    // argument order. The role of each position (grad/self/target/...) is fixed per op by the registry.
    int32_t num_inputs;  // the op's kernel inputs (positions [0, num_inputs) of `inputs` and `logical`)
    uint32_t absent;     // bit i: kernel input i is an optional input the call leaves out (a null tensor); its
                         // TensorDesc is ignored
    TensorDesc inputs[kNumInputs];
    TensorDesc output;
    // The inputs' shapes as the caller sees them, when `inputs` are kernel views: buffers in which dims a broadcast
    // view repeats are 1 (the Python runners pass those to read each element once). The iteration space and the
    // reduction's divisor come from these; strides from `inputs`. false (CANN: whole tensors): `inputs` themselves.
    bool has_logical;
    TensorDesc logical[kNumInputs];
    Reduction reduction;
    double beta;       // SmoothL1 only (kernel attr of the registry's beta AttrSpec); 1.0 for the other ops
    bool log_target;   // KL only; false for the other ops
    uint32_t core_num; // vector cores a kernel may launch on: PlatformAscendC::GetCoreNumAiv()
    // The kernel UB budget per core: the bytes a kernel's TPipe may allocate, i.e. the figure the Python tiling
    // sizes tiles with, lossgrad.socs ARCHS[npu_arch].ub_kernel_bytes (physical UB minus the scratch the Ascend C
    // library reserves). Not the physical UB size. The op_host adapter takes it from the per-arch table generated
    // from socs.py (lossgrad_tiling_tables.h kArchs) for the npu_arch below; when the arch is unknown (0) it uses
    // PlatformAscendC::GetCoreMemSize(CoreMemType::UB) minus the 8 KB reserved scratch (kUbReservedBytes).
    uint64_t ub_bytes;
    // __NPU_ARCH__ of the target when the platform names it unambiguously (2201 A2/A3, 2002 310P, 1001 910);
    // 0 when it does not (950, and A3 on CANN versions that give it its own SocVersion). Compute must not need
    // more than "0 behaves like an arch with DataCopyPad".
    int32_t npu_arch;
    // KL reduction: tiles per fold and folds per running-sum step (LossGradTilingData::foldTiles); 0 takes the
    // default (lossgrad.tiling KL_FOLD_TILES). Tests lower it so that short reductions fold many times.
    uint32_t kl_fold_tiles;
};

enum class Status : int32_t {
    kOk = 0,
    kInvalidArgument = 1, // a shape, dtype, attribute or platform figure the op cannot take
    kUnsupported = 2,     // valid for aclnn, but this kernel has no tiling for it
    kInternal = 3,
};

struct Result {
    Status status;
    uint32_t block_dim;       // >= 1 on success (never 0; an empty output still launches one core)
    uint64_t tiling_key;      // for TILING_KEY_IS() in the kernel
    uint64_t workspace_bytes; // user workspace only; CANN's system workspace is added by the adapter
    uint64_t ub_bytes;        // UB bytes the kernel's buffer plan allocates at tileLen (<= Inputs::ub_bytes)
    uint32_t tiling_size;     // bytes of tiling_data in use; == sizeof(LossGradTilingData) on success
    bool plan_check_complete; // the plan check walked every tile (false: a plan beyond its walk budget, see
                              // lossgrad_plan_check.h kMaxWalkTiles; its split-level facts are still checked)
    uint8_t tiling_data[kMaxTilingDataBytes]; // the packed LossGradTilingData (host byte order, as memcpy'd)
    char message[kMessageBytes];              // NUL-terminated reason when status != kOk
};

// Computes the tiling for one call. Pure: no I/O, no globals, no CANN calls, thread-safe.
// On success sets status = kOk and every other field; on failure sets status and message, the rest unspecified.
// The return value equals out->status (out must not be null).
Status Compute(const Inputs& in, Result* out);

// The plan check (lossgrad_plan_check.h) of a given tiling data for this call: kOk when safe, kInternal with the
// violation in out->message otherwise. Compute runs it on every plan; this entry lets tests check altered plans.
Status CheckTiling(const Inputs& in, const uint8_t* data, size_t size, uint64_t workspace_bytes, Result* out);

} // namespace lossgrad_tiling

#endif // LOSSGRAD_TILING_CORE_H_
