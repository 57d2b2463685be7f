"""aclnnBinaryCrossEntropyBackward: the test facts (lossgrad.verify.oracle and the tests read them). Independent of
the golden."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...verify.oracle import t64, torch_module

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def ORACLE(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, reduction: str,
           attrs: Mapping[str, Any]) -> np.ndarray:
    """torch's own backward kernel (aten::binary_cross_entropy_backward, float64: it takes self outside [0, 1],
    which torch's forward refuses) on the inputs broadcast into self's shape; mean divides by numel(self), as aclnn.
    torch clamps at the float64 1e-12, aclnn at the float32 one (4e-9 apart, relatively)."""
    torch = torch_module()
    shape = s.shape
    wide = lambda a: t64(np.broadcast_to(a, shape))  # noqa: E731
    out = torch.ops.aten.binary_cross_entropy_backward(wide(g), t64(s), wide(t), None if w is None else wide(w),
                                                       _REDUCTIONS[reduction])
    return out.numpy()

# The drop-in's tests against torch (tests/torch): BCE takes probabilities for both input and target, and torch's
# function refuses a target of another size than the input (a ValueError); aclnn has no target gradient, so the
# drop-in's is torch's own.
TORCH_INPUT = "probability"
TORCH_TARGET = "probability"
TORCH_SAME_SHAPE = True
TARGET_GRAD = "torch"

# The spec's row, restated here on purpose as an independent check of SPEC (tests/python/test_registry.py):
# (coefficient, mean divisor, batchmean divisor, kernel input protos, reduction validated, empty rule):
# new_ops_semantics §2.2-§2.5.
SPEC_ROW = (1.0, "OUTPUT_NUMEL", None, ("x", "y", "grad_output", "weight"), True, "SELF_SKIPS_SHAPES")

# UB buffers the compute body reads together in one binary instruction: they must sit at opposite bank phases
# (tests/python/tiling/test_ub_plan.py).
UB_APART = (("tmpA_", "tmpB_"),)

# PyTorch's OpInfo of the loss the drop-in stands in for (tests/torch/test_torch_opinfo.py runs its samples).
OPINFO = "nn.functional.binary_cross_entropy"

# Rows of ops-nn's case tables (opsnn_cases.csv) that aclnn's API refuses, with the reason: the TTK table tests the
# BinaryCrossEntropyGrad kernel, whose output is the broadcast of every input, while aclnn requires each input to
# broadcast into self (new_ops_semantics §2.3), so these get 161002 (tests/python/ops/test_opsnn_cases.py).
OPSNN_REFUSED = {
    "ttk/BinaryCrossEntropyGrad_fp32_fp16_ND_raNDom_000004": "self (5, 1) is smaller than the (5, 5) output",
}

# Hand-worked edge cases (docs/semantics.md's BCE decisions; tests/python/ops/test_edge_cases.py runs each on the
# twin and through both golden modes): (what, SoC, input dtype, out dtype or None, gradOutput, self, target,
# weight or None, reduction, the expected output). -1/1e-12 is -1e12 in float32 (the clamp's float32 constant).
_INF = float("inf")
EDGE_CASES = (
    ("s in {0, 1}, s != t: the clamped quotient", "Ascend910B1", "float32", None,
     [1.0], [0.0, 1.0], [1.0, 0.0], None, "none", [-1e12, 1e12]),
    ("the same in float16 overflows to Inf (Inf/NaN mode)", "Ascend910B1", "float16", None,
     [1.0], [0.0, 1.0], [1.0, 0.0], None, "none", [-_INF, _INF]),
    ("the same in float16 saturates on 310P", "Ascend310P3", "float16", None,
     [1.0], [0.0, 1.0], [1.0, 0.0], None, "none", [-65504.0, 65504.0]),
    ("the same on Atlas 910 (Duplicate + Max instead of Maxs)", "Ascend910A", "float16", None,
     [1.0], [0.0, 1.0], [1.0, 0.0], None, "none", [-65504.0, 65504.0]),
    ("a float32 out of float16 inputs keeps aclnn's float16 Inf", "Ascend950PR_9579", "float16", "float32",
     [1.0], [0.0, 1.0], [1.0, 0.0], None, "none", [-_INF, _INF]),
    ("s = t in {0, 1}: 0 / 1e-12 = 0 (torch float16: NaN)", "Ascend910B1", "float16", None,
     [1.0], [0.0, 1.0], [0.0, 1.0], None, "none", [0.0, 0.0]),
    ("s outside [0, 1]: s (1 - s) < 0 is clamped", "Ascend910B1", "float32", None,
     [1.0], [2.0, -1.0], [0.0, 0.0], None, "none", [2e12, -1e12]),
    ("s = Inf: Inf, and Inf * weight 0 = NaN", "Ascend950PR_9579", "float32", None,
     [1.0], [_INF, _INF], [0.0, 0.0], [1.0, 0.0], "none", [_INF, float("nan")]),
    ("mean over self's 4 elements, weight broadcast", "Ascend910B1", "float32", None,
     [2.0], [0.5, 0.5, 0.25, 0.25], [0.0, 1.0, 0.0, 1.0], [3.0], "mean",
     [3.0, -3.0, 2.0, -6.0]),
)

# Modelled body against the same-shape body (tests/op_kernel/test_time_bounds.py: 1.25x at 4 Mi elements;
# the causes, by SoC and pattern, are stated there): {(soc, dtype, pattern): measured}, 2026-11-27.
TIME_GAPS = {
    ('Ascend910A', 'float16', 'short rows, column-broadcast grad'):
        'body 250.6 us against 48.7 us same-shape, 5.15x (V-bound)',
    ('Ascend910A', 'float32', 'short rows, column-broadcast grad'):
        'body 240.6 us against 58.8 us same-shape, 4.09x (V-bound)',
}

# Lines of the op's kernel rendered in float32 at 0cbe414, before the same-shape path had a class of its own
# (tests/op_kernel/test_same_shape_path.py: the same-shape path rendered alone is at most half of it).
RENDERED_LINES_BEFORE_SPLIT = 1783
