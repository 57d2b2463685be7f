"""High-level Sign: -1/0/+1 (NaN -> 0, -0 -> +0), the minimum tmp buffer (3 * 256 bytes) and the overlap rules."""
import numpy as np
import pytest
from lossgrad.twin import KernelFault

from _twin_api import Call, cases, dt
from _twin_expect import assert_same, f64

EDGES = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 6e-8, -6e-8, 2.0, -2.0, 65504.0, -1e30]


@pytest.mark.parametrize("arch,op,t", cases("SIGN"))
def test_sign(arch, op, t):
    d = dt(t)
    with np.errstate(over="ignore"):
        x = np.concatenate([np.array(EDGES).astype(d), np.random.default_rng(0).uniform(-9, 9, 186).astype(d)])
    got = Call("SIGN", t, count=x.size, a=x, out_bytes=x.size * d.itemsize, tmp_bytes=768).run_as(arch, d, x.size)
    v = f64(x)
    want = np.where(v > 0, 1.0, np.where(v < 0, -1.0, 0.0)).astype(d)  # NaN and -0 -> +0
    assert_same(got, want, f"Sign<{t}> arch {arch}")


def test_sign_tmp_buffer_minimum():
    x = np.ones(64, np.float32)
    with pytest.raises(KernelFault, match="sharedTmpBuffer has 736 bytes, below the minimum 768") as e:
        Call("SIGN", "f32", count=64, a=x, out_bytes=256, tmp_bytes=736).run(2201)
    assert e.value.api == "Sign"


def test_sign_in_place_is_refused():
    x = np.ones(64, np.float32)
    with pytest.raises(KernelFault, match="srcTensor .* overlaps dstTensor"):
        Call("SIGN", "f32", count=64, out=x, inplace=True, tmp_bytes=768).run(3510)
