"""docs/kernels.md's reading guide states what a reader of one op's kernel reads and how long each source is: the
table stays true (each stated length within 10% of the file, the compute bodies' range the real one)."""
from __future__ import annotations

import re
from pathlib import Path

from lossgrad.registry import OPS, op_dir

ROOT = Path(__file__).resolve().parents[2]


def _rows() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "kernels.md").read_text()
    table = text.split("<!-- reading-guide -->")[1].split("<!-- /reading-guide -->")[0]
    rows = []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append((cells[0].strip("`"), cells[1]))
    return rows


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_every_stated_length_is_within_10_percent() -> None:
    rows = _rows()
    assert len(rows) == 9
    for name, stated in rows:
        if "<op>" in name:
            lo, hi = (int(x) for x in stated.split("-"))
            real = [_lines(op_dir(op) / "compute.h") for op in OPS.values()]
            assert (min(real), max(real)) == (lo, hi), (name, stated, real)
        else:
            real_n = _lines(ROOT / name)
            assert abs(real_n - int(stated)) <= 0.1 * real_n, (name, stated, real_n)


def test_the_guide_names_every_kernel_source() -> None:
    named = {name for name, _ in _rows()}
    sources = {f"op_kernel/{p.name}" for p in (ROOT / "op_kernel").iterdir()
               if p.suffix in (".j2", ".h") and p.name != "lossgrad_tiling_data.h"}
    assert sources <= named, sources - named


def test_the_bodies_named_in_the_guide_have_their_stated_length() -> None:
    folders = {"MSE": "mse", "KL": "kl_div", "L1": "l1", "SmoothL1": "smooth_l1", "KlDivTarget": "kl_div_target"}
    text = (ROOT / "docs" / "kernels.md").read_text().split("<!-- reading-guide -->")[1]
    stated = dict(re.findall(r"(MSE|KL|L1|SmoothL1|KlDivTarget) (\d+)", text.split("\n")[3]))
    assert set(stated) == set(folders)
    for name, n in stated.items():
        assert _lines(ROOT / "python" / "lossgrad" / "ops" / folders[name] / "compute.h") == int(n), name
