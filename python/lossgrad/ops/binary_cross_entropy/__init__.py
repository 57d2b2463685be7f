"""aclnnBinaryCrossEntropyBackward (new_ops_semantics §2): the op's declaration. See docs/contributing.md."""
from ...opspec import (ALL_LINES, FLOAT_SUPPORT_BY_ARCH, Check, Divisor, EmptyRule, OpSpec, OutputShape, Promotion,
                       RESULT_PHASE, SCRATCH_PHASE, Reduction, TensorInput, scratch)

SPEC = OpSpec(
    name="binary_cross_entropy_backward", aclnn="aclnnBinaryCrossEntropyBackward", output_param="out", attrs=(),
    # §0, §2.3: only out's rank is checked (the inputs are const aclTensor*, which the variadic checker skips)
    inputs=(TensorInput("gradOutput", "grad", proto="grad_output", kernel_index=2, rank_checked=False),
            TensorInput("self", "self", proto="x", kernel_index=0, rank_checked=False),
            TensorInput("target", "target", proto="y", kernel_index=1, rank_checked=False),
            TensorInput("weightOptional", "weight", proto="weight", kernel_index=3, rank_checked=False,
                        optional=True, aclnn_fills=True,
                        absent="aclnn's OnesLike(self), a factor of 1: the kernel variant skips the Mul and never "
                               "reads the tensor (bit-identical, no GM traffic)")),
    out_rank_checked=True, coefficient=1.0, order=6,
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM), mean_divisor=Divisor.OUTPUT_NUMEL,
    reduction_validated=True, batchmean_divisor=None, promotion=Promotion.EACH_SUPPORTED,
    output_shape=OutputShape.SELF_ABSORBING, default_out_dtype="promoted", empty_rule=EmptyRule.SELF_SKIPS_SHAPES,
    # §2.3: nulls, rank (out), each dtype, shapes into self (skipped for an empty self), reduction, promotion
    checks=(Check.NULL, Check.RANK, Check.EACH_SUPPORTED, Check.INTO_SELF, Check.REDUCTION, Check.PROMOTE,
            Check.KERNEL_DTYPES),
    dtype_support=FLOAT_SUPPORT_BY_ARCH, docs_support={line: True for line in ALL_LINES},
    ours_support={line: True for line in ALL_LINES}, cann_op_type="BinaryCrossEntropyGrad",
    custom_op_type="BinaryCrossEntropyGradCustom", kernel_output="output", aclnn_compute="promoted",
    sources=("new_ops_semantics.md §2",),
    formula="out = gradOutput * (self - target) / max((1 - self) * self, 1e-12) * weight * c;  c = 1/N (mean) "
            "else 1;  no weight: a factor of 1")

SCRATCH = (scratch("tmpA_", RESULT_PHASE, "self - target, then gradOutput * (self - target)"),
           scratch("tmpB_", SCRATCH_PHASE, "(1 - self) * self, then its clamp at 1e-12"))
