"""aclnnKlDivBackward: the op's declaration (spec and the compute body's scratch buffers).

The folder holds everything about the op: this spec, the compute body (compute.h), the golden formulas (golden.py),
the PyTorch facts (torch_facts.py) and the test facts (test_facts.py). See docs/contributing.md.
"""
from __future__ import annotations

from ...opspec import (ALL_LINES, AttrSpec, Check, Divisor, EmptyRule, FLOAT_SUPPORT_BY_ARCH, OutputShape,
                       Promotion, Reduction, OpSpec, TensorInput, MASK_ACC, SCRATCH_PHASE, scratch)

SPEC = OpSpec(
    name="kl_div_backward",
    aclnn="aclnnKlDivBackward",
    inputs=(  # §4.3: aclnn broadcasts self, then ReduceSum back to self's shape; self's values never enter
        TensorInput("gradOutput", "grad", proto="grad", kernel_index=0),
        TensorInput("self", "self", proto="input", kernel_index=1, aclnn_broadcast=True, values_read=False),
        TensorInput("target", "target", proto="target", kernel_index=2),
    ),
    output_param="out",
    out_rank_checked=True,
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
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": False, "910": False},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="KlDivLossGrad",
    custom_op_type="KlDivLossGradCustom",
    kernel_output="y",
    aclnn_compute="float32_unless_all_float16",
    formula=("out = sum over broadcast axes of -T * gradOutput * c;  T = exp(target) if logTarget else target;  "
             "c = 1/N (mean), 1/dim0 (batchmean), 1 otherwise;  self's values never enter"),
    sources=("ops_semantics.md §4", "seeds/003 (aclnnKlDivBackward)"),
    order=3,
)

# The compute body's own UB buffers (beyond the inputs, the output queue and the work buffers every kernel has).
SCRATCH = (
    scratch("acc_", SCRATCH_PHASE, "KL reduction: running sums of contributions", when=MASK_ACC),
)
