"""The pipe-level time model: the twin's event log (events), its replay on four in-order pipes per core with copy
latencies, an L2 and the chip's HBM and L2 bandwidths (replay), the per-SoC cost parameters (model: schema, params:
values, fit: how they were fitted on the calibration table), the held-out table that judges them (heldout, validate)
and the error band every Timing carries (bands), and Chrome traces. See docs/timing.md.

    report = lossgrad.twin.run_kernel(..., timing=True)            # or timing=<TimeParams>, l2="warm"
    report.timing.total_us, report.timing.band_us, report.timing.regime, report.timing.trace()
"""
from __future__ import annotations

from .events import EventLog, LogBuilder, make_log
from .model import VEC_CLASSES, TimeParams, vec_class
from .replay import BOUND_SHARE, L2_STATES, REGIMES, Timing, replay
from .trace import write_trace

__all__ = ["TimeParams", "VEC_CLASSES", "vec_class", "Timing", "replay", "EventLog", "LogBuilder", "make_log",
           "BOUND_SHARE", "L2_STATES", "REGIMES", "write_trace"]
