"""Compile-time strictness: code using an API or dtype the architecture lacks must not compile against the twin,
and the TwinCompileError carries the static_assert text (one compile per architecture, all constructs at once; each
construct trips its own static_assert, so each expected message must appear)."""
import re

import numpy as np
import pytest
from lossgrad.twin import TwinCompileError, run_kernel

from _twin_common import KERNELS, SOCS

EXPECTED = {
    2201: ["Add: element type not supported on this NpuArch",
           "Cast: this (src, dst) dtype pair is not supported on this NpuArch",
           "Exp: element type not supported on this NpuArch"],
    3510: ["Div: element type not supported on this NpuArch",
           "Cast: this (src, dst) dtype pair is not supported on this NpuArch",
           "level-0 (mask/repeat) binary forms support neither 8-bit nor 64-bit element types"],
    2002: ["KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY) is not supported on this NpuArch",
           "DataCopyPad is not supported on this architecture (NpuArch 2002/1001)",
           "Cast: this (src, dst) dtype pair is not supported on this NpuArch",
           "DataCopy/DataCopyPad: element type not supported on this architecture",
           "DataSyncBarrier is not supported on NpuArch 2002/1001"],
    1001: ["KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY) is not supported on this NpuArch",
           "DataCopyPad is not supported on this architecture (NpuArch 2002/1001)",
           "Maxs: element type not supported on this NpuArch",
           "Mins: element type not supported on this NpuArch",
           "Compares: element type not supported on this NpuArch (not on 1001)",
           "Sign: element type not supported on this NpuArch (half/float; not on 1001)",
           "Relu: element type not supported on this NpuArch",
           "Select with a scalar src1 (VSEL_TENSOR_SCALAR_MODE) is not supported on NpuArch 1001",
           "Cast: this (src, dst) dtype pair is not supported on this NpuArch",
           "Compare (result in CMPMASK): half/float only, and not available on NpuArch 1001",
           "scalar Cast<T, U, roundMode> is not available on NpuArch 1001",
           "DataSyncBarrier is not supported on NpuArch 2002/1001"],
}

_errors: dict[int, TwinCompileError] = {}


def _compile(arch: int) -> TwinCompileError:
    if arch not in _errors:
        with pytest.raises(TwinCompileError) as e:
            run_kernel(KERNELS / "compile_errors.cpp", "compile_errors", 1, [np.zeros(64, np.float32)],
                       soc=SOCS[arch])
        _errors[arch] = e.value
    return _errors[arch]


CASES = [(arch, msg) for arch, msgs in EXPECTED.items() for msg in msgs]


@pytest.mark.parametrize("arch,message", CASES, ids=[f"{a}-{m.split(':')[0][:40]}" for a, m in CASES])
def test_rejected_at_compile_time(arch, message):
    err = _compile(arch)
    assert message in str(err), str(err)[-3000:]
    assert f"NpuArch {arch}" in str(err).splitlines()[0]


@pytest.mark.parametrize("arch", list(EXPECTED))
def test_nothing_else_fails(arch):
    """The static_asserts that fired are exactly the expected ones: the legal lines of the source compile."""
    fired = set(re.findall(r"static assertion failed: (.*)", _compile(arch).stderr))
    unexpected = [f for f in fired if not any(m in f for m in EXPECTED[arch])]
    assert not unexpected, unexpected
    assert len(fired) == len(EXPECTED[arch]), sorted(fired)
