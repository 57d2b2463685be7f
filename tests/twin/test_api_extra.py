"""Direct checks of APIs added for production kernels: ReduceMax with index and its sharedTmpBuffer rule, Sign
without sharedTmpBuffer, ASSERT, and the older DataCopyPad(DataCopyParams, DataCopyPadParams) forms (the pad value is
a raw bit pattern)."""
from __future__ import annotations

import numpy as np
import pytest
from lossgrad.twin import KernelFault, run_kernel

from _twin_common import KERNELS, SOCS

SRC = KERNELS / "api_extra.cpp"


def _run(arch: int, key: int, x: np.ndarray) -> np.ndarray:
    y = np.zeros(320, np.float32)
    run_kernel(SRC, "api_extra", 1, [x, y], soc=SOCS[arch], tiling_key=key)
    return y


def _data() -> np.ndarray:
    x = np.random.default_rng(5).uniform(-3.0, 3.0, 320).astype(np.float32)
    x[[17, 211]] = 7.5  # a tie: the smaller index wins
    x[250] = 9.0       # beyond count (300)? no: inside; the largest
    x[305] = 50.0      # beyond count: ignored
    return x


@pytest.mark.parametrize("arch", [2201, 3510, 2002])
def test_reduce_max_index(arch: int) -> None:
    x = _data()
    y = _run(arch, 0, x)
    assert y[0] == np.float32(9.0) and y[1:2].view(np.uint32)[0] == 250
    x[250] = 1.0
    y = _run(arch, 0, x)
    assert y[0] == np.float32(7.5) and y[1:2].view(np.uint32)[0] == 17


@pytest.mark.parametrize("arch", [2201, 2002])
def test_reduce_max_tmp_too_small(arch: int) -> None:
    with pytest.raises(KernelFault, match="sharedTmpBuffer has 32 bytes but a ReduceMax of 300 elements with index "
                                          "needs at least 64"):
        _run(arch, 1, _data())


def test_reduce_max_no_tmp_rule_on_3510() -> None:
    assert _run(3510, 1, _data())[0] == np.float32(9.0)


@pytest.mark.parametrize("arch", [2201, 3510, 2002])
def test_sign_without_tmp(arch: int) -> None:
    x = _data()
    x[:4] = [0.0, -0.0, np.nan, -1e-30]
    y = _run(arch, 2, x)
    want = np.sign(np.nan_to_num(x[:300], nan=0.0))
    assert np.array_equal(y[:300], want) and not np.signbit(y[1])


def test_assert() -> None:
    with pytest.raises(KernelFault, match=r"ASSERT: assertion failed: !\(?TILING_KEY_IS\(3\)"):
        _run(2201, 3, _data())


@pytest.mark.parametrize("arch", [2201, 3510])
def test_older_data_copy_pad(arch: int) -> None:
    x = _data()
    y = _run(arch, 4, x)
    want = np.concatenate([np.concatenate([x[r * 37:(r + 1) * 37], np.ones(3, np.float32)]) for r in range(3)])
    assert np.array_equal(y[:120], want)


@pytest.mark.parametrize("arch", [2201, 3510, 2002])
def test_brcb(arch: int) -> None:
    x = _data()
    y = _run(arch, 5, x)
    assert np.array_equal(y[:128], np.repeat(x[:16], 8)) and not y[128:].any()


def test_brcb_overlapping_blocks() -> None:
    with pytest.raises(KernelFault, match="Brcb: dst blocks overlap"):
        _run(2201, 6, _data())
