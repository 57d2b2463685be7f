"""Every subcommand given invalid input: exactly one line on stderr (or, under --json, one JSON object on stdout and
nothing on stderr), exit status 2 for a usage error and 1 for a failure, and never a traceback (issue 10, items 6,
8-11, 13). In-process through click's CliRunner; a few real subprocess runs prove it end to end."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lossgrad.cli import main

HEADER = ("id,op,soc,grad_shape,self_shape,target_shape,dtypes,reduction,beta,log_target,values,seed,standard,"
          "reference,threshold_scale")
ROW = ',l1_loss_backward,A2,(),"(4,3)","(3,)",float32,mean,,,uniform,1,auto,auto,1.0'


@pytest.fixture(autouse=True)
def no_cann(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)


def one_line_error(args: list[str], status: int, *needles: str) -> str:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == status, (args, r.exit_code, r.output)
    assert isinstance(r.exception, SystemExit), (args, r.exception)  # no uncaught exception
    assert r.stdout == "", (args, r.stdout)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lossgrad: error: "), (args, r.stderr)
    assert "Traceback" not in r.output
    for n in needles:
        assert n in lines[0], (args, n, lines[0])
    return lines[0]


def json_error(args: list[str], status: int, *needles: str) -> dict:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == status, (args, r.output)
    assert r.stderr == "" or all(not ln.startswith("lossgrad: error") for ln in r.stderr.splitlines())
    report = json.loads(r.stdout)  # exactly one JSON document
    assert r.stdout.count("\n") == 1 and report["exit_status"] == status
    for n in needles:
        assert n in report["error"], (args, n, report)
    return report


def table(tmp_path: Path, *rows: str, header: str = HEADER) -> str:
    path = tmp_path / "cases.csv"
    path.write_text("\n".join([header, *rows]) + ("\n" if rows or header else ""))
    return str(path)


# -- verify ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, status, needle", [
    (["--soc", "nonsense"], 2, "unknown SoC version 'nonsense'"),
    (["--soc", "A2,nonsense"], 2, "nonsense"),
    (["--soc", "ascend910b"], 2, "ambiguous"),
    (["--op", "bogus"], 2, "unknown op 'bogus'"),
    (["--limit", "-1"], 2, "--limit"),
    (["--limit", "x"], 2, "--limit"),
    (["--op", "l1", "--limit", "0"], 1, "no case to verify"),
    # (the needle, part of the test id, names no op: test_copied_folder counts the tests naming an op)
    (["--op", "kl_div_target", "--soc", "310P"], 1, "aclnn refuses every dtype of"),
    (["--jobs", "0"], 2, "--jobs"),
    (["-j", "-1"], 2, "--jobs"),
    (["--backend", "bogus"], 2, "--backend"),
    (["--backend", "npu", "--op", "l1"], 1, "ASCEND_HOME_PATH"),
    (["--backend", "cpu", "--op", "mse", "--soc", "310P"], 1, "ASCEND_HOME_PATH"),
    (["--backend", "sim"], 1, "ASCEND_HOME_PATH"),
    (["--cases", "/nonexistent/cases.csv"], 2, "--cases"),
    (["--bogus-option"], 2, "--bogus-option"),
])
def test_verify_usage_and_failures(args: list[str], status: int, needle: str) -> None:
    one_line_error(["verify", *args], status, needle)


def test_verify_errors_are_json_under_json() -> None:
    assert json_error(["verify", "--soc", "nonsense", "--json"], 2, "nonsense")["kind"] == "usage"
    assert json_error(["verify", "--backend", "npu", "--json"], 1, "ASCEND_HOME_PATH")["kind"] == "unavailable"
    json_error(["verify", "--op", "kl_div", "--limit", "0", "--json"], 1, "no case")


@pytest.mark.parametrize("rows, needle", [
    ([',l1_loss_backward,A2,(),"(4,3)"'], ":2: the row has"),                          # a short row
    ([ROW + ",extra"], ":2: the row has"),                                             # a long row
    ([ROW.replace("uniform", "gaussian")], "values 'gaussian'"),
    ([ROW.replace(",auto,auto,", ",strict,auto,")], "standard 'strict'"),
    ([ROW.replace(",auto,auto,", ",auto,float16,")], "reference 'float16'"),
    ([ROW.replace(",1.0", ",0")], "threshold_scale 0.0"),
    ([ROW.replace(",1.0", ",1e9")], "threshold_scale 1000000000.0"),
    ([ROW.replace(",1.0", ",nan")], "threshold_scale nan"),
    ([ROW.replace(",1.0", ",abc")], "abc"),
    (["x" + ROW, "x" + ROW], ":3: duplicate id 'x'"),
    ([ROW, ROW], ":3: duplicate id"),                                                  # identical generated ids
    ([ROW.replace("l1_loss_backward", "l2_loss_backward")], "unknown op 'l2_loss_backward'"),
    ([ROW.replace("A2", "A9")], "A9"),
    ([ROW.replace('"(4,3)"', '"(4,-3)"')], ">= 0"),
    ([ROW.replace('"(4,3)"', '"(4,x)"')], "(4,x)"),
    ([ROW.replace("float32", "float32;float16")], "grad;self;target;out"),
    ([ROW.replace("float32", "bfloat16;float32;float32;float32").replace("A2", "310P")], "bfloat16"),
    ([ROW.replace('"(3,)"', '"(5,)"')], "not broadcastable"),
    ([ROW.replace(",mean,", ",batchmean,")], "batchmean"),
    ([ROW.replace(",mean,,", ",mean,0.5,")], "has no beta"),
    ([ROW.replace(",uniform,1,", ",uniform,-1,")], "seed -1"),
    ([ROW.replace("mean,,,", "mean,,2,").replace("l1_loss_backward", "kl_div_backward")], "log_target '2'"),
])
def test_malformed_case_tables_name_the_row(tmp_path: Path, rows: list[str], needle: str) -> None:
    line = one_line_error(["verify", "--cases", table(tmp_path, *rows)], 2, needle)
    assert "cases.csv:" in line


def test_a_table_without_the_required_columns(tmp_path: Path) -> None:
    one_line_error(["verify", "--cases", table(tmp_path, "l1,A2", header="op,soc")], 2, "lacks column", "dtypes")


@pytest.mark.parametrize("content", ["", HEADER + "\n"])
def test_an_empty_or_header_only_table_verifies_nothing_and_fails(tmp_path: Path, content: str) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(content)
    one_line_error(["verify", "--cases", str(path)], 2 if not content else 1,
                   "lacks column" if not content else "no case to verify")


def test_a_filter_that_selects_no_row_fails(tmp_path: Path) -> None:
    path = table(tmp_path, ROW)
    one_line_error(["verify", "--cases", path, "--op", "mse"], 1, "no case to verify", "filters")
    one_line_error(["verify", "--cases", path, "--soc", "310P"], 1, "no case to verify")


def test_export_cases_refuses_a_missing_directory_and_an_existing_file(tmp_path: Path) -> None:
    one_line_error(["verify", "--op", "l1", "--export-cases", str(tmp_path / "no" / "m.csv")], 1, "does not exist")
    (tmp_path / "m.csv").write_text("mine")
    one_line_error(["verify", "--op", "l1", "--export-cases", str(tmp_path / "m.csv")], 1, "exists")
    assert (tmp_path / "m.csv").read_text() == "mine"


def test_short_names_and_comma_separated_socs_select_cases(tmp_path: Path) -> None:
    from lossgrad.registry import OPS
    first, last = list(OPS.values())[0], list(OPS.values())[-1]  # two registered ops, one named in upper case
    out = tmp_path / "m.csv"
    r = CliRunner().invoke(main, ["verify", "--op", first.template, "--op", last.template.upper(), "--soc", "A2,310P",
                                  "--export-cases", str(out)])
    assert r.exit_code == 0, r.output
    from lossgrad.verify import read_csv
    cases = read_csv(str(out))
    assert {c.op for c in cases} == {first.name, last.name}
    assert {c.soc for c in cases} == {"Ascend910B1", "Ascend310P3"}


# -- tiling ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, status, needle", [
    (["bogus"], 2, "unknown op"),
    (["l1", "--dtype", "float99"], 2, "float99"),
    (["l1", "--dtype", "int32"], 2, "int32"),
    (["l1", "--out-dtype", "float99"], 2, "float99"),
    (["l1", "--out-dtype", "int32"], 2, "int32"),
    (["l1", "--self", "(a,b)"], 2, "--self"),
    (["l1", "--self", "(2,-1)"], 2, ">= 0"),
    (["l1", "--grad", "(3,"], 2, ""),
    (["l1", "--target", "(1,2,3,4,5)", "--self", "(7,)"], 2, "not broadcastable"),
    (["mse", "--self", "(1,1,1,1,1,1,1,1,1)"], 2, "rank 9"),
    (["l1", "--reduction", "average"], 2, "reduction"),
    (["l1", "--reduction", "3"], 2, "batchmean"),
    (["l1", "--reduction", "9"], 2, "out of range"),
    (["kl_div", "--reduction", str(2 ** 70)], 2, "int64"),
    (["l1", "--beta", "1.0"], 2, "beta"),
    (["smooth_l1", "--beta", "-1"], 2, "beta"),
    (["smooth_l1", "--beta", "nan"], 2, "beta"),
    (["smooth_l1", "--beta", "1e39"], 2, "float32"),
    (["smooth_l1", "--beta", "abc"], 2, "--beta"),
    (["mse", "--log-target"], 2, "log_target"),
    (["l1", "--soc", "nonsense"], 2, "nonsense"),
    (["l1", "--soc", "ascend910b"], 2, "ambiguous"),
    (["kl_div", "--dtype", "bfloat16", "--soc", "310P"], 2, "bfloat16"),
    (["smooth_l1", "--dtype", "bf16", "--soc", "910"], 2, "Ascend910A"),
    (["kl_div", "--self", "(2,1)", "--target", "(0,2,3)", "--reduction", "mean"], 2, "561002"),
    (["kl_div", "--grad", "(4,)", "--self", "(3,)"], 2, "must broadcast into"),
])
def test_tiling_invalid_calls(args: list[str], status: int, needle: str) -> None:
    one_line_error(["tiling", *args], status, needle)


def test_tiling_errors_are_json_under_json() -> None:
    report = json_error(["tiling", "kl_div", "--dtype", "bfloat16", "--soc", "310P", "--json"], 2, "bfloat16")
    assert report["code"] == 161002 and report["kind"] == "invalid"


def test_tiling_describes_huge_shapes_without_allocating_them() -> None:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = CliRunner().invoke(main, ["tiling", "l1", "--self", "(4294967296,2)", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["fields"]["splitTotal"] == 2 ** 33
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 * 1024  # KiB: far below 32 GiB


@pytest.mark.parametrize("text, label", [("0", "none"), ("1", "mean"), ("2", "sum"), ("3", "batchmean")])
def test_tiling_accepts_reduction_integers(text: str, label: str) -> None:
    r = CliRunner().invoke(main, ["tiling", "kl_div", "--reduction", text, "--self", "(4,3)", "--json"])
    assert r.exit_code == 0, r.output
    by_name = CliRunner().invoke(main, ["tiling", "kl_div", "--reduction", label, "--self", "(4,3)", "--json"])
    assert json.loads(r.stdout) == json.loads(by_name.stdout)


# -- gen -------------------------------------------------------------------------------------------------------------

def test_gen_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one_line_error(["gen", "--out", str(tmp_path / "k"), "--op", "bogus"], 2, "unknown op")
    one_line_error(["gen", "--out", str(tmp_path / "k"), "--dtypes", "float16;x;float16;float16"], 2, "--dtypes")
    one_line_error(["gen"], 2, "--out")
    (tmp_path / "file").write_text("x")
    one_line_error(["gen", "--out", str(tmp_path / "file" / "sub")], 1, "file")  # not a directory
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes.txt").write_text("mine")
    one_line_error(["gen", "--out", str(tmp_path / "theirs")], 1, "not created by lossgrad")

    import lossgrad.cann.outdir as outdir

    def read_only(path: Path, purpose: str) -> Path:
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(outdir, "claim", read_only)  # root ignores directory modes; this is what a user would get
    one_line_error(["gen", "--out", str(tmp_path / "ro")], 1, "Permission denied", str(tmp_path / "ro"))


def test_gen_accepts_short_op_names(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["gen", "--out", str(tmp_path / "k"), "--op", "smooth_l1"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "k" / "smooth_l1_loss_grad_custom.cpp").exists()


# -- bench, build, socs, the group -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, status, needle", [
    (["bench", "--backend", "sim"], 1, "ASCEND_HOME_PATH"),
    (["bench", "--backend", "npu", "--op", "l1"], 1, "ASCEND_HOME_PATH"),
    (["bench", "--backend", "cpu"], 2, "--backend"),
    (["bench", "--reps", "-1"], 2, "--reps"),
    (["bench", "--reps", "0"], 2, "--reps"),
    (["bench", "--elements", "1"], 2, "--elements"),
    (["bench", "--op", "bogus"], 2, "unknown op"),
    (["bench", "--soc", "nonsense"], 2, "nonsense"),
    (["build", "--dtypes", "float16"], 2, "--dtypes"),
    (["build", "--flow", "launch-asc", "--dtypes", "float64", "--dry-run"], 2, "--dtypes"),
    (["build", "--flow", "launch-legacy", "--dtypes", "int32,float16", "--dry-run"], 2, "int32"),
    (["build", "--flow", "bogus"], 2, "--flow"),
    (["build", "--ops", "bogus", "--dry-run"], 2, "bogus"),
    (["build", "--jobs", "0", "--dry-run"], 2, "--jobs"),
    (["build"], 1, "lossgrad build --dry-run"),
    (["socs", "--bogus"], 2, "--bogus"),
    (["nonsense"], 2, "nonsense"),
])
def test_other_commands(args: list[str], status: int, needle: str) -> None:
    line = one_line_error(args, status, needle)
    if args == ["build"]:
        assert "--backend" not in line  # build has no such option to suggest


def test_bench_errors_are_json_under_json() -> None:
    json_error(["bench", "--backend", "sim", "--json"], 1, "ASCEND_HOME_PATH")


def test_build_accepts_short_op_names() -> None:
    from lossgrad.registry import OPS
    r = CliRunner().invoke(main, ["build", "--ops", ",".join(op.template for op in OPS.values()), "--dry-run",
                                  "--flow", "launch-asc", "--dtypes", "float16"])
    assert r.exit_code == 0, r.output


def test_an_unexpected_exception_is_one_line_and_a_traceback_with_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    import lossgrad.cli as cli

    def broken(soc: object) -> dict:
        raise RuntimeError("boom")
    monkeypatch.setattr(cli, "soc_record", broken)
    one_line_error(["socs"], 1, "RuntimeError: boom", "--debug")
    r = CliRunner().invoke(main, ["--debug", "socs"])
    assert isinstance(r.exception, RuntimeError)  # re-raised for the traceback


def test_socs_documents_the_aliases() -> None:
    r = CliRunner().invoke(main, ["socs"])
    assert r.exit_code == 0
    assert "a2" in r.stdout and "-> Ascend910B1" in r.stdout and "'ascend910b' is refused as ambiguous" in r.stdout
    records = json.loads(CliRunner().invoke(main, ["socs", "--json"]).stdout)
    assert {r["name"]: r["aliases"] for r in records}["Ascend310P3"] == ["310p", "ascend310p"]


# -- end to end: real processes --------------------------------------------------------------------------------------

def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lossgrad.cli", *args], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in __import__("os").environ.items() if k != "ASCEND_HOME_PATH"})


def test_no_traceback_end_to_end(tmp_path: Path) -> None:
    short = table(tmp_path, ',l1_loss_backward,A2,(),"(4,3)"')
    for args, status in ((["tiling", "l1", "--self", "(x)"], 2), (["verify", "--cases", short], 2),
                         (["verify", "--backend", "npu"], 1)):
        p = _run(*args)
        assert p.returncode == status, (args, p.stderr)
        assert p.stdout == "" and len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, (args, p.stderr)
    p = _run("--debug", "tiling", "l1", "--beta", "2")
    assert p.returncode == 1 and "Traceback" in p.stderr and "LossGradError" in p.stderr
