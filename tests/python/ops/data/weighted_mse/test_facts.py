"""The test op's test facts: PyTorch's gradient of MSE times the weight, independent of the golden."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...verify.oracle import pointwise_reference


def ORACLE(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, reduction: str,
           attrs: Mapping[str, Any]) -> np.ndarray:
    """torch's MSE gradient (a mean over the broadcast's elements) times the weight."""
    import torch.nn.functional as F
    full = np.broadcast_shapes(g.shape, s.shape, t.shape, *(() if w is None else (w.shape,)))
    grad = pointwise_reference(np.broadcast_to(g, full), s, t, reduction,
                               lambda a, b, r: F.mse_loss(a, b, reduction=r))
    return grad if w is None else grad * np.broadcast_to(w.astype(np.float64), full)


SPEC_ROW = (2.0, "OUTPUT_NUMEL", None, ("predict", "label", "dout", "weight"), True, "ANY_INPUT")
