#!/usr/bin/env python3
"""Print docs/kernels.md's training table from `lossgrad bench --scenarios training --soc default --no-aclnn
--json` output: one line per SoC, dtype and op, modelled time against the roofline for each shape and pattern
(a miss of the bound or of the same-shape call marked *), and the count of rows that hold.

    lossgrad bench --scenarios training --soc default --no-aclnn --json > training.json
    python scripts/training_table.py training.json
"""
from __future__ import annotations

import json
import sys

from lossgrad.bench import TRAINING_PATTERNS, TRAINING_SHAPES, split_training_scenario, training_shape_name

SHORT = dict(zip(TRAINING_PATTERNS, ("same", "row", "scalar")))  # the table's column labels


def main(path: str) -> None:
    with open(path) as fh:
        sections = json.load(fh)
    rows = [r for section in sections.values() for r in section]
    cells: dict[tuple[str, str, str], dict[str, str]] = {}
    for r in rows:
        shape, pattern = split_training_scenario(r["scenario"])
        ratio = r["ours"]["modelled_us"] / r["roofline_us"]
        mark = "*" if r["misses"] else ""
        cells.setdefault((r["soc"], r["dtypes"][1], r["op"]), {})[f"{shape} {SHORT[pattern]}"] = \
            f"{ratio:.2f}{mark} {r['ours']['bound']}"
    cols = [f"{training_shape_name(s)} {SHORT[p]}" for s in TRAINING_SHAPES for p in TRAINING_PATTERNS]
    print("| SoC | dtype | op | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for (soc, dtype, op), got in cells.items():
        print(f"| {soc} | {dtype} | {op.removesuffix('_backward')} | " +
              " | ".join(got.get(c, "-") for c in cols) + " |")
    held = sum(1 for r in rows if not r["misses"])
    print(f"\n{held} of {len(rows)} rows hold; {len(rows) - held} miss (*).")


if __name__ == "__main__":
    main(sys.argv[1])
