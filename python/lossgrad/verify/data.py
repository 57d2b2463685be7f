"""Input values for verification cases, by named distribution (seeded, reproducible)."""
from __future__ import annotations

import numpy as np

from ..dtypes import DType, parse
from ..validation import broadcast_shapes
from .cases import Case

_MAX_FINITE = {DType.FLOAT32: 3.0e38, DType.BFLOAT16: 3.0e38, DType.FLOAT16: 65000.0}
_TINY = {DType.FLOAT32: 1.4e-45, DType.BFLOAT16: 9.2e-41, DType.FLOAT16: 6.0e-8}


def _draw(rng: np.random.Generator, shape: tuple[int, ...], values: str, dtype: DType) -> np.ndarray:
    if values == "normal":
        return rng.normal(rng.uniform(-5, 5), rng.uniform(0.1, 2), shape)
    if values == "ties":  # few distinct values: self == target often (sign(0), SmoothL1's x == 0)
        return rng.integers(-2, 3, shape).astype(np.float64)
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


def make_inputs(case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """grad, self, target for the case. KL draws probabilities (or log-probabilities) for target and a positive
    upstream gradient; when KL sums over broadcast axes, every value range keeps the contributions of one sign, so
    the sums do not cancel and the standard's relative error stays meaningful (a cancelling float32 sum has no
    relative accuracy, in any implementation)."""
    rng = np.random.default_rng(case.seed)
    sums = case.log_target is not None and _kl_sums(case)
    out = []
    for role, shape, label in zip(("grad", "self", "target"), case.shapes, case.dtypes[:3]):
        d = parse(label)
        x = _draw(rng, shape, case.values, d)
        if case.log_target is not None and case.values in ("uniform", "normal"):
            if role == "target":
                x = rng.uniform(-5, 2, shape) if case.log_target else rng.uniform(0, 1, shape)
            elif role == "grad":
                x = rng.uniform(0.5, 2, shape)
        elif sums and (role == "grad" or (role == "target" and not case.log_target)):
            x = np.abs(x)
        out.append(np.asarray(x).astype(d.np_dtype))
    return out[0], out[1], out[2]
