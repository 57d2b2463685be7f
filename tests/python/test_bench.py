"""`lossgrad bench` on the twin: modelled time, bound pipe and % of roofline for ours and aclnn's composition on
every default SoC; --shapes, --trace (Chrome trace JSON) and --plot (the [plot] extra)."""
from __future__ import annotations

import json
import os
import stat
import sys
from typing import Any
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lossgrad import bench
from lossgrad.cli import main
from lossgrad.registry import OPS, OutputShape
from lossgrad.socs import VERIFY_DEFAULT_SOCS

PIPES = {"MTE2", "MTE3", "V", "S", "latency"}
SMALL = bench.MIN_ELEMENTS * 8
# one op of each output-shape kind (the broadcast of all inputs; self's shape, summing over broadcast axes)
SAMPLE = [next(name for name, op in OPS.items() if op.output_shape is kind) for kind in OutputShape]


@pytest.mark.parametrize("soc", VERIFY_DEFAULT_SOCS)
def test_bench_models_ours_and_aclnn_on_every_default_soc(soc: str) -> None:
    rows = bench.run(SAMPLE, SMALL, soc)
    assert {r.scenario for r in rows} >= {"same shapes", "target row-broadcast", "grad column-broadcast"}
    for r in rows:
        d = r.as_dict()
        for side in ("ours", "aclnn_composition"):
            s = d[side]
            assert s["modelled_us"] > 0 and s["bound"] in PIPES
            assert 0 < s["pct_roofline"] <= 100.0 + 1e-9  # never faster than the call's memory roofline
        assert r.aclnn.launches == len(r.aclnn.passes)
        if any(p.startswith("BroadcastTo") for p in r.aclnn.passes):  # more bytes and launches than one kernel
            assert r.aclnn.launches >= 2
            assert r.aclnn.time_us > r.ours.time_us
            assert r.aclnn.gm_bytes > r.ours.gm_bytes
    assert any(p.startswith("BroadcastTo") for r in rows for p in r.aclnn.passes)


def test_aclnn_casts_are_separate_launches() -> None:
    rows = bench.run(["l1_loss_backward"], SMALL, "Ascend910B1", grad_dtype=bench.DType.FLOAT16)
    same = next(r for r in rows if r.scenario == "same shapes")
    assert any(p.startswith("Cast(grad") for p in same.aclnn.passes)
    assert same.aclnn.launches == len(same.aclnn.passes) >= 2
    assert same.ours.time_us < same.aclnn.time_us


def test_bench_shapes_and_json() -> None:
    r = CliRunner().invoke(main, ["bench", "--op", "l1", "--shapes", "();(64,4096);(4096,)", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)  # progress lines go to stderr
    (rows,) = out.values()
    assert len(rows) == 1 and rows[0]["shapes"] == [[], [64, 4096], [4096]]
    assert rows[0]["ours"]["modelled_us"] >= rows[0]["roofline_us"] > 0
    # every modelled time carries its regime's error band, and % of roofline the same band (docs/timing.md)
    for side in ("ours", "aclnn_composition"):
        s = rows[0][side]
        lo, hi = s["band_us"]
        assert lo <= s["modelled_us"] <= hi and lo > 0
        assert s["regime"] in ("latency", "mixed", "bandwidth")
        plo, phi = s["pct_roofline_band"]
        assert plo <= s["pct_roofline"] <= phi


@pytest.mark.parametrize("bad", ["(2,3)", "();(2,x);(2,)", "(2);(3)"])
def test_bench_refuses_malformed_shapes(bad: str) -> None:
    r = CliRunner().invoke(main, ["bench", "--shapes", bad])
    assert r.exit_code == 2, r.output
    assert "--shapes" in r.output


def test_bench_trace_is_chrome_trace_json(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    r = CliRunner().invoke(main, ["bench", "--op", "mse", "--soc", "Ascend910B1,Ascend310P3", "--elements",
                                  str(SMALL), "--trace", str(path)])
    assert r.exit_code == 0, r.output
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    assert spans and all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)
    # one track per core and pipe: thread names are pipes, process names name the SoC and core
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
    assert any("Ascend910B1" in n for n in procs.values()) and any("Ascend310P3" in n for n in procs.values())
    pipes = {e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert {"MTE2", "MTE3", "V"} <= pipes
    assert all(e["pid"] in procs for e in spans)


def test_bench_plot_without_matplotlib_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    r = CliRunner().invoke(main, ["bench", "--op", "l1", "--elements", str(SMALL), "--plot", str(tmp_path / "p.png")])
    assert r.exit_code == 1
    assert "[plot]" in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "p.png").exists()


def test_bench_plot_writes_the_chart(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "roof.png"
    r = CliRunner().invoke(main, ["bench", "--op", "l1", "--elements", str(SMALL), "--plot", str(path)])
    assert r.exit_code == 0, r.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_table_names_the_bound_and_roofline() -> None:
    r = CliRunner().invoke(main, ["bench", "--op", "l1", "--elements", str(SMALL), "--soc", "default"])
    assert r.exit_code == 0, r.output
    for soc in VERIFY_DEFAULT_SOCS:
        assert f"{soc}: float32" in r.output
    assert "%roof" in r.output and "bound" in r.output


def test_stress_rows_pair_each_case_with_its_same_shape_call() -> None:
    rows = bench.run_stress(["l1"], "Ascend910B1")
    assert len(rows) == 2 and rows[1].scenario.strip().startswith("same-shape call")
    assert rows[0].elements == rows[1].elements == 256 * 4096
    np.testing.assert_equal(rows[0].ours.gm_bytes, rows[1].ours.gm_bytes)


# -- issue 27: bench's edges ---------------------------------------------------------------------------------------

def _bench(*args: str) -> "Any":
    return CliRunner().invoke(main, ["bench", *args])


@pytest.mark.parametrize("args,status,needle", [
    (["--plot", "chart.xyz"], 2, "matplotlib cannot write .xyz charts"),
    (["--trace", "no/such/dir/t.json"], 1, "--trace no/such/dir/t.json: directory no/such/dir does not exist"),
    (["--trace", "."], 2, "is a directory"),
    (["--scenarios", "stress", "--shapes", "();(4,);(4,)"], 2, "drop --scenarios"),
    (["--shapes", "();(4,);(4,)", "--elements", "8192"], 2, "--elements sizes the default scenarios"),
    (["--scenarios", "stress", "--reduction", "sum"], 2, "the stress cases fix their own"),
    (["--reps", "5"], 2, "--reps"),
    (["--backend", "sim", "--shapes", "();(4,);(4,)"], 2, "--shapes: twin options"),
    (["--trace-zero-length"], 2, "give --trace too"),
    (["--scenarios", "training", "--elements", "8192"], 2, "stress/training fix their own sizes"),
    (["--scenarios", "training", "--reduction", "sum"], 2, "the training cases run reduction none"),
    (["--plot", "chart.png", "--no-aclnn"], 2, "drop --no-aclnn"),
    (["--backend", "npu", "--no-aclnn"], 2, "--aclnn/--no-aclnn: twin options"),
])
def test_bench_refuses_before_running(args: list[str], status: int, needle: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad outputs and options that would be silently ignored are refused before anything runs (nothing compiled,
    no progress line)."""
    if "chart.xyz" in args:
        pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    r = _bench("--op", "l1", *args)
    assert r.exit_code == status, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.output


def test_bench_refuses_a_call_that_launches_nothing() -> None:
    r = _bench("--shapes", "();(0,);(0,)")
    assert r.exit_code == 2 and "launches no kernel" in r.output and "l1_loss_backward" in r.output, r.output
    assert "bench 1/" not in r.output


def test_bench_names_the_op_that_refuses_before_running_any() -> None:
    r = _bench("--shapes", "(4,4);(4,);(4,)")  # KL refuses a gradOutput larger than broadcast(self, target)
    assert r.exit_code == 2, r.output
    assert "kl_div_backward refuses (4, 4) (4,) (4,) on Ascend910B1: [161002" not in r.output  # message is one line
    (line,) = r.output.strip().splitlines()
    assert "[161002 ACLNN_ERR_PARAM_INVALID] kl_div_backward refuses (4, 4) (4,) (4,) on Ascend910B1" in line
    assert "bench 1/" not in r.output


def test_bench_dtype_and_reduction_reach_the_default_scenarios() -> None:
    r = _bench("--op", "mse", "--elements", str(SMALL), "--dtype", "float16", "--reduction", "sum", "--json")
    assert r.exit_code == 0, r.output
    sections = json.loads(r.stdout)
    assert list(sections) == [f"Ascend910B1: float16, {SMALL} elements, reduction sum"]
    (rows,) = sections.values()
    assert {tuple(row["dtypes"]) for row in rows} == {("float16",) * 3} and len(rows) == 3


def test_bench_progress_names_the_step(tmp_path: Path) -> None:
    r = _bench("--op", "l1", "--elements", str(SMALL))
    assert r.exit_code == 0, r.output
    steps = [ln for ln in r.output.splitlines() if ln.startswith("lossgrad: bench ")]
    assert len(steps) == 12  # 3 scenarios x 2 dtype sections x (ours, aclnn)
    assert steps[0] == f"lossgrad: bench 1/12: Ascend910B1 l1_loss_backward same shapes: ours ({SMALL:,} elements)"
    assert steps[1].startswith("lossgrad: bench 2/12: Ascend910B1 l1_loss_backward same shapes: aclnn composition")


def test_bench_trace_goes_through_a_symlink_with_the_usual_mode(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    old = os.umask(0o022)
    try:
        r = _bench("--op", "mse", "--elements", str(SMALL), "--trace", str(link))
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    events = json.loads(target.read_text())["traceEvents"]
    assert events and all(e["dur"] > 0 for e in events if e.get("ph") == "X")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]  # no temporary left


def test_bench_trace_keeps_zero_length_events_on_request() -> None:
    rows = bench.run(["mse"], SMALL, "Ascend910B1")
    short = [e for e in bench.trace_events(rows) if e.get("ph") == "X"]
    full = [e for e in bench.trace_events(rows, zero_length=True) if e.get("ph") == "X"]
    assert all(e["dur"] > 0 for e in short)
    assert any(e["dur"] == 0 for e in full) and len(full) > len(short)
    assert sum(e["dur"] for e in full) == sum(e["dur"] for e in short)


def test_the_roofline_chart_names_and_pairs_every_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chart for a design review: each case numbered at both of its points (coinciding points share one label),
    ours joined to aclnn's composition, a marker per SoC, a colour per op, roofline colours no point uses."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    rows = bench.run(SAMPLE, SMALL, "Ascend910B1") + bench.run(SAMPLE, SMALL, "Ascend310P3")
    figures = []
    monkeypatch.setattr(plt, "close", lambda fig: figures.append(fig))
    bench.plot_roofline(rows, str(tmp_path / "r.png"))
    (fig,) = figures
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    named = sorted(int(n) for label in labels for n in label.split(","))
    assert set(named) == set(range(1, len(rows) + 1))  # every case named at its point(s)
    joins = [ln for ln in ax.lines if len(ln.get_xdata()) == 2 and ln.get_label().startswith("_")]
    assert len(joins) == len(rows)
    roofs = [ln for ln in ax.lines if ln.get_label().startswith("roofline")]
    assert len(roofs) == 2 and len({ln.get_color() for ln in roofs}) == 2
    point_colours = {tuple(np.round(c, 3)) for coll in ax.collections for c in coll.get_facecolor()
                     if tuple(np.round(c, 3)) != (1.0, 1.0, 1.0, 1.0)}
    from matplotlib.colors import to_rgba
    assert not {tuple(np.round(to_rgba(ln.get_color()), 3)) for ln in roofs} & point_colours
    markers = {coll.get_paths()[0].vertices.shape for coll in ax.collections}
    assert len(markers) == 2  # circles and squares: one marker per SoC
    key = "".join(t.get_text() for t in fig.texts)
    assert "kl_div self broadcast (KL sums back)  [Ascend310P3" in key and "x" in key
    plt.close(fig)


def test_outputs_write_special_files_as_they_are(tmp_path: Path) -> None:
    """`--trace /dev/stdout` (as root it used to replace /dev/stdout with a regular file): a FIFO stands in here."""
    import threading

    from lossgrad.outputs import check_target, write_replace

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    check_target(str(fifo), "--trace")
    write_replace(str(fifo), lambda p: Path(p).write_text("{}"))
    reader.join(timeout=10)
    assert got == ["{}"] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_failed_output_names_the_users_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from lossgrad.outputs import write_replace

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as info:
        write_replace(str(tmp_path / "t.json"), lambda p: Path(p).write_text("{}"))
    assert info.value.filename == str(tmp_path / "t.json") and info.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []


def test_training_cases_cover_every_dtype_shape_and_pattern_the_op_takes() -> None:
    """--scenarios training: both training shapes, same shapes / row-broadcast target / scalar gradOutput, in each
    dtype the op supports on the SoC (bfloat16 on A2 and 950 only; KlDivTarget nowhere on 310P/910)."""
    from lossgrad.dtypes import DType
    from lossgrad.socs import get_soc
    from lossgrad.validation import shapes_accepted
    for soc in VERIFY_DEFAULT_SOCS:
        arch = get_soc(soc).arch.npu_arch
        cases = bench.training_cases(None, soc)
        for name, op in OPS.items():
            mine = [c for c in cases if c.op is op]
            dtypes = {c.dtypes for c in mine}
            assert dtypes == {(d,) * 3 for d in op.supported_dtypes(arch)}, (soc, name)
            for d in dtypes:
                scen = {c.scenario: c.shapes for c in mine if c.dtypes == d}
                # where aclnn refuses a broadcast target (BCEWithLogits: target must be self's shape), 4 scenarios
                expected = 6 if shapes_accepted(op, (4, 8), (4, 8), (8,)) else 4
                assert len(scen) == expected, (soc, name, sorted(scen))
                if expected == 6:
                    assert scen["8192x4096 target row-broadcast"] == ((8192, 4096), (8192, 4096), (4096,))
                assert scen["32x1024x1024 grad scalar"] == ((), (32, 1024, 1024), (32, 1024, 1024))
        assert all(c.reduction == "none" for c in cases)
    only = bench.training_cases(["l1"], "Ascend310P3", DType.BFLOAT16)
    assert only == []  # 310P has no bfloat16: nothing to run


def _row(soc: str, scenario: str, us: float, roof: float, dtype: str = "float32") -> "bench.Row":
    m = bench.Measure(gm_bytes=1, vec_repeats=0, vec_calls=0, dma_calls=0, tiles_per_core=1, block_dim=1,
                      time_us=us)
    return bench.Row(op="mse_loss_backward", scenario=scenario, soc=soc, shapes=((1,), (1,), (1,)),
                     dtypes=(dtype,) * 3, elements=1, roofline_us=roof, ours=m, aclnn=None)


def test_training_misses_judge_the_roofline_bound_and_the_same_shape_call() -> None:
    rows = [_row("Ascend910B1", "8192x4096 same shapes", 100.0, 90.0),            # 1.11x: holds
            _row("Ascend910B1", "8192x4096 target row-broadcast", 101.0, 90.0),  # slower than same shapes
            _row("Ascend910B1", "32x1024x1024 same shapes", 110.0, 90.0),        # 1.22x > 1.2x
            _row("Ascend910B1", "8192x4096 same shapes", 50.0, 49.0, "float16"),
            _row("Ascend910B1", "8192x4096 grad scalar", 49.0, 45.0, "float16"),  # faster than its own dtype's
            _row("Ascend910A", "8192x4096 same shapes", 140.0, 100.0),           # 1.4x: within 910's 1.5x
            _row("Ascend910A", "8192x4096 grad scalar", 151.0, 100.0)]           # 1.51x, and slower
    misses = bench.training_misses(rows)
    said = [(r.soc, r.scenario, r.dtypes[0], why.split(",")[1].strip()) for r, why in misses]
    assert said == [
        ("Ascend910B1", "8192x4096 target row-broadcast", "float32", "slower than the same-shape call (100.0 us)"),
        ("Ascend910B1", "32x1024x1024 same shapes", "float32", "1.22x the roofline (90.0 us; bound 1.2x)"),
        ("Ascend910A", "8192x4096 grad scalar", "float32", "1.51x the roofline (100.0 us; bound 1.5x)"),
        ("Ascend910A", "8192x4096 grad scalar", "float32", "slower than the same-shape call (140.0 us)")]
    assert bench.roof_ratio("Ascend910A") == 1.5 and bench.roof_ratio("Ascend950PR_9579") == 1.2


def test_a_bench_with_nothing_to_run_says_why() -> None:
    """KlDivTarget on 310P (aclnn refuses every dtype there) and bfloat16 on 310P leave no case."""
    for args in (["--op", "kl_div_target", "--soc", "Ascend310P3"],
                 ["--op", "mse", "--soc", "Ascend310P3", "--scenarios", "training", "--dtype", "bfloat16"]):
        r = _bench(*args)
        assert r.exit_code == 2 and "no case to run: aclnn accepts none of the chosen ops" in r.output, r.output
        assert "bench 1/" not in r.output


def test_no_aclnn_models_ours_only() -> None:
    r = _bench("--op", "mse", "--shapes", "();(4096,8);(4096,8)", "--no-aclnn", "--json")
    assert r.exit_code == 0, r.output
    (rows,) = json.loads(r.stdout).values()
    assert rows[0]["aclnn_composition"] is None and rows[0]["speedup"] is None
    assert rows[0]["ours"]["modelled_us"] > 0
    steps = [ln for ln in r.stderr.splitlines() if ln.startswith("lossgrad: bench ")]
    assert steps == ["lossgrad: bench 1/1: Ascend910B1 mse_loss_backward () (4096, 8) (4096, 8): ours "
                     "(32,768 elements)"]
    text = _bench("--op", "mse", "--shapes", "();(4096,8);(4096,8)", "--no-aclnn")
    assert text.exit_code == 0 and "aclnn composition" not in text.stdout and "speedup" not in text.stdout


def test_training_scenario_reports_each_miss(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The CLI's training verdict: how many rows hold, and one MISS line per miss, also in --json per row. The
    training shapes take minutes per SoC, so the test swaps in small shapes of the same patterns."""
    monkeypatch.setattr(bench, "TRAINING_SHAPES", ((64, 512),))
    monkeypatch.setattr(bench, "TRAINING_ROOF_RATIO", {2201: 0.5})  # nothing holds within half the roofline
    r = _bench("--op", "mse", "--scenarios", "training", "--dtype", "float32", "--no-aclnn")
    assert r.exit_code == 0, r.output
    assert "training bounds: 0 of 3 rows hold" in r.stdout
    assert r.stdout.count("  MISS Ascend910B1 mse_loss_backward float32 64x512 ") >= 3
    j = _bench("--op", "mse", "--scenarios", "training", "--dtype", "float32", "--no-aclnn", "--json")
    (rows,) = json.loads(j.stdout).values()
    assert [row["scenario"] for row in rows] == ["64x512 same shapes", "64x512 target row-broadcast",
                                                 "64x512 grad scalar"]
    assert all(row["misses"] and row["roof_ratio_bound"] == 0.5 for row in rows)
    # scripts/training_table.py turns the JSON into docs/kernels.md's table
    import subprocess
    (tmp_path / "t.json").write_text(j.stdout.replace("64x512", "8192x4096"))
    table = subprocess.run([sys.executable, str(Path(__file__).resolve().parents[2] / "scripts" / "training_table.py"),
                            str(tmp_path / "t.json")], capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in table.splitlines() if ln.startswith("| Ascend910B1 | float32 | mse_loss |"))
    assert line.count("*") == 3 and line.endswith("| - | - | - |")
    assert "0 of 3 rows hold; 3 miss (*)." in table
