"""Per-SoC values of the time model's cost parameters (`params_for(soc) -> TimeParams`).

Every value is a `Fact(value, source, confidence)`. Two kinds of source:
- "read: ..." a figure taken as published (a table, a README's figure, the SoC table), cited by repository and path;
- "fit: ..." a value fitted by lossgrad.timing.fit on the calibration cases it names (lossgrad.timing.calibration:
  the devkit's published msprof runs and msKPP's copy tables, nothing else). The fitted values live in
  `fitted.json` beside this module, written by `scripts/timing_fit.py`; this module only reads them.

Confidence: "high" = read from a published table for this SoC; "medium" = fitted on this SoC's own published
timings; "low" = carried over from another part or architecture, or a press figure; "none" = no public figure.
A3 parts are A2's die (same values, one step lower); 310P and Atlas 910 have no published timing: their cycle costs
are A2's, their clock and bandwidth the SoC table's, and their error band is widened (lossgrad.timing.bands).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..socs import Fact, Soc, get_soc
from .model import TimeParams

FITTED = Path(__file__).resolve().parent / "fitted.json"

_THEORY = "ADK docs/zh/api/附录/Vector指令理论性能汇总.md"
_REG = "ADK docs/zh/api/附录/Reg矢量计算接口理论性能汇总.md"
_BANK = "ADK examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub/README.md"
_DC = "ADK examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md"
_ADD = "ADK examples/01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance/README.md"

# The parameter groups the fit sets, and the part whose published timings each was fitted on.
FIT_GROUPS = {"A2": "Ascend910B1", "950": "Ascend950PR_9589", "910B3": "Ascend910B3"}

# Fitted parameters per group (lossgrad.timing.fit decides which, on what cases). A group's entry that is missing
# (before the first fit) falls back to the starting value below, marked "not fitted".
START: dict[str, float] = {
    "launch_us": 1.0, "tail_us": 1.0, "core_skew_us": 0.05, "core_init_cycles": 2000.0,
    "mte2_latency_ns": 110.0, "mte2_issue_cycles": 20.0, "mte2_link_gbps": 160.0, "mte2_core_gbps": 85.0,
    "mte3_latency_ns": 70.0, "mte3_link_gbps": 140.0, "mte3_core_gbps": 120.0,
    "hbm_latency_ns": 100.0, "hbm_core_gbps": 60.0, "burst_overhead_cycles": 1.0, "unaligned_gm_factor": 0.3,
    "hbm_read_gbps": 1500.0, "hbm_write_gbps": 1500.0,
    "vec_issue_cycles": 22.0, "vec_repeat_overhead_cycles": 0.0, "bank_rr_factor": 2.0,
    "flag_cycles": 0.0, "scalar_issue_cycles": 2.0, "scalar_cycles_per_access": 10.0,
}


# ---------------------------------------------------------------- vector cycles per 256-byte repeat (read)
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


@lru_cache(maxsize=1)
def fitted() -> dict[str, Any]:
    """The fit's output (fitted.json): {"groups": {group: {param: {"value", "cases"}}}, ...}; {} before any fit."""
    return json.loads(FITTED.read_text()) if FITTED.exists() else {}


def _fit(group: str, name: str, confidence: str, *, carried_from: str = "") -> Fact:
    """A fitted parameter of `group` as a Fact naming the cases it was fitted on."""
    entry = fitted().get("groups", {}).get(group, {}).get(name)
    if entry is None:
        return Fact(START[name], f"not fitted yet (starting value of lossgrad.timing.fit)", "none")
    where = f"fit on {FIT_GROUPS[group]}: {', '.join(entry['cases'])}"
    if carried_from:
        return Fact(entry["value"], f"carried over from {carried_from} ({where})", "low")
    return Fact(entry["value"], where, confidence)


def _tail(launch: Fact) -> Fact:
    return Fact(launch.value, "assumed equal to launch_us (only Task Duration - aiv_time = launch + tail is "
                "published)", "low")


def _l2_gbps() -> Fact:
    return Fact(5200.0, f"read: {_DC} (\"L2Cache 峰值带宽约 5.2TB/s\", A2/A3 and 950)", "medium")


def _a2(soc: Soc) -> TimeParams:
    # A2/A3 (arch 2201): the devkit's A2 runs (Ascend910B1 as the add README's 1.85 GHz, 48 cores) and msKPP's 910b1
    # tables. A3 parts are the same die: same values, one step lower. Other A2 parts (B2/B4): 910B1's cycle costs.
    own = soc.name == "Ascend910B1"
    conf = "medium" if own else "low"
    g = "A2"
    carried = "" if own else "Ascend910B1"
    clock = soc.clock_mhz.value / 1000 if soc.clock_mhz.value else 1.85
    clock_src = (f"read: lossgrad.socs {soc.name}.clock_mhz ({soc.clock_mhz.source}); {_ADD}: A2 runs at 1.85 GHz"
                 if soc.clock_mhz.value else f"read: {_ADD} (A2 clock 1.85 GHz; no figure for {soc.name})")
    scale = soc.hbm_bandwidth.value / 1.6e12 if soc.hbm_bandwidth.value and not own else 1.0
    notes: tuple[str, ...] = ()
    if not own and soc.name != "Ascend910B3":
        notes = (f"{soc.name}: cycle costs and copy figures are Ascend910B1's (msKPP and the devkit examples ran on "
                 f"A2 910B1/910B3 only)",)
    hbm_r, hbm_w = _fit(g, "hbm_read_gbps", conf, carried_from=carried), _fit(g, "hbm_write_gbps", conf,
                                                                              carried_from=carried)
    if scale != 1.0:
        hbm_r = Fact(round(hbm_r.value * scale, 1), hbm_r.source + f"; scaled by this part's HBM figure "
                     f"({soc.hbm_bandwidth.source})", "low")
        hbm_w = Fact(round(hbm_w.value * scale, 1), hbm_w.source + " (scaled likewise)", "low")
    b3 = soc.name == "Ascend910B3"  # its own msKPP MTE2 table; the issue cost (data_copy S1) is 910B1's
    mte2 = {k: _fit("910B3" if b3 else g, k, "medium", carried_from="" if own or b3 else "Ascend910B1")
            for k in ("mte2_latency_ns", "mte2_link_gbps", "mte2_core_gbps")}
    mte2["mte2_issue_cycles"] = _fit(g, "mte2_issue_cycles", conf, carried_from=carried)
    return TimeParams(
        soc=soc.name,
        clock_ghz=Fact(clock, clock_src, "medium" if soc.clock_mhz.value else "low"),
        launch_us=_fit(g, "launch_us", conf, carried_from=carried),
        tail_us=_tail(_fit(g, "launch_us", conf)),
        core_skew_us=_fit(g, "core_skew_us", conf, carried_from=carried),
        core_init_cycles=_fit(g, "core_init_cycles", conf, carried_from=carried),
        **mte2,
        mte3_latency_ns=_fit(g, "mte3_latency_ns", conf, carried_from=carried),
        mte3_issue_cycles=Fact(mte2["mte2_issue_cycles"].value, "assumed equal to mte2_issue_cycles (msKPP's "
                               "single copies give latency + issue together)", "low"),
        mte3_link_gbps=_fit(g, "mte3_link_gbps", conf, carried_from=carried),
        mte3_core_gbps=_fit(g, "mte3_core_gbps", conf, carried_from=carried),
        hbm_latency_ns=_fit(g, "hbm_latency_ns", conf, carried_from=carried),
        hbm_core_gbps=_fit(g, "hbm_core_gbps", conf, carried_from=carried),
        burst_overhead_cycles=_fit(g, "burst_overhead_cycles", conf, carried_from=carried),
        gm_align_bytes=Fact(32, f"read: {_DC} (scenarios 1-3: 128-byte aligned bursts stream at full rate; the "
                                f"README advises 512-byte rows)", "medium"),
        unaligned_gm_factor=_fit(g, "unaligned_gm_factor", conf, carried_from=carried),
        hbm_read_gbps=hbm_r,
        hbm_write_gbps=hbm_w,
        l2_gbps=_l2_gbps(),
        l2_bytes=Fact(soc.l2_bytes.value or 192 * 2 ** 20, f"read: lossgrad.socs {soc.name}.l2_bytes "
                      f"({soc.l2_bytes.source}); {_DC}: A2/A3 L2 is 192 MB", "medium"),
        vec_cycles_per_repeat=Fact(_A2_VEC, f"read: {_THEORY} tables 6-15 (A2/A3)", "high"),
        vec_repeat_overhead_cycles=Fact(0.0, f"assumed: 0 ({_THEORY} gives whole instructions on A2/A3, UB operands "
                                             f"included; add cases 1, 3, 6 fit without it)", "medium"),
        vec_issue_cycles=_fit(g, "vec_issue_cycles", conf, carried_from=carried),
        vec_dep_latency_cycles=Fact(0, "no published case separates it (every vector instruction of the "
                                       "calibration cases is isolated by flags): 0", "none"),
        ub_bank_rule=Fact("a2", f"read: {_BANK} (address fields BANK[17:16] BG[8:5])", "high"),
        bank_rr_factor=_fit(g, "bank_rr_factor", conf, carried_from=carried),
        bank_rw_factor=Fact(1.77, f"derived: {_BANK} scenario 5 vs 4 (3751 vs 2389 cycles) scaled like its "
                                  f"read-read case (4167 vs 2390) is to the fitted read-read factor", "low"),
        flag_cycles=_fit(g, "flag_cycles", conf, carried_from=carried),
        barrier_cycles=Fact(0, "no published case has a PipeBarrier whose cost shows: 0 (on MTE pipes it still "
                               "waits for the earlier copies' data)", "none"),
        scalar_issue_cycles=_fit(g, "scalar_issue_cycles", conf, carried_from=carried),
        scalar_cycles_per_access=_fit(g, "scalar_cycles_per_access", conf, carried_from=carried),
        scalar_gm_cycles=Fact(1, "no published case: one cycle (a data-cache hit)", "none"),
        notes=notes,
    )


def _950(soc: Soc) -> TimeParams:
    own = soc.name == "Ascend950PR_9589"
    conf = "medium" if own else "low"
    carried = "" if own else "Ascend950PR_9589"
    g = "950"
    clock = soc.clock_mhz.value / 1000 if soc.clock_mhz.value else 1.65

    def a2(name: str) -> Fact:  # a cycle cost no 950 case shows: A2's, in cycles
        return _fit("A2", name, "low", carried_from="Ascend910B1 (no 950 case separates it)")

    notes = ("Ascend 950: vector cycles are the Reg instructions' (docs/zh 附录) plus a fitted per-repeat overhead "
             "for the Memory API's loads and stores; scalar and flag costs are A2's (no 950 case separates them)",)
    return TimeParams(
        soc=soc.name,
        clock_ghz=Fact(clock, f"read: lossgrad.socs {soc.name}.clock_mhz; {_ADD}: 950 runs at 1.65 GHz", "medium"),
        launch_us=_fit(g, "launch_us", conf, carried_from=carried),
        tail_us=_tail(_fit(g, "launch_us", conf)),
        core_skew_us=_fit(g, "core_skew_us", conf, carried_from=carried),
        core_init_cycles=a2("core_init_cycles"),
        **{k: _fit(g, k, conf, carried_from=carried) for k in ("mte2_latency_ns", "mte2_issue_cycles",
                                                               "mte2_link_gbps", "mte2_core_gbps",
                                                               "mte3_latency_ns", "mte3_link_gbps",
                                                               "mte3_core_gbps", "hbm_latency_ns",
                                                               "burst_overhead_cycles", "unaligned_gm_factor",
                                                               "hbm_read_gbps", "hbm_write_gbps",
                                                               "vec_issue_cycles", "vec_repeat_overhead_cycles",
                                                               "scalar_cycles_per_access")},
        mte3_issue_cycles=Fact(_fit(g, "mte2_issue_cycles", conf).value, "assumed equal to mte2_issue_cycles", "low"),
        hbm_core_gbps=_hbm_core_950(_fit(g, "mte2_core_gbps", conf).value),
        gm_align_bytes=Fact(soc.arch.gm_row_align_bytes.value, "read: " + soc.arch.gm_row_align_bytes.source,
                            soc.arch.gm_row_align_bytes.confidence),
        l2_gbps=_l2_gbps(),
        l2_bytes=Fact(soc.l2_bytes.value or 128 * 2 ** 20, f"read: {_DC} (\"950PR 的 L2Cache 大小为 128MB\")",
                      "medium"),
        vec_cycles_per_repeat=Fact(_950_VEC, f"read: {_REG} (Reg instructions; the Memory API has no figures: "
                                             f"{_THEORY})", "low"),
        vec_dep_latency_cycles=Fact(0, "no published case separates it: 0", "none"),
        ub_bank_rule=Fact(None, f"read: {_ADD}: 950's banks are arranged differently; no rule modelled", "low"),
        flag_cycles=a2("flag_cycles"),
        barrier_cycles=Fact(0, "no published case: 0", "none"),
        scalar_issue_cycles=a2("scalar_issue_cycles"),
        scalar_gm_cycles=Fact(1, "no published case: one cycle (a data-cache hit)", "none"),
        notes=notes,
    )


def _hbm_core_950(mte2_core: float) -> Fact:
    a2 = fitted().get("groups", {}).get("A2", {})
    if "hbm_core_gbps" not in a2 or "mte2_core_gbps" not in a2:
        return Fact(START["hbm_core_gbps"], "not fitted yet (starting value of lossgrad.timing.fit)", "none")
    ratio = a2["hbm_core_gbps"]["value"] / a2["mte2_core_gbps"]["value"]
    return Fact(round(mte2_core * ratio, 3), f"derived: this part's mte2_core_gbps x Ascend910B1's fitted "
                f"hbm_core_gbps / mte2_core_gbps ({ratio:.3f}); one 950 figure (add case 1) bears on it and the HBM "
                f"latency, and is spent on the latency", "low")


def _thin(soc: Soc) -> TimeParams:
    """310P (2002) and Atlas 910 (1001): no msKPP table and no devkit example ran on them."""
    import dataclasses
    base = _a2(get_soc("Ascend910B1"))
    clock = soc.clock_mhz.value / 1000 if soc.clock_mhz.value else None
    bw = soc.hbm_bandwidth.value
    note = (f"{soc.name} ({soc.product}): no published timing of this part (no msKPP table, no devkit run); "
            f"clock, bandwidth and L2 come from the SoC table, every other figure is Ascend910B1's: its error band is "
            f"widened (lossgrad.timing.bands)")

    def carried(f: Fact) -> Fact:
        return Fact(f.value, f"carried over from Ascend910B1 ({f.source})", "low" if f.confidence != "none" else "none")

    fields = {k: carried(v) for k, v in base.fields().items()}
    share = base.hbm_read_gbps.value / 1600.0  # A2's fitted share of its 1.6 TB/s press figure
    w_share = base.hbm_write_gbps.value / 1600.0
    fields["clock_ghz"] = (Fact(clock, f"read: lossgrad.socs {soc.name}.clock_mhz ({soc.clock_mhz.source})", "low")
                           if clock else Fact(1.0, "assumed: no public clock in the SoC table, 1 GHz", "none"))
    if bw:
        fields["hbm_read_gbps"] = Fact(round(bw / 1e9 * share, 1), f"derived: lossgrad.socs {soc.name}."
                                       f"hbm_bandwidth ({soc.hbm_bandwidth.source}) x A2's fitted share", "low")
        fields["hbm_write_gbps"] = Fact(round(bw / 1e9 * w_share, 1), f"derived: lossgrad.socs {soc.name}."
                                        f"hbm_bandwidth x A2's fitted write share", "low")
    else:
        fields["hbm_read_gbps"] = fields["hbm_write_gbps"] = Fact(100.0, "assumed: no public bandwidth, 100 GB/s",
                                                                  "none")
    fields["l2_bytes"] = (Fact(soc.l2_bytes.value, f"read: lossgrad.socs {soc.name}.l2_bytes ({soc.l2_bytes.source})",
                               "low") if soc.l2_bytes.value else Fact(0, "no public L2 size: no L2 modelled", "none"))
    fields["gm_align_bytes"] = Fact(32, "assumed: DataCopy's 32-byte unit (no published alignment penalty)", "low")
    fields["unaligned_gm_factor"] = Fact(1.0, "no published alignment penalty", "none")
    fields["vec_cycles_per_repeat"] = Fact(base.vec_cycles_per_repeat.value, f"carried over from A2 ({_THEORY} covers "
                                           f"A2/A3/950 only)", "low")
    return dataclasses.replace(base, soc=soc.name, notes=(note,), **fields)


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


def reload() -> None:
    """Forget cached values (after the fit rewrote fitted.json)."""
    fitted.cache_clear()
    _params.cache_clear()


def params_record(p: TimeParams) -> dict:
    """A JSON-friendly {field: {value, source, confidence}} of one SoC's parameters, plus its notes."""
    out: dict = {k: {"value": f.value, "source": f.source, "confidence": f.confidence} for k, f in p.fields().items()}
    out["notes"] = list(p.notes)
    return out
