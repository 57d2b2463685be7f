"""A test op, not a product: MSE's gradient times an optional weight tensor (tests/python/ops/test_optional_input.py).

It exists to show that an op with an optional input is declared by data alone: copied into lossgrad/ops/, this folder
(spec, compute body, golden) gives a public function with `weight=None`, a golden, kernels on every architecture with
a variant that never touches an absent weight, and an op_host OpDef with ParamType(OPTIONAL). The aclnn name is made
up. It has no torch or test facts (those parts are read only by lossgrad.torch and the oracle, which it never meets).
"""
from ...opspec import (ALL_LINES, FLOAT_SUPPORT_BY_ARCH, Check, Divisor, EmptyRule, OpSpec, OutputShape, Promotion,
                       Reduction, TensorInput)

SPEC = OpSpec(
    name="weighted_mse_loss_backward", aclnn="aclnnWeightedMseLossBackward", output_param="out", attrs=(),
    inputs=(TensorInput("gradOutput", "grad", proto="dout", kernel_index=2),
            TensorInput("self", "self", proto="predict", kernel_index=0),
            TensorInput("target", "target", proto="label", kernel_index=1),
            TensorInput("weightOptional", "weight", proto="weight", kernel_index=3, optional=True,
                        absent="a factor of 1: the kernel variant skips the Mul and never reads the tensor")),
    out_rank_checked=False, coefficient=2.0, order=100,
    reductions=(Reduction.NONE, Reduction.MEAN, Reduction.SUM), mean_divisor=Divisor.OUTPUT_NUMEL,
    reduction_validated=True, batchmean_divisor=None, promotion=Promotion.EACH_SUPPORTED,
    output_shape=OutputShape.BROADCAST_ALL, default_out_dtype="promoted", empty_rule=EmptyRule.ANY_INPUT,
    checks=(Check.NULL, Check.EACH_SUPPORTED, Check.RANK, Check.BROADCAST_ALL, Check.KERNEL_DTYPES, Check.REDUCTION),
    dtype_support=FLOAT_SUPPORT_BY_ARCH, docs_support={line: False for line in ALL_LINES},
    ours_support={line: True for line in ALL_LINES}, cann_op_type="WeightedMseLossGrad",
    custom_op_type="WeightedMseLossGradCustom", kernel_output="y", aclnn_compute="promoted",
    formula="out = ((self - target) * c) * gradOutput * weight;  c = 2/N (mean) else 2;  no weight: a factor of 1",
    sources=("tests/python/ops/test_optional_input.py",))

SCRATCH = ()
