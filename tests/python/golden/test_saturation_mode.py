"""Saturation mode (310P, Atlas 910; CANN aclrtFloatOverflowMode / set_device_sat_mode): the float32 (judged) golden
saturates every computed float result (NaN -> 0, +-Inf -> +-MAX of the dtype); A2/A3/950 stay IEEE. Hand-computed
expectations, per part."""
from __future__ import annotations

import numpy as np
import pytest

import lossgrad.golden as golden
from lossgrad.golden.elementwise import saturate
from lossgrad.socs import get_soc

F32_MAX = float(np.finfo(np.float32).max)
SAT = ("Ascend910A", "Ascend310P3")
IEEE = ("Ascend910B1", "Ascend910_9391", "Ascend950PR_9579")


def test_the_soc_table_records_the_mode() -> None:
    assert {get_soc(s).arch.overflow_mode.value for s in SAT} == {"saturation"}
    assert {get_soc(s).arch.overflow_mode.value for s in IEEE} == {"inf_nan"}


def test_saturate() -> None:
    got = saturate(np.array([np.nan, np.inf, -np.inf, 1.5, -0.0], np.float32))
    assert got.tolist() == [0.0, F32_MAX, -F32_MAX, 1.5, 0.0]
    assert saturate(np.array([np.inf], np.float16)).tolist() == [65504.0]


@pytest.mark.parametrize("soc", SAT + IEEE)
def test_mse_with_a_nan_and_an_inf_input(soc: str) -> None:
    g = np.ones(4, np.float32)
    s = np.array([np.nan, 1.0, np.inf, 3e38], np.float32)
    t = np.zeros(4, np.float32)
    got = golden.mse_loss_backward(g, s, t, "none", soc=soc, compute="float32")  # ((s - t) * 2) * g
    if soc in SAT:
        assert got.tolist() == [0.0, 2.0, F32_MAX, F32_MAX]  # NaN - 0 = NaN -> 0; Inf -> MAX; 6e38 -> MAX
    else:
        assert np.isnan(got[0]) and got[1] == 2.0 and np.isinf(got[2]) and np.isinf(got[3])


@pytest.mark.parametrize("soc", SAT)
def test_no_computed_inf_or_nan_on_saturation_parts(soc: str) -> None:
    rng = np.random.default_rng(0)
    specials = np.array([np.nan, np.inf, -np.inf, 3e38, -3e38, 0.0, 1.0], np.float32)
    s, t, g = (rng.choice(specials, 64) for _ in range(3))
    for f, kw in ((golden.l1_loss_backward, {}), (golden.mse_loss_backward, {}),
                  (golden.smooth_l1_loss_backward, {"beta": 0.5}), (golden.kl_div_backward, {"log_target": True})):
        got = f(g, s, t, "sum", soc=soc, compute="float32", **kw)
        assert np.all(np.isfinite(got)), (f.__name__, got)


def test_float16_output_saturates_at_65504() -> None:
    s = np.array([60000.0, np.nan], np.float16)
    z = np.zeros(2, np.float16)
    sat = golden.mse_loss_backward(np.ones(2, np.float16), s, z, "none", soc="Ascend310P3", compute="float32")
    ieee = golden.mse_loss_backward(np.ones(2, np.float16), s, z, "none", soc="Ascend910B1", compute="float32")
    assert sat.tolist() == [65504.0, 0.0]  # 120000 -> MAX of float16; the NaN input's Cast to float32 gives 0
    assert np.isinf(ieee[0]) and np.isnan(ieee[1])


def test_the_float64_reference_is_ieee_everywhere() -> None:
    s = np.array([np.nan], np.float32)
    got = golden.mse_loss_backward(np.ones(1, np.float32), s, np.zeros(1, np.float32), "none", soc="Ascend910A")
    assert np.isnan(got[0])
