"""aclnnKlDivBackward: the op's declaration (spec and the compute body's scratch buffers).

The folder holds everything about the op: this spec, the compute body (compute.h), the golden formulas (golden.py),
the PyTorch facts (torch_facts.py) and the test facts (test_facts.py). See docs/contributing.md.
"""
from __future__ import annotations

from ...opspec import (ALL_LINES, AttrSpec, Check, Divisor, EmptyRule, FLOAT_SUPPORT_BY_ARCH, KernelIO, OutputShape,
                       Promotion, Reduction, OpSpec, MASK_ACC, SCRATCH_PHASE, scratch)

SPEC = OpSpec(
    name="kl_div_backward",
    aclnn="aclnnKlDivBackward",
    aclnn_params=("gradOutput", "self", "target", "reduction", "logTarget", "out"),
    output_param="out",
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
    rank_checked=("gradOutput", "self", "target", "out"),
    dtype_support=FLOAT_SUPPORT_BY_ARCH,
    docs_support={"950": True, "A3": True, "A2": True, "310P": False, "910": False},
    ours_support={line: True for line in ALL_LINES},
    cann_op_type="KlDivLossGrad",
    custom_op_type="KlDivLossGradCustom",
    kernel_inputs=(KernelIO("grad", "grad"), KernelIO("input", "self"), KernelIO("target", "target")),
    kernel_output="y",
    kernel_reads_self=False,
        aclnn_broadcasts=("self",),  # §4.3: then ReduceSum back to self's shape
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
