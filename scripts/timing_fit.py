#!/usr/bin/env python3
"""Fit the time model's parameters on the calibration table and write python/lossgrad/timing/fitted.json
(lossgrad.timing.fit; docs/timing.md "Calibration"). Runs every calibration kernel once on the twin, then replays
their logs: about 20-40 minutes on two busy cores. Prints each step's values and, at the end, the residuals."""
from __future__ import annotations

import argparse
import sys

from lossgrad.timing.fit import fit
from lossgrad.timing.params import FIT_GROUPS


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--group", action="append", choices=sorted(FIT_GROUPS),
                    help="refit only these groups (the others keep fitted.json's values); default: all, A2 first")
    args = ap.parse_args()
    groups = [g for g in FIT_GROUPS if g in args.group] if args.group else list(FIT_GROUPS)
    out = fit(groups, log=lambda s: print(s, flush=True))
    print("\nresiduals (modelled / published - 1):")
    for name, errs in out["residuals"].items():
        print(f"  {name}: " + ", ".join(f"{k} {v:+.1%}" for k, v in errs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
