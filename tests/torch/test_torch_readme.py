"""The README's PyTorch example, extracted from README.md and run as written: it trains with gradients from our
kernel (one MseLossBackward launch per step) and ends where the same loop with torch's own mse_loss ends."""
from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import lossgrad.runners.twin as twin_runner  # noqa: E402

from _torch_support import assert_within_standard  # noqa: E402

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    text = README.read_text()
    section = text[text.index("\n## PyTorch\n"):]
    section = section[:section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the README's PyTorch section should hold exactly one python example"
    return blocks[0]


def test_readme_example_trains_with_our_kernel(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    code = readme_example()
    launched: list[str] = []
    real = twin_runner.run_twin
    monkeypatch.setattr(twin_runner, "run_twin", lambda call: (launched.append(call.op.name), real(call))[1])
    ours: dict[str, Any] = {}
    exec(compile(code, str(README), "exec"), ours)
    steps = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("step ")]
    assert len(steps) == len(launched) and len(steps) >= 3 and set(launched) == {"mse_loss_backward"}
    losses = [float(ln.split()[-1]) for ln in steps]
    assert losses[-1] < losses[0]

    # The same program with torch's own loss: replace the two lossgrad.torch uses, then compare the trained models.
    torch_only = code.replace("lt.mse_loss(", "torch.nn.functional.mse_loss(")
    torch_only = re.sub(r"lt\.soc\([^)]*\)", "contextlib.nullcontext()", torch_only)
    assert "lt." not in torch_only.replace("import lossgrad.torch as lt", "")
    reference: dict[str, Any] = {"contextlib": contextlib}
    launched.clear()
    exec(compile(torch_only, "README (torch only)", "exec"), reference)
    assert launched == []
    for a, b in zip(ours["model"].parameters(), reference["model"].parameters()):
        assert_within_standard(a.detach(), b.detach(), "README model parameters")
