"""Level-2 binary (Add, Sub, Mul, Div, Max, Min), tensor-scalar (Adds, Muls, Maxs, Mins) and Duplicate on every
architecture and every dtype each supports, against NumPy (float results rounded once from exact float64)."""
import zlib

import numpy as np
import pytest

from _twin_api import Call, cases, dt, sample, scalar_bits
from _twin_expect import assert_same, f64, round_float, saturated

N = 300  # not a multiple of any repeat size


def _expect(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = a.dtype
    if d.kind in "iu":
        x, y = a.astype(np.int64), b.astype(np.int64)
        r = {"ADD": x + y, "SUB": x - y, "MUL": x * y, "MAX": np.maximum(x, y), "MIN": np.minimum(x, y),
             "DIV": np.trunc(x / np.where(y == 0, 1, y)).astype(np.int64)}[op]
        return r.astype(d)
    x, y = f64(a), f64(b)
    with np.errstate(all="ignore"):
        r = {"ADD": x + y, "SUB": x - y, "MUL": x * y, "DIV": x / y, "MAX": np.maximum(x, y),
             "MIN": np.minimum(x, y)}[op]
    return round_float(r, d)


@pytest.mark.parametrize("arch,op,t", cases("ADD", "SUB", "MUL", "DIV", "MAX", "MIN"))
def test_binary(arch, op, t):
    d = dt(t)
    rng = np.random.default_rng(zlib.crc32(f"{arch}/{op}/{t}".encode()))  # reproducible (hash() is salted)
    small = d.kind in "iu" and d.itemsize <= 2
    lim = 90 if small and op == "MUL" else 1000
    a = sample(d, N, rng, lo=-lim if d.kind != "u" else 0, hi=lim, specials=op not in ("MAX", "MIN"))
    b = sample(d, N, rng, lo=-lim if d.kind != "u" else 1, hi=lim)
    if op == "DIV" and d.kind in "iu":
        b[b == 0] = 3
    if op in ("MAX", "MIN") and d.kind == "f":
        a[:4] = np.array([np.nan, 1.0, np.inf, -np.inf]).astype(d)  # NaN propagates
    got = Call(op, t, count=N, a=a, b=b, out_bytes=N * d.itemsize).run_as(arch, d, N)
    assert_same(got, saturated(arch, _expect(op, a, b)), f"{op}<{t}> arch {arch}")


@pytest.mark.parametrize("arch,op,t", cases("ADDS", "MULS", "MAXS", "MINS"))
def test_scalar(arch, op, t):
    d = dt(t)
    rng = np.random.default_rng(7)
    a = sample(d, N, rng, lo=-90 if d.kind != "u" else 0, hi=90)
    s = np.array([7 if d.kind in "iu" else -2.75]).astype(d)
    got = Call(op, t, count=N, a=a, scalar=scalar_bits(s[0], d), out_bytes=N * d.itemsize).run_as(arch, d, N)
    want = _expect(op[:-1], a, np.repeat(s, N))
    assert_same(got, want, f"{op}<{t}> arch {arch}")


@pytest.mark.parametrize("arch,op,t", cases("DUP"))
def test_duplicate(arch, op, t):
    d = dt(t)
    v = np.array([-5 if d.kind == "i" else 5 if d.kind == "u" else 1.5]).astype(d)
    out = np.full(64 * 8 // d.itemsize + 3, v[0]).astype(d)
    out[:] = np.zeros(1, d)[0]
    got = Call("DUP", t, count=37, scalar=scalar_bits(v[0], d), out=out).run_as(arch, d)
    want = out.copy()
    want[:37] = v[0]
    assert_same(got[:out.size], want, f"Duplicate<{t}> arch {arch}")


@pytest.mark.parametrize("arch", [2201, 3510, 2002, 1001])
def test_in_place_and_single_element(arch):
    """dst == src0 (the level-2 in-place idiom) and count 1."""
    a = np.arange(70, dtype=np.float32) - 20.5
    b = np.full(70, 0.25, np.float32)
    got = Call("ADD", "f32", count=70, a=a, b=b, out=a, inplace=True).run_as(arch, np.float32, 70)
    assert_same(got, a + b, "in-place Add")
    got = Call("MUL", "f32", count=1, a=a, b=b, out=np.zeros(8, np.float32)).run_as(arch, np.float32, 8)
    assert_same(got, np.array([a[0] * b[0]] + [0] * 7, np.float32), "Mul count 1")
