"""The NumPy golden model: every op's loss backward (lossgrad.golden.<op name>), computed independently of the kernels.

Every entry point validates first (`lossgrad.validation.validate`, so invalid calls raise `LossGradError` with the
same codes as the kernels) and then evaluates the validated `Call`. Per-op facts (reduction coefficient and divisor,
output shape, empty rule, dtype promotion) come from the Call and the registry; each op's per-element formulas
are its folder's golden.py (`formulas`; `elementwise.py` holds what they share).

Two evaluation modes (`compute=`):
- "float64" (default): the exact input values in float64, rounded once (half to even) to the output dtype.
- "float32": the dtype-faithful mode. Inputs are upcast to float32 and evaluated in float32 in aclnn's kernel
  operation order; the result is rounded to the dtype aclnn's kernel writes it in (`aclnn_kernel_dtype`; KL: each
  term, then their sum over the broadcast axes, taken exactly in float64, as aclnn's ReduceSum does), then to the
  output dtype. It reproduces float32 and 16-bit intermediate overflow, so kernels that follow aclnn's dtypes match
  it at NaN/Inf.
  On a part in saturation mode (socs.py overflow_mode: 310P and Atlas 910, per CANN's aclrtFloatOverflowMode), a
  computed float16/bfloat16 result saturates as the device's does (NaN -> 0, +-Inf -> +-MAX; the output Casts);
  comparisons and selects move values only. Whether a float32 result saturates too is a question public sources
  leave open (docs/twin.md, "Questions the sources leave open"): compute_call answers it as the twin's primary
  answer (saturated: MSE with a NaN input gives 0 there, NaN on A2/A3/950), and `undetermined` marks the outputs
  whose value depends on the answer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .. import dtypes as dt
from ..dtypes import DType
from ..registry import OPS, OpSpec, op_part
from ..socs import Soc
from ..validation import Call, validate
from . import elementwise as ew
from ..wrappers import describe, public_function
from .rounding import round_to

__all__ = ["compute_call", "undetermined", "sum_slack", "aclnn_kernel_dtype", "round_to", "COMPUTE_MODES",
           "formulas"]

COMPUTE_MODES = ("float64", "float32")



def formulas(op: "str | OpSpec") -> tuple[ew.Elementwise, ew.Elementwise]:
    """The op's (float64, float32) formulas: f64 and f32 of its folder's golden.py."""
    part = op_part(op, "golden")
    return part.f64, part.f32

_WORK_DTYPE = {"float64": np.dtype(np.float64), "float32": np.dtype(np.float32)}


def _op_input(call: Call, role: str, arr: np.ndarray) -> np.ndarray:
    """An input's values as the op sees them, in float64. Float inputs are exact; an integer or bool input is first
    cast to the promoted dtype, as the op_api does before the kernel (only the promoting ops accept such inputs)."""
    values = np.asarray(arr).astype(np.float64)
    if call.dtypes[role].is_float:
        return values
    return round_to(values, call.promoted).astype(np.float64)


def _sum_to_shape(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum the axes along which `shape` was broadcast up to `values.shape` (leading extra axes, size-1 axes)."""
    lead = values.ndim - len(shape)
    if lead:
        values = values.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, (n, m) in enumerate(zip(shape, values.shape)) if n == 1 and m != 1)
    if axes:
        values = values.sum(axis=axes, keepdims=True)
    return values.reshape(shape)


def saturation_mode(call: Call) -> bool:
    """Whether the call's part computes in saturation mode (socs.py Arch.overflow_mode)."""
    return call.soc.arch.overflow_mode.value == "saturation"


def _round_sat(values: np.ndarray, dtype: DType, sat16: bool, sat32: bool) -> np.ndarray:
    """round_to, then (saturation mode) the conversion's Inf -> +-MAX, NaN -> 0: for a 16-bit result `sat16`, for a
    float32 one `sat32` (the open question's answer)."""
    out = round_to(values, dtype)
    if not dtype.is_float:
        return out
    return ew.saturate(out) if (sat16 if dtype.itemsize == 2 else sat32) else out


def _check_mode(compute: str) -> None:
    if compute not in _WORK_DTYPE:
        raise ValueError(f"compute: expected one of {', '.join(COMPUTE_MODES)}, got {compute!r}")


def aclnn_kernel_dtype(call: Call) -> DType:
    """The dtype aclnn's own kernel writes its result in (and KL's ReduceSum sums into), before the op_api Casts it to
    out's dtype: registry aclnn_compute ("promoted", "self", KL's "float32_unless_all_float16", "float32")."""
    rule = call.op.aclnn_compute
    if rule == "promoted":
        return call.promoted
    if rule == "self":
        return call.dtypes["self"]
    if rule == "float32":
        return DType.FLOAT32
    if rule == "float32_unless_all_float16":
        return DType.FLOAT16 if all(d is DType.FLOAT16 for d in call.in_dtypes) else DType.FLOAT32
    raise ValueError(f"{call.op.name}: unknown aclnn_compute {rule!r}")


ANSWERS = ("primary", "alternative")


def compute_call(call: Call, compute: str = "float64", answer: str = "primary") -> np.ndarray:
    """Evaluate an already-validated Call; a new array of `call.out_shape` and `call.out_dtype`. In saturation mode
    a float32 Inf/NaN saturates (answer "primary", as the twin's primary answer) or stays IEEE ("alternative");
    `undetermined` marks where the answer matters."""
    _check_mode(compute)
    if answer not in ANSWERS:
        raise ValueError(f"answer: expected one of {', '.join(ANSWERS)}, got {answer!r}")
    sat = compute == "float32" and saturation_mode(call)
    return _evaluate(call, compute, sat, sat and answer == "primary")


def undetermined(call: Call, compute: str = "float32") -> np.ndarray | None:
    """The output elements whose device value public sources leave open, or None where none can be: in float32
    mode on a saturation-mode part, those that differ between a float32 Inf/NaN saturated and kept (IEEE)."""
    _check_mode(compute)
    if compute != "float32" or not saturation_mode(call) or not call.launch:
        return None
    primary, other = _evaluate(call, compute, True, True), _evaluate(call, compute, True, False)
    a, b = primary.astype(np.float64), other.astype(np.float64)
    with np.errstate(invalid="ignore"):
        same = ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))
    return ~same


def _evaluate(call: Call, compute: str, sat16: bool, sat32: bool) -> np.ndarray:
    """compute_call with the saturation of 16-bit and of float32 results (the float32 mode) chosen."""
    out_np = call.out_dtype.np_dtype
    if not call.launch:  # aclnn returns early; an empty output, or zeros when the summed space is empty
        return np.zeros(call.out_shape, dtype=out_np)
    values = _terms(call, compute, sat16, sat32)
    reduced = tuple(call.iter_shape) != tuple(call.out_shape)
    with np.errstate(all="ignore"):
        if reduced:
            # The sum here is exact (float64) where aclnn's ReduceSum accumulates in float32: the two round apart
            # only when the float32 partial sums lose bits that decide the final rounding (docs/semantics.md,
            # "Intermediate roundings"; sum_slack bounds how far).
            values = _sum_to_shape(values.astype(np.float64), tuple(call.out_shape))
            if compute == "float32":
                values = _round_sat(values, aclnn_kernel_dtype(call), sat16, sat32)
        return np.array(_round_sat(values, call.out_dtype, sat16, sat32), order="C")  # ascontiguousarray: 0-d -> 1-d


def _terms(call: Call, compute: str, sat16: bool, sat32: bool) -> np.ndarray:
    """The op's formula over the iteration space: the output itself, or (KL, KlDivTarget) the terms its reduction
    sums; in float32 mode rounded to the dtype aclnn's kernel writes them in."""
    work = _WORK_DTYPE[compute]
    f64, f32 = formulas(call.op)
    formula = f64 if compute == "float64" else f32
    # The op's inputs in role order, each broadcast to the iteration space; None for an absent optional one.
    inputs: list[np.ndarray | None] = [
        np.broadcast_to(_op_input(call, role, call.inputs[role]).astype(work), call.iter_shape)
        if role in call.inputs else None for role in call.op.roles]
    if sat32:  # a 16-bit input's Cast to float32 is a conversion: its NaN becomes 0 (float32 inputs are only moved)
        inputs = [ew.saturate(x) if x is not None and call.dtypes[role].is_float and call.dtypes[role].itemsize == 2
                  else x for x, role in zip(inputs, call.op.roles)]
    c = work.type(call.coefficient)  # float32 mode: the kernels hold the coefficient as one float32 scalar
    with np.errstate(all="ignore"):
        values = formula(*inputs, c, call.attrs, sat=True) if sat32 else formula(*inputs, c, call.attrs)
        if compute == "float32":
            # aclnn's kernel writes its result (KL: every term) in its kernel dtype, so a float16 value beyond
            # +-65504 is +-Inf there; then the op_api Casts to out's dtype.
            values = _round_sat(values.astype(np.float64), aclnn_kernel_dtype(call), sat16, sat32)
    return values


FLOAT32_UNIT_ROUNDOFF = 2.0 ** -24
FLOAT32_MAX = float(np.finfo(np.float32).max)


def sum_slack(call: Call) -> np.ndarray | None:
    """How far a float32 sum of each output element's terms may land from their exact sum, in any order of
    additions: gamma_(n-1) * sum|t_i| with gamma_k = k u / (1 - k u), u = 2^-24 and n terms per element (Higham,
    Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. (4.4): every summation order obeys it, aclnn's
    ReduceSum as the kernels'). Inf where the finite terms' magnitudes sum beyond float32's range: partial sums may
    then overflow to either infinity, and the result (+-Inf or NaN) depends on the order. None for a call that sums
    nothing (its output is each term itself). The float32 mode's terms, on the primary answer (golden.undetermined)."""
    if not call.launch or tuple(call.iter_shape) == tuple(call.out_shape):
        return None
    sat = saturation_mode(call)
    terms = _terms(call, "float32", sat, sat)
    with np.errstate(all="ignore"):
        magnitude = _sum_to_shape(np.where(np.isfinite(terms), np.abs(terms.astype(np.float64)), 0.0),
                                  tuple(call.out_shape))
    n = max(1, int(np.prod(call.iter_shape)) // max(1, int(np.prod(call.out_shape))))
    k = (n - 1) * FLOAT32_UNIT_ROUNDOFF
    return np.where(magnitude < FLOAT32_MAX, magnitude * (k / (1 - k)), np.inf)


def _impl(op: OpSpec, tensors: tuple[Any, ...], reduction: Any, attrs: dict[str, Any] | None, *,
          out_dtype: "DType | str | np.dtype | None", soc: "str | Soc | None", compute: str) -> np.ndarray:
    _check_mode(compute)  # before validation, so a bad mode is reported even for an invalid call
    call = validate(op, *tensors, reduction, attrs, out_dtype=out_dtype, soc=soc)
    return compute_call(call, compute)


# lossgrad.golden.<op name> for every op of the registry.
FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    op.name: public_function(op, _impl, {"out_dtype": (None, "DType | str | np.dtype | None"),
                                         "soc": (None, "str | Soc | None"), "compute": ("float64", str)},
                             __name__, describe(op, "Golden (NumPy, independent of the kernels)"), returns=np.ndarray)
    for op in OPS.values()}
globals().update(FUNCTIONS)
__all__ += list(FUNCTIONS)

# <generated by `python -m lossgrad.generated` from the op folders: edit the folders, not this>
if TYPE_CHECKING:  # the functions made at import time (globals().update), as type checkers see them
    def l1_loss_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", *,
                         out_dtype: DType | str | np.dtype | None = None, soc: str | Soc | None = None,
                         compute: str = "float64") -> np.ndarray: ...
    def mse_loss_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", *,
                          out_dtype: DType | str | np.dtype | None = None, soc: str | Soc | None = None,
                          compute: str = "float64") -> np.ndarray: ...
    def smooth_l1_loss_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", beta: float = 1.0, *,
                                out_dtype: DType | str | np.dtype | None = None, soc: str | Soc | None = None,
                                compute: str = "float64") -> np.ndarray: ...
    def kl_div_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", log_target: bool = False, *,
                        out_dtype: DType | str | np.dtype | None = None, soc: str | Soc | None = None,
                        compute: str = "float64") -> np.ndarray: ...
    def soft_margin_loss_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean", *,
                                  out_dtype: DType | str | np.dtype | None = None, soc: str | Soc | None = None,
                                  compute: str = "float64") -> np.ndarray: ...
    def binary_cross_entropy_backward(grad_output: Any, self: Any, target: Any, weight: Any = None,
                                      reduction: Any = "mean", *, out_dtype: DType | str | np.dtype | None = None,
                                      soc: str | Soc | None = None, compute: str = "float64") -> np.ndarray: ...
    def binary_cross_entropy_with_logits_backward(grad_output: Any, self: Any, target: Any, weight: Any = None,
                                                  pos_weight: Any = None, reduction: Any = "mean", *,
                                                  out_dtype: DType | str | np.dtype | None = None,
                                                  soc: str | Soc | None = None,
                                                  compute: str = "float64") -> np.ndarray: ...
    def kl_div_target_backward(grad_output: Any, self: Any, target: Any, reduction: Any = "mean",
                               log_target: bool = False, *, out_dtype: DType | str | np.dtype | None = None,
                               soc: str | Soc | None = None, compute: str = "float64") -> np.ndarray: ...
# </generated>
