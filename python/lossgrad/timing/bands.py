"""How sure a modelled time is: the error band of its regime, from the held-out table.

`scripts/timing_heldout.py` runs every held-out case (lossgrad.timing.heldout) with the calibrated parameters and
writes `heldout_results.json` beside this module: each case's published and modelled figure and regime, and per
regime the band (low, high) = the 10th and 90th percentiles of published / modelled over that regime's cases
(min and max when a regime has fewer than MIN_CASES). A Timing's band says: in the held-out cases of its regime,
80% of true times fell between band[0] x and band[1] x the modelled time.

310P and Atlas 910 have no published timing at all (no msKPP table, no devkit run): their parameters are A2's with
their own clock and bandwidth, and their band is the regime's widened by THIN_WIDEN on both sides.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "heldout_results.json"
MIN_CASES = 10
THIN_LINES = ("310P", "910")
THIN_WIDEN = 2.0


@lru_cache(maxsize=1)
def results() -> dict[str, Any]:
    """The last held-out run (empty before the first)."""
    if not RESULTS.exists():
        return {}
    return json.loads(RESULTS.read_text())


def band_for(soc: str, regime: str) -> tuple[tuple[float, float], str]:
    """((low, high) as published / modelled, a note when the band is not the regime's own held-out figure)."""
    from ..socs import get_soc
    bands = results().get("bands", {})
    b = bands.get(regime)
    note = ""
    if b is None:
        # no held-out case of this regime: the widest band of any regime
        lows = [v["low"] for v in bands.values()] or [0.5]
        highs = [v["high"] for v in bands.values()] or [2.0]
        low, high = min(lows), max(highs)
        note = f"no held-out case of the {regime} regime: band is the widest of the others"
    else:
        low, high = b["low"], b["high"]
        if b["cases"] < MIN_CASES:
            note = f"{regime} band from only {b['cases']} held-out cases (min..max)"
    try:
        line = get_soc(soc).line
    except Exception:
        line = ""
    if line in THIN_LINES:
        low, high = low / THIN_WIDEN, high * THIN_WIDEN
        note = (f"{line}: no published timing of this part; band = the {regime} band widened {THIN_WIDEN:g}x "
                "each way")
    return (round(low, 3), round(high, 3)), note
