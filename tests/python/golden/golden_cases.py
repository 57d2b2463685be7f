"""Seeded generator of valid calls for the golden-vs-PyTorch test.

Covers every reduction, fp32/fp16/bf16 and mixed dtypes, out_dtype overrides, broadcast patterns (0-d and [1]
grads, row/column broadcasts, rank 8), 0-d and empty tensors, NaN/Inf, huge and tiny/denormal values, beta in
{1, 0.5, tiny, 0}, log_target both ways, and non-contiguous, negative-stride and stride-0 inputs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from golden_oracle import NP_DTYPES

from lossgrad.registry import OPS as REGISTRY, Check, OutputShape, Promotion, get_op, op_part

OPS = tuple(REGISTRY)  # every registered op, in registry order (each op's seed is its position)
FLOATS = ("float32", "float16", "bfloat16")
PROFILES = ("normal", "normal", "normal", "grid", "special", "huge", "tiny")
BETAS = (1.0, 0.5, 2.0 ** -20, float(np.float32(1e-40)), 0.0)  # all exact float32 values; 1e-40 is subnormal
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2, "batchmean": 3}

_HUGE = {"float16": (65504.0, 60000.0, 3e4), "float32": (3e38, 3.4e38, 1e38), "bfloat16": (3e38, 3.38e38, 1e38)}
_TINY = {"float16": (6e-8, 1e-6, 3e-5), "float32": (1.4e-45, 1e-40, 1e-38), "bfloat16": (1e-40, 9.2e-41, 1e-38)}


@dataclass
class Case:
    ident: str
    op: str
    grad: np.ndarray
    self_: np.ndarray
    target: np.ndarray
    reduction: "str | int"
    out_dtype: str | None
    profile: str
    attrs: dict = field(default_factory=dict)
    optional: tuple = ()  # the op's optional inputs in aclnn's order (None: left out)

    @property
    def tensors(self) -> tuple:
        """The op's tensors in aclnn's order."""
        return (self.grad, self.self_, self.target, *self.optional)

    @property
    def reduction_label(self) -> str:
        if isinstance(self.reduction, str):
            return self.reduction
        return {v: k for k, v in REDUCTIONS.items()}[self.reduction]

    def golden_kwargs(self) -> dict:
        return {"out_dtype": self.out_dtype, **self.attrs}


# -- shapes -------------------------------------------------------------------------------------------------------

def _full_shape(rng: np.random.Generator) -> tuple[int, ...]:
    rank = int(rng.choice(9, p=[.08, .14, .2, .18, .12, .08, .06, .06, .08]))
    hi = 5 if rank <= 3 else (3 if rank <= 5 else 2)
    return tuple(int(x) for x in rng.integers(1, hi + 1, size=rank))


def _derive(full: tuple[int, ...], rng: np.random.Generator, p_one: float = 0.3) -> tuple[int, ...]:
    """A shape that broadcasts to `full`: some leading dims dropped, some dims set to 1."""
    drop = int(rng.integers(0, len(full) + 1)) if rng.random() < 0.3 else 0
    return tuple(1 if rng.random() < p_one else d for d in full[drop:])


def _pointwise_shapes(rng: np.random.Generator, empty: bool) -> tuple[tuple[int, ...], ...]:
    full = _full_shape(rng)
    if empty:
        full = full if full else (1,)
        axis = int(rng.integers(0, len(full)))
        full = full[:axis] + (0,) + full[axis + 1:]
    pattern = rng.choice(["same", "scalar_grad", "one_grad", "rowcol", "random", "grad_bigger"])
    if pattern == "same":
        return full, full, full
    if pattern == "scalar_grad":
        return (), full, _derive(full, rng, 0.2)
    if pattern == "one_grad":
        return (1,), full, _derive(full, rng, 0.2)
    if pattern == "rowcol" and len(full) >= 2:
        return full, full[:-1] + (1,), full[:-2] + (1, full[-1])
    if pattern == "grad_bigger":
        return full, _derive(full, rng, 0.5), _derive(full, rng, 0.5)
    return _derive(full, rng), _derive(full, rng), _derive(full, rng)


def _kl_shapes(rng: np.random.Generator, empty: str) -> tuple[tuple[int, ...], ...]:
    full = _full_shape(rng)
    pattern = rng.choice(["same", "reduce_rows", "dim0", "random", "lead"])
    if pattern == "reduce_rows" and len(full) >= 2:
        s, t = full[:-1] + (1,), full
    elif pattern == "dim0" and full:
        s, t = (1,) + full[1:], full        # batchmean: aclnn divides by target's dim 0, torch by self's
    elif pattern == "lead" and full:
        s, t = full[1:], full               # self lacks the leading dims
    elif pattern == "random":
        s, t = _derive(full, rng), _derive(full, rng)
    else:
        s = t = full
    if empty == "self":  # a zero last dim in self; target keeps 1 there so the pair still broadcasts
        s = (s[:-1] if s else ()) + (0,)
        t = t[:-1] + (1,) if t else t
    elif empty == "target":  # a zero leading dim only target has: self stays non-empty
        t, s = ((0,) + t, s) if len(t) < 8 else ((0,) + t[1:], s[-7:])
    st = tuple(np.broadcast_shapes(s, t))
    g_pattern = rng.choice(["same", "scalar", "one", "derived"])
    if g_pattern == "scalar":
        g = ()
    elif g_pattern == "one" and st:
        g = (1,)
    elif g_pattern == "derived":
        g = _derive(st, rng)
    else:
        g = st
    return g, s, t


# -- values -------------------------------------------------------------------------------------------------------

def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, profile: str) -> np.ndarray:
    n = math.prod(shape)
    if dtype == "int32":
        return rng.integers(-100, 101, size=shape).astype(np.int32)
    if rng.random() < 0.5:
        v = rng.uniform(-5.0, 5.0, size=n)
    else:
        v = rng.normal(rng.uniform(-5, 5), rng.uniform(0.1, 2.0), size=n)
    if profile == "grid":  # equal pairs and |x| == beta boundaries
        v = rng.choice([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], size=n)
    elif profile == "special":
        v = np.where(rng.random(n) < 0.2, rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=n), v)
    elif profile == "huge":
        big = np.array(_HUGE[dtype])
        v = np.where(rng.random(n) < 0.6, rng.choice(np.concatenate([big, -big]), size=n), v)
    elif profile == "tiny":
        small = np.array(_TINY[dtype])
        v = np.where(rng.random(n) < 0.6, rng.choice(np.concatenate([small, -small, [0.0]]), size=n), v)
    return _cast(v.reshape(shape), dtype)


def _cast(v: np.ndarray, dtype: str) -> np.ndarray:
    with np.errstate(over="ignore"):
        if dtype == "bfloat16":
            return v.astype(np.float32).astype(NP_DTYPES[dtype])
        return v.astype(NP_DTYPES[dtype])


def _layout(rng: np.random.Generator, a: np.ndarray) -> np.ndarray:
    """The same values in a different memory layout (non-contiguous, reversed, Fortran, stride-0)."""
    kind = rng.choice(["contig", "contig", "strided", "reversed", "fortran", "stride0"])
    if a.ndim == 0 or a.size == 0 or kind == "contig":
        return a
    if kind == "strided":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        big[..., ::2] = a
        return big[..., ::2]
    if kind == "reversed":
        return np.flip(np.flip(a).copy())
    if kind == "fortran":
        return np.asfortranarray(a)
    axis = int(rng.integers(0, a.ndim))  # repeat one slice along an axis through a stride-0 view
    return np.broadcast_to(np.take(a, [0], axis=axis), a.shape)


# -- cases --------------------------------------------------------------------------------------------------------

def _dtypes(rng: np.random.Generator, op: str) -> tuple[str, str, str]:
    if get_op(op).promotion is Promotion.SAME_AS_SELF:  # no promotion: one dtype for all three
        return (str(rng.choice(FLOATS)),) * 3  # type: ignore[return-value]
    # the op's test facts say which dtype mixes it accepts (an integer input only where aclnn promotes without
    # checking each input, ops_semantics §1.2)
    mode = rng.choice(list(getattr(op_part(op, "test_facts"), "DTYPE_MODES", ("same", "mixed"))))
    if mode == "same":
        return (str(rng.choice(FLOATS)),) * 3  # type: ignore[return-value]
    picks = [str(x) for x in rng.choice(FLOATS, size=3)]
    if mode == "int":
        picks[int(rng.integers(0, 3))] = "int32"
    return picks[0], picks[1], picks[2]


def _reduction(rng: np.random.Generator, op: str) -> "str | int":
    names = [r.name.lower() for r in get_op(op).reductions]
    name = str(rng.choice(names))
    return REDUCTIONS[name] if rng.random() < 0.3 else name


def _case(rng: np.random.Generator, op: str, index: int) -> Case:
    profile = str(rng.choice(PROFILES))
    dts = _dtypes(rng, op)
    reduction = _reduction(rng, op)
    empty_roll = rng.random()
    if get_op(op).reduced_onto:  # out has self's (target's) shape: the other's sum is reduced onto it
        empty = "self" if empty_roll < 0.04 else ("target" if empty_roll < 0.08 else "")
        g, s, t = _kl_shapes(rng, empty)
        if get_op(op).reduced_onto == "target":  # the same shapes with self and target traded
            s, t = t, s
        st = tuple(np.broadcast_shapes(s, t))
        if math.prod(s) and not math.prod(st) and reduction in ("mean", 1, "batchmean", 3):
            reduction = "sum"  # a mean over an empty space is aclnn's tiling error, tested separately
    else:
        g, s, t = _pointwise_shapes(rng, empty_roll < 0.06)
        if get_op(op).output_shape is OutputShape.SELF_ABSORBING:  # BCE: the others broadcast into self
            s = tuple(np.broadcast_shapes(g, s, t))
            if Check.TARGET_IS_SELF in get_op(op).checks:  # BCEWithLogits: target is self's shape
                t = s
    arrays = []
    for shape, dtype in zip((g, s, t), dts):
        # huge targets under log_target overflow exp() on purpose; keep the prob low elsewhere
        arrays.append(_layout(rng, _values(rng, shape, dtype, profile)))
    out_dtype = None if rng.random() < 0.6 else str(rng.choice(FLOATS))
    if out_dtype and Check.OUT_TARGET_DTYPE in get_op(op).checks:
        out_dtype = dts[2]  # the only out dtype aclnn accepts: target's
    attrs = {a.name: _attr(rng, a) for a in get_op(op).attrs}
    fixup = getattr(op_part(op, "test_facts"), "fix_sample", None)  # the op's own adjustment of drawn values
    for i, values in (fixup(rng, (g, s, t), dts, attrs, profile) if fixup else {}).items():
        arrays[i] = _cast(values, dts[i])
    optional = []
    for _ in get_op(op).inputs[3:]:  # drawn after the others: an op without one draws as before
        if rng.random() < 0.4:
            optional.append(None)
            continue
        shape = _derive(s, rng) if rng.random() < 0.5 else s
        optional.append(_layout(rng, _values(rng, shape, dts[1] if rng.random() < 0.7 else str(rng.choice(
            FLOATS[:2])), profile)))
    ident = f"{op}-{index}-{profile}-{'/'.join(dts)}-{reduction}"
    return Case(ident, op, arrays[0], arrays[1], arrays[2], reduction, out_dtype, profile, attrs, tuple(optional))


def _attr(rng: np.random.Generator, attr) -> "float | bool":
    """A value for an attribute, from its declaration: a bounded float from BETAS, a bool by a coin."""
    if attr.kernel_type == "Bool":
        return bool(rng.random() < 0.5)
    return float(rng.choice(BETAS))


@lru_cache(maxsize=None)
def generate(op: str, count: int, seed: int = 20240611) -> tuple[Case, ...]:
    rng = np.random.default_rng([seed, OPS.index(op)])
    return tuple(_case(rng, op, i) for i in range(count))
