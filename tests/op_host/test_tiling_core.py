"""The C++ tiling core (op_host/tiling_core/lossgrad_tiling_core.cpp) as Python and CANN's TilingFunc both run it.

It is the only implementation of the tiling: lossgrad.tiling.plan calls it through lossgrad.tiling.native (C ABI in
op_host/tiling_capi/), and tests/python/tiling/test_tiling_fuzz.py checks its plans against the kernels'
invariants. Here: the native build (warnings-clean, cached by content, built from the project copy a wheel carries,
safe when processes build at once), the core's refusals (every one a TilingError with the core's reason, never a
crash), that kernel views get the caller's iteration space and divisor, and thread safety.
"""
from __future__ import annotations

import dataclasses
import math
import random
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from lossgrad import codegen

from lossgrad.dtypes import DType
from lossgrad.errors import ACLNN_ERR_INNER_TILING_ERROR, LossGradError
from lossgrad.registry import OPS, OutputShape, Reduction, get_op
from lossgrad.socs import SOCS, Fact
from lossgrad.tiling import cxx_tables, native, plan, problem_from_call
from lossgrad.tiling import data as td
from lossgrad.tiling.cxx_tables import CoreInputs
from lossgrad.validation import validate

REPO = Path(__file__).resolve().parents[2]
F32 = DType.FLOAT32
OP_IDS = {name: i for i, name in enumerate(OPS)}

pytestmark = pytest.mark.skipif(shutil.which(native.CXX) is None, reason=f"{native.CXX} is not installed")


def view(shape: tuple[int, ...], dtype: DType = F32) -> np.ndarray:
    return np.broadcast_to(np.zeros((), dtype.np_dtype), shape)


def inputs(op: str, shapes: dict[str, tuple[int, ...]], out_shape: tuple[int, ...], reduction: int = 2,
           beta: float = 1.0, soc: str = "Ascend910B1", ub: int | None = None, cores: int | None = None,
           op_id: int | None = None, dtype_value: int | None = None,
           logical: dict[str, tuple[int, ...]] | None = None) -> CoreInputs:
    """The Inputs CANN's adapter builds for a call (kernel input order), with overrides to make it invalid."""
    spec, s = OPS[op], SOCS[soc]
    dt = F32 if dtype_value is None else type("D", (), {"acl_enum": dtype_value})()
    ins = tuple((shapes[io.role], dt if i == 0 else F32) for i, io in enumerate(spec.kernel_inputs))
    return CoreInputs(op=OP_IDS[op] if op_id is None else op_id, inputs=ins, output=(out_shape, F32),
                      logical=None if logical is None else tuple(logical[io.role] for io in spec.kernel_inputs),
                      reduction=reduction, beta=beta, log_target=False,
                      core_num=s.cores if cores is None else cores,
                      ub_bytes=s.ub_kernel_bytes if ub is None else ub, npu_arch=s.arch.npu_arch)


def refused(ci: CoreInputs) -> native.TilingError:
    with pytest.raises(native.TilingError) as info:
        native.compute(ci)
    err = info.value
    assert isinstance(err, LossGradError) and err.code == ACLNN_ERR_INNER_TILING_ERROR
    return err


# -- the native build -----------------------------------------------------------------------------------------------

def _fresh_build(monkeypatch: pytest.MonkeyPatch, cache: Path) -> native.BuiltLibrary:
    monkeypatch.setenv("LOSSGRAD_CACHE", str(cache))
    return native.build()


def test_build_is_warnings_clean_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion", "-Werror"} <= set(native.CXXFLAGS)
    first = _fresh_build(monkeypatch, tmp_path)
    assert not first.cached and first.path.is_file() and first.path.is_relative_to(tmp_path)
    again = native.build()
    assert again.cached and again.path == first.path
    assert sorted(p.name for p in first.path.parent.iterdir() if p.name != ".lock") == [  # no leftovers
        first.path.name, first.path.name + ".sha256"]


def test_a_damaged_cached_library_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A truncated cached library (disk fault, copied cache) would crash the loader: it is rebuilt instead, as the
    twin's kernel libraries are (lossgrad.twin.build._loadable)."""
    first = _fresh_build(monkeypatch, tmp_path)
    size = first.path.stat().st_size
    with open(first.path, "r+b") as fh:
        fh.truncate(size // 2)
    again = native.build()
    assert again.path == first.path and not again.cached
    assert again.path.stat().st_size == size


def test_cache_key_covers_sources_and_generated_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _fresh_build(monkeypatch, tmp_path).path
    real = native._sources

    def edited(rel: str) -> dict[str, bytes]:
        files = real()
        files[rel] = files[rel] + b"\n// edited\n"
        return files

    for rel in (f"{native.CORE_DIR}/lossgrad_tiling_core.cpp", native.CAPI_SOURCE,
                f"{native.CORE_DIR}/{cxx_tables.TABLES_HEADER}", "op_kernel/lossgrad_tiling_data.h"):
        assert rel in real()
        monkeypatch.setattr(native, "_sources", lambda rel=rel: edited(rel))
        built = native.build()
        assert not built.cached and built.path != base, rel
    monkeypatch.setattr(native, "_sources", real)
    assert native.build().path == base


def test_builds_from_the_wheels_project_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed wheel has no checkout: the sources come from project_root(), the bundled copy."""
    bundle = tmp_path / "_project"
    shutil.copytree(REPO / "op_host", bundle / "op_host")
    (bundle / "op_kernel").mkdir()
    for name in codegen.WALK_HEADERS:  # the plan check's tile walk
        shutil.copy(REPO / "op_kernel" / name, bundle / "op_kernel")
    (bundle / native.CORE_DIR / "lossgrad_tiling_core.cpp").write_text(
        (REPO / native.CORE_DIR / "lossgrad_tiling_core.cpp").read_text() + "\n// the bundled copy\n")
    monkeypatch.setattr(native, "project_root", lambda: bundle)
    built = _fresh_build(monkeypatch, tmp_path / "cache")
    assert not built.cached
    files = native._sources()
    assert files[f"{native.CORE_DIR}/lossgrad_tiling_core.cpp"].endswith(b"// the bundled copy\n")


def test_concurrent_builds_share_one_library(tmp_path: Path) -> None:
    """Two processes building at once (pytest-xdist, verify workers) both load a complete library."""
    code = ("import sys; from lossgrad.tiling import native; b = native.build(); native.library(); "
            "print(b.path, b.cached)")
    env = {**__import__("os").environ, "LOSSGRAD_CACHE": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    paths = {o.split()[0] for o, _ in outs}
    assert len(paths) == 1
    assert sorted(o.split()[1] for o, _ in outs) in (["False", "True"], ["False", "False"])


def test_library_refuses_another_abi_version(monkeypatch: pytest.MonkeyPatch) -> None:
    native.library()
    monkeypatch.setattr(native, "_lib", None)
    monkeypatch.setattr(native, "ABI_VERSION", native.ABI_VERSION + 1)
    with pytest.raises(native.NativeBuildError, match="ABI version"):
        native.library()


def test_generated_tables_are_not_committed() -> None:
    assert not (REPO / native.CORE_DIR / cxx_tables.TABLES_HEADER).exists()
    assert not (REPO / "op_kernel" / "lossgrad_tiling_data.h").exists()
    header = cxx_tables.c_tables_header()
    assert "do not edit" in header and "kBufferPlans" in header


# -- refusals -------------------------------------------------------------------------------------------------------

SAME = {"grad": (4, 5), "self": (4, 5), "target": (4, 5)}

# (what, op, shapes, output shape, reduction, beta): calls lossgrad.validation refuses; the core, which CANN runs
# without Python's validation in front of it, must refuse them as well.
VALIDATION_REFUSES = [
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


@pytest.mark.parametrize("what,op,shapes,out_shape,reduction,beta", VALIDATION_REFUSES,
                         ids=[c[0] for c in VALIDATION_REFUSES])
def test_core_refuses_what_validation_refuses(what: str, op: str, shapes: dict, out_shape: tuple, reduction: int,
                                              beta: float) -> None:
    attrs = {a.name: beta for a in OPS[op].attrs if a.kernel_type == "Float"}  # the case's beta, where the op has one
    with pytest.raises(LossGradError):
        validate(op, *(view(shapes[r]) if r in shapes else None for r in (i.role for i in get_op(op).inputs)),
                 reduction, attrs)
    err = refused(inputs(op, shapes, out_shape, reduction, beta))
    assert err.status in (native.STATUS_INVALID, native.STATUS_UNSUPPORTED), (what, err)


CORE_REFUSES = [
    ("unknown op id -1", "unknown op id", dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5), op_id=-1)),
    ("unknown op id 4", "unknown op id", dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5),
                                              op_id=len(OPS))),
    ("dtype int8 (2)", "dtype 2", dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5), dtype_value=2)),
    ("dtype float64 (11)", "dtype 11", dict(op="mse_loss_backward", shapes=SAME, out_shape=(4, 5),
                                            dtype_value=11)),
    ("output shape is not the broadcast", "broadcast into the output",
     dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 6))),
    ("input does not broadcast into the output", "broadcast into the output",
     dict(op="mse_loss_backward", out_shape=(4, 5), shapes={"grad": (3, 5), "self": (4, 5), "target": (4, 5)})),
    ("input of higher rank than the output", "broadcast into the output",
     dict(op="smooth_l1_loss_backward", out_shape=(4, 5),
          shapes={"grad": (1, 4, 5), "self": (4, 5), "target": (4, 5)})),
    ("KL output is not self's shape", "self's shape",
     dict(op="kl_div_backward", out_shape=(3, 5), shapes={"grad": (4, 5), "self": (4, 5), "target": (4, 5)})),
    ("KL self/target do not broadcast", "not broadcastable",
     dict(op="kl_div_backward", out_shape=(4, 5), shapes={"grad": (4, 5), "self": (4, 5), "target": (3, 5)})),
    ("KL grad enlarges broadcast(self, target)", "grad must broadcast",
     dict(op="kl_div_backward", out_shape=(1, 5), shapes={"grad": (4, 5), "self": (1, 5), "target": (1, 5)})),
    ("UB budget below the fixed bytes", "below the fixed",
     dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5), ub=100)),
    ("UB budget below the buffer plan", "does not fit the UB budget",
     dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5), ub=4096)),
    # the garbage search's find: 0 cores admitted a column split of 3-wide float32 rows on 310P, which the plan check
    # then refused as a tiling bug (a row piece under one 32-byte block)
    ("no vector cores", "no vector cores",
     dict(op="soft_margin_loss_backward", shapes={"grad": (1, 1, 1, 2, 1, 1, 3), "self": (1, 3, 1, 2, 33, 33, 1),
                                                 "target": (1, 3, 1, 1, 33, 1, 3)},
          out_shape=(1, 3, 1, 2, 33, 33, 3), soc="Ascend310P3", cores=0)),
    ("kernel view larger than its logical shape", "kernel view",
     dict(op="l1_loss_backward", shapes=SAME, out_shape=(4, 5),
          logical={"grad": (1, 5), "self": (4, 5), "target": (4, 5)})),
]


@pytest.mark.parametrize("what,needle,kw", CORE_REFUSES, ids=[c[0] for c in CORE_REFUSES])
def test_core_refuses_invalid_inputs(what: str, needle: str, kw: dict) -> None:
    err = refused(inputs(**kw))
    assert err.status == native.STATUS_INVALID and needle in str(err), (what, str(err))


def test_python_side_refuses_what_the_abi_cannot_carry() -> None:
    """Negative dims and values beyond the C types are refused before the call, with the same exception."""
    for kw in (dict(shapes={"grad": (4, -5), "self": (4, 5), "target": (4, 5)}, out_shape=(4, 5)),
               dict(shapes=SAME, out_shape=(4, 5), cores=1 << 32), dict(shapes=SAME, out_shape=(4, 5), ub=-1)):
        assert refused(inputs("l1_loss_backward", **kw)).status == native.STATUS_INVALID


def test_a_huge_ub_budget_gives_a_dma_bounded_tile() -> None:
    """A terabyte of UB: the tile stops at the DMA limits (docs/tiling.md), far below tileLen's 32 bits."""
    res = native.compute(inputs("l1_loss_backward", {r: (1 << 20, 64) for r in SAME}, (1 << 20, 64), ub=1 << 40))
    f = td.unpack(res.data)
    assert f["tileLen"] // f["padElems"] <= td.DMA_MAX_BLOCK_COUNT and res.ub_bytes < 16 << 20


def test_core_refuses_spaces_beyond_its_limit() -> None:
    """Above 2^60 elements the core says kUnsupported instead of risking a 64-bit overflow."""
    big = {"grad": (1 << 31, 1 << 30), "self": (1 << 31, 1 << 30), "target": (1 << 31, 1 << 30)}
    assert refused(inputs("l1_loss_backward", big, (1 << 31, 1 << 30))).status == native.STATUS_UNSUPPORTED
    ok = {"grad": (1 << 30, 1 << 30), "self": (1,), "target": (1 << 30, 1)}
    assert native.compute(inputs("l1_loss_backward", ok, (1 << 30, 1 << 30))).block_dim >= 1


def test_mean_over_empty_divisor_is_refused_even_without_launch() -> None:
    """Python never tiles an empty L1 call (aclnn returns early); the core, which cannot know, refuses its mean."""
    shapes = {"grad": (0, 5), "self": (0, 5), "target": (0, 5)}
    refused(inputs("l1_loss_backward", shapes, (0, 5), reduction=int(Reduction.MEAN)))
    assert native.compute(inputs("l1_loss_backward", shapes, (0, 5), reduction=int(Reduction.SUM))).block_dim == 1


GARBAGE_SPACE_LIMIT = 1 << 28  # larger valid calls cost only the plan check's tile walk here (up to 0.8 s each);
# tests/python/tiling/test_tiling_fuzz.py tiles and checks 20,000 calls up to 2^33 elements


def _space(rng: random.Random) -> tuple[int, ...]:
    """A loop space of rank 0-8 and extents in {1, 2, 3, 5, 8, 33, 4097}, at most GARBAGE_SPACE_LIMIT elements."""
    while True:
        full = tuple(rng.choice((1, 2, 3, 5, 8, 33, 4097)) for _ in range(rng.randint(0, 8)))
        if math.prod(full) <= GARBAGE_SPACE_LIMIT:
            return full


def test_garbage_inputs_never_crash() -> None:
    """Random op ids, ranks, dims, dtypes, reductions, attributes and platform figures: a plan or a TilingError,
    never a crash (the process would die) or another exception."""
    rng = random.Random(7)
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(3000):
        # a valid call (same-rank broadcasting, valid enums and figures), then up to two fields replaced by garbage
        full = _space(rng)
        op = rng.randrange(len(OPS))
        shapes = [tuple(d if rng.random() < 0.7 else 1 for d in full) for _ in OPS[list(OPS)[op]].kernel_inputs]
        fields = dict(op=op, inputs=tuple((s, F32) for s in shapes), output=(full, F32), logical=None,
                      reduction=rng.randint(0, 2), beta=1.0, log_target=False, core_num=rng.choice((1, 48)),
                      ub_bytes=188416, npu_arch=rng.choice((0, 2201, 2002, 1001)))
        garbage = {
            "op": lambda: rng.choice((len(OPS), len(OPS) + 1, -1, 1 << 30)),
            "inputs": lambda: tuple((tuple(rng.choice((0, 1, 7, 1 << 40)) for _ in range(rng.randint(0, 9))),
                                     rng.choice((F32, type("D", (), {"acl_enum": rng.choice((2, 11, -1))})())))
                                    for _ in range(3)),
            "output": lambda: (tuple(rng.choice((0, 1, 7, 1 << 40)) for _ in range(rng.randint(0, 9))), F32),
            "logical": lambda: tuple(tuple(rng.choice((0, 1, 7)) for _ in range(rng.randint(0, 9)))
                                     for _ in range(3)),
            "reduction": lambda: rng.choice((3, 4, -1, 1 << 30)),
            "beta": lambda: rng.choice((0.0, -1.0, math.nan, math.inf, 1e300, 5e-324)),
            "log_target": lambda: True,
            "core_num": lambda: rng.choice((0, 1 << 31, (1 << 32) - 1)),
            "ub_bytes": lambda: rng.choice((0, 100, 4096, 1 << 40, (1 << 64) - 1)),
            "npu_arch": lambda: rng.choice((7, -1, 1 << 30)),
        }
        for name in rng.sample(sorted(garbage), rng.randint(0, 2)):
            fields[name] = garbage[name]()
        ci = CoreInputs(**fields)
        try:
            res = native.compute(ci)
        except native.TilingError as exc:
            assert exc.status in (native.STATUS_INVALID, native.STATUS_UNSUPPORTED) and str(exc)
            outcomes["refused"] += 1
            continue
        assert 1 <= res.block_dim <= min(max(1, ci.core_num), 65535) and len(res.data) == td.SIZE  # numBlocks <= 65535
        assert res.ub_bytes <= ci.ub_bytes
        outcomes["ok"] += 1
    assert outcomes["ok"] > 500 and outcomes["refused"] > 500, outcomes


# -- kernel views ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op,shapes,views,reduction", [
    # MSE mean divides by numel(self): a self whose broadcast dim the runner compacts keeps the caller's divisor
    ("mse_loss_backward", {"grad": (), "self": (4, 5), "target": (4, 5)},
     {"grad": (), "self": (1, 5), "target": (4, 5)}, "mean"),
    # KL: a target broadcast along dim 0 and compacted still gives the (4, 5) space self is reduced over
    ("kl_div_backward", {"grad": (4, 5), "self": (1, 5), "target": (4, 5)},
     {"grad": (4, 5), "self": (1, 5), "target": (1, 5)}, "batchmean"),
    ("kl_div_backward", {"grad": (4, 5), "self": (1, 5), "target": (4, 5)},
     {"grad": (1, 5), "self": (1, 5), "target": (1, 5)}, "sum"),
])
def test_kernel_views_keep_the_callers_space_and_divisor(op: str, shapes: dict, views: dict, reduction: str) -> None:
    call = validate(op, *(view(shapes[r]) if r in shapes else None for r in (i.role for i in get_op(op).inputs)),
                    reduction)
    whole = plan(problem_from_call(call)).fields
    compact = problem_from_call(call, views)
    assert compact.caller_shapes is not None
    got = plan(compact).fields
    rank = got["rank"]
    assert math.prod(got["dims"][:rank]) == math.prod(call.iter_shape) == math.prod(whole["dims"][:whole["rank"]])
    assert got["coef"] == whole["coef"] == float(np.float32(call.coefficient))
    # and without the caller's shapes the core sees another call (the reason Inputs::logical exists)
    blind = dataclasses.replace(compact, caller_shapes=None)
    try:
        other = plan(blind).fields
    except native.TilingError:
        return
    assert (other["coef"], math.prod(other["dims"][:other["rank"]])) != (got["coef"], math.prod(call.iter_shape))


# -- thread safety --------------------------------------------------------------------------------------------------

def test_core_is_thread_safe() -> None:
    """8 threads (ctypes releases the GIL during the call) get the sequential results."""
    rng = random.Random(11)
    cases = []
    for _ in range(400):
        full = tuple(rng.choice((1, 2, 3, 7, 64, 100, 4097)) for _ in range(rng.randint(1, 4)))
        shapes = {r: tuple(d if rng.random() < 0.7 else 1 for d in full) for r in ("grad", "self", "target")}
        op = rng.choice([n for n, o in OPS.items() if o.output_shape is OutputShape.BROADCAST_ALL])
        soc = rng.choice(list(SOCS))
        cases.append(inputs(op, shapes, full, soc=soc, cores=rng.choice((1, 8, 48))))
    sequential = [native.compute(c) for c in cases]
    with ThreadPoolExecutor(8) as pool:
        for _ in range(3):
            assert list(pool.map(native.compute, cases)) == sequential


def test_custom_platform_figures() -> None:
    """What the adapter passes for a part not in the SoC table (npu_arch 0, other core counts and UB budgets)."""
    call = validate("l1_loss_backward", *(view((64, 4096)) for _ in range(3)), "sum")
    for cores, ub in ((1, 65536), (7, 131072), (1024, 1 << 20)):
        arch = dataclasses.replace(call.soc.arch, npu_arch=0, ub_kernel_bytes=Fact(ub, "test", "none"))
        soc = dataclasses.replace(call.soc, arch=arch, vector_cores=Fact(cores, "test", "none"))
        p = plan(dataclasses.replace(problem_from_call(call), soc=soc))
        assert 1 <= p.block_dim <= cores and p.ub_bytes <= ub
