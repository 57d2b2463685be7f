"""aclnnSmoothL1LossBackward: the op's declaration (spec and the compute body's scratch buffers).

The folder holds everything about the op: this spec, the compute body (compute.h), the golden formulas (golden.py),
the PyTorch facts (torch_facts.py) and the test facts (test_facts.py). See docs/contributing.md.
"""
from __future__ import annotations

from ...opspec import (ALL_LINES, AttrSpec, Check, Divisor, EmptyRule, FLOAT_SUPPORT_BY_ARCH, OutputShape,
                       Promotion, Reduction, OpSpec, TensorInput, MASK_CONST, RESULT_PHASE, SCRATCH_PHASE, mask,
                       scratch)

SPEC = OpSpec(
    name="smooth_l1_loss_backward",
    aclnn="aclnnSmoothL1LossBackward",
    inputs=(  # §3.3: the kernel broadcasts internally
        TensorInput("gradOut", "grad", proto="dout", kernel_index=2),
        TensorInput("self", "self", proto="predict", kernel_index=0),
        TensorInput("target", "target", proto="label", kernel_index=1),
    ),
    output_param="gradInput",
    out_rank_checked=False,
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
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": True, "910": True},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="SmoothL1LossGradV2",
    custom_op_type="SmoothL1LossGradCustom",
    kernel_output="gradient",
    aclnn_compute="promoted",
    formula=("gradInput = f(self - target) * gradOut * c;  f(x) = -1 (x < -beta), +1 (x > beta), x/beta otherwise; "
             "beta == 0: f = sign with sign(0) = sign(NaN) = 0 (exactly L1);  c = 1/N (mean) else 1"),
    sources=("ops_semantics.md §3", "seeds/002 (aclnnSmoothL1LossBackward)"),
    order=2,
)

# The compute body's own UB buffers (beyond the inputs, the output queue and the work buffers every kernel has).
SCRATCH = (
    mask("maskA_", SCRATCH_PHASE),
    mask("maskB_", RESULT_PHASE),
    scratch("tmpA_", RESULT_PHASE, "x = self - target"),
    scratch("tmpB_", SCRATCH_PHASE, "the linear branch x / beta"),
    scratch("ones_", None, "constant 1.0 (Atlas 910: NegSign and ClampUnit clamp with Min against a tensor)",
            when=MASK_CONST),
)
