"""Runs the held-out table (lossgrad.timing.heldout) with the calibrated parameters and summarises the errors:
per case, per SoC, per regime and per source; derives each regime's error band (lossgrad.timing.bands) and writes
`heldout_results.json`. `scripts/timing_heldout.py` is the command; docs/timing.md "Held-out" shows its output.

Error = modelled / published - 1 of the case's primary figure (Task Duration, else the simulated span, else the
single copy). The done-when of issue 23: at least 12 cases on at least two SoCs and both the latency-bound and
bandwidth-bound regimes, |error| <= 25% on at least 80% of them, median |error| <= 15%.
"""
from __future__ import annotations

import json
import statistics
from typing import Any, Callable, Sequence

import numpy as np

from .bands import MIN_CASES, RESULTS, results
from .cases import Case, modelled, run
from .heldout import HELDOUT, HELDOUT_DIGEST, digest
from .replay import REGIMES

WITHIN = 0.25


def _summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    errs = [abs(r["error"]) for r in rows]
    if not errs:
        return {"cases": 0}
    return {"cases": len(errs), "within_25pct": round(sum(e <= WITHIN for e in errs) / len(errs), 3),
            "median_abs_error": round(statistics.median(errs), 4), "max_abs_error": round(max(errs), 4),
            "mean_error": round(float(np.mean([r["error"] for r in rows])), 4)}


def band_of(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """published / modelled of a regime's cases: 10th-90th percentile, or min-max under MIN_CASES."""
    ratios = np.array([1.0 / (1.0 + r["error"]) for r in rows])
    if len(ratios) >= MIN_CASES:
        low, high = np.percentile(ratios, 10), np.percentile(ratios, 90)
    else:
        low, high = ratios.min(), ratios.max()
    return {"low": round(float(min(low, 1.0)), 4), "high": round(float(max(high, 1.0)), 4), "cases": len(ratios)}


def run_heldout(cases: Sequence[Case] = HELDOUT, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Model every held-out case; the per-case rows and the summaries (not written: see `write`)."""
    if digest() != HELDOUT_DIGEST:
        raise RuntimeError("the held-out table changed after it was frozen (heldout.HELDOUT_DIGEST)")
    rows = []
    for c in cases:
        t = run(c)
        m = modelled(c, t)
        key = c.primary
        row = {"case": c.name, "soc": c.soc, "source": c.source.split(" ")[0], "what": c.what, "figure": key,
               "published_us": c.primary_us, "modelled_us": round(m[key], 4),
               "error": round(m[key] / c.primary_us - 1, 4), "regime": t.regime, "bound": t.bound,
               "other": {k: {"published": v, "modelled": round(m[k], 3)} for k, v in c.published.items()
                         if k != key}}
        rows.append(row)
        log(f"  {c.name:<28} {c.soc:<18} {key:<5} published {c.primary_us:>10.3f}  modelled {m[key]:>10.3f}  "
            f"{row['error']:+7.1%}  {t.regime}")
    out: dict[str, Any] = {"digest": HELDOUT_DIGEST, "rows": rows, "overall": _summary(rows)}
    out["by_soc"] = {s: _summary([r for r in rows if r["soc"] == s]) for s in sorted({r["soc"] for r in rows})}
    out["by_regime"] = {g: _summary([r for r in rows if r["regime"] == g]) for g in REGIMES}
    out["by_source"] = {s: _summary([r for r in rows if r["source"] == s]) for s in sorted({r["source"] for r in rows})}
    out["bands"] = {g: band_of([r for r in rows if r["regime"] == g]) for g in REGIMES
                    if any(r["regime"] == g for r in rows)}
    ov = out["overall"]
    out["done_when"] = {
        "cases >= 12": ov["cases"] >= 12,
        "socs >= 2": len({r["soc"] for r in rows}) >= 2,
        "latency and bandwidth regimes": all(any(r["regime"] == g for r in rows) for g in ("latency", "bandwidth")),
        "within 25% on >= 80%": ov["within_25pct"] >= 0.8,
        "median |error| <= 15%": ov["median_abs_error"] <= 0.15,
    }
    return out


def write(out: dict[str, Any]) -> None:
    RESULTS.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    results.cache_clear()
