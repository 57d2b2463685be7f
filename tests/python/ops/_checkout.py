"""A temporary copy of the checkout with extra op folders, and a runner of code against it (the user's tree is never
touched; each check runs in a subprocess that imports the copied package)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lossgrad.project_files import CHECKOUT_ROOT, PROJECT_DIRS

OPS_DIR = Path("python") / "lossgrad" / "ops"


def make_checkout(root: Path) -> Path:
    """Copy python/, tests/, the project directories, pyproject.toml and README.md under `root`."""
    if not all((CHECKOUT_ROOT / d).is_dir() for d in ("python", "tests", *PROJECT_DIRS)):
        pytest.skip("needs a source checkout (python/, tests/ and the project directories)")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".pytest_cache")
    for d in ("python", "tests", *PROJECT_DIRS):
        shutil.copytree(CHECKOUT_ROOT / d, root / d, ignore=ignore)
    for f in ("pyproject.toml", "README.md"):
        shutil.copy2(CHECKOUT_ROOT / f, root / f)
    return root


def add_op_folder(root: Path, folder: Path, name: str) -> Path:
    """Copy an op folder into the checkout's lossgrad/ops/ as `name`."""
    dest = root / OPS_DIR / name
    shutil.copytree(folder, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def run(root: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root / "python")}
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout)
