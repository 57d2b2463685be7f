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
