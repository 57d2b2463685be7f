#!/usr/bin/env python3
"""Turn the case tables hicann/ops-nn ships for a loss op (its tests' TTK csv and ATK json) into the op folder's
`opsnn_cases.csv` (tests/python/ops/test_opsnn_cases.py runs every row on the twin).

Usage: python scripts/opsnn_case_table.py --op binary_cross_entropy --ttk TTK.csv --atk ATK.json > OUT.csv
(the files are in an ops-nn checkout under loss/<op>/tests/st/). Only facts are kept: each case's name, shapes,
dtypes, reduction, value ranges and tolerance, in aclnn's argument order; an absent optional input is empty.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from lossgrad.registry import get_op  # noqa: E402

COLUMNS = ("id", "shapes", "dtypes", "reduction", "ranges", "tolerance")
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "float": "float32"}
REDUCTIONS = {0: "none", 1: "mean", 2: "sum", "none": "none", "mean": "mean", "sum": "sum"}


def _cell(items: list) -> str:
    return ";".join("" if x is None else str(x) for x in items)


def ttk_rows(path: Path, op) -> list[dict[str, str]]:
    """TTK rows list the kernel's inputs in its proto order; aclnn's order comes from the spec."""
    by_kernel = sorted(op.inputs, key=lambda i: i.kernel_index)
    rows = []
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            shapes = ast.literal_eval(r["input_shapes"])
            dtypes = ast.literal_eval(r["input_dtypes"])
            ranges = list(ast.literal_eval(r["input_data_ranges"]))
            present = [s is not None for s in shapes]
            it = iter(ranges)
            kernel = {i.role: (shapes[k], dtypes[k], next(it) if present[k] else None)
                      for k, i in enumerate(by_kernel)}
            tol = ast.literal_eval(r["precision_tolerances"])[0]
            rows.append(_row(f"ttk/{r['testcase_name']}", op, kernel, ast.literal_eval(r["attributes"])["reduction"],
                             tol))
    return rows


def atk_rows(path: Path, op) -> list[dict[str, str]]:
    rows = []
    for case in json.loads(path.read_text()):
        args = {a["name"]: a for a in case["inputs"]}
        kernel = {}
        for i in op.inputs:
            a = args.get(i.aclnn)
            absent = a is None or a.get("shape") is None or a.get("dtype") in (None, "None")
            kernel[i.role] = (None, None, None) if absent else (tuple(a["shape"]), DTYPES.get(a["dtype"], a["dtype"]),
                                                                tuple(a["range_values"]))
        rows.append(_row(f"atk/{case['id']}", op, kernel, args["reduction"]["range_values"], None))
    return rows


def _row(ident: str, op, kernel: dict, reduction, tol) -> dict[str, str]:
    order = [kernel[i.role] for i in op.inputs]  # aclnn's order
    return {"id": ident, "shapes": _cell([None if s is None else tuple(s) for s, _, _ in order]),
            "dtypes": _cell([d for _, d, _ in order]), "reduction": REDUCTIONS[reduction],
            "ranges": _cell([None if r is None else f"{float(r[0])!r}:{float(r[1])!r}" for _, _, r in order]),
            "tolerance": "" if tol is None else f"{float(tol[0])!r}"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--op", required=True)
    p.add_argument("--ttk", type=Path)
    p.add_argument("--atk", type=Path)
    a = p.parse_args()
    op = get_op(a.op)
    rows = (ttk_rows(a.ttk, op) if a.ttk else []) + (atk_rows(a.atk, op) if a.atk else [])
    out = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    sys.stdout.write(f"# {op.aclnn}: hicann/ops-nn's case tables, converted by scripts/opsnn_case_table.py\n")
    out.writeheader()
    out.writerows(rows)


if __name__ == "__main__":
    main()
