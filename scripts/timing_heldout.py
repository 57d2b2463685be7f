#!/usr/bin/env python3
"""Run the time model's held-out table (python/lossgrad/timing/heldout.py: published timings no parameter was fitted
on) with the calibrated parameters; print the error of every case and the summaries per SoC, regime and source;
write python/lossgrad/timing/heldout_results.json, the source of every Timing's error band (lossgrad.timing.bands).
About 3-5 minutes on two busy cores (the devkit cases move gigabytes on the twin)."""
from __future__ import annotations

import argparse
import sys

from lossgrad.timing.validate import run_heldout, write


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--no-write", action="store_true", help="print only; keep heldout_results.json")
    args = ap.parse_args()
    out = run_heldout(log=lambda s: print(s, flush=True))
    for title, key in (("per SoC", "by_soc"), ("per regime", "by_regime"), ("per source", "by_source")):
        print(f"\n{title}:")
        for name, s in out[key].items():
            if s["cases"]:
                print(f"  {name:<22} {s['cases']:>3} cases  within 25%: {s['within_25pct']:.0%}  median |error| "
                      f"{s['median_abs_error']:.1%}  max {s['max_abs_error']:.1%}  mean {s['mean_error']:+.1%}")
    ov = out["overall"]
    print(f"\noverall: {ov['cases']} cases, within 25%: {ov['within_25pct']:.0%}, median |error| "
          f"{ov['median_abs_error']:.1%}")
    print("bands (published / modelled):", {g: (b["low"], b["high"], b["cases"]) for g, b in out["bands"].items()})
    print("done-when:", out["done_when"])
    if not args.no_write:
        write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
