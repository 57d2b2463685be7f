"""The plan check (op_host/tiling_core/lossgrad_plan_check.cpp): every plan the tiling core makes is proved safe
before it can launch, walking each core's tiles with the kernels' own tile walk (op_kernel/tile_walk.h).

- Exhaustively over a small space (every broadcast pattern of the three inputs over ranks 0-4, extents in {1, 2, 3, 5,
  16, 17, 33}, every op, default SoC, dtype width and two UB budgets; a C++ driver calls the core directly): no plan
  fails it. Randomly over ranks up to 8: every plan tests/python/tiling/test_tiling_fuzz.py makes passes through it.
- It has teeth: the same sweep built with a deliberately broken walk (tile_walk.h LOSSGRAD_WALK_MUTANT) fails, and
  altered plans (core ranges moved by one unit of elements) are refused through the C ABI (lossgrad_tiling_check);
  the fuzz search catches the same broken walks in the kernels (tests/python/verify/test_fuzz.py).
"""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from lossgrad.registry import OPS, ROLES, get_op
from lossgrad.socs import VERIFY_DEFAULT_SOCS, get_soc
from lossgrad.tiling import cxx_tables, native, plan, problem_from_call
from lossgrad.tiling import data as td
from lossgrad.validation import validate

pytestmark = pytest.mark.skipif(shutil.which(native.CXX) is None, reason=f"{native.CXX} is not installed")

DRIVER = Path(__file__).with_name("cxx") / "plan_check_sweep.cpp"
EXTENTS = (1, 2, 3, 5, 16, 17, 33)
# The small space rarely needs a second core (16 KB of output a core): these extents make every split multi-core.
WIDE_EXTENTS = (1, 7, 64, 129, 1000, 4097)
F32, F16 = 0, 1  # ge::DataType numbers
MIXES = ((F32,) * 4, (F16,) * 4, (F16, F16, F16, F32), (F32, F32, F32, F16), (F16, F32, F16, F32))
BUDGETS = (0, 16 * 1024)  # the SoC's, and one that makes tiles of a few hundred elements


def _build(directory: Path, mutant: int = 0) -> Path:
    """The sweep driver against the tiling core's sources as native.build() compiles them."""
    for rel, content in native._sources().items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    exe = directory / "sweep"
    core = directory / native.CORE_DIR
    cmd = [native.CXX, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion", "-Werror",
           f"-DLOSSGRAD_WALK_MUTANT={mutant}", f"-I{core}", str(DRIVER), *map(str, sorted(core.glob("*.cpp"))),
           "-o", str(exe)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe


def _spec(extents=EXTENTS, socs=VERIFY_DEFAULT_SOCS, mixes=MIXES, budgets=BUDGETS, max_rank: int = 4,
          max_elements: int = 1 << 24) -> str:
    roles = {r.name: i for i, r in enumerate(ROLES)}  # 0 grad, 1 self, 2 target, then the optional roles
    lines = [f"{len(extents)} " + " ".join(map(str, extents)), str(len(OPS))]
    lines += [f"{i} {len(op.kernel_inputs)} " + " ".join(str(roles[io.role]) for io in op.kernel_inputs)
              for i, op in enumerate(OPS.values())]
    lines.append(str(len(socs)))
    lines += [f"{get_soc(s).cores} {get_soc(s).ub_kernel_bytes} {get_soc(s).arch.npu_arch}" for s in socs]
    lines.append(str(len(mixes)))
    lines += [" ".join(map(str, m)) for m in mixes]
    lines += [str(len(budgets)), " ".join(map(str, budgets)), f"{max_rank} {max_elements}"]
    return "\n".join(lines) + "\n"


def _sweep(exe: Path, spec: str) -> tuple[dict[str, int], list[str]]:
    run = subprocess.run([str(exe)], input=spec, capture_output=True, text=True, timeout=600)
    lines = run.stdout.strip().splitlines()
    words = lines[-1].split()
    counts = {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}
    assert run.returncode == (0 if counts["failed"] == 0 else 1), run.stderr
    return counts, lines[:-1]


def test_every_plan_of_the_small_space_passes(tmp_path: Path) -> None:
    exe = _build(tmp_path)
    counts, failures = _sweep(exe, _spec())
    assert counts["failed"] == 0, "\n".join(failures)
    # rank <= 4: 1 + 8*7 + 64*7 + 512*7 + 4096*7 shapes, x every op (twice for one with optional inputs: absent and
    # present) x 5 SoCs x 5 mixes x 2 budgets (KL refuses some)
    variants = sum(2 if len(op.inputs) > 3 else 1 for op in OPS.values())
    assert counts["planned"] > 5_000_000 and counts["planned"] + counts["refused"] == 32_761 * variants * 5 * 5 * 2
    counts, failures = _sweep(exe, _spec(WIDE_EXTENTS, max_rank=3, max_elements=1 << 22))
    assert counts["failed"] == 0, "\n".join(failures)
    assert counts["planned"] > 100_000


@pytest.mark.parametrize("mutant, extents, what", [
    (1, EXTENTS, "span runs of loop dim"),        # tiles span where the output's rows do not follow one stride
    (2, WIDE_EXTENTS, "split: part 1 covers"),   # every core after the first starts one unit early
    (3, (1, 2, 3, 8, 24), "packed tile"),        # packed rows whatever the output's row stride (16-bit in, f32 out)
    (4, WIDE_EXTENTS, "passes the row's end"),   # the same-shape path's walk (StreamWalk) one element long
])
def test_a_broken_walk_fails_the_check(tmp_path: Path, mutant: int, extents: tuple[int, ...], what: str) -> None:
    counts, failures = _sweep(_build(tmp_path, mutant), _spec(extents, max_rank=3, max_elements=1 << 22))
    assert counts["failed"] > 0 and any(what in line for line in failures), failures[:3]


def _call(op: str, shapes, soc: str, dtype=np.float32, reduction="sum", **attrs):
    arrays = [np.broadcast_to(np.zeros((), dtype), s) for s in shapes]
    return validate(op, *arrays, *get_op(op).absent_optional, reduction, attrs, soc=soc)


# Plans of every split: flat (rank 1 and rows), column, KL to rows, to a column, two-stage to one element.
PLANS = [
    ("mse_loss_backward", ((), (300, 77), (300, 77)), {}),
    ("l1_loss_backward", ((), (10 ** 6 + 3,), (10 ** 6 + 3,)), {}),
    ("mse_loss_backward", ((64, 4096), (64, 4096), (4096,)), {}),
    ("kl_div_backward", ((), (1, 4096), (64, 4096)), {"log_target": False}),
    ("kl_div_backward", ((), (1000, 1), (1000, 1000)), {"log_target": False}),
    ("kl_div_backward", ((), (1,), (512, 1024)), {"log_target": False}),
]


@pytest.mark.parametrize("soc", VERIFY_DEFAULT_SOCS)
@pytest.mark.parametrize("op, shapes, attrs", PLANS, ids=[f"{p[0]}{p[1][1]}" for p in PLANS])
def test_core_ranges_moved_by_one_unit_are_refused(op: str, shapes, attrs, soc: str) -> None:
    call = _call(op, shapes, soc, **attrs)
    problem = problem_from_call(call)
    p = plan(problem)
    inputs = cxx_tables.core_inputs(problem)
    native.check(inputs, p.data, p.workspace_bytes)  # the plan as made is safe
    f = dict(p.fields)
    unit = f["unitElems"]
    for field, delta in (("splitTotal", unit), ("splitTotal", -unit)):
        altered = dict(f, **{field: f[field] + delta})  # the last core's range ends one unit late, or early
        with pytest.raises(native.TilingError, match="safety check"):
            native.check(inputs, td.pack(altered), p.workspace_bytes)
    if f["segments"] > 1:  # the two-stage sum's partials need their workspace
        with pytest.raises(native.TilingError, match="workspace"):
            native.check(inputs, p.data, p.workspace_bytes - 32)


def test_a_plan_beyond_its_inputs_is_refused() -> None:
    call = _call("mse_loss_backward", ((), (8, 33), (8, 33)), "Ascend910B1")
    problem = problem_from_call(call)
    p = plan(problem)
    f = dict(p.fields)
    dims = list(f["dims"])
    dims[0] += 1  # one row more than self and target have
    with pytest.raises(native.TilingError, match="reaches element"):
        native.check(cxx_tables.core_inputs(problem), td.pack(dict(f, dims=tuple(dims))), p.workspace_bytes)


@pytest.mark.parametrize("field, value, what", [
    ("memDims", 0x0, "not an order"),        # both memory positions name loop dim 0
    ("memDims", 0x210, "not an order"),      # a third position beyond rank 2
    ("present", 1 << 2, "beyond rank"),      # gradOutput has a loop dim 2 of a rank-2 loop
    ("present", 1 << 8 * len(td.STRIDE_ROLES), "beyond the output"),  # an operand after the output
])
def test_a_malformed_stride_encoding_is_refused(field: str, value: int, what: str) -> None:
    """The struct sends presence bits and the memory order instead of strides (tile_walk.h LoopStrides): a plan
    whose encoding does not describe its loop is refused before the kernels would read an unset stride."""
    call = _call("mse_loss_backward", ((), (8, 33), (33,)), "Ascend910B1")
    problem = problem_from_call(call)
    p = plan(problem)
    f = dict(p.fields)
    assert f["rank"] == 2 and f["memDims"] == 0x10
    altered = dict(f, **{field: value | (f[field] if field == "present" else 0)})
    with pytest.raises(native.TilingError, match=what):
        native.check(cxx_tables.core_inputs(problem), td.pack(altered), p.workspace_bytes)


def test_the_check_walks_every_tile_up_to_its_budget_and_says_when_it_stops() -> None:
    import time

    call = _call("mse_loss_backward", ((), (1 << 31,), (1 << 31,)), "Ascend910B1")
    t0 = time.perf_counter()
    p = plan(problem_from_call(call))  # 2^31 elements, ~280k tiles walked
    assert time.perf_counter() - t0 < 2.0 and p.check_complete and not p.notes
    # 2^60 elements: every split-level fact, and each core's first 2^24 / 48 tiles
    call = _call("l1_loss_backward", ((1 << 30, 1 << 30), (1,), (1 << 30, 1)), "Ascend910B1")
    t0 = time.perf_counter()
    p = plan(problem_from_call(call))
    assert time.perf_counter() - t0 < 5.0
    assert not p.check_complete and any("walk budget" in n for n in p.notes)
