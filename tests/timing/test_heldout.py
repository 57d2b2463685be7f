"""The held-out table is apart from the fit by construction (docs/timing.md "Held-out"): frozen (its digest), disjoint
from the calibration table, never imported by the fit; heldout_results.json is the last run of it with the current
parameters (cheap cases re-run here), and it says whether issue 23's done-when holds, whatever the answer."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lossgrad.timing import calibration, heldout
from lossgrad.timing.bands import results
from lossgrad.timing.cases import modelled, run
from lossgrad.timing.mskpp_data import TABLES

TIMING = Path(heldout.__file__).resolve().parent


def test_the_table_is_unchanged_since_it_was_frozen() -> None:
    assert heldout.digest() == heldout.HELDOUT_DIGEST


def _setup(c) -> tuple:
    return (c.soc, c.kernel, c.block_dim, c.tiling, c.defines, c.copy)


# The set_l2_cache_mode example's cases 1-2 run the data_copy example's scenarios 5-6 again on 950 (same shape, tiles
# and walk, through the C API): separate published measurements of a calibrated configuration, so they test how far
# two published runs of one kernel agree, not a prediction (docs/timing.md "Held-out" counts them apart).
REPEATS = {"set_l2_case1_950": "data_copy_ub_s5_950", "set_l2_case2_950": "data_copy_ub_s6_950"}


def test_no_held_out_case_is_a_calibration_case() -> None:
    cal = {c.name for c in calibration.CASES}
    held = {c.name for c in heldout.HELDOUT}
    assert not cal & held
    by_setup = {_setup(c): c.name for c in calibration.CASES}
    shared = {c.name: by_setup[_setup(c)] for c in heldout.HELDOUT if _setup(c) in by_setup}
    assert shared == REPEATS
    for table, sizes in TABLES.items():
        fit, out = set(calibration.MSKPP_FIT[table]), set(heldout.MSKPP_HELD_OUT.get(table, ()))
        assert not fit & out and fit | out == set(sizes), table


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("module", ["fit.py", "calibration.py", "params.py", "model.py", "replay.py"])
def test_the_fit_never_reads_the_held_out_table(module: str) -> None:
    assert not {n for n in _imports(TIMING / module) if "heldout" in n or "validate" in n}, module


def test_results_are_of_this_table() -> None:
    r = results()
    assert r["digest"] == heldout.HELDOUT_DIGEST
    assert [row["case"] for row in r["rows"]] == [c.name for c in heldout.HELDOUT]
    assert set(r["done_when"]) == {"cases >= 12", "socs >= 2", "latency and bandwidth regimes",
                                   "within 25% on >= 80%", "median |error| <= 15%"}
    for regime, band in r["bands"].items():
        assert 0 < band["low"] <= 1.0 <= band["high"], regime


CHEAP = [c for c in heldout.HELDOUT if not c.kernel] + [c for c in heldout.HELDOUT if c.name in
                                                        ("cam_add", "cam_exp", "cam_duplicate")]


@pytest.mark.parametrize("case", CHEAP, ids=[c.name for c in CHEAP])
def test_results_are_current(case) -> None:
    row = next(r for r in results()["rows"] if r["case"] == case.name)
    m = modelled(case, run(case))[case.primary]
    assert m == pytest.approx(row["modelled_us"], rel=2e-3, abs=1e-4)
