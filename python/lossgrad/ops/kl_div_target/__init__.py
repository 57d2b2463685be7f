"""aclnnKlDivTargetBackward (new_ops_semantics §4): kl_div's gradient with respect to target. See docs/contributing.md.

The output has target's shape: the terms over broadcast(self, target) sum back onto it (OpSpec.reduced_onto), with
the reduction machinery KL uses onto self (op_kernel/reduce.h.j2). One fused kernel on every part aclnn accepts,
where A2/A3's aclnn composes it from l0 launches (Cast, BroadcastTo, Log, Mul, Sub, Div, Add, ReduceSum, Cast).
"""
from __future__ import annotations

from ...opspec import (FLOAT_SUPPORT_BY_ARCH, MASK_ACC, RESULT_PHASE, SCRATCH_PHASE, AttrSpec, Check, Divisor,
                       EmptyRule, L0Step, OpSpec, OutputShape, Promotion, Reduction, TensorInput, scratch)

_LOG = ("log_target", True)
_LINEAR = ("log_target", False)
# A2/A3's op_api (ComputeGradForKlDiv, new_ops_semantics §4.2/§4.5), after its Casts to float32 and target's
# BroadcastTo, and before its ReduceSum and Cast: one l0 launch per step.
A2_CHAIN = (
    L0Step("Div", "g'", ("grad", "coef"), "scaled"),
    L0Step("Log", "L", ("target",), _LINEAR), L0Step("Mul", "A", ("g'", "self"), _LINEAR),
    L0Step("Mul", "X", ("g'", "L"), _LINEAR), L0Step("Sub", "D", ("X", "A"), _LINEAR),
    L0Step("Mul", "M", ("g'", "target"), _LINEAR), L0Step("Div", "Q", ("M", "target"), _LINEAR),
    L0Step("Add", "r", ("D", "Q"), _LINEAR),
    L0Step("Exp", "E", ("target",), _LOG), L0Step("Sub", "D", ("target", "self"), _LOG),
    L0Step("Mul", "P", ("g'", "D"), _LOG), L0Step("Mul", "R", ("P", "E"), _LOG),
    L0Step("Mul", "F", ("g'", "E"), _LOG), L0Step("Add", "r", ("R", "F"), _LOG),
)

SPEC = OpSpec(
    name="kl_div_target_backward", aclnn="aclnnKlDivTargetBackward", output_param="gradTarget", order=8,
    inputs=(  # §4.5: the op_api broadcasts target (BroadcastTo), then ReduceSum back to target's shape
        TensorInput("gradOutput", "grad", proto="grad", kernel_index=0),
        TensorInput("self", "self", proto="input", kernel_index=1),
        TensorInput("target", "target", proto="target", kernel_index=2, aclnn_broadcast=True)),
    out_rank_checked=True,
    attrs=(AttrSpec("log_target", "logTarget", "bool", "log_target", "Bool", False),),
    # §4.3 step 5: reduction is not validated, values other than 0..3 are "none"
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM, Reduction.BATCHMEAN), reduction_validated=False,
    # Decision (docs/semantics.md): A2/A3's divisors, numel and dim 0 of broadcast(self, target), on every part (the
    # 950 kernel's numel(self) disagrees with A2/A3, PyTorch and the op's own golden: new_ops_semantics §7.5)
    coefficient=1.0, mean_divisor=Divisor.SELF_TARGET_NUMEL, batchmean_divisor=Divisor.SELF_TARGET_DIM0,
    empty_mean_refused=False,  # A2/A3's l0 composition runs on an empty broadcast: no tiling to refuse it
    promotion=Promotion.EACH_SUPPORTED, output_shape=OutputShape.TARGET, default_out_dtype="target",
    empty_rule=EmptyRule.SELF_ONLY,
    # §4.3: nulls, self casts to gradTarget, each dtype supported, gradTarget's dtype is target's, rank <= 8 (all
    # four), then the shapes (broadcast(self, target) exists, gradOutput broadcasts into it, out is target's shape)
    checks=(Check.NULL, Check.SELF_CASTS_TO_OUT, Check.EACH_SUPPORTED, Check.OUT_TARGET_DTYPE, Check.RANK,
            Check.KL_SHAPES, Check.KERNEL_DTYPES),
    # §0: the dtype list is empty on every part but 910B/910_93/regbase: every dtype is 161002 on 310P and 910
    dtype_support={**FLOAT_SUPPORT_BY_ARCH, 2002: (), 1001: ()},
    docs_support={"950": True, "A3": True, "A2": True, "310P": False, "910": False},
    ours_support={"950": True, "A3": True, "A2": True, "310P": False, "910": False},
    cann_op_type="KlDivTargetLossGrad", custom_op_type="KlDivTargetLossGradCustom", kernel_output="y",
    aclnn_compute="float32",  # Decision: A2/A3's float32 terms and sum on every part (950 keeps all-16-bit IO)
    formula=("out = sum over the axes self broadcasts target along of: (g'*ln(t) - g'*s) + (g'*t)/t, or with "
             "logTarget (g'*(t - s))*exp(t) + g'*exp(t);  g' = gradOutput * c;  c = 1/N (mean), 1/dim0 "
             "(batchmean), 1 otherwise;  t = 0 gives NaN, as aclnn and PyTorch"),
    sources=("new_ops_semantics.md §4",),
    aclnn_l0_chain=A2_CHAIN, aclnn_l0_archs=(2201,),
)

SCRATCH = (
    scratch("acc_", SCRATCH_PHASE, "the reduction onto target: running sums of the terms", when=MASK_ACC),
    scratch("tmpA_", SCRATCH_PHASE, "g' * s, then g' * t and (g' * t) / t; with logTarget g' * (t - s) times exp(t) "
                                    "(or g', then g' * exp(t), under mean and batchmean)"),
    scratch("tmpB_", RESULT_PHASE, "logTarget: exp(t); else g' under mean and batchmean"),
)
