"""The cost-parameter schema of the pipe-level time model (one `TimeParams` per SoC).

The replay (lossgrad.timing.replay) reads only these fields; their values live in lossgrad.timing.params
(`params_for(soc) -> TimeParams`), each a `lossgrad.socs.Fact` (value, source, confidence). A value of None means
"no public figure": the replay then uses the field's documented fallback and adds a note to `Timing.notes`.

Fields (units in the name; every figure is per SoC):

- ``clock_ghz``: AI Core clock. Converts every "cycles" figure below to time.
- ``chip_bandwidth_gbps``: GM (HBM) bandwidth of the whole chip in GB/s (1e9 bytes/s), reads and writes together.
  Cores that copy at the same time share it: when the sum of their per-core rates exceeds it, each gets a share
  proportional to its own rate.
- ``mte2_curve`` / ``mte3_curve``: per-core copy bandwidth against copy size for GM->UB (MTE2) and UB->GM (MTE3):
  a tuple of ``(bytes, gbps)`` points sorted by bytes; the replay interpolates log-linearly in bytes (linear in
  log2(bytes)) and holds the end values outside the range. "bytes" is the bytes one DataCopy/DataCopyPad moves.
- ``copy_overhead_cycles``: fixed cost of one copy instruction on its MTE pipe (issue + first-byte latency), added
  to bytes / bandwidth. Fallback 0.
- ``burst_overhead_cycles``: extra cost of each burst after the first (blockCount > 1, DataCopyPad rows).
  Fallback 0.
- ``gm_align_bytes`` and ``unaligned_gm_factor``: a copy whose GM address is not a multiple of gm_align_bytes
  runs at unaligned_gm_factor x its curve bandwidth (factor <= 1). Fallback: no penalty.
- ``vec_cycles_per_repeat``: a dict ``{class: {dtype: cycles}}``: cycles one 256-byte repeat of an instruction of
  that class costs once issued. ``class`` is a key of `VEC_CLASSES` (below; `vec_class(api)` maps a twin API name
  to it); ``dtype`` is a twin dtype name ("float", "half", "bfloat16_t", "int32_t", "int16_t", "uint8_t", ...) or
  "*" for the class default. A missing class falls back to "default" (required).
- ``vec_issue_cycles``: fixed cost of every vector instruction (decode/issue, pipeline fill), added once per call.
- ``vec_dep_latency_cycles``: latency a vector instruction pays when it depends on the result of the previous
  vector instruction (the PipeBarrier<PIPE_V> bisheng inserts between dependent vector instructions; explicit
  PipeBarrier<PIPE_V> pays it too). Fallback 0.
- ``ub_bank_rule``: "a2" models the A2/A3 UB bank-group rule of asc-devkit
  examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub (16 bank groups of 32-byte rows,
  bank_id = address bits 17:16, bank group = bits 8:5: a read-read conflict when the two sources' first-repeat bank
  groups overlap; a read-write conflict when the destination shares a bank with a source but does not start in
  the same bank and bank group). None = no bank model (other architectures).
- ``bank_rr_factor`` / ``bank_rw_factor``: multiplier of the repeat cycles of an instruction with a read-read /
  read-write conflict (devkit example: 4167/2390 and 3751/2390). Fallback 1.
- ``scalar_cycles_per_access``: S-pipe cost of one scalar UB access (LocalTensor GetValue/SetValue).
- ``scalar_gm_cycles``: S-pipe cost of one scalar GM access (GlobalTensor GetValue/SetValue, through the data cache).
- ``flag_cycles``: cost of one SetFlag/WaitFlag/barrier on its pipe. Fallback 0.
- ``scalar_issue_cycles``: S-pipe cycles the scalar unit spends issuing each instruction of another pipe (copies,
  vector ops, flags, barriers; loop control and address arithmetic folded in). Fallback 0: issue is free.
- ``launch_us``: the kernel's head: launch, scalar init before the first pipe instruction.
- ``tail_us``: the kernel's tail after the last pipe instruction ends (end-of-kernel flush, completion).
- ``notes``: where public data is thin (310P, Atlas 910): copied into every `Timing.notes` of that SoC.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..socs import Fact

# Instruction classes of the vector cost table: every twin vector API maps to one (see `vec_class`).
VEC_CLASSES: tuple[str, ...] = (
    "default",   # fallback of any class without its own figures
    "add",       # Add/Sub/Adds/Subs/Max/Min/Maxs/Mins/Abs/Relu/LeakyRelu/Neg and bitwise And/Or/Not/ShiftLeft/Right
    "mul",       # Mul/Muls/Axpy/MulAddDst/FusedMulAdd
    "div",       # Div/Reciprocal
    "sqrt",      # Sqrt/Rsqrt
    "exp_log",   # Exp/Ln/Log and other transcendental unary ops
    "cmp",       # Compare/Compares
    "select",    # Select
    "cast",      # Cast (per repeat of the wider of source/destination)
    "reduce",    # ReduceSum/Max/Min, WholeReduce*, BlockReduce*, PairReduce*
    "dup",       # Duplicate (scalar broadcast into UB)
    "brcb",      # Brcb (block broadcast)
    "copy",      # UB->UB vector Copy / DataCopy(UB->UB)
    "gather",    # Gather/GatherMask/Scatter
)

_CLASS_OF: dict[str, str] = {}
for _cls, _names in {
    "add": ("Add", "Sub", "Adds", "Subs", "Max", "Min", "Maxs", "Mins", "Abs", "Relu", "LeakyRelu", "Neg", "And", "Or",
            "Not", "ShiftLeft", "ShiftRight", "AddRelu", "SubRelu"),
    "mul": ("Mul", "Muls", "Axpy", "MulAddDst", "FusedMulAdd", "MulAddRelu", "FusedMulAddRelu", "MulCast"),
    "div": ("Div", "Reciprocal"),
    "sqrt": ("Sqrt", "Rsqrt"),
    "exp_log": ("Exp", "Ln", "Log", "Log2", "Log10", "Tanh", "Sigmoid", "Power", "Sin", "Cos", "Erf"),
    "cmp": ("Compare", "Compares", "CompareScalar", "Compare(CMPMASK)"),
    "select": ("Select",),
    "cast": ("Cast", "CastDeq"),
    "reduce": ("ReduceSum", "ReduceMax", "ReduceMin", "WholeReduceSum", "WholeReduceMax", "WholeReduceMin",
               "BlockReduceSum", "BlockReduceMax", "BlockReduceMin", "PairReduceSum", "RepeatReduceSum"),
    "dup": ("Duplicate", "CreateVecIndex"),
    "brcb": ("Brcb",),
    "copy": ("Copy", "DataCopy(UB->UB)"),
    "gather": ("Gather", "Gatherb", "GatherMask", "Scatter"),
}.items():
    for _n in _names:
        _CLASS_OF[_n] = _cls


@dataclass(frozen=True)
class Composite:
    """A high-level API the twin runs as one call but the device as an instruction sequence, once per chunk."""

    classes: tuple[str, ...]   # the sequence's vector instructions with repeats, by cost class
    bare: int                  # instructions without repeats (SetCmpMask): issue cost only
    barriers: int              # PipeBarrier<PIPE_V> in the sequence (each pays vec_dep_latency_cycles)
    source: str


COMPOSITE: dict[str, Composite] = {
    "Sign": Composite(("dup", "cmp", "cmp", "dup", "select", "dup", "select", "add"), 2, 6,
                      "asc-devkit impl/adv_api/detail/math/sign/sign_common_impl.h SignComputeImpl (not NpuArch 3510)"),
}


def vec_class(api: str) -> str:
    """The cost class of a twin vector API name ("Add", "ReduceSum", ...): "default" when none is listed."""
    return _CLASS_OF.get(api, "default")


@dataclass(frozen=True)
class TimeParams:
    """Cost parameters of one SoC (see the module docstring for each field's meaning, unit and fallback)."""

    soc: str
    clock_ghz: Fact
    chip_bandwidth_gbps: Fact
    mte2_curve: Fact                 # value: tuple[(bytes, gbps), ...]
    mte3_curve: Fact
    vec_cycles_per_repeat: Fact      # value: {class: {dtype | "*": cycles}}, must contain "default"
    vec_issue_cycles: Fact
    launch_us: Fact
    tail_us: Fact
    copy_overhead_cycles: Fact = field(default_factory=lambda: Fact(0, "fallback: not modelled", "none"))
    burst_overhead_cycles: Fact = field(default_factory=lambda: Fact(0, "fallback: not modelled", "none"))
    gm_align_bytes: Fact = field(default_factory=lambda: Fact(32, "fallback: DataCopy's 32-byte unit", "low"))
    unaligned_gm_factor: Fact = field(default_factory=lambda: Fact(1.0, "fallback: no penalty", "none"))
    vec_dep_latency_cycles: Fact = field(default_factory=lambda: Fact(0, "fallback: not modelled", "none"))
    ub_bank_rule: Fact = field(default_factory=lambda: Fact(None, "fallback: no bank model", "none"))
    bank_rr_factor: Fact = field(default_factory=lambda: Fact(1.0, "fallback: not modelled", "none"))
    bank_rw_factor: Fact = field(default_factory=lambda: Fact(1.0, "fallback: not modelled", "none"))
    scalar_cycles_per_access: Fact = field(default_factory=lambda: Fact(1, "fallback: one cycle", "none"))
    scalar_gm_cycles: Fact = field(default_factory=lambda: Fact(1, "fallback: one cycle (data cache hit)", "none"))
    flag_cycles: Fact = field(default_factory=lambda: Fact(0, "fallback: not modelled", "none"))
    scalar_issue_cycles: Fact = field(default_factory=lambda: Fact(0, "fallback: not modelled", "none"))
    notes: tuple[str, ...] = ()

    def fields(self) -> dict[str, Fact]:
        """Every Fact of the record by field name (for docs and `lossgrad socs`-style listings)."""
        return {k: v for k, v in self.__dict__.items() if isinstance(v, Fact)}

    def vec_cycles(self, cls: str, dtype: str) -> float:
        """Cycles of one repeat of class `cls` on `dtype` (class default "*", then the "default" class)."""
        table: dict[str, Any] = self.vec_cycles_per_repeat.value
        row = table.get(cls) or table["default"]
        if dtype in row:
            return float(row[dtype])
        if "*" in row:
            return float(row["*"])
        d = table["default"]
        return float(d.get(dtype, d["*"]))

    def low_confidence(self) -> list[str]:
        """Names of the fields whose figure has no public source (confidence "none")."""
        return [k for k, v in self.fields().items() if v.confidence == "none"]
