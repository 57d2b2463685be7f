"""The twin's event log: per core, in program order, one 40-byte record per pipe operation.

The layout mirrors `twin::TimeRecord` (python/lossgrad/twin/include/twin/core.h). `LogBuilder` writes the same
records by hand, for the scheduler's tests and for anyone who wants to time a synthetic program.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

RECORD = np.dtype([("kind", "u1"), ("pipe", "u1"), ("dtype", "u1"), ("flags", "u1"), ("api", "<u2"),
                   ("gm_buf", "<i2"), ("a", "<u4"), ("b", "<u4"), ("c", "<u4"), ("d", "<u4"), ("x", "<u8"),
                   ("y", "<u8")])
assert RECORD.itemsize == 40

# Record kinds (twin::TimeKind) and what their fields mean.
COPY = 1         # pipe MTE2/MTE3: a = UB addr, b = bursts, c = longest burst bytes, gm_buf, x = GM bytes, y = GM offset
                 #   of the first burst, d = bursts whose GM offset is not 32-byte aligned (bits 0-15) and not
                 #   128-byte aligned (bits 16-31), flags = the GlobalTensor's AscendC::CacheMode (0 = DISABLE:
                 #   past L2; 1 = NORMAL, the default)
VEC = 2          # pipe V: a = dst, b = src0, c = src1 UB addr (NO_ADDR: none), d = repeats, dtype, x = elements,
                 #   y = V sequence number (1-based count of VEC records) of the vector op it depends on, 0 = none,
                 #   gm_buf = chunks of a high-level API's instruction sequence (model.COMPOSITE), -1 = one instruction
SCALAR = 3       # pipe S: a = UB scalar accesses, b = GM scalar reads, c = GM scalar writes
SET = 4          # pipe signals token x (a = HardEvent number, NO_ADDR for a queue's internal signal)
WAIT = 5         # pipe waits for token x
BARRIER = 6      # PipeBarrier<pipe>
BARRIER_ALL = 7  # PipeBarrier<PIPE_ALL>
SYNC_ALL = 8     # cross-core barrier
KIND_NAMES = {COPY: "copy", VEC: "vec", SCALAR: "scalar", SET: "set", WAIT: "wait", BARRIER: "barrier",
              BARRIER_ALL: "barrier_all", SYNC_ALL: "sync_all"}

PIPES = ("S", "V", "MTE2", "MTE3")
S, V, MTE2, MTE3 = range(4)
DTYPES = ("?", "half", "float", "bfloat16_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
          "int64_t", "uint64_t", "bool", "double")
NO_ADDR = 0xFFFFFFFF
CACHE_DISABLE, CACHE_NORMAL = 0, 1   # AscendC::CacheMode values a copy record carries in `flags`


@dataclass(frozen=True)
class EventLog:
    """One launch's log: `cores[i]` is core i's records (a RECORD array), `api_names[r["api"]]` a record's API."""

    cores: tuple[np.ndarray, ...]
    api_names: tuple[str, ...] = ("?",)

    def counts(self) -> dict[str, int]:
        """Records per kind over all cores, plus "records" and "bytes" (the log's size)."""
        out = {name: 0 for name in KIND_NAMES.values()}
        for log in self.cores:
            kinds, n = np.unique(log["kind"], return_counts=True)
            for k, c in zip(kinds.tolist(), n.tolist()):
                out[KIND_NAMES.get(k, f"kind{k}")] = out.get(KIND_NAMES.get(k, f"kind{k}"), 0) + c
        out["records"] = sum(len(log) for log in self.cores)
        out["bytes"] = out["records"] * RECORD.itemsize
        return out

    def api(self, record: np.void) -> str:
        i = int(record["api"])
        return self.api_names[i] if i < len(self.api_names) else "?"


class LogBuilder:
    """Writes one core's log by hand (program order = call order). Tokens pair a `set` with its `wait`."""

    def __init__(self, api_names: Sequence[str] = ("?",)) -> None:
        self._rows: list[tuple] = []
        self.api_names = list(api_names)
        self._vseq = 0

    def _api(self, name: str) -> int:
        if name not in self.api_names:
            self.api_names.append(name)
        return self.api_names.index(name)

    def _row(self, kind: int, pipe: int, *, dtype: int = 0, api: str = "?", gm_buf: int = -1, a: int = NO_ADDR,
             b: int = NO_ADDR, c: int = NO_ADDR, d: int = 0, x: int = 0, y: int = 0, flags: int = 0) -> None:
        self._rows.append((kind, pipe, dtype, flags, self._api(api), gm_buf, a, b, c, d, x, y))

    def _copy(self, pipe: int, nbytes: int, ub: int, gm_off: int, bursts: int, gm_buf: int, api: str,
              pitch: int | None, cache: int) -> None:
        """Bursts of nbytes / bursts bytes, `pitch` bytes apart in GM (default: back to back)."""
        n = max(1, bursts)
        step = nbytes // n if pitch is None else pitch
        offs = [gm_off + k * step for k in range(n)]
        mis = sum(o % 32 != 0 for o in offs) | sum(o % 128 != 0 for o in offs) << 16
        self._row(COPY, pipe, api=api, gm_buf=gm_buf, a=ub, b=n, c=nbytes // n, d=mis, x=nbytes, y=gm_off,
                  flags=cache)

    def copy_in(self, nbytes: int, *, ub: int = 0, gm_off: int = 0, bursts: int = 1, gm_buf: int = 0,
                api: str = "DataCopy", pitch: int | None = None, cache: int = CACHE_NORMAL) -> None:
        self._copy(MTE2, nbytes, ub, gm_off, bursts, gm_buf, api, pitch, cache)

    def copy_out(self, nbytes: int, *, ub: int = 0, gm_off: int = 0, bursts: int = 1, gm_buf: int = 1,
                 api: str = "DataCopy", pitch: int | None = None, cache: int = CACHE_NORMAL) -> None:
        self._copy(MTE3, nbytes, ub, gm_off, bursts, gm_buf, api, pitch, cache)

    def vec(self, api: str, repeats: int, *, dtype: str = "float", dst: int = NO_ADDR, src0: int = NO_ADDR,
            src1: int = NO_ADDR, dep: int = 0, elements: int | None = None, chunks: int = -1) -> int:
        """A vector instruction; returns its V sequence number (what a later `dep=` names)."""
        self._vseq += 1
        size = 2 if dtype in ("half", "bfloat16_t", "int16_t", "uint16_t") else 4
        n = repeats * 256 // size if elements is None else elements
        self._row(VEC, V, dtype=DTYPES.index(dtype), api=api, a=dst, b=src0, c=src1, d=repeats, x=n, y=dep,
                  gm_buf=chunks)
        return self._vseq

    def scalar(self, ub: int = 0, gm_reads: int = 0, gm_writes: int = 0) -> None:
        self._row(SCALAR, S, a=ub, b=gm_reads, c=gm_writes)

    def set(self, pipe: int, token: int, api: str = "SetFlag") -> None:
        self._row(SET, pipe, api=api, x=token)

    def wait(self, pipe: int, token: int, api: str = "WaitFlag") -> None:
        self._row(WAIT, pipe, api=api, x=token)

    def barrier(self, pipe: int) -> None:
        self._row(BARRIER, pipe, api="PipeBarrier")

    def barrier_all(self) -> None:
        self._row(BARRIER_ALL, S, api="PipeBarrier")

    def sync_all(self) -> None:
        self._row(SYNC_ALL, S, api="SyncAll")

    def array(self) -> np.ndarray:
        return np.array(self._rows, dtype=RECORD)


def make_log(builders: Sequence[LogBuilder]) -> EventLog:
    """An EventLog of several hand-written cores (their API names merged)."""
    names: list[str] = ["?"]
    cores = []
    for b in builders:
        arr = b.array()
        remap = np.array([names.index(n) if n in names else (names.append(n) or len(names) - 1)
                          for n in b.api_names], dtype=np.uint16)
        if len(arr):
            arr["api"] = remap[arr["api"]]
        cores.append(arr)
    return EventLog(tuple(cores), tuple(names))
