"""Modelled time against the memory roofline (docs/timing.md): on A2/A3 and 950, calls of 4 Mi elements run within
1.2x of the call's roofline (the HBM time of its minimum GM bytes: every input byte read once; the output stays in
L2). The bound is on the kernel's body, the busiest core from its start to its last data, without the fixed costs of
every launch: the head and tail, the cores' skewed starts (0.14 us per core on A2 as fitted: 6.8 us on 48 cores) and
each core's scalar set-up (core_init_cycles: 2.1 us on A2, 2.4 us on 950). The total is reported beside it and a
cold call is never below the roofline."""
from __future__ import annotations

import numpy as np
import pytest

import lossgrad
from lossgrad.registry import OPS
from lossgrad.timing.params import params_for

N = 4 * 1024 * 1024
ROWS, COLS = N // 4096, 4096
PATTERNS = {
    "same shapes": ((N,), (N,), (N,)),
    "target row-broadcast": ((ROWS, COLS), (ROWS, COLS), (COLS,)),
    "grad scalar": ((), (ROWS, COLS), (ROWS, COLS)),
}


# 950 cuts column pieces on 128-byte units (socs gm_row_align_bytes, shared by the tiling and the time model).
# Measured with the time model of issue 23: on 950 the busiest core of the float32 L1 call against a row-broadcast
# target computes 19.9 us of vector work (the devkit's 950 add cases fit 1.05 cycles of load/store overhead to every
# repeat of the Memory API) beside 23.3 us of MTE2, and the cores differ (22.3-28.3 us): its body is 1.26x the
# roofline, vector work the cost.
GAPS: dict[tuple[str, str, str], str] = {
    ("Ascend950PR_9579", "l1_loss_backward", "target row-broadcast"):
        "950 L1 row broadcast: busiest core 19.9 us of V beside 23.3 us of MTE2, body 1.26x the roofline",
    # Smooth L1 keeps NaN through its clamp since the twin's fourth audit (ClampUnitKeepNaN): 20.3 us of V beside
    # 24.0 us of MTE2 on the busiest core, cores 22.2-28.3 us, body 1.26x. Issue 28's split choice (the flat split
    # with a resident broadcast row) is the fix for both.
    ("Ascend950PR_9579", "smooth_l1_loss_backward", "target row-broadcast"):
        "950 smooth L1 row broadcast: busiest core 20.3 us of V beside 24.0 us of MTE2, body 1.26x the roofline",
}


def _params():
    for soc in ("Ascend910B1", "Ascend910_9391", "Ascend950PR_9579"):
        for op in OPS:
            for pattern in PATTERNS:
                reason = GAPS.get((soc, op, pattern))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(soc, op, pattern, marks=marks, id=f"{soc}-{op}-{pattern}")


@pytest.mark.parametrize("soc,op,pattern", list(_params()))
def test_body_within_1_2x_of_the_roofline(soc: str, op: str, pattern: str) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(0.5, 2.0, s).astype(np.float32) for s in PATTERNS[pattern]]
    t = lossgrad.profile(op, *arrays, "none", soc=soc).timing
    assert t.total_us >= t.roofline_us > 0
    p = params_for(soc)
    set_up = p.core_init_cycles.value / (p.clock_ghz.value * 1e3)
    body = max(t.core_us) - set_up
    assert body <= 1.2 * t.roofline_us, (t.bound, round(body, 1), round(t.roofline_us, 1), round(t.total_us, 1))
