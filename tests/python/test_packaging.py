"""A wheel (pip install ., not -e) carries the kernel templates and the CANN project sources, and works without
the checkout: it renders, builds and runs a kernel on the twin and writes a dry-run CANN project."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from lossgrad.project_files import CHECKOUT_ROOT, PROJECT_DIRS


def _project_files() -> set[str]:
    return {p.relative_to(CHECKOUT_ROOT).as_posix() for d in PROJECT_DIRS for p in (CHECKOUT_ROOT / d).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _source_copy(dest: Path) -> Path:
    """What an sdist holds, copied, so that the in-tree build (build/, *.egg-info) never touches the checkout."""
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    dest.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(CHECKOUT_ROOT / name, dest / name)
    for name in ("python", *PROJECT_DIRS):
        shutil.copytree(CHECKOUT_ROOT / name, dest / name, ignore=skip)
    return dest


def test_the_wheel_carries_the_project_sources_and_runs_without_the_checkout(tmp_path: Path) -> None:
    src = _source_copy(tmp_path / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
                    str(src)], check=True, capture_output=True, text=True)
    wheel, = (tmp_path / "dist").glob("ascend_lossgrad-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    bundled = {n.removeprefix("lossgrad/_project/") for n in names if n.startswith("lossgrad/_project/")}
    assert bundled == _project_files()
    assert "lossgrad/twin/include/kernel_operator.h" in names

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = (
        "import numpy as np, lossgrad\n"
        "from lossgrad import golden, project_files\n"
        f"assert lossgrad.__file__.startswith({str(site)!r}), lossgrad.__file__\n"
        f"assert project_files.project_root() == project_files.BUNDLED_ROOT\n"
        "x = np.linspace(-3, 3, 1000, dtype=np.float32); t = np.zeros(1000, np.float32); g = np.float32(0.5)\n"
        "r = lossgrad.smooth_l1_loss_backward(np.asarray(g), x, t, reduction='mean', backend='twin')\n"
        "assert np.array_equal(r, golden.smooth_l1_loss_backward(np.asarray(g), x, t, reduction='mean',"
        " compute='float32'))\n"
        "from lossgrad.cli import main\n"
        f"main(['build', '--soc', 'Ascend910B1', '--dry-run', '--out', {str(tmp_path / 'pkg')!r}])\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "op_host" in r.stdout


def test_python_lines_fit_120_columns() -> None:
    """The project's line limit (docs/contributing.md), for the package, the tests and the scripts."""
    long = [f"{p.relative_to(CHECKOUT_ROOT)}:{i}: {len(line)} columns"
            for top in ("python", "tests", "scripts") for p in sorted((CHECKOUT_ROOT / top).rglob("*.py"))
            if "__pycache__" not in p.parts
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if len(line) > 120]
    assert not long, "\n".join(long)
