"""The command line's edges: no compiler, full disks, case tables, malformed numbers, run_kernel's argument types,
damaged cache entries and the explanation of inf in verify's table. Each failure must be one line with the right
exit status, and leave no partial file."""
from __future__ import annotations

import csv
import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lossgrad.twin as twin
from lossgrad import codegen
from lossgrad.cli import main
from lossgrad.errors import BackendUnavailable
import lossgrad.twin.build  # noqa: E402,F401  (the module; lossgrad.twin.build is also a function)
twin_build = sys.modules["lossgrad.twin.build"]
from lossgrad.verify import read_csv, run_case, run_cases
from lossgrad.verify.cases import CSV_COLUMNS, CaseTableError

LOSSGRAD = [sys.executable, "-m", "lossgrad.cli"]


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("lossgrad: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- item 9: no compiler -----------------------------------------------------------------------------------------------

def test_verify_without_the_compiler_fails_once_up_front(tmp_path: Path) -> None:
    env = dict(os.environ, LOSSGRAD_CXX="lossgrad-no-such-g++", LOSSGRAD_CACHE=str(tmp_path))
    r = subprocess.run(LOSSGRAD + ["verify", "--soc", "310P", "--op", "mse", "--limit", "40"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    line = _one_error_line(r.stderr)
    assert "'lossgrad-no-such-g++' is not on PATH" in line and "LOSSGRAD_CXX" in line
    assert r.stdout == ""  # no table, no FAIL lines, no case counted
    assert not (tmp_path / "twin").exists()  # nothing was started


def test_run_cases_without_the_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    from lossgrad.verify import default_cases
    monkeypatch.setattr(twin_build, "CXX", "lossgrad-no-such-g++")
    cases = default_cases(["Ascend310P3"], ops=["mse_loss_backward"])[:20]
    assert any(0 in c.shapes[1] for c in cases)  # includes empty cases, which never launch a kernel
    with pytest.raises(BackendUnavailable, match="not on PATH"):
        run_cases(cases, jobs=1)


# -- item 10: full disks -----------------------------------------------------------------------------------------------

def _disk_full(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every fsync reports ENOSPC (a full disk shows at the latest when the data is flushed)."""
    calls: list[str] = []

    def full(fd: int) -> None:
        calls.append("fsync")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    return calls


def test_write_atomic_leaves_nothing_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "k.cpp"
    target.write_text("old")
    _disk_full(monkeypatch)
    with pytest.raises(OSError) as info:
        codegen.write_atomic(target, "new text" * 1000)
    assert info.value.errno == errno.ENOSPC
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cpp"] and target.read_text() == "old"


def test_gen_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    out = tmp_path / "gen"
    calls = _disk_full(monkeypatch)
    status, _, err = _cli(["gen", "--op", "mse", "--out", str(out)], capsys)
    assert calls and status == 1
    assert "No space left on device" in _one_error_line(err)
    assert not [p.name for p in out.iterdir() if p.suffix in (".cpp", ".h") or ".tmp" in p.name]
    monkeypatch.undo()
    status, _, _ = _cli(["gen", "--op", "mse", "--out", str(out)], capsys)  # the retry succeeds
    assert status == 0 and (out / f"{codegen.get_op('mse').entry_name}.cpp").is_file()


def test_export_cases_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    table = tmp_path / "cases.csv"
    _disk_full(monkeypatch)
    status, _, err = _cli(["verify", "--op", "mse", "--soc", "310P", "--export-cases", str(table)], capsys)
    assert status == 1 and "No space left on device" in _one_error_line(err)
    assert list(tmp_path.iterdir()) == []  # no empty file that would refuse the retry, no temporary file
    monkeypatch.undo()
    status, _, _ = _cli(["verify", "--op", "mse", "--soc", "310P", "--export-cases", str(table)], capsys)
    assert status == 0 and len(read_csv(str(table))) > 10


FULL_DISK_CXX = """#!/bin/sh
# a g++ on a full disk: --version works; a compile writes part of its output, then fails as g++ does
for a in "$@"; do [ "$a" = "--version" ] && { echo "g++ (fake) 99"; exit 0; }; done
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
[ -n "$out" ] && head -c 1000 /dev/zero > "$out"
echo "$COUNT" >> "$CALLS"
echo "/usr/bin/ld: final link failed: No space left on device" >&2
exit 1
"""


@pytest.fixture
def full_disk_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "fake-g++"
    script.write_text(FULL_DISK_CXX)
    script.chmod(0o755)
    monkeypatch.setenv("CALLS", str(tmp_path / "calls"))
    return script


def test_kernel_cache_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     full_disk_compiler: Path) -> None:
    from lossgrad.socs import get_soc
    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(twin_build, "CXX", str(full_disk_compiler))
    twin_build._compiler_version.cache_clear()
    try:
        src = tmp_path / "k.cpp"
        src.write_text(TINY_KERNEL)
        for _ in range(2):  # not remembered as the kernel's compile error: the second call tries again
            with pytest.raises(OSError) as info:
                twin_build.build(src, "tiny", 1, get_soc("Ascend910B1"), precompiled=False)
            assert info.value.errno == errno.ENOSPC and "No space left on device" in str(info.value)
        assert len((tmp_path / "calls").read_text().splitlines()) == 2
        (entry,) = (tmp_path / "cache" / "twin").iterdir()
        assert [p.name for p in entry.iterdir()] == [".lock"]  # no partial library, no temporary directory
    finally:
        twin_build._compiler_version.cache_clear()


def test_verify_on_a_full_disk_stops_with_one_line(tmp_path: Path, full_disk_compiler: Path) -> None:
    cache = tmp_path / "cache"
    env = dict(os.environ, LOSSGRAD_CXX=str(full_disk_compiler), LOSSGRAD_CACHE=str(cache),
               CALLS=str(tmp_path / "calls"))
    r = subprocess.run(LOSSGRAD + ["verify", "--soc", "310P", "--op", "mse", "--limit", "40", "-j", "2"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "No space left on device" in _one_error_line(r.stderr.splitlines()[-1])
    assert "FAIL" not in r.stdout
    for entry in (cache / "twin").iterdir():
        assert [p.name for p in entry.iterdir()] == [".lock"], list(entry.iterdir())


# -- item 11: case tables ------------------------------------------------------------------------------------------

def _table(path: Path, rows: list[dict[str, str]]) -> str:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for row in rows:
            w.writerow(row)
    return str(path)


def _row(op: str, reduction: str, **kw: str) -> dict[str, str]:
    row = {"op": op, "soc": "Ascend910B1", "grad_shape": "()", "self_shape": "(40,)", "target_shape": "(40,)",
           "dtypes": "float32", "reduction": reduction}
    row.update(kw)
    return row


@pytest.mark.parametrize("op,reduction", [("mse", "2"), ("mse", "0"), ("l1", "1"), ("smooth_l1", "+2"),
                                          ("kl_div", "-1"), ("kl_div", "3"), ("kl_div", "7")])
def test_integer_reductions_run_where_aclnn_accepts_them(tmp_path: Path, op: str, reduction: str) -> None:
    (case,) = read_csv(_table(tmp_path / "t.csv", [_row(op, reduction)]))
    result = run_case(case)
    assert result.passed, result.error or result.comparison


@pytest.mark.parametrize("op,reduction", [("mse", "3"), ("mse", "-1"), ("l1", "4"), ("mse", "²"), ("mse", "-+1")])
def test_integer_reductions_aclnn_refuses(tmp_path: Path, op: str, reduction: str) -> None:
    with pytest.raises(CaseTableError, match="t.csv:2: .*reduction"):
        read_csv(_table(tmp_path / "t.csv", [_row(op, reduction)]))


def test_every_row_is_checked_before_anything_runs(tmp_path: Path, capsys: Any) -> None:
    rows = [_row("mse", "sum"), _row("mse", "3"), _row("l1", "mean", self_shape="(99999999999999999999,)"),
            _row("mse", "mean", seed="x"), *[_row("mse", "bogus", id=f"r{i}") for i in range(6)]]
    path = _table(tmp_path / "t.csv", rows)
    status, out, err = _cli(["verify", "--cases", path], capsys)
    line = _one_error_line(err)
    assert status == 2 and out == ""
    assert "t.csv:3:" in line and "t.csv:4:" in line and "t.csv:5:" in line and "int64" in line
    assert "and 4 more row(s)" in line and "(9 of 10 rows invalid)" in line


@pytest.mark.parametrize("content,needle", [
    (bytes(range(256)) * 4, "t.csv:1: a NUL byte"),
    (b"op,soc\n\xff\xfe\xfa,x\n", "not UTF-8"),
    (",".join(CSV_COLUMNS).encode() + b"\n\"" + b"x" * 200_000 + b"\"\n", "not a readable CSV table"),
])
def test_tables_that_are_not_csv_text(tmp_path: Path, capsys: Any, content: bytes, needle: str) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    status, _, err = _cli(["verify", "--cases", str(path)], capsys)
    assert status == 2 and needle in _one_error_line(err)


def test_oversized_table(tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import lossgrad.verify.cases as cases_module
    monkeypatch.setattr(cases_module, "MAX_TABLE_BYTES", 1000)
    path = _table(tmp_path / "t.csv", [_row("mse", "sum", id=f"r{i}") for i in range(40)])
    status, _, err = _cli(["verify", "--cases", path], capsys)
    assert status == 2 and "a case table has at most 1000" in _one_error_line(err)


# -- item 12: malformed numbers and options ----------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["tiling", "mse", "--reduction", "-+1"],
    ["tiling", "mse", "--reduction", "²"],
    ["tiling", "mse", "--reduction", "99999999999999999999"],
    ["tiling", "mse", "--self", "(²)"],
    ["tiling", "mse", "--self", "(-+1,)"],
    ["tiling", "mse", "--self", "(99999999999999999999,)"],
    ["tiling", "mse", "--self", "(4294967296,4294967296)"],
    ["tiling", "mse", "--self", "(2305843009213693952,2)"],
    ["gen", "--dtypes", "float64", "--out", "{tmp}/g"],
    ["gen", "--dtypes", "float32;float32;int32;float32", "--out", "{tmp}/g"],
    ["build", "--soc", "Ascend999", "--dry-run", "--out", "{tmp}/b"],
], ids=lambda a: " ".join(a)[:40])
def test_usage_errors(args: list[str], tmp_path: Path, capsys: Any) -> None:
    status, _, err = _cli([a.format(tmp=tmp_path) for a in args], capsys)
    _one_error_line(err)
    assert status == 2, err
    assert "internal" not in err and "--debug" not in err
    assert list(tmp_path.iterdir()) == []  # nothing written


# -- item 13: run_kernel's argument types, damaged cache entries -------------------------------------------------------

TINY_KERNEL = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void tiny(GM_ADDR x) {
    AscendC::GlobalTensor<int32_t> g;
    g.SetGlobalBuffer((__gm__ int32_t*)x, 1);
    if (AscendC::GetBlockIdx() == 0) { g.SetValue(0, g.GetValue(0) + 1); }
}
"""


@pytest.mark.parametrize("kw,error,needle", [
    ({"block_dim": 2.0}, TypeError, "block_dim must be an int, got float"),
    ({"block_dim": True}, TypeError, "block_dim must be an int"),
    ({"block_dim": "2"}, TypeError, "block_dim must be an int"),
    ({"tiling_key": 2 ** 64}, ValueError, "tiling_key must be in"),
    ({"tiling_key": -1}, ValueError, "tiling_key must be in"),
    ({"tiling_key": 1.0}, TypeError, "tiling_key must be an int"),
    ({"auto_sync": "no"}, TypeError, "auto_sync must be a bool"),
    ({"auto_sync": 0}, TypeError, "auto_sync must be a bool"),
])
def test_run_kernel_refuses_what_it_used_to_coerce(tmp_path: Path, kw: dict[str, Any], error: type,
                                                    needle: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[Any] = []
    monkeypatch.setattr(twin, "build", lambda *a, **k: compiled.append(a))
    src = tmp_path / "k.cpp"
    src.write_text(TINY_KERNEL)
    args = {"block_dim": 1, **kw}
    block_dim = args.pop("block_dim")
    with pytest.raises(error, match=needle):
        twin.run_kernel(src, "tiny", block_dim, [np.zeros(1, np.int32)], **args)
    assert compiled == []  # refused before anything is built


RUN_TINY = """
import sys, numpy as np, lossgrad.twin as twin
x = np.zeros(1, np.int32)
report = twin.run_kernel(sys.argv[1], "tiny", 1, [x])
print(int(x[0]), report.cached)
"""


def test_damaged_cached_library_is_rebuilt(tmp_path: Path) -> None:
    """A damaged library (here truncated) in the cache is rebuilt by the next process that needs it. Each run is a
    process of its own: dlopen in a process that loaded the library already returns the loaded one."""
    env = dict(os.environ, LOSSGRAD_CACHE=str(tmp_path / "cache"))
    src = tmp_path / "k.cpp"
    src.write_text(TINY_KERNEL)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", RUN_TINY, str(src)], env=env, capture_output=True, text=True,
                              timeout=300)

    assert run().stdout.split() == ["1", "False"]
    assert run().stdout.split() == ["1", "True"]
    (lib,) = (tmp_path / "cache" / "twin").glob("*/tiny.so")
    size = lib.stat().st_size
    with open(lib, "r+b") as fh:  # a truncated library, as a disk fault or an interrupted copy leaves one
        fh.truncate(4096)
    r = run()
    assert r.returncode == 0 and r.stdout.split() == ["1", "False"], r.stdout + r.stderr  # rebuilt, it ran
    assert lib.stat().st_size == size
    assert run().stdout.split() == ["1", "True"]


def test_damaged_library_that_cannot_be_removed_names_the_cache(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "cache" / "twin" / "k" / "tiny.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"\x7fELF damaged")
    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path / "cache"))
    assert not twin_build._loadable(lib)

    def refuse(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    with pytest.raises(OSError, match=f"delete the kernel cache {tmp_path / 'cache'}"):
        twin_build._discard_damaged(lib)


# -- item 14: inf in the float64 columns is explained ------------------------------------------------------------------

def test_verify_table_explains_inf_vs_float64(tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path / "cache"))
    # float16 inputs, float32 out, huge values: aclnn's float16 difference overflows, the exact result does not
    path = _table(tmp_path / "t.csv", [_row("mse", "none", dtypes="float16;float16;float16;float32", values="huge",
                                            self_shape="(33,)", target_shape="(33,)", seed="1"),
                                       _row("l1", "mean")])
    status, out, _ = _cli(["verify", "--cases", path, "-j", "1"], capsys)
    assert status == 0, out
    assert "2 cases on twin, 0 failed" in out
    mse = next(ln for ln in out.splitlines() if ln.startswith("mse_loss_backward"))
    assert mse.split()[-2:] == ["inf", "inf"]
    note = next(ln for ln in out.splitlines() if ln.startswith("inf vs float64"))
    assert "(mse_loss_backward float32)" in note and "overflows" in note and "float32-order golden" in note
    l1 = next(ln for ln in out.splitlines() if ln.startswith("l1_loss_backward"))
    assert "inf" not in l1 and "l1_loss_backward" not in note


def test_verify_json_is_strict_json_with_inf_metrics(tmp_path: Path, capsys: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """--json output parses with a strict parser (no bare Infinity/NaN): a non-finite metric is the string "inf"."""
    import json
    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path / "cache"))
    path = _table(tmp_path / "t.csv", [_row("mse", "none", dtypes="float16;float16;float16;float32", values="huge",
                                            self_shape="(33,)", target_shape="(33,)", seed="1")])
    status, out, _ = _cli(["verify", "--cases", path, "-j", "1", "--json"], capsys)
    assert status == 0, out

    def refuse(token: str) -> None:
        raise ValueError(f"non-strict JSON constant {token}")

    doc = json.loads(out, parse_constant=refuse)
    (case,) = doc["results"]
    assert case["passed"] and case["mere64"] == "inf" and case["mare64"] == "inf"
    assert isinstance(case["mere"], float)


# -- issue 27: verify's options, strict shapes and case tables, export races ------------------------------------------

ROW = {"op": "mse", "soc": "310P", "grad_shape": "(4,)", "self_shape": "(4,)", "target_shape": "(4,)",
       "dtypes": "float32", "reduction": "none"}


def _raw_table(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("shape", ["(4,,5)", ",", "((4,4))", "(4,5))", "[4,5)", "(,)", "(4"])
def test_malformed_shapes_are_refused_everywhere(shape: str, tmp_path: Path, capsys: Any) -> None:
    status, _, err = _cli(["tiling", "mse", "--self", shape], capsys)
    assert status == 2 and "--self" in _one_error_line(err)
    table = _table(tmp_path / "t.csv", [dict(ROW, self_shape=shape)])
    status, _, err = _cli(["verify", "--cases", table], capsys)
    assert status == 2 and f"t.csv:2: shape {shape!r}" in _one_error_line(err)


@pytest.mark.parametrize("header_extra,cell,needle", [
    ("betta", "0.5", "unknown column 'betta' (did you mean 'beta'?)"),
    ("op", "mse", "column 'op' appears 2 times"),
])
def test_case_table_headers_are_strict(header_extra: str, cell: str, needle: str, tmp_path: Path,
                                       capsys: Any) -> None:
    cols = list(ROW) + [header_extra]
    text = ",".join(cols) + "\n" + ",".join(f'"{ROW[c]}"' if c in ROW else cell for c in list(ROW)) + f",{cell}\n"
    status, _, err = _cli(["verify", "--cases", _raw_table(tmp_path / "t.csv", text)], capsys)
    assert status == 2 and "t.csv:1: " in err and needle in _one_error_line(err)


def test_case_table_numbers_are_strict(tmp_path: Path, capsys: Any) -> None:
    for column, value, needle in (("beta", "0_5", "beta '0_5': not a number"),
                                  ("threshold_scale", "1_0", "threshold_scale '1_0': not a number"),
                                  ("seed", "1_000", "seed '1_000': expected a non-negative integer")):
        row = dict(ROW, op="smooth_l1") if column == "beta" else dict(ROW)
        status, _, err = _cli(["verify", "--cases", _table(tmp_path / "t.csv", [dict(row, **{column: value})])],
                              capsys)
        assert status == 2 and needle in _one_error_line(err)


def test_a_header_typed_with_spaces_after_the_commas_is_read(tmp_path: Path) -> None:
    text = ('op, soc, grad_shape, self_shape, target_shape, dtypes, reduction, beta\n'
            'smooth_l1, 310P, "(4, 5)", "(4, 5)", "(5,)", float16, mean, 0.5\n')
    (case,) = read_csv(_raw_table(tmp_path / "t.csv", text))
    assert case.shapes == ((4, 5), (4, 5), (5,)) and case.beta == 0.5 and case.dtypes == ("float16",) * 4


def test_a_nul_byte_names_its_line(tmp_path: Path) -> None:
    text = ",".join(ROW) + "\n" + ",".join(f'"{v}"' for v in ROW.values()) + "\nmse,310P\0,(4,)\n"
    with pytest.raises(CaseTableError, match=r"t\.csv:3: a NUL byte"):
        read_csv(_raw_table(tmp_path / "t.csv", text))


def test_control_characters_in_ids_are_escaped(tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An id that would repaint a FAIL line as a PASS on a terminal is shown escaped."""
    import lossgrad.verify as verify_pkg
    from lossgrad.verify import CaseResult

    evil = "x\r\x1b[2KPASS all\x1b[0m"
    table = _table(tmp_path / "t.csv", [dict(ROW, id=evil)])

    def fail_all(cases: list, **kw: Any) -> list:
        return [CaseResult(c, False, None, None, "AssertionError: wrong", 0.0, "float32", "experimental")
                for c in cases]

    monkeypatch.setattr(verify_pkg, "run_cases", fail_all)
    status, out, _ = _cli(["verify", "--cases", table], capsys)
    assert status == 1
    (line,) = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert line == "FAIL x\\r\\x1b[2KPASS all\\x1b[0m: AssertionError: wrong"
    duplicate = _table(tmp_path / "d.csv", [dict(ROW, id=evil), dict(ROW, id=evil, seed="1")])
    status, _, err = _cli(["verify", "--cases", duplicate], capsys)
    assert status == 2 and "\x1b" not in err and "duplicate id 'x\\\\r\\\\x1b[2KPASS" in err


def test_a_large_table_is_checked_with_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lossgrad.verify import cases as cases_module
    monkeypatch.setattr(cases_module, "PROGRESS_EVERY_S", 0.0)
    table = _table(tmp_path / "t.csv", [dict(ROW, id=f"c{i}", seed=str(i)) for i in range(1500)])
    seen: list[tuple[int, int]] = []
    assert len(read_csv(table, progress=lambda done, total: seen.append((done, total)))) == 1500
    assert seen[-1] == (1500, 1500) and all(total == 1500 for _, total in seen) and len(seen) > 100


def test_verify_refuses_cases_with_full(tmp_path: Path, capsys: Any) -> None:
    status, _, err = _cli(["verify", "--cases", _table(tmp_path / "t.csv", [ROW]), "--full"], capsys)
    assert status == 2 and "give one of them" in _one_error_line(err)
    status, _, err = _cli(["verify", "--backend", "cpu", "--auto-sync", "off"], capsys)
    assert status == 2 and "--auto-sync" in _one_error_line(err)


def test_export_cases_with_json_and_the_usual_mode(tmp_path: Path, capsys: Any) -> None:
    import json
    import stat
    target = tmp_path / "x.csv"
    old = os.umask(0o022)
    try:
        status, out, _ = _cli(["verify", "--op", "mse", "--soc", "310P", "--export-cases", str(target), "--json"],
                              capsys)
    finally:
        os.umask(old)
    assert status == 0
    report = json.loads(out)
    assert report == {"exported": len(read_csv(str(target))), "path": str(target)} and report["exported"] > 10
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_two_exports_to_one_name_never_replace_each_other(tmp_path: Path, capsys: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The other run creates the name between our check and our link: we fail, its table stays whole."""
    target = tmp_path / "race.csv"
    real_link = os.link

    def other_run_first(src: str, dst: str) -> None:
        Path(dst).write_text("the other run's table\n")
        real_link(src, dst)

    monkeypatch.setattr(os, "link", other_run_first)
    status, _, err = _cli(["verify", "--op", "mse", "--soc", "310P", "--export-cases", str(target)], capsys)
    assert status == 1 and "created meanwhile by another process" in _one_error_line(err)
    assert target.read_text() == "the other run's table\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["race.csv"]


def test_jobs_are_bounded_by_cases_and_cores() -> None:
    from lossgrad.verify.run import CHUNK, bounded_jobs, usable_cores
    assert bounded_jobs(24, 16, twin=True) == min(2, usable_cores())  # 16 cases: two chunks of 8
    assert bounded_jobs(24, 10 ** 6, twin=True) == min(24, usable_cores())
    assert bounded_jobs(1, 10 ** 6, twin=True) == 1
    assert bounded_jobs(24, 5, twin=False) == 5  # CANN backends: threads, one per case at most
    assert CHUNK == 8
