"""The op registry: the one place where per-operator facts live.

Every other module (validation, golden model, tiling, kernel templates, op_host generation, docs, tests) reads these
entries; none restates an op's dtypes, divisor rule, argument order or kernel names. The style follows PyTorch's
native_functions.yaml + OpInfo: one declarative entry per op. Facts are cited to
`../shared/reference/ops_semantics.md` (the spec) by section.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
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
    BROADCAST_ALL = "broadcast(gradOutput, self, target)"
    SELF = "self.shape (gradOutput must broadcast into broadcast(self, target))"


class EmptyRule(enum.Enum):
    ANY_INPUT = "any empty input: success, no kernel launch"
    SELF_ONLY = "only an empty self returns early; an empty target broadcast sums to zeros"


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
    KL_SHAPES = "self/target broadcast, gradOutput broadcasts into that shape, output shape == self.shape"
    KERNEL_DTYPES = "every tensor the kernel reads or writes has a dtype the NpuArch can move and cast (arch_dtypes)"


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
class KernelIO:
    """One kernel input: CANN proto name and which API argument feeds it."""

    proto: str
    role: str  # "grad" | "self" | "target"


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
    """promote(promote(gradOutput, self), target): what the op_api casts non-float inputs to."""
    return dt.promote(dt.promote(dtypes["grad"], dtypes["self"]), dtypes["target"])


def kernel_dtypes(dtypes: Mapping[str, DType], out: DType) -> dict[str, DType]:
    """The element type of each kernel tensor (grad, self, target, out). The op_api casts a non-float input (only
    L1 accepts them) to the promoted dtype before the kernel; float inputs and the output reach the kernel as they
    are, and the kernel casts each one to or from float32 itself."""
    promoted = promoted_dtype(dtypes)
    found = {r: (d if d.is_float else promoted) for r, d in dtypes.items() if r in ("grad", "self", "target")}
    found["out"] = out
    return found


@dataclass(frozen=True)
class OpSpec:
    name: str                           # Python API name (lossgrad.<name>, lossgrad.golden.<name>)
    aclnn: str                          # aclnn API name
    aclnn_params: tuple[str, ...]       # aclnn GetWorkspaceSize parameters before workspaceSize/executor
    output_param: str                   # the output tensor's aclnn name
    attrs: tuple[AttrSpec, ...]         # scalar attributes after `reduction`
    reductions: tuple[Reduction, ...]   # values the op accepts
    reduction_validated: bool           # False: aclnn maps out-of-range values to "none" (KL)
    coefficient: float                  # numerator of the reduction coefficient (2 for MSE)
    mean_divisor: Divisor
    batchmean_divisor: Divisor | None
    promotion: Promotion
    output_shape: OutputShape
    default_out_dtype: str              # "promoted" | "self"
    empty_rule: EmptyRule
    checks: tuple[Check, ...]           # aclnn's validation order
    rank_checked: tuple[str, ...]       # tensors the rank check covers
    dtype_support: dict[int, tuple[DType, ...]]  # dtypes aclnn's validation accepts, by NpuArch
    docs_support: dict[str, bool]       # product lines the aclnn doc lists
    ours_support: dict[str, bool]       # product lines this project ships kernels for
    cann_op_type: str                   # CANN's built-in kernel op type (facts, docs)
    custom_op_type: str                 # our custom-op type (OpDef class, aclnn<custom_op_type> API)
    kernel_inputs: tuple[KernelIO, ...] # kernel input order
    kernel_output: str                  # kernel output proto name
    kernel_reads_self: bool             # KL reads only self's shape, never its values
    template: str                       # op_kernel/ops/<template>.h.j2 compute body
    aclnn_broadcasts: tuple[str, ...]   # inputs aclnn's op_api materialises with BroadcastTo before its kernel
    aclnn_compute: str                  # dtype aclnn's op_api casts the inputs to: "promoted" | "self" |
                                        # "float32_unless_all_float16"
    formula: str
    sources: tuple[str, ...] = field(default_factory=tuple)

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
                                     op accepts it, and it is the only kind of mix MSE (SAME_AS_SELF) accepts;
          grad G != D, self = target = D -> the default output dtype (promote(G, D), or D for KL): a gradOutput of
                                     another precision than the loss inputs (not MSE, which rejects it).
        Any other accepted mix is cast on the host to aclnn's compute dtype first (lossgrad.cann.op_host
        package_dtypes), as aclnn's own op_api composition does."""
        supported = self.supported_dtypes(npu_arch)
        combos: list[dict[str, DType]] = [{"grad": d, "self": d, "target": d, "out": d} for d in supported]
        combos += [{"grad": d, "self": d, "target": d, "out": o} for d in supported for o in supported if o != d]
        if self.promotion is not Promotion.SAME_AS_SELF:
            for d in supported:
                for g in supported:
                    if g != d:
                        out = dt.promote(g, d) if self.default_out_dtype == "promoted" else d
                        combos.append({"grad": g, "self": d, "target": d, "out": out})
        return tuple(tuple(c[io.role] for io in self.kernel_inputs) + (c["out"],) for c in combos)



L1_LOSS_BACKWARD = OpSpec(
    name="l1_loss_backward",
    aclnn="aclnnL1LossBackward",
    aclnn_params=("gradOutput", "self", "target", "reduction", "gradInput"),
    output_param="gradInput",
    attrs=(),
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM),
    reduction_validated=True,
    coefficient=1.0,
    mean_divisor=Divisor.OUTPUT_NUMEL,
    batchmean_divisor=None,
    promotion=Promotion.PROMOTE_ALL,
    output_shape=OutputShape.BROADCAST_ALL,
    default_out_dtype="promoted",
    empty_rule=EmptyRule.ANY_INPUT,
    checks=(Check.NULL, Check.REDUCTION, Check.PROMOTE, Check.RANK, Check.BROADCAST_ALL, Check.KERNEL_DTYPES),
    rank_checked=("gradOutput", "self", "target", "gradInput"),
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": True, "910": True},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="L1LossGrad",
    custom_op_type="L1LossGradCustom",
    kernel_inputs=(KernelIO("grads", "grad"), KernelIO("predict", "self"), KernelIO("label", "target")),
    kernel_output="y",
    kernel_reads_self=True,
    template="l1",
    aclnn_broadcasts=("grad", "self", "target"),  # §1.3 (950 keeps a 0-d grad as a scalar)
    aclnn_compute="promoted",
    formula="gradInput = sign(self - target) * gradOutput * c;  sign(0) = sign(NaN) = 0;  c = 1/N (mean) else 1",
    sources=("ops_semantics.md §1", "seeds/000 (aclnnL1LossBackward)"),
)

MSE_LOSS_BACKWARD = OpSpec(
    name="mse_loss_backward",
    aclnn="aclnnMseLossBackward",
    aclnn_params=("gradOutput", "self", "target", "reduction", "out"),
    output_param="out",
    attrs=(),
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM),
    reduction_validated=True,
    coefficient=2.0,
    mean_divisor=Divisor.SELF_NUMEL,
    batchmean_divisor=None,
    promotion=Promotion.SAME_AS_SELF,
    output_shape=OutputShape.BROADCAST_ALL,
    default_out_dtype="self",
    empty_rule=EmptyRule.ANY_INPUT,
    checks=(Check.NULL, Check.SAME_DTYPE, Check.SELF_OUT_SUPPORTED, Check.REDUCTION, Check.RANK,
            Check.BROADCAST_ALL, Check.KERNEL_DTYPES),
    rank_checked=("gradOutput", "self", "target"),
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": True, "910": False},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="MseLossGrad",
    custom_op_type="MseLossGradCustom",
    kernel_inputs=(KernelIO("predict", "self"), KernelIO("label", "target"), KernelIO("dout", "grad")),
    kernel_output="y",
    kernel_reads_self=True,
    template="mse",
    aclnn_broadcasts=(),  # §2.3: the kernel broadcasts internally
    aclnn_compute="self",
    formula="out = ((self - target) * c) * gradOutput;  c = 2/N (mean) else 2",
    sources=("ops_semantics.md §2", "seeds/001 (aclnnMseLossBackward)"),
)

SMOOTH_L1_LOSS_BACKWARD = OpSpec(
    name="smooth_l1_loss_backward",
    aclnn="aclnnSmoothL1LossBackward",
    aclnn_params=("gradOut", "self", "target", "reduction", "beta", "gradInput"),
    output_param="gradInput",
    attrs=(AttrSpec("beta", "beta", "float", "sigma", "Float", 1.0, minimum=0.0),),
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM),
    reduction_validated=True,
    coefficient=1.0,
    mean_divisor=Divisor.SELF_NUMEL,
    batchmean_divisor=None,
    promotion=Promotion.PROMOTE_ALL,
    output_shape=OutputShape.BROADCAST_ALL,
    default_out_dtype="promoted",
    empty_rule=EmptyRule.ANY_INPUT,
    checks=(Check.NULL, Check.EACH_SUPPORTED, Check.RANK, Check.REDUCTION, Check.BETA, Check.PROMOTE,
            Check.BROADCAST_ALL, Check.KERNEL_DTYPES),
    rank_checked=("gradOut", "self", "target"),
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": True, "910": True},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="SmoothL1LossGradV2",
    custom_op_type="SmoothL1LossGradCustom",
    kernel_inputs=(KernelIO("predict", "self"), KernelIO("label", "target"), KernelIO("dout", "grad")),
    kernel_output="gradient",
    kernel_reads_self=True,
    template="smooth_l1",
    aclnn_broadcasts=(),  # §3.3
    aclnn_compute="promoted",
    formula=("gradInput = f(self - target) * gradOut * c;  f(x) = -1 (x < -beta), +1 (x > beta), x/beta otherwise; "
             "beta == 0: f = sign with sign(0) = sign(NaN) = 0 (exactly L1);  c = 1/N (mean) else 1"),
    sources=("ops_semantics.md §3", "seeds/002 (aclnnSmoothL1LossBackward)"),
)

KL_DIV_BACKWARD = OpSpec(
    name="kl_div_backward",
    aclnn="aclnnKlDivBackward",
    aclnn_params=("gradOutput", "self", "target", "reduction", "logTarget", "out"),
    output_param="out",
    attrs=(AttrSpec("log_target", "logTarget", "bool", "log_target", "Bool", False),),
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM, Reduction.BATCHMEAN),
    reduction_validated=False,
    coefficient=1.0,
    mean_divisor=Divisor.SELF_TARGET_NUMEL,
    batchmean_divisor=Divisor.SELF_TARGET_DIM0,
    promotion=Promotion.EACH_SUPPORTED,
    output_shape=OutputShape.SELF,
    default_out_dtype="self",
    empty_rule=EmptyRule.SELF_ONLY,
    checks=(Check.NULL, Check.SELF_CASTS_TO_OUT, Check.EACH_SUPPORTED, Check.RANK, Check.KL_SHAPES,
            Check.KERNEL_DTYPES),
    rank_checked=("gradOutput", "self", "target", "out"),
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": False, "910": False},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="KlDivLossGrad",
    custom_op_type="KlDivLossGradCustom",
    kernel_inputs=(KernelIO("grad", "grad"), KernelIO("input", "self"), KernelIO("target", "target")),
    kernel_output="y",
    kernel_reads_self=False,
    template="kl_div",
    aclnn_broadcasts=("self",),  # §4.3: then ReduceSum back to self's shape
    aclnn_compute="float32_unless_all_float16",
    formula=("out = sum over broadcast axes of -T * gradOutput * c;  T = exp(target) if logTarget else target;  "
             "c = 1/N (mean), 1/dim0 (batchmean), 1 otherwise;  self's values never enter"),
    sources=("ops_semantics.md §4", "seeds/003 (aclnnKlDivBackward)"),
)

OPS: dict[str, OpSpec] = {op.name: op for op in (
    L1_LOSS_BACKWARD, MSE_LOSS_BACKWARD, SMOOTH_L1_LOSS_BACKWARD, KL_DIV_BACKWARD)}


def op_names(op: OpSpec) -> tuple[str, ...]:
    """Every name an op answers to (case-insensitive): the API name, the short name (its template: l1, mse,
    smooth_l1, kl_div), the aclnn API, our custom op type and CANN's op type."""
    return (op.name, op.template, op.aclnn, op.custom_op_type, op.cann_op_type)


_BY_NAME = {n.lower(): op for op in OPS.values() for n in op_names(op)}


def get_op(name: "str | OpSpec") -> OpSpec:
    """The one op-name resolver (API, command line, case tables, builds)."""
    if isinstance(name, OpSpec):
        return name
    op = _BY_NAME.get(str(name).strip().lower())
    if op is None:
        raise KeyError(f"unknown op {name!r}; known: "
                       + ", ".join(f"{o.name} ({o.template})" for o in OPS.values()))
    return op
