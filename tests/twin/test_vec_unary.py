"""Abs, Exp, Ln, Sqrt, Rsqrt, Reciprocal, Relu, LeakyRelu and the logic ops And/Or/Not, level 2, on every
architecture and supported dtype, against NumPy."""
import numpy as np
import pytest

from _twin_api import Call, cases, dt, sample, scalar_bits
from _twin_expect import assert_same, f64, round_float, ulp_diff, saturated

N = 200

FUNCS = {"EXP": np.exp, "LN": np.log, "SQRT": np.sqrt, "RSQRT": lambda x: 1.0 / np.sqrt(x),
         "RECIP": lambda x: 1.0 / x}


def _data(op: str, d: np.dtype, rng) -> np.ndarray:
    if op == "EXP":
        x = sample(d, N, rng, lo=-12, hi=12, specials=True)
    elif op in ("LN", "SQRT", "RSQRT"):
        x = sample(d, N, rng, lo=1e-3, hi=5e4 if d.itemsize == 2 else 1e30)
        x[:6] = np.array([0.0, -0.0, -1.0, np.inf, np.nan, 1.0]).astype(d)
    else:
        x = sample(d, N, rng, lo=-1e4, hi=1e4, specials=True)
    return x


@pytest.mark.parametrize("arch,op,t", cases("EXP", "LN", "SQRT", "RSQRT", "RECIP"))
def test_transcendental(arch, op, t):
    """Within 1 ulp of the correctly rounded value (the twin rounds the double result once; hardware is not exact)."""
    d = dt(t)
    x = _data(op, d, np.random.default_rng(11))
    got = Call(op, t, count=N, a=x, out_bytes=N * d.itemsize).run_as(arch, d, N)
    with np.errstate(all="ignore"):
        want = saturated(arch, round_float(FUNCS[op](f64(x)), d))
    assert ulp_diff(got, want) <= 1, f"{op}<{t}>"
    if op in ("SQRT", "RECIP"):  # exactly rounded operations
        assert_same(got, want, f"{op}<{t}>")


@pytest.mark.parametrize("arch,op,t", cases("ABS", "RELU"))
def test_abs_relu(arch, op, t):
    d = dt(t)
    x = sample(d, N, np.random.default_rng(3), lo=-1e4, hi=1e4, specials=True)
    got = Call(op, t, count=N, a=x, out_bytes=N * d.itemsize).run_as(arch, d, N)
    if op == "ABS":
        # |x| clears the sign bit (NaN stays NaN); integers saturate (|INT_MIN| -> INT_MAX, the twin's choice)
        want = np.minimum(np.abs(x.astype(np.int64)), np.iinfo(d).max).astype(d) if d.kind == "i" else np.abs(x)
    else:  # dst = src < 0 ? 0 : src  (NaN and -0 pass through)
        want = np.where(f64(x) < 0, np.zeros(1, d), x).astype(d)
    assert_same(got, saturated(arch, want), f"{op}<{t}>")


@pytest.mark.parametrize("arch,op,t", cases("LEAKY"))
def test_leaky_relu(arch, op, t):
    d = dt(t)
    x = sample(d, N, np.random.default_rng(5), lo=-100, hi=100, specials=True)
    alpha = np.array([0.1]).astype(d)
    got = Call(op, t, count=N, a=x, scalar=scalar_bits(alpha[0], d), out_bytes=N * d.itemsize).run_as(arch, d, N)
    with np.errstate(invalid="ignore"):
        want = np.where(f64(x) < 0, round_float(f64(x) * f64(alpha)[0], d), x).astype(d)
    assert_same(got, saturated(arch, want), f"LeakyRelu<{t}>")


@pytest.mark.parametrize("arch,op,t", cases("AND", "OR", "NOT"))
def test_logic(arch, op, t):
    d = dt(t)
    rng = np.random.default_rng(9)
    info = np.iinfo(d)
    a = rng.integers(info.min, info.max, N, endpoint=True).astype(d)
    b = rng.integers(info.min, info.max, N, endpoint=True).astype(d)
    got = Call(op, t, count=N, a=a, b=b, out_bytes=N * 2).run_as(arch, d, N)
    want = {"AND": a & b, "OR": a | b, "NOT": ~a}[op]
    assert_same(got, want, f"{op}<{t}>")
