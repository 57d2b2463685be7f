"""`import lossgrad` never imports torch; without torch the core package works and lossgrad.torch says what to
install. Each check runs in a fresh interpreter (this one has torch loaded already)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


import lossgrad

PYTHON_DIR = str(Path(lossgrad.__file__).resolve().parents[1])
BLOCK_TORCH = "import sys; sys.modules['torch'] = None\n"  # any `import torch` now raises ImportError


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": PYTHON_DIR})


def test_import_lossgrad_does_not_import_torch() -> None:
    proc = _run("import sys, lossgrad, lossgrad.api, lossgrad.golden, lossgrad.validation, lossgrad.cli\n"
                "import lossgrad.runners.twin\n"
                "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_core_package_runs_without_torch() -> None:
    proc = _run(BLOCK_TORCH + "import numpy as np, lossgrad\n"
                "g = lossgrad.mse_loss_backward(np.float32(1), np.ones(4, np.float32), np.zeros(4, np.float32), "
                "'sum', backend='twin')\n"
                "print(g.tolist())")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[2.0, 2.0, 2.0, 2.0]"


def test_lossgrad_torch_without_torch_names_the_extra() -> None:
    proc = _run(BLOCK_TORCH + "import lossgrad.torch")
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "ascend-lossgrad[torch]" in proc.stderr



def test_one_torch_version_everywhere() -> None:
    """The [torch] extra pins the version the tests run with; the README, docs/torch.md and .ci/run name the same."""
    import re

    root = Path(PYTHON_DIR).parent
    extra = re.findall(r'^torch = \["([^"]*)"\]$', (root / "pyproject.toml").read_text(), re.M)  # no tomllib on 3.10
    assert len(extra) == 1 and re.fullmatch(r"torch==\d+\.\d+\.\d+", extra[0]), extra
    pin = extra[0]
    readme = (root / "README.md").read_text()
    assert readme.splitlines()[4].startswith(f".venv/bin/pip install {pin} && "), readme.splitlines()[4]
    for text in (readme, (root / "docs" / "torch.md").read_text(), (root / ".ci" / "run").read_text()):
        assert pin in text
        assert set(re.findall(r"torch[=>]=[\d.]+", text)) == {pin}  # no other version named
