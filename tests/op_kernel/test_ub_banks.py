"""UB bank placement on A2/A3 (lossgrad.tiling.ub_plan, docs/kernels.md "UB bank groups"): the two sources of a
vector instruction that read the same bank groups take up to twice its time (asc-devkit bank_conflict_ub). The
kernels place every operand so that no instruction of a same-shape call conflicts under the time model's bank rule
(lossgrad.timing.replay.bank_conflicts, itself checked against the devkit's scenarios in tests/timing), and only a
few of a broadcast call's repeats do (a row that starts mid-way in its resident copy, the last folds of a
reduction). Before the placement, 18-65% of a same-shape call's repeats conflicted (docs/kernels.md)."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from lossgrad.registry import OPS, get_op, op_part
from lossgrad.runners.twin import run_twin
from lossgrad.socs import VERIFY_DEFAULT_SOCS, get_soc
from lossgrad.timing.events import VEC
from lossgrad.timing.replay import bank_conflicts, repeat_span
from lossgrad.validation import validate

BANKED_SOCS = tuple(s for s in VERIFY_DEFAULT_SOCS if get_soc(s).arch.ub_bank_skew.value)
DTYPES = ("float32", "float16", "bfloat16")
MAX_BROADCAST_SHARE = 0.05  # measured: at most 2.9% (910B1, 2026-11-24; 21-62% before the placement)


@functools.lru_cache(maxsize=None)
def _conflicting_share(op: str, soc: str, dtype: str, shapes: tuple, reduction: str = "none",
                       log_target: bool | None = None) -> tuple[int, int]:
    """(repeats of vector instructions with a read-read or read-write bank conflict, all repeats), every core."""
    import ml_dtypes
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, s).astype(dt) for s in shapes]
    attrs = None if log_target is None else {"log_target": log_target}
    report = run_twin(validate(op, *arrays, *get_op(op).absent_optional, reduction, attrs, soc=soc),
                      timing=True).report
    log = report.events
    conflicting = total = 0
    for core in log.cores:
        for rec in core:
            if rec["kind"] != VEC:
                continue
            reps = int(rec["d"])
            total += reps
            span = repeat_span(reps, int(rec["x"]), int(rec["dtype"]))
            if any(bank_conflicts(int(rec["a"]), int(rec["b"]), int(rec["c"]), span)):
                conflicting += reps
    return conflicting, total


def test_the_banked_parts_are_the_default_a2_a3_ones():
    assert set(BANKED_SOCS) == {s for s in VERIFY_DEFAULT_SOCS if get_soc(s).arch.npu_arch == 2201}
    assert BANKED_SOCS


@pytest.mark.parametrize("soc", BANKED_SOCS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(OPS))
def test_same_shape_calls_have_no_bank_conflicts(op: str, dtype: str, soc: str):
    conflicting, total = _conflicting_share(op, soc, dtype, ((256, 1024),) * 3)
    assert total > 0
    # an instruction the op's facts name (SAME_SHAPE_BANK_CONFLICTS, with why) conflicts on each of its repeats: one
    # float32 pass over the call, 256 * 1024 / 64 repeats, and up to 5% more where tiles end mid-repeat
    allowed = getattr(op_part(op, "test_facts"), "SAME_SHAPE_BANK_CONFLICTS", {})
    assert conflicting <= len(allowed) * 1.05 * 256 * 1024 / 64, (conflicting, total)
    if "log_target" in {a.name for a in get_op(op).attrs}:  # the other path of the body: no conflict there
        assert _conflicting_share(op, soc, dtype, ((256, 1024),) * 3, "none", True)[0] <= \
            sum("logTarget false" not in k for k in allowed) * 1.05 * 256 * 1024 / 64


def test_a_scalar_gradient_has_no_bank_conflicts():
    for op in OPS:
        conflicting, total = _conflicting_share(op, BANKED_SOCS[0], "float32", ((), (256, 1024), (256, 1024)))
        assert total > 0 and conflicting == 0, op


BROADCASTS = {
    "row": ("mse_loss_backward", ((256, 1024), (256, 1024), (1024,)), "none"),
    "row_l1": ("l1_loss_backward", ((256, 1024), (256, 1024), (1024,)), "none"),
    "kl_to_rows": ("kl_div_backward", ((256, 1024), (1, 1024), (256, 1024)), "sum"),
    "kl_to_column": ("kl_div_backward", ((256, 1024), (256, 1), (256, 1024)), "none"),
    "kl_to_one": ("kl_div_backward", ((256, 1024), (1,), (256, 1024)), "sum"),
}


@pytest.mark.parametrize("dtype", ("float32", "float16"))
@pytest.mark.parametrize("name", list(BROADCASTS))
def test_broadcast_calls_keep_bank_conflicts_rare(name: str, dtype: str):
    op, shapes, reduction = BROADCASTS[name]
    conflicting, total = _conflicting_share(op, BANKED_SOCS[0], dtype, shapes, reduction)
    assert total > 0
    assert conflicting <= MAX_BROADCAST_SHARE * total, (conflicting, total)
