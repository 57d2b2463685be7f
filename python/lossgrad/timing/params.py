"""Per-SoC values of the time model's cost parameters (`params_for(soc) -> TimeParams`).

Every value is a `Fact(value, source, confidence)`. Sources are public files cited by their path inside their
repository: "msKPP" = repository Ascend/mskpp, file csrc/prof_data/resource910b.cpp (measured per-core tables;
its bandwidth unit is GiB/s, converted here to 1e9 B/s); "ADK" = repository mirror-cann/asc-devkit. The calibration
cases (lossgrad.timing.calibration, docs/timing.md "Calibration") are the devkit examples
examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy (A2 and 950 msprof runs) and
.../00_vector_compute/add_high_performance cases 1-4 (A2). "fit: <case>" names the case a value was fitted on;
"table:" a value read directly from a published table.

Confidence: "high" = read from a table for this SoC; "medium" = fitted on this SoC's measurements or taken from
the same die; "low" = carried over from another architecture or a press figure; "none" = no public figure.
"""
from __future__ import annotations

from functools import lru_cache

from ..socs import Fact, Soc, get_soc
from .model import TimeParams

_GIB = 1.073741824  # GiB/s -> GB/s (msKPP's tables divide by 1024^3, csrc/prof_data/data_adapter.cpp)

_MSKPP = "msKPP csrc/prof_data/resource910b.cpp"
_DC = "ADK examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md"
_ADD = "ADK examples/01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance/README.md"
_THEORY = "ADK docs/zh/api/附录/Vector指令理论性能汇总.md"
_REG = "ADK docs/zh/api/附录/Reg矢量计算接口理论性能汇总.md"
_BANK = "ADK examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub/README.md"


# ---------------------------------------------------------------- vector cycles per 256-byte repeat
# cycles = (256 / sizeof(dtype)) / (elements per cycle of the table). A class takes the figure of its named API.

_A2_VEC = {
    "default": {"*": 1.0},
    "add": {"*": 1.0},                                   # Add/Sub/Max/Min/Adds/Abs/Relu: 128 (b16) / 64 (b32)
    "mul": {"*": 1.0},                                   # Mul/Muls/Axpy/FusedMulAdd: 128 / 64
    "div": {"half": 4.0, "float": 2.0, "*": 2.0},        # Div: 32 elements/cycle (half and float)
    "sqrt": {"half": 4.0, "float": 2.0, "*": 2.0},       # Sqrt: 32
    "exp_log": {"half": 4.0, "float": 2.0, "*": 2.0},    # Exp/Ln: 32
    "cmp": {"*": 1.0},                                   # Compare/Compares: 128 / 64
    "select": {"*": 1.0},                                # Select: 128 / 64
    "cast": {"*": 1.0},                                  # Cast: per repeat of the wider type, 64 b32/cycle
    "reduce": {"half": 7.0, "float": 7.0, "*": 7.0},     # ReduceRepeat: 128/7 (half), 64/7 (float)
    "dup": {"*": 1.0},                                   # Duplicate: 128 / 64
    "brcb": {"*": 1.0},                                  # Brcb: one 256-byte output repeat per cycle
    "copy": {"*": 1.0},                                  # DataCopy(UB->UB): 256 bytes/cycle
    "gather": {"half": 25.6, "int16_t": 25.6, "uint16_t": 25.6, "*": 12.8},  # Gather: 5 elements/cycle
}

_950_VEC = {
    "default": {"*": 1.0},
    "add": {"int32_t": 2.0, "uint32_t": 2.0, "*": 1.0},  # Add: half/bf16 128, float 64, int32 32
    "mul": {"int32_t": 2.0, "uint32_t": 2.0, "*": 1.0},  # Mul: half 128, float 64, int32 32
    "div": {"half": 8.0, "float": 4.0, "*": 4.0},        # Div: 16 elements/cycle
    "sqrt": {"half": 8.0, "float": 4.0, "*": 4.0},       # Sqrt: 16
    "exp_log": {"half": 8.0, "float": 4.0, "*": 4.0},    # Exp/Ln/Log: 16
    "cmp": {"*": 1.0},                                   # Compare/Compares: 128 / 64
    "select": {"*": 1.0},                                # Select: 128 / 64
    "cast": {"*": 1.0},                                  # Cast float<->half/bf16: 64 per cycle
    "reduce": {"*": 1.0},                                # Reduce SUM/MAX/MIN: 128 (half) / 64 (float)
    "dup": {"*": 1.0},
    "brcb": {"*": 1.0},
    "copy": {"*": 1.0},                                  # DataCopy(UB->UB): 256 bytes/cycle (table 3)
    "gather": {"*": 2.0},                                # Gather (Reg): 64 b16 / 32 b32 elements per cycle
}


# ---------------------------------------------------------------- copy bandwidth curves (bytes, GB/s)

# A2 GM->UB, per core. Small copies from the streaming data_copy scenario 1 (49152 back-to-back 128-byte
# DataCopyPad per core); 8 KB from add_high_performance case 1 (single core, two 8 KB copies then a flag wait: MTE2
# busy 6208.762 us / 32768 copies); >= 32 KB from msKPP GM_TO_UB_910b1 (77.19 GiB/s at 32 KB, 78.49 at 128 KB,
# the plateau). msKPP's points below 8 KB (1 KB: 7.29 GiB/s) are not used: each includes a copy's completion
# latency, which a stream of copies does not pay (data_copy scenario 1 moves 128-byte copies at 11 GB/s per core).
_A2_MTE2 = ((128, 11.4), (8192, 43.1), (32768, 77.19 * _GIB), (131072, 78.49 * _GIB))
# A2 UB->GM, per core: msKPP UB_TO_GM_910b1 (1 KB 11.39, 32 KB 108.39, 64 KB 110.66 GiB/s) with the 8 KB point
# from add_high_performance case 1 (MTE3 busy 2613.205 us / 16384 copies of 8 KB = 51.4 GB/s; msKPP says 57.8 GiB/s).
_A2_MTE3 = ((1024, 11.39 * _GIB), (8192, 51.4), (32768, 108.39 * _GIB), (65536, 110.66 * _GIB))
# Ascend910B3 GM->UB: its own msKPP table (GM_TO_UB_910b3), which keeps rising to 186.7 GiB/s at 192 KB.
_B3_MTE2 = ((128, 11.4), (8192, 57.40 * _GIB), (32768, 113.37 * _GIB), (65536, 147.13 * _GIB),
            (131072, 178.84 * _GIB), (196608, 186.69 * _GIB))
# 950 GM->UB: 128 B from data_copy scenario 1 on 950 (36864 copies per core in 881.13 us of MTE2); 1-32 KB from
# msKPP GM_TO_UB_91095 (its 20 KB dip to 73.11 GiB/s is left out: the neighbours are 93.65 and 87.88).
_950_MTE2 = ((128, 5.36), (1024, 7.26 * _GIB), (4096, 28.93 * _GIB), (8192, 57.54 * _GIB),
             (12288, 85.59 * _GIB), (16384, 93.65 * _GIB), (32768, 93.62 * _GIB))
# 950 UB->GM: msKPP UB_TO_GM_91095 (1 KB 5.67 ... 16 KB 72.79, 28 KB 65.27 GiB/s; the 20 KB dip left out).
_950_MTE3 = ((1024, 5.67 * _GIB), (4096, 21.12 * _GIB), (8192, 39.47 * _GIB), (16384, 72.79 * _GIB),
             (28672, 72.79 * _GIB))


def _curve(points: tuple, source: str, confidence: str) -> Fact:
    return Fact(tuple((int(b), round(float(g), 2)) for b, g in points), source, confidence)


# ---------------------------------------------------------------- per architecture

def _a2(soc: Soc) -> TimeParams:
    # A2/A3 (arch 2201): msKPP tables and devkit examples measured on Atlas A2 (the data_copy README's figures are
    # for "Atlas A2/A3"). A3 parts are the same die: same values, confidence one step lower where fitted.
    same = soc.name == "Ascend910B1"
    fit_conf = "medium" if soc.line in ("A2", "A3") else "low"
    clock = soc.clock_mhz.value / 1000 if soc.clock_mhz.value else 1.85
    clock_src = (f"lossgrad.socs {soc.name}.clock_mhz ({soc.clock_mhz.source}); {_ADD} states 1.85 GHz for A2"
                 if soc.clock_mhz.value else f"{_ADD}: A2 clock 1.85 GHz (no figure for {soc.name})")
    chip = _A2_CHIP_GBPS * (soc.hbm_bandwidth.value / 1.6e12 if soc.hbm_bandwidth.value else 1.0)
    chip_src = (f"fit: data_copy UB scenario 3 (A2) and add_high_performance cases 3-4 (reads and writes "
                f"together; {_DC}, {_ADD})" + ("" if same or not soc.hbm_bandwidth.value
                                               else f"; scaled by this part's HBM figure ({soc.hbm_bandwidth.source})"))
    mte2 = _B3_MTE2 if soc.name == "Ascend910B3" else _A2_MTE2
    mte2_src = (f"table: {_MSKPP} GM_TO_UB_910b3 (128 B point from data_copy scenario 1 on A2)"
                if soc.name == "Ascend910B3" else
                f"fit/table: data_copy UB scenario 1 (128 B), add_high_performance case 1 (8 KB), "
                f"{_MSKPP} GM_TO_UB_910b1 (>= 32 KB)")
    notes: tuple[str, ...] = ()
    if soc.name not in ("Ascend910B1", "Ascend910B3"):
        notes = (f"{soc.name}: copy curves and cycle costs are Ascend910B1's (msKPP and the devkit examples measured "
                 f"A2 910B1/910B3 only)",)
    return TimeParams(
        soc=soc.name,
        clock_ghz=Fact(clock, clock_src, "medium" if soc.clock_mhz.value else "low"),
        chip_bandwidth_gbps=Fact(round(chip, 1), chip_src, fit_conf),
        mte2_curve=_curve(mte2, mte2_src, "medium" if same or soc.name == "Ascend910B3" else "low"),
        mte3_curve=_curve(_A2_MTE3, f"table: {_MSKPP} UB_TO_GM_910b1; 8 KB: fit add_high_performance case 1",
                          "medium" if same else "low"),
        vec_cycles_per_repeat=Fact(_A2_VEC, f"table: {_THEORY} tables 6-15 (A2/A3)", "high"),
        vec_issue_cycles=Fact(_A2_VEC_ISSUE, "fit: add_high_performance cases 1-3 (aiv_vec_time per Add call minus "
                                             "its repeats)", fit_conf),
        launch_us=Fact(_A2_LAUNCH_US, "fit: Task Duration - aiv_time of add_high_performance cases 2-4 (48 cores)",
                       fit_conf),
        tail_us=Fact(_A2_TAIL_US, "fit: data_copy UB scenarios 1-3 (Task Duration - MTE2 time - launch)", fit_conf),
        copy_overhead_cycles=Fact(0, "fit: data_copy UB scenario 1 is explained by the 128 B curve point alone", fit_conf),
        burst_overhead_cycles=Fact(_A2_BURST_CYC, "fit: data_copy UB scenario 2 (64 bursts of 128 B) against "
                                                  "scenario 1 and add_high_performance case 1", fit_conf),
        gm_align_bytes=Fact(32, f"fit: data_copy UB scenarios 1-2 (128-byte aligned copies stream at full rate; "
                                   f"{_DC} recommends 512-byte aligned rows for A2/A3)", "medium"),
        unaligned_gm_factor=Fact(_A2_UNALIGNED, "fit: data_copy UB scenario 4 (N=12287: rows of 24574 bytes, 15 of 16 "
                                                 "bursts off 32-byte alignment) against scenario 3", fit_conf),
        vec_dep_latency_cycles=Fact(0, "not separable from vec_issue_cycles in the calibration cases "
                                       "(every Add there is isolated by flags)", "none"),
        ub_bank_rule=Fact("a2", f"{_BANK} (address fields BANK[17:16] BG[8:5])", "high"),
        bank_rr_factor=Fact(2.0, f"fit: add_high_performance cases 2-3 (x/y 32 KB apart, same bank group: 2.0 "
                                 f"cycles/repeat against {_THEORY}'s 1); {_MSKPP}: every two-vector-source "
                                 f"instruction measures 2 cycles/repeat, every one-source 1", fit_conf),
        bank_rw_factor=Fact(1.77, f"derived: {_BANK} scenario 5 vs 4 (3751 vs 2389) scaled like its read-read "
                                  f"case (4167 vs 2390) is to the fitted 2.0", "low"),
        flag_cycles=Fact(0, "not separable in the calibration cases", "none"),
        notes=notes,
    )


def _950(soc: Soc) -> TimeParams:
    clock = soc.clock_mhz.value / 1000 if soc.clock_mhz.value else 1.65
    chip = _950_CHIP_GBPS * (soc.hbm_bandwidth.value / 1.6e12 if soc.hbm_bandwidth.value else 1.0)
    conf = "medium" if soc.name == "Ascend950PR_9579" else "low"
    notes = ("Ascend 950: vector cycles are the Reg instruction figures (the Memory API's loads and stores are not "
             "counted); issue cost, launch and bank rules are not measured publicly (A2's issue cost is used)",)
    return TimeParams(
        soc=soc.name,
        clock_ghz=Fact(clock, f"lossgrad.socs {soc.name}.clock_mhz; {_ADD}: 950 clock 1.65 GHz", "medium"),
        chip_bandwidth_gbps=Fact(round(chip, 1), "fit: data_copy UB scenario 3 on 950 (reads only; no 950 write "
                                                 "case is in the calibration set)", conf),
        mte2_curve=_curve(_950_MTE2, f"fit/table: data_copy UB scenario 1 on 950 (128 B); {_MSKPP} GM_TO_UB_91095",
                          conf),
        mte3_curve=_curve(_950_MTE3, f"table: {_MSKPP} UB_TO_GM_91095", conf),
        vec_cycles_per_repeat=Fact(_950_VEC, f"table: {_REG} (Reg instructions; the Memory API has no figures: "
                                             f"{_THEORY})", "low"),
        vec_issue_cycles=Fact(_A2_VEC_ISSUE, "carried over from A2 (no 950 vector case in the calibration set)", "low"),
        launch_us=Fact(_950_LAUNCH_US, "fit: data_copy UB scenarios 1-3 on 950 (Task Duration - MTE2 time)", conf),
        tail_us=Fact(_950_TAIL_US, "fit: data_copy UB scenarios 1-3 on 950", conf),
        copy_overhead_cycles=Fact(0, "fit: data_copy scenario 1 on 950 is explained by the 128 B curve point", conf),
        burst_overhead_cycles=Fact(_950_BURST_CYC, "fit: data_copy UB scenario 2 on 950 (64 bursts of 128 B)", conf),
        gm_align_bytes=soc.arch.gm_row_align_bytes,
        unaligned_gm_factor=Fact(_950_UNALIGNED, "fit: data_copy UB scenario 4 on 950 against scenario 3 (bursts off "
                                                   "128-byte alignment)", conf),
        ub_bank_rule=Fact(None, f"{_ADD}: 950's banks are arranged differently; no rule modelled", "low"),
        notes=notes,
    )


def _thin(soc: Soc) -> TimeParams:
    """310P (2002) and Atlas 910 (1001): no msKPP table and no devkit example ran on them."""
    base = _a2(get_soc("Ascend910B1"))
    clock = soc.clock_mhz.value / 1000 if soc.clock_mhz.value else None
    bw = soc.hbm_bandwidth.value
    chip = bw / 1e9 * (_A2_CHIP_GBPS / 1600.0) if bw else None  # A2's fitted share of its 1.6 TB/s figure
    note = (f"{soc.name} ({soc.product}): public timing data is thin (no msKPP table, no published msprof run); "
            f"clock and chip bandwidth come from the SoC table, every cycle cost is carried over from A2: treat "
            f"modelled times as rough")
    clock_fact = (Fact(clock, f"lossgrad.socs {soc.name}.clock_mhz ({soc.clock_mhz.source})", "low") if clock else
                  Fact(1.0, "no public clock in the SoC table; 1 GHz assumed", "none"))
    return TimeParams(
        soc=soc.name,
        clock_ghz=clock_fact,
        chip_bandwidth_gbps=(Fact(round(chip, 1), f"lossgrad.socs {soc.name}.hbm_bandwidth ({soc.hbm_bandwidth.source}) "
                                                  f"x A2's fitted efficiency", "low") if chip else
                             Fact(100.0, "no public bandwidth in the SoC table; 100 GB/s assumed", "none")),
        mte2_curve=Fact(base.mte2_curve.value, "carried over from A2: " + base.mte2_curve.source, "low"),
        mte3_curve=Fact(base.mte3_curve.value, "carried over from A2: " + base.mte3_curve.source, "low"),
        vec_cycles_per_repeat=Fact(_A2_VEC, f"carried over from A2 ({_THEORY} covers A2/A3/950 only)", "low"),
        vec_issue_cycles=Fact(base.vec_issue_cycles.value, "carried over from A2", "low"),
        launch_us=Fact(base.launch_us.value, "carried over from A2", "low"),
        tail_us=Fact(base.tail_us.value, "carried over from A2", "low"),
        burst_overhead_cycles=Fact(base.burst_overhead_cycles.value, "carried over from A2", "low"),
        gm_align_bytes=Fact(32, "DataCopy's 32-byte unit (no published alignment penalty)", "low"),
        notes=(note,),
    )


# ---------------------------------------------------------------- fitted scalars (see docs/timing.md "Calibration")

_A2_CHIP_GBPS = 1550.0
_A2_VEC_ISSUE = 22
_A2_LAUNCH_US = 7.0
_A2_TAIL_US = 6.0
_A2_BURST_CYC = 1.0
_A2_UNALIGNED = 0.275
_950_CHIP_GBPS = 1638.0
_950_LAUNCH_US = 1.5
_950_TAIL_US = 1.4
_950_BURST_CYC = 0.93
_950_UNALIGNED = 0.245


@lru_cache(maxsize=None)
def _params(name: str) -> TimeParams:
    soc = get_soc(name)
    if soc.arch.npu_arch == 2201:
        return _a2(soc)
    if soc.arch.npu_arch == 3510:
        return _950(soc)
    return _thin(soc)


def params_for(soc: "str | Soc | None" = None) -> TimeParams:
    """The time parameters of a SoC (name, alias or Soc; None = the default SoC)."""
    return _params(get_soc(soc).name)


def params_record(p: TimeParams) -> dict:
    """A JSON-friendly {field: {value, source, confidence}} of one SoC's parameters, plus its notes."""
    out: dict = {k: {"value": f.value, "source": f.source, "confidence": f.confidence} for k, f in p.fields().items()}
    out["notes"] = list(p.notes)
    return out
