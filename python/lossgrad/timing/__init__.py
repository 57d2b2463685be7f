"""The pipe-level time model: the twin's event log (events), its replay on four in-order pipes per core with a
shared GM bandwidth (replay), the per-SoC cost parameters (model: schema, params: values) and Chrome traces.
See docs/timing.md."""
from __future__ import annotations

from .model import VEC_CLASSES, TimeParams, vec_class

__all__ = ["TimeParams", "VEC_CLASSES", "vec_class"]
