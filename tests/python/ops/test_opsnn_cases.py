"""hicann/ops-nn's own case tables for an op (its tests' TTK csv and ATK json under loss/<op>/tests/st, converted
into the op folder's opsnn_cases.csv by scripts/opsnn_case_table.py): every row is a call aclnn accepts, and every
row up to MAX_ELEMENTS runs on the twin with values drawn in the row's ranges: bit-identical to the float32 golden
(aclnn's order) and within CANN's precision standard of the float64 golden (the row's tolerance where it is
looser; the op folder's test_facts.F64_STANDARD where aclnn's own order cannot meet "experimental"). The TTK rows
are the 950 kernel's (arch35), the ATK rows the aclnn API's: they run on Ascend 950 and A2."""
from __future__ import annotations

import ast
import csv
import math
import os
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lossgrad
from lossgrad import golden, precision
from lossgrad.dtypes import parse as parse_dtype
from lossgrad.errors import LossGradError
from lossgrad.registry import OPS, op_part
from lossgrad.runners.kernel_args import instance_dtypes
from lossgrad.validation import validate
from lossgrad.verify.run import build_bundles, bundles_in_use

MAX_ELEMENTS = 1 << 16  # larger rows (ATK's performance shapes, up to 9e8 elements) are validated only
# Each dtype mix is a kernel of its own: rows of the table's first MAX_MIXES mixes run on the twin (BCE's table has 6
# mixes, BCEWithLogits' 150; a library of 16 kernels compiles in about 20 s); LOSSGRAD_OPSNN_ALL=1 runs every row
# (docs/verify.md).
MAX_MIXES = 1 << 30 if os.environ.get("LOSSGRAD_OPSNN_ALL") == "1" else 16
NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _table(op: Any) -> Path:
    return Path(lossgrad.__file__).parent / "ops" / op.template / "opsnn_cases.csv"


def _rows(op: Any, refused: bool = False) -> list[dict[str, str]]:
    """The table's rows aclnn accepts (refused=True: those it refuses, test_facts.OPSNN_REFUSED)."""
    with _table(op).open(newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return [r for r in rows if (r["id"] in _refused(op)) == refused]


def _refused(op: Any) -> dict[str, str]:
    return getattr(op_part(op, "test_facts"), "OPSNN_REFUSED", {})


WITH_TABLES = [op for op in OPS.values() if _table(op).exists()]


def _tensors(row: dict[str, str], seed: int) -> list[np.ndarray | None]:
    rng = np.random.default_rng(seed)
    out: list[np.ndarray | None] = []
    for shape, dtype, span in zip(*(row[k].split(";") for k in ("shapes", "dtypes", "ranges"))):
        if not shape:
            out.append(None)
            continue
        lo, hi = (float(x) for x in span.split(":"))
        with np.errstate(over="ignore"):
            out.append(rng.uniform(lo, hi, ast.literal_eval(shape)).astype(NP[dtype]))
    return out


def _numel(row: dict[str, str]) -> int:
    return max(math.prod(ast.literal_eval(s)) for s in row["shapes"].split(";") if s)


@pytest.mark.parametrize("op", WITH_TABLES, ids=[op.template for op in WITH_TABLES])
def test_every_row_is_a_call_aclnn_accepts_but_the_listed_ones(op: Any) -> None:
    rows, refused = _rows(op), _rows(op, refused=True)
    assert len(rows) == len({r["id"] for r in rows}) > 0
    assert {r["id"] for r in refused} == set(_refused(op))  # every listed row is in the table
    for row in rows + refused:
        arrays = [None if not s else np.broadcast_to(np.zeros((), NP[d]), ast.literal_eval(s))
                  for s, d in zip(row["shapes"].split(";"), row["dtypes"].split(";"))]
        for soc in ("Ascend950PR_9579", "Ascend910B1"):
            if row in refused:
                with pytest.raises(LossGradError) as info:
                    validate(op, *arrays, row["reduction"], soc=soc)
                assert info.value.code == 161002, row["id"]
            else:
                assert validate(op, *arrays, row["reduction"], soc=soc).out_shape is not None, row["id"]


@pytest.mark.parametrize("soc", ["Ascend950PR_9579", "Ascend910B1"])
@pytest.mark.parametrize("op", WITH_TABLES, ids=[op.template for op in WITH_TABLES])
def test_rows_run_on_the_twin_as_the_golden_says(op: Any, soc: str) -> None:
    capped = False
    mixes: set[str] = set()
    todo = []
    for index, row in enumerate(_rows(op)):
        if _numel(row) > MAX_ELEMENTS or (soc == "Ascend910B1" and row["id"].startswith("ttk/")):
            continue
        if row["dtypes"] not in mixes and len(mixes) >= MAX_MIXES:
            capped = True
            continue
        mixes.add(row["dtypes"])
        tensors = _tensors(row, index)
        todo.append((row, tensors, validate(op, *tensors, row["reduction"], soc=soc)))
    # every mix's kernel in one library, as `lossgrad verify` builds them (one compile instead of one per mix)
    with bundles_in_use(build_bundles((soc, op.name, instance_dtypes(call)) for _, _, call in todo)):
        for row, tensors, call in todo:
            _check_row(op, soc, row, tensors, call)
    # a table within the mix cap runs its rows; a capped one at least a row of each mix it runs
    assert len(todo) >= MAX_MIXES if capped else len(todo) > (40 if soc == "Ascend910B1" else 150), len(todo)


def _check_row(op: Any, soc: str, row: dict[str, str], tensors: list[np.ndarray | None], call: Any) -> None:
    got = getattr(lossgrad, op.name)(*tensors, row["reduction"], soc=soc, backend="twin")
    want32 = golden.compute_call(call, "float32")
    assert np.array_equal(got, want32, equal_nan=True), row["id"]
    want64 = golden.compute_call(call)
    finite = np.isfinite(want64.astype(np.float64)) & np.isfinite(got.astype(np.float64))
    scale = 1.0
    if row["tolerance"]:  # the row's own tolerance, where it is looser than the standard's threshold
        scale = max(1.0, float(row["tolerance"]) / precision.THRESHOLDS[parse_dtype(row["dtypes"].split(";")[1])])
    result = precision.compare(got[finite].astype(np.float64), want64[finite].astype(np.float64),
                               call.out_dtype, threshold_scale=scale,
                               standard=getattr(op_part(op, "test_facts"), "F64_STANDARD", "experimental"))
    assert result.passed, f"{row['id']}: {result.describe()}"
