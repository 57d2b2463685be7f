"""The cost-parameter schema of the pipe-level time model (one `TimeParams` per SoC).

The replay (lossgrad.timing.replay) reads only these fields; their values live in lossgrad.timing.params
(`params_for(soc) -> TimeParams`), each a `lossgrad.socs.Fact` (value, source, confidence). A value of None means
"no public figure": the replay then uses the field's documented fallback and adds a note to `Timing.notes`.
docs/timing.md "Model" explains the structure; here is what each field means (units in the name, all per SoC).

Launch
- ``clock_ghz``: AI Core clock; converts every "cycles" figure to time.
- ``launch_us``: from the task's start to the first core's start (scheduling to the accelerator).
- ``core_skew_us``: core k (the k-th block of a wave) starts k x this after the first.
- ``tail_us``: from the last core's last completion to the task's end (completion response).
- ``core_init_cycles``: scalar work on every core before its first instruction (kernel entry, argument and tiling
  reads, pipe initialisation): S-pipe busy, inside the core's time.

Copies (one field per pipe: ``mte2_*`` GM -> UB, ``mte3_*`` UB -> GM). A copy of s bytes keeps its pipe busy for
``max(issue + s / link, s / core)`` (then the next copy on that pipe may start) and its data is visible
``latency + issue + s / link`` after it started if that is later (what a flag, barrier or the kernel's end waits
for). Those are the figures of data held in L2; data from HBM adds ``hbm_latency_ns`` to the latency and caps the
per-core rate at ``hbm_core_gbps``.
- ``mte2_latency_ns`` / ``mte3_latency_ns``: issue to data visible (L2-resident data).
- ``mte2_issue_cycles`` / ``mte3_issue_cycles``: the pipe's fixed cost per copy.
- ``mte2_link_gbps`` / ``mte3_link_gbps``: the rate one copy's bursts stream at.
- ``mte2_core_gbps`` / ``mte3_core_gbps``: the most one core sustains (requests in flight / latency).
- ``hbm_latency_ns``, ``hbm_core_gbps``: the extra latency and the per-core cap of a copy that goes to HBM.
- ``burst_overhead_cycles``: extra pipe cost of each burst after the first (blockCount > 1). Fallback 0.
- ``gm_align_bytes`` and ``unaligned_gm_factor``: bursts whose GM offset is not a multiple of gm_align_bytes move at
  unaligned_gm_factor x the copy's rate. Fallback: no penalty.

Chip memory
- ``hbm_read_gbps`` / ``hbm_write_gbps``: what all cores together read from / write to HBM (1e9 B/s). Reads and
  writes share the channel: a write byte costs hbm_read / hbm_write read bytes of it.
- ``l2_gbps``: what all cores together move to and from L2 (hits and absorbed writes).
- ``l2_bytes``: L2 capacity. Reads of data in L2 hit; written data stays in L2 (absorbed) unless evicted before
  the kernel ends (then it is written to HBM); GlobalTensor::SetL2CacheHint(CACHE_MODE_DISABLE) bypasses it.

Vector
- ``vec_cycles_per_repeat``: ``{class: {dtype: cycles}}``, one 256-byte repeat once issued; ``class`` is a key of
  `VEC_CLASSES` (`vec_class(api)` maps a twin API name to it), ``dtype`` a twin dtype name or "*" (class default).
  A missing class falls back to "default" (required).
- ``vec_repeat_overhead_cycles``: cycles added to every repeat (950: the loads and stores of the Memory API around
  each Reg instruction, which its figures leave out). Fallback 0.
- ``vec_issue_cycles``: fixed cost of every vector instruction.
- ``vec_dep_latency_cycles``: latency a vector instruction pays after the vector instruction it depends on (the
  PipeBarrier<PIPE_V> bisheng inserts), and a V signal after a vector instruction. Fallback 0.
- ``ub_bank_rule``, ``bank_rr_factor``, ``bank_rw_factor``: "a2" = the A2/A3 UB bank-group rule of asc-devkit
  examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub; a conflict multiplies the repeat
  cycles by the factor. None = no bank model.

Synchronisation and scalar work
- ``flag_cycles``: one SetFlag/WaitFlag (explicit, auto-sync or a TQue's implicit flag) on its pipe.
- ``barrier_cycles``: one PipeBarrier on its pipe (on MTE pipes it also waits for the earlier copies' data).
- ``scalar_issue_cycles``: scalar cycles per instruction issued to another pipe (its operands, loop control).
- ``scalar_cycles_per_access``: one LocalTensor GetValue/SetValue (with the scalar arithmetic around it).
- ``scalar_gm_cycles``: one GlobalTensor GetValue/SetValue (through the data cache).
- ``notes``: where public data is thin: copied into every `Timing.notes` of that SoC.
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


def _none(fallback: Any, what: str = "not modelled") -> Any:
    return field(default_factory=lambda: Fact(fallback, f"fallback: {what}", "none"))


@dataclass(frozen=True)
class TimeParams:
    """Cost parameters of one SoC (see the module docstring for each field's meaning, unit and fallback)."""

    soc: str
    clock_ghz: Fact
    # launch
    launch_us: Fact
    tail_us: Fact
    core_skew_us: Fact = _none(0.0)
    core_init_cycles: Fact = _none(0.0)
    # copies
    mte2_latency_ns: Fact = _none(0.0)
    mte3_latency_ns: Fact = _none(0.0)
    mte2_issue_cycles: Fact = _none(0.0)
    mte3_issue_cycles: Fact = _none(0.0)
    mte2_link_gbps: Fact = _none(100.0, "100 GB/s")
    mte3_link_gbps: Fact = _none(100.0, "100 GB/s")
    mte2_core_gbps: Fact = _none(100.0, "100 GB/s")
    mte3_core_gbps: Fact = _none(100.0, "100 GB/s")
    hbm_latency_ns: Fact = _none(0.0)
    hbm_core_gbps: Fact = _none(None, "no separate cap")
    burst_overhead_cycles: Fact = _none(0.0)
    gm_align_bytes: Fact = field(default_factory=lambda: Fact(32, "fallback: DataCopy's 32-byte unit", "low"))
    unaligned_gm_factor: Fact = _none(1.0, "no penalty")
    # chip memory
    hbm_read_gbps: Fact = _none(1000.0, "1 TB/s")
    hbm_write_gbps: Fact = _none(1000.0, "1 TB/s")
    l2_gbps: Fact = _none(None, "no L2 (every copy goes to HBM)")
    l2_bytes: Fact = _none(0, "no L2")
    # vector
    vec_cycles_per_repeat: Fact = field(default_factory=lambda: Fact({"default": {"*": 1.0}}, "fallback", "none"))
    vec_repeat_overhead_cycles: Fact = _none(0.0)
    vec_issue_cycles: Fact = _none(0.0)
    vec_dep_latency_cycles: Fact = _none(0.0)
    ub_bank_rule: Fact = _none(None, "no bank model")
    bank_rr_factor: Fact = _none(1.0)
    bank_rw_factor: Fact = _none(1.0)
    # synchronisation and scalar work
    flag_cycles: Fact = _none(0.0)
    barrier_cycles: Fact = _none(0.0)
    scalar_issue_cycles: Fact = _none(0.0)
    scalar_cycles_per_access: Fact = _none(1.0, "one cycle")
    scalar_gm_cycles: Fact = _none(1.0, "one cycle (data cache hit)")
    notes: tuple[str, ...] = ()

    def fields(self) -> dict[str, Fact]:
        """Every Fact of the record by field name (for docs and `lossgrad socs`-style listings)."""
        return {k: v for k, v in self.__dict__.items() if isinstance(v, Fact)}

    def with_values(self, **values: Any) -> "TimeParams":
        """A copy with some fields replaced by bare values (source "trial value"): for fits and what-ifs."""
        import dataclasses
        return dataclasses.replace(self, **{k: Fact(v, "trial value", "none") for k, v in values.items()})

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
