"""`lossgrad bench` on the twin: counters and modelled time, ours beside aclnn's composition.

For each case (op, shapes, dtypes) and SoC the twin runs our kernel with the time model on (docs/timing.md) and
reports GM bytes, vector instructions (256-byte repeats), API calls and DMA instructions per element, tiles per core,
the modelled microseconds with their error band (the held-out errors of the launch's regime, lossgrad.timing.bands),
the pipe that bounds the launch and the percentage of the call's memory roofline (the HBM time of the call's minimum
GM bytes: reads at the HBM read bandwidth, writes beyond what L2 holds at the write bandwidth; divided by the
modelled time), with the same band.

Beside it stands the aclnn composition that ops-nn documents for the op (ops_semantics §1.3, §2.3, §3.3, §4.3, §7):
BroadcastTo passes for inputs whose shape differs from the broadcast shape, Cast passes to the computation dtype, the
kernel on those materialised inputs, then for KL a ReduceSum back to self's shape, and a Cast of the result to out's
dtype. Each step is a separate launch and pays a launch's head and tail. The kernel step is our kernel run on the
materialised inputs, timed by the twin; the other passes are streaming kernels (every core copies its share in,
converts or not, and copies it out, double buffered) whose event logs are built here and replayed by the same
scheduler with the same SoC parameters (lossgrad.timing.passes). Device timings are `--backend npu|sim`
(lossgrad.cann.bench).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from . import dtypes as dt
from .dtypes import DType
from .golden import aclnn_kernel_dtype
from .profile import Profile, profile
from .progress import muted
from .registry import OPS, OpSpec, Promotion, get_op, runs_on
from .socs import DEFAULT_SOC, get_soc
from .tiling import ub_plan
from .validation import Call, shapes_accepted, validate

DEFAULT_ELEMENTS = 16 * 1024 * 1024
ROW_ELEMENTS = 4096              # the broadcast scenarios' row length
MIN_ELEMENTS = ROW_ELEMENTS      # fewer leaves the broadcast scenarios without a row

Shapes = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]

# The stress shapes of the kernel-performance issue: broadcast paths whose work per element a reviewer checks against
# the same call without broadcast (`lossgrad bench --scenarios stress`).
STRESS: tuple[tuple[OpSpec, str, Shapes], ...] = (
    (get_op("kl_div"), "KL sum over leading dims", ((4096, 1024), (1, 1024), (4096, 1024))),
    (get_op("kl_div"), "KL sum to one element", ((1000, 1000), (1,), (1000, 1000))),
    (get_op("kl_div"), "KL sum to 4 elements", ((4, 250, 1000), (4, 1, 1), (4, 250, 1000))),
    (get_op("mse"), "short row runs", ((4000, 3, 16), (4000, 3, 16), (4000, 1, 16))),
    (get_op("mse"), "rows of 40 (row-broadcast)", ((2000, 40), (2000, 40), (40,))),
    (get_op("mse"), "ragged rows of 33", ((2000, 33), (2000, 33), (33,))),
    (get_op("l1"), "same shapes (256,4096)", ((256, 4096), (256, 4096), (256, 4096))),
    (get_op("smooth_l1"), "same shapes (256,4096)", ((256, 4096), (256, 4096), (256, 4096))),
)

# The training shapes of the kernel-balance issue (28): each op and dtype, same shapes beside a row-broadcast target
# and a scalar gradOutput (`lossgrad bench --scenarios training`), judged by TRAINING_ROOF_RATIO.
TRAINING_SHAPES: tuple[tuple[int, ...], ...] = ((8192, 4096), (32, 1024, 1024))
TRAINING_PATTERNS = ("same shapes", "target row-broadcast", "grad scalar")  # the first: each shape's reference
# Modelled time at most this multiple of the roofline: Atlas 910 (1001) is looser, its vector costs being A2's
# (docs/timing.md) and its bodies taking signs and clamps without compares.
TRAINING_ROOF_RATIO = {1001: 1.5}
DEFAULT_ROOF_RATIO = 1.2


@dataclass(frozen=True)
class Measure:
    """One side of a row: counters over the launch(es) and the modelled time."""

    gm_bytes: int
    vec_repeats: int
    vec_calls: int
    dma_calls: int
    tiles_per_core: float
    block_dim: int
    launches: int = 1
    passes: tuple[str, ...] = field(default_factory=tuple)
    event_ids_peak: int = 0            # most queue/sync event IDs of one type held at once on a core (twin)
    time_us: float | None = None       # modelled (None: timing off)
    band_us: tuple[float, float] | None = None  # where the held-out cases of the launch's regime put the true time
    regime: str | None = None          # the longest launch's regime ("latency" | "mixed" | "bandwidth")
    bound: str | None = None           # the bounding pipe of the longest launch, or "latency"
    timing: Any = field(default=None, repr=False, compare=False)  # our launch's Timing (for --trace)


@dataclass(frozen=True)
class Row:
    op: str
    scenario: str
    soc: str
    shapes: Shapes
    dtypes: tuple[str, str, str]
    elements: int                      # broadcast (iteration) elements
    roofline_us: float | None          # the HBM time of the call's minimum GM bytes (Timing.roofline_us)
    ours: Measure
    aclnn: Measure | None              # None: aclnn's composition not modelled (--no-aclnn)

    def pct_roofline(self, m: Measure) -> float | None:
        if m.time_us is None or not self.roofline_us:
            return None
        return 100.0 * self.roofline_us / m.time_us

    def pct_roofline_band(self, m: Measure) -> list[float] | None:
        """% of roofline at the two ends of the time's band (low % at the slow end)."""
        if m.band_us is None or not self.roofline_us:
            return None
        return [100.0 * self.roofline_us / m.band_us[1], 100.0 * self.roofline_us / m.band_us[0]]

    def as_dict(self) -> dict[str, Any]:
        n = self.elements

        def side(m: Measure) -> dict[str, Any]:
            return {"gm_bytes_per_elem": m.gm_bytes / n, "vec_instr_per_elem": m.vec_repeats / n,
                    "api_calls_per_elem": m.vec_calls / n, "dma_per_elem": m.dma_calls / n,
                    "tiles_per_core": m.tiles_per_core, "block_dim": m.block_dim, "launches": m.launches,
                    "event_ids_peak": m.event_ids_peak, "passes": list(m.passes),
                    "modelled_us": m.time_us, "band_us": None if m.band_us is None else list(m.band_us),
                    "regime": m.regime, "bound": m.bound, "pct_roofline": self.pct_roofline(m),
                    "pct_roofline_band": self.pct_roofline_band(m)}

        a = self.aclnn
        return {"op": self.op, "scenario": self.scenario, "soc": self.soc, "shapes": [list(s) for s in self.shapes],
                "dtypes": list(self.dtypes), "elements": n, "roofline_us": self.roofline_us,
                "ours": side(self.ours), "aclnn_composition": None if a is None else side(a),
                "traffic_ratio": a.gm_bytes / self.ours.gm_bytes if a is not None and self.ours.gm_bytes else None,
                "speedup": (a.time_us / self.ours.time_us
                            if a is not None and self.ours.time_us and a.time_us else None)}


def scenarios(op: OpSpec, n: int) -> dict[str, Shapes]:
    """Input shapes (grad, self, target) with n output (KL: iteration) elements."""
    if n < MIN_ELEMENTS:
        raise ValueError(f"the bench scenarios need at least {MIN_ELEMENTS} elements, got {n}")
    cols = ROW_ELEMENTS
    rows = n // cols
    out = {
        "same shapes": ((n,), (n,), (n,)),
        "target row-broadcast": ((rows, cols), (rows, cols), (cols,)),
        "grad column-broadcast": ((rows, 1), (rows, cols), (rows, cols)),
    }
    if op.reduced_onto == "self":
        out["self broadcast (KL sums back)"] = ((rows, cols), (rows, 1), (rows, cols))
    elif op.reduced_onto == "target":
        out["target broadcast (sums back)"] = ((rows, cols), (rows, cols), (rows, 1))
    return {k: v for k, v in out.items() if shapes_accepted(op, *v)}  # BCEWithLogits: target must be self's shape


def training_scenarios(op: OpSpec) -> dict[str, Shapes]:
    """The training shapes, each as same shapes, a row-broadcast target and a scalar gradOutput (grad, self, target),
    where aclnn accepts them."""
    out: dict[str, Shapes] = {}
    for s in TRAINING_SHAPES:
        in_pattern_order: tuple[Shapes, ...] = ((s, s, s), (s, s, s[-1:]), ((), s, s))
        for pattern, shapes in zip(TRAINING_PATTERNS, in_pattern_order):
            out[f"{training_shape_name(s)} {pattern}"] = shapes
    return {k: v for k, v in out.items() if shapes_accepted(op, *v)}


def training_shape_name(shape: tuple[int, ...]) -> str:
    """How a training shape leads its scenarios' names ("8192x4096 grad scalar")."""
    return "x".join(map(str, shape))


def split_training_scenario(scenario: str) -> tuple[str, str]:
    """(shape name, pattern) of a training scenario's name."""
    shape, pattern = scenario.split(" ", 1)
    return shape, pattern


def roof_ratio(soc: str) -> float:
    """The most modelled time the training scenarios may take, as a multiple of the call's roofline."""
    return TRAINING_ROOF_RATIO.get(get_soc(soc).arch.npu_arch, DEFAULT_ROOF_RATIO)


def _measure(p: Profile, passes: tuple[str, ...] = ("kernel",)) -> Measure:
    c = p.counters
    t = p.timing
    return Measure(gm_bytes=c["gm_bytes_read"] + c["gm_bytes_written"], vec_repeats=c["vec_repeats"],
                   vec_calls=c["vec_calls"], dma_calls=c["dma_calls"], tiles_per_core=c["tiles_per_core"],
                   block_dim=p.block_dim, passes=passes, event_ids_peak=c["event_ids_peak"],
                   time_us=None if t is None else t.total_us, band_us=None if t is None else t.band_us,
                   regime=None if t is None else t.regime, bound=None if t is None else t.bound, timing=t)


def buffering_note(soc: str, ops: list[str] | None = None) -> str:
    """Which queues of the buffer plan are double buffered on this SoC, and its event-ID pool (ub_plan)."""
    arch = get_soc(soc).arch.npu_arch
    single = sorted({f"{name}:{b.name}" for name in ops or list(OPS) for gs in (False, True)
                     for b in ub_plan.buffers(OPS[name], gs, arch) if b.kind in ("in", "out") and b.count < 2})
    held = max(n for name in ops or list(OPS) for gs in (False, True)
               for n in ub_plan.held_event_ids(OPS[name], gs, arch).values())
    buffering = ("every input and the output double buffered (one input queue)" if not single
                 else "NOT double buffered: " + ", ".join(single))
    return f"buffers: {buffering}; event IDs held <= {held} per type of {ub_plan.event_budget(arch)}"


def aclnn_composition(call: Call, timing: bool = True) -> Measure:
    """aclnn's passes for this call: counters summed over them, modelled time summed over their launches."""
    from .timing.passes import stream_pass

    op = call.op
    soc = call.soc
    full = tuple(call.iter_shape)
    nfull = math.prod(full)
    cdt = aclnn_kernel_dtype(call)  # the dtype aclnn's op_api casts the inputs to
    arrays = dict(call.inputs)
    gm, repeats, calls, dmas, launches, passes = 0, 0, 0, 0, 0, []
    time_us: float | None = 0.0 if timing else None
    band = [0.0, 0.0]                  # the launches' bands add up (each launch's own regime)
    slowest: tuple[float, str | None, str | None] = (-1.0, None, None)

    def add_pass(name: str, in_bytes: int, out_bytes: int, vec_repeats: int) -> None:
        nonlocal gm, repeats, calls, dmas, launches, time_us, slowest
        p = stream_pass(soc, in_bytes, out_bytes, vec_repeats, timing=timing)
        gm += in_bytes + out_bytes
        repeats += vec_repeats
        calls += p.vec_calls
        dmas += p.dma_calls
        launches += 1
        passes.append(name)
        if timing:
            assert time_us is not None and p.timing is not None
            time_us += p.timing.total_us
            band[0] += p.timing.band_us[0]
            band[1] += p.timing.band_us[1]
            if p.timing.total_us > slowest[0]:
                slowest = (p.timing.total_us, p.timing.bound, p.timing.regime)

    materialised: dict[str, np.ndarray] = {}
    for i in op.inputs:
        if i.aclnn_fills and i.role not in arrays:  # the op_api's OnesLike(self): one Duplicate pass writing it
            shape, n = tuple(call.self_.shape), call.self_.size
            add_pass(f"OnesLike({i.role} {shape})", 0, n * cdt.itemsize, math.ceil(n * cdt.itemsize / 256))
            materialised[i.role] = np.ones(shape, cdt.np_dtype)
    for role, arr in arrays.items():
        shape = tuple(arr.shape)
        if role in op.aclnn_broadcasts and shape != full:
            add_pass(f"BroadcastTo({role} {shape}->{full})", arr.nbytes, nfull * arr.itemsize, 0)
            shape = full
        n = math.prod(shape)
        if dt.from_numpy(arr.dtype) != cdt:
            add_pass(f"Cast({role} {arr.dtype}->{cdt.label})", n * arr.itemsize, n * cdt.itemsize,
                     math.ceil(n * max(arr.itemsize, cdt.itemsize) / 256))
        materialised[role] = np.broadcast_to(arr.astype(cdt.np_dtype), shape).copy()
    k: Measure | None = None  # the kernel step, where aclnn has one
    if soc.arch.npu_arch in op.aclnn_l0_archs:  # no kernel: a chain of l0 launches (KlDivTarget on A2/A3)
        kout = _l0_chain(call, materialised, cdt, add_pass)
    else:
        kprof = profile(op, *(materialised.get(i.role) for i in op.inputs), call.reduction,  # aclnn's order
                        soc=soc, out_dtype=cdt, timing=timing, **_kernel_attrs(call))
        k = _measure(kprof)
        gm += k.gm_bytes
        repeats += k.vec_repeats
        calls += k.vec_calls
        dmas += k.dma_calls
        launches += 1
        passes.append("kernel")
        if timing:
            assert time_us is not None and k.time_us is not None
            time_us += k.time_us
            assert k.band_us is not None
            band[0] += k.band_us[0]
            band[1] += k.band_us[1]
            if k.time_us > slowest[0]:
                slowest = (k.time_us, k.bound, k.regime)
        kout = tuple(kprof.output.shape)
    out_n = math.prod(call.out_shape)
    if kout != tuple(call.out_shape):  # ReduceSum back to the output's shape (KL: self's, KlDivTarget: target's)
        kn = math.prod(kout)
        add_pass("ReduceSum", kn * cdt.itemsize, out_n * cdt.itemsize, math.ceil(kn * cdt.itemsize / 256))
    if cdt != call.out_dtype:
        add_pass(f"Cast(out {cdt.label}->{call.out_dtype.label})", out_n * cdt.itemsize,
                 out_n * call.out_dtype.itemsize, math.ceil(out_n * 4 / 256))
    return Measure(gm_bytes=gm, vec_repeats=repeats, vec_calls=calls, dma_calls=dmas,
                   tiles_per_core=k.tiles_per_core if k else 0, block_dim=k.block_dim if k else 0, launches=launches,
                   passes=tuple(passes), event_ids_peak=k.event_ids_peak if k else 0, time_us=time_us,
                   band_us=(band[0], band[1]) if timing else None, regime=slowest[2] if timing else None,
                   bound=slowest[1] if timing else None)


def _l0_chain(call: Call, materialised: dict[str, np.ndarray], cdt: DType,
              add_pass: Callable[[str, int, int, int], None]) -> tuple[int, ...]:
    """The op_api's l0 launches (OpSpec.aclnn_l0_chain) on the materialised inputs, each a streaming pass that reads
    its operands and writes its result (in the broadcast of its operands' shapes) in the compute dtype, one vector
    repeat per 256 bytes of result: a lower bound for Log and Exp, which take several instructions per repeat.
    Returns the shape of the chain's result."""
    shapes: dict[str, tuple[int, ...]] = {role: tuple(a.shape) for role, a in materialised.items()}
    shapes["coef"] = ()
    result: tuple[int, ...] = ()
    for step in call.op.aclnn_l0_chain:
        if step.when == "scaled" and call.coefficient == 1.0:  # a division by 1 skipped: its result is its input
            shapes[step.result] = shapes[step.reads[0]]
            continue
        if isinstance(step.when, tuple) and bool(call.attrs[step.when[0]]) != step.when[1]:
            continue
        result = tuple(np.broadcast_shapes(*(shapes[r] for r in step.reads)))
        size = cdt.itemsize
        read = sum(math.prod(shapes[r]) * size for r in step.reads if r != "coef")
        wrote = math.prod(result) * size
        add_pass(f"{step.op}({', '.join(step.reads)})", read, wrote, math.ceil(wrote / 256))
        shapes[step.result] = result
    return result


def _kernel_attrs(call: Call) -> dict[str, Any]:
    return {a.name: call.attrs[a.name] for a in call.op.attrs}


def run_case(op: "str | OpSpec", scenario: str, arrays: Sequence[np.ndarray], reduction: Any, soc: str,
             timing: bool = True, progress: "Progress | None" = None, with_aclnn: bool = True, **attrs: Any) -> Row:
    """One row: our kernel, then (`with_aclnn`) aclnn's composition for the same call. `progress(side)` is told which
    side starts ("ours", then "aclnn composition")."""
    spec = get_op(op)
    with muted():  # the caller reports progress (bench's own lines); compiles and launches stay quiet
        if progress is not None:
            progress("ours")
        ours = profile(spec, *arrays, *spec.absent_optional, reduction, soc=soc, timing=timing, **attrs)
        call = ours.call
        assert call is not None
        if ours.block_dim == 0:
            raise BenchError(f"{spec.name} ({scenario}, {soc}): aclnn returns before launching (an empty tensor): "
                             "nothing to time")
        m = _measure(ours)
        aclnn = None
        if with_aclnn:
            if progress is not None:
                progress("aclnn composition")
            aclnn = aclnn_composition(call, timing=timing)
    return Row(op=spec.name, scenario=scenario, soc=call.soc.name,
               shapes=tuple(tuple(a.shape) for a in arrays),  # type: ignore[arg-type]
               dtypes=tuple(dt.from_numpy(a.dtype).label for a in arrays),  # type: ignore[arg-type]
               elements=max(1, math.prod(call.iter_shape)),
               roofline_us=None if ours.timing is None else ours.timing.roofline_us,
               ours=m, aclnn=aclnn)


class BenchError(ValueError):
    """A bench case that cannot be timed (it launches nothing); the message names the op, scenario and SoC."""


Progress = Callable[[str], None]  # told what starts: "ours" or "aclnn composition"


@dataclass(frozen=True)
class Case:
    """One bench row to run: an op's call with these shapes and dtypes on a SoC."""

    op: OpSpec
    scenario: str
    shapes: Shapes
    dtypes: tuple[DType, DType, DType]
    reduction: Any
    soc: str

    def label(self) -> str:
        return f"{self.soc} {self.op.name} {self.scenario.strip()}"


def default_cases(ops: list[str] | None = None, elements: int = DEFAULT_ELEMENTS, soc: str = DEFAULT_SOC,
                  dtype: DType = DType.FLOAT32, reduction: Any = "none", grad_dtype: DType | None = None
                  ) -> list[Case]:
    """One case per op and built-in scenario. `grad_dtype` gives gradOutput another dtype (a mixed-dtype call). An
    op aclnn refuses on the SoC for every dtype (KlDivTarget on 310P/910) has none there."""
    cases = []
    for name in ops or list(OPS):
        op = get_op(name)
        if not runs_on(op, soc):
            continue
        if grad_dtype is not None and grad_dtype != dtype and op.promotion is Promotion.SAME_AS_SELF:
            continue  # MSE accepts no mixed dtypes
        for scenario, shapes in scenarios(op, elements).items():
            cases.append(Case(op, scenario, shapes, (grad_dtype or dtype, dtype, dtype), reduction, soc))
    return cases


def shape_cases(shape_sets: Iterable[Shapes], ops: list[str] | None = None, soc: str = DEFAULT_SOC,
                dtype: DType = DType.FLOAT32, reduction: Any = "none") -> list[Case]:
    """One case per user-given (grad, self, target) shapes and op."""
    cases = []
    for shapes in shape_sets:
        label = " ".join(str(tuple(s)) for s in shapes)
        for name in ops or list(OPS):
            cases.append(Case(get_op(name), label, shapes, (dtype,) * 3, reduction, soc))
    return cases


def stress_cases(ops: list[str] | None = None, soc: str = DEFAULT_SOC, dtype: DType = DType.FLOAT32) -> list[Case]:
    """The stress cases (STRESS), each followed by the same op's call without broadcast and with as many
    elements."""
    cases = []
    wanted = {get_op(o).name for o in ops} if ops else None
    for op, label, shapes in STRESS:
        if wanted is not None and op.name not in wanted:
            continue
        reduction = "sum" if op.reduced_onto else "none"  # KL: sum back to self's shape
        cases.append(Case(op, label, shapes, (dtype,) * 3, reduction, soc))
        n = math.prod(np.broadcast_shapes(*shapes))
        cases.append(Case(op, f"  same-shape call, {n} elements", ((n,), (n,), (n,)), (dtype,) * 3, "none", soc))
    return cases


def training_cases(ops: list[str] | None = None, soc: str = DEFAULT_SOC, dtype: DType | None = None) -> list[Case]:
    """The training scenarios of each op in every dtype it supports on the SoC (or only `dtype`, where supported),
    reduction none."""
    arch = get_soc(soc).arch.npu_arch
    cases = []
    for name in ops or list(OPS):
        op = get_op(name)
        for d in op.supported_dtypes(arch):
            if dtype is not None and d != dtype:
                continue
            for scenario, shapes in training_scenarios(op).items():
                cases.append(Case(op, scenario, shapes, (d,) * 3, "none", soc))
    return cases


def training_misses(rows: Sequence[Row]) -> list[tuple[Row, str]]:
    """What the training scenarios' rows miss, each with its row: modelled time beyond the SoC's roof_ratio of the
    roofline, or a broadcast call slower than the same op's same-shape call of its shape and dtype. Empty when every
    row holds."""
    reference = TRAINING_PATTERNS[0]

    def key(r: Row) -> tuple:
        return (r.soc, r.op, r.dtypes[1], split_training_scenario(r.scenario)[0])

    same = {key(r): r.ours.time_us for r in rows if split_training_scenario(r.scenario)[1] == reference}
    misses = []
    for r in rows:
        t = r.ours.time_us
        if t is None or not r.roofline_us:
            continue
        bound = roof_ratio(r.soc)
        if t > bound * r.roofline_us:
            misses.append((r, f"{t:.1f} us, {t / r.roofline_us:.2f}x the roofline ({r.roofline_us:.1f} us; "
                              f"bound {bound}x)"))
        s = same.get(key(r))
        if s is not None and split_training_scenario(r.scenario)[1] != reference and t > s:
            misses.append((r, f"{t:.1f} us, slower than the same-shape call ({s:.1f} us)"))
    return misses


def check(cases: Sequence[Case]) -> None:
    """Validate every case before any runs (on shape-only arrays: no memory, no kernel): a call aclnn refuses raises
    its LossGradError naming the op, scenario and SoC, and a call that launches nothing (aclnn returns at once for
    empty tensors: no modelled time) raises BenchError. A long run never stops half-way on one of these."""
    from .errors import LossGradError

    for c in cases:
        arrays = [np.broadcast_to(np.zeros((), d.np_dtype), s) for d, s in zip(c.dtypes, c.shapes)]
        try:
            call = validate(c.op, *arrays, *c.op.absent_optional, c.reduction, soc=c.soc)
        except LossGradError as exc:
            raise LossGradError(exc.code, f"{c.op.name} refuses {c.scenario.strip()} on {c.soc}: {exc.message}"
                                ) from None
        if not call.launch:
            raise BenchError(f"{c.op.name} launches no kernel for {c.scenario.strip()} on {c.soc} (aclnn returns "
                             "before launching for empty tensors): nothing to time")


def run_cases(cases: Sequence[Case], timing: bool = True,
              progress: "Callable[[Case, str], None] | None" = None, with_aclnn: bool = True) -> list[Row]:
    """Run checked cases in order, one row each; `progress(case, side)` is told what starts. Input values are drawn
    from one generator seeded 0 per call, so the same cases give the same rows."""
    rows: list[Row] = []
    rng = np.random.default_rng(0)
    for c in cases:
        arrays = _arrays(c.shapes, c.dtypes, rng)
        tell = None if progress is None else (lambda side, c=c: progress(c, side))
        rows.append(run_case(c.op, c.scenario, arrays, c.reduction, c.soc, timing, progress=tell,
                             with_aclnn=with_aclnn))
    return rows


def _arrays(shapes: Shapes, kinds: Sequence[DType], rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.uniform(0.5, 2.0, s).astype(k.np_dtype) for s, k in zip(shapes, kinds)]


def run(ops: list[str] | None = None, elements: int = DEFAULT_ELEMENTS, soc: str = DEFAULT_SOC,
        dtype: DType = DType.FLOAT32, reduction: str = "none", grad_dtype: DType | None = None,
        timing: bool = True) -> list[Row]:
    """One row per op and built-in scenario. `grad_dtype` gives gradOutput another dtype (a mixed-dtype call)."""
    cases = default_cases(ops, elements, soc, dtype, reduction, grad_dtype)
    check(cases)
    return run_cases(cases, timing)


def run_shapes(shape_sets: Iterable[Shapes], ops: list[str] | None = None, soc: str = DEFAULT_SOC,
               dtype: DType = DType.FLOAT32, reduction: str = "none", timing: bool = True) -> list[Row]:
    """One row per op and user-given (grad, self, target) shapes."""
    cases = shape_cases(shape_sets, ops, soc, dtype, reduction)
    check(cases)
    return run_cases(cases, timing)


def run_stress(ops: list[str] | None = None, soc: str = DEFAULT_SOC, dtype: DType = DType.FLOAT32,
               timing: bool = True) -> list[Row]:
    """The stress cases (STRESS), each beside the same op's call without broadcast and with as many elements."""
    cases = stress_cases(ops, soc, dtype)
    check(cases)
    return run_cases(cases, timing)


# ---------------------------------------------------------------------------------------------------------------
# Timeline and chart
# ---------------------------------------------------------------------------------------------------------------

def trace_events(rows: Sequence[Row], zero_length: bool = False) -> list[dict[str, Any]]:
    """Chrome trace events of our launches, one after another on one time axis: a process per SoC and core, a thread
    per pipe (numeric tids named by metadata events, as Perfetto's JSON importer expects), and a 'cases' track naming
    each launch. Zero-length events (flags and barriers the model prices at 0: more than half of a launch's events)
    are left out unless `zero_length`."""
    from .timing.events import PIPES

    events: list[dict[str, Any]] = []
    socs = list(dict.fromkeys(r.soc for r in rows))
    clock = {s: 0.0 for s in socs}
    named: set[int] = set()
    gap_us = 1.0

    def name_process(pid: int, name: str, threads: Sequence[str]) -> None:
        if pid in named:
            return
        named.add(pid)
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        for tid, thread in enumerate(threads):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": thread}})

    for r in rows:
        t = r.ours.timing
        if t is None:
            continue
        base = socs.index(r.soc) * 1000
        offset = clock[r.soc]
        for ev in t.trace():
            if ev.get("ph") != "X" or (not zero_length and not ev.get("dur")):
                continue
            pid = base + int(ev["pid"])
            name_process(pid, f"{r.soc} core {int(ev['pid'])}", PIPES)
            tid = ev["tid"]
            e = dict(ev, pid=pid, tid=PIPES.index(tid) if isinstance(tid, str) else int(tid),
                     ts=float(ev["ts"]) + offset)
            events.append(e)
        cases_pid = base + 999
        name_process(cases_pid, f"{r.soc} cases", ("launch",))
        events.append({"ph": "X", "name": f"{r.op} {r.scenario}", "cat": "case", "pid": cases_pid, "tid": 0,
                       "ts": offset, "dur": t.total_us,
                       "args": {"bound": t.bound, "roofline_us": t.roofline_us, "modelled_us": t.total_us,
                                "band_us": list(t.band_us), "regime": t.regime}})
        clock[r.soc] = offset + t.total_us + gap_us
    return events


PLOT_EXTRA_MESSAGE = ("--plot needs matplotlib, the optional extra: pip install 'ascend-lossgrad[plot]' "
                      "(or pip install matplotlib)")


_SOC_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_OP_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red")        # points: one colour per op
_LINE_STYLES = (("black", "--"), ("tab:brown", "-."), ("tab:gray", ":"), ("tab:olive", "--"), ("tab:cyan", "-."),
                ("tab:pink", ":"), ("tab:purple", "--"), ("darkgoldenrod", "-."))  # rooflines: never a point colour


def _label_points(ax: Any, rows: Sequence[Row]) -> None:
    """Number each case at its points (ours bold, aclnn's light), each label where it overlaps no other label and
    no marker if such a place exists nearby. Points that coincide get one label naming every case ("3,7"); an
    aclnn point on its case's own point (a composition of the kernel alone) gets none."""
    fig = ax.figure
    fig.canvas.draw()  # the axes' final transform
    px = fig.dpi / 72.0
    to_px = ax.transData.transform
    groups: dict[tuple[str, float, float], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(("ours", float(r.ours.gm_bytes), float(r.ours.time_us)), []).append(i + 1)
    for i, r in enumerate(rows):
        key = (float(r.aclnn.gm_bytes), float(r.aclnn.time_us))
        if key != (float(r.ours.gm_bytes), float(r.ours.time_us)):
            groups.setdefault(("aclnn", *key), []).append(i + 1)
    markers = [to_px((x, y)) for _, x, y in groups]
    taken = [(mx - 4 * px, my - 4 * px, mx + 4 * px, my + 4 * px) for mx, my in markers]

    def overlap(box: tuple[float, float, float, float]) -> float:
        return sum(max(0.0, min(box[2], b[2]) - max(box[0], b[0])) * max(0.0, min(box[3], b[3]) - max(box[1], b[1]))
                   for b in taken)

    for (side, x, y), numbers in groups.items():
        text = ",".join(map(str, numbers))
        w, h = 0.6 * 7 * px * len(text), 7 * px * 1.2
        cx, cy = to_px((x, y))
        best = None
        for dx, dy in ((5, 3), (5, -11), (-5 - w / px, 3), (-5 - w / px, -11), (-w / px / 2, 7), (-w / px / 2, -15),
                       (9, 11), (9, -19), (-9 - w / px, 11), (-9 - w / px, -19), (14, -4), (-14 - w / px, -4)):
            box = (cx + dx * px, cy + dy * px, cx + dx * px + w, cy + dy * px + h)
            cost = overlap(box)
            if best is None or cost < best[0]:
                best = (cost, dx, dy, box)
            if cost == 0:
                break
        assert best is not None
        taken.append(best[3])
        ax.annotate(text, (x, y), xytext=(best[1], best[2]), textcoords="offset points", fontsize=7,
                    fontweight="bold" if side == "ours" else "normal", alpha=1.0 if side == "ours" else 0.6,
                    zorder=4)


def plot_roofline(rows: Sequence[Row], path: str, fmt: str | None = None) -> None:
    """The roofline chart of a bench run, for a design review: GM bytes moved against modelled time (log-log), each
    case numbered at its point and named in the key beside the chart (op, scenario, SoC, speedup), our kernel
    (filled) joined to aclnn's composition for the same call (hollow) so the gap reads as a speedup, ops told apart
    by colour and SoCs by marker, and each SoC's bandwidth roofline in a colour of its own. Cases whose points
    coincide are labelled together ("3,7"), so no point hides another unnamed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError:
        raise RuntimeError(PLOT_EXTRA_MESSAGE) from None
    from .timing.params import params_for

    timed = [r for r in rows if r.ours.time_us is not None and r.aclnn.time_us is not None]
    if not timed:
        raise ValueError("nothing to plot: no row has a modelled time")
    ops = list(dict.fromkeys(r.op for r in timed))
    socs = list(dict.fromkeys(r.soc for r in timed))
    colour = {op: _OP_COLOURS[i % len(_OP_COLOURS)] for i, op in enumerate(ops)}
    marker = {soc: _SOC_MARKERS[i % len(_SOC_MARKERS)] for i, soc in enumerate(socs)}
    key_lines = [f"{i + 1:>3}  {get_op(r.op).template} {r.scenario.strip()}  [{r.soc}, "
                 f"{'/'.join(dict.fromkeys(r.dtypes))}]  x{r.aclnn.time_us / r.ours.time_us:.2f}"
                 for i, r in enumerate(timed)]
    height = max(7.5, 0.13 * len(timed) + 1.5)
    fig = plt.figure(figsize=(15, height))
    bottom = 1.6 / height  # room for the legend under the chart
    ax = fig.add_axes((0.07, bottom, 0.52, 0.93 - bottom))
    # aclnn (hollow) -> ours (filled), one segment per case
    for r in timed:
        ax.plot([r.aclnn.gm_bytes, r.ours.gm_bytes], [r.aclnn.time_us, r.ours.time_us], color=colour[r.op],
                alpha=0.45, linewidth=1.0, zorder=1)
        ax.scatter([r.aclnn.gm_bytes], [r.aclnn.time_us], marker=marker[r.soc], facecolors="white",
                   edgecolors=colour[r.op], linewidths=1.3, s=42, zorder=2)
        ax.scatter([r.ours.gm_bytes], [r.ours.time_us], marker=marker[r.soc], color=colour[r.op], s=42, zorder=3)
        if r.ours.band_us is not None:  # where the held-out cases of the launch's regime put the true time
            ax.errorbar([r.ours.gm_bytes], [r.ours.time_us], yerr=[[r.ours.time_us - r.ours.band_us[0]],
                        [r.ours.band_us[1] - r.ours.time_us]], fmt="none", ecolor=colour[r.op], elinewidth=0.8,
                        capsize=2, zorder=3)
    lo = min(min(r.ours.gm_bytes, r.aclnn.gm_bytes) for r in timed) / 1.5
    hi = max(max(r.ours.gm_bytes, r.aclnn.gm_bytes) for r in timed) * 1.5
    roof_handles = []
    for i, soc in enumerate(socs):
        bw = params_for(soc).hbm_read_gbps.value
        if not bw:
            continue
        c, style = _LINE_STYLES[i % len(_LINE_STYLES)]
        (line,) = ax.plot([lo, hi], [lo / (bw * 1e3), hi / (bw * 1e3)], color=c, linestyle=style, linewidth=1.2,
                          zorder=0, label=f"roofline {soc} ({bw:g} GB/s HBM read)")
        roof_handles.append(line)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    _label_points(ax, timed)
    ax.set_xlabel("GM bytes moved by the call (all launches)")
    ax.set_ylabel("modelled time (us, twin time model)")
    ax.set_title("Roofline: our kernel (filled) vs aclnn's composition (hollow), joined per case")
    ax.grid(True, which="both", alpha=0.25)
    op_handles = [Line2D([], [], color=colour[op], marker="o", linestyle="", label=get_op(op).template)
                  for op in ops]
    soc_handles = [Line2D([], [], color="black", marker=marker[s], linestyle="", markerfacecolor="white",
                          label=s) for s in socs]
    side_handles = [Line2D([], [], color="gray", marker="o", linestyle="", label="ours"),
                    Line2D([], [], color="gray", marker="o", linestyle="", markerfacecolor="white",
                           label="aclnn composition")]
    ax.legend(handles=op_handles + side_handles + soc_handles + roof_handles, fontsize="small", loc="upper center",
              bbox_to_anchor=(0.5, -0.1), ncol=4, frameon=False)
    fig.text(0.61, 0.92, "case  (number at the points; x = speedup over aclnn's composition)", fontsize=8,
             fontweight="bold", va="top", family="monospace")
    fig.text(0.61, 0.895, "\n".join(key_lines), fontsize=7, va="top", family="monospace", linespacing=1.35)
    fig.savefig(path, format=fmt)
    plt.close(fig)


def timing_notes(soc: str) -> list[str]:
    """Where the time model's public data is thin for this SoC (the parameters' own notes and unsourced fields)."""
    from .timing.params import params_for
    p = params_for(soc)
    notes = list(p.notes)
    missing = p.low_confidence()
    if missing:
        notes.append("no public figure (fallback used): " + ", ".join(missing))
    return notes
