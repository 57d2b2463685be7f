"""Fits the time model's parameters on the calibration table, and nothing else (docs/timing.md "Calibration").

`fit()` runs each calibration kernel once on the twin to get its event log, then sets the parameters of each group
(PLAN) in order, every step minimising the squared log errors of the published figures it names, and writes
`fitted.json` (values, the cases each was fitted on, the residuals of every calibration figure). This module reads
lossgrad.timing.calibration only: the held-out table (lossgrad.timing.heldout) is never imported here
(tests/timing/test_heldout.py checks).

Two stages per SoC group:
1. copies alone, on msKPP's single-copy tables: per pipe, latency + issue (`lo`), link and core rates (a 3-parameter
   Nelder-Mead on the closed form of one copy's time; no replay needed);
2. coordinate descent over the kernel cases: each step a 1- or 2-parameter search on the figures it names, three
   sweeps. A step's figure "task-aiv" is msprof's Task Duration minus aiv_time (launch, skew and tail).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import calibration
from .cases import Case, modelled
from .model import TimeParams
from .params import FIT_GROUPS, FITTED, START, fitted, params_for, reload
from .replay import CopyCost

# Parameters fitted together with the copy stage (mte2_lo = latency + issue in ns; split by the issue step).
COPY_PARAMS = ("lo", "link_gbps", "core_gbps")


@dataclass(frozen=True)
class Step:
    params: tuple[str, ...]
    figures: tuple[tuple[str, str], ...]   # (calibration case, figure key)
    bounds: tuple[tuple[float, float], ...]


def _f(names: Sequence[str], key: str) -> tuple[tuple[str, str], ...]:
    return tuple((n, key) for n in names)


# (data_copy S1 is left out of the skew step only to save its 2.4M-record replay; it is in the residuals)
_A2_MULTI = ("data_copy_ub_s2_A2", "data_copy_ub_s3_A2", "data_copy_ub_s4_A2",
             "data_copy_ub_s5_A2", "data_copy_ub_s6_A2", "add_hp_case3_A2", "add_hp_case4_A2", "add_hp_case5_A2",
             "add_hp_case6_A2")

PLAN: dict[str, tuple[Step, ...]] = {
    "A2": (
        Step(("launch_us",), (("add_hp_case1_A2", "task-aiv"),), ((0.01, 20.0),)),
        Step(("core_skew_us",), _f(_A2_MULTI, "task-aiv"), ((0.0, 1.0),)),
        Step(("mte2_issue_cycles",), (("data_copy_ub_s1_A2", "MTE2"),), ((2.0, 80.0),)),
        Step(("burst_overhead_cycles",), (("data_copy_ub_s2_A2", "MTE2"),), ((0.0, 20.0),)),
        Step(("hbm_read_gbps",), (("data_copy_ub_s3_A2", "MTE2"), ("data_copy_ub_s5_A2", "aiv")),
             ((500.0, 4000.0),)),
        Step(("unaligned_gm_factor",), (("data_copy_ub_s4_A2", "MTE2"),), ((0.05, 1.0),)),
        Step(("hbm_latency_ns", "hbm_core_gbps"), (("add_hp_case1_A2", "MTE2"), ("add_hp_case1_A2", "task")),
             ((0.0, 1000.0), (10.0, 200.0))),
        Step(("hbm_write_gbps",), _f(("add_hp_case3_A2", "add_hp_case4_A2"), "task"), ((300.0, 8000.0),)),
        Step(("vec_issue_cycles", "bank_rr_factor"), _f(("add_hp_case1_A2", "add_hp_case3_A2", "add_hp_case6_A2"), "V"),
             ((0.0, 200.0), (1.0, 4.0))),
        Step(("scalar_issue_cycles", "core_init_cycles"),
             _f(("add_hp_case1_A2", "add_hp_case3_A2", "add_hp_case4_A2", "add_hp_case5_A2", "add_hp_case6_A2"), "S"),
             ((0.0, 50.0), (0.0, 20000.0))),
        Step(("scalar_cycles_per_access",), (("add_hp_case0_A2", "S"),), ((1.0, 100.0),)),
        Step(("flag_cycles",), (("add_hp_case1_A2", "task"),), ((0.0, 200.0),)),
    ),
    "950": (
        Step(("launch_us", "core_skew_us"), _f(("data_copy_ub_s5_950", "data_copy_ub_s6_950"), "task-aiv"),
             ((0.01, 20.0), (0.0, 1.0))),
        Step(("mte2_issue_cycles",), (("data_copy_ub_s1_950", "MTE2"),), ((2.0, 120.0),)),
        Step(("burst_overhead_cycles",), (("data_copy_ub_s2_950", "MTE2"),), ((0.0, 20.0),)),
        Step(("hbm_read_gbps",), (("data_copy_ub_s3_950", "MTE2"), ("data_copy_ub_s5_950", "aiv")),
             ((500.0, 4000.0),)),
        Step(("unaligned_gm_factor",), (("data_copy_ub_s4_950", "MTE2"),), ((0.05, 1.0),)),
        # one figure: the latency only; the per-core HBM cap keeps A2's ratio to the L2 cap (HBM_CORE_RATIO_FROM_A2)
        Step(("hbm_latency_ns",), (("add_hp_case1_950", "task"),), ((0.0, 1000.0),)),
        Step(("hbm_write_gbps",), _f(("add_hp_case3_950", "add_hp_case4_950"), "task"), ((300.0, 8000.0),)),
        Step(("vec_issue_cycles", "vec_repeat_overhead_cycles"),
             _f(("add_hp_case1_950", "add_hp_case3_950", "add_hp_case4_950", "add_hp_case5_950"), "V"),
             ((0.0, 300.0), (0.0, 8.0))),
        Step(("scalar_cycles_per_access",), (("add_hp_case0_950", "task"),), ((1.0, 100.0),)),
    ),
    "910B3": (),
}

# msKPP tables of each group's copy stage: (pipe, table).
COPY_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "A2": (("mte2", "GM_TO_UB_910b1"), ("mte3", "UB_TO_GM_910b1")),
    "950": (("mte2", "GM_TO_UB_91095"), ("mte3", "UB_TO_GM_91095")),
    "910B3": (("mte2", "GM_TO_UB_910b3"),),
}

# 950 takes these from A2's fit (no 950 case separates them; params.py says so).
CARRIED_FROM_A2 = ("core_init_cycles", "flag_cycles", "scalar_issue_cycles")


def hbm_core_of_950(a2: dict[str, float], mte2_core_gbps: float) -> float:
    """950's per-core cap on HBM data: its L2 cap times A2's fitted ratio of the two (only one 950 figure, add case
    1's Task Duration, bears on both the HBM latency and this cap; the latency is fitted on it)."""
    return mte2_core_gbps * a2["hbm_core_gbps"] / a2["mte2_core_gbps"]


def _copy_cases(table: str) -> list[Case]:
    return [c for c in calibration.CASES if c.name.startswith(f"mskpp_{table}_")]


def nelder_mead(f: Callable[[np.ndarray], float], x0: np.ndarray, steps: np.ndarray, iters: int = 400) -> np.ndarray:
    """A plain Nelder-Mead minimiser (no dependency beyond NumPy)."""
    n = len(x0)
    pts = [x0.astype(float)] + [x0 + np.eye(n)[i] * steps[i] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = np.argsort(vals)
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < 1e-12:
            break
        c = np.mean(pts[:-1], axis=0)
        xr = c + (c - pts[-1])
        fr = f(xr)
        if fr < vals[0]:
            xe = c + 2 * (c - pts[-1])
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = c + 0.5 * (pts[-1] - c)
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                pts = [pts[0]] + [pts[0] + 0.5 * (p - pts[0]) for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
    return pts[int(np.argmin(vals))]


def golden(f: Callable[[float], float], lo: float, hi: float, tol: float = 5e-3) -> float:
    """The minimum of a unimodal f on [lo, hi] (golden-section search, relative tolerance `tol`)."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol * max(1.0, abs(a) + abs(b)):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (a + b) / 2


class Fitter:
    """Event logs of the calibration kernels (run once) and their replays with trial parameters."""

    def __init__(self, log: Callable[[str], None] = print) -> None:
        self.say = log
        self.cases = {c.name: c for c in calibration.CASES}
        self._runs: dict[str, Any] = {}
        self.values: dict[str, dict[str, float]] = {g: {} for g in FIT_GROUPS}
        self.cases_of: dict[str, dict[str, list[str]]] = {g: {} for g in FIT_GROUPS}

    def run(self, name: str) -> Any:
        if name not in self._runs:
            from ..twin import run_kernel
            from .cases import KERNEL_DIR
            c = self.cases[name]
            rep = run_kernel(KERNEL_DIR / c.kernel, c.entry, c.block_dim, c.args(), soc=c.soc,
                             defines=dict(c.defines), timing=True, l2=c.l2)
            self._runs[name] = (rep.events, rep.timing.roofline_bytes)
            self.say(f"  ran {name}: {sum(len(x) for x in rep.events.cores)} records")
        return self._runs[name]

    def params(self, group: str, **trial: float) -> TimeParams:
        """The group's part with its fitted values so far, `trial` on top (and the tied and split values)."""
        base = params_for(FIT_GROUPS[group])
        a2 = {**START, **self.values["A2"]}
        if group == "910B3":  # only its MTE2 copy figures are its own
            v = {**a2, **self.values["910B3"], **trial}
        elif group == "950":  # the cycle costs no 950 case separates are A2's (params.py)
            v = {**START, **{k: a2[k] for k in CARRIED_FROM_A2}, **self.values[group], **trial}
            if "mte2_core_gbps" in v and "mte2_core_gbps" in a2:
                v["hbm_core_gbps"] = hbm_core_of_950(a2, v["mte2_core_gbps"])
        else:
            v = {**START, **self.values[group], **trial}
        out = {k: v[k] for k in START if k in base.fields()}
        cyc_ns = 1.0 / float(base.clock_ghz.value)
        for p in ("mte2", "mte3"):
            if f"{p}_lo" in v:
                out[f"{p}_latency_ns"] = max(0.0, v[f"{p}_lo"] - v["mte2_issue_cycles"] * cyc_ns)
        out["mte3_issue_cycles"] = v["mte2_issue_cycles"]
        out["tail_us"] = v["launch_us"]
        return base.with_values(**out)

    def timing(self, name: str, p: TimeParams) -> Any:
        from .micro import single_copy
        from .replay import replay
        c = self.cases[name]
        if not c.kernel:
            return single_copy(c.soc, c.copy[0], c.copy[1], p, l2=c.l2)
        events, roof = self.run(name)
        return replay(events, p, soc=c.soc, roofline_bytes=roof, l2=c.l2)

    def figure(self, name: str, key: str, p: TimeParams) -> tuple[float, float]:
        """(modelled, published) of one figure."""
        c = self.cases[name]
        m = modelled(c, self.timing(name, p))
        if key == "task-aiv":
            return m["task"] - m["aiv"], c.published["task"] - c.published["aiv"]
        return m[key], c.published[key]

    def loss(self, group: str, figures: Sequence[tuple[str, str]], **trial: float) -> float:
        p = self.params(group, **trial)
        total = 0.0
        for name, key in figures:
            m, pub = self.figure(name, key, p)
            total += math.log(max(m, 1e-9) / pub) ** 2
        return total

    # ---- stage 1: copies on msKPP's tables (closed form)
    def fit_copies(self, group: str) -> None:
        base = params_for(FIT_GROUPS[group])
        cyc_us = 1.0 / (float(base.clock_ghz.value) * 1e3)
        for pipe, table in COPY_TABLES[group]:
            cs = _copy_cases(table)
            sizes = np.array([c.copy[1] for c in cs])
            pub = np.array([c.published["copy"] for c in cs])
            pipe_i = 2 if pipe == "mte2" else 3

            def err(x: np.ndarray) -> float:
                lo, link, core = np.exp(x)
                cost = CopyCost(issue=(0.0, 0.0), link=(link * 1e3, link * 1e3), core=(core * 1e3, core * 1e3),
                                latency=(lo * 1e-3, lo * 1e-3), hbm_latency=0.0, hbm_core=math.inf)
                occ, exp_ = cost.times(np.full(len(sizes), pipe_i), sizes, np.zeros(len(sizes), bool))
                return float(np.sum(np.log((occ + exp_) / pub) ** 2))

            x = nelder_mead(err, np.log([110.0, 150.0, 90.0]), np.array([0.5, 0.5, 0.5]))
            lo, link, core = np.exp(x)
            names = [c.name for c in cs]
            for k, v in ((f"{pipe}_lo", lo), (f"{pipe}_link_gbps", link), (f"{pipe}_core_gbps", core)):
                self.values[group][k] = round(float(v), 3)
                self.cases_of[group][k] = names
            self.say(f"  {group} {table}: latency+issue {lo:.1f} ns, link {link:.1f} GB/s, core {core:.1f} GB/s "
                     f"(rms log error {math.sqrt(err(x) / len(cs)):.3f})")
        del cyc_us

    # ---- stage 2: coordinate descent over the kernel cases
    def fit_steps(self, group: str, sweeps: int = 3) -> None:
        for sweep in range(sweeps):
            for st in PLAN[group]:
                if len(st.params) == 1:
                    (name,), ((lo, hi),) = st.params, st.bounds
                    best = golden(lambda v: self.loss(group, st.figures, **{name: v}), lo, hi)
                    self.values[group][name] = round(best, 4)
                else:
                    cur = np.array([self.values[group].get(k, START[k]) for k in st.params], float)
                    lows = np.array([b[0] for b in st.bounds])
                    highs = np.array([b[1] for b in st.bounds])

                    def f(x: np.ndarray) -> float:
                        if (x < lows).any() or (x > highs).any():
                            return 1e9
                        return self.loss(group, st.figures, **dict(zip(st.params, x.tolist())))

                    best = nelder_mead(f, np.clip(cur, lows, highs), np.maximum((highs - lows) * 0.1, 1e-3),
                                       iters=60)
                    for k, v in zip(st.params, best.tolist()):
                        self.values[group][k] = round(float(v), 4)
                for k in st.params:
                    self.cases_of[group][k] = sorted({n for n, _ in st.figures})
                self.say(f"  {group} sweep {sweep + 1}: " + ", ".join(f"{k}={self.values[group][k]}"
                                                                      for k in st.params)
                         + f"  (loss {self.loss(group, st.figures):.4f})")

    def residuals(self) -> dict[str, dict[str, float]]:
        """modelled / published - 1 of every figure of every calibration case, with the fitted values."""
        out: dict[str, dict[str, float]] = {}
        group_of = {soc: g for g, soc in FIT_GROUPS.items()}
        for name, c in self.cases.items():
            p = self.params(group_of[c.soc])
            m = modelled(c, self.timing(name, p))
            out[name] = {k: round(m[k] / v - 1, 4) for k, v in c.published.items() if v > 0}
        return out


def fit(groups: Sequence[str] = ("A2", "950", "910B3"), sweeps: int = 2,
        log: Callable[[str], None] = print) -> dict[str, Any]:
    """Fit the groups in order (A2 first: 950 and 910B3 carry some of its values) and write fitted.json after each;
    the residuals of every calibration figure are written last. Returns the file's content."""
    fz = Fitter(log)
    out: dict[str, Any] = {"groups": {}, "residuals": {},
                           "note": "written by scripts/timing_fit.py (lossgrad.timing.fit); "
                                   "read by lossgrad.timing.params"}
    # groups not refitted keep their values (A2's are used by 950 and 910B3)
    for g, vals in (fitted().get("groups", {}) if set(groups) != set(FIT_GROUPS) else {}).items():
        if g not in groups:
            out["groups"][g] = vals
            for k, e in vals.items():
                key = f"{k[:4]}_lo" if k.endswith("_latency_ns") and k.startswith("mte") else k
                fz.values[g][key] = e["value"]
                fz.cases_of[g][key] = e["cases"]
            if "mte2_lo" in fz.values[g]:  # stored as latency; the fit works on latency + issue
                cyc_ns = 1.0 / float(params_for(FIT_GROUPS[g]).clock_ghz.value)
                for pipe in ("mte2", "mte3"):
                    fz.values[g][f"{pipe}_lo"] += fz.values[g].get("mte2_issue_cycles", 0.0) * cyc_ns
    for g in groups:
        log(f"{g}: copies on msKPP")
        fz.fit_copies(g)
        if PLAN[g]:
            log(f"{g}: kernel cases")
            fz.fit_steps(g, sweeps)
        p = fz.params(g)
        vals: dict[str, Any] = {}
        for k, v in fz.values[g].items():
            if k.endswith("_lo"):
                pipe = k[:4]
                vals[f"{pipe}_latency_ns"] = {
                    "value": round(float(getattr(p, f"{pipe}_latency_ns").value), 3),
                    "cases": fz.cases_of[g][k] + fz.cases_of[g].get("mte2_issue_cycles", fz.cases_of["A2"].get(
                        "mte2_issue_cycles", []))}
            else:
                vals[k] = {"value": v, "cases": fz.cases_of[g][k]}
        out["groups"][g] = vals
        FITTED.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
        reload()
    log("residuals of every calibration figure")
    out["residuals"] = fz.residuals()
    FITTED.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    reload()
    return out
