"""The command line: verify (case tables, exit status, JSON), tiling, gen, socs."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lossgrad.cli import main
from lossgrad.registry import OPS, Check
from lossgrad.socs import SOCS
from lossgrad.tiling import KEY_GRAD_SCALAR, KEY_SAME_SHAPE
from lossgrad.verify import default_cases, read_csv, write_csv

# SoC spellings a case table accepts: a product-line alias, a line name, a full SoC version.
SOC_SPELLINGS = (("A2", "Ascend910B1"), ("310P", "Ascend310P3"), ("Ascend950PR_9579", "Ascend950PR_9579"))
HEADER = "id,op,soc,grad_shape,self_shape,target_shape,dtypes,reduction,beta,log_target,values,seed,standard," \
         "reference,threshold_scale"


def _attr_text(attr: Any) -> tuple[str, Any]:
    """A non-default attribute value as a case table writes it, and as read_csv parses it."""
    if attr.kernel_type == "Bool":
        return str(int(not attr.default)), not attr.default
    return "0", 0.0  # every Float attribute accepts 0 (smooth L1's beta = 0 is its own kernel path)


def _table() -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """One row per registered op (a SoC spelled a different way each, its reductions in turn, its attributes set
    away from their defaults; grad (), self (5,7), target (7,) is valid under every output rule but the one where
    target is self's shape, which gets (5,7)), with what read_csv must make of each row."""
    rows, expected = [HEADER], []
    for i, op in enumerate(OPS.values()):
        written, soc = next(sp for k in range(len(SOC_SPELLINGS))
                            for sp in [SOC_SPELLINGS[(i + k) % len(SOC_SPELLINGS)]]
                            if op.ours_support.get(SOCS[sp[1]].line))
        attrs = {a.name: _attr_text(a) for a in op.attrs}
        reduction = op.reductions[i % len(op.reductions)].name.lower()
        cells = {"beta": "", "log_target": ""} | {n: text for n, (text, _) in attrs.items()}
        dtype = ("float16", "float32")[i % 2]
        target = "(5,7)" if Check.TARGET_IS_SELF in op.checks else "(7,)"
        rows.append(f',{op.template},{written},(),"(5,7)","{target}",{dtype},{reduction},{cells["beta"]},'
                    f'{cells["log_target"]},{("uniform", "ties")[i % 2]},{i + 1},auto,auto,1.0')
        expected.append((soc, {n: value for n, (_, value) in attrs.items()}))
    return "\n".join(rows) + "\n", expected


def test_verify_runs_a_case_table(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    table, expected = _table()
    path.write_text(table)
    cases = read_csv(str(path))
    assert [c.soc for c in cases] == [soc for soc, _ in expected]
    for case, (_, attrs) in zip(cases, expected):
        assert {n: getattr(case, n) for n in attrs} == attrs
    r = CliRunner().invoke(main, ["verify", "--cases", str(path), "--json", "-j", "1"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["cases"] == len(OPS) and report["passed"] and report["failed"] == 0


def test_verify_exits_non_zero_on_a_failing_case(tmp_path: Path) -> None:
    # Judged against the float64 golden with a threshold a thousand times tighter than the standard, this seeded
    # float16 case (whose exp() results round differently in one element) must fail.
    path = tmp_path / "cases.csv"
    path.write_text(HEADER + '\n\n,kl_div_backward,A2,"(1000,)","(1000,)","(1000,)",float16,none,,1,'
                    "normal,4,experimental,float64,1e-3\n")
    r = CliRunner().invoke(main, ["verify", "--cases", str(path)])
    assert r.exit_code == 1, r.output
    assert "FAIL kl_div_backward/Ascend910B1" in r.stdout


def test_export_round_trips(tmp_path: Path) -> None:
    cases = default_cases(["Ascend310P3"], ops=["kl_div_backward"])[:50]
    path = tmp_path / "m.csv"
    write_csv(cases, str(path))
    assert read_csv(str(path)) == cases


def test_tiling_command() -> None:
    r = CliRunner().invoke(main, ["tiling", "mse_loss_backward", "--self", "(1000,1000)", "--grad", "()",
                                  "--dtype", "float16", "--soc", "310P", "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["soc"] == "Ascend310P3" and info["block_dim"] == 8
    assert info["tiling_key"] == KEY_SAME_SHAPE | KEY_GRAD_SCALAR  # same-shape path, one-value gradOutput
    assert info["ub_bytes"] <= info["ub_budget"]


def test_gen_writes_sources(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["gen", "--out", str(tmp_path), "--op", "l1_loss_backward", "--dtypes", "float16"])
    assert r.exit_code == 0, r.output
    src = (tmp_path / "l1_loss_grad_custom.cpp").read_text()
    assert "lossgrad::L1LossGradKernel<half, half, half, half, false, false>" in src
    assert (tmp_path / "lossgrad_tiling_data.h").exists()
    assert "lossgrad::L1LossGradKernelSameShape<half, half, half, half, false>" in src


def test_gen_renders_the_same_shape_path_alone(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["gen", "--out", str(tmp_path), "--op", "l1_loss_backward", "--dtypes", "float16",
                                  "--same-shape-only"])
    assert r.exit_code == 0, r.output
    src = (tmp_path / "l1_loss_grad_custom.cpp").read_text()
    assert "class L1LossGradKernelSameShape" in src and "Operand<" not in src and "class ColumnWalk" not in src
    assert src.count("served = true;") == 2  # the same-shape keys, a tensor and a one-value gradOutput
    assert (tmp_path / "core_range.h").exists() and (tmp_path / "tile_walk.h").exists()


def test_gen_refuses_a_directory_it_did_not_create(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    r = CliRunner().invoke(main, ["gen", "--out", str(tmp_path)])
    assert r.exit_code != 0 and "not created by lossgrad" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_socs_json_names_every_part_with_sources() -> None:
    r = CliRunner().invoke(main, ["socs", "--json"])
    records = json.loads(r.output)
    assert [x["name"] for x in records] == list(SOCS)
    for rec in records:
        for key in ("vector_cores", "ub_kernel_bytes", "hbm_bandwidth"):
            assert rec[key]["source"] and rec[key]["confidence"] in ("high", "medium", "low", "none")


def test_socs_json_time_params_have_a_source_and_confidence_each() -> None:
    """The time model's parameters carry the same {value, source, confidence} as every other figure."""
    records = json.loads(CliRunner().invoke(main, ["socs", "--json"]).output)
    for rec in records:
        params = rec["time_params"]
        assert isinstance(params.pop("notes"), list)
        assert params
        for name, fact in params.items():
            assert set(fact) == {"value", "source", "confidence"}, (rec["name"], name)
            assert fact["source"] and fact["confidence"] in ("high", "medium", "low", "none"), (rec["name"], name)


def test_socs_time_prints_whole_values() -> None:
    """Never cut at a fixed width: a curve or a table cut short would read as another value."""
    from lossgrad.timing.params import params_for
    out = CliRunner().invoke(main, ["socs", "--time"]).output
    for soc in ("Ascend910B1", "Ascend310P3"):
        for name, fact in params_for(soc).fields().items():
            assert f"{fact.value!s}  [{fact.source}]" in out, (soc, name)


def test_progress_is_plain_lines_in_a_log_and_a_bar_on_a_terminal() -> None:
    import io

    from lossgrad.cli import _progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    log, tty = io.StringIO(), Tty()
    for stream in (log, tty):
        show = _progress(stream)
        for done in range(1, 101):
            show(done, 100, 0)
    lines = log.getvalue().splitlines()
    assert len(lines) == 10 and "\r" not in log.getvalue() and lines[-1].startswith("100/100 cases, 0 failed")
    assert tty.getvalue().count("\r") == 100 and tty.getvalue().endswith("s\n")


def test_bench_refuses_fewer_elements_than_one_broadcast_row() -> None:
    from lossgrad import bench

    r = CliRunner().invoke(main, ["bench", "--elements", str(bench.MIN_ELEMENTS - 1), "--op", "l1_loss_backward"])
    assert r.exit_code == 2, r.output  # a usage error, not a ZeroDivisionError
    assert "--elements" in r.output and str(bench.MIN_ELEMENTS) in r.output


def test_gen_refuses_a_dtype_list_of_the_wrong_length(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["gen", "--out", str(tmp_path / "k"), "--dtypes", "float16;float32"])
    assert r.exit_code == 2, r.output
    assert "grad;self;target;out" in r.output
    assert not (tmp_path / "k").exists()  # refused before anything is written


def test_timing_doc_states_the_bandwidths_the_model_uses() -> None:
    """docs/timing.md's parameter table gives each part's HBM read and write bandwidth as the model computes them
    (columns: Ascend910B1, Ascend950PR_9589, Ascend310P3)."""
    from lossgrad.timing.params import params_for
    doc = (Path(__file__).resolve().parents[2] / "docs" / "timing.md").read_text()
    for field in ("hbm_read_gbps", "hbm_write_gbps"):
        (row,) = [ln for ln in doc.splitlines() if ln.startswith(f"| `{field}` |")]
        cells = [c.strip() for c in row.strip("|").split("|")]
        for cell, soc in zip(cells[1:4], ("Ascend910B1", "Ascend950PR_9589", "Ascend310P3")):
            assert cell.split()[0] == f"{getattr(params_for(soc), field).value:.4g}", (field, soc, row)
