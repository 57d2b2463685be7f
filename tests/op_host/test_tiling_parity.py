"""The portable C++ tiling core (op_host/tiling_core/lossgrad_tiling_core.cpp) against lossgrad.tiling.plan.

The core is built once per session with g++ (-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror) in the msOpGen
package layout lossgrad.cann.op_host writes (op_host/tiling_core/ with the generated lossgrad_tiling_tables.h,
op_kernel/lossgrad_tiling_data.h), together with a small driver that reads cases from stdin. Seeded generated calls
(_parity_cases.py: every op, SoC, dtype combination the registry allows, reduction, attribute variant and broadcast
pattern, sizes up to 2^33 elements) are validated and planned in Python; the same calls, as the Inputs the CANN
adapter builds, go through the core in one process. Every plan must come back byte-identical (tiling data, block_dim,
tiling_key, workspace), and every call Python refuses (validation or plan) must be refused by the core.
"""
from __future__ import annotations

import collections
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from lossgrad.cann import op_host
from lossgrad.dtypes import DType
from lossgrad.errors import LossGradError
from lossgrad.registry import OPS, Reduction
from lossgrad.socs import SOCS
from lossgrad.tiling import data as td
from lossgrad.tiling import cxx_tables

import _parity_cases as pc

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CXX = shutil.which("g++")
CXXFLAGS = ("-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wshadow", "-Wconversion", "-pthread")

pytestmark = pytest.mark.skipif(CXX is None, reason="g++ is not installed")

CHUNKS = 4
CASES_PER_CHUNK = 3700      # ~ 3100 planned per chunk after validation rejections and skips: > 12000 in total
MIN_PLANNED_PER_CHUNK = 2600
SEED = 20250605

STATUS_INVALID, STATUS_UNSUPPORTED = 1, 2


@pytest.fixture(scope="session")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiling_core")
    op_host.write_host_files(root, [])  # op_host/tiling_core/: the core's sources and the generated tables
    (root / "op_kernel").mkdir()
    (root / "op_kernel" / "lossgrad_tiling_data.h").write_text(td.c_header())
    core_dir = root / "op_host" / "tiling_core"
    assert (core_dir / cxx_tables.TABLES_HEADER).is_file() and (core_dir / "lossgrad_tiling_core.cpp").is_file()
    exe = root / "parity_driver"
    cmd = [CXX, *CXXFLAGS, f"-I{core_dir}", str(HERE / "tiling_parity_driver.cpp"),
           str(core_dir / "lossgrad_tiling_core.cpp"), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return exe


def run_core(exe: Path, lines: list[str], threads: int = 0) -> list[list[str]]:
    args = [str(exe)] + (["--threads", str(threads)] if threads else [])
    proc = subprocess.run(args, input="".join(line + "\n" for line in lines), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert len(out) == len(lines)
    return [r.split(" ", 5) if r.startswith("ok ") else r.split(" ", 2) for r in out]


def _describe(case: pc.Case) -> str:
    soc = case.custom_soc or case.soc
    return (f"{case.op.name} [{case.tag}] shapes={case.shapes} compact={case.compact} "
            f"dtypes={ {r: d.label for r, d in case.dtypes.items()} } out_dtype={case.out_dtype} "
            f"reduction={case.reduction} attrs={case.attrs} soc={soc.name} cores={soc.cores} "
            f"ub={soc.ub_kernel_bytes} arch={soc.arch.npu_arch}")


def _field_diff(py: bytes, cxx_hex: str) -> str:
    try:
        a, b = td.unpack(py), td.unpack(bytes.fromhex(cxx_hex))
    except Exception as exc:  # noqa: BLE001 - a size mismatch is reported as such
        return f"(unpack failed: {exc})"
    return ", ".join(f"{k}: py {a[k]} c++ {b[k]}" for k in a if a[k] != b[k])


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_core_matches_python_tiling(driver: Path, chunk: int) -> None:
    cases = pc.generate(SEED + chunk, CASES_PER_CHUNK)
    outcomes = [pc.evaluate(c) for c in cases]
    compared = [(c, o) for c, o in zip(cases, outcomes) if o.kind != "skip"]
    results = run_core(driver, [o.line for _, o in compared])
    problems: list[str] = []
    seen: collections.Counter[str] = collections.Counter()
    for (case, outcome), got in zip(compared, results):
        if outcome.kind == "error":
            seen["error"] += 1
            if got[0] != "err":
                problems.append(f"Python refuses ({outcome.why}) but the core plans: {_describe(case)}")
            continue
        plan = outcome.plan
        assert plan is not None
        if got[0] != "ok":
            problems.append(f"core refuses ({' '.join(got[1:])}): {_describe(case)}")
            continue
        block_dim, key, workspace, size, data = int(got[1]), int(got[2]), int(got[3]), int(got[4]), got[5]
        if (block_dim, key, workspace, size, data) != (plan.block_dim, plan.tiling_key, plan.workspace_bytes,
                                                         len(plan.data), plan.data.hex()):
            problems.append(f"differs: block_dim {block_dim}/{plan.block_dim}, key {key}/{plan.tiling_key}, "
                            f"workspace {workspace}/{plan.workspace_bytes}, {_field_diff(plan.data, data)}: "
                            f"{_describe(case)}\n    {outcome.line}")
            continue
        f = plan.fields
        seen["planned"] += 1
        seen[f"op:{case.op.name}"] += 1
        seen[f"soc:{(case.custom_soc or case.soc).name}"] += 1
        seen[f"split:{f['splitMode']}"] += 1
        seen[f"key:{plan.tiling_key}"] += 1
        seen[f"rank:{f['rank']}"] += 1
        seen[f"dtype:{case.dtypes['grad'].label}"] += 1
        if len({d for d in case.dtypes.values()}) > 1:
            seen["mixed"] += 1
        if math.prod(f["dims"][:f["rank"]]) > 1 << 32:
            seen["above 2^32"] += 1
        if case.custom_soc is not None:
            seen["custom soc"] += 1
        if case.compact is not None:
            seen["kernel views"] += 1
    assert not problems, f"{len(problems)} of {len(compared)} cases differ; first ones:\n" + "\n".join(problems[:8])
    assert seen["planned"] >= MIN_PLANNED_PER_CHUNK, seen
    assert seen["error"] > 0, seen
    for name in OPS:
        assert seen[f"op:{name}"] > 0, name
    for soc in SOCS:
        assert seen[f"soc:{soc}"] > 0, soc
    for k in ("split:0", "split:1", "split:2", "key:0", "key:1", "key:2", "key:3", "rank:1", "rank:2", "rank:8",
              "dtype:float32", "dtype:float16", "dtype:bfloat16", "mixed", "above 2^32", "custom soc",
              "kernel views"):
        assert seen[k] > 0, (k, seen)


def test_core_is_thread_safe(driver: Path) -> None:
    """8 threads computing the same cases concurrently get the sequential results (the driver compares)."""
    cases = pc.generate(SEED + 100, 600, rank8_share=0.0)
    lines = [o.line for o in (pc.evaluate(c) for c in cases) if o.kind != "skip"]
    assert len(lines) > 400
    run_core(driver, lines, threads=8)


# ---------------------------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------------------------

def _line(op: str, shapes: dict[str, tuple[int, ...]], out_shape: tuple[int, ...], reduction: int = 2,
          beta: float = 1.0, dtype: DType = DType.FLOAT32, soc: str = "Ascend910B1", ub: int | None = None,
          op_id: int | None = None, dtype_value: int | None = None) -> str:
    s = SOCS[soc]
    line = pc.to_line(OPS[op], shapes, {r: dtype for r in shapes}, out_shape, dtype, reduction, beta, False,
                      s.cores, s.ub_kernel_bytes if ub is None else ub, s.arch.npu_arch, op_id=op_id)
    if dtype_value is not None:  # replace the first input's dtype number
        parts = line.split(" ")
        parts[2] = str(dtype_value)
        line = " ".join(parts)
    return line


def _python_refuses(op: str, shapes: dict[str, tuple[int, ...]], reduction: int, attrs: dict | None = None) -> bool:
    args = [pc.view(shapes[r], DType.FLOAT32) for r in ("grad", "self", "target")]
    try:
        from lossgrad.validation import validate
        validate(op, *args, reduction, attrs or {})
    except LossGradError:
        return True
    return False


SAME = {"grad": (4, 5), "self": (4, 5), "target": (4, 5)}

# (what, op, shapes, output shape, reduction, beta): calls lossgrad.validation refuses
PYTHON_REFUSES = [
    ("L1 batchmean", "l1_loss_backward", SAME, (4, 5), int(Reduction.BATCHMEAN), 1.0),
    ("MSE reduction 7", "mse_loss_backward", SAME, (4, 5), 7, 1.0),
    ("SmoothL1 reduction -1", "smooth_l1_loss_backward", SAME, (4, 5), -1, 1.0),
    ("SmoothL1 beta < 0", "smooth_l1_loss_backward", SAME, (4, 5), 1, -0.5),
    ("SmoothL1 beta NaN", "smooth_l1_loss_backward", SAME, (4, 5), 1, math.nan),
    ("rank 9", "l1_loss_backward", {"grad": (1,) * 9, "self": (4, 5), "target": (4, 5)}, (4, 5), 2, 1.0),
    ("KL mean over an empty target broadcast", "kl_div_backward",
     {"grad": (3, 0), "self": (3, 1), "target": (3, 0)}, (3, 1), int(Reduction.MEAN), 1.0),
    ("KL batchmean over dim0 == 0", "kl_div_backward",
     {"grad": (0, 4), "self": (1, 4), "target": (0, 4)}, (1, 4), int(Reduction.BATCHMEAN), 1.0),
]


@pytest.mark.parametrize("what,op,shapes,out_shape,reduction,beta", PYTHON_REFUSES, ids=[c[0] for c in PYTHON_REFUSES])
def test_core_refuses_what_python_refuses(driver: Path, what: str, op: str, shapes: dict, out_shape: tuple,
                                          reduction: int, beta: float) -> None:
    attrs = {"beta": beta} if op == "smooth_l1_loss_backward" else {}
    assert _python_refuses(op, shapes, reduction, attrs), what
    (got,) = run_core(driver, [_line(op, shapes, out_shape, reduction, beta)])
    assert got[0] == "err" and int(got[1]) == STATUS_INVALID, (what, got)


def test_core_refuses_what_the_plan_refuses(driver: Path) -> None:
    """A UB budget below the buffer plan (Python: AssertionError), or one whose tile length needs more than 32 bits
    (Python: struct.error when packing)."""
    import dataclasses
    import struct

    from lossgrad.socs import Fact
    from lossgrad.tiling import plan, problem_from_call
    from lossgrad.validation import validate

    call = validate("l1_loss_backward", *(pc.view((4, 5), DType.FLOAT32) for _ in range(3)), "sum")
    for ub, exc in ((4096, AssertionError), (1 << 40, struct.error)):
        arch = dataclasses.replace(call.soc.arch, ub_kernel_bytes=Fact(ub, "test", "none"))
        problem = dataclasses.replace(problem_from_call(call), soc=dataclasses.replace(call.soc, arch=arch))
        with pytest.raises(exc):
            plan(problem)
        (got,) = run_core(driver, [_line("l1_loss_backward", SAME, (4, 5), ub=ub)])
        assert got[0] == "err" and int(got[1]) == STATUS_INVALID, (ub, got)


CORE_REFUSES = [
    ("unknown op id -1", dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5), op_id=-1)),
    ("unknown op id 4", dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5), op_id=len(OPS))),
    ("dtype int8 (2)", dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5), dtype_value=2)),
    ("dtype float64 (11)", dict(op="mse_loss_backward", shapes=SAME, out_shape=(4, 5), dtype_value=11)),
    ("output shape is not the broadcast", dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 6))),
    ("input does not broadcast into the output", dict(op="mse_loss_backward", out_shape=(4, 5),
                                                      shapes={"grad": (3, 5), "self": (4, 5), "target": (4, 5)})),
    ("input of higher rank than the output", dict(op="smooth_l1_loss_backward", out_shape=(4, 5),
                                                  shapes={"grad": (1, 4, 5), "self": (4, 5), "target": (4, 5)})),
    ("KL output is not self's shape", dict(op="kl_div_backward", out_shape=(3, 5),
                                          shapes={"grad": (4, 5), "self": (4, 5), "target": (4, 5)})),
    ("KL self/target do not broadcast", dict(op="kl_div_backward", out_shape=(4, 5),
                                            shapes={"grad": (4, 5), "self": (4, 5), "target": (3, 5)})),
    ("KL grad enlarges broadcast(self, target)", dict(op="kl_div_backward", out_shape=(1, 5),
                                                     shapes={"grad": (4, 5), "self": (1, 5), "target": (1, 5)})),
    ("negative dim", dict(op="l1_loss_backward", out_shape=(4, -5),
                          shapes={"grad": (4, -5), "self": (4, -5), "target": (4, -5)})),
    ("UB budget below the fixed bytes", dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5), ub=512)),
]


@pytest.mark.parametrize("what,kw", CORE_REFUSES, ids=[c[0] for c in CORE_REFUSES])
def test_core_refuses_invalid_inputs(driver: Path, what: str, kw: dict) -> None:
    (got,) = run_core(driver, [_line(**kw)])
    assert got[0] == "err" and int(got[1]) == STATUS_INVALID and got[2], (what, got)


def test_core_refuses_spaces_beyond_its_limit(driver: Path) -> None:
    """Above 2^60 elements the core says kUnsupported instead of risking a 64-bit overflow."""
    big = {"grad": (1 << 31, 1 << 30), "self": (1 << 31, 1 << 30), "target": (1 << 31, 1 << 30)}
    (got,) = run_core(driver, [_line("l1_loss_backward", big, (1 << 31, 1 << 30))])
    assert got[0] == "err" and int(got[1]) == STATUS_UNSUPPORTED, got
    ok = {"grad": (1 << 30, 1 << 30), "self": (1,), "target": (1 << 30, 1)}
    (got,) = run_core(driver, [_line("l1_loss_backward", ok, (1 << 30, 1 << 30))])
    assert got[0] == "ok", got


def test_mean_over_empty_divisor_is_refused_even_without_launch(driver: Path) -> None:
    """Python never tiles an empty L1 call (aclnn returns early); the core, which cannot know, refuses its mean."""
    shapes = {"grad": (0, 5), "self": (0, 5), "target": (0, 5)}
    (got,) = run_core(driver, [_line("l1_loss_backward", shapes, (0, 5), reduction=int(Reduction.MEAN))])
    assert got[0] == "err" and int(got[1]) == STATUS_INVALID, got
    (got,) = run_core(driver, [_line("l1_loss_backward", shapes, (0, 5), reduction=int(Reduction.SUM))])
    assert got[0] == "ok" and int(got[1]) == 1, got  # an empty output still launches one core


def test_generated_tables_are_not_committed() -> None:
    assert not (REPO / "op_host" / "tiling_core" / cxx_tables.TABLES_HEADER).exists()
    header = cxx_tables.c_tables_header()
    assert "do not edit" in header and "kBufferPlans" in header
