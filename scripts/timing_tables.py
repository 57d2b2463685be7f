#!/usr/bin/env python3
"""Print the markdown tables of docs/timing.md from the time model's own files: the parameters (lossgrad.timing.
params: value, fitted or read, source), the calibration residuals (fitted.json) and the held-out errors
(heldout_results.json). Run after scripts/timing_fit.py and scripts/timing_heldout.py; paste into docs/timing.md."""
from __future__ import annotations

import json
import sys

from lossgrad.timing import calibration as cal
from lossgrad.timing import heldout
from lossgrad.timing.bands import RESULTS, results
from lossgrad.timing.params import FIT_GROUPS, fitted, params_for

SOCS = ("Ascend910B1", "Ascend950PR_9589", "Ascend310P3")
FIRST_RUN = RESULTS.with_name("heldout_results_first_run.json")  # the held-out run before the set fix (docs)


def fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return "table"
    return str(v)


def short(source: str) -> str:
    """A source with its case lists compressed: msKPP tables by size count, devkit cases by scenario number."""
    import re
    if ": " not in source or not source.startswith(("fit on", "carried")):
        return source
    head, _, rest = source.partition(": ")
    tail = ""
    if ")" in rest and rest.endswith(")") and rest.count("(") < rest.count(")"):
        rest, tail = rest[:-1], ")"
    names = [n.strip() for n in rest.split(",")]
    groups: dict[str, list[str]] = {}
    for n in names:
        m = re.match(r"mskpp_(\w+?)_(\d+)k$", n)
        if m:
            groups.setdefault(f"msKPP {m.group(1)}", []).append(m.group(2) + "K")
            continue
        m = re.match(r"data_copy_ub_s(\d)_\w+$", n)
        if m:
            groups.setdefault("data_copy", []).append("S" + m.group(1))
            continue
        m = re.match(r"add_hp_case(\d)_\w+$", n)
        if m:
            groups.setdefault("add case", []).append(m.group(1))
            continue
        groups.setdefault(n, [])
    parts = [f"{g} {'/'.join(v)}" if v else g for g, v in groups.items()]
    return f"{head}: {', '.join(parts)}{tail}"


def kind(source: str) -> str:
    if source.startswith("fit on"):
        return "fitted"
    if source.startswith("read"):
        return "read"
    if source.startswith("carried"):
        return "carried"
    if source.startswith(("assumed", "derived")):
        return source.split(" ")[0].rstrip(":")
    return "none"


def parameters() -> None:
    ps = [params_for(s) for s in SOCS]
    print("| Field | " + " | ".join(SOCS) + " | Source (Ascend910B1; Ascend950PR_9589 where different) |")
    print("|---|" + "---|" * len(SOCS) + "---|")
    for name in ps[0].fields():
        vals = [f"{fmt(getattr(p, name).value)} ({kind(getattr(p, name).source)})" for p in ps]
        a2, s950 = short(getattr(ps[0], name).source), short(getattr(ps[1], name).source)
        src = a2 if a2 == s950 else f"{a2}; 950: {s950}"
        print(f"| `{name}` | " + " | ".join(vals) + f" | {src} |")


def counts() -> None:
    print("| Group (part) | fitted parameters | calibration figures | figures / 2 |")
    print("|---|---|---|---|")
    for g, soc in FIT_GROUPS.items():
        n = len(fitted()["groups"][g])
        pts = cal.points(tuple(c for c in cal.CASES if c.soc == soc))
        print(f"| {g} ({soc}) | {n} | {pts} | {pts / 2:g} |")


def residuals() -> None:
    print("| Case | SoC | primary | published us | error | other figures (error) | fitted here |")
    print("|---|---|---|---|---|---|---|")
    res = fitted()["residuals"]
    fit_of: dict[str, list[str]] = {}
    for g, vals in fitted()["groups"].items():
        for k, v in vals.items():
            for c in v["cases"]:
                fit_of.setdefault(c, []).append(k)
    for c in cal.CASES:
        e = res[c.name]
        others = ", ".join(f"{k} {v:+.1%}" for k, v in e.items() if k != c.primary)
        print(f"| {c.name} | {c.soc} | {c.primary} | {c.primary_us:g} | {e[c.primary]:+.1%} | {others or '-'} | "
              f"{', '.join(sorted(set(fit_of.get(c.name, [])))) or '-'} |")


def held_out() -> None:
    r = results()
    first = {row["case"]: row for row in json.loads(FIRST_RUN.read_text())["rows"]}
    print("| Case | SoC | what | figure | published us | modelled us | error | regime | first run: modelled us, "
          "error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in r["rows"]:
        f = first[row["case"]]
        print(f"| {row['case']} | {row['soc']} | {row['what']} | {row['figure']} | {row['published_us']:g} | "
              f"{row['modelled_us']:.4g} | {row['error']:+.1%} | {row['regime']} | {f['modelled_us']:.4g}, "
              f"{f['error']:+.1%} |")
    print()
    print("| Group | cases | within 25% | median abs error | max abs error | mean error |")
    print("|---|---|---|---|---|---|")
    for title, key in (("SoC", "by_soc"), ("regime", "by_regime"), ("source", "by_source")):
        for name, s in r[key].items():
            if s["cases"]:
                print(f"| {title} {name} | {s['cases']} | {s['within_25pct']:.0%} | {s['median_abs_error']:.1%} | "
                      f"{s['max_abs_error']:.1%} | {s['mean_error']:+.1%} |")
    ov = r["overall"]
    print(f"| all | {ov['cases']} | {ov['within_25pct']:.0%} | {ov['median_abs_error']:.1%} | "
          f"{ov['max_abs_error']:.1%} | {ov['mean_error']:+.1%} |")
    print()
    print("| Regime | held-out cases | band (published / modelled) |")
    print("|---|---|---|")
    for g, b in r["bands"].items():
        print(f"| {g} | {b['cases']} | {b['low']:.2f} - {b['high']:.2f} |")
    print()
    print("done-when:", ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in r["done_when"].items()))
    assert r["digest"] == heldout.HELDOUT_DIGEST


def main() -> int:
    for title, fn in (("Parameters", parameters), ("Fitted vs points", counts), ("Calibration residuals", residuals),
                      ("Held-out", held_out)):
        print(f"\n### {title}\n")
        fn()
    return 0


if __name__ == "__main__":
    sys.exit(main())
