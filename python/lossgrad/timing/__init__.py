"""The pipe-level time model: the twin's event log (events), its replay on four in-order pipes per core with a
shared GM bandwidth (replay), the per-SoC cost parameters (model: schema, params: values) and Chrome traces.
See docs/timing.md.

    report = lossgrad.twin.run_kernel(..., timing=True)
    report.timing.total_us, report.timing.bound, report.timing.trace()
"""
from __future__ import annotations

from .events import EventLog, LogBuilder, make_log
from .model import VEC_CLASSES, TimeParams, vec_class
from .replay import BOUND_SHARE, Timing, replay
from .trace import write_trace

__all__ = ["TimeParams", "VEC_CLASSES", "vec_class", "Timing", "replay", "EventLog", "LogBuilder", "make_log",
           "BOUND_SHARE", "write_trace"]
