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

