"""aclnnL1LossBackward: the test facts (lossgrad.verify.oracle and the tests read them). Independent of the golden."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...verify.oracle import pointwise_reference


def ORACLE(g: np.ndarray, s: np.ndarray, t: np.ndarray, reduction: str, attrs: Mapping[str, Any]) -> np.ndarray:
    """torch's L1 gradient; mean over the broadcast (as aclnn); a NaN self - target gives aclnn's sign 0."""
    import torch.nn.functional as F
    return pointwise_reference(g, s, t, reduction, lambda a, b, r: F.l1_loss(a, b, reduction=r), nan_x_to_zero=True)
