"""The vocabulary of an operator's declaration: what one op folder (lossgrad/ops/<name>/) states about its op.

The op folders build an `OpSpec` (aclnn's facts), the compute body's scratch `Buffer`s, and point at their golden
formulas, torch facts and test facts; lossgrad.registry discovers them. This module imports nothing of the package
but dtypes and socs, so op folders import it without cycles. Facts are cited to
`../shared/reference/ops_semantics.md` (the spec) by section.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

from . import dtypes as dt
from .dtypes import KERNEL_DTYPES, DType
from .socs import ARCHS


class Reduction(enum.IntEnum):
    """aclnn's integer encoding (ops_semantics §0). The kernel attribute is the lower-case string."""

    NONE = 0
    MEAN = 1
    SUM = 2
    BATCHMEAN = 3

    @property
    def label(self) -> str:
        return self.name.lower()


class Divisor(enum.Enum):
    """Which element count N the mean (or batchmean) coefficient divides by."""

    OUTPUT_NUMEL = "numel of broadcast(gradOutput, self, target), the output"
    SELF_NUMEL = "numel of self as passed (not broadcast); 0-d counts as 1"
    SELF_TARGET_NUMEL = "numel of broadcast(self, target)"
    SELF_TARGET_DIM0 = "dim 0 of broadcast(self, target); 0-d counts as [1]"


class Promotion(enum.Enum):
    """How the op_api checks input dtypes and which dtype it computes in."""

    PROMOTE_ALL = "promote(promote(gradOutput, self), target) must exist, be supported and cast to the output"
    SAME_AS_SELF = "gradOutput and target must have self's dtype (no promotion)"
    EACH_SUPPORTED = "each of gradOutput, self, target and out must be supported; self must cast to out"


class OutputShape(enum.Enum):
    """The output's shape, and so what the kernel does at the output: BROADCAST_ALL and SELF_ABSORBING write the
    broadcast of the inputs element by element; SELF and TARGET sum over the axes along which the other one
    broadcasts it (KL onto self, KlDivTarget onto target: OpSpec.reduced_onto)."""

    BROADCAST_ALL = "broadcast(gradOutput, self, target)"
    SELF = "self.shape (gradOutput must broadcast into broadcast(self, target))"
    TARGET = "target.shape (gradOutput must broadcast into broadcast(self, target))"
    SELF_ABSORBING = "self.shape; every other input broadcasts into self without enlarging it"


class EmptyRule(enum.Enum):
    ANY_INPUT = "any empty input: success, no kernel launch"
    SELF_ONLY = "only an empty self returns early; an empty target broadcast sums to zeros"
    SELF_SKIPS_SHAPES = ("an empty self: success, no kernel launch, and the shape checks are skipped; another empty "
                         "input cannot broadcast into a non-empty self (161002)")


class Check(enum.Enum):
    """aclnn validation steps; each op lists them in its op_api's order, the first failing one reports."""

    NULL = "null inputs -> 161001"
    REDUCTION = "reduction must be one of the op's values"
    PROMOTE = "promoted dtype must exist, be supported, and cast to the output dtype"
    SAME_DTYPE = "gradOutput and target must have self's dtype"
    EACH_SUPPORTED = "every tensor's dtype must be supported"
    SELF_OUT_SUPPORTED = "self's and the output's dtypes must be supported; self must cast to the output"
    SELF_CASTS_TO_OUT = "self's dtype must cast to the output dtype"
    RANK = "rank <= 8"
    BETA = "beta >= 0 and not NaN"
    BROADCAST_ALL = "gradOutput, self and target broadcast, and the result equals the output shape"
    KL_SHAPES = ("self/target broadcast, gradOutput broadcasts into that shape, output shape == the shape of the "
                 "input the op sums onto (OpSpec.reduced_onto: self for KL, target for KlDivTarget)")
    INTO_SELF = ("output shape == self.shape, then target, the optional inputs and gradOutput each broadcast into "
                 "self without enlarging it; skipped when self is empty (EmptyRule.SELF_SKIPS_SHAPES)")
    KERNEL_DTYPES = "every tensor the kernel reads or writes has a dtype the NpuArch can move and cast (arch_dtypes)"
    OUT_TARGET_DTYPE = "the output dtype must equal target's"
    TARGET_IS_SELF = ("target's shape must equal self's (no broadcasting of target); skipped when self is empty "
                      "(EmptyRule.SELF_SKIPS_SHAPES)")


@dataclass(frozen=True)
class AttrSpec:
    """A scalar attribute after `reduction` in the aclnn signature."""

    name: str            # Python keyword
    aclnn_name: str      # aclnn parameter name
    aclnn_type: str      # C type in the aclnn signature
    kernel_attr: str     # CANN kernel proto attribute name
    kernel_type: str     # OpDef attr type: "Float" | "Bool"
    default: Any
    minimum: float | None = None  # inclusive lower bound, NaN rejected (beta)


@dataclass(frozen=True)
class L0Step:
    """One l0 launch of an aclnn op_api composition that has no kernel of its own (KlDivTarget on A2/A3): the l0 op,
    the name of its result, what it reads (input roles, after the op_api's Casts and BroadcastTos, or earlier
    results), and the condition it runs under: None always, "scaled" only for a reduction coefficient other than 1,
    or (attribute, value)."""
    op: str
    result: str
    reads: tuple[str, ...]
    when: "str | tuple[str, bool] | None" = None


@dataclass(frozen=True)
class KernelIO:
    """One kernel input: CANN proto name and which API argument feeds it."""

    proto: str
    role: str  # "grad" | "self" | "target"


@dataclass(frozen=True)
class Role:
    """A kind of tensor input the kernel machinery serves. An op's TensorInput names its role; everything the
    kernels, the tiling and the UB plan need per input is stated here once, per role."""

    name: str          # the role ("grad"): golden formulas, tiling and kernels know an input by it
    param: str         # the Python parameter of the public functions (grad_output)
    type_param: str    # the kernel class's element type parameter (TG)
    lanes: str         # the input's float lanes in the tile loop and in Compute(r, <lanes in role order>, n)
    phase: int         # UB bank phase of its slice and work buffer (tiling.ub_plan): apart from its partners
    work_bit: int      # bufMask bit of its float32 work/resident buffer
    repeat_bit: int    # bufMask bit: keep its streamed tiles resident (the next tiles repeat them)
    required: bool     # every op has it; the others an op declares when its aclnn API has them


# In role order: the tiling's per-input arrays (strides, modes) are indexed by a role's position. Phases: self and
# target apart (Sub/Compare(self, target)); grad and the weights apart from the result (Mul(r, r, grad)).
ROLES: tuple[Role, ...] = (
    Role("grad", "grad_output", "TG", "g", phase=1, work_bit=0, repeat_bit=9, required=True),
    Role("self", "self", "TS", "s", phase=1, work_bit=1, repeat_bit=10, required=True),
    Role("target", "target", "TT", "x", phase=0, work_bit=2, repeat_bit=11, required=True),
    Role("weight", "weight", "TW", "w", phase=1, work_bit=3, repeat_bit=12, required=False),
    Role("pos_weight", "pos_weight", "TP", "p", phase=1, work_bit=4, repeat_bit=13, required=False),
)
ROLE = {r.name: r for r in ROLES}
REQUIRED_ROLES = tuple(r.name for r in ROLES if r.required)


@dataclass(frozen=True)
class TensorInput:
    """One tensor input of the op, as its aclnn API takes it (OpSpec.inputs lists them in aclnn's argument order).
    Everything the layers need to know about an input is stated here once: its aclnn name, the role the kernel and
    the golden know it by, its kernel proto name and position, and what aclnn's op_api does with it."""

    aclnn: str                       # aclnn parameter name ("gradOutput")
    role: str                        # "grad" | "self" | "target": the name the kernel body, tiling and golden use
    proto: str                       # the kernel's (OpDef) input name
    kernel_index: int                # position among the kernel's inputs (the OpDef Input() order)
    rank_checked: bool = True        # aclnn's rank <= 8 check covers it
    aclnn_broadcast: bool = False    # aclnn's op_api materialises it with BroadcastTo before its kernel
    values_read: bool = True         # the kernel reads its values (False: only its shape matters, KL's self)
    optional: bool = False           # aclnn accepts a null tensor here
    absent: str = ""                 # what an absent optional input means (e.g. "a factor of 1: skipped")
    aclnn_fills: bool = False        # aclnn's op_api materialises an absent one as OnesLike(self) for its kernel


MAX_RANK = 8

FLOAT_SUPPORT_BY_ARCH: dict[int, tuple[DType, ...]] = {
    # GetDtypeSupportListV2 (ops_semantics §0): bf16 on DAV_2201 and regbase (3510), else f32/f16 only.
    2201: (DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16),
    3510: (DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16),
    2002: (DType.FLOAT32, DType.FLOAT16),
    1001: (DType.FLOAT32, DType.FLOAT16),
}

ALL_LINES = ("950", "A3", "A2", "310P", "910")


def arch_dtypes(npu_arch: int) -> tuple[DType, ...]:
    """Element types a kernel can read, write and cast to and from float32 (its compute type) on the architecture:
    float32 and float16 everywhere, bfloat16 only where the part moves and casts it (socs.Arch.bf16_io; on 310P
    and Atlas 910 neither DataCopy nor Cast takes bfloat16_t)."""
    return KERNEL_DTYPES if ARCHS[npu_arch].bf16_io else (DType.FLOAT32, DType.FLOAT16)


def promoted_dtype(dtypes: Mapping[str, DType]) -> DType:
    """promote(promote(gradOutput, self), target), then each further input the call has, in role order: what the
    op_api casts non-float inputs to."""
    present = [dtypes[r.name] for r in ROLES if r.name in dtypes]
    acc = present[0]
    for d in present[1:]:
        acc = dt.promote(acc, d)
    return acc


def kernel_dtypes(dtypes: Mapping[str, DType], out: DType) -> dict[str, DType]:
    """The element type of each kernel tensor (each input the call has, by role, and out). The op_api casts a
    non-float input (only L1 accepts them) to the promoted dtype before the kernel; float inputs and the output reach
    the kernel as they are, and the kernel casts each one to or from float32 itself."""
    promoted = promoted_dtype({r: d for r, d in dtypes.items() if r in ROLE})
    found = {r: (d if d.is_float else promoted) for r, d in dtypes.items() if r in ROLE}
    found["out"] = out
    return found


@dataclass(frozen=True)
class OpSpec:
    name: str                           # Python API name (lossgrad.<name>, lossgrad.golden.<name>)
    aclnn: str                          # aclnn API name
    inputs: tuple[TensorInput, ...]     # the tensor inputs, in aclnn's argument order
    output_param: str                   # the output tensor's aclnn name
    out_rank_checked: bool              # aclnn's rank check covers the output too
    attrs: tuple[AttrSpec, ...]         # scalar attributes after `reduction`
    reductions: tuple[Reduction, ...]   # values the op accepts
    reduction_validated: bool           # False: aclnn maps out-of-range values to "none" (KL)
    coefficient: float                  # numerator of the reduction coefficient (2 for MSE)
    mean_divisor: Divisor
    batchmean_divisor: Divisor | None
    promotion: Promotion
    output_shape: OutputShape
    default_out_dtype: str              # "promoted" | "self" | "target": the out dtype when the call gives none
    empty_rule: EmptyRule
    checks: tuple[Check, ...]           # aclnn's validation order
    dtype_support: dict[int, tuple[DType, ...]]  # dtypes aclnn's validation accepts, by NpuArch
    docs_support: dict[str, bool]       # product lines the aclnn doc lists
    ours_support: dict[str, bool]       # product lines this project ships kernels for
    cann_op_type: str                   # CANN's built-in kernel op type (facts, docs)
    custom_op_type: str                 # our custom-op type (OpDef class, aclnn<custom_op_type> API)
    kernel_output: str                  # kernel output proto name
    aclnn_compute: str                  # dtype aclnn's op_api casts the inputs to: "promoted" | "self" |
                                        # "float32_unless_all_float16" | "float32"
    formula: str
    sources: tuple[str, ...] = field(default_factory=tuple)
    order: int = 1000                   # position among the ops (registry.OPS, the C++ OpId, tables), then by name
    aclnn_l0_chain: tuple[L0Step, ...] = ()  # the op_api's l0 launches where it has no kernel (lossgrad bench)
    aclnn_l0_archs: tuple[int, ...] = ()      # the NpuArchs whose op_api runs that chain
    empty_mean_refused: bool = True     # a mean over an empty broadcast space with a non-empty self: aclnn's kernel
                                        # tiling refuses the zero divisor (KL); False: its l0 composition runs on the
                                        # empty tensors and succeeds (KlDivTarget on A2/A3)
    template: str = ""                  # the short name: the op's folder under lossgrad/ops (set by discovery)

    @property
    def aclnn_params(self) -> tuple[str, ...]:
        """aclnn's GetWorkspaceSize parameters before workspaceSize/executor: the tensors, reduction, the
        attributes, the output."""
        return (tuple(i.aclnn for i in self.inputs) + ("reduction",) + tuple(a.aclnn_name for a in self.attrs)
                + (self.output_param,))

    @property
    def roles(self) -> tuple[str, ...]:
        """The op's input roles in role order (opspec.ROLES): the order of the golden formulas' arguments and of the
        kernel class's inputs."""
        declared = {i.role for i in self.inputs}
        return tuple(r.name for r in ROLES if r.name in declared)

    @property
    def absent_optional(self) -> tuple[None, ...]:
        """None for each optional input: what a call that leaves them all out passes after target and before the
        reduction (aclnn's order puts the optional tensors there)."""
        return tuple(None for i in self.inputs if i.optional)

    def absent_as_self(self, by_role: Mapping[str, Any]) -> dict[str, Any]:
        """`by_role` (dtypes by role) with self's entry for every input of the op it lacks: the type parameter of an
        absent optional input is self's, so one kernel serves the variants with and without it, and the package's
        OpDef columns give it self's dtype."""
        return {**{r: by_role["self"] for r in self.roles}, **by_role}

    @property
    def kernel_inputs(self) -> tuple[KernelIO, ...]:
        """The kernel's inputs in its parameter (OpDef Input()) order."""
        return tuple(KernelIO(i.proto, i.role) for i in sorted(self.inputs, key=lambda i: i.kernel_index))

    @property
    def rank_checked(self) -> tuple[str, ...]:
        """The aclnn names of the tensors aclnn's rank check covers."""
        return tuple(i.aclnn for i in self.inputs if i.rank_checked) + ((self.output_param,) if self.out_rank_checked
                                                                         else ())

    @property
    def aclnn_broadcasts(self) -> tuple[str, ...]:
        """The roles of the inputs aclnn's op_api materialises with BroadcastTo before its kernel."""
        return tuple(i.role for i in self.inputs if i.aclnn_broadcast)

    @property
    def reduced_onto(self) -> str | None:
        """The role whose shape the output has when the op sums over broadcast axes (KL: self, KlDivTarget: target),
        None for the ops that write the broadcast element by element."""
        return {OutputShape.SELF: "self", OutputShape.TARGET: "target"}.get(self.output_shape)

    @property
    def shaped_like(self) -> str | None:
        """The input whose shape the output has (KL and the SELF_ABSORBING ops: self, KlDivTarget: target), None
        where it is the broadcast of all inputs."""
        return None if self.output_shape is OutputShape.BROADCAST_ALL else self.reduced_onto or "self"

    @property
    def kernel_reads_self(self) -> bool:
        """Whether the kernel reads self's values (KL reads only its shape)."""
        return self.input("self").values_read

    def input(self, role: str) -> TensorInput:
        for i in self.inputs:
            if i.role == role:
                return i
        raise KeyError(f"{self.name} has no {role!r} input (its inputs: {[i.role for i in self.inputs]})")

    @property
    def entry_name(self) -> str:
        """snake_case kernel entry of the custom op type (msOpGen convention: AddCustom -> add_custom)."""
        out = []
        for i, ch in enumerate(self.custom_op_type):
            if ch.isupper() and i and (not self.custom_op_type[i - 1].isupper()
                                       or (i + 1 < len(self.custom_op_type)
                                           and self.custom_op_type[i + 1].islower())):
                out.append("_")
            out.append(ch.lower())
        return "".join(out)

    def attr(self, name: str) -> AttrSpec:
        for a in self.attrs:
            if a.name == name:
                return a
        raise KeyError(name)

    def supported_dtypes(self, npu_arch: int) -> tuple[DType, ...]:
        return self.dtype_support[npu_arch]

    def kernel_combos(self, npu_arch: int) -> tuple[tuple[DType, ...], ...]:
        """The dtype mixes the custom-op package registers as OpDef columns (kernel input order, then the output):
        one fused kernel binary each per compute unit. Every float mix aclnn accepts is fused by the kernels (twin,
        launch builds); the package registers those worth a binary of their own, for each supported D, O, G:
          (D, D, D -> D)             the same-dtype columns;
          (D, D, D -> O), O != D     an output dtype of its own (e.g. float32 gradients of float16 inputs): every
                                     op accepts it, and it is the only kind of mix MSE (SAME_AS_SELF) accepts
                                     (where out's dtype must be target's, Check.OUT_TARGET_DTYPE: (D, D, O -> O));
          grad G != D, self = target = D -> the default output dtype (promote(G, D), or D for KL): a gradOutput of
                                     another precision than the loss inputs (not MSE, which rejects it).
        Any other accepted mix is cast on the host to aclnn's compute dtype first (lossgrad.cann.op_host
        package_dtypes), as aclnn's own op_api composition does."""
        supported = self.supported_dtypes(npu_arch)
        combos: list[dict[str, DType]] = [{"grad": d, "self": d, "target": d, "out": d} for d in supported]
        own_target = Check.OUT_TARGET_DTYPE in self.checks  # an output dtype of its own is target's (BCEWithLogits)
        combos += [{"grad": d, "self": d, "target": o if own_target else d, "out": o}
                   for d in supported for o in supported if o != d]
        if self.promotion is not Promotion.SAME_AS_SELF:
            for d in supported:
                for g in supported:
                    if g != d:
                        out = dt.promote(g, d) if self.default_out_dtype == "promoted" else d  # "target": d
                        combos.append({"grad": g, "self": d, "target": d, "out": out})
        columns = [self.absent_as_self(c) for c in combos]  # an optional input: self's dtype in every column
        return tuple(tuple(c[io.role] for io in self.kernel_inputs) + (c["out"],) for c in columns)


# -- the UB buffers a compute body may declare (tiling.ub_plan sizes and places them, the kernel allocates them) ------

# bufMask bits, decided by the tiling per launch (lossgrad.tiling.ub_plan explains the plan).
MASK_WORK = {r.name: r.work_bit for r in ROLES}      # fp32 work/resident buffer of an input
MASK_ACC = 6                                       # KL reduction accumulator
MASK_CONST = 7                                     # Atlas 910 sign/clamp ops: a constant tensor of 1.0
MASK_RESULT = 8                                    # float result buffer (the output dtype is not float)
MASK_REPEAT = {r.name: r.repeat_bit for r in ROLES}  # keep a streamed tile resident: the next tiles repeat it
assert len({*MASK_WORK.values(), *MASK_REPEAT.values(), MASK_ACC, MASK_CONST, MASK_RESULT}) == 2 * len(ROLES) + 3

# Bank phases (tiling.ub_plan's module doc): self and target apart (Sub/Compare(self, target)), grad apart from the
# result (Mul(r, r, grad)); the result (out tile or result_) at phase 0, the compute scratch that meets it at phase 1.
ROLE_PHASE = {r.name: r.phase for r in ROLES}
RESULT_PHASE = 0
SCRATCH_PHASE = 1


@dataclass(frozen=True)
class Buffer:
    name: str            # C++ member
    kind: str            # "in" (TQue VECIN), "out" (TQue VECOUT), "tbuf" (TBuf VECCALC)
    count: int           # buffers in the queue (2 = double buffering)
    ctype: str           # element type symbol: TG/TS/TT/TO/float/uint8_t
    mult: int = 1
    div: int = 1
    when: int | None = None  # bufMask bit
    doc: str = ""
    phase: int | None = None  # UB bank phase (0/1, see above); None: not an operand whose placement matters
    lead: int = 0             # input slices: bytes between the previous slice's end and this slice's data
    pad: int = 0              # bytes each instance adds to its tile-scaled size (bank placement)

    def bytes_per_elem(self, sizes: Mapping[str, int]) -> Fraction:
        return Fraction(self.count * self.mult * sizes[self.ctype], self.div)


def mask(name: str, phase: int, doc: str = "comparison bits") -> Buffer:
    """A compute body's comparison-bits scratch (one bit per element)."""
    return Buffer(name, "tbuf", 1, "uint8_t", div=8, phase=phase, doc=doc)


def scratch(name: str, phase: int | None, doc: str, when: int | None = None) -> Buffer:
    """A compute body's float scratch tensor of one tile."""
    return Buffer(name, "tbuf", 1, "float", when=when, phase=phase, doc=doc)
