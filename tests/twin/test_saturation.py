"""Saturation mode on 310P/910 (CANN aclrtFloatOverflowMode; socs.py overflow_mode): computed float results
saturate (Inf -> +-MAX, NaN -> 0), moved data keeps its Inf/NaN; A2/A3/950 stay IEEE. Also through a project
kernel against the golden."""
from __future__ import annotations

import numpy as np
import pytest

import lossgrad
import lossgrad.golden as golden
from lossgrad.twin import run_kernel

from _twin_common import ARCHS, KERNELS, SOCS

MAX = float(np.finfo(np.float32).max)
SATURATING = (2002, 1001)


@pytest.mark.parametrize("arch", ARCHS)
def test_computed_results_saturate_moved_data_does_not(arch):
    x = np.array([np.nan, np.inf, -np.inf, 3e38] + [1.0] * 12, np.float32)
    y = np.zeros(64, np.float32)
    run_kernel(KERNELS / "saturation.cpp", "saturation", 1, [x, y], soc=SOCS[arch])
    muls, add, moved, dup = y[:4], y[16:20], y[32:36], y[48]
    if arch in SATURATING:
        assert muls.tolist() == [0.0, MAX, -MAX, np.float32(3e38)]
        assert add.tolist() == [0.0, MAX, -MAX, MAX]  # 6e38 overflows: MAX, not Inf
    else:
        assert np.isnan(muls[0]) and muls[1] == np.inf and muls[2] == -np.inf
        assert np.isnan(add[0]) and add[3] == np.inf
    assert np.isnan(moved[0]) and moved[1] == np.inf and moved[2] == -np.inf  # DataCopy moves
    assert np.isnan(dup)  # Duplicate moves


@pytest.mark.parametrize("soc", [SOCS[a] for a in ARCHS])
def test_project_kernels_and_golden_agree_per_mode(soc):
    rng = np.random.default_rng(1)
    specials = np.array([np.nan, np.inf, -np.inf, 3e38, -3e38, 0.0, 1.0, -2.5], np.float32)
    g, s, t = (rng.choice(specials, (4, 64)).astype(np.float32) for _ in range(3))
    sat = lossgrad.socs.get_soc(soc).arch.overflow_mode.value == "saturation"
    for name, kw in (("mse_loss_backward", {}), ("l1_loss_backward", {}), ("smooth_l1_loss_backward", {"beta": 0.5})):
        got = getattr(lossgrad, name)(g, s, t, "none", soc=soc, backend="twin", **kw)
        want = getattr(golden, name)(g, s, t, "none", soc=soc, compute="float32", **kw)
        assert np.array_equal(got, want, equal_nan=True), name
        assert np.all(np.isfinite(got)) == sat, name
