"""`lossgrad.profile`: run one call of an op on the twin and show what it did (counters) and how long it would take
on the part (the twin's time model, docs/timing.md).

    p = lossgrad.profile("mse", grad, self, target, "mean", soc="Ascend910B1")
    p.output, p.block_dim, p.tiling, p.counters, p.timing.total_us, p.timing.bound, p.timing.band_us
    print(p.describe())     # modelled time with its regime's error band, % of roofline, per-pipe busy times

The counters are the twin's exact per-core counts, summed over the launch (docs/twin.md); `tiles_per_core` is the
mean over the cores that ran. Invalid calls raise `LossGradError` exactly as the op functions do.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .errors import invalid_error
from .registry import get_op
from .runners import no_launch_result
from .socs import Soc
from .validation import Call, split_args, validate

__all__ = ["Profile", "profile", "counters_of", "pct_roofline"]


@dataclass(frozen=True)
class Profile:
    op: str
    soc: str
    output: np.ndarray
    block_dim: int                     # cores launched (0: aclnn returns before launching)
    tiling: Mapping[str, Any]          # LossGradTilingData's fields, plus block_dim, tiling_key, operand_modes (each
                                       # read input's mode by name: stream/row/col/scalar), ub_bytes, ub_budget and
                                       # workspace_bytes
    counters: Mapping[str, Any]
    timing: Any = None                 # lossgrad.timing.Timing, or None (timing=False, or no launch)
    call: Call | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "soc": self.soc, "block_dim": self.block_dim, "tiling": dict(self.tiling),
                "counters": dict(self.counters),
                "timing": None if self.timing is None else self.timing.as_dict()}

    def describe(self) -> str:
        """The modelled time beside its error band and % of roofline, and msprof's per-pipe view (docs/timing.md)."""
        head = f"{self.op} on {self.soc}, {self.block_dim} cores"
        t = self.timing
        if t is None:
            return head + ": no modelled time (timing off, or a call that launches nothing)"
        lo, hi = t.band_us
        lines = [head + f": modelled {t.total_us:.1f} us (band {lo:.1f}-{hi:.1f} us, {t.regime} regime; "
                 f"bound {t.bound}), L2 {t.l2}"]
        if t.roofline_us > 0:
            lines.append(f"  % of roofline {pct_roofline(t.roofline_us, t.total_us):.0f} "
                         f"(band {pct_roofline(t.roofline_us, hi):.0f}-{pct_roofline(t.roofline_us, lo):.0f})")
        m = t.msprof()
        lines.append("  msprof view (mean over cores, us): " + ", ".join(
            f"{k[:-3]} {v:.2f}" for k, v in m.items() if k != "task_duration_us"))
        lines += [f"  note: {n}" for n in t.notes]
        return "\n".join(lines)


def pct_roofline(roofline_us: float, time_us: float) -> float:
    """The call's memory roofline as a percentage of a time."""
    return 100.0 * roofline_us / time_us if time_us > 0 else 0.0


def counters_of(report: Any) -> dict[str, Any]:
    """The launch's counters from a twin Report (summed over cores)."""
    return _counters(report.cores, report.api_totals())


def _counters(cores: Any, api: Any) -> dict[str, Any]:
    """The counters of these cores (none: a call that launches nothing) and their per-API totals."""
    ran = [c for c in cores if c.tiles or c.gm_read_bytes or c.gm_write_bytes]
    return {
        "gm_bytes_read": sum(c.gm_read_bytes for c in cores),
        "gm_bytes_written": sum(c.gm_write_bytes for c in cores),
        "vec_repeats": sum(c.vec_repeats for c in cores),
        "vec_elements": sum(c.vec_elements for c in cores),
        "vec_calls": sum(a.calls for a in api.values()),
        "dma_calls": sum(c.data_copy_calls + c.data_copy_pad_calls for c in cores),
        "scalar_gm_accesses": sum(c.scalar_gm_reads + c.scalar_gm_writes for c in cores),
        "tiles_per_core": (sum(c.tiles for c in ran) / len(ran)) if ran else 0.0,
        "cores_used": len(ran),
        "ub_peak": max((c.ub_peak_bytes for c in cores), default=0),
        "event_ids_peak": max((n for c in cores for n in c.event_ids_peak.values()), default=0),
        "api": {name: {"calls": a.calls, "repeats": a.repeats, "elements": a.elements} for name, a in api.items()},
    }


def profile(op: Any, *args: Any, soc: "str | Soc | None" = None, out_dtype: Any = None, timing: bool = True,
            auto_sync: bool | None = None, l2: str = "cold", **attrs: Any) -> Profile:
    """Run `op` (any of its names) on the twin for `soc` and return its output, tiling, counters and modelled time.

    `args`, in aclnn's order: the op's tensors (grad_output, self, target, then an optional one, None when absent)
    and the reduction (default "mean").
    `attrs` are the op's attributes by name (`beta=` for SmoothL1, `log_target=` for KL). `auto_sync` None takes the
    LOSSGRAD_TWIN_AUTO_SYNC setting, as every twin run does. `l2`: the inputs' L2 state for the time model, "cold"
    (a first call, the default) or "warm" (the same call ran just before, its data still in L2). Every argument is
    checked before anything is compiled or allocated (a call whose memory cannot be had raises
    lossgrad.errors.OutputTooLarge)."""
    try:
        spec = get_op(op)
    except KeyError as exc:
        raise invalid_error(str(exc.args[0])) from None
    if not isinstance(timing, bool):
        raise invalid_error(f"timing: expected True or False, got {timing!r}")
    if auto_sync is not None and not isinstance(auto_sync, (bool, np.bool_)):  # before anything is compiled
        raise invalid_error(f"auto_sync: expected True, False or None, got {type(auto_sync).__name__} "
                            f"{auto_sync!r:.40}")
    if l2 not in ("cold", "warm"):
        raise invalid_error(f"l2: expected 'cold' or 'warm', got {l2!r}")
    tensors, reduction, extra = split_args(spec, args)
    if extra is not None:
        raise invalid_error("attributes: pass them by name (beta=..., log_target=...)")
    call = validate(spec, *tensors.values(), reduction, attrs or None, out_dtype=out_dtype, soc=soc)
    from .memory import require as require_memory
    require_memory(call)
    if not call.launch:
        return Profile(op=spec.name, soc=call.soc.name, output=no_launch_result(call), block_dim=0, tiling={},
                       counters=_counters((), {}), timing=None, call=call)
    from .runners.twin import run_twin
    run = run_twin(call, auto_sync=auto_sync, timing=timing, l2=l2)
    tiling = dict(run.plan.fields)  # the struct's own fields, `modes` (2 bits per input) among them, untouched
    tiling.update(block_dim=run.plan.block_dim, tiling_key=run.plan.tiling_key, operand_modes=dict(run.plan.modes),
                  ub_bytes=run.plan.ub_bytes, ub_budget=run.plan.ub_budget, workspace_bytes=run.plan.workspace_bytes)
    return Profile(op=spec.name, soc=call.soc.name, output=run.output, block_dim=run.report.block_dim, tiling=tiling,
                   counters=counters_of(run.report), timing=run.report.timing if timing else None, call=call)
