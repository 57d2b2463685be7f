"""Input values for verification cases, by named distribution and memory layout (seeded, reproducible)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..dtypes import DType, parse
from ..registry import ROLES, get_op
from ..validation import broadcast_shapes
from .cases import LAYOUTS, VALUE_KINDS, Case

_MAX_FINITE = {DType.FLOAT32: 3.0e38, DType.BFLOAT16: 3.0e38, DType.FLOAT16: 65000.0}
_TINY = {DType.FLOAT32: 1.4e-45, DType.BFLOAT16: 9.2e-41, DType.FLOAT16: 6.0e-8}
# "scaled": normal values times 2**k, k drawn once per input within what the dtype keeps normal and finite.
_SCALE_EXP = {DType.FLOAT32: 100, DType.BFLOAT16: 100, DType.FLOAT16: 12}


def _draw(rng: np.random.Generator, shape: tuple[int, ...], values: str, dtype: DType) -> np.ndarray:
    if values == "normal":
        return rng.normal(rng.uniform(-5, 5), rng.uniform(0.1, 2), shape)
    if values == "ties":  # few distinct values: self == target often (sign(0), SmoothL1's x == 0)
        return rng.integers(-2, 3, shape).astype(np.float64)
    if values == "zeros":  # signed zeros among ties: sign(+-0 - +-0), 0 * Inf, -0 results
        return rng.choice([-0.0, 0.0, -0.0, 0.0, -1.0, 1.0], shape)
    if values == "scaled":
        k = int(rng.integers(-_SCALE_EXP[dtype], _SCALE_EXP[dtype] + 1))
        return rng.normal(0.0, 1.0, shape) * 2.0 ** k
    if values == "huge":
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.0, shape) * _MAX_FINITE[dtype]
    if values == "denormal":
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(1, 100, shape) * _TINY[dtype]
    x = rng.uniform(-5, 5, shape)
    if values == "special":
        mask = rng.random(shape) < 0.1
        x = np.where(mask, rng.choice([np.nan, np.inf, -np.inf], shape), x)
    return x


def _kl_sums(case: Case) -> bool:
    """KL with self broadcast against target: the output sums contributions over the broadcast axes."""
    full = broadcast_shapes(case.shapes[1], case.shapes[2])
    return full is not None and tuple(case.shapes[1]) != full


def layout(x: np.ndarray, kind: str) -> np.ndarray:
    """`x` (C-contiguous) as an array of the same shape and values laid out as `kind` says (cases.LAYOUTS): "c" as
    it is, "s" every other element of a twice-as-wide last axis, "n" negative strides on every axis, "t" its axes in
    reversed memory order, "b" a read-only stride-0 view along its first axis of extent > 1 (taking the values of
    index 0 there: the one layout that changes values). A 0-d or single-element array has one layout."""
    if kind not in LAYOUTS:
        raise ValueError(f"layout {kind!r}: expected one of {', '.join(LAYOUTS)}")
    if kind == "c" or x.ndim == 0:
        return x
    if kind == "s":
        wide = np.empty(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        view = wide[..., ::2]
    elif kind == "n":
        view = np.empty(x.shape, x.dtype)[(slice(None, None, -1),) * x.ndim]
    elif kind == "t":
        view = np.empty(x.shape[::-1], x.dtype).T
    else:
        axes = [i for i, n in enumerate(x.shape) if n > 1]
        if not axes:
            return x
        first = np.take(x, [0], axis=axes[0])
        return np.broadcast_to(first, x.shape)
    view[...] = x
    return view


def make_inputs(case: Case) -> tuple[np.ndarray | None, ...]:
    """The case's tensors in aclnn's order (gradOutput, self, target, then an optional one: None when absent). KL
    draws probabilities (or log-probabilities) for target and a positive
    upstream gradient; when KL sums over broadcast axes, every value range keeps the contributions of one sign, so
    the sums do not cancel and the standard's relative error stays meaningful (a cancelling float32 sum has no
    relative accuracy, in any implementation). Each input is then laid out as the case says."""
    rng = np.random.default_rng(case.seed)
    sums = case.log_target is not None and _kl_sums(case)
    out = []
    roles = [i.role for i in get_op(case.op).inputs] if case.op else [r.name for r in ROLES[:len(case.shapes)]]
    for role, shape, label, kind in zip(roles, case.shapes, case.dtypes[:-1], case.layouts):
        if shape is None:  # an absent optional input draws nothing: the others' values stay those of the call without
            out.append(None)
            continue
        d = parse(label)
        x = _draw(rng, shape, case.values, d)
        if case.log_target is not None and case.values in ("uniform", "normal"):
            if role == "target":
                x = rng.uniform(-5, 2, shape) if case.log_target else rng.uniform(0, 1, shape)
            elif role == "grad":
                x = rng.uniform(0.5, 2, shape)
        elif sums and (role == "grad" or (role == "target" and not case.log_target)):
            x = np.abs(x)
        out.append(layout(np.ascontiguousarray(np.asarray(x).astype(d.np_dtype)), kind))
    return tuple(out)


def inputs(shapes: "Sequence[Sequence[int] | None]", dtypes: "str | Sequence[str]" = "float32",
           values: str = "uniform", seed: int = 0, *, layouts: str = "", kl: bool = False, log_target: bool = False,
           op: str = "") -> tuple[np.ndarray | None, ...]:
    """The tensors (grad, self, target, then an optional one, None for a None shape) exactly as a verification case
    with these fields draws them (`kl`: KL's value rules, with `log_target`; `op`: an op with an optional input). The
    fuzz search's one-line reproducers call it:
    `lossgrad.l1_loss_backward(*lossgrad.verify.inputs(((), (5, 1, 12), (39, 1, 13, 12)), "float16", "normal", 7),
    "mean", soc="Ascend910B1", backend="twin")`."""
    if values not in VALUE_KINDS:
        raise ValueError(f"values {values!r}: expected one of {', '.join(VALUE_KINDS)}")
    n = len(shapes)
    dts = (dtypes,) * n if isinstance(dtypes, str) else tuple(dtypes)[:n]
    name = get_op("kl_div").name if kl else (get_op(op).name if op else "")
    case = Case(op=name, soc="", shapes=tuple(None if s is None else tuple(s) for s in shapes),
                dtypes=(*("" if s is None else d for s, d in zip(shapes, dts)), dts[0]), reduction="none",
                log_target=log_target if kl else None, values=values, seed=seed, layouts=tuple(layouts))
    return make_inputs(case)
