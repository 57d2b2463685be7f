"""The test facts: PyTorch's gradient as the oracle (mean over the broadcast, as aclnn's numel(out))."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...verify.oracle import pointwise_reference


def ORACLE(g: np.ndarray, s: np.ndarray, t: np.ndarray, reduction: str, attrs: Mapping[str, Any]) -> np.ndarray:
    import torch.nn.functional as F
    return pointwise_reference(g, s, t, reduction, lambda a, b, r: F.soft_margin_loss(a, b, reduction=r))

TARGET_GRAD = "none"  # torch: soft_margin_loss is not differentiable with respect to target (tests/torch)
TORCH_BROADCASTS_INPUT = False  # torch's forward refuses an input smaller than broadcast(input, target) (§1.7)

# The spec's row, restated here on purpose as an independent check of SPEC (tests/python/test_registry.py):
# (coefficient, mean divisor, batchmean divisor, kernel input protos, reduction validated, empty rule):
# new_ops_semantics §1.2-§1.5; reduction checked: our decision (§1.3, aclnn reads out of bounds).
SPEC_ROW = (1.0, "OUTPUT_NUMEL", None, ("predict", "label", "dout"), True, "ANY_INPUT")

# UB buffers the compute body reads together in one binary instruction: they must sit at opposite bank phases
# (tests/python/tiling/test_ub_plan.py).
UB_APART = (("tmpA_", "tmpB_"), ("tmpA_", "outQ_"), ("tmpA_", "result_"))


# Modelled body against the same-shape body (tests/op_kernel/test_time_bounds.py: 1.25x at 4 Mi elements;
# the causes, by SoC and pattern, are stated there): {(soc, dtype, pattern): measured}, 2026-11-27.
TIME_GAPS = {
    ('Ascend910A', 'float16', 'short rows, column-broadcast grad'):
        'body 250.6 us against 48.6 us same-shape, 5.15x (V-bound)',
    ('Ascend910A', 'float32', 'short rows, column-broadcast grad'):
        'body 240.5 us against 58.8 us same-shape, 4.09x (V-bound)',
}

# PyTorch's OpInfo of the loss the drop-in stands in for (tests/torch/test_torch_opinfo.py runs its samples).
OPINFO = "nn.functional.soft_margin_loss"

# Lines of the op's kernel rendered in float32 at 0cbe414, before the same-shape path had a class of its own
# (tests/op_kernel/test_same_shape_path.py: the same-shape path rendered alone is at most half of it).
RENDERED_LINES_BEFORE_SPLIT = 1744
