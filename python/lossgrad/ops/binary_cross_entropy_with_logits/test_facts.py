"""aclnnBinaryCrossEntropyWithLogitsBackward: the test facts (lossgrad.verify.oracle and the tests read them).
Independent of the golden."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...verify.oracle import t64, torch_module


def ORACLE(g: np.ndarray, s: np.ndarray, t: np.ndarray, w: np.ndarray | None, p: np.ndarray | None, reduction: str,
           attrs: Mapping[str, Any]) -> np.ndarray:
    """torch's own derivative (autograd through F.binary_cross_entropy_with_logits, float64) of the unreduced loss
    at the inputs broadcast into self's shape, with gradOutput times aclnn's coefficient (1/numel(self) for mean) as
    the cotangent. Without pos_weight torch differentiates to sigmoid - t, aclnn computes the pos-weight form with
    p = 1: equal in exact arithmetic, so within float64 rounding here."""
    torch = torch_module()
    shape = s.shape
    wide = lambda a: None if a is None else t64(np.broadcast_to(a, shape))  # noqa: E731
    x = t64(s).requires_grad_()
    loss = torch.nn.functional.binary_cross_entropy_with_logits(x, wide(t), weight=wide(w), pos_weight=wide(p),
                                                                reduction="none")
    c = 1.0 / max(1, s.size) if reduction == "mean" else 1.0
    (grad,) = torch.autograd.grad(loss, x, wide(g) * c)
    return grad.detach().numpy()

# The drop-in's tests against torch (tests/torch): the input is logits (any value), the target a probability, and
# torch's function refuses a target of another size than the input (a ValueError), as aclnn does (161002); aclnn has
# no target gradient, so the drop-in's is torch's own.
TORCH_TARGET = "probability"
TORCH_SAME_SHAPE = True
TARGET_GRAD = "torch"

# torch's eager loss with a bfloat16 input and a target of another dtype rounds the sigmoid to bfloat16 before the
# subtraction (3 bfloat16 ulps off the float64 gradient, measured 2026-11-28), where the kernel computes in float32:
# tests/torch/test_torch_edges.py's dtype mixes then require ours to be at least as close to the float64 gradient.
TORCH_MIXES_ROUND_EARLY = "torch rounds the sigmoid to a bfloat16 input's dtype in mixed-dtype calls"

# The spec's row, restated here on purpose as an independent check of SPEC (tests/python/test_registry.py):
# (coefficient, mean divisor, batchmean divisor, kernel input protos, reduction validated, empty rule):
# new_ops_semantics §3.2-§3.5.
SPEC_ROW = (1.0, "OUTPUT_NUMEL", None, ("predict", "target", "dout", "weight", "pos_weight"), True,
            "SELF_SKIPS_SHAPES")

# UB buffers the compute body reads together in one binary instruction: they must sit at opposite bank phases
# (tests/python/tiling/test_ub_plan.py).
UB_APART = (("tmpA_", "tmpB_"),)

# The precision standard against the float64 golden (tests/python/ops/test_opsnn_cases.py): aclnn's pos-weight form
# ((p t + 1) - t) sig - p t cancels where sig is close to p t / (p t + 1 - t), so aclnn's own float32 result is up to
# ~1e5 ulps (relative) off the exact one there (new_ops_semantics §3.2), though only ~1e-7 absolute. The kernels
# reproduce aclnn bit for bit (the float32-order check), so the float64 check is CANN's mixed standard (an element
# within T + T |g|), which judges those near-zero results by their absolute error.
F64_STANDARD = "mixed"

# PyTorch's OpInfo of the loss the drop-in stands in for (tests/torch/test_torch_opinfo.py runs its samples).
OPINFO = "nn.functional.binary_cross_entropy_with_logits"

# Hand-worked edge cases (docs/semantics.md's BCEWithLogits decisions; tests/python/ops/test_edge_cases.py runs each
# on the twin and through both golden modes): (what, SoC, input dtype, out dtype or None, gradOutput, self, target,
# weight or None, posWeight or None, reduction, the expected output).
_INF, _NAN = float("inf"), float("nan")
EDGE_CASES = (
    ("x = +inf: exp(-x) = 0, sig = 1: 0 at t = 1, g at t = 0", "Ascend910B1", "float32", None,
     [1.0], [_INF, _INF], [1.0, 0.0], None, None, "none", [0.0, 1.0]),
    ("x = -inf or -100: exp(-x) overflows to inf, sig = 1 / inf = 0", "Ascend950PR_9579", "float32", None,
     [1.0], [-_INF, -100.0, -_INF], [1.0, 1.0, 0.0], None, None, "none", [-1.0, -1.0, 0.0]),
    ("no posWeight: aclnn's ((t + 1) - t) * sig - t, not sig - t: (0.3f + 1) rounds to 1.29999995, so the factor "
     "is 1 - 2^-24 and x = 0 gives 0.49999997 - 0.3f = 0.19999996 (sig - t: 0.19999999)", "Ascend910B1",
     "float32", None, [1.0], [0.0], [0.3], None, None, "none", [0.19999996]),
    ("posWeight 3 at x = 0, t = 0.5: (1.5 + 1 - 0.5) * 0.5 - 1.5 = -0.5, times g 2 and weight 3", "Ascend910B1",
     "float32", None, [2.0], [0.0], [0.5], [3.0], [3.0], "none", [-3.0]),
    ("t outside [0, 1] is accepted: x = 0, t = 2: ((2 + 1) - 2) * 0.5 - 2 = -1.5", "Ascend310P3", "float16", None,
     [1.0], [0.0], [2.0], None, None, "none", [-1.5]),
    ("x = NaN gives NaN", "Ascend910B1", "float32", None,
     [1.0], [_NAN], [0.5], None, None, "none", [_NAN]),
    ("x = +inf, t = 1: 0, and 0 * weight inf = NaN", "Ascend950PR_9579", "float32", None,
     [1.0], [_INF, _INF], [1.0, 0.0], [_INF], None, "none", [_NAN, _INF]),
    ("mean over self's 4 elements, weight broadcast: x = 0, sig = 0.5, +-0.5 * 2 * 3 / 4", "Ascend910B1", "float32",
     None, [2.0], [0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0], [3.0], None, "mean", [0.75, -0.75, 0.75, -0.75]),
)

# Modelled body against the same-shape body (tests/op_kernel/test_time_bounds.py: 1.25x at 4 Mi elements;
# the causes, by SoC and pattern, are stated there): {(soc, dtype, pattern): measured}, 2026-11-28.
TIME_GAPS = {
    ('Ascend910A', 'float16', 'short rows, column-broadcast grad'):
        'body 258.1 us against 56.2 us same-shape, 4.60x (V-bound)',
    ('Ascend910A', 'float32', 'short rows, column-broadcast grad'):
        'body 248.2 us against 59.7 us same-shape, 4.15x (V-bound)',
}

# Lines of the op's kernel rendered in float32 at 0cbe414, before the same-shape path had a class of its own
# (tests/op_kernel/test_same_shape_path.py: the same-shape path rendered alone is at most half of it).
RENDERED_LINES_BEFORE_SPLIT = 1826
