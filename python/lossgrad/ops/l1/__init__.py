"""aclnnL1LossBackward: the op's declaration (spec and the compute body's scratch buffers).

The folder holds everything about the op: this spec, the compute body (compute.h), the golden formulas (golden.py),
the PyTorch facts (torch_facts.py) and the test facts (test_facts.py). See docs/contributing.md.
"""
from __future__ import annotations

from ...opspec import (ALL_LINES, Check, Divisor, EmptyRule, FLOAT_SUPPORT_BY_ARCH, OutputShape, Promotion,
                       Reduction, OpSpec, TensorInput, MASK_CONST, RESULT_PHASE, SCRATCH_PHASE, mask, scratch)

SPEC = OpSpec(
    name="l1_loss_backward",
    aclnn="aclnnL1LossBackward",
    inputs=(  # §1.3: aclnn broadcasts all three (950 keeps a 0-d grad as a scalar)
        TensorInput("gradOutput", "grad", proto="grads", kernel_index=0, aclnn_broadcast=True),
        TensorInput("self", "self", proto="predict", kernel_index=1, aclnn_broadcast=True),
        TensorInput("target", "target", proto="label", kernel_index=2, aclnn_broadcast=True),
    ),
    output_param="gradInput",
    out_rank_checked=True,
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
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": True, "910": True},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="L1LossGrad",
    custom_op_type="L1LossGradCustom",
    kernel_output="y",
    aclnn_compute="promoted",
    formula="gradInput = sign(self - target) * gradOutput * c;  sign(0) = sign(NaN) = 0;  c = 1/N (mean) else 1",
    sources=("ops_semantics.md §1", "seeds/000 (aclnnL1LossBackward)"),
    order=0,
)

# The compute body's own UB buffers (beyond the inputs, the output queue and the work buffers every kernel has).
SCRATCH = (
    mask("maskA_", SCRATCH_PHASE),
    mask("maskB_", RESULT_PHASE),
    scratch("tmpA_", SCRATCH_PHASE, "selected values"),
    scratch("ones_", None, "constant 1.0 (Atlas 910: NegSign clamps with Min against a tensor)",
            when=MASK_CONST),
)
