"""The held-out table of the time model: published timings that no parameter was fitted on.

FROZEN before the fit (docs/timing.md "Held-out"): the cases below were chosen, with their published figures, before
any parameter of lossgrad.timing.params was fitted, and the fit (lossgrad.timing.fit) reads only
lossgrad.timing.calibration. tests/timing/test_heldout.py checks that the two tables share no case and that this
table is unchanged (its digest, HELDOUT_DIGEST). `scripts/timing_heldout.py` runs it and prints the errors per case,
per SoC and per regime; the regime bands every Timing carries (lossgrad.timing.bands) come from that run.

What is held out, and why:
- From the devkit's own examples (the calibration's sources), one case of each kind the fit does not need: the
  multi-core small-copy add (case 2) on A2 and 950, the data_copy scenarios 7-8 (every core reads the whole matrix,
  L2 bypassed) on both, and all four cases of the 950 set_l2_cache_mode example (L2 reuse and write absorption).
- From msKPP, every copy size between the fitted ones for four of its tables (3/12/48 KB on 910B1, 6/12/24 KB on 950).
- Every other public timing found: the CAModel simulator runs of cann-api-explorer (17 elementwise vector kernels and
  the DataCopy and Duplicate units, Ascend 950, 8 cores x 2048 float32 or one core), compared with the modelled core
  span (the simulator has no host launch).
Sources are cited by repository and path; the numbers are transcribed figures.
"""
from __future__ import annotations

import hashlib

from .cases import A2_SOC as A2
from .cases import A950_SOC as A950
from .cases import ADD_README as _ADD
from .cases import DC_README as _DC
from .cases import F32, HALF, Case, mskpp_copy_us
from .cases import L2_README as _L2
from .mskpp_data import MSKPP, TABLE_SOC, TABLES

_CAM = "Cryspia/cann-api-explorer reports/INDEX.md (CAModel, Ascend950, CANN 9.1.0-beta.1; kernels examples/ascendc/)"

A950_CAM = "Ascend950PR_9599"  # cann-api-explorer's build SoC

# msKPP sizes (KB) held out of the fit, per table.
MSKPP_HELD_OUT: dict[str, tuple[int, ...]] = {
    "GM_TO_UB_910b1": (3, 12, 48), "UB_TO_GM_910b1": (3, 12, 48),
    "GM_TO_UB_91095": (6, 12, 24), "UB_TO_GM_91095": (6, 12, 24),
}


def _copy_case(table: str, kb: int) -> Case:
    soc, pipe = TABLE_SOC[table]
    return Case(name=f"mskpp_{table}_{kb}k", soc=soc, source=f"{MSKPP} {table}",
                what=f"one {pipe} copy of {kb} KB (msKPP: {TABLES[table][kb]} GiB/s, L2-resident data)",
                published={"copy": round(mskpp_copy_us(kb * 1024, TABLES[table][kb]), 4)},
                copy=(pipe, kb * 1024), l2="warm")


def _add(name: str, soc: str, cores: int, copy_len: int, mode: int, bypass: int, slot: int, published: dict,
         source: str, what: str) -> Case:
    # calib_add.cpp tiling: rows, cols, copyLen, mode (0 scalar, 1 single buffer, 2 double), L2 bypass of x/y,
    # bank-conflict-free layout, elements per UB slot
    return Case(name=name, soc=soc, source=source, what=what, published=published, kernel="calib_add.cpp",
                entry="calib_add", block_dim=cores, gm=(((8192, 8192), HALF),) * 3,
                tiling=(8192, 8192, copy_len, mode, bypass, 0, slot))


def _dc(name: str, soc: str, cores: int, m: int, n: int, tile: tuple[int, int], mode: int, published: dict,
        source: str, what: str) -> Case:
    # calib_data_copy.cpp tiling: m, n, tileM, tileN, mode (0 tiles, 1 whole x4, 2 quarters x4, 3 full matrix per
    # core in the same order, 4 full matrix per core in a rotated order)
    return Case(name=name, soc=soc, source=source, what=what, published=published, kernel="calib_data_copy.cpp",
                entry="calib_data_copy", block_dim=cores, gm=(((m, n), HALF),), tiling=(m, n, tile[0], tile[1], mode))


# The 17 elementwise kernels of cann-api-explorer (examples/ascendc/vector/<op>): 8 cores x 2048 float32, 16 tiles
# of 128 elements per core through two-deep TQues; published CAModel execution time in ns.
EXPLORER_OPS: dict[str, tuple[str, float]] = {
    "Abs": ("unary", 5992.12), "Exp": ("unary", 5715.15), "Ln": ("unary", 6037.58), "Reciprocal": ("unary", 6070.3),
    "Relu": ("unary", 5998.79), "Rsqrt": ("unary", 6411.52), "Sqrt": ("unary", 6072.73),
    "Add": ("binary", 6609.09), "Div": ("binary", 6052.12), "Max": ("binary", 6088.48), "Min": ("binary", 6040.61),
    "Mul": ("binary", 7072.73), "Sub": ("binary", 6632.12),
    "Adds": ("scalar", 6001.21), "Maxs": ("scalar", 5988.48), "Mins": ("scalar", 6033.94), "Muls": ("scalar", 6012.73),
}


def _explorer(op: str, kind: str, ns: float) -> Case:
    inputs = 2 if kind == "binary" else 1
    return Case(name=f"cam_{op.lower()}", soc=A950_CAM, source=_CAM, kernel="explorer_vec.cpp", entry="k_custom",
                what=f"{op} ({kind}), 8 cores x 2048 float32, tiles of 128 through 2-deep TQues",
                published={"span": round(ns / 1e3, 5)}, block_dim=8, gm=(((16384,), F32),) * (inputs + 1),
                defines=(("EXPLORER_OP", op), ("EXPLORER_KIND", kind.upper())))


HELDOUT: tuple[Case, ...] = (
    # ---- devkit, Atlas A2
    _add("add_hp_case2_A2", A2, 48, 4096, 1, 0, 16384,
         {"task": 306.58, "aiv": 297.14, "V": 15.885, "S": 8.219, "MTE2": 215.485, "MTE3": 54.33}, f"{_ADD} case 2",
         "z = x + y, [8192,8192] half, 48 cores, 4096-element copies, single buffer"),
    _dc("data_copy_ub_s7_A2", A2, 48, 6144, 512, (128, 64), 3, {"task": 539.42, "MTE2": 474.717},
        f"{_DC} scenario 7", "every core reads all of [6144,512] half in [128,64] tiles, same order, L2 bypassed"),
    _dc("data_copy_ub_s8_A2", A2, 48, 6144, 512, (128, 64), 4, {"task": 328.88, "MTE2": 307.38},
        f"{_DC} scenario 8", "every core reads all of [6144,512] half in [128,64] tiles, rotated order, L2 bypassed"),
    # ---- devkit, Ascend 950
    _add("add_hp_case2_950", A950, 64, 4096, 1, 0, 21840, {"task": 310.489, "V": 15.465}, f"{_ADD} 950 table, case 2",
         "z = x + y, [8192,8192] half, 64 cores, 4096-element copies, single buffer"),
    _dc("data_copy_ub_s7_950", A950, 64, 8192, 512, (128, 64), 3, {"task": 342.29, "MTE2": 339.38},
        f"{_DC} scenario 7 (950)",
        "every core reads all of [8192,512] half in [128,64] tiles, same order, L2 bypassed"),
    _dc("data_copy_ub_s8_950", A950, 64, 8192, 512, (128, 64), 4, {"task": 335.64, "MTE2": 333.08},
        f"{_DC} scenario 8 (950)", "every core reads all of [8192,512] half in [128,64] tiles, rotated, L2 bypassed"),
    _dc("set_l2_case1_950", A950, 64, 12288, 12288, (64, 1024), 1, {"task": 690.38, "aiv": 689.48}, f"{_L2} case 1",
        "whole [12288,12288] half matrix read 4 times, [64,1024] tiles, L2 normal"),
    _dc("set_l2_case2_950", A950, 64, 12288, 12288, (64, 1024), 2, {"task": 350.95, "aiv": 350.03}, f"{_L2} case 2",
        "each quarter of the columns read 4 times in a row, [64,1024] tiles, L2 normal"),
    _add("set_l2_case3_950", A950, 64, 20992, 2, 0, 20992,
         {"task": 240.01, "aiv": 239.13, "S": 1.815, "MTE2": 233.869, "MTE3": 121.44}, f"{_L2} case 3",
         "z = x + y, [8192,8192] half, 64 cores, 20992-element copies, double buffer, L2 normal"),
    _add("set_l2_case4_950", A950, 64, 20992, 2, 1, 20992,
         {"task": 172.996, "aiv": 171.81, "S": 1.801, "MTE2": 166.752, "MTE3": 18.723}, f"{_L2} case 4",
         "as case 3 with x and y read past L2 (NOTALLOC_KEEP)"),
    # ---- msKPP, copy sizes between the fitted ones
    *(_copy_case(t, kb) for t, sizes in MSKPP_HELD_OUT.items() for kb in sizes),
    # ---- cann-api-explorer, CAModel (Ascend 950)
    *(_explorer(op, kind, ns) for op, (kind, ns) in EXPLORER_OPS.items()),
    Case(name="cam_datacopy", soc=A950_CAM, source=_CAM, kernel="explorer_vec.cpp", entry="k_custom",
         what="DataCopy unit: GM -> UB -> UB (DataCopy) -> GM, 8 cores x 2048 float32, tiles of 128",
         published={"span": 5.85818}, block_dim=8, gm=(((16384,), F32),) * 2,
         defines=(("EXPLORER_OP", "DataCopy"), ("EXPLORER_KIND", "COPY"))),
    Case(name="cam_duplicate", soc=A950_CAM, source=_CAM, kernel="explorer_vec.cpp", entry="k_custom",
         what="Duplicate unit: one core, 64 float32 filled by Duplicate and copied out",
         published={"span": 1.56364}, block_dim=1, gm=(((64,), F32),),
         defines=(("EXPLORER_OP", "Duplicate"), ("EXPLORER_KIND", "FILL"))),
)


def digest(cases: tuple[Case, ...] = HELDOUT) -> str:
    """A SHA-256 of the table's content (names, SoCs, published figures, kernel set-ups): any edit changes it."""
    text = "\n".join(repr((c.name, c.soc, sorted(c.published.items()), c.kernel, c.block_dim, c.gm, c.tiling,
                           c.defines, c.l2, c.copy)) for c in cases)
    return hashlib.sha256(text.encode()).hexdigest()


# Recorded when the table was frozen (before the fit); tests/timing/test_heldout.py compares.
HELDOUT_DIGEST = "6b4a2e79e677d6854efaff8d6ce701dfbabb7dd77c957f73c81f05c2e2c87398"
