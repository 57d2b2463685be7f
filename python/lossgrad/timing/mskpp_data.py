"""msKPP's measured copy tables, transcribed (figures with their source; no code from msKPP).

Source: repository Ascend/mskpp, csrc/prof_data/resource910b.cpp, tables GM_TO_UB_* and UB_TO_GM_* (first two
fields of each row: kilobytes per copy, GiB/s). msKPP scales these tables by an L2 hit ratio (mskpp/prof_data/
mov_prof.py: "measured data show 2x+ bandwidth between L2 hit ratio 0 and 1"; the tables are the hit-ratio-1 figures),
so the time model treats them as copies of L2-resident data (`l2="warm"`).

Only the sizes the calibration or the held-out table uses are transcribed; which is which is decided in
lossgrad.timing.calibration (MSKPP_FIT) and lossgrad.timing.heldout (MSKPP_HELD_OUT).
"""
from __future__ import annotations

MSKPP = "msKPP csrc/prof_data/resource910b.cpp"

# {table: {kilobytes: GiB/s}}
TABLES: dict[str, dict[int, float]] = {
    "GM_TO_UB_910b1": {1: 7.29, 2: 13.48, 3: 18.62, 4: 23.60, 8: 42.74, 12: 54.55, 16: 67.99, 32: 77.19,
                       48: 77.35, 64: 77.05, 128: 78.49, 192: 78.44},
    "UB_TO_GM_910b1": {1: 11.39, 2: 22.11, 3: 30.27, 4: 37.91, 8: 57.84, 12: 75.87, 16: 86.85, 32: 108.39,
                       48: 109.90, 64: 110.66},
    "GM_TO_UB_91095": {1: 7.26, 2: 14.50, 4: 28.93, 6: 43.25, 8: 57.54, 12: 85.59, 16: 93.65, 20: 73.11,
                       24: 87.88, 28: 92.87, 32: 93.62},
    "UB_TO_GM_91095": {1: 5.67, 2: 11.26, 4: 21.12, 6: 30.44, 8: 39.47, 12: 57.40, 16: 72.79, 20: 48.58,
                       24: 58.37, 28: 65.27, 32: 72.87},
    "GM_TO_UB_910b3": {1: 7.93, 2: 15.91, 4: 28.87, 8: 57.40, 16: 91.61, 32: 113.37, 64: 147.13, 128: 178.84,
                       192: 186.69},
}

# The SoC and pipe each table measured (910b1: Ascend910B1, 91095: an Ascend 950 part, 910b3: Ascend910B3).
TABLE_SOC = {"GM_TO_UB_910b1": ("Ascend910B1", "MTE2"), "UB_TO_GM_910b1": ("Ascend910B1", "MTE3"),
             "GM_TO_UB_91095": ("Ascend950PR_9589", "MTE2"), "UB_TO_GM_91095": ("Ascend950PR_9589", "MTE3"),
             "GM_TO_UB_910b3": ("Ascend910B3", "MTE2")}
