"""`lossgrad bench` on the twin: modelled time, bound pipe and % of roofline for ours and aclnn's composition on
every default SoC; --shapes, --trace (Chrome trace JSON) and --plot (the [plot] extra)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lossgrad import bench
from lossgrad.cli import main
from lossgrad.socs import VERIFY_DEFAULT_SOCS

PIPES = {"MTE2", "MTE3", "V", "S", "latency"}
SMALL = bench.MIN_ELEMENTS * 8


@pytest.mark.parametrize("soc", VERIFY_DEFAULT_SOCS)
def test_bench_models_ours_and_aclnn_on_every_default_soc(soc: str) -> None:
    rows = bench.run(["mse_loss_backward", "kl_div_backward"], SMALL, soc)
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
    out = json.loads(r.output)
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
