"""aclnnKlDivTargetBackward: the test facts (lossgrad.verify.oracle and the tests read them). Independent of the
golden."""
from __future__ import annotations

import math
import warnings
from typing import Any, Mapping

import numpy as np

from ...verify.oracle import backward_through, t64, torch_module


def ORACLE(g: np.ndarray, s: np.ndarray, t: np.ndarray, reduction: str, attrs: Mapping[str, Any]) -> np.ndarray:
    """torch's kl_div gradient with respect to target, taken per element of broadcast(self, target) (target
    materialised there, as aclnn's op_api does with BroadcastTo) and summed onto target's shape; batchmean by
    aclnn's divisor (dim 0 of broadcast(self, target); torch's is self.size(0)). Per element, because autograd of
    the broadcast loss sums (t - s) over self's axes before it multiplies by exp(t): with exp(t) = Inf and terms of
    both signs that is +-Inf where aclnn's per-element terms sum to NaN."""
    torch = torch_module()
    F = torch.nn.functional
    st = tuple(np.broadcast_shapes(s.shape, t.shape))
    if math.prod(s.shape) == 0:  # aclnn launches nothing; the gradient of a loss over no elements is 0
        return np.zeros(t.shape)
    leaf = t64(np.broadcast_to(t, st)).clone().requires_grad_(True)
    fn = lambda r: F.kl_div(t64(s), leaf, reduction=r, log_target=bool(attrs["log_target"]))  # noqa: E731
    divisor = float(st[0] if st else 1) if reduction == "batchmean" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that kl_div 'mean' is not the math definition
        backward_through(fn, leaf, t64(g), reduction, st, divisor)
    per_element = leaf.grad if leaf.grad is not None else torch.zeros(st, dtype=torch.float64)
    onto = t.shape if per_element.dim() == 0 or t.shape else (1,)  # sum_to_size cannot sum to 0-d itself
    grad = per_element.sum_to_size(onto).reshape(t.shape).numpy()
    if not attrs["log_target"]:
        # aclnn's g' * ln(t) is NaN for t < 0 even where g' = 0; torch's xlogy gradient, xlogy(g, t), is 0 there
        # (docs/semantics.md, KlDivTarget differences from PyTorch)
        with np.errstate(invalid="ignore"):  # a NaN target compares false: its NaN stays
            grad = np.where(t < 0, np.nan, grad)
    return grad


def fix_sample(rng: np.random.Generator, shapes: tuple[tuple[int, ...], ...], dtypes: tuple[str, ...],
               attrs: Mapping[str, Any], profile: str) -> dict[int, np.ndarray]:
    """Generated golden-vs-torch cases: ln needs a positive target (torch and aclnn give NaN otherwise, which the
    edge cases cover); under log_target a huge target overflows exp(), so it stays in [-100, 100]. In the "huge"
    profile self stays in [-100, 100] too: terms g' * s of ~1e75 summed over self's broadcast axes cancel beyond
    float64's precision, where the golden's and torch's float64 sums round apart and neither is exact (measured: a
    column whose exact sum is ~4e61, bfloat16 Inf, summed to 0 by one and to Inf by the other)."""
    fixed: dict[int, np.ndarray] = {}
    if profile == "huge" and dtypes[1] != "int32":
        fixed[1] = rng.uniform(-100, 100, size=shapes[1])
    if dtypes[2] == "int32":
        return fixed
    if attrs["log_target"]:
        if profile == "huge":
            fixed[2] = rng.uniform(-100, 100, size=shapes[2])
        return fixed
    fixed[2] = np.abs(rng.uniform(-2, 2, size=shapes[2])) + 0.01
    return fixed


# The spec's row, restated here on purpose as an independent check of SPEC (tests/python/test_registry.py):
# (coefficient, mean divisor, batchmean divisor, kernel input protos, reduction validated, empty rule):
# new_ops_semantics §4.2-§4.4 (the divisors: A2/A3's, the decision in docs/semantics.md).
SPEC_ROW = (1.0, "SELF_TARGET_NUMEL", "SELF_TARGET_DIM0", ("grad", "input", "target"), False, "SELF_ONLY")

# UB buffers the compute body reads together in one binary instruction: they must sit at opposite bank phases
# (tests/python/tiling/test_ub_plan.py).
UB_APART = (("acc_", "result_"), ("tmpA_", "result_"), ("tmpA_", "tmpB_"))

# The bank conflicts a same-shape call with reduction none may have on A2/A3 (tests/op_kernel/test_ub_banks.py), with
# why: each a vector instruction of the body (compute.h states those of mean and batchmean).
SAME_SHAPE_BANK_CONFLICTS = {
    "A = g' * s (logTarget false)": "grad and self share bank phase 1 (opspec.ROLES) and aclnn's order multiplies "
                                    "them; moving either to the other phase costs a whole pass, the conflict at most "
                                    "one (1 of the body's 7 instructions; none on the logTarget path)",
}

# Hand-worked edge cases (tests/python/ops/test_edge_cases.py runs each on the twin and both golden modes):
# (what, soc, dtype, out dtype, gradOutput, self, target, reduction, expected), log_target false.
_NAN = math.nan
EDGE_CASES = (
    ("t = 0: (g t) / t = 0 / 0 is NaN (aclnn's form of the +1, as PyTorch's xlogy gradient); t = 1: 0 - 0.5 + 1",
     "Ascend910B1", "float32", None, [1.0], [0.5], [0.0, 1.0], "none", [_NAN, 0.5]),
    ("t < 0: ln t is NaN", "Ascend950PR_9579", "float32", None, [1.0], [0.5], [-1.0], "none", [_NAN]),
    ("self [[0], [0.5]] broadcasts target [1, 1] to 2 x 2: the column sums 1 + 0.5", "Ascend910B1", "float32", None,
     [1.0], [[0.0], [0.5]], [1.0, 1.0], "sum", [1.5, 1.5]),
    ("mean divides by numel(broadcast(self, target)) = 4, not the 950 kernel's numel(self) = 2: g' = 0.25, "
     "0.25 + (0.25 - 0.125)", "Ascend950PR_9579", "float32", None,
     [1.0], [[0.0], [0.5]], [1.0, 1.0], "mean", [0.375, 0.375]),
    ("batchmean divides by dim 0 of the broadcast, 2: g' = 0.5, 0.5 + (0.5 - 0.25)", "Ascend910B1", "float16", None,
     [1.0], [[0.0], [0.5]], [1.0, 1.0], "batchmean", [0.75, 0.75]),
)

# Lines of the op's kernel rendered in float32 at 0cbe414, before the same-shape path had a class of its own
# (tests/op_kernel/test_same_shape_path.py: the same-shape path rendered alone is at most half of it).
RENDERED_LINES_BEFORE_SPLIT = 2180
