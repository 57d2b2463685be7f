"""PyTorch as an independent oracle of the golden model: the four loss backwards through torch's CPU autograd in
float64, with the aclnn-vs-PyTorch differences handled explicitly (docs/semantics.md; the list is in
tests/python/golden/test_golden_vs_torch.py's docstring). Written independently of `lossgrad.golden`.

`lossgrad verify --fuzz` compares a sample of its calls' float64 golden with it when torch is installed;
tests/python/golden compares the golden with it on generated cases. `import lossgrad` never imports torch: this
module imports it on first use.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..registry import (KL_DIV_BACKWARD, L1_LOSS_BACKWARD, MSE_LOSS_BACKWARD, SMOOTH_L1_LOSS_BACKWARD,
                        get_op)


def _torch():
    import torch
    return torch


def _t64(a: np.ndarray):
    torch = _torch()
    return torch.from_numpy(np.array(a, dtype=np.float64, order="C"))  # ascontiguousarray would make 0-d 1-d


def _backward(loss_fn, leaf, grad, reduction: str, shape: tuple[int, ...], divisor: float | None = None) -> None:
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


def _pointwise_reference(op: str, g, s, t, reduction: str, beta: float) -> np.ndarray:
    torch = _torch()
    F = torch.nn.functional
    full = tuple(np.broadcast_shapes(g.shape, s.shape, t.shape))
    if math.prod(full) == 0:
        return np.zeros(full)
    # (ii) expand before the call: aclnn's output is per element of broadcast(grad, self, target), and L1's mean
    # divides by that numel, which is what torch's mean over the expanded loss does.
    leaf = _t64(s).expand(full).clone()
    target = _t64(t).expand(full).clone()
    spec = get_op(op)
    if spec is L1_LOSS_BACKWARD or (spec is SMOOTH_L1_LOSS_BACKWARD and beta == 0.0):
        # (v) aclnn's sign is two comparisons, so a NaN self - target (NaN input, Inf - Inf) gives sign 0. torch's
        # sgn(NaN) has changed across versions (pytorch#41245), so the oracle does not rely on it: those positions
        # get self = target = 0, whose L1 gradient is 0 * grad (still NaN for a NaN/Inf grad).
        nan_x = torch.isnan(leaf - target)
        leaf[nan_x] = 0.0
        target[nan_x] = 0.0
        # (iii) beta == 0: aclnn's function is L1's sign (0 at x == 0); torch's smooth_l1 kernel gives -1 there, so
        # the oracle uses torch's L1 gradient, as F.smooth_l1_loss itself does for beta == 0.
        fn = lambda r: F.l1_loss(leaf, target, reduction=r)  # noqa: E731
    elif spec is MSE_LOSS_BACKWARD:
        fn = lambda r: F.mse_loss(leaf, target, reduction=r)  # noqa: E731
    else:
        fn = lambda r: F.smooth_l1_loss(leaf, target, reduction=r, beta=beta)  # noqa: E731
    leaf.requires_grad_(True)
    _backward(fn, leaf, _t64(g), reduction, full)
    grad = leaf.grad.numpy()
    if reduction == "mean" and spec is not L1_LOSS_BACKWARD:
        # (i) MSE and SmoothL1 mean divide by numel(self) as passed, torch by numel of the expanded loss.
        grad = grad * (math.prod(full) / math.prod(s.shape))
    return grad


def _kl_reference(g, s, t, reduction: str, log_target: bool) -> np.ndarray:
    torch = _torch()
    F = torch.nn.functional
    st = tuple(np.broadcast_shapes(s.shape, t.shape))
    if math.prod(s.shape) == 0:
        return np.zeros(s.shape)
    # (iv) the leaf has self's shape, so autograd sums the contributions over the broadcast axes back to it.
    leaf = _t64(s).clone().requires_grad_(True)
    target = _t64(t)
    fn = lambda r: F.kl_div(leaf, target, reduction=r, log_target=log_target)  # noqa: E731
    # (iv) aclnn's batchmean divides by dim 0 of broadcast(self, target) (a 0-d space counts as [1]); torch's by
    # self.size(0). The oracle takes torch's sum and divides by aclnn's divisor.
    divisor = float(st[0] if st else 1) if reduction == "batchmean" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that kl_div 'mean' is not the math definition
        _backward(fn, leaf, _t64(g), reduction, st, divisor)
    return leaf.grad.numpy() if leaf.grad is not None else np.zeros(s.shape)


def torch_reference(op: str, g: np.ndarray, s: np.ndarray, t: np.ndarray, reduction: str, *, beta: float = 1.0,
                    log_target: bool = False) -> np.ndarray:
    """PyTorch float64 autograd gradient with respect to self, in aclnn's output shape (unrounded float64)."""
    if get_op(op) is KL_DIV_BACKWARD:
        return _kl_reference(g, s, t, reduction, log_target)
    return _pointwise_reference(op, g, s, t, reduction, beta)


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
    want = torch_reference(call.op.name, call.grad, call.self_, call.target, call.reduction.label,
                           beta=float(attrs.get("beta", 1.0)), log_target=bool(attrs.get("log_target", False)))
    with np.errstate(over="ignore"):  # rounding to a 16-bit dtype overflows to Inf exactly as the golden's does
        want = np.asarray(want, np.float64).astype(call.out_dtype.np_dtype)
    if want.shape != golden64.shape:
        return f"torch's gradient has shape {want.shape}, the golden's {golden64.shape}"
    cmp = compare(golden64, want, call.out_dtype, "experimental", small_values=True)
    return None if cmp.passed else f"the float64 golden differs from PyTorch's autograd: {cmp.describe()}"
