"""The calibration (docs/timing.md "Calibration"): every parameter names its source and whether it was fitted or
read; fitted parameters are fewer than half the published figures they were fitted on; fitted.json's residuals are
those of the current code and values (cheap cases re-run here); the residuals stay within the documented bounds."""
from __future__ import annotations

import pytest

from lossgrad.socs import SOCS, VERIFY_DEFAULT_SOCS
from lossgrad.timing import calibration as cal
from lossgrad.timing.cases import modelled, run
from lossgrad.timing.model import VEC_CLASSES
from lossgrad.timing.params import FIT_GROUPS, fitted, params_for, params_record

# The documented bounds on |modelled / published - 1| of the calibration figures (docs/timing.md): Task Duration
# within 21% (data_copy S6 on A2, +20.6%: L2 hits capped at msKPP's per-core rate; every other case within 8%);
# single copies within 35% (msKPP's 950 UB -> GM table jumps at 16-20 KB, +34% and -20%, which one latency and two
# rates cannot follow; A2's within 6%). Per-pipe figures are reported, not bounded.
TASK_BOUND = 0.21
COPY_BOUND = 0.35


@pytest.mark.parametrize("soc", sorted(SOCS))
def test_every_field_has_a_source(soc: str) -> None:
    p = params_for(soc)
    rec = params_record(p)
    for name, f in p.fields().items():
        assert f.source, (soc, name)
        assert f.confidence in ("high", "medium", "low", "none"), (soc, name, f.confidence)
        assert f.source.startswith(("read:", "fit on", "carried over", "assumed", "derived", "no ")) \
            or "fallback" in f.source, (soc, name, f.source)
        assert "not fitted yet" not in f.source, (soc, name)
    assert p.clock_ghz.value and p.hbm_read_gbps.value and p.hbm_write_gbps.value
    assert "default" in p.vec_cycles_per_repeat.value
    assert set(p.vec_cycles_per_repeat.value) <= set(VEC_CLASSES)
    assert rec["notes"] == list(p.notes)


@pytest.mark.parametrize("soc", VERIFY_DEFAULT_SOCS)
def test_thin_data_is_flagged(soc: str) -> None:
    p = params_for(soc)
    line = SOCS[soc].line
    if line in ("310P", "910"):
        assert p.notes and "no published timing" in p.notes[0], p.notes
        assert p.vec_issue_cycles.confidence == "low"
    if soc == "Ascend910B1":
        assert not p.notes  # measured part: no thin-data note


@pytest.mark.parametrize("group", sorted(FIT_GROUPS))
def test_fitted_parameters_are_fewer_than_half_the_points(group: str) -> None:
    soc = FIT_GROUPS[group]
    fitted_params = fitted()["groups"][group]
    points = cal.points(tuple(c for c in cal.CASES if c.soc == soc))
    assert 0 < len(fitted_params) < points / 2, (group, len(fitted_params), points)
    names = {c.name for c in cal.CASES}
    for name, entry in fitted_params.items():
        assert entry["cases"] and set(entry["cases"]) <= names, (group, name)


CHEAP = [c for c in cal.CASES if not c.kernel] + [cal.case(n) for n in
                                                   ("data_copy_ub_s3_A2", "data_copy_ub_s3_950", "add_hp_case3_A2")]


@pytest.mark.parametrize("case", CHEAP, ids=[c.name for c in CHEAP])
def test_residuals_are_current(case) -> None:
    stored = fitted()["residuals"][case.name]
    m = modelled(case, run(case))
    for key, pub in case.published.items():
        assert m[key] / pub - 1 == pytest.approx(stored[key], abs=2e-3), key


def test_residuals_within_the_documented_bounds() -> None:
    for name, errs in fitted()["residuals"].items():
        c = cal.case(name)
        bound = COPY_BOUND if c.primary == "copy" else TASK_BOUND
        assert abs(errs[c.primary]) <= bound, (name, errs)
