"""aclnnMseLossBackward: the test facts (lossgrad.verify.oracle and the tests read them). Independent of the golden."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...verify.oracle import pointwise_reference


def ORACLE(g: np.ndarray, s: np.ndarray, t: np.ndarray, reduction: str, attrs: Mapping[str, Any]) -> np.ndarray:
    """torch's MSE gradient; aclnn's mean divides by numel(self) as passed, torch's by the broadcast's."""
    import torch.nn.functional as F
    return pointwise_reference(g, s, t, reduction, lambda a, b, r: F.mse_loss(a, b, reduction=r),
                               self_numel_mean=True)

# The spec's row, restated here on purpose as an independent check of SPEC (tests/python/test_registry.py):
# (coefficient, mean divisor, batchmean divisor, kernel input protos, reduction validated, empty rule):
# ops_semantics §7, the spec's quick-comparison table.
SPEC_ROW = (2.0, "SELF_NUMEL", None, ("predict", "label", "dout"), True, "ANY_INPUT")


# Modelled body against the same-shape body (tests/op_kernel/test_time_bounds.py: 1.25x at 4 Mi elements;
# the causes, by SoC and pattern, are stated there): {(soc, dtype, pattern): measured}, 2026-11-27.
TIME_GAPS = {
    ('Ascend910A', 'float16', 'short rows, column-broadcast grad'):
        'body 225.6 us against 23.9 us same-shape, 9.43x (V-bound)',
    ('Ascend910A', 'float32', 'short rows, column-broadcast grad'):
        'body 215.6 us against 57.2 us same-shape, 3.77x (V-bound)',
}

# PyTorch's OpInfo of the loss the drop-in stands in for (tests/torch/test_torch_opinfo.py runs its samples).
OPINFO = "nn.functional.mse_loss"

# Lines of the op's kernel rendered in float32 at 0cbe414, before the same-shape path had a class of its own
# (tests/op_kernel/test_same_shape_path.py: the same-shape path rendered alone is at most half of it).
RENDERED_LINES_BEFORE_SPLIT = 1727
