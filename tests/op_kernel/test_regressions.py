"""Calls that once failed, kept as regression tests on every default SoC that supports them, auto-sync on and off.

regressions.csv is a case table (`lossgrad verify --cases tests/op_kernel/regressions.csv` runs it too): issue 22's
table (rank 5-8 broadcasts whose tiles spanned runs of the row dim where the output's rows do not follow one stride:
cross-core write races, a GM out-of-bounds write, unwritten NaN output; ops-nn's KlDivLossGrad TTK cases among
them) and the fuzz search's first finds (a whole-row load that outgrew a KL tile's pitch; NaN from the Kahan
compensation of an Inf sum; a saturated 310P sum compensated to 0), and the 20,000-per-SoC soak's find (a KL
reduction piece that starts mid-row, whose view of the whole loaded row read unwritten lanes past the built rows).
Each row names the SoC it was found on; it runs on all of them. The long KL reduction with an Inf (issue 22) is its
own test below.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from lossgrad import golden
from lossgrad.errors import LossGradError
from lossgrad.runners.twin import AUTO_SYNC_ENV
from lossgrad.socs import VERIFY_DEFAULT_SOCS, get_soc
from lossgrad.tiling import knobs
from lossgrad.golden import compute_call
from lossgrad.runners.twin import run_twin
from lossgrad.validation import validate
from lossgrad.verify.cases import _check_call, case_reduction, read_csv
from lossgrad.precision import compare
from lossgrad.verify.data import make_inputs
from lossgrad.verify.run import judging_dtype, run_case

TABLE = Path(__file__).with_name("regressions.csv")


def _on_every_soc() -> list:
    out = []
    for case in read_csv(str(TABLE)):
        for soc in VERIFY_DEFAULT_SOCS:
            moved = dataclasses.replace(case, soc=soc, id=f"{case.id}@{soc}")
            try:
                _check_call(moved)  # bfloat16 rows need a part that moves bfloat16
            except LossGradError:
                continue
            out.append(moved)
    return out


CASES = _on_every_soc()


def test_the_table_covers_issue_22_and_every_soc() -> None:
    ids = {c.id.split("@")[0] for c in CASES}
    assert sum(i.startswith("issue22/") for i in ids) == 10
    assert {c.soc for c in CASES} == set(VERIFY_DEFAULT_SOCS)


@pytest.mark.parametrize("auto_sync", ["on", "off"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_regression(case, auto_sync: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(AUTO_SYNC_ENV, auto_sync)
    r = run_case(case, "twin")
    if r.undetermined:  # an Inf/NaN float32 result on 310P/910, where whether it saturates is open (docs/twin.md)
        assert _saturates(case.soc), r.error
        _judge_primary_answer(case)
        return
    assert r.error is None, r.error
    assert r.passed, r.comparison.describe()


def _saturates(soc: str) -> bool:
    return get_soc(soc).arch.overflow_mode.value == "saturation"  # 310P, Atlas 910 (socs.py)


def _judge_primary_answer(case) -> None:
    """A case the twin cannot judge (its output depends on an open question) is still judged under the primary
    answer, saturated float32, which the float32-order golden models: run_case ran both answers without a fault,
    and this run's output must then match the golden."""
    g, s, t = make_inputs(case)
    call = validate(case.op, g, s, t, case_reduction(case), case.attrs, out_dtype=case.dtypes[3], soc=case.soc)
    with knobs(ub_budget=case.ub_budget or None, fold_tiles=case.fold_tiles or None):
        out = run_twin(call, undetermined="primary").output
    cmp = compare(out, compute_call(call, "float32"), judging_dtype(call), "experimental", small_values=True)
    assert cmp.passed, cmp.describe()


def _long_kl(rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Issue 22's long reduction: KL summing target's rows onto self's one row, an Inf at target[0, 0] and 3e38 at
    target[0:2, 1] (whose float32 sum overflows) ahead of many more rows."""
    g = np.asarray(np.float32(1.0))
    s = np.zeros((1, 4096), np.float32)
    t = np.full((rows, 4096), 0.5, np.float32)
    t[0, 0] = np.inf
    t[0:2, 1] = 3e38
    return g, s, t


def _long_kl_outputs(g, s, t, soc: str) -> list[tuple[np.ndarray, bool]]:
    """The kernel's output with each answer the twin can give, and whether float32 saturated in it: one run where
    float32 Inf is IEEE, both open answers on 310P/910 (saturated -MAX, or kept -Inf; docs/twin.md)."""
    call = validate("kl_div_backward", g, s, t, "sum", soc=soc)
    if not _saturates(soc):
        return [(run_twin(call).output, False)]
    return [(run_twin(call, undetermined="primary").output, True),
            (run_twin(call, undetermined="alternative").output, False)]


def _check_long_kl(out: np.ndarray, rows: int, saturated: bool) -> None:
    """-rows/2 in every column but the first two, which are -Inf (-MAX where float32 saturates), never NaN."""
    edge = -np.finfo(np.float32).max if saturated else -np.inf
    want = np.full((1, 4096), -0.5 * rows, np.float32)
    want[0, :2] = edge
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("auto_sync", ["on", "off"])
@pytest.mark.parametrize("soc", VERIFY_DEFAULT_SOCS)
def test_inf_in_a_long_kl_sum_stays_inf(soc: str, auto_sync: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Short tiles and one tile per fold make 512 rows fold hundreds of times: the sums pass both levels many times
    # after the non-finite column, where the Kahan compensation used to turn -Inf into NaN.
    monkeypatch.setenv(AUTO_SYNC_ENV, auto_sync)
    rows = 512
    g, s, t = _long_kl(rows)
    with knobs(ub_budget=24 * 1024, fold_tiles=1):
        outs = _long_kl_outputs(g, s, t, soc)
    for out, saturated in outs:
        _check_long_kl(out, rows, saturated)
    np.testing.assert_array_equal(outs[0][0], golden.kl_div_backward(g, s, t, "sum", soc=soc, compute="float32"))


@pytest.mark.slow
@pytest.mark.parametrize("soc", VERIFY_DEFAULT_SOCS)
def test_issue_22_long_kl_reduction_with_inf(soc: str) -> None:
    # The issue's call as it stands: (8192, 4096) summed to (1, 4096), default tiles and folds (about 10 s a SoC).
    g, s, t = _long_kl(8192)
    for out, saturated in _long_kl_outputs(g, s, t, soc):
        _check_long_kl(out, 8192, saturated)
