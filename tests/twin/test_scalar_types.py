"""Scalar half / bfloat16_t: what the real types accept compiles and rounds as they do (round to nearest even;
bf16 NaN -> 0x7FFF as the devkit's scalar Cast), what they reject does not compile, and conversions whose result
differs between CPU debug and the device fault."""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from lossgrad.twin import KernelFault, TwinCompileError, run_kernel

from _twin_common import KERNELS, SOCS

SRC = KERNELS / "scalar_types.cpp"
ERR_SRC = KERNELS / "scalar_types_errors.cpp"


def _run(arch: int, key: int = 0):
    h, f, b = np.zeros(32, np.float16), np.zeros(16, np.float32), np.zeros(16, np.uint16)
    run_kernel(SRC, "scalar_types", 1, [h, f, b], soc=SOCS[arch], tiling_key=key)
    return h, f, b


def _f16(v: float) -> np.float16:
    return np.float16(v)  # NumPy's float64 -> float16 conversion rounds to nearest even


@pytest.mark.parametrize("arch", [2201, 3510, 2002])
def test_values(arch: int) -> None:
    h, f, b = _run(arch)
    a, c = _f16(np.float32(0.1)), _f16(np.float32(0.2))
    A, C = float(a), float(c)
    want_h = [a, np.float16(np.float32(1e-7)), 65504.0, 2048.0, 2052.0, -7.0, 0.0, 0.0, 3.0, _f16(A + C),
              _f16(A * C), _f16(C / A), -a, _f16(1.0 + A), 1.5, 2.0 ** -14]
    assert h[:16].view(np.uint16).tolist() == np.array(want_h, np.float16).view(np.uint16).tolist()
    assert f[:10].tolist() == [np.float32(A), 1.0, 1.0, 1.0, 12.0, 1.5, 7.0, 1.0, 3.0, 16.0]
    if arch in (2201, 3510):
        bf = lambda v: int(np.array(v, np.float32).astype(ml_dtypes.bfloat16).view(np.uint16))  # noqa: E731
        want_b = [0, 0, 0, bf(1.0), bf(1.015625), bf(3.0), 0x7FFF, bf(-2.5), 0x7F80, bf(np.float32(0.1))]
        assert b[:10].tolist() == want_b
        tenth = np.array(np.float32(0.1)).astype(ml_dtypes.bfloat16).astype(np.float32)
        assert f[10] == tenth and f[11] == tenth


@pytest.mark.parametrize("key,message", [(1, "does not fit in half"), (2, "to an integer is implementation-defined"),
                                         (3, "half::operator+")])
def test_implementation_defined_faults(key: int, message: str) -> None:
    with pytest.raises(KernelFault) as e:
        _run(2201, key)
    assert message in str(e.value)


@pytest.mark.parametrize("arch", [2201, 2002])
def test_rejected_uses(arch: int) -> None:
    """Every REJECT line of the arch's branch fails to compile; no other line does."""
    with pytest.raises(TwinCompileError) as e:
        run_kernel(ERR_SRC, "scalar_types_errors", 1, [np.zeros(8, np.float32)], soc=SOCS[arch])
    lines = ERR_SRC.read_text().splitlines()
    bf16_branch = arch in (2201, 3510)
    want, in_if, in_else = set(), False, False
    for no, text in enumerate(lines, start=1):
        if text.startswith("#if "):
            in_if = True
        elif text.startswith("#else"):
            in_if, in_else = False, True
        elif text.startswith("#endif"):
            in_else = False
        active = (not in_if and not in_else) or (in_if and bf16_branch) or (in_else and not bf16_branch)
        if active and "// REJECT" in text:
            want.add(no)
    got = {int(m) for m in re.findall(r"scalar_types_errors\.cpp:(\d+):\d+: error", e.value.stderr)}
    assert got == want, (sorted(got), sorted(want), e.value.stderr[-3000:])
