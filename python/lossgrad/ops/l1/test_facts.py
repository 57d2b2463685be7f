"""aclnnL1LossBackward: the test facts (lossgrad.verify.oracle and the tests read them). Independent of the golden."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...verify.oracle import pointwise_reference


def ORACLE(g: np.ndarray, s: np.ndarray, t: np.ndarray, reduction: str, attrs: Mapping[str, Any]) -> np.ndarray:
    """torch's L1 gradient; mean over the broadcast (as aclnn); a NaN self - target gives aclnn's sign 0."""
    import torch.nn.functional as F
    return pointwise_reference(g, s, t, reduction, lambda a, b, r: F.l1_loss(a, b, reduction=r), nan_x_to_zero=True)

# Generated cases' dtype mixes: only L1 promotes without checking each input, so only it accepts an integer input
# (ops_semantics §1.2); "same" twice to keep most cases single-dtype.
DTYPE_MODES = ("same", "same", "mixed", "int")

DOUBLE_BACKWARD = False  # sign's derivative is 0 almost everywhere: nothing for a Hessian-vector test to compare

# The spec's row, restated here on purpose as an independent check of SPEC (tests/python/test_registry.py):
# (coefficient, mean divisor, batchmean divisor, kernel input protos, reduction validated, empty rule):
# ops_semantics §7, the spec's quick-comparison table.
SPEC_ROW = (1.0, "OUTPUT_NUMEL", None, ("grads", "predict", "label"), True, "ANY_INPUT")

# UB buffers the compute body reads together in one binary instruction: they must sit at opposite bank phases
# (tests/python/tiling/test_ub_plan.py).
UB_APART = (("tmpA_", "outQ_"), ("tmpA_", "result_"), ("maskB_", "tmpA_"))


# Modelled body against the same-shape body (tests/op_kernel/test_time_bounds.py: 1.25x at 4 Mi elements;
# the causes, by SoC and pattern, are stated there): {(soc, dtype, pattern): measured}, 2026-11-27.
TIME_GAPS = {
    ('Ascend910A', 'float16', 'short rows, column-broadcast grad'):
        'body 252.1 us against 50.2 us same-shape, 5.02x (V-bound)',
    ('Ascend910A', 'float32', 'short rows, column-broadcast grad'):
        'body 242.3 us against 59.0 us same-shape, 4.11x (V-bound)',
}

# PyTorch's OpInfo of the loss the drop-in stands in for (tests/torch/test_torch_opinfo.py runs its samples).
OPINFO = "nn.functional.l1_loss"

# Lines of the op's kernel rendered in float32 at 0cbe414, before the same-shape path had a class of its own
# (tests/op_kernel/test_same_shape_path.py: the same-shape path rendered alone is at most half of it).
RENDERED_LINES_BEFORE_SPLIT = 1773
# Where it is not, why (measured 2026-11-28; the test fails if the excess grows past 55% or vanishes).
SAME_SHAPE_OVER_HALF = "about 3% over half: compare.h's SignOfMasks and NegSign"
