"""The scheduler: replays the twin's event log on four in-order pipes per core with a shared GM bandwidth.

Model (docs/timing.md "Scheduler"):
- Every record is a node of a dependency graph. A node starts when all its predecessors have ended (plus a lag on
  some edges) and lasts its cost; copies last until their bytes have moved at their share of the bandwidth.
- Edges: the previous node on the same pipe (each pipe is in order); the last S node before it in program order
  (the scalar unit issues every instruction, so a blocked scalar unit stops issue); a wait's matching set (flags,
  queue signals, auto-sync); a vector op's dependency on an earlier vector op (the PipeBarrier<PIPE_V> bisheng
  inserts), with the lag `vec_dep_latency_cycles`; PipeBarrier<PIPE_ALL> joins every pipe of the core; a sync_all
  joins every pipe of every core.
- GM bandwidth: a copy alone moves at its per-core rate (the MTE2/MTE3 curve at its size, times the unaligned
  factor); when the copies in flight on all cores ask for more than the chip's bandwidth, each gets a share
  proportional to its own rate (processor sharing, solved exactly with a common virtual clock).
- The kernel's head (launch_us) comes before the first node, its tail (tail_us) after the last.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..socs import Soc, get_soc
from . import events as ev
from .events import EventLog
from .model import COMPOSITE, TimeParams, vec_class

# A pipe "bounds" the kernel when its busiest core keeps it busy for at least this share of the modelled total time
# (head and tail included); otherwise the kernel is latency-bound (waits, head/tail, dependency chains).
BOUND_SHARE = 0.5

_INF = math.inf


@dataclass(frozen=True)
class Timing:
    """The modelled time of one launch (see docs/timing.md). Times in microseconds."""

    total_us: float                           # head + scheduled pipe work + tail
    per_core: tuple[dict[str, float], ...]    # busy microseconds per pipe ("MTE2", "MTE3", "V", "S") per core
    bound: str                                # "MTE2" | "MTE3" | "V" | "S" | "latency"
    roofline_us: float                        # distinct GM bytes of the launch / chip bandwidth
    launch_us: float                          # the head (launch, scalar init) included in total_us
    tail_us: float
    soc: str
    notes: tuple[str, ...]                    # thin-data and model warnings
    roofline_bytes: int = 0
    events: dict[str, int] = field(default_factory=dict)   # log records per kind
    _spans: Any = field(default=None, repr=False, compare=False)

    @property
    def pipe_us(self) -> float:
        """The scheduled part: total_us without head and tail."""
        return self.total_us - self.launch_us - self.tail_us

    def as_dict(self) -> dict[str, Any]:
        return {"total_us": self.total_us, "per_core": [dict(c) for c in self.per_core], "bound": self.bound,
                "roofline_us": self.roofline_us, "roofline_bytes": self.roofline_bytes, "launch_us": self.launch_us,
                "tail_us": self.tail_us, "soc": self.soc, "notes": list(self.notes), "events": dict(self.events)}

    def trace(self) -> list[dict[str, Any]]:
        """Chrome trace events ("ph": "X", pid = core, tid = pipe name, ts/dur in us) for Perfetto/chrome://tracing."""
        if self._spans is None:
            return []
        return [dict(e) for e in self._spans.events()]


class _Spans:
    """What trace() needs: the schedule as arrays and the log, built into event dicts only on demand."""

    def __init__(self, log: EventLog, core: np.ndarray, rec: np.ndarray, pipe: np.ndarray, start: np.ndarray,
                 end: np.ndarray, factor: np.ndarray) -> None:
        self.log, self.core, self.rec, self.pipe, self.start, self.end, self.factor = (
            log, core, rec, pipe, start, end, factor)

    def events(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        names = self.log.api_names
        core, rec, pipe = self.core.tolist(), self.rec.tolist(), self.pipe.tolist()
        start, end, factor = self.start.tolist(), self.end.tolist(), self.factor.tolist()
        rows = [c.tolist() for c in self.log.cores]
        fields = ev.RECORD.names
        for i in range(len(core)):
            c = core[i]
            if c < 0:
                continue  # a global join (sync_all)
            r = dict(zip(fields, rows[c][rec[i]]))
            k = r["kind"]
            api = names[r["api"]] if r["api"] < len(names) else "?"
            if k == ev.COPY:
                name, args = api, {"bytes": r["x"], "bursts": r["b"], "ub": r["a"], "gm_buffer": r["gm_buf"],
                                   "gm_offset": r["y"]}
            elif k == ev.VEC:
                name = api
                args = {"api": api, "repeats": r["d"], "elements": r["x"],
                        "dtype": ev.DTYPES[r["dtype"]] if r["dtype"] < len(ev.DTYPES) else "?"}
                if factor[i] != 1.0:
                    args["bank_conflict_factor"] = factor[i]
            elif k == ev.SCALAR:
                name, args = "scalar", {"ub": r["a"], "gm_reads": r["b"], "gm_writes": r["c"]}
            elif k in (ev.SET, ev.WAIT):
                name = f"{ev.KIND_NAMES[k]} {api}"
                args = {"token": r["x"]}
            else:
                name, args = api if k == ev.SYNC_ALL else ev.KIND_NAMES[k], {}
            out.append({"name": name, "ph": "X", "pid": c, "tid": ev.PIPES[min(pipe[i], 3)], "ts": start[i],
                        "dur": max(0.0, end[i] - start[i]), "args": args})
        return out


def _interp_rate(curve: Sequence[Sequence[float]], nbytes: np.ndarray) -> np.ndarray:
    pts = sorted((float(b), float(g)) for b, g in curve)
    xs = np.log2([max(1.0, p[0]) for p in pts])
    ys = np.array([p[1] for p in pts])
    return np.interp(np.log2(np.maximum(nbytes.astype(np.float64), 1.0)), xs, ys)


def _blocks(addr: int, span: int = 256) -> list[tuple[int, int]]:
    """(bank_id, bank_group) of the 32-byte blocks of a contiguous repeat of `span` bytes at UB `addr` (A2 rule)."""
    return [(((addr + 32 * k) >> 16) & 3, ((addr + 32 * k) >> 5) & 15) for k in range(max(1, -(-span // 32)))]


def repeat_span(repeats: int, elements: int, dtype: int) -> int:
    """Bytes one repeat of a vector instruction reads per operand: 256, or less for a single partial repeat (its
    mask covers `elements` lanes of `dtype`), in whole 32-byte blocks."""
    size = _DTYPE_BYTES.get(ev.DTYPES[dtype] if dtype < len(ev.DTYPES) else "?", 4)
    if repeats != 1 or elements <= 0:
        return 256
    return min(256, -(-elements * size // 32) * 32)


_DTYPE_BYTES = {"half": 2, "float": 4, "bfloat16_t": 2, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
                "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8, "bool": 1, "double": 8}


def bank_conflicts(dst: int, src0: int, src1: int, span: int = 256) -> tuple[bool, bool]:
    """(read-read, read-write) conflict of a vector instruction's first repeat under the A2/A3 UB bank rule.

    asc-devkit examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub: 16 bank groups of
    32-byte rows; bank_id = UB address bits 17:16, bank group = bits 8:5. Two sources whose blocks share a bank
    group conflict (read-read); a destination that shares a bank with a source conflicts (read-write) unless both
    start in the same bank, when the hardware delays the write by one repeat. Operands are taken as contiguous
    (block stride 1) runs of `span` bytes (repeat_span); identical source addresses are one read."""
    rr = rw = False
    s0 = _blocks(src0, span) if src0 != ev.NO_ADDR else []
    s1 = _blocks(src1, span) if src1 != ev.NO_ADDR and src1 != src0 else []
    if s0 and s1:
        rr = bool({g for _, g in s0} & {g for _, g in s1})
    if dst != ev.NO_ADDR:
        d = _blocks(dst, span)
        ds = set(d)
        for s in (s0, _blocks(src1, span) if src1 != ev.NO_ADDR else []):
            if s and ds & set(s) and s[0] != d[0]:
                rw = True
    return rr, rw


def _value(params: TimeParams, name: str, fallback: float, notes: list[str]) -> float:
    f = getattr(params, name)
    if f.value is None:
        notes.append(f"{name}: no public figure ({f.source}); the model uses {fallback}")
        return fallback
    return float(f.value)


def _last_before(touch: np.ndarray) -> np.ndarray:
    """For every record i, the index of the last record j < i with touch[j] (-1 if none)."""
    idx = np.where(touch, np.arange(len(touch)), -1)
    run = np.maximum.accumulate(idx) if len(idx) else idx
    out = np.empty_like(run)
    if len(run):
        out[0] = -1
        out[1:] = run[:-1]
    return out


def replay(log: EventLog, params: TimeParams, *, soc: "str | Soc | None" = None,
           roofline_bytes: int = 0) -> Timing:
    """Schedule `log` with `params`; returns the Timing. `roofline_bytes`: the launch's distinct GM bytes."""
    soc_ = get_soc(soc) if soc is not None else None
    soc_name = soc_.name if soc_ is not None else params.soc
    slots = soc_.cores if soc_ is not None else 0  # physical cores; 0 = as many as blocks
    notes: list[str] = list(params.notes)
    clock = params.clock_ghz.value
    if clock is None or params.chip_bandwidth_gbps.value is None:
        raise ValueError(f"TimeParams of {params.soc}: clock_ghz and chip_bandwidth_gbps are required")
    cyc = 1.0 / (float(clock) * 1e3)  # microseconds per cycle
    chip_bw = float(params.chip_bandwidth_gbps.value) * 1e3  # bytes per microsecond
    launch_us = _value(params, "launch_us", 0.0, notes)
    tail_us = _value(params, "tail_us", 0.0, notes)
    issue = _value(params, "vec_issue_cycles", 0.0, notes) * cyc
    dep_lat = _value(params, "vec_dep_latency_cycles", 0.0, notes) * cyc
    flag = _value(params, "flag_cycles", 0.0, notes) * cyc
    issue_s = _value(params, "scalar_issue_cycles", 0.0, notes) * cyc
    s_ub = _value(params, "scalar_cycles_per_access", 1.0, notes) * cyc
    s_gm = _value(params, "scalar_gm_cycles", 1.0, notes) * cyc
    copy_oh = _value(params, "copy_overhead_cycles", 0.0, notes) * cyc
    burst_oh = _value(params, "burst_overhead_cycles", 0.0, notes) * cyc
    align = int(_value(params, "gm_align_bytes", 32, notes)) or 1
    if align not in (32, 128):
        notes.append(f"gm_align_bytes {align}: the log records 32- and 128-byte alignment; judged at "
                     f"{32 if align < 128 else 128}")
    unaligned = _value(params, "unaligned_gm_factor", 1.0, notes)
    bank_rule = params.ub_bank_rule.value
    rr_factor = _value(params, "bank_rr_factor", 1.0, notes) if bank_rule else 1.0
    rw_factor = _value(params, "bank_rw_factor", 1.0, notes) if bank_rule else 1.0
    if bank_rule not in (None, "a2"):
        notes.append(f"ub_bank_rule {bank_rule!r} is not modelled: no bank conflicts")
        bank_rule = None
    curves = {ev.MTE2: params.mte2_curve.value, ev.MTE3: params.mte3_curve.value}
    for p, c in curves.items():
        if not c or min(g for _, g in c) <= 0:
            raise ValueError(f"TimeParams of {params.soc}: {ev.PIPES[p]} copy-bandwidth curve must be given and > 0")
    names = log.api_names

    # All cores' records at once (vectorised; indices are global, every core's records contiguous): each record's
    # cost and its predecessors (columns: same pipe, issuing scalar unit, the set a wait pairs with, the vector op
    # it depends on (lag dep_lat), and for joins the other three pipes).
    K = 6
    ncores = len(log.cores)
    sizes = np.array([len(c) for c in log.cores], np.int64)
    active = np.flatnonzero(sizes)
    recs = np.concatenate([log.cores[c] for c in active]) if len(active) else np.zeros(0, ev.RECORD)
    n = len(recs)
    core_start = np.zeros(ncores, np.int64)
    core_start[1:] = np.cumsum(sizes)[:-1]
    core_id = np.repeat(np.arange(ncores), sizes)
    first = core_start[core_id]                     # index of each record's core's first record
    idx = np.arange(n)
    kind = recs["kind"].astype(np.int64)
    pipe = recs["pipe"].astype(np.int64)
    bad = (kind < ev.COPY) | (kind > ev.SYNC_ALL)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"event log of core {int(core_id[i])}: unknown record kind {int(kind[i])}")
    join = (kind == ev.BARRIER_ALL) | (kind == ev.SYNC_ALL)
    pipe = np.where(join, ev.S, pipe)
    last = [_last_before((pipe == p) | join) for p in range(4)]
    for p in range(4):
        last[p][last[p] < first] = -1               # no predecessor across cores
    preds = np.full((n, K), -1, np.int64)
    preds[:, 0] = np.choose(pipe, last) if n else preds[:, 0]
    preds[:, 1] = np.where(pipe != ev.S, last[ev.S], -1)
    # waits: the set of the same core with the same token
    is_set, is_wait = kind == ev.SET, kind == ev.WAIT
    if is_wait.any():
        token = core_id.astype(np.uint64) << np.uint64(40) | recs["x"]
        set_idx = idx[is_set]
        order = np.argsort(token[set_idx], kind="stable")
        keys = token[set_idx][order]
        wt = token[is_wait]
        widx = idx[is_wait]
        if len(keys):
            pos = np.minimum(np.searchsorted(keys, wt), len(keys) - 1)
            ok = keys[pos] == wt
            src = set_idx[order][pos]
        else:
            ok = np.zeros(len(wt), bool)
            src = widx
        wrong = ~ok | (src >= widx)
        if wrong.any():
            i = int(widx[wrong][0])
            raise ValueError(f"event log of core {int(core_id[i])}: record {i - int(first[i])} waits for token "
                             f"{int(recs['x'][i])} that no earlier record set")
        preds[widx, 2] = src
    # vector dependencies: V sequence numbers count each core's VEC records from 1
    is_vec = kind == ev.VEC
    vec_idx = idx[is_vec]
    vec_rank = np.cumsum(is_vec) - 1                # global rank of each VEC record among VEC records
    vec_base = vec_rank[first] + (~is_vec[first]).astype(np.int64)  # rank of the core's first VEC record
    vec_count = np.bincount(core_id[is_vec], minlength=ncores)
    dep = recs["y"][is_vec].astype(np.int64)
    vcore = core_id[is_vec]
    has = (dep > 0) & (dep <= vec_count[vcore])
    preds[vec_idx[has], 3] = vec_idx[vec_base[is_vec][has] + dep[has] - 1]
    jidx = idx[join]
    if len(jidx):
        preds[jidx, 0] = last[ev.V][jidx]
        preds[jidx, 1] = last[ev.MTE2][jidx]
        preds[jidx, 4] = last[ev.MTE3][jidx]
        preds[jidx, 5] = last[ev.S][jidx]
    # costs
    dur = np.zeros(n)
    nbytes = np.zeros(n)
    rate = np.ones(n)
    factor = np.ones(n)
    is_copy = kind == ev.COPY
    for p in (ev.MTE2, ev.MTE3):
        sel = is_copy & (pipe == p)
        if sel.any():
            r = _interp_rate(curves[p], recs["x"][sel]) * 1e3
            # The share of bursts whose GM offset breaks the alignment moves at unaligned_gm_factor x the rate.
            mis = recs["d"][sel].astype(np.int64)
            mis = (mis & 0xFFFF) if align <= 32 else (mis >> 16)
            f = mis / np.maximum(recs["b"][sel].astype(np.int64), 1)
            rate[sel] = r / ((1.0 - f) + f / unaligned)
    dur[is_copy] = copy_oh + (np.maximum(recs["b"][is_copy].astype(np.int64), 1) - 1) * burst_oh
    nbytes[is_copy] = recs["x"][is_copy]
    conflicts = 0
    if is_vec.any():
        key = recs["api"][is_vec].astype(np.int64) * 256 + recs["dtype"][is_vec]
        uk, inv = np.unique(key, return_inverse=True)
        per_rep = np.array([params.vec_cycles(vec_class(names[k // 256] if k // 256 < len(names) else "?"),
                                              ev.DTYPES[k % 256] if k % 256 < len(ev.DTYPES) else "?")
                            for k in uk.tolist()])[np.asarray(inv).reshape(-1)]
        if bank_rule:
            single = recs["d"][is_vec] == 1  # only a single repeat can be partial (repeat_span)
            ops = np.stack([recs["a"][is_vec], recs["b"][is_vec], recs["c"][is_vec], np.where(single, 1, 2),
                            np.where(single, recs["x"][is_vec], 0), recs["dtype"][is_vec]], axis=1).astype(np.int64)
            uo, oinv = np.unique(ops, axis=0, return_inverse=True)
            f = []
            for d_, s0, s1, reps, lanes, dt in uo.tolist():
                rr, rw = bank_conflicts(d_, s0, s1, repeat_span(reps, lanes, dt))
                f.append((rr_factor if rr else 1.0) * (rw_factor if rw else 1.0))
            vf = np.array(f)[np.asarray(oinv).reshape(-1)]
            vf = np.where(recs["d"][is_vec] > 0, vf, 1.0)
            factor[is_vec] = vf
            conflicts = int((vf != 1.0).sum())
        vd = issue + recs["d"][is_vec] * per_rep * cyc * factor[is_vec]
        # High-level APIs logged as one call: their instruction sequence, once per chunk.
        chunks = recs["gm_buf"][is_vec].astype(np.int64)
        for name, comp in COMPOSITE.items():
            api_id = names.index(name) if name in names else -1
            sel = (recs["api"][is_vec] == api_id) & (chunks > 0)
            if not sel.any():
                continue
            seq = np.array([sum(params.vec_cycles(c, ev.DTYPES[d] if d < len(ev.DTYPES) else "?")
                                for c in comp.classes) for d in recs["dtype"][is_vec][sel].tolist()])
            per_chunk = (len(comp.classes) + comp.bare) * issue + comp.barriers * dep_lat
            vd[sel] = chunks[sel] * per_chunk + recs["d"][is_vec][sel] * seq * cyc * factor[is_vec][sel]
        dur[is_vec] = vd
    sc = kind == ev.SCALAR
    dur[sc] = recs["a"][sc] * s_ub + (recs["b"][sc].astype(np.float64) + recs["c"][sc]) * s_gm
    dur[is_set | is_wait | join] = flag
    bar = kind == ev.BARRIER
    dur[bar] = flag + np.where(pipe[bar] == ev.V, dep_lat, 0.0)
    # Lags: a vector op's dependency, and a V signal or PIPE_ALL join right after a vector op, wait for the V
    # results to be written (vec_dep_latency_cycles after it ends), as set_flag waits for its pipe's completion.
    lags = np.zeros((n, K))
    lags[:, 3] = dep_lat
    after_vec = (preds[:, 0] >= 0) & is_vec[np.maximum(preds[:, 0], 0)]
    lags[((is_set & (pipe == ev.V)) | join) & after_vec, 0] = dep_lat
    # sync_all: the k-th sync record of every core departs after global join k, which waits for all their pipes
    sync_arrive: list[list[int]] = []
    sync_depart: list[list[int]] = []
    seen: dict[int, int] = {}
    for i in idx[kind == ev.SYNC_ALL].tolist():
        c = int(core_id[i])
        k = seen.get(c, 0)
        seen[c] = k + 1
        if k == len(sync_arrive):
            sync_arrive.append([])
            sync_depart.append([])
        sync_arrive[k] += [int(x) for x in preds[i] if x >= 0]
        sync_depart[k].append(i)
        preds[i] = -1
    # The scalar unit spends scalar_issue_cycles issuing each instruction of another pipe: an instruction is
    # issued after the last S node plus the issues since it; the next S node waits for them too.
    early = np.full(n, launch_us)
    issue_busy = np.zeros(ncores)
    if issue_s > 0 and n:
        issued = np.cumsum((pipe != ev.S) & ~join)
        before = np.where(first > 0, issued[np.maximum(first - 1, 0)], 0)  # issues of earlier cores
        s_pred = np.where(join, last[ev.S], np.where(pipe != ev.S, preds[:, 1], preds[:, 0]))
        count = issued - np.where(s_pred >= 0, issued[np.maximum(s_pred, 0)], before)
        col = np.where(join, 5, np.where(pipe != ev.S, 1, 0))
        has_s = s_pred >= 0
        lags[idx[has_s], col[has_s]] += count[has_s] * issue_s
        early[~has_s] += count[~has_s] * issue_s
        ends = core_start[active] + sizes[active] - 1
        issue_busy[active] = (issued[ends] - before[ends]) * issue_s
    # Free signals (flag_cycles 0, no issue cost) are taken out of the graph to schedule fewer nodes: a set ends
    # when its pipe's previous node ends (+ its lag), so every edge from it is moved to that node. Its issuing
    # S node is dropped with it: every successor is issued later, so it waits for that S node anyway.
    al = np.full(n, -1, np.int64)        # a set taken out of the graph: the node it ends with (-2: the head)
    al_lag = np.zeros(n)
    gone = np.zeros(n, bool)
    if flag == 0 and issue_s == 0 and is_set.any():
        target = np.where(is_set, preds[:, 0], idx)
        shift = np.where(is_set, lags[:, 0], 0.0)
        for _ in range(n):  # pointer jumping over runs of sets
            hop = (target >= 0) & is_set[np.maximum(target, 0)] & (target != idx)
            if not hop.any():
                break
            t = target[hop]
            shift[hop] += shift[t]
            target[hop] = target[t]
        via = (preds >= 0) & is_set[np.maximum(preds, 0)]
        old = preds[via]
        preds[via] = target[old]
        lags[via] += shift[old]
        preds[is_set] = -1
        for k, arr in enumerate(sync_arrive):  # joins of sync_all follow the sets too
            a_ = np.array(arr, np.int64)
            sync_arrive[k] = [int(x) for x in np.where(is_set[a_], target[a_], a_) if x >= 0]
        al = np.where(is_set, np.where(target >= 0, target, -2), -1)
        al_lag = np.where(is_set, shift, 0.0)
        gone = is_set.copy()
    # Free waits (same conditions) fold into the next node of their pipe when nothing else refers to them: that
    # node takes over the wait's set (it has no set of its own) and the wait's predecessor on the pipe; it is
    # issued later, so the wait's issuing S node is covered too. Runs of waits keep all but the last.
    merged = np.zeros(n, bool)
    merged_preds = np.zeros((0, 3), np.int64)
    merged_lags = np.zeros((0, 3))
    if flag == 0 and issue_s == 0 and is_wait.any():
        used = preds[preds >= 0]
        refs = np.bincount(used, minlength=n)
        for arr in sync_arrive:
            np.add.at(refs, np.array(arr, np.int64), 1)
        nxt = np.full(n, -1, np.int64)
        own = preds[:, 0]
        same = (own >= 0) & ~join
        nxt[own[same]] = idx[same]
        nx = np.maximum(nxt, 0)
        cand = (is_wait & (pipe != ev.S) & (refs == 1) & (nxt >= 0) & ~join[nx] & ~is_wait[nx] & ~gone[nx]
                & (pipe[nx] == pipe) & (preds[nx, 2] < 0))
        w = idx[cand]
        t = nxt[cand]
        merged_preds = preds[w][:, :3].copy()
        merged_lags = lags[w][:, :3].copy()
        preds[t, 2], lags[t, 2] = preds[w, 2], lags[w, 2]
        preds[t, 0], lags[t, 0] = preds[w, 0], lags[w, 0]
        preds[w] = -1
        merged[w] = True
        gone |= merged
        al = np.where(merged, -3, al)  # -3: a folded wait (its times are set after the schedule)
    # Waves: with more blocks than physical cores, block b runs after block b - slots has ended on every pipe.
    extra_src: list[int] = []
    extra_dst: list[int] = []
    if slots and ncores > slots:
        notes.append(f"block_dim {ncores} > {slots} cores: blocks run in waves (block b after block b - "
                     f"{slots} on the same core)")
        ends_of: dict[int, list[int]] = {}
        starts_of: dict[int, list[int]] = {}
        for c in active.tolist():
            lo, hi = int(core_start[c]), int(core_start[c] + sizes[c])
            e_l, s_l = [], []
            for p in range(4):
                on = ((pipe[lo:hi] == p) | join[lo:hi])
                if on.any():
                    e = lo + int(np.flatnonzero(on)[-1])
                    e = int(al[e]) if gone[e] else e
                    if e >= 0:
                        e_l.append(e)
                keep = on & ~gone[lo:hi]
                if keep.any():
                    s_l.append(lo + int(np.flatnonzero(keep)[0]))
            ends_of[c], starts_of[c] = e_l, s_l
        for b in range(slots, ncores):
            if b in starts_of and b - slots in ends_of:
                for e in ends_of[b - slots]:
                    for f_ in starts_of[b]:
                        extra_src.append(e)
                        extra_dst.append(f_)
    active_cores = len(active)
    for k, deps in enumerate(sync_depart):
        if len(deps) != active_cores:
            raise ValueError(f"sync_all #{k} reached by {len(deps)} of {active_cores} cores (hangs on hardware)")
    # Edges; the global join nodes of sync_all come after every core's records.
    total_nodes = n + len(sync_arrive)
    src_e = [preds[:, c] for c in range(K)] + [np.array(extra_src, np.int64)]
    dst_e = [idx] * K + [np.array(extra_dst, np.int64)]
    lag_e = [lags[:, c] for c in range(K)] + [np.zeros(len(extra_src))]
    for k, (arr, dep_) in enumerate(zip(sync_arrive, sync_depart)):
        g = n + k
        src_e += [np.array(arr, np.int64), np.full(len(dep_), g, np.int64)]
        dst_e += [np.full(len(arr), g, np.int64), np.array(dep_, np.int64)]
        lag_e += [np.zeros(len(arr)), np.zeros(len(dep_))]
    src = np.concatenate(src_e)
    dst = np.concatenate(dst_e)
    lag = np.concatenate(lag_e)
    keep = src >= 0
    src, dst, lag = src[keep], dst[keep], lag[keep]
    zeros = np.zeros(len(sync_arrive))
    al = np.concatenate([al, np.full(len(sync_arrive), -1, np.int64)])
    al_lag = np.concatenate([al_lag, zeros])
    dur = np.concatenate([dur, zeros])
    nbytes = np.concatenate([nbytes, zeros])
    rate = np.concatenate([rate, zeros + 1])
    early = np.concatenate([early, zeros + launch_us])
    # When the copies of all cores at full rate cannot exceed the chip's bandwidth, no copy is ever slowed: copies
    # are fixed-cost nodes then (the same schedule, without the bandwidth simulation).
    peak = 0.0
    for p in (ev.MTE2, ev.MTE3):
        sel = (nbytes[:n] > 0) & (pipe == p)
        if sel.any():  # per core its fastest copy on this pipe (records are grouped by core, in core order)
            heads = np.r_[0, np.flatnonzero(np.diff(core_id[sel])) + 1]
            peak += float(np.maximum.reduceat(rate[:n][sel], heads).sum())
    if peak <= chip_bw:
        copy = nbytes > 0
        dur = np.where(copy, dur + nbytes / rate, dur)
        nbytes = np.zeros_like(nbytes)
    start, end = _schedule(total_nodes, src, dst, lag, dur, nbytes, rate, early, chip_bw, skip=al != -1)
    m = al >= 0  # the sets taken out: zero-length, when the node they follow ends
    end[m] = end[al[m]] + al_lag[m]
    start[m] = end[m]
    h = al == -2
    end[h] = start[h] = early[h]
    w = np.flatnonzero(al == -3)  # the folded waits: zero-length, when their predecessors have ended
    if len(w):
        t = early[w].copy()
        for k in range(3):
            q = merged_preds[:, k]
            t = np.where(q >= 0, np.maximum(t, end[np.maximum(q, 0)] + merged_lags[:, k]), t)
        start[w] = end[w] = t

    core_of = np.concatenate([core_id, np.full(len(sync_arrive), -1, np.int64)])
    pipe_of = np.concatenate([pipe, np.full(len(sync_arrive), ev.S, np.int64)])
    rec_of = np.concatenate([idx - first, np.zeros(len(sync_arrive), np.int64)])
    factor_of = np.concatenate([factor, zeros + 1])
    busy = np.zeros((len(log.cores), 4))
    real = core_of >= 0
    np.add.at(busy, (core_of[real], pipe_of[real]), (end - start)[real])
    busy[:, ev.S] += issue_busy
    per_core = tuple({"MTE2": float(b[ev.MTE2]), "MTE3": float(b[ev.MTE3]), "V": float(b[ev.V]), "S": float(b[ev.S])}
                     for b in busy)
    last_end = max(launch_us, float(end.max())) if len(end) else launch_us
    total = last_end + tail_us
    busiest, most = "latency", 0.0
    for c in per_core:
        for pipe_name, us in c.items():
            if us > most:
                busiest, most = pipe_name, us
    bound = busiest if total > 0 and most >= BOUND_SHARE * total else "latency"
    if conflicts:
        notes.append(f"{conflicts} vector instructions pay a UB bank-group conflict")
    return Timing(total_us=total, per_core=per_core, bound=bound, roofline_us=roofline_bytes / chip_bw,
                  launch_us=launch_us, tail_us=tail_us, soc=soc_name, notes=tuple(dict.fromkeys(notes)),
                  roofline_bytes=roofline_bytes, events=log.counts(),
                  _spans=_Spans(log, core_of, rec_of, pipe_of, start, end, factor_of))


def _schedule(n: int, src: np.ndarray, dst: np.ndarray, lag: np.ndarray, dur: np.ndarray, nbytes: np.ndarray,
              rate: np.ndarray, early: np.ndarray, chip_bw: float,
              skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of every node of the graph (edges src -> dst, dst starting >= end(src) + lag).

    Fixed nodes end at start + dur. A copy (nbytes > 0) moves its bytes after its fixed overhead dur, at
    rate x s(t), s(t) = min(1, chip_bw / sum of the rates in flight). All copies progress on one virtual clock V
    (dV/dt = s), so a copy ends when V has advanced by nbytes / rate since its bytes started moving. `skip`: nodes
    outside the graph (no edges; the caller sets their times)."""
    order = np.argsort(src, kind="stable")
    succ = dst[order].tolist()
    slag = lag[order].tolist()
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    ptr_l = ptr.tolist()
    indeg = np.bincount(dst, minlength=n).tolist()
    dur_l, bytes_l, rate_l = dur.tolist(), nbytes.tolist(), rate.tolist()
    ready = early.tolist()   # the earliest start of each node (the kernel's head, scalar issue before the first S node)
    t0 = float(early.min()) if n else 0.0
    start = [0.0] * n
    end = [-1.0] * n
    pending: list[tuple[float, int]] = []   # (time its bytes start moving, node)
    flight: list[tuple[float, int]] = []    # (virtual finish time, node)
    free = np.asarray(indeg) == 0
    if skip is not None:
        free &= ~skip
    stack = np.flatnonzero(free).tolist()[::-1]

    def finish(i: int, e: float) -> None:
        # Node i ends at e: its successors may start after their lag; those with no other predecessor left go next.
        end[i] = e
        for j in range(ptr_l[i], ptr_l[i + 1]):
            s = succ[j]
            v = e + slag[j]
            if v > ready[s]:
                ready[s] = v
            indeg[s] -= 1
            if indeg[s] == 0:
                stack.append(s)

    def release() -> None:
        # Fixed-cost nodes settle at once (depth-first); a copy waits in `pending` for the bandwidth simulation.
        while stack:
            i = stack.pop()
            r = ready[i]
            start[i] = r
            if bytes_l[i] > 0:
                heapq.heappush(pending, (r + dur_l[i], i))
                continue
            finish(i, r + dur_l[i])

    release()
    t, vclock, demand = t0, 0.0, 0.0
    while pending or flight:
        share = 1.0 if demand <= chip_bw else chip_bw / demand
        t_fin = t + (flight[0][0] - vclock) / share if flight else _INF
        t_start = pending[0][0] if pending else _INF
        if t_start <= t_fin:
            vclock += share * (t_start - t)
            t = t_start
            _, i = heapq.heappop(pending)
            heapq.heappush(flight, (vclock + bytes_l[i] / rate_l[i], i))
            demand += rate_l[i]
        else:
            vclock = flight[0][0]
            t = t_fin
            _, i = heapq.heappop(flight)
            demand = demand - rate_l[i] if flight else 0.0  # no drift when idle
            finish(i, t)
            release()
    end_a = np.array(end)
    if skip is not None:
        end_a[skip] = 0.0
    if (end_a < 0).any():
        stuck = int((end_a < 0).sum())
        raise ValueError(f"replay: {stuck} operations never became ready (a cycle of waits in the log)")
    return np.array(start), end_a
