"""aclnnMseLossBackward: the op's declaration (spec and the compute body's scratch buffers).

The folder holds everything about the op: this spec, the compute body (compute.h), the golden formulas (golden.py),
the PyTorch facts (torch_facts.py) and the test facts (test_facts.py). See docs/contributing.md.
"""
from __future__ import annotations

from ...opspec import (ALL_LINES, Check, Divisor, EmptyRule, FLOAT_SUPPORT_BY_ARCH, OutputShape, Promotion,
                       Reduction, OpSpec, TensorInput)

SPEC = OpSpec(
    name="mse_loss_backward",
    aclnn="aclnnMseLossBackward",
    inputs=(  # §2.3: the kernel broadcasts internally
        TensorInput("gradOutput", "grad", proto="dout", kernel_index=2),
        TensorInput("self", "self", proto="predict", kernel_index=0),
        TensorInput("target", "target", proto="label", kernel_index=1),
    ),
    output_param="out",
    out_rank_checked=False,
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
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": True, "910": False},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="MseLossGrad",
    custom_op_type="MseLossGradCustom",
    kernel_output="y",
    aclnn_compute="self",
    formula="out = ((self - target) * c) * gradOutput;  c = 2/N (mean) else 2",
    sources=("ops_semantics.md §2", "seeds/001 (aclnnMseLossBackward)"),
    order=1,
)

# The compute body's own UB buffers (beyond the inputs, the output queue and the work buffers every kernel has).
SCRATCH = ()
