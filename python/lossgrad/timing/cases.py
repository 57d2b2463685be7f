"""Published timings and how the twin reproduces each one: the rows of the calibration table (lossgrad.timing.
calibration, the only data any parameter is fitted on) and of the held-out table (lossgrad.timing.heldout, never
fitted on). docs/timing.md "Calibration" and "Held-out" show both.

A case is either a kernel the twin runs (one of calib_kernels/, written from the published example's description:
same shape, tiling, buffering, core count, cache hints) or a single copy (a one-core log with one DataCopy, the way
msKPP measured its per-size bandwidth tables). `published` holds every figure the source gives, in microseconds:

- "task": msprof Task Duration (launch, every core's execution, completion), compared with `Timing.total_us`;
- "aiv": msprof aiv_time (cycles on the vector cores / cores / clock), compared with the modelled core span;
- "span": a simulator's execution time of the kernel on the cores (no host launch), compared with the core span;
- "copy": one copy from issue to data visible (msKPP), compared with the modelled copy alone;
- "MTE2", "MTE3", "V", "S": msprof's per-pipe busy times (aiv_mte2_time, ...), averaged over the cores.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

KERNEL_DIR = Path(__file__).resolve().parent / "calib_kernels"

# Sources of the published figures (repository and path) and the parts they ran on.
ADK = "asc-devkit "
DC_README = ADK + "examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md"
ADD_README = ADK + "examples/01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance/README.md"
L2_README = ADK + "examples/02_simd_c_api/02_features/03_c_api/01_data_movement/00_set_l2_cache_mode/README.md"
A2_SOC = "Ascend910B1"        # the add README: Atlas A2 training series, 48 AIV cores, 1.85 GHz
A950_SOC = "Ascend950PR_9589"  # the devkit's 950 runs: 64 AIV cores (AIV_CORE_NUM = 64)
HALF = "float16"
F32 = "float32"

# The figure a case is judged by, in order of preference (the first the source publishes).
PRIMARY = ("task", "span", "copy")
PIPES = ("MTE2", "MTE3", "V", "S")


@dataclass(frozen=True)
class Case:
    name: str
    soc: str
    source: str                                   # repository and file of the published figures
    what: str
    published: dict[str, float]
    kernel: str = ""                              # file in calib_kernels/ ("" = a single-copy case)
    entry: str = ""
    block_dim: int = 1
    gm: tuple[tuple[tuple[int, ...], str], ...] = ()   # (shape, numpy dtype) of the GM arguments, in order
    tiling: tuple[int, ...] = ()                  # uint32 tiling struct passed after the GM arguments (empty: none)
    defines: tuple[tuple[str, Any], ...] = ()
    l2: str = "cold"                              # L2 state of the inputs at launch ("cold" | "warm")
    copy: tuple[str, int] = ("", 0)               # single-copy case: (pipe "MTE2" | "MTE3", bytes)
    fitted: tuple[str, ...] = field(default=())   # parameters this case's figures were fitted on (calibration only)

    @property
    def primary(self) -> str:
        return next(k for k in PRIMARY if k in self.published)

    @property
    def primary_us(self) -> float:
        return self.published[self.primary]

    @property
    def line(self) -> str:
        from ..socs import get_soc
        return get_soc(self.soc).line

    def args(self) -> list[Any]:
        out: list[Any] = [np.zeros(shape, np.dtype(dtype)) for shape, dtype in self.gm]
        if self.tiling:
            out.append(np.array(self.tiling, np.uint32))
        return out


def mskpp_copy_us(nbytes: int, gib_per_s: float) -> float:
    """msKPP's tables give GiB/s (csrc/prof_data/data_adapter.cpp divides by 1024^3) for one copy of `nbytes`."""
    return nbytes / (gib_per_s * 2 ** 30) * 1e6


def run(case: Case, params: Any = None) -> Any:
    """The case's modelled Timing (params: a TimeParams, or None for the SoC's calibrated ones)."""
    from .params import params_for
    p = params if params is not None else params_for(case.soc)
    if not case.kernel:
        from .micro import single_copy
        pipe, nbytes = case.copy
        return single_copy(case.soc, pipe, nbytes, p, l2=case.l2)
    from ..twin import run_kernel
    rep = run_kernel(KERNEL_DIR / case.kernel, case.entry, case.block_dim, case.args(), soc=case.soc,
                     defines=dict(case.defines), timing=p, l2=case.l2)
    return rep.timing


def modelled(case: Case, timing: Any) -> dict[str, float]:
    """The modelled counterpart of every published figure of `case` (same keys, microseconds)."""
    out: dict[str, float] = {}
    for key in case.published:
        if key == "task":
            out[key] = timing.total_us
        elif key == "aiv":
            out[key] = timing.aiv_us
        elif key in ("span", "copy"):
            out[key] = timing.span_us
        elif key in PIPES:
            out[key] = float(np.mean([c[key] for c in timing.per_core[:case.block_dim]]))
    return out


def errors(case: Case, timing: Any) -> dict[str, float]:
    """modelled / published - 1 for every published figure of `case`."""
    m = modelled(case, timing)
    return {k: m[k] / v - 1 for k, v in case.published.items() if v > 0}
