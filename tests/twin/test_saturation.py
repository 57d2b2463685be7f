"""Saturation mode on 310P/910 (CANN aclrtFloatOverflowMode; socs.py overflow_mode). Moved data keeps its Inf/NaN;
a computed 16-bit result saturates; whether a computed float32 Inf/NaN saturates is a question public sources leave
open (docs/twin.md): a kernel whose outputs depend on it raises UndeterminedResult, and each answer can be run on its
own. A2/A3/950 stay IEEE. Also through the project kernels against the golden."""
from __future__ import annotations

import numpy as np
import pytest

import lossgrad
import lossgrad.golden as golden
from lossgrad.twin import UndeterminedResult, run_kernel
from lossgrad.validation import validate

from _twin_common import ARCHS, KERNELS, SOCS

MAX = float(np.finfo(np.float32).max)
SATURATING = (2002, 1001)


def run(arch: int, undetermined: str) -> np.ndarray:
    x = np.array([np.nan, np.inf, -np.inf, 3e38] + [1.0] * 12, np.float32)
    y = np.zeros(64, np.float32)
    run_kernel(KERNELS / "saturation.cpp", "saturation", 1, [x, y], soc=SOCS[arch], undetermined=undetermined)
    return y


@pytest.mark.parametrize("arch", ARCHS)
def test_float32_saturation_is_an_open_question(arch: int) -> None:
    if arch in SATURATING:
        with pytest.raises(UndeterminedResult, match="float32 Inf/NaN result in saturation mode"):
            run(arch, "check")
    for answer in ("primary", "alternative"):
        y = run(arch, answer)
        muls, add, moved, dup = y[:4], y[16:20], y[32:36], y[48]
        if arch in SATURATING and answer == "primary":
            assert muls.tolist() == [0.0, MAX, -MAX, np.float32(3e38)]
            assert add.tolist() == [0.0, MAX, -MAX, MAX]  # 6e38 overflows: MAX, not Inf
        else:
            assert np.isnan(muls[0]) and muls[1] == np.inf and muls[2] == -np.inf
            assert np.isnan(add[0]) and add[3] == np.inf
        assert np.isnan(moved[0]) and moved[1] == np.inf and moved[2] == -np.inf  # DataCopy moves
        assert np.isnan(dup)  # Duplicate moves


@pytest.mark.parametrize("soc", [SOCS[a] for a in ARCHS])
def test_project_kernels_and_golden_agree_per_mode(soc: str) -> None:
    """Where the golden's outputs are determined the kernels match them bit for bit; on 310P/910 a call whose
    outputs depend on the float32 answer faults, and the golden says so."""
    rng = np.random.default_rng(1)
    specials = np.array([np.nan, np.inf, -np.inf, 3e38, -3e38, 0.0, 1.0, -2.5], np.float32)
    g, s, t = (rng.choice(specials, (4, 64)).astype(np.float32) for _ in range(3))
    sat = lossgrad.socs.get_soc(soc).arch.overflow_mode.value == "saturation"
    for name, kw in (("mse_loss_backward", {}), ("l1_loss_backward", {}), ("smooth_l1_loss_backward", {"beta": 0.5})):
        call = validate(name, g, s, t, "none", kw or None, soc=soc)
        open_ = golden.undetermined(call)
        assert (open_ is not None and open_.any()) == sat, name
        if sat:
            with pytest.raises(UndeterminedResult):
                getattr(lossgrad, name)(g, s, t, "none", soc=soc, backend="twin", **kw)
            continue
        got = getattr(lossgrad, name)(g, s, t, "none", soc=soc, backend="twin", **kw)
        want = getattr(golden, name)(g, s, t, "none", soc=soc, compute="float32", **kw)
        assert np.array_equal(got, want, equal_nan=True), name


@pytest.mark.parametrize("soc", [SOCS[a] for a in SATURATING])
def test_float16_results_saturate_without_an_open_question(soc: str) -> None:
    """Finite float32 results beyond float16's range saturate at the output Cast (documented for 16-bit results):
    determined, and equal to the golden's 65504."""
    g = np.full((4, 64), 60000.0, np.float16)
    s = np.full((4, 64), 60000.0, np.float16)
    t = np.full((4, 64), -60000.0, np.float16)
    call = validate("mse_loss_backward", g, s, t, "none", None, soc=soc)
    assert not golden.undetermined(call).any()
    got = lossgrad.mse_loss_backward(g, s, t, "none", soc=soc, backend="twin")
    assert np.all(got == np.float16(65504.0))
    np.testing.assert_array_equal(got, golden.compute_call(call, "float32"))
