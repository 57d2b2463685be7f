"""The fuzz search (lossgrad.verify.fuzz, `lossgrad verify --fuzz N`): what it draws, how it shrinks, that its
reproducers reproduce, the fixed-seed slice CI runs on every default SoC, and that it catches a broken tile walk."""
from __future__ import annotations

import collections
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

import lossgrad
import lossgrad.tiling
import lossgrad.verify
from lossgrad import codegen
from lossgrad.runners.twin import AUTO_SYNC_ENV
from lossgrad.socs import VERIFY_DEFAULT_SOCS
from lossgrad.verify import fuzz
from lossgrad.verify.cases import Case, _check_call, read_csv
from lossgrad.verify.data import layout, make_inputs
from lossgrad.verify.run import run_case, run_cases
from lossgrad.runners.kernel_args import kernel_view

SEED = 20261127


@pytest.fixture(scope="module")
def drawn() -> list[Case]:
    return [fuzz.draw_case(SEED, soc, i) for soc in VERIFY_DEFAULT_SOCS for i in range(300)]


def test_the_same_seed_draws_the_same_calls() -> None:
    a = [fuzz.draw_case(5, "Ascend910B1", i) for i in range(20)]
    b = [fuzz.draw_case(5, "Ascend910B1", i) for i in range(20)]
    assert a == b and [c.id for c in a] == [c.id for c in b]
    assert a != [fuzz.draw_case(6, "Ascend910B1", i) for i in range(20)]
    # a call depends on (seed, SoC, index) only, not on what else a run selects
    assert fuzz.draw_case(5, "Ascend910B1", 7) == list(fuzz.fuzz_cases(8, 5, ["Ascend310P3", "Ascend910B1"]))[15]


def test_drawn_calls_are_valid_and_cover_the_space(drawn: list[Case]) -> None:
    for case in drawn[:200]:
        _check_call(case)  # aclnn's validation accepts it
        assert fuzz.valid(case)
    ranks = collections.Counter(len(fuzz._space_of(c)) for c in drawn)
    assert set(range(9)) <= set(ranks)
    assert {c.op for c in drawn} == set(lossgrad.registry.OPS)
    assert {c.values for c in drawn} == set(fuzz.VALUE_WEIGHTS)
    assert {k for c in drawn for k in c.layouts} == {"c", "s", "n", "t", "b"}
    assert any(c.ub_budget for c in drawn) and any(c.fold_tiles for c in drawn)
    assert any(s is not None and 0 in s for c in drawn for s in c.shapes)  # empty calls
    optional = [c for c in drawn if len(c.shapes) > 3]  # ops with optional inputs: left out and given
    assert not optional or ({c.shapes[3] is None for c in optional} == {True, False})
    assert any(len(set(c.dtypes)) > 1 for c in drawn)  # dtype mixes
    kl_sums = [c for c in drawn if c.log_target is not None and c.shapes[1] != fuzz._space_of(c)]
    assert len(kl_sums) > 50  # KL summing to self's shape
    grads = [c for c in drawn if c.shapes[0] != fuzz._space_of(c)]
    assert len(grads) > len(drawn) // 3  # gradOutput broadcast too (half of them at this seed)
    assert max(math.prod(fuzz._space_of(c)) for c in drawn) > 1 << 18


def test_layouts_keep_values_and_give_the_kernel_view_the_fuzz_plans_for() -> None:
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    for kind in "cstn":
        y = layout(x, kind)
        np.testing.assert_array_equal(y, x)
    assert layout(x, "s").strides[-1] == 8 and layout(x, "n").strides[0] < 0 and not layout(x, "t").flags.c_contiguous
    b = layout(x, "b")
    assert b.strides[0] == 0 and np.all(b == x[:1])
    case = Case(op="mse_loss_backward", soc="Ascend910B1", shapes=((2, 3, 4),) * 3, dtypes=("float32",) * 4,
                reduction="sum", layouts=("b", "c", "t"))
    g, s, t = make_inputs(case)
    views = fuzz.kernel_shapes(case)
    assert kernel_view(g).shape == views["grad"] == (1, 3, 4)
    assert kernel_view(t).shape == views["target"] == (2, 3, 4)


def test_shrinking_finds_the_smallest_failing_call() -> None:
    # A stand-in failure: any call with an axis of extent >= 5 behind at least two other axes.
    def fails(case: Case) -> str | None:
        space = fuzz._space_of(case)
        return "mismatch" if len(space) >= 3 and max(space[2:]) >= 5 else None

    big = Case(op="mse_loss_backward", soc="Ascend910B1", shapes=((3, 1, 4, 9, 33), (3, 7, 4, 9, 33), (1, 9, 33)),
               dtypes=("float16", "float16", "float16", "float32"), reduction="sum", values="special",
               layouts=("c", "n", "t"), ub_budget=40000, id="x")
    assert fails(big)
    out = fuzz.shrink(big, fails)
    space = fuzz._space_of(out.case)
    assert len(space) == 3 and space[2] == 5 and math.prod(space) == 5
    assert out.case.dtypes == ("float32",) * 4 and out.case.values == "normal"
    assert out.case.layouts == ("c", "c", "c") and out.case.ub_budget == 0
    assert out.signature == "mismatch" and out.trials > 1


def test_a_passing_call_is_not_shrunk() -> None:
    with pytest.raises(ValueError, match="does not fail"):
        fuzz.shrink(fuzz.draw_case(1, "Ascend910B1", 0), lambda c: None)


def test_reproducers_make_the_same_call(drawn: list[Case]) -> None:
    case = next(c for c in drawn if c.layouts != ("c", "c", "c") and c.log_target is not None
                and c.ub_budget and 0 < math.prod(fuzz._space_of(c)) < 4000)
    # lossgrad.verify.inputs builds the case's inputs bit for bit, in the same layouts
    built = lossgrad.verify.inputs(case.shapes, case.dtypes[:3], case.values, case.seed, layouts="".join(case.layouts),
                                   kl=True, log_target=bool(case.log_target))
    for got, want in zip(built, make_inputs(case)):
        np.testing.assert_array_equal(got, want)
        assert got.strides == want.strides and got.dtype == want.dtype
    # the printed line, run as printed, makes the same call (with the same knobs)
    line = fuzz.python_call(case)
    assert line.startswith("with lossgrad.tiling.knobs(ub_budget=")
    ns: dict = {}
    exec("import lossgrad, lossgrad.verify, lossgrad.tiling\n" + line.replace(": lossgrad.", ": out = lossgrad.", 1),
         ns)  # noqa: S102 - the reproducer runs as printed
    with lossgrad.tiling.knobs(ub_budget=case.ub_budget, fold_tiles=case.fold_tiles or None):
        want = getattr(lossgrad, case.op)(*make_inputs(case), fuzz.case_reduction(case), **case.attrs,
                                          out_dtype=case.dtypes[3], soc=case.soc, backend="twin")
    np.testing.assert_array_equal(ns["out"], want)
    # the case-table row reads back as the same case
    assert read_csv_text(fuzz.csv_row(case)) == [dataclasses.replace(case, tag="")]


def read_csv_text(text: str) -> list[Case]:
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
        fh.write(text)
    try:
        return read_csv(fh.name)
    finally:
        Path(fh.name).unlink()


# ---- the fixed-seed slice: the search as CI runs it on every default SoC -------------------------------------------

SLICE_PER_SOC = 60


def test_fuzz_slice_on_every_default_soc(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same calls with the compiler's synchronisation modelled (auto-sync on, CANN's default) and with only the
    kernel's own (off). Auto-sync is a switch of the twin's run, not of the build: one set of libraries serves both."""
    cases = list(fuzz.fuzz_cases(SLICE_PER_SOC, SEED, VERIFY_DEFAULT_SOCS))
    for auto_sync in ("on", "off"):
        monkeypatch.setenv(AUTO_SYNC_ENV, auto_sync)
        # PyTorch judges the golden, which auto-sync does not change: once
        oracle = fuzz.oracle_sample if _torch() and auto_sync == "on" else None
        results = run_cases(cases, "twin", jobs=2, oracle=oracle)
        failed = [r for r in results if r.failed]  # undetermined cases are not judged
        assert not failed, f"auto-sync {auto_sync}:\n" + "\n".join(
            f"{r.case.id}: {r.error or r.comparison.describe()}\n  {fuzz.python_call(r.case)}" for r in failed[:5])
        assert len(results) == SLICE_PER_SOC * len(VERIFY_DEFAULT_SOCS)
        assert sum(r.undetermined for r in results) < len(results) // 10  # not judged is the exception, not the rule


def _torch() -> bool:
    from lossgrad.verify.oracle import torch_available
    return torch_available()


# ---- a broken tile walk is caught ------------------------------------------------------------------------------------

def _mutant_kernels(monkeypatch: pytest.MonkeyPatch, mutant: int) -> None:
    """Every kernel the twin runner renders from here on is compiled with tile_walk.h's broken walk `mutant` (and
    none comes from a bundle another test registered in this process)."""
    from lossgrad.runners import twin as twin_runner

    monkeypatch.setattr(twin_runner, "_bundles", {})
    real = codegen.cached_kernel

    def mutated(op, dtypes, cache_root):
        path = real(op, dtypes, cache_root)
        text = f"#define LOSSGRAD_WALK_MUTANT {mutant}\n" + path.read_text()
        return codegen._cached_source(text, path.name, cache_root)

    monkeypatch.setattr(codegen, "cached_kernel", mutated)


def test_the_fuzz_search_catches_cores_that_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    # The broken walk starts every core but the first one unit early: its writes overlap the core before it. Every
    # drawn multi-core call of the flat split must fail (the twin faults on the cross-core write).
    _mutant_kernels(monkeypatch, 2)
    multi = []
    for i in range(400):
        case = fuzz.draw_case(SEED, "Ascend910B1", i, ops=["mse_loss_backward"])
        plan = fuzz.plan_case(case)
        if case.dtypes == ("float32",) * 4 and plan is not None and plan.block_dim > 1 and \
                plan.fields["splitMode"] == 0:
            multi.append(case)
        if len(multi) == 3:
            break
    assert multi
    for case in multi:
        r = run_case(case, "twin")
        assert not r.passed and "both write" in (r.error or ""), r.error


def test_the_fuzz_search_catches_issue_22s_broken_span(monkeypatch: pytest.MonkeyPatch) -> None:
    # The walk before the fix: tiles spanning runs whatever the output's strides. The issue's table fails again.
    _mutant_kernels(monkeypatch, 1)
    table = [c for c in read_csv(str(Path(__file__).parents[2] / "op_kernel" / "regressions.csv"))
             if c.id.startswith("issue22/") and c.soc == "Ascend910B1"]
    assert len(table) == 5
    assert all(not run_case(c, "twin").passed for c in table)
