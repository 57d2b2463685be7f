"""ReduceSum (level 2): the documented summation order per architecture, the minimum sharedTmpBuffer size, and
that only dst[0] is written."""
import numpy as np
import pytest
from lossgrad.twin import KernelFault

from _twin_api import Call, cases, dt
from _twin_expect import assert_same, f64, round_float


def _add(d):
    if d == np.float32:
        return lambda a, b: np.float32(a) + np.float32(b)  # IEEE single add
    return lambda a, b: round_float(np.array([float(a) + float(b)]), d)[0]  # exact in double, rounded once


def _tree(v, add):
    v = list(v)
    while len(v) > 1:
        v = [add(v[i], v[i + 1]) if i + 1 < len(v) else v[i] for i in range(0, len(v), 2)]
    return v[0]


def expected_sum(x: np.ndarray, arch: int):
    """Per-repeat binary trees; then sequentially (2201) or by trees of repeats again (other archs)."""
    d = x.dtype
    add, lanes = _add(d), 256 // d.itemsize
    part = [_tree(x[s:s + lanes], add) for s in range(0, x.size, lanes)]
    if arch == 2201:
        acc = part[0]
        for p in part[1:]:
            acc = add(acc, p)
        return np.array([acc], d)[0]
    while len(part) > 1:
        part = [_tree(part[s:s + lanes], add) for s in range(0, len(part), lanes)]
    return np.array([part[0]], d)[0]


def tmp_bytes(n: int, d: np.dtype) -> int:
    lanes, per_block = 256 // d.itemsize, 32 // d.itemsize
    first = max(1, n // lanes)
    return -(-first // per_block) * per_block * d.itemsize


@pytest.mark.parametrize("arch,op,t", cases("REDUCE"))
@pytest.mark.parametrize("n", [1, 5, 64, 129, 1000, 8320])
def test_reduce_sum(arch, op, t, n):
    d = dt(t)
    x = np.random.default_rng(n).uniform(-4, 4, n).astype(d)
    out = np.full(16, 3, d)
    got = Call("REDUCE", t, count=n, a=x, out=out, tmp_bytes=tmp_bytes(n, d)).run_as(arch, d, 16)
    assert_same(got[:1], np.array([expected_sum(x, arch)], d), f"ReduceSum<{t}> n={n} arch {arch}")
    assert_same(got[1:], out[1:], "only dst[0] is written")
    assert abs(float(got[0]) - f64(x).sum()) <= 1e-2 * max(1.0, np.abs(f64(x)).sum() ** 0.5) * (8 if t == "f16" else 1)


def test_reduce_sum_order_differs_between_archs():
    """Same data, different documented accumulation: A2 sums repeats in order, 310P by a tree of repeats."""
    x = np.random.default_rng(0).uniform(0, 8, 128 * 40).astype(np.float16)  # 40 repeats of half
    assert expected_sum(x, 2201) != expected_sum(x, 2002)  # rounding makes the order visible
    for arch in (2201, 2002):
        got = Call("REDUCE", "f16", count=x.size, a=x, out_bytes=32, tmp_bytes=tmp_bytes(x.size, x.dtype)).run_as(
            arch, np.float16, 1)
        assert_same(got, np.array([expected_sum(x, arch)], np.float16), f"arch {arch}")


@pytest.mark.parametrize("arch", [2201, 1001])
def test_reduce_sum_tmp_buffer_too_small(arch):
    n = 128 * 40  # 40 repeats of half: the documented minimum is 48 elements = 96 bytes
    x = np.ones(n, np.float16)
    Call("REDUCE", "f16", count=n, a=x, out_bytes=32, tmp_bytes=96).run(arch)
    with pytest.raises(KernelFault, match="sharedTmpBuffer has 64 bytes but a ReduceSum of 5120 elements needs at "
                                          "least 96") as e:
        Call("REDUCE", "f16", count=n, a=x, out_bytes=32, tmp_bytes=64).run(arch)
    assert e.value.api == "ReduceSum" and e.value.core == 0
