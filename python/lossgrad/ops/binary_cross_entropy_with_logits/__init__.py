"""aclnnBinaryCrossEntropyWithLogitsBackward (new_ops_semantics §3): the op's declaration. See docs/contributing.md."""
from ...opspec import (ALL_LINES, FLOAT_SUPPORT_BY_ARCH, Check, Divisor, EmptyRule, OpSpec, OutputShape, Promotion,
                       RESULT_PHASE, SCRATCH_PHASE, Reduction, TensorInput, scratch)

SPEC = OpSpec(
    name="binary_cross_entropy_with_logits_backward", aclnn="aclnnBinaryCrossEntropyWithLogitsBackward",
    output_param="out", attrs=(),
    # §3.3: only out's rank is checked (the inputs are const aclTensor*, which the variadic checker skips)
    inputs=(TensorInput("gradOutput", "grad", proto="dout", kernel_index=2, rank_checked=False),
            TensorInput("self", "self", proto="predict", kernel_index=0, rank_checked=False),
            TensorInput("target", "target", proto="target", kernel_index=1, rank_checked=False),
            TensorInput("weightOptional", "weight", proto="weight", kernel_index=3, rank_checked=False,
                        optional=True, aclnn_fills=True,
                        absent="aclnn's OnesLike(self), a factor of 1: the kernel variant skips the Mul and never "
                               "reads the tensor (bit-identical, no GM traffic)"),
            TensorInput("posWeightOptional", "pos_weight", proto="pos_weight", kernel_index=4, rank_checked=False,
                        optional=True, aclnn_fills=True,
                        absent="aclnn's OnesLike(self): p = 1 in the pos-weight form, so p * t is t (exact); the "
                               "kernel variant uses t and never reads the tensor (bit-identical, no GM traffic)")),
    out_rank_checked=True, coefficient=1.0, order=7,
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM), mean_divisor=Divisor.OUTPUT_NUMEL,
    reduction_validated=True, batchmean_divisor=None, promotion=Promotion.EACH_SUPPORTED,
    output_shape=OutputShape.SELF_ABSORBING, default_out_dtype="target", empty_rule=EmptyRule.SELF_SKIPS_SHAPES,
    # §3.3: nulls, rank (out), each dtype and out's == target's, target's shape == self's and the rest into self
    # (both skipped for an empty self), reduction, promotion (in the Stub; it cannot fail once each dtype passed)
    checks=(Check.NULL, Check.RANK, Check.EACH_SUPPORTED, Check.OUT_TARGET_DTYPE, Check.TARGET_IS_SELF,
            Check.INTO_SELF, Check.REDUCTION, Check.PROMOTE, Check.KERNEL_DTYPES),
    dtype_support=FLOAT_SUPPORT_BY_ARCH, docs_support={line: True for line in ALL_LINES},
    ours_support={line: True for line in ALL_LINES}, cann_op_type="SigmoidCrossEntropyWithLogitsGradV2",
    custom_op_type="SigmoidCrossEntropyWithLogitsGradV2Custom", kernel_output="gradient", aclnn_compute="promoted",
    sources=("new_ops_semantics.md §3",),
    formula="out = (((p * t + 1) - t) * sigmoid(self) - p * t) * gradOutput * weight * c;  t = target, "
            "p = posWeight (1 when absent, as aclnn), c = 1/N (mean) else 1;  no weight: a factor of 1")

SCRATCH = (scratch("tmpA_", RESULT_PHASE, "exp(-self), 1 + exp(-self), then sigmoid(self)"),
           scratch("tmpB_", SCRATCH_PHASE, "a Duplicate of 1, then (p * t + 1) - t, then times the sigmoid"))
