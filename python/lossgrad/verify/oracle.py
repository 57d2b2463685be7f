"""PyTorch as an independent oracle of the golden model: each op's loss backward through torch's CPU autograd in float64
(its folder's test_facts.ORACLE), with the aclnn-vs-PyTorch differences handled explicitly (docs/semantics.md; the list
is in tests/python/golden/test_golden_vs_torch.py's docstring). Written independently of `lossgrad.golden`.

`lossgrad verify --fuzz` compares a sample of its calls' float64 golden with it when torch is installed;
tests/python/golden compares the golden with it on generated cases. `import lossgrad` never imports torch: this
module imports it on first use.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import ml_dtypes
import numpy as np

from ..registry import get_op, op_part


def torch_module():
    import torch
    return torch


def t64(a: np.ndarray):
    torch = torch_module()
    return torch.from_numpy(np.array(a, dtype=np.float64, order="C"))  # ascontiguousarray would make 0-d 1-d


def backward_through(loss_fn, leaf, grad, reduction: str, shape: tuple[int, ...], divisor: float | None = None) -> None:
    """Backward through `loss_fn(reduction)`. aclnn multiplies a non-scalar gradOutput elementwise even for reduced
    losses; torch needs a scalar then, so that case weights the unreduced loss by grad before reducing."""
    g_full = grad.expand(shape)
    if reduction == "none":
        loss_fn("none").backward(g_full)
        return
    torch_reduction = "sum" if divisor is not None else reduction
    if grad.numel() == 1:
        loss = loss_fn(torch_reduction)
        if divisor is not None:
            loss = loss / divisor
        loss.backward(grad.reshape(()))
        return
    weighted = loss_fn("none") * g_full
    loss = weighted.mean() if torch_reduction == "mean" else weighted.sum()
    if divisor is not None:
        loss = loss / divisor
    loss.backward()


def torch_reference(op: str, *args: Any, **attrs: Any) -> np.ndarray:
    """PyTorch float64 autograd gradient with respect to self, in aclnn's output shape (unrounded float64): the op
    folder's test_facts.ORACLE, with the op's attribute defaults for those not given. `args`: the op's tensors in
    aclnn's order (g, s, t, then an optional one, None when absent), then the reduction's name."""
    spec = get_op(op)
    n = len(spec.inputs)
    if len(args) != n + 1:
        raise TypeError(f"{spec.name}: expected its {n} tensors and the reduction, got {len(args)} arguments")
    values = {a.name: a.default for a in spec.attrs} | attrs
    return op_part(spec, "test_facts").ORACLE(*args[:n], args[n], values)


def torch_available() -> bool:
    """torch is installed (found without importing it)."""
    import importlib.util
    return importlib.util.find_spec("torch") is not None


def compare_with_torch(call, golden64: np.ndarray) -> str | None:
    """None when the float64 golden of a validated call agrees with PyTorch's float64 autograd by the precision
    standard of the output dtype (NaN/Inf at the same places); otherwise what differs. The golden's float64 result
    is rounded once to the output dtype; torch's is rounded the same way (NumPy's half-to-even conversion)."""
    from ..precision import compare

    attrs = dict(call.attrs)
    tensors = [call.inputs.get(i.role) for i in call.op.inputs]
    want64 = np.asarray(torch_reference(call.op.name, *tensors, call.reduction.label, **attrs), np.float64)
    with np.errstate(over="ignore"):  # beyond the dtype's range rounds to Inf, as the golden's rounding does
        want = want64.astype(call.out_dtype.np_dtype)
    if want.shape != golden64.shape:
        return f"torch's gradient has shape {want.shape}, the golden's {golden64.shape}"
    want = agree_at_overflow_ties(golden64, want64, want)
    cmp = compare(golden64, want, call.out_dtype, "experimental", small_values=True)
    return None if cmp.passed else f"the float64 golden differs from PyTorch's autograd: {cmp.describe()}"


def agree_at_overflow_ties(golden: np.ndarray, want64: np.ndarray, want: np.ndarray) -> np.ndarray:
    """`want` (torch's float64 gradient `want64` rounded to the output dtype), with the golden's value where torch's
    lies within 1e-12 of the dtype's overflow threshold (the midpoint between MAX and the next power of two) and the
    golden rounded to MAX or Inf of the same sign. There the last float64 bit, which the operation order decides
    (the golden's aclnn order, (x * c) * g, against torch's 2 * x * g / N), picks MAX or Inf: MSE float16, exactly
    -65520 in torch's order and -65519.99999999999 in aclnn's (the issue-22 soak, seed 1258793123)."""
    info = ml_dtypes.finfo(want.dtype)  # NumPy's finfo does not know bfloat16
    top = float(info.max)
    threshold = top + 2.0 ** (info.maxexp - 1 - info.nmant) / 2  # MAX plus half its spacing
    golden = np.asarray(golden)
    golden64 = golden.astype(np.float64)
    with np.errstate(invalid="ignore"):
        tie = np.isclose(np.abs(want64), threshold, rtol=1e-12, atol=0.0) & (np.abs(golden64) >= top) \
            & (np.sign(golden64) == np.sign(want64))
    if not tie.any():
        return want
    out = want.copy()
    out[tie] = golden[tie]
    return out


def pointwise_reference(g: np.ndarray, s: np.ndarray, t: np.ndarray, reduction: str,
                        loss: Callable[[Any, Any, str], Any], *, self_numel_mean: bool = False,
                        nan_x_to_zero: bool = False) -> np.ndarray:
    """The gradient of a pointwise loss(input, target, reduction) (torch functional) with respect to self, for a
    backward over broadcast(grad, self, target):
    (ii) self and target are expanded before the call: aclnn's output is per element of the broadcast, and a mean
    over the broadcast is what torch's mean over the expanded loss does;
    (i) `self_numel_mean`: the op's mean divides by numel(self) as passed (MSE, SmoothL1), torch's by the broadcast's;
    (v) `nan_x_to_zero`: aclnn's sign is two comparisons, so a NaN self - target (NaN input, Inf - Inf) gives sign 0.
    torch's sgn(NaN) has changed across versions (pytorch#41245), so those positions get self = target = 0, whose
    gradient is 0 * grad (still NaN for a NaN/Inf grad)."""
    torch = torch_module()
    full = tuple(np.broadcast_shapes(g.shape, s.shape, t.shape))
    if math.prod(full) == 0:
        return np.zeros(full)
    leaf = t64(s).expand(full).clone()
    target = t64(t).expand(full).clone()
    if nan_x_to_zero:
        nan_x = torch.isnan(leaf - target)
        leaf[nan_x] = 0.0
        target[nan_x] = 0.0
    leaf.requires_grad_(True)
    backward_through(lambda r: loss(leaf, target, r), leaf, t64(g), reduction, full)
    grad = leaf.grad.numpy()
    if reduction == "mean" and self_numel_mean:
        grad = grad * (math.prod(full) / math.prod(s.shape))
    return grad
