"""The per-op and per-architecture facts the C++ tiling core needs, rendered as a C++ header from their Python
source of truth (lossgrad.registry, lossgrad.tiling.ub_plan, lossgrad.tiling, lossgrad.socs, lossgrad.dtypes).

op_host/tiling_core/lossgrad_tiling_core.cpp is the only implementation of the tiling algorithm (lossgrad.tiling.plan
calls it through lossgrad.tiling.native); everything that is a *fact* rather than an *algorithm step* comes from
`c_tables_header()`, so no figure is restated by hand in C++:
which kernel input has which role, which ops read self, the output-shape rule, the reduction coefficient's numerator
and divisor rules, the reductions each op accepts, its attributes, the kernels' UB buffer plan (each buffer's count,
multiplier, element type, divisor and bufMask bit, per op, grad-scalar variant and architecture), the MASK_* bits, the
tiling constants (TILE_ALIGN, MIN_CORE_BYTES, GM_ALIGN_BYTES, the COLUMN_* split constants, FIXED_BYTES, the tiling
keys) and the UB budget of each architecture (socs ARCHS[npu_arch].ub_kernel_bytes, used by the op_host TilingFunc
adapter).

`core_inputs(problem)` is the other half of the interface: the lossgrad_tiling::Inputs a KernelProblem maps to.

The header is generated next to the rendered lossgrad_tiling_data.h of a build (the CANN package gets it as
op_host/tiling_core/lossgrad_tiling_tables.h through lossgrad.cann.op_host.host_files, the native library of
lossgrad.tiling.native in its build directory); it is never committed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Iterable

from .. import registry, socs
from ..dtypes import KERNEL_DTYPES, DType
from ..registry import OPS, Divisor, OpSpec, OutputShape, Reduction
from ..socs import ARCHS
from . import (COLUMN_FLAT_REREAD, COLUMN_MIN_BYTES, COLUMN_WINDOW_BYTES, GM_ALIGN_BYTES, KEY_ABSENT,
               KEY_GRAD_SCALAR, KEY_KL_REDUCE, KEY_SAME_SHAPE, KL_FOLD_TILES, MIN_CORE_BYTES, TILE_ALIGN,
               KernelProblem, _sizes, absent_key, absent_sets)
from . import ub_plan

TABLES_HEADER = "lossgrad_tiling_tables.h"

# The architecture key of the buffer-plan rows that serve every npu_arch not in socs.ARCHS (0 = "unknown", see
# lossgrad_tiling::Inputs::npu_arch). ub_plan's functions take any integer; the row is computed by calling them.
OTHER_ARCH = 0

# UB the platform keeps for the Ascend C library's scratch (asc-devkit kernel_utils_constants.h TMP_UB_OFFSET,
# 8 KB): the op_host adapter subtracts it from GetCoreMemSize(UB) when the SoC's architecture is not in the table.
# Checked below against the table's own figures (ub_bytes - ub_kernel_bytes of the archs whose budget is derived so).
UB_RESERVED_BYTES = 8 * 1024

_INPUT_ROLES = registry.INPUT_ROLES  # per-input arrays are indexed by the role's position
ROLE_INDEX = {r: i for i, r in enumerate(_INPUT_ROLES + ("out",))}  # the output follows the inputs

_DIVISOR_NAMES = {Divisor.OUTPUT_NUMEL: "kDivisorOutputNumel", Divisor.SELF_NUMEL: "kDivisorSelfNumel",
                  Divisor.SELF_TARGET_NUMEL: "kDivisorSelfTargetNumel",
                  Divisor.SELF_TARGET_DIM0: "kDivisorSelfTargetDim0"}
_OUTPUT_NAMES = {OutputShape.BROADCAST_ALL: "kOutputBroadcastAll", OutputShape.SELF: "kOutputSelf",
                 OutputShape.TARGET: "kOutputTarget"}
# SELF_ABSORBING: self's shape is the broadcast of every input (validation proved it), so the tiling and the kernel
# write the broadcast as for BROADCAST_ALL
_KERNEL_OUTPUT = {OutputShape.SELF_ABSORBING: OutputShape.BROADCAST_ALL}


def _arch_keys() -> list[int]:
    keys = sorted(ARCHS)
    assert OTHER_ARCH not in keys
    return keys + [OTHER_ARCH]


def _element_bytes() -> dict[str, tuple[int, int]]:
    """Buffer element type symbol -> (role index or -1, fixed bytes): the roles' types come from the call's dtypes,
    the others (float, uint8_t) have the sizes lossgrad.tiling gives them."""
    roles = tuple(ROLE_INDEX)
    fixed = _sizes(SimpleNamespace(dtypes={r: DType.FLOAT32 for r in roles}))  # type: ignore[arg-type]
    out = {ub_plan.ROLE_TYPE[r]: (ROLE_INDEX[r], 0) for r in roles}
    for sym, size in fixed.items():
        if sym not in out:
            out[sym] = (-1, int(size))
    return out


def _cpp_double(x: float) -> str:
    """An exact C++17 literal (hexadecimal floating point) of a float64."""
    if math.isinf(x):
        return ("-" if x < 0 else "") + "std::numeric_limits<double>::infinity()"
    return float(x).hex()


def _bool(b: bool) -> str:
    return "true" if b else "false"


def _plans() -> tuple[list[str], list[str], int]:
    """Rows of kBuffers and kBufferPlans, and the common denominator of every buffer's bytes per element."""
    elem = _element_bytes()
    entries: list[tuple[int, int, int, int, int, list[ub_plan.Buffer]]] = []
    for op_index, op in enumerate(OPS.values()):
        for absent in absent_sets(op):
            for grad_scalar in (False, True):
                for arch in _arch_keys():
                    bufs = ub_plan.buffers(op, grad_scalar, arch, absent)
                    entries.append((op_index, int(grad_scalar), absent_key(absent), arch,
                                    int(ub_plan.needs_constants(op, arch)), bufs))
    denom = math.lcm(*(b.div for *_, bufs in entries for b in bufs))
    buffers: list[str] = []
    plans: list[str] = []
    for op_index, grad_scalar, absent_bits, arch, consts, bufs in entries:
        first = len(buffers)
        for b in bufs:
            role, fixed = elem[b.ctype]
            assert (b.count * b.mult * denom) % b.div == 0
            when = -1 if b.when is None else b.when
            buffers.append(f"    {{{b.count}u, {b.mult}u, {denom // b.div}u, {role}, {fixed}u, {when}, {b.pad}u}},"
                           f"  // {list(OPS)[op_index]} {b.name} ({b.kind} {b.ctype} /{b.div})")
        plans.append(f"    {{{op_index}, {_bool(bool(grad_scalar))}, {absent_bits}u, {arch}, {_bool(bool(consts))}, "
                     f"{first}u, {len(bufs)}u}},")
    return buffers, plans, denom


def _ops() -> list[str]:
    rows = []
    for op in OPS.values():
        roles = ", ".join(str(ROLE_INDEX[k.role]) for k in op.kernel_inputs)
        has = {i.role: i for i in op.inputs}
        reads = ", ".join(_bool(r in has and has[r].values_read) for r in _INPUT_ROLES)
        optional = ", ".join(_bool(r in has and has[r].optional) for r in _INPUT_ROLES)
        reductions = sum(1 << int(r) for r in op.reductions)
        beta = next((a for a in op.attrs if a.name == "beta"), None)
        log_target = next((a for a in op.attrs if a.name == "log_target"), None)
        batchmean = _DIVISOR_NAMES[op.batchmean_divisor] if op.batchmean_divisor is not None else "kDivisorNone"
        beta_min = beta.minimum if beta is not None and beta.minimum is not None else -math.inf
        rows.append(
            f"    {{\"{op.name}\", {len(op.kernel_inputs)}, {{{roles}}}, {{{reads}}}, {{{optional}}}, "
            f"{_OUTPUT_NAMES[_KERNEL_OUTPUT.get(op.output_shape, op.output_shape)]}, "
            f"{_cpp_double(op.coefficient)} /* {op.coefficient!r} */, {_DIVISOR_NAMES[op.mean_divisor]}, {batchmean}, "
            f"0x{reductions:x}u, {_bool(op.reduction_validated)}, {_bool(beta is not None)}, "
            f"{_cpp_double(beta_min)}, {_bool(log_target is not None)}, "
            # FLAG_BETA_ZERO is set when an op with a beta attribute gets beta == 0
            f"{_bool(beta is not None)}, {_bool(op.empty_mean_refused)}}},")
    return rows


def c_tables_header() -> str:
    buffers, plans, denom = _plans()
    reserved = {a.npu_arch: int(a.ub_bytes.value) - int(a.ub_kernel_bytes.value) for a in ARCHS.values()
                if socs._UB_SRC in a.ub_kernel_bytes.source}
    assert reserved and all(v == UB_RESERVED_BYTES for v in reserved.values()), reserved
    lines = [
        "// Generated by lossgrad.tiling.cxx_tables from lossgrad.registry, lossgrad.tiling(.ub_plan), lossgrad.socs",
        "// and lossgrad.dtypes; do not edit, do not commit. The facts lossgrad_tiling_core.cpp needs, so that the",
        "// C++ tiling core restates no per-op or per-architecture figure of the Python source of truth.",
        "#ifndef LOSSGRAD_TILING_TABLES_H",
        "#define LOSSGRAD_TILING_TABLES_H",
        "",
        "#include <cstdint>",
        "#include <limits>",
        "",
        "namespace lossgrad_tables {",
        "",
        "// lossgrad.tiling",
        f"constexpr uint64_t kTileAlign = {TILE_ALIGN};",
        f"constexpr uint64_t kMinCoreBytes = {MIN_CORE_BYTES};",
        f"constexpr uint64_t kGmAlignBytes = {GM_ALIGN_BYTES};",
        f"constexpr uint64_t kColumnMinBytes = {COLUMN_MIN_BYTES};",
        f"constexpr uint64_t kColumnWindowBytes = {COLUMN_WINDOW_BYTES};",
        f"constexpr uint64_t kColumnFlatReread = {COLUMN_FLAT_REREAD};",
        f"constexpr uint32_t kKlFoldTiles = {KL_FOLD_TILES};",
        f"constexpr uint64_t kKeyGradScalar = {KEY_GRAD_SCALAR};",
        f"constexpr uint64_t kKeyKlReduce = {KEY_KL_REDUCE};",
        f"constexpr uint64_t kKeySameShape = {KEY_SAME_SHAPE};",
        "constexpr uint64_t kKeyAbsent[] = {" + ", ".join(str(KEY_ABSENT.get(r, 0)) for r in _INPUT_ROLES) +
        "};  // by role: an absent optional input's key bit (0: the role is required)",
        f"constexpr int32_t kMaxRank = {registry.MAX_RANK};",
        "",
        "// Operand roles (index into per-role arrays): lossgrad.tiling's operand order.",
        *[f"constexpr int32_t kRole{r.capitalize()} = {i};" for r, i in ROLE_INDEX.items()],
        f"constexpr int32_t kNumInputRoles = {len(_INPUT_ROLES)};",
        f"constexpr int32_t kNumRoles = {len(ROLE_INDEX)};  // the inputs', then the output's",
        "constexpr const char* kRoleNames[kNumRoles] = {" + ", ".join(f'"{r if r != "out" else "output"}"'
                                                                      for r in ROLE_INDEX) + "};",
        "",
        "// lossgrad.tiling.ub_plan: bufMask bits",
        "constexpr uint32_t kMaskWork[kNumInputRoles] = {" +
        ", ".join(str(ub_plan.MASK_WORK[r]) for r in _INPUT_ROLES) + "};  // " + ", ".join(_INPUT_ROLES),
        f"constexpr uint32_t kMaskAcc = {ub_plan.MASK_ACC};",
        f"constexpr uint32_t kMaskConst = {ub_plan.MASK_CONST};",
        f"constexpr uint32_t kMaskResult = {ub_plan.MASK_RESULT};",
        "constexpr uint32_t kMaskRepeat[kNumInputRoles] = {" +
        ", ".join(str(ub_plan.MASK_REPEAT[r]) for r in _INPUT_ROLES) + "};  // " + ", ".join(_INPUT_ROLES),
        f"constexpr uint64_t kFixedBytes = {ub_plan.FIXED_BYTES};  // plus each enabled buffer's count * pad",
        "",
        "// One buffer of the kernels' UB plan (ub_plan.Buffer). Bytes per tile element, exactly, in units of",
        "// 1/kBytesDenominator byte: count * mult * elementBytes * scaledDiv, where elementBytes is the dtype size of",
        "// role `role` (>= 0) or `fixedBytes` (role -1: float, uint8_t); `when` is the bufMask bit (-1 always);",
        "// `pad`: bytes each instance adds beyond its tile-scaled size (UB bank placement, ub_plan.Buffer.pad)",
        f"constexpr uint64_t kBytesDenominator = {denom};",
        "struct Buffer {",
        "    uint32_t count;",
        "    uint32_t mult;",
        "    uint32_t scaledDiv;  // kBytesDenominator / div",
        "    int32_t role;",
        "    uint32_t fixedBytes;",
        "    int32_t when;",
        "    uint32_t pad;",
        "};",
        "constexpr Buffer kBuffers[] = {",
        *buffers,
        "};",
        "",
        "// ub_plan.buffers(op, grad_scalar, npu_arch, absent) and ub_plan.needs_constants(op, npu_arch) for every op,",
        "// every set of its optional inputs a call may leave out (absent: their tiling-key bits), both grad-scalar",
        f"// variants and every architecture of socs.ARCHS; npu_arch {OTHER_ARCH} rows serve other archs.",
        f"constexpr int32_t kOtherArch = {OTHER_ARCH};",
        "struct BufferPlan {",
        "    int32_t op;",
        "    bool gradScalar;",
        "    uint32_t absent;",
        "    int32_t npuArch;",
        "    bool needsConstants;",
        "    uint32_t first;",
        "    uint32_t count;",
        "};",
        "constexpr BufferPlan kBufferPlans[] = {",
        *plans,
        "};",
        "",
        "// lossgrad.registry",
        "enum Divisor : int32_t {",
        "    kDivisorNone = 0,",
        *[f"    {name} = {i},  // {d.value}" for i, (d, name) in enumerate(_DIVISOR_NAMES.items(), start=1)],
        "};",
        "enum OutputRule : int32_t {",
        *[f"    {name} = {i},  // {o.value}" for i, (o, name) in enumerate(_OUTPUT_NAMES.items())],
        "};",
        *[f"constexpr int32_t {name} = {int(r)};" for r, name in _reduction_enums("kReduction")],
        "struct OpFacts {",
        "    const char* name;",
        "    int32_t numInputs;           // kernel inputs (OpSpec.kernel_inputs)",
        "    int32_t inputRoles[kNumInputRoles];  // role of each kernel input (OpSpec.kernel_inputs order)",
        "    bool readsRole[kNumInputRoles];  // the kernel reads the input's values (TensorInput.values_read)",
        "    bool optionalRole[kNumInputRoles];  // the input may be absent (a null tensor: TensorInput.optional)",
        "    OutputRule output;           // OpSpec.output_shape",
        "    double coefficient;          // OpSpec.coefficient (numerator of the reduction coefficient)",
        "    Divisor meanDivisor;",
        "    Divisor batchmeanDivisor;",
        "    uint32_t reductions;         // bit r set: Reduction r is accepted",
        "    bool reductionValidated;     // false: other values map to none (validation.parse_reduction)",
        "    bool hasBeta;",
        "    double betaMinimum;          // inclusive; NaN is rejected",
        "    bool hasLogTarget;",
        "    bool betaZeroFlag;           // FLAG_BETA_ZERO applies (the op has a beta attribute)",
        "    bool emptyMeanRefused;       // OpSpec.empty_mean_refused: a zero divisor fails even for an empty space",
        "};",
        f"constexpr int32_t kNumOps = {len(OPS)};",
        "constexpr OpFacts kOps[kNumOps] = {  // lossgrad.registry.OPS order (= lossgrad_tiling::OpId)",
        *_ops(),
        "};",
        "",
        "// lossgrad.dtypes: the kernel dtypes by their ge::DataType / aclDataType number",
        "struct DtypeFacts {",
        "    int32_t value;",
        "    uint32_t bytes;",
        "    bool isFloat32;",
        "};",
        "constexpr DtypeFacts kDtypes[] = {",
        *[f"    {{{d.acl_enum}, {d.itemsize}u, {_bool(d is DType.FLOAT32)}}},  // {d.label}" for d in KERNEL_DTYPES],
        "};",
        "",
        "// lossgrad.socs.ARCHS: the kernel UB budget of each architecture (ub_kernel_bytes), the figure the Python",
        "// tiling sizes tiles with and the op_host adapter passes as lossgrad_tiling::Inputs::ub_bytes; and",
        "// ub_plan.blocks_only (no DataCopyPad: output in whole 32-byte blocks, contiguous core runs); and the GM",
        "// row alignment its copies stream at full rate with (gm_row_align_bytes: column pieces are cut on it).",
        "struct ArchFacts {",
        "    int32_t npuArch;",
        "    uint64_t ubKernelBytes;",
        "    bool blocksOnly;",
        "    uint64_t gmRowAlignBytes;",
        "};",
        "constexpr ArchFacts kArchs[] = {",
        *[f"    {{{a.npu_arch}, {int(a.ub_kernel_bytes.value)}u, {_bool(ub_plan.blocks_only(a.npu_arch))}, "
          f"{int(a.gm_row_align_bytes.value)}u}},  // {a.dav_macro}" for a in ARCHS.values()],
        "};",
        "// Fallback for an architecture the adapter cannot name: GetCoreMemSize(UB) minus this reserved scratch.",
        f"constexpr uint64_t kUbReservedBytes = {UB_RESERVED_BYTES};",
        "",
        "}  // namespace lossgrad_tables",
        "",
        "// Cross-checks against the hand-declared enums of lossgrad_tiling_core.h when it is included first.",
        "#ifdef LOSSGRAD_TILING_CORE_H_",
        *[f"static_assert(static_cast<int32_t>(::lossgrad_tiling::DataType::{cpp}) == {d.acl_enum}, "
          f"\"DataType vs dtypes\");" for d, cpp in _dtype_enums()],
        *[f"static_assert(static_cast<int32_t>(::lossgrad_tiling::Reduction::{cpp}) == {int(r)}, "
          f"\"Reduction vs registry\");" for r, cpp in _reduction_enums("k")],
        f"static_assert(::lossgrad_tiling::kMaxRank == {registry.MAX_RANK}, \"kMaxRank vs registry.MAX_RANK\");",
        f"static_assert(::lossgrad_tiling::kNumInputs == {len(registry.ROLES)}, \"kNumInputs vs opspec.ROLES\");",
        "#endif",
        "",
        "#endif  // LOSSGRAD_TILING_TABLES_H",
        "",
    ]
    return "\n".join(lines)


def op_enum(op: OpSpec) -> str:
    """The lossgrad_tiling::OpId enumerator of an op: k + the CamelCase of its API name."""
    return "k" + "".join(p[:1].upper() + p[1:] for p in op.name.split("_"))


def _dtype_enums() -> Iterable[tuple[DType, str]]:
    names = {DType.FLOAT32: "kFloat32", DType.FLOAT16: "kFloat16", DType.BFLOAT16: "kBFloat16"}
    return ((d, names[d]) for d in KERNEL_DTYPES)


def _reduction_enums(prefix: str) -> Iterable[tuple[Reduction, str]]:
    """lossgrad_tiling::Reduction's enumerator names (k + CamelCase of the label; batchmean -> kBatchMean)."""
    names = {Reduction.BATCHMEAN: "BatchMean"}
    return ((r, prefix + names.get(r, r.label.capitalize())) for r in Reduction)


@dataclass(frozen=True)
class CoreInputs:
    """lossgrad_tiling::Inputs as Python computes it from a KernelProblem (the same fields, the same meaning)."""

    op: int                                          # OpId: position in registry.OPS
    # (shape, dtype) in the kernel's input order; an absent optional input's entry is ignored (a 0-d placeholder)
    inputs: tuple[tuple[tuple[int, ...], DType], ...]
    output: tuple[tuple[int, ...], DType]
    # The inputs' shapes as the caller passed them (kernel input order), when `inputs` are kernel views of other
    # shapes (Inputs::logical); None when they are the tensors themselves, as in CANN's TilingFunc.
    logical: tuple[tuple[int, ...], ...] | None
    reduction: int                                   # aclnn's integer
    beta: float                                      # 1.0 for ops without a beta attribute
    log_target: bool
    core_num: int                                    # soc.cores (GetCoreNumAiv)
    ub_bytes: int                                    # soc.ub_kernel_bytes: the kernel UB budget, not physical UB
    npu_arch: int
    kl_fold_tiles: int = 0                           # 0: KL_FOLD_TILES (Inputs::kl_fold_tiles)
    absent: int = 0                                  # bit i: kernel input i is absent (Inputs::absent)


def core_inputs(problem: KernelProblem) -> CoreInputs:
    """The C++ core's Inputs for a problem (the core derives the coefficient itself, from the registry's divisor rules
    and the caller's shapes, exactly as validation does; tests/python/tiling checks it against validation's)."""
    op = problem.op
    out = problem.dtypes["out"]
    inputs = tuple((tuple(problem.shapes.get(io.role, ())), problem.dtypes.get(io.role, out))
                   for io in op.kernel_inputs)
    caller = problem.caller_shapes or problem.shapes
    logical = tuple(tuple(caller.get(io.role, ())) for io in op.kernel_inputs)
    absent = sum(1 << k for k, io in enumerate(op.kernel_inputs) if io.role not in problem.shapes)
    return CoreInputs(
        op=list(OPS.values()).index(op),
        inputs=inputs,
        output=(tuple(problem.shapes["out"]), problem.dtypes["out"]),
        logical=logical if logical != tuple(shape for shape, _ in inputs) else None,
        reduction=int(problem.reduction),
        beta=float(problem.attrs.get("beta", 1.0)),
        log_target=bool(problem.attrs.get("log_target", False)),
        core_num=problem.soc.cores,
        ub_bytes=problem.ub_budget,
        npu_arch=problem.soc.arch.npu_arch,
        kl_fold_tiles=problem.fold_tiles or 0,
        absent=absent,
    )
