"""aclnnSoftMarginLossBackward (new_ops_semantics §1): the op's declaration. See docs/contributing.md."""
from ...opspec import (ALL_LINES, FLOAT_SUPPORT_BY_ARCH, Check, Divisor, EmptyRule, OpSpec, OutputShape, Promotion,
                       RESULT_PHASE, SCRATCH_PHASE, Reduction, TensorInput, scratch)

SPEC = OpSpec(
    name="soft_margin_loss_backward", aclnn="aclnnSoftMarginLossBackward", output_param="out", attrs=(),
    inputs=(TensorInput("gradOutput", "grad", proto="dout", kernel_index=2, aclnn_broadcast=True),
            TensorInput("self", "self", proto="predict", kernel_index=0, aclnn_broadcast=True),
            TensorInput("target", "target", proto="label", kernel_index=1, aclnn_broadcast=True)),
    out_rank_checked=False, coefficient=1.0, order=4,
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM), mean_divisor=Divisor.OUTPUT_NUMEL,
    reduction_validated=True,  # decision: aclnn reads out of bounds (undefined); we report 161002 after the shapes
    batchmean_divisor=None, promotion=Promotion.EACH_SUPPORTED, output_shape=OutputShape.BROADCAST_ALL,
    default_out_dtype="promoted", empty_rule=EmptyRule.ANY_INPUT,  # any empty input: out is empty, nothing runs
    checks=(Check.NULL, Check.EACH_SUPPORTED, Check.RANK, Check.BROADCAST_ALL, Check.KERNEL_DTYPES, Check.REDUCTION),
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": False, "910": True},  # the code accepts 310P too
    ours_support={line: True for line in ALL_LINES}, cann_op_type="SoftMarginLossGrad",
    custom_op_type="SoftMarginLossGradCustom", kernel_output="gradient", aclnn_compute="promoted",
    sources=("new_ops_semantics.md §1",),
    formula="out = (-target * e) / (1 + e) * (gradOutput * c);  e = exp(-self * target);  c = 1/N (mean) else 1")

SCRATCH = (scratch("tmpA_", SCRATCH_PHASE, "e = exp(-self * target), then 1 + e, then gradOutput * c"),
           scratch("tmpB_", RESULT_PHASE, "-target, then -target * e"))
