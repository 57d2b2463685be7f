"""Regression test of the time model's calibration (docs/timing.md "Calibration"): every published case, run with
its own kernel on the twin with the calibrated parameters of its SoC, stays within the documented error of the
published msprof Task Duration, and the model names the pipe msprof shows busiest. Plus the parameter table itself:
every default SoC has a value, a source and a confidence for every field, and thin-data SoCs say so."""
from __future__ import annotations

import numpy as np
import pytest

from lossgrad.socs import SOCS, VERIFY_DEFAULT_SOCS
from lossgrad.timing import calibration as cal
from lossgrad.timing.model import VEC_CLASSES
from lossgrad.timing.params import params_for, params_record

@pytest.mark.parametrize("case", cal.CASES, ids=[c.name for c in cal.CASES])
def test_calibration_case(case: cal.CalibCase) -> None:
    rep = cal.run_case(case)
    t = rep.timing
    row = cal.compare(case, t)
    assert abs(t.total_us / case.total_us - 1) <= cal.TOLERANCE, row
    assert t.bound == case.busiest, row
    # The modelled busy time of the published busiest pipe (mean over cores, as msprof averages) is the largest.
    mean = {p: float(np.mean([c[p] for c in t.per_core])) for p in ("MTE2", "MTE3", "V", "S")}
    assert max(mean, key=lambda p: mean[p]) == case.busiest, (row, mean)


def test_published_busiest_pipe_is_mte2() -> None:
    # The calibration set is memory-bound on every case (msprof's aiv_mte2_ratio 0.87-1.0).
    assert {c.busiest for c in cal.CASES} == {"MTE2"}


@pytest.mark.parametrize("soc", sorted(SOCS))
def test_every_field_has_a_source(soc: str) -> None:
    p = params_for(soc)
    rec = params_record(p)
    for name, f in p.fields().items():
        assert f.source, (soc, name)
        assert f.confidence in ("high", "medium", "low", "none"), (soc, name, f.confidence)
    assert p.clock_ghz.value and p.chip_bandwidth_gbps.value and p.mte2_curve.value and p.mte3_curve.value
    assert "default" in p.vec_cycles_per_repeat.value
    assert set(p.vec_cycles_per_repeat.value) <= set(VEC_CLASSES)
    for curve in (p.mte2_curve.value, p.mte3_curve.value):
        sizes = [b for b, _ in curve]
        assert sizes == sorted(sizes) and all(g > 0 for _, g in curve), (soc, curve)
    assert rec["notes"] == list(p.notes)


@pytest.mark.parametrize("soc", VERIFY_DEFAULT_SOCS)
def test_thin_data_is_flagged(soc: str) -> None:
    p = params_for(soc)
    line = SOCS[soc].line
    if line in ("310P", "910"):
        assert p.notes and "thin" in p.notes[0], p.notes
        assert p.vec_issue_cycles.confidence == "low"
    if soc == "Ascend910B1":
        assert not p.notes  # measured part: no thin-data note


def test_fitted_values_reproduce_the_published_pipe_figures() -> None:
    """Cross-checks of the fit by arithmetic alone (no replay): add_high_performance case 1's per-call vector time
    is issue + 32 repeats x 2 cycles (read-read bank conflict) at 1.85 GHz."""
    p = params_for("Ascend910B1")
    c1 = cal.case("add_hp_case1_A2")
    calls = 8192 * 8192 // 4096
    per_call_us = (p.vec_issue_cycles.value + 32 * p.vec_cycles("add", "half") * p.bank_rr_factor.value) \
        / (p.clock_ghz.value * 1e3)
    assert calls * per_call_us == pytest.approx(c1.pipes_us["V"], rel=0.01)
