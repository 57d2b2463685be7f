"""aclnnSoftMarginLossBackward (new_ops_semantics §1): the op's declaration. See docs/contributing.md."""
from ...opspec import (ALL_LINES, FLOAT_SUPPORT_BY_ARCH, Check, Divisor, EmptyRule, KernelIO, OpSpec, OutputShape,
                       Promotion, RESULT_PHASE, SCRATCH_PHASE, Reduction, scratch)

SPEC = OpSpec(
    name="soft_margin_loss_backward", aclnn="aclnnSoftMarginLossBackward", output_param="out", attrs=(),
    aclnn_params=("gradOutput", "self", "target", "reduction", "out"), coefficient=1.0, order=4,
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM), mean_divisor=Divisor.OUTPUT_NUMEL,
    reduction_validated=True,  # decision: aclnn reads out of bounds (undefined); we report 161002 after the shapes
    batchmean_divisor=None, promotion=Promotion.EACH_SUPPORTED, output_shape=OutputShape.BROADCAST_ALL,
    default_out_dtype="promoted", empty_rule=EmptyRule.ANY_INPUT,  # any empty input: out is empty, nothing runs
    checks=(Check.NULL, Check.EACH_SUPPORTED, Check.RANK, Check.BROADCAST_ALL, Check.KERNEL_DTYPES, Check.REDUCTION),
    rank_checked=("gradOutput", "self", "target"), dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": False, "910": True},  # the code accepts 310P too
    ours_support={line: True for line in ALL_LINES}, cann_op_type="SoftMarginLossGrad",
    custom_op_type="SoftMarginLossGradCustom", kernel_output="gradient", kernel_reads_self=True,
    kernel_inputs=(KernelIO("predict", "self"), KernelIO("label", "target"), KernelIO("dout", "grad")),
    aclnn_broadcasts=("grad", "self", "target"), aclnn_compute="promoted", sources=("new_ops_semantics.md §1",),
    formula="out = (-target * e) / (1 + e) * (gradOutput * c);  e = exp(-self * target);  c = 1/N (mean) else 1")

SCRATCH = (scratch("tmpA_", SCRATCH_PHASE, "e = exp(-self * target), then 1 + e, then gradOutput * c"),
           scratch("tmpB_", RESULT_PHASE, "-target, then -target * e"))
