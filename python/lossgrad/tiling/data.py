"""The tiling-data struct, declared once.

`FIELDS` is the only declaration of `LossGradTilingData`: the C header shared by the kernels and the CANN host side
is rendered from it (`c_header()`), and the Python packer (`pack`/`unpack`) reads it. Fields are ordered widest first
so the C layout has no padding and equals the little-endian `struct` format below.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Mapping

from ..registry import INPUT_ROLES
from .ub_plan import MASK_NAMES, MASK_REPEAT, MASK_WORK

MAX_DIMS = 8
NUM_INPUTS = len(INPUT_ROLES)  # per-input bits are indexed by the role's position in INPUT_ROLES
STRIDE_ROLES = (*INPUT_ROLES, "out")  # the operands `present` describes, by position (the output follows the inputs)
assert len(STRIDE_ROLES) <= 8, "present: 8 bits per operand in 64"


@dataclass(frozen=True)
class Field:
    name: str
    ctype: str   # uint64_t | uint32_t | float
    count: int   # 1 for scalars, N for arrays
    doc: str


_FMT = {"uint64_t": "Q", "uint32_t": "I", "float": "f"}

FIELDS: tuple[Field, ...] = (
    Field("dims", "uint64_t", MAX_DIMS, "iteration dims in loop order; dims[rank-1] is the inner (column) dim"),
    Field("present", "uint64_t", 1, f"bit 8 * operand + d: the operand has loop dim d (else it is broadcast, or for "
          f"the output reduced, along it), operands by position: {', '.join(STRIDE_ROLES)}"),
    Field("splitTotal", "uint64_t", 1, "elements of the split space (output elements; columns in column mode)"),
    Field("baseUnits", "uint64_t", 1, "balance units every core gets"),
    Field("extraUnits", "uint64_t", 1, "the first extraUnits cores get one unit more"),
    Field("rank", "uint32_t", 1, "number of loop dims (>= 1)"),
    Field("outRank", "uint32_t", 1, "KL reduction: leading loop dims where the output is present"),
    Field("rowDim", "uint32_t", 1, "loop dim a tile's rows advance along (rank >= 2)"),
    Field("memDims", "uint32_t", 1, "4 bits per memory position p (0 outermost): the loop dim at p; with `present` "
                                    "and `dims` it gives every operand's element strides (LoopStrides)"),
    Field("blockDim", "uint32_t", 1, "cores launched"),
    Field("splitMode", "uint32_t", 1, "0 flat, 1 column, 2 KL reduction"),
    Field("unitElems", "uint32_t", 1, "elements per balance unit (a 32-byte block of the narrowest dtype, or 1)"),
    Field("tileLen", "uint32_t", 1, "elements per tile buffer (multiple of 256)"),
    Field("padElems", "uint32_t", 1, "row pitch unit in elements (32 bytes of the narrowest dtype)"),
    Field("alignElems", "uint32_t", 1, "flat mode: first tile of a core ends on this element multiple (512 B)"),
    Field("flags", "uint32_t", 1, "bit0 log_target, bit1 beta == 0"),
    Field("bufMask", "uint32_t", 1, "buffers of the plan to allocate (tiling/ub_plan.py MASK_* bits)"),
    Field("modes", "uint32_t", 1,
          f"2 bits per input, by role ({', '.join(INPUT_ROLES)}): 0 stream, 1 row, 2 col, 3 scalar"),
    Field("segments", "uint32_t", 1, "KL reduction: cores sharing each output piece's reduced range (two-stage "
                                     "sum through the workspace when > 1)"),
    Field("foldTiles", "uint32_t", 1, "KL reduction: tiles summed lane-wise before a fold, and folds summed before "
                                      "they join the running sums (tiling KL_FOLD_TILES)"),
    Field("coef", "float", 1, "reduction coefficient (float64 value rounded once)"),
    Field("beta", "float", 1, "SmoothL1 beta"),
    Field("invBeta", "float", 1, "1/(beta*betaScale) in float64, beta being the float32 beta"),
    Field("betaScale", "float", 1, "1, or 2^64 when 1/beta would overflow float32"),
    Field("pad", "uint32_t", 1, "always 0: keeps the size a multiple of the struct's 8-byte alignment"),
)

FLAG_LOG_TARGET = 1
FLAG_BETA_ZERO = 2

SPLIT_FLAT = 0
SPLIT_COLUMN = 1
SPLIT_KL_REDUCE = 2

MODES = ("stream", "row", "col", "scalar")  # operand modes, 2 bits each in `modes`

# DMA parameter limits the tiling keeps every copy within and the kernel asserts (docs/tiling.md "DMA limits").
# blockCount of DataCopyPad (DataCopyExtParams) and of the strided DataCopy (DataCopyParams) is a uint16_t limited to
# [0, 4095] on every architecture (asc-devkit docs/zh DataCopyPad（GMToUB/UBToGM非对齐数据搬运）.md, DataCopy).
DMA_MAX_BLOCK_COUNT = 4095
# On Ascend 950 the UB-side stride of DataCopyPad (dstStride GM->UB, srcStride UB->GM) is an int64_t limited to
# [0, 65535] 32-byte blocks (same pages, 约束说明); A2/A3 take up to 2^32 - 1.
DMA_MAX_UB_STRIDE_BLOCKS_950 = 65535

assert all(MASK_WORK[r] == MASK_WORK[INPUT_ROLES[0]] + i and MASK_REPEAT[r] == MASK_REPEAT[INPUT_ROLES[0]] + i
           for i, r in enumerate(INPUT_ROLES)), "an input's bufMask bits follow its role"

STRUCT_NAME = "LossGradTilingData"
_FORMAT = "<" + "".join(f"{f.count}{_FMT[f.ctype]}" for f in FIELDS)
SIZE = struct.calcsize(_FORMAT)
assert SIZE % 8 == 0


def pack(values: Mapping[str, Any]) -> bytes:
    """Pack a mapping field -> value (arrays may be shorter than their length; the rest is zero)."""
    unknown = set(values) - {f.name for f in FIELDS}
    if unknown:
        raise KeyError(f"not tiling fields: {sorted(unknown)}")
    flat: list[Any] = []
    for f in FIELDS:
        v = values.get(f.name, [0] * f.count if f.count > 1 else 0)
        if f.count > 1:
            v = list(v)
            if len(v) > f.count:
                raise ValueError(f"{f.name}: {len(v)} values for {f.count} slots")
            flat.extend(v + [0] * (f.count - len(v)))
        else:
            flat.append(v)
    return struct.pack(_FORMAT, *flat)


def unpack(data: bytes) -> dict[str, Any]:
    vals = list(struct.unpack(_FORMAT, data[:SIZE]))
    out: dict[str, Any] = {}
    for f in FIELDS:
        if f.count > 1:
            out[f.name], vals = tuple(vals[:f.count]), vals[f.count:]
        else:
            out[f.name], vals = vals[0], vals[1:]
    return out


def loop_strides(fields: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    """Every operand's element strides per loop dim (0 where it lacks the dim), from `present`, `memDims` and
    `dims`: each operand is a compact row-major buffer of the loop dims it has, taken in memory order. The kernels'
    LoopStrides (op_kernel/tile_walk.h) reads the same fields; this is the Python reading, for tests and tools."""
    rank = fields["rank"]
    out: dict[str, tuple[int, ...]] = {}
    for i, role in enumerate(STRIDE_ROLES):
        stride = [0] * rank
        acc = 1
        for p in reversed(range(rank)):
            d = fields["memDims"] >> (4 * p) & 15
            if fields["present"] >> (8 * i + d) & 1:
                stride[d] = acc
                acc *= fields["dims"][d]
        out[role] = tuple(stride)
    return out


def c_header() -> str:
    """The shared header, for the kernels (twin and device) and the CANN host side."""
    lines = ["// Generated by lossgrad.tiling.data from its FIELDS declaration; do not edit.",
             "#ifndef LOSSGRAD_TILING_DATA_H", "#define LOSSGRAD_TILING_DATA_H", "", "#include <cstdint>", "",
             f"constexpr uint32_t LOSSGRAD_MAX_DIMS = {MAX_DIMS};",
             f"constexpr uint32_t LOSSGRAD_NUM_INPUTS = {NUM_INPUTS};  // roles: {', '.join(INPUT_ROLES)}",
             *[f"constexpr uint32_t LOSSGRAD_ROLE_{r.upper()} = {i};" for i, r in enumerate(STRIDE_ROLES)],
             f"constexpr uint32_t LOSSGRAD_FLAG_LOG_TARGET = {FLAG_LOG_TARGET};",
             f"constexpr uint32_t LOSSGRAD_FLAG_BETA_ZERO = {FLAG_BETA_ZERO};",
             f"constexpr uint32_t LOSSGRAD_SPLIT_FLAT = {SPLIT_FLAT};",
             f"constexpr uint32_t LOSSGRAD_SPLIT_COLUMN = {SPLIT_COLUMN};",
             f"constexpr uint32_t LOSSGRAD_SPLIT_KL_REDUCE = {SPLIT_KL_REDUCE};",
             f"constexpr uint32_t LOSSGRAD_DMA_MAX_BLOCK_COUNT = {DMA_MAX_BLOCK_COUNT};",
             f"constexpr uint32_t LOSSGRAD_DMA_MAX_UB_STRIDE_BLOCKS_950 = {DMA_MAX_UB_STRIDE_BLOCKS_950};",
             *[f"constexpr uint32_t LOSSGRAD_MODE_{m.upper()} = {i};" for i, m in enumerate(MODES)],
             *[f"constexpr uint32_t LOSSGRAD_BUF_{name} = {bit};  // bufMask bit" for bit, name in
               sorted(MASK_NAMES.items())],
             "// An input's work and repeat bits: the first role's bit plus its role (ub_plan keeps them consecutive).",
             f"constexpr uint32_t LOSSGRAD_BUF_WORK_FIRST = {MASK_WORK[INPUT_ROLES[0]]};",
             f"constexpr uint32_t LOSSGRAD_BUF_REPEAT_FIRST = {MASK_REPEAT[INPUT_ROLES[0]]};", "",
             f"struct {STRUCT_NAME} {{"]
    for f in FIELDS:
        arr = f"[{f.count}]" if f.count > 1 else ""
        lines.append(f"    {f.ctype} {f.name}{arr};  // {f.doc}")
    lines += ["};", "", f"static_assert(sizeof({STRUCT_NAME}) == {SIZE}, \"tiling layout\");", "",
              "#endif  // LOSSGRAD_TILING_DATA_H", ""]
    return "\n".join(lines)
