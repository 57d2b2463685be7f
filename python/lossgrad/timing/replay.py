"""The scheduler: replays the twin's event log on four in-order pipes per core, with copy latencies, an L2 and the
chip's HBM and L2 bandwidths shared by all cores.

Model (docs/timing.md "Model"):
- Every record is a node of a dependency graph. A node starts when all its predecessors have ended (plus a lag on
  some edges) and lasts its cost; copies last until their bytes have moved at their share of the bandwidth.
- Edges: the previous node on the same pipe (each pipe is in order); the last S node before it in program order
  (the scalar unit issues every instruction, so a blocked scalar unit stops issue); a wait's matching set (flags,
  queue signals, auto-sync); a vector op's dependency on an earlier vector op (the PipeBarrier<PIPE_V> bisheng
  inserts), with the lag `vec_dep_latency_cycles`; PipeBarrier<PIPE_ALL> joins every pipe of the core; a sync_all
  joins every pipe of every core.
- A copy keeps its pipe busy while it moves its bytes; its data is visible its exposed latency later. What waits for
  the data (a set or barrier after it on its pipe, a join, the kernel's end) waits for that; the next copy does not.
- L2: each copy's GM extent is looked up in an LRU of the chip's L2 capacity, in the order the copies start (a first
  schedule gives that order when it matters): reads of resident extents hit, other reads go to HBM and stay; writes
  stay in L2 unless evicted before the end. Copies of a GlobalTensor with CACHE_MODE_DISABLE go to HBM and stay out.
- Bandwidth: hits and absorbed writes share the L2 bandwidth, the others the HBM's (a write byte costs hbm_read /
  hbm_write read bytes of it); within a pool each copy gets a share proportional to its own rate when the copies in
  flight ask for more (processor sharing, solved exactly with one virtual clock per pool).
- Launch: core k of a wave starts at launch_us + k x core_skew_us and first does core_init_cycles of scalar work;
  the task ends tail_us after the last completion.
"""
from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..socs import Soc, get_soc
from . import events as ev
from .events import EventLog
from .model import COMPOSITE, TimeParams, vec_class

# A pipe "bounds" the kernel when its busiest core keeps it busy for at least this share of the modelled total time
# (head and tail included); otherwise the kernel is latency-bound (waits, head/tail, dependency chains).
BOUND_SHARE = 0.5

# Regimes of a launch, by the share of the total the busiest core spends moving bytes at its (shared) rate: a
# bandwidth-bound stream at STREAM_SHARE or more, latency-bound (fixed costs, latencies, waits) under LATENCY_SHARE,
# mixed between. Each regime has its own error band (lossgrad.timing.bands, from the held-out table).
STREAM_SHARE = 0.5
LATENCY_SHARE = 0.2
REGIMES = ("latency", "mixed", "bandwidth")

L2_STATES = ("cold", "warm")


_INF = math.inf
HBM, L2 = 0, 1      # bandwidth pools


@dataclass(frozen=True)
class Timing:
    """The modelled time of one launch (see docs/timing.md). Times in microseconds."""

    total_us: float                           # launch head + cores + tail (msprof's Task Duration)
    per_core: tuple[dict[str, float], ...]    # busy microseconds per pipe ("MTE2", "MTE3", "V", "S") per core
    bound: str                                # "MTE2" | "MTE3" | "V" | "S" | "latency"
    roofline_us: float                        # the HBM time of the distinct bytes (see `replay`)
    launch_us: float                          # before the first core starts
    tail_us: float                            # after the last completion
    soc: str
    notes: tuple[str, ...]                    # thin-data and model warnings
    roofline_bytes: int = 0
    events: dict[str, int] = field(default_factory=dict)   # log records per kind
    core_us: tuple[float, ...] = ()           # per core: its start to its last completion (msprof aiv_time, per core)
    regime: str = "mixed"                     # "latency" | "mixed" | "bandwidth" (REGIMES)
    stream_share: float = 0.0                 # the busiest core's byte-moving time / total_us
    band: tuple[float, float] = (1.0, 1.0)    # published / modelled of the regime's held-out cases (low, high)
    band_note: str = ""
    l2: str = "cold"                          # the inputs' L2 state at launch
    l2_hit_bytes: int = 0                     # bytes read from L2
    l2_absorbed_bytes: int = 0                # bytes written that stayed in L2
    hbm_bytes: int = 0                        # bytes read from or written to HBM
    core_init_us: float = 0.0                 # each core's scalar set-up (core_init_cycles), inside its core_us
    _spans: Any = field(default=None, repr=False, compare=False)

    @property
    def pipe_us(self) -> float:
        """The cores' part: total_us without head and tail."""
        return self.total_us - self.launch_us - self.tail_us

    @property
    def span_us(self) -> float:
        """From the first core's start to the last completion (what a simulator times)."""
        return self.pipe_us

    @property
    def body_us(self) -> float:
        """The busiest core from its start to its last data without its scalar set-up: what a call's data costs,
        without the fixed costs of every launch (head, tail, skewed starts, set-up)."""
        return max(self.core_us) - self.core_init_us if self.core_us else 0.0

    @property
    def aiv_us(self) -> float:
        """The mean core time (msprof's aiv_time: cycles on the vector cores / cores)."""
        return float(np.mean(self.core_us)) if self.core_us else self.span_us

    @property
    def band_us(self) -> tuple[float, float]:
        """The range the regime's held-out cases put the true time in."""
        return self.total_us * self.band[0], self.total_us * self.band[1]

    def msprof(self) -> dict[str, float]:
        """The figures msprof's PipeUtilization shows: aiv_time and each pipe's busy time, averaged over the cores."""
        n = max(1, len(self.per_core))
        mean = {p: sum(c[p] for c in self.per_core) / n for p in ("V", "S", "MTE2", "MTE3")}
        return {"task_duration_us": self.total_us, "aiv_time_us": self.aiv_us, "aiv_vec_time_us": mean["V"],
                "aiv_scalar_time_us": mean["S"], "aiv_mte2_time_us": mean["MTE2"], "aiv_mte3_time_us": mean["MTE3"]}

    def as_dict(self) -> dict[str, Any]:
        return {"total_us": self.total_us, "per_core": [dict(c) for c in self.per_core], "bound": self.bound,
                "regime": self.regime, "band": list(self.band), "band_us": list(self.band_us),
                "band_note": self.band_note, "stream_share": self.stream_share,
                "roofline_us": self.roofline_us, "roofline_bytes": self.roofline_bytes, "launch_us": self.launch_us,
                "tail_us": self.tail_us, "span_us": self.span_us, "core_us": list(self.core_us),
                "msprof": self.msprof(), "l2": self.l2, "l2_hit_bytes": self.l2_hit_bytes,
                "l2_absorbed_bytes": self.l2_absorbed_bytes, "hbm_bytes": self.hbm_bytes, "soc": self.soc,
                "notes": list(self.notes), "events": dict(self.events)}

    def trace(self) -> list[dict[str, Any]]:
        """Chrome trace events ("ph": "X", pid = core, tid = pipe name, ts/dur in us) for Perfetto/chrome://tracing."""
        if self._spans is None:
            return []
        return [dict(e) for e in self._spans.events()]


class _Spans:
    """What trace() needs: the schedule as arrays and the log, built into event dicts only on demand."""

    def __init__(self, log: EventLog, core: np.ndarray, rec: np.ndarray, pipe: np.ndarray, start: np.ndarray,
                 end: np.ndarray, factor: np.ndarray, exposed: np.ndarray, pool: np.ndarray) -> None:
        self.log, self.core, self.rec, self.pipe, self.start, self.end, self.factor = (
            log, core, rec, pipe, start, end, factor)
        self.exposed, self.pool = exposed, pool

    def events(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        names = self.log.api_names
        core, rec, pipe = self.core.tolist(), self.rec.tolist(), self.pipe.tolist()
        start, end, factor = self.start.tolist(), self.end.tolist(), self.factor.tolist()
        exposed, pool = self.exposed.tolist(), self.pool.tolist()
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
                                   "gm_offset": r["y"], "memory": "L2" if pool[i] == L2 else "HBM",
                                   "latency_us": exposed[i]}
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




def _last_before(touch: np.ndarray) -> np.ndarray:
    """For every record i, the index of the last record j < i with touch[j] (-1 if none)."""
    idx = np.where(touch, np.arange(len(touch)), -1)
    run = np.maximum.accumulate(idx) if len(idx) else idx
    out = np.empty_like(run)
    if len(run):
        out[0] = -1
        out[1:] = run[:-1]
    return out


def _value(params: TimeParams, name: str, fallback: float, notes: list[str]) -> float:
    f = getattr(params, name)
    if f.value is None:
        if fallback is not None:
            notes.append(f"{name}: no public figure ({f.source}); the model uses {fallback}")
        return fallback
    return float(f.value)


@dataclass(frozen=True)
class CopyCost:
    """How one SoC's copies cost (lossgrad.timing.model "Copies"), in bytes per microsecond and microseconds."""

    issue: tuple[float, float]      # per pipe (MTE2, MTE3): fixed pipe cost per copy
    link: tuple[float, float]
    core: tuple[float, float]
    latency: tuple[float, float]
    hbm_latency: float
    hbm_core: float                 # per-core cap of HBM data (inf: none)

    @staticmethod
    def of(params: TimeParams, cyc: float, notes: list[str]) -> "CopyCost":
        def pair(what: str, fallback: float, scale: float) -> tuple[float, float]:
            return (_value(params, f"mte2_{what}", fallback, notes) * scale,
                    _value(params, f"mte3_{what}", fallback, notes) * scale)
        hbm_core = _value(params, "hbm_core_gbps", None, notes)
        return CopyCost(issue=pair("issue_cycles", 0.0, cyc), link=pair("link_gbps", 100.0, 1e3),
                        core=pair("core_gbps", 100.0, 1e3), latency=pair("latency_ns", 0.0, 1e-3),
                        hbm_latency=_value(params, "hbm_latency_ns", 0.0, notes) * 1e-3,
                        hbm_core=_INF if hbm_core is None else hbm_core * 1e3)

    def times(self, pipe: np.ndarray, nbytes: np.ndarray, from_hbm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(occupancy, exposed latency) of copies: the pipe is busy max(issue + s / link, s / core); the data is
        visible latency + issue + s / link after the start, if that is later than the occupancy."""
        p3 = pipe == ev.MTE3
        issue = np.where(p3, self.issue[1], self.issue[0])
        link = np.where(p3, self.link[1], self.link[0])
        core = np.where(p3, self.core[1], self.core[0])
        core = np.where(from_hbm, np.minimum(core, self.hbm_core), core)
        lat = np.where(p3, self.latency[1], self.latency[0]) + np.where(from_hbm, self.hbm_latency, 0.0)
        s = nbytes.astype(np.float64)
        occ = np.maximum(issue + s / link, s / core)
        return occ, np.maximum(0.0, lat + issue + s / link - occ)

    def isolated(self, pipe: int, nbytes: int, from_hbm: bool) -> float:
        """One copy alone, issue to data visible (what msKPP measured)."""
        occ, exp = self.times(np.array([pipe]), np.array([nbytes]), np.array([from_hbm]))
        return float(occ[0] + exp[0])


def classify_l2(keys: np.ndarray, writes: np.ndarray, bypass: np.ndarray, order: np.ndarray, capacity: float,
                warm: bool) -> tuple[np.ndarray, np.ndarray]:
    """(hit, absorbed) per copy: reads of extents resident in an LRU L2 of `capacity` bytes hit; writes stay in L2
    (absorbed) unless evicted before the end. `keys` rows are (gm buffer, offset, bytes); copies are visited in
    `order` (their start times). `warm`: the same copies ran once before (their extents are resident)."""
    n = len(keys)
    hit = np.zeros(n, bool)
    absorbed = np.zeros(n, bool)
    if capacity <= 0 or n == 0:
        return hit, absorbed
    rows = [tuple(k) for k in keys.tolist()]
    wr, byp = writes.tolist(), bypass.tolist()
    lru: OrderedDict[tuple, list] = OrderedDict()
    size = 0.0

    def visit(i: int, record: bool) -> None:
        nonlocal size
        key = rows[i]
        if byp[i]:
            return
        entry = lru.get(key)
        if entry is not None:
            lru.move_to_end(key)
            if record and not wr[i]:
                hit[i] = True
        else:
            entry = lru[key] = [key[2], -1]
            size += key[2]
        if wr[i]:
            entry[1] = i if record else -1
            if record:
                absorbed[i] = True
        while size > capacity and lru:
            _, (b, writer) = lru.popitem(last=False)
            size -= b
            if writer >= 0:
                absorbed[writer] = False   # evicted dirty: written to HBM during the kernel

    seq = order.tolist()
    if warm:
        for i in seq:
            visit(i, False)
    for i in seq:
        visit(i, True)
    return hit, absorbed


def _l2_static(keys: np.ndarray, writes: np.ndarray, bypass: np.ndarray, capacity: float,
               warm: bool) -> "tuple[np.ndarray, np.ndarray] | None":
    """The L2 outcome when the copies' order cannot change it (no re-read, cold, and nothing written is evicted):
    every read misses, every allocating write stays. None when the order matters."""
    alloc = ~bypass
    reads = alloc & ~writes
    if warm and reads.any():
        return None
    if reads.any():
        r = keys[reads]
        key = np.sort((r[:, 0] << 48) ^ (r[:, 1] << 16) ^ r[:, 2])  # an int per extent (enough to find repeats)
        if (key[1:] == key[:-1]).any():
            return None                                   # a re-read: hit or not depends on what came between
    w = alloc & writes
    if w.any() and float(keys[alloc, 2].sum()) > capacity:
        return None                                       # a written extent may be evicted before the end
    return np.zeros(len(keys), bool), w


def replay(log: EventLog, params: TimeParams, *, soc: "str | Soc | None" = None, roofline_bytes: int = 0,
           roofline_written: int = 0, l2: str = "cold") -> Timing:
    """Schedule `log` with `params`; returns the Timing. `roofline_bytes`: the launch's distinct GM bytes, of which
    `roofline_written` written; `l2`: "cold" (a first call: no input in L2) or "warm" (the same launch ran just
    before). The roofline is the HBM time of those bytes that must cross it: every distinct byte read (cold) at
    hbm_read, the written bytes beyond what L2 can hold at hbm_write. A cold launch cannot beat it; a warm one can."""
    if l2 not in L2_STATES:
        raise ValueError(f"l2 must be one of {L2_STATES}, got {l2!r}")
    soc_ = get_soc(soc) if soc is not None else None
    soc_name = soc_.name if soc_ is not None else params.soc
    slots = soc_.cores if soc_ is not None else 0  # physical cores; 0 = as many as blocks
    notes: list[str] = list(params.notes)
    clock = params.clock_ghz.value
    if clock is None:
        raise ValueError(f"TimeParams of {params.soc}: clock_ghz is required")
    cyc = 1.0 / (float(clock) * 1e3)  # microseconds per cycle
    hbm_read = _value(params, "hbm_read_gbps", 1000.0, notes) * 1e3   # bytes per microsecond
    hbm_write = _value(params, "hbm_write_gbps", 1000.0, notes) * 1e3
    l2_bw = _value(params, "l2_gbps", None, notes)
    l2_cap = _value(params, "l2_bytes", 0.0, notes) if l2_bw else 0.0
    l2_bw = l2_bw * 1e3 if l2_bw else hbm_read
    launch_us = _value(params, "launch_us", 0.0, notes)
    tail_us = _value(params, "tail_us", 0.0, notes)
    skew = _value(params, "core_skew_us", 0.0, notes)
    init = _value(params, "core_init_cycles", 0.0, notes) * cyc
    issue = _value(params, "vec_issue_cycles", 0.0, notes) * cyc
    rep_oh = _value(params, "vec_repeat_overhead_cycles", 0.0, notes)
    dep_lat = _value(params, "vec_dep_latency_cycles", 0.0, notes) * cyc
    flag = _value(params, "flag_cycles", 0.0, notes) * cyc
    barrier_c = _value(params, "barrier_cycles", 0.0, notes) * cyc
    issue_s = _value(params, "scalar_issue_cycles", 0.0, notes) * cyc
    s_ub = _value(params, "scalar_cycles_per_access", 1.0, notes) * cyc
    s_gm = _value(params, "scalar_gm_cycles", 1.0, notes) * cyc
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
    costs = CopyCost.of(params, cyc, notes)
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

    # ---- copies: memory (L2 or HBM), occupancy, exposed latency
    is_copy = kind == ev.COPY
    cidx = idx[is_copy]
    c_pipe = pipe[is_copy]
    c_bytes = recs["x"][is_copy].astype(np.int64)
    c_keys = np.stack([recs["gm_buf"][is_copy].astype(np.int64), recs["y"][is_copy].astype(np.int64), c_bytes],
                      axis=1) if len(cidx) else np.zeros((0, 3), np.int64)
    c_write = c_pipe == ev.MTE3
    c_bypass = recs["flags"][is_copy] == ev.CACHE_DISABLE
    mis = recs["d"][is_copy].astype(np.int64)
    mis = (mis & 0xFFFF) if align <= 32 else (mis >> 16)
    f_mis = mis / np.maximum(recs["b"][is_copy].astype(np.int64), 1)
    c_slow = (1.0 - f_mis) + f_mis / unaligned      # the share of unaligned bursts moves at unaligned x the rate
    c_fixed = (np.maximum(recs["b"][is_copy].astype(np.int64), 1) - 1) * burst_oh

    # ---- other costs
    dur = np.zeros(n)
    factor = np.ones(n)
    conflicts = 0
    if is_vec.any():
        key = recs["api"][is_vec].astype(np.int64) * 256 + recs["dtype"][is_vec]
        uk, inv = np.unique(key, return_inverse=True)
        per_rep = np.array([params.vec_cycles(vec_class(names[k // 256] if k // 256 < len(names) else "?"),
                                              ev.DTYPES[k % 256] if k % 256 < len(ev.DTYPES) else "?") + rep_oh
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
            seq = np.array([sum(params.vec_cycles(c, ev.DTYPES[d] if d < len(ev.DTYPES) else "?") + rep_oh
                                for c in comp.classes) for d in recs["dtype"][is_vec][sel].tolist()])
            per_chunk = (len(comp.classes) + comp.bare) * issue + comp.barriers * dep_lat
            vd[sel] = chunks[sel] * per_chunk + recs["d"][is_vec][sel] * seq * cyc * factor[is_vec][sel]
        dur[is_vec] = vd
    sc = kind == ev.SCALAR
    dur[sc] = recs["a"][sc] * s_ub + (recs["b"][sc].astype(np.float64) + recs["c"][sc]) * s_gm
    dur[is_set | is_wait | join] = flag
    bar = kind == ev.BARRIER
    dur[bar] = barrier_c + np.where(pipe[bar] == ev.V, dep_lat, 0.0)
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
    block_core = core_id % slots if slots else core_id  # the core a block runs on
    early = launch_us + block_core * skew + init
    issue_busy = np.zeros(ncores)
    if issue_s > 0 and n:
        issued = np.cumsum((pipe != ev.S) & ~join)
        before = np.where(first > 0, issued[np.maximum(first - 1, 0)], 0)  # issues of earlier cores
        s_pred = np.where(join, last[ev.S], np.where(pipe != ev.S, preds[:, 1], preds[:, 0]))
        count = issued - np.where(s_pred >= 0, issued[np.maximum(s_pred, 0)], before)
        col = np.where(join, 5, np.where(pipe != ev.S, 1, 0))
        has_s = s_pred >= 0
        lags[idx[has_s], col[has_s]] += count[has_s] * issue_s
        early = early + np.where(has_s, 0.0, count * issue_s)
        ends = core_start[active] + sizes[active] - 1
        issue_busy[active] = (issued[ends] - before[ends]) * issue_s
    # A set, barrier or join after a copy waits for the copy's data: its exposed latency is a lag on that edge
    # (filled in per schedule pass, `exposed` below; the copy's own pipe successor that is a copy does not wait).
    copy_pred_cols: list[tuple[np.ndarray, int]] = []
    for col in (0, 1, 4):
        q = preds[:, col]
        waits_data = (q >= 0) & is_copy[np.maximum(q, 0)] & (is_set | (kind == ev.BARRIER) | join)
        if col == 0:
            waits_data &= ~join
        sel = idx[waits_data]
        if len(sel):
            copy_pred_cols.append((sel, col))
    lag_base = lags.copy()
    q0 = preds[:, 0]
    pipe_after_set = (q0 >= 0) & is_set[np.maximum(q0, 0)] & ~is_set & ~join
    # Free signals (flag_cycles 0, no issue cost) are taken out of the graph to schedule fewer nodes: a set ends
    # when its pipe's previous node ends (+ its lag), so every edge from it is moved to that node. Its issuing
    # S node is dropped with it: every successor is issued later, so it waits for that S node anyway.
    simplify = flag == 0 and issue_s == 0

    def build(exposed_of_copy: np.ndarray) -> tuple:
        """The graph's edges for one schedule pass (lags depend on the copies' exposed latencies)."""
        pr = preds.copy()
        lg = lag_base.copy()
        exposed_n = np.zeros(n)
        exposed_n[cidx] = exposed_of_copy
        for sel, col in copy_pred_cols:
            lg[sel, col] += exposed_n[pr[sel, col]]
        # A set fires once its pipe's earlier work is done, but does not hold the pipe: the pipe's next node (not a
        # set) follows the set's own predecessor on the pipe plus the sets' cost, not the set's firing.
        if pipe_after_set.any():
            anc = np.where(is_set, pr[:, 0], idx)
            acc = np.where(is_set, dur, 0.0)
            for _ in range(n):  # pointer jumping over runs of sets
                hop = is_set & (anc >= 0) & is_set[np.maximum(anc, 0)]
                if not hop.any():
                    break
                acc[hop] += acc[anc[hop]]
                anc[hop] = anc[anc[hop]]
            q = pr[pipe_after_set, 0]
            pr[pipe_after_set, 0] = anc[q]
            lg[pipe_after_set, 0] = acc[q]
        al = np.full(n, -1, np.int64)        # a set taken out of the graph: the node it ends with (-2: the head)
        al_lag = np.zeros(n)
        gone = np.zeros(n, bool)
        arrive = [list(a) for a in sync_arrive]
        if simplify and is_set.any():
            target = np.where(is_set, pr[:, 0], idx)
            shift = np.where(is_set, lg[:, 0], 0.0)
            for _ in range(n):  # pointer jumping over runs of sets
                hop = (target >= 0) & is_set[np.maximum(target, 0)] & (target != idx)
                if not hop.any():
                    break
                t = target[hop]
                shift[hop] += shift[t]
                target[hop] = target[t]
            via = (pr >= 0) & is_set[np.maximum(pr, 0)]
            old = pr[via]
            pr[via] = target[old]
            lg[via] += shift[old]
            pr[is_set] = -1
            for k, arr in enumerate(arrive):  # joins of sync_all follow the sets too
                a_ = np.array(arr, np.int64)
                arrive[k] = [int(x) for x in np.where(is_set[a_], target[a_], a_) if x >= 0]
            al = np.where(is_set, np.where(target >= 0, target, -2), -1)
            al_lag = np.where(is_set, shift, 0.0)
            gone = is_set.copy()
        # Free waits (same conditions) fold into the next node of their pipe when nothing else refers to them: that
        # node takes over the wait's set (it has no set of its own) and the wait's predecessor on the pipe; it is
        # issued later, so the wait's issuing S node is covered too. Runs of waits keep all but the last.
        merged = np.zeros(n, bool)
        merged_preds = np.zeros((0, 3), np.int64)
        merged_lags = np.zeros((0, 3))
        if simplify and is_wait.any():
            used = pr[pr >= 0]
            refs = np.bincount(used, minlength=n)
            for arr in arrive:
                np.add.at(refs, np.array(arr, np.int64), 1)
            nxt = np.full(n, -1, np.int64)
            own = pr[:, 0]
            same = (own >= 0) & ~join
            nxt[own[same]] = idx[same]
            nx = np.maximum(nxt, 0)
            cand = (is_wait & (pipe != ev.S) & (refs == 1) & (nxt >= 0) & ~join[nx] & ~is_wait[nx] & ~gone[nx]
                    & (pipe[nx] == pipe) & (pr[nx, 2] < 0))
            w = idx[cand]
            t = nxt[cand]
            merged_preds = pr[w][:, :3].copy()
            merged_lags = lg[w][:, :3].copy()
            pr[t, 2], lg[t, 2] = pr[w, 2], lg[w, 2]
            pr[t, 0], lg[t, 0] = pr[w, 0], lg[w, 0]
            pr[w] = -1
            merged[w] = True
            gone |= merged
            al = np.where(merged, -3, al)  # -3: a folded wait (its times are set after the schedule)
        # Waves: with more blocks than physical cores, block b runs after block b - slots has ended on every pipe.
        extra_src: list[int] = []
        extra_dst: list[int] = []
        if slots and ncores > slots:
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
        src_e = [pr[:, c] for c in range(K)] + [np.array(extra_src, np.int64)]
        dst_e = [idx] * K + [np.array(extra_dst, np.int64)]
        # a wave's next block starts once the previous one's data is visible, then does its scalar set-up
        lag_e = [lg[:, c] for c in range(K)] + [exposed_n[np.array(extra_src, np.int64)] + init
                                               if extra_src else np.zeros(0)]
        for k, (arr, dep_) in enumerate(zip(arrive, sync_depart)):
            g = n + k
            a_ = np.array(arr, np.int64)
            src_e += [a_, np.full(len(dep_), g, np.int64)]
            dst_e += [np.full(len(arr), g, np.int64), np.array(dep_, np.int64)]
            lag_e += [exposed_n[a_] if len(a_) else np.zeros(0), np.zeros(len(dep_))]
        src = np.concatenate(src_e)
        dst = np.concatenate(dst_e)
        lag = np.concatenate(lag_e)
        keep = src >= 0
        return src[keep], dst[keep], lag[keep], al, al_lag, merged_preds, merged_lags

    if slots and ncores > slots:
        notes.append(f"block_dim {ncores} > {slots} cores: blocks run in waves (block b after block b - "
                     f"{slots} on the same core)")
    active_cores = len(active)
    for k, deps in enumerate(sync_depart):
        if len(deps) != active_cores:
            raise ValueError(f"sync_all #{k} reached by {len(deps)} of {active_cores} cores (hangs on hardware)")

    def schedule(hit: np.ndarray, absorbed: np.ndarray) -> dict[str, Any]:
        """One schedule pass with the copies' memory fixed: L2 (hit, absorbed) or HBM."""
        in_l2 = np.where(c_write, absorbed, hit)
        occ, exposed = costs.times(c_pipe, c_bytes, ~in_l2)
        rate_c = c_bytes / np.maximum(occ, 1e-12) / c_slow
        pool_c = np.where(in_l2, L2, HBM)
        weight_c = np.where(~in_l2 & c_write, hbm_read / hbm_write, 1.0)
        src, dst, lag, al, al_lag, m_preds, m_lags = build(exposed)
        total_nodes = n + len(sync_arrive)
        zeros = np.zeros(len(sync_arrive))
        al_ = np.concatenate([al, np.full(len(sync_arrive), -1, np.int64)])
        d = np.concatenate([dur, zeros])
        nb = np.zeros(total_nodes)
        rate = np.ones(total_nodes)
        pool = np.zeros(total_nodes, np.int64)
        weight = np.ones(total_nodes)
        d[cidx] = c_fixed
        nb[cidx] = c_bytes
        rate[cidx] = rate_c
        pool[cidx] = pool_c
        weight[cidx] = weight_c
        early_ = np.concatenate([early, zeros + launch_us])
        caps = (hbm_read, l2_bw)
        # A pool whose copies at full rate cannot exceed its bandwidth never slows a copy: its copies are fixed-cost
        # nodes then (the same schedule, without the bandwidth simulation).
        for pl in (HBM, L2):
            in_pool = (nb[:n] > 0) & (pool[:n] == pl)
            peak = 0.0
            for pp in (ev.MTE2, ev.MTE3):  # per core its fastest copy on each pipe (both pipes may copy at once)
                sel = in_pool & (pipe == pp)
                if sel.any():
                    heads = np.r_[0, np.flatnonzero(np.diff(core_id[sel])) + 1]
                    peak += float(np.maximum.reduceat((rate[:n] * weight[:n])[sel], heads).sum())
            if in_pool.any() and peak <= caps[pl]:
                full = np.flatnonzero(in_pool)
                d[full] += nb[full] / rate[full]
                nb[full] = 0.0
        start, end = _schedule(total_nodes, src, dst, lag, d, nb, rate, early_, caps, pool, weight, skip=al_ != -1)
        m = al_ >= 0  # the sets taken out: zero-length, when the node they follow ends
        end[m] = end[al_[m]] + np.concatenate([al_lag, zeros])[m]
        start[m] = end[m]
        h = al_ == -2
        end[h] = start[h] = early_[h]
        w = np.flatnonzero(al_ == -3)  # the folded waits: zero-length, when their predecessors have ended
        if len(w):
            t = early_[w].copy()
            for k in range(3):
                q = m_preds[:, k]
                t = np.where(q >= 0, np.maximum(t, end[np.maximum(q, 0)] + m_lags[:, k]), t)
            start[w] = end[w] = t
        return {"start": start, "end": end, "exposed": exposed, "in_l2": in_l2, "pool": pool}

    # L2: which copies hit (reads) or stay (writes). The order of the copies matters only sometimes; then a first
    # pass with every copy in HBM gives their start times.
    no = np.zeros(len(cidx), bool)
    if l2_cap > 0 and len(cidx):
        static = _l2_static(c_keys, c_write, c_bypass, l2_cap, l2 == "warm")
        if static is not None:
            hit, absorbed = static
        else:
            order = np.argsort(schedule(no, no)["start"][cidx], kind="stable")
            hit, absorbed = classify_l2(c_keys, c_write, c_bypass, order, l2_cap, l2 == "warm")
    else:
        hit, absorbed = no, no
        if len(cidx):
            notes.append("no L2 figures for this SoC: every copy goes to HBM")
    res = schedule(hit, absorbed)
    start, end, exposed, in_l2 = res["start"], res["end"], res["exposed"], res["in_l2"]

    # Per core: busy time per pipe (a copy is busy from its start until its data is visible: the union of those
    # spans on its pipe, as msprof counts an MTE pipe with a copy in flight), its end, its byte-moving time.
    core_of = np.concatenate([core_id, np.full(len(sync_arrive), -1, np.int64)])
    pipe_of = np.concatenate([pipe, np.full(len(sync_arrive), ev.S, np.int64)])
    rec_of = np.concatenate([idx - first, np.zeros(len(sync_arrive), np.int64)])
    exposed_n = np.zeros(len(end))
    exposed_n[cidx] = exposed
    done = end + exposed_n                                 # completion (data visible for copies)
    busy = np.zeros((ncores, 4))
    real = core_of >= 0
    not_copy = real.copy()
    not_copy[cidx] = False
    np.add.at(busy, (core_of[not_copy], pipe_of[not_copy]), (end - start)[not_copy])
    stream = np.zeros((ncores, 4))
    if len(cidx):
        cs, cd = start[cidx], done[cidx]
        grp = core_id[cidx] * 4 + c_pipe              # copies of one core and pipe are contiguous, in pipe order
        reach = np.empty_like(cd)
        heads = np.r_[0, np.flatnonzero(np.diff(grp)) + 1]
        for a, b in zip(heads.tolist(), np.r_[heads[1:], len(grp)].tolist()):
            reach[a:b] = np.maximum.accumulate(cd[a:b])
        prev = np.r_[-_INF, reach[:-1]]
        prev[heads] = -_INF
        union = np.maximum(0.0, reach - np.maximum(cs, prev))
        np.add.at(busy, (core_id[cidx], c_pipe), union)
        np.add.at(stream, (core_id[cidx], c_pipe), end[cidx] - start[cidx] - c_fixed)
    busy[:, ev.S] += issue_busy + np.where(sizes > 0, init, 0.0)
    per_core = tuple({"MTE2": float(b[ev.MTE2]), "MTE3": float(b[ev.MTE3]), "V": float(b[ev.V]), "S": float(b[ev.S])}
                     for b in busy)
    core_end = np.full(ncores, -_INF)
    if n:
        np.maximum.at(core_end, core_id, done[:n])
    # A block begins at its core's skewed start (first wave) or when the block before it on that core ends.
    core_begin = launch_us + (np.arange(ncores) % slots if slots else np.arange(ncores)) * skew
    if slots and ncores > slots:
        for b in range(slots, ncores):
            core_begin[b] = max(core_begin[b], core_end[b - slots])
    core_us = tuple(float(max(0.0, e - b)) for e, b in zip(core_end, core_begin) if e > -_INF)
    last_end = max(launch_us, float(done.max())) if len(done) else launch_us
    total = last_end + tail_us
    busiest, most = "latency", 0.0
    for c in per_core:
        for pipe_name, us in c.items():
            if us > most:
                busiest, most = pipe_name, us
    bound = busiest if total > 0 and most >= BOUND_SHARE * total else "latency"
    share = float(stream.max()) / total if total > 0 and ncores else 0.0
    regime = "bandwidth" if share >= STREAM_SHARE else ("latency" if share < LATENCY_SHARE else "mixed")
    if conflicts:
        notes.append(f"{conflicts} vector instructions pay a UB bank-group conflict")
    from .bands import band_for
    band, band_note = band_for(soc_name, regime)
    hit_bytes = int(c_bytes[hit & ~c_write].sum()) if len(cidx) else 0
    abs_bytes = int(c_bytes[absorbed & c_write].sum()) if len(cidx) else 0
    factor_of = np.concatenate([factor, np.ones(len(sync_arrive))])
    read_bytes = roofline_bytes - roofline_written
    roofline_us = read_bytes / hbm_read + max(0.0, roofline_written - l2_cap) / hbm_write
    return Timing(total_us=total, per_core=per_core, bound=bound, roofline_us=roofline_us,
                  launch_us=launch_us, tail_us=tail_us, soc=soc_name,
                  notes=tuple(dict.fromkeys(notes + ([band_note] if band_note else []))),
                  roofline_bytes=roofline_bytes, events=log.counts(), core_us=core_us, regime=regime,
                  stream_share=share, band=band, band_note=band_note, l2=l2, l2_hit_bytes=hit_bytes,
                  l2_absorbed_bytes=abs_bytes, hbm_bytes=int(c_bytes.sum()) - hit_bytes - abs_bytes, core_init_us=init,
                  _spans=_Spans(log, core_of, rec_of, pipe_of, start, end, factor_of, exposed_n, res["pool"]))


def _schedule(n: int, src: np.ndarray, dst: np.ndarray, lag: np.ndarray, dur: np.ndarray, nbytes: np.ndarray,
              rate: np.ndarray, early: np.ndarray, caps: tuple[float, ...], pool: np.ndarray, weight: np.ndarray,
              skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of every node of the graph (edges src -> dst, dst starting >= end(src) + lag).

    Fixed nodes end at start + dur. A copy (nbytes > 0) moves its bytes after its fixed overhead dur, at
    rate x s_p(t) in its pool p, s_p(t) = min(1, caps[p] / sum of weight x rate in flight in p). The copies of a
    pool progress on one virtual clock V_p (dV_p/dt = s_p), so a copy ends when V_p has advanced by nbytes / rate
    since its bytes started moving. `skip`: nodes outside the graph (no edges; the caller sets their times)."""
    order = np.argsort(src, kind="stable")
    succ = dst[order].tolist()
    slag = lag[order].tolist()
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    ptr_l = ptr.tolist()
    indeg = np.bincount(dst, minlength=n).tolist()
    dur_l, bytes_l, rate_l = dur.tolist(), nbytes.tolist(), rate.tolist()
    pool_l, weight_l = pool.tolist(), weight.tolist()
    ready = early.tolist()   # the earliest start of each node (the core's start, scalar issue before the first S node)
    start = [0.0] * n
    end = [-1.0] * n
    pending: list[tuple[float, int]] = []   # (time its bytes start moving, node)
    npool = len(caps)
    flight: list[list[tuple[float, int]]] = [[] for _ in range(npool)]  # per pool: (virtual finish time, node)
    vclock = [0.0] * npool
    demand = [0.0] * npool
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
    t = float(early.min()) if n else 0.0
    while pending or any(flight):
        shares = [1.0 if demand[p] <= caps[p] else caps[p] / demand[p] for p in range(npool)]
        t_fin, p_fin = _INF, -1
        for p in range(npool):
            if flight[p]:
                tf = t + (flight[p][0][0] - vclock[p]) / shares[p]
                if tf < t_fin:
                    t_fin, p_fin = tf, p
        t_start = pending[0][0] if pending else _INF
        if t_start <= t_fin:
            for p in range(npool):
                vclock[p] += shares[p] * (t_start - t)
            t = t_start
            _, i = heapq.heappop(pending)
            p = pool_l[i]
            heapq.heappush(flight[p], (vclock[p] + bytes_l[i] / rate_l[i], i))
            demand[p] += rate_l[i] * weight_l[i]
        else:
            for p in range(npool):
                vclock[p] = flight[p][0][0] if p == p_fin else vclock[p] + shares[p] * (t_fin - t)
            t = t_fin
            _, i = heapq.heappop(flight[p_fin])
            demand[p_fin] = demand[p_fin] - rate_l[i] * weight_l[i] if flight[p_fin] else 0.0  # no drift when idle
            finish(i, t)
            release()
    end_a = np.array(end)
    if skip is not None:
        end_a[skip] = 0.0
    if (end_a < 0).any():
        stuck = int((end_a < 0).sum())
        raise ValueError(f"replay: {stuck} operations never became ready (a cycle of waits in the log)")
    return np.array(start), end_a
