"""Verification that searches: random valid calls over the whole space aclnn accepts, and shrinking of failures.

`lossgrad verify --fuzz N --seed S` draws N calls per SoC (docs/verify.md, "The fuzz search"). Call i on SoC `soc`
comes from its own generator, `numpy.random.default_rng([S, crc32(soc), i])`, so a run is reproducible from its
seed and one call from (seed, SoC, index) alone, whatever else was selected. Every drawn call is valid: aclnn's
validation accepts it and the tiling plans it (with the UB budget the call draws). A failing call is shrunk
(`shrink`) to a minimal reproducer: fewest axes, smallest extents, then the simplest dtypes, values, layouts and
attributes that still fail the same way; `python_call` and `csv_row` print it.
"""
from __future__ import annotations

import csv
import io
import math
import time
import zlib
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence

import numpy as np

from ..dtypes import DType, parse
from ..errors import LossGradError
from ..registry import OPS, Check, OpSpec, OutputShape, get_op, runs_on
from ..socs import get_soc
from ..validation import broadcast_shapes
from .cases import CSV_COLUMNS, LAYOUTS, Case, _check_call, case_reduction, write_csv_rows

Shape = tuple[int, ...]

# Weights of the space's rank 0..8: every rank, most calls of 2-6 axes (where broadcast patterns multiply).
RANK_WEIGHTS = (0.04, 0.10, 0.14, 0.15, 0.14, 0.13, 0.11, 0.10, 0.09)
VALUE_WEIGHTS = {"uniform": 0.18, "normal": 0.24, "special": 0.14, "ties": 0.10, "zeros": 0.06, "huge": 0.10,
                 "denormal": 0.06, "scaled": 0.12}
# Extents on the tiling's decision boundaries: 32-byte blocks (8 float32, 16 half), 128-byte units, the core counts
# of the default SoCs (8, 30, 48, 56) and their neighbours.
BOUNDARY_EXTENTS = (8, 9, 15, 16, 17, 24, 29, 30, 31, 32, 33, 47, 48, 49, 55, 56, 57, 63, 64, 65, 127, 128, 129)
BETAS = (1.0, 0.0, 0.5, 2.0, 1e-30, 3.0e38, 0.1)
MAX_ELEMENTS = 1 << 22  # the largest space a drawn call has (a few seconds on the twin)


def case_rng(seed: int, soc: str, index: int) -> np.random.Generator:
    """The generator of call `index` on `soc` in the run with `seed`."""
    return np.random.default_rng([seed, zlib.crc32(soc.encode()), index])


# ---- drawing one call ------------------------------------------------------------------------------------------------

def _extent(rng: np.random.Generator) -> int:
    u = rng.random()
    if u < 0.25:
        return 1
    if u < 0.55:
        return int(rng.integers(2, 8))
    if u < 0.80:
        return int(rng.choice(BOUNDARY_EXTENTS))
    return int(round(math.exp(rng.uniform(math.log(8), math.log(4096)))))


def _inner(rng: np.random.Generator) -> int:
    """The last axis: its length in bytes decides row pitches, 32-byte tails, 128-byte units and the split."""
    u = rng.random()
    if u < 0.25:
        return int(rng.integers(1, 10))
    if u < 0.65:
        unit = int(rng.choice((8, 16, 32, 64)))
        return max(1, unit * int(rng.integers(1, 17)) + int(rng.choice((-1, 0, 0, 1))))
    return int(round(math.exp(rng.uniform(math.log(10), math.log(20000)))))


def _cap(rng: np.random.Generator) -> int:
    """The most elements the space may have: log-uniform, mostly up to the size that spreads over every core."""
    u = rng.random()
    lo, hi = (1, 1 << 18) if u < 0.8 else ((1 << 18, 1 << 21) if u < 0.97 else (1 << 21, MAX_ELEMENTS))
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _space(rng: np.random.Generator) -> list[int]:
    rank = int(rng.choice(len(RANK_WEIGHTS), p=np.asarray(RANK_WEIGHTS) / sum(RANK_WEIGHTS)))
    dims = [_extent(rng) for _ in range(rank)]
    if rank:
        dims[-1] = _inner(rng)
    cap = _cap(rng)
    while math.prod(dims) > cap:
        i = int(np.argmax(dims))
        dims[i] = max(1, int(dims[i] * rng.uniform(0.3, 0.8)))
    if rank and rng.random() < 0.02:
        dims[int(rng.integers(rank))] = 0  # an empty call
    return dims


def _pattern(rng: np.random.Generator, space: Sequence[int], within: Sequence[int] | None = None) -> Shape:
    """One input's shape against the space: leading axes dropped, others kept whole or set to 1 (broadcast).
    `within`: a shape the input must broadcast into (KL's gradOutput), axes where it is 1 stay 1."""
    rank = len(space)
    drop = int(rng.integers(1, rank + 1)) if rank and rng.random() < 0.25 else 0
    q = float(rng.choice((0.0, 0.15, 0.4, 0.75, 1.0), p=(0.35, 0.2, 0.2, 0.15, 0.1)))
    shape = [1 if rng.random() < q else n for n in space[drop:]]
    if within is not None:
        pad = [1] * (rank - len(within)) + list(within)
        shape = [1 if pad[drop + i] == 1 else n for i, n in enumerate(shape)]
    return tuple(shape)


def _shapes(rng: np.random.Generator, op: OpSpec, space: Sequence[int]) -> tuple[Shape | None, ...]:
    """The op's tensors' shapes in aclnn's order: gradOutput, self, target, then each optional input (left out in a
    third of the calls; drawn after the others, so an op without one draws as before)."""
    if op.reduced_onto:
        # KL (KlDivTarget): the output is self's (target's) shape; broadcast against the other input, the terms sum
        # back to it.
        other = _pattern(rng, space) if rng.random() < 0.4 else tuple(space)
        onto = _pattern(rng, space)
        st = broadcast_shapes(onto, other) or tuple(space)
        pair = (onto, other) if op.reduced_onto == "self" else (other, onto)
        shapes: list[Shape | None] = [_pattern(rng, st, within=st), *pair]
    elif op.output_shape is OutputShape.SELF_ABSORBING:
        # BCE: every input broadcasts into self (a smaller self is refused: 161002, which the error tests cover)
        self_ = tuple(space) if rng.random() < 0.5 else _pattern(rng, space)
        target = self_ if Check.TARGET_IS_SELF in op.checks else _pattern(rng, self_, within=self_)
        shapes = [_pattern(rng, self_, within=self_), self_, target]
    else:
        shapes = [_pattern(rng, space), _pattern(rng, space), _pattern(rng, space)]
    for _ in op.inputs[3:]:
        within = shapes[1] if op.output_shape is OutputShape.SELF_ABSORBING else None
        shapes.append(None if rng.random() < 1 / 3 else _pattern(rng, within or space, within=within))
    return tuple(shapes)


def _dtypes(rng: np.random.Generator, op: OpSpec, npu_arch: int, shapes: Sequence[Shape | None]
            ) -> tuple[str, ...]:
    labels = [d.label for d in op.supported_dtypes(npu_arch)]
    if rng.random() < 0.5:
        ins = [str(rng.choice(labels))] * 3
    else:
        ins = [str(rng.choice(labels)) for _ in range(3)]
    out = "" if rng.random() < 0.6 else str(rng.choice(labels))  # "": as aclnn allocates it
    if out and Check.OUT_TARGET_DTYPE in op.checks:
        out = ins[2]  # the only out dtype aclnn accepts (a draw that changed nothing else)
    for shape in shapes[3:]:  # an optional input: self's dtype or its own ("" when absent)
        ins.append("" if shape is None else (ins[1] if rng.random() < 0.5 else str(rng.choice(labels))))
    return (*ins, out)


def _attrs(rng: np.random.Generator, op: OpSpec) -> tuple[float | None, bool | None]:
    names = {a.name for a in op.attrs}
    beta = None
    if "beta" in names:
        beta = float(rng.choice(BETAS)) if rng.random() < 0.7 else float(np.float32(math.exp(rng.uniform(-9, 9))))
    log_target = bool(rng.random() < 0.5) if "log_target" in names else None
    return beta, log_target


def _reduction(rng: np.random.Generator, op: OpSpec) -> str:
    if not op.reduction_validated and rng.random() < 0.05:
        return str(int(rng.choice((-1, 4, 7))))  # KL maps other integers to none
    return str(rng.choice([r.label for r in op.reductions]))


def _layouts(rng: np.random.Generator, tensors: int) -> tuple[str, ...]:
    lay = ["c" if rng.random() < 0.7 else str(rng.choice(LAYOUTS[1:])) for _ in range(3)]
    lay += ["c" if rng.random() < 0.7 else str(rng.choice(LAYOUTS[1:])) for _ in range(tensors - 3)]
    return tuple(lay)


def kernel_shapes(case: Case) -> dict[str, Shape]:
    """The inputs' shapes as the kernel reads them (runners.kernel_view of data.layout): a "b" view's first axis of
    extent > 1 is stride 0, so it shrinks to 1."""
    out: dict[str, Shape] = {}
    for i, shape, kind in zip(get_op(case.op).inputs, case.shapes, case.layouts):
        if shape is None:  # absent: the kernel has no view of it
            continue
        role = i.role
        s = list(shape)
        if kind == "b" and 0 not in s:
            axes = [i for i, n in enumerate(s) if n > 1]
            if axes:
                s[axes[0]] = 1
        out[role] = tuple(s)
    return out


def _call(case: Case):
    """The validated call of a case, on shape-only arrays (no data)."""
    from ..validation import validate

    arrays = [None if s is None else np.broadcast_to(np.zeros((), parse(d).np_dtype), s)
              for d, s in zip(case.dtypes, case.shapes)]
    return validate(case.op, *arrays, case_reduction(case), case.attrs, out_dtype=case.dtypes[-1] or None,
                    soc=case.soc)


def plan_case(case: Case):
    """The tiling the case's launch gets (its kernel views, its UB budget); TilingError when refused. None for a
    call that launches nothing (an empty output)."""
    from ..tiling import knobs, plan, problem_from_call

    call = _call(case)
    if math.prod(call.out_shape) == 0 or any(math.prod(a.shape) == 0 for a in call.inputs.values()):
        return None
    with knobs(ub_budget=case.ub_budget or None, fold_tiles=case.fold_tiles or None):
        return plan(problem_from_call(call, kernel_shapes(case)))


def valid(case: Case) -> bool:
    """aclnn accepts the call and the tiling plans it."""
    try:
        _check_call(case)
        plan_case(case)
    except (LossGradError, ValueError):
        return False
    return True


def _budget(rng: np.random.Generator, case: Case) -> int:
    """A UB budget that gives tiles of a few hundred to a few thousand elements (lossgrad.tiling.ub_budget)."""
    full = plan_case(case)
    if full is None:
        return 0
    per_elem = full.ub_bytes / full.fields["tileLen"]
    tile = int(rng.choice((256, 512, 768, 1024, 1536, 2048, 4096)))
    return min(int(per_elem * tile) + 4096, get_soc(case.soc).ub_kernel_bytes)


def draw_case(seed: int, soc: str, index: int, ops: Sequence[str] | None = None) -> Case:
    """Call `index` of the run with `seed` on `soc`: a valid call (retried until one is)."""
    rng = case_rng(seed, soc, index)
    soc_ = get_soc(soc)
    names = runnable_ops(soc_.name, ops)
    if not names:
        raise ValueError(f"none of the ops {list(ops or OPS)} accepts any dtype on {soc_.name}")
    for _ in range(200):
        op = get_op(str(rng.choice(names)))
        space = _space(rng)
        shapes = _shapes(rng, op, space)
        dts = _dtypes(rng, op, soc_.arch.npu_arch, shapes)
        beta, log_target = _attrs(rng, op)
        values = str(rng.choice(list(VALUE_WEIGHTS), p=np.asarray(list(VALUE_WEIGHTS.values()))))
        case = Case(op=op.name, soc=soc_.name, shapes=shapes, dtypes=dts, reduction=_reduction(rng, op),
                    beta=beta, log_target=log_target, values=values, seed=int(rng.integers(2 ** 31)),
                    layouts=_layouts(rng, len(shapes)), tag="fuzz")
        try:
            call = _call(case)
        except (LossGradError, ValueError):
            continue
        case = replace(case, dtypes=(*dts[:-1], call.out_dtype.label), id="")
        if not valid(case):
            continue
        if rng.random() < 0.3:
            budgeted = replace(case, ub_budget=_budget(rng, case), id="")
            if budgeted.ub_budget and valid(budgeted):
                case = budgeted
        if op.reduced_onto and rng.random() < 0.3:
            case = replace(case, fold_tiles=int(rng.choice((1, 2, 3, 4, 8))), id="")
        case = _near_boundaries(rng, case)
        return replace(case, id=f"fuzz/{seed}/{soc_.name}/{index}")
    raise RuntimeError(f"no valid call drawn for seed {seed}, {soc}, index {index}")


def _set_axis(case: Case, axis: int, old: int, new: int) -> Case:
    """Every input's axis `axis` (counted from the right, 0 = last) of extent `old` becomes `new`."""
    shapes: list[Shape | None] = []
    for s in case.shapes:
        if s is None:
            shapes.append(None)
            continue
        t = list(s)
        if axis < len(t) and t[-1 - axis] == old:
            t[-1 - axis] = new
        shapes.append(tuple(t))
    return replace(case, shapes=tuple(shapes), id="")


def _near_boundaries(rng: np.random.Generator, case: Case) -> Case:
    """Moves the row length next to the tile length, or the element count next to a multiple of the cores' units,
    for some calls (the places where tiles and core ranges change shape)."""
    u = rng.random()
    if u > 0.25:
        return case
    plan = plan_case(case)
    space = _space_of(case)
    if plan is None or not space:
        return case
    if u < 0.15:  # a row around the tile length
        tile = plan.fields["tileLen"]
        new = max(1, int(rng.choice((tile, tile // 2, tile // 4, 2 * tile))) + int(rng.choice((-9, -1, 0, 1, 8))))
        if new * math.prod(space[:-1]) > MAX_ELEMENTS:
            return case
        cand = _set_axis(case, 0, space[-1], new) if space[-1] > 1 else case
    else:  # an element count around a multiple of the core count's units
        get = plan.fields
        units = get_soc(case.soc).cores * max(1, get["unitElems"]) * int(rng.integers(1, 5))
        rest = math.prod(space[1:]) or 1
        lead = max(1, round(units / rest)) + int(rng.choice((-1, 0, 1)))
        if space[0] <= 1 or lead < 1 or lead * rest > MAX_ELEMENTS:
            return case
        cand = _set_axis(case, len(space) - 1, space[0], lead)
    return cand if valid(cand) else case


def runnable_ops(soc: str, ops: Sequence[str] | None = None) -> list[str]:
    """The ops (all, or those named) that accept some dtype on the SoC: aclnn refuses every dtype of KlDivTarget on
    310P and 910, so the search draws none of its calls there."""
    return [n for n in (list(ops) if ops else list(OPS)) if runs_on(n, soc)]


def fuzz_cases(n: int, seed: int, socs: Sequence[str], ops: Sequence[str] | None = None) -> Iterator[Case]:
    """n calls per SoC, SoC by SoC (a SoC where none of the ops runs has none)."""
    for soc in socs:
        if not runnable_ops(soc, ops):
            continue
        for i in range(n):
            yield draw_case(seed, soc, i, ops)


# ---- shrinking -------------------------------------------------------------------------------------------------------

def signature(error: str | None) -> str:
    """What kind of failure a result is: the exception's type, or a mismatch against the golden."""
    if error is None:
        return "mismatch"
    return error.split(":", 1)[0]


def _space_of(case: Case) -> Shape:
    st = broadcast_shapes(case.shapes[1], case.shapes[2]) or ()  # type: ignore[arg-type]
    space = broadcast_shapes(case.shapes[0], st) or st  # type: ignore[arg-type]
    for s in case.shapes[3:]:  # an optional input the call has
        if s is not None:
            space = broadcast_shapes(space, s) or space
    return space


def _drop_axis(case: Case, axis: int) -> Case:
    """Axis `axis` (from the right) removed from every input that has it."""
    shapes = tuple(None if s is None else tuple(d for i, d in enumerate(s) if len(s) - 1 - i != axis)
                   for s in case.shapes)
    return replace(case, shapes=shapes, id="")


def _candidates(case: Case) -> Iterator[Case]:
    """Simpler variants of a case, the biggest simplifications first."""
    space = _space_of(case)
    rank = len(space)
    for axis in range(rank):  # fewer axes
        yield _drop_axis(case, axis)
    for axis in range(rank):  # an axis of extent 1
        n = space[-1 - axis]
        if n > 1:
            yield _set_axis(case, axis, n, 1)
    for k, s in enumerate(case.shapes[3:], start=3):  # an optional input left out
        if s is not None:
            yield replace(case, shapes=tuple(None if j == k else x for j, x in enumerate(case.shapes)),
                          dtypes=tuple("" if j == k else d for j, d in enumerate(case.dtypes)), id="")
    for k, s in enumerate(case.shapes):  # leading 1s dropped from one input
        if s and s[0] == 1:
            shapes = list(case.shapes)
            shapes[k] = s[1:]
            yield replace(case, shapes=tuple(shapes), id="")  # type: ignore[arg-type]
    if case.ub_budget:
        yield replace(case, ub_budget=0, id="")
    if case.fold_tiles:
        yield replace(case, fold_tiles=0, id="")
    if set(case.layouts) != {"c"}:
        for k in range(len(case.layouts)):
            if case.layouts[k] != "c":
                lay = list(case.layouts)
                lay[k] = "c"
                yield replace(case, layouts=tuple(lay), id="")  # type: ignore[arg-type]
    for axis in range(rank):  # smaller extents
        n = space[-1 - axis]
        for m in sorted({n // 2, n - 1, 2, 3, (n + 1) // 2}):
            if 1 < m < n:
                yield _set_axis(case, axis, n, m)
    if case.values != "normal":
        yield replace(case, values="normal", id="")
    base = case.dtypes[-1]
    same = tuple("" if s is None else base for s in case.shapes) + (base,)
    if case.dtypes != same:
        yield replace(case, dtypes=same, id="")
    f32 = tuple("" if s is None else "float32" for s in case.shapes) + ("float32",)
    if case.dtypes != f32:
        yield replace(case, dtypes=f32, id="")
    op = get_op(case.op)
    first = op.reductions[0].label
    if case.reduction != first:
        yield replace(case, reduction=first, id="")
    if case.beta is not None and case.beta != 1.0:
        yield replace(case, beta=1.0, id="")
    if case.log_target:
        yield replace(case, log_target=False, id="")


@dataclass(frozen=True)
class Shrunk:
    original: Case
    case: Case
    signature: str
    trials: int
    seconds: float


def shrink(case: Case, fails: Callable[[Case], str | None], *, max_trials: int = 300,
           max_seconds: float = 180.0) -> Shrunk:
    """The smallest variant of a failing case that fails the same way. `fails(case)` returns the failure's
    signature, None when the case passes. Greedy: the first simpler variant that still fails is taken, until none
    does (or the trial or time budget ends)."""
    t0 = time.perf_counter()
    target = fails(case)
    if target is None:
        raise ValueError(f"case {case.id} does not fail: nothing to shrink")
    trials = 1
    current = case
    progress = True
    while progress and trials < max_trials and time.perf_counter() - t0 < max_seconds:
        progress = False
        for cand in _candidates(current):
            if cand == current or not valid(cand):
                continue
            trials += 1
            if fails(cand) == target:
                current = cand
                progress = True
                break
            if trials >= max_trials or time.perf_counter() - t0 >= max_seconds:
                break
    shrunk = replace(current, id=f"{case.id}/shrunk" if case.id else "", tag=case.tag)
    return Shrunk(case, shrunk, target, trials, time.perf_counter() - t0)


# ---- reproducers -----------------------------------------------------------------------------------------------------

def python_call(case: Case) -> str:
    """One line of Python (after `import lossgrad, lossgrad.verify, lossgrad.tiling`) that makes the case's call
    exactly on the twin: the same values, dtypes, layouts and UB budget. Auto-sync is the twin's environment setting
    (LOSSGRAD_TWIN_AUTO_SYNC), not part of the call."""
    op = get_op(case.op)
    dts = case.dtypes[:-1]
    dt_arg = repr(dts[0]) if len(set(dts)) == 1 else repr(dts)
    extra = "" if set(case.layouts) == {"c"} else f", layouts={''.join(case.layouts)!r}"
    if len(case.shapes) > 3:
        extra += f", op={op.template!r}"
    if case.log_target is not None:
        extra += f", kl=True, log_target={case.log_target}"
    args = f"*lossgrad.verify.inputs({case.shapes!r}, {dt_arg}, {case.values!r}, {case.seed}{extra})"
    kwargs = "".join(f", {k}={v!r}" for k, v in case.attrs.items())
    call = (f"lossgrad.{op.name}({args}, {case_reduction(case)!r}{kwargs}, out_dtype={case.dtypes[-1]!r}, "
            f"soc={case.soc!r}, backend='twin')")
    settings = ", ".join(f"{k}={v}" for k, v in (("ub_budget", case.ub_budget), ("fold_tiles", case.fold_tiles))
                         if v)
    return f"with lossgrad.tiling.knobs({settings}): {call}" if settings else call


def csv_row(case: Case) -> str:
    """The case as a case-table CSV header and row (`lossgrad verify --cases`)."""
    fh = io.StringIO()
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    write_csv_rows(w, [case])
    return fh.getvalue()


# ---- the command's side ----------------------------------------------------------------------------------------------

ORACLE_EVERY = 8  # one call in this many (by its id) also compares its float64 golden with PyTorch's autograd
ORACLE_FAILURE = "the float64 golden differs from PyTorch"  # how verify.oracle's disagreements begin


def oracle_sample(case: Case) -> bool:
    """Whether the fuzz search compares this call's float64 golden with PyTorch (verify.oracle), when installed."""
    return zlib.crc32(case.id.encode()) % ORACLE_EVERY == 0


def fresh_seed() -> int:
    """A new seed for a run (printed and recorded, so the run can be repeated)."""
    import secrets
    return secrets.randbelow(2 ** 31)


def command_args(n: int, seed: int, socs: Sequence[str], ops: Sequence[str], auto_sync: str) -> str:
    """The `lossgrad verify` arguments that draw the same calls again."""
    args = f"--fuzz {n} --seed {seed} --soc {','.join(socs)}"
    if ops:
        args += " " + " ".join(f"--op {get_op(o).template}" for o in ops)
    return args + f" --auto-sync {auto_sync}"


def shrink_failures(results: Sequence, backend: str, limit: int, say: Callable[[str], None]) -> list[Shrunk]:
    """The first failure of each kind (op, SoC, signature), up to `limit` of them, shrunk."""
    from ..progress import muted
    from .run import run_case

    def judge(oracle: bool) -> Callable[[Case], str | None]:
        def fails(case: Case) -> str | None:
            with muted():
                r = run_case(case, backend, oracle)
            return signature(r.error) if r.failed else None  # a case not judged (undetermined) is no failure
        return fails

    out: list[Shrunk] = []
    seen: set[tuple[str, str, str]] = set()
    for r in results:
        if not r.failed or len(out) >= limit:
            continue
        kind = (r.case.op, r.case.soc, signature(r.error))
        if kind in seen:
            continue
        seen.add(kind)
        say(f"shrinking {r.case.id} ({kind[2]})...")
        try:  # a disagreement with PyTorch is shrunk with the oracle on
            out.append(shrink(r.case, judge(bool(r.error and r.error.startswith(ORACLE_FAILURE)))))
        except ValueError:  # it passed when run again: nothing reproducible to shrink
            say(f"{r.case.id} passed when run again; not shrunk")
    return out


def describe_shrunk(item: Shrunk, auto_sync: str) -> str:
    """A shrunk failure as the text report prints it: the call, the one-line Python and the case-table row."""
    c = item.case
    env = "" if auto_sync == "on" else " (with LOSSGRAD_TWIN_AUTO_SYNC=off)"
    return (f"SHRUNK {item.original.id} -> shapes {c.shapes}, dtypes {'/'.join(c.dtypes)}, {item.signature}, "
            f"{item.trials} runs, {item.seconds:.0f} s\n"
            f"  Python{env}, after `import lossgrad, lossgrad.verify, lossgrad.tiling`:\n    {python_call(c)}\n"
            f"  case table (lossgrad verify --cases FILE):\n"
            + "".join(f"    {line}\n" for line in csv_row(c).splitlines()))


def report_json(n: int, seed: int, socs: Sequence[str], ops: Sequence[str], auto_sync: str,
                shrunk: Sequence[Shrunk], oracle_checked: int) -> dict[str, object]:
    return {
        "calls_per_soc": n, "seed": seed, "socs": list(socs), "auto_sync": auto_sync,
        "torch_oracle_checked": oracle_checked,
        "command": "lossgrad verify " + command_args(n, seed, socs, ops, auto_sync),
        "shrunk": [{"original": s.original.id, "signature": s.signature, "trials": s.trials,
                    "python": python_call(s.case), "csv": csv_row(s.case)} for s in shrunk],
    }
