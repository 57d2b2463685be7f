"""Chrome trace files (Perfetto, chrome://tracing) of one or more modelled launches."""
from __future__ import annotations

import json
import os
from typing import Any, Sequence

from .replay import Timing


def trace_document(timings: Sequence[tuple[str, Timing]]) -> dict[str, Any]:
    """One JSON trace of several launches laid end to end: each launch's cores become processes named
    "<label> core N" (pid = running index), its pipes threads; `ts` is shifted by the launches before it."""
    events: list[dict[str, Any]] = []
    shift = 0.0
    pid_base = 0
    for label, t in timings:
        cores = len(t.per_core)
        for e in t.trace():
            e = dict(e)
            e["ts"] = e["ts"] + shift
            e["pid"] = pid_base + e["pid"]
            events.append(e)
        for c in range(cores):
            events.append({"name": "process_name", "ph": "M", "pid": pid_base + c,
                           "args": {"name": f"{label} core {c}"}})
        shift += t.total_us
        pid_base += cores
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def write_trace(path: "str | os.PathLike[str]", timings: Sequence[tuple[str, Timing]]) -> None:
    with open(path, "w") as f:
        json.dump(trace_document(timings), f)
