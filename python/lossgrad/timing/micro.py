"""Single operations timed alone, as msKPP measured its tables: one copy on one core, issue to data visible."""
from __future__ import annotations

from .events import MTE2, MTE3, LogBuilder, make_log
from .model import TimeParams
from .replay import Timing, replay


def single_copy(soc: str, pipe: str, nbytes: int, params: TimeParams, *, l2: str = "warm") -> Timing:
    """The Timing of one core doing one copy of `nbytes` on `pipe` ("MTE2" | "MTE3") and waiting for its data;
    launch, core set-up and scalar issue are left out, so `span_us` is the copy alone. `l2="warm"`: the data are
    in L2 (msKPP's tables are its L2-hit figures)."""
    b = LogBuilder()
    if pipe == "MTE2":
        b.copy_in(nbytes)
        b.set(MTE2, 1)
        b.wait(MTE3, 1)
    elif pipe == "MTE3":
        b.copy_out(nbytes)
        b.set(MTE3, 1)
        b.wait(MTE2, 1)
    else:
        raise ValueError(f"pipe must be MTE2 or MTE3, got {pipe!r}")
    p = params.with_values(launch_us=0.0, tail_us=0.0, core_skew_us=0.0, core_init_cycles=0.0,
                           scalar_issue_cycles=0.0, flag_cycles=0.0)
    return replay(make_log([b]), p, soc=soc, l2=l2)
