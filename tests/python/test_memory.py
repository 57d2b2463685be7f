"""Calls whose output cannot fit in memory are refused at once, before anything is allocated, with an error that
names the sizes (issue 27): never minutes of allocating, never the OOM killer's silent end."""
from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

import lossgrad
from lossgrad import memory
from lossgrad.cli import main
from lossgrad.errors import OutputTooLarge


def _outer(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tiny inputs whose broadcast output is n x n."""
    return np.ones((), np.float32), np.ones((n, 1), np.float32), np.zeros((1, n), np.float32)


def test_a_16_tib_output_is_refused_at_once() -> None:
    g, s, t = _outer(1 << 21)  # 2^42 elements of float32
    t0 = time.monotonic()
    with pytest.raises(OutputTooLarge) as info:
        lossgrad.mse_loss_backward(g, s, t, reduction="none")
    assert time.monotonic() - t0 < 2.0
    message = str(info.value)
    assert "2097152x2097152, float32) takes 16.0 TiB" in message and "can be allocated" in message
    assert isinstance(info.value, MemoryError)


def test_the_limit_is_checked_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    g, s, t = _outer(512)  # 1 MiB of output
    monkeypatch.setattr(memory, "available", lambda: (512 * 1024, "a test limit"))
    for run in (lambda: lossgrad.mse_loss_backward(g, s, t, reduction="none"),
                lambda: lossgrad.profile("mse", g, s, t, "none")):
        with pytest.raises(OutputTooLarge,
                           match=r"takes 1\.0 MiB .* only 512\.0 KiB can be allocated \(a test limit\)"):
            run()
    monkeypatch.setattr(memory, "available", lambda: None)  # not knowable (not Linux): the call runs
    assert lossgrad.mse_loss_backward(g, s, t, reduction="none", soc="310P").shape == (512, 512)


def test_an_address_space_limit_is_read() -> None:
    """Under `ulimit -v` the limit is the address space left: a 2 GiB output is refused by name, not with a bare
    MemoryError after the allocation."""
    code = """
import resource, numpy as np, lossgrad
from lossgrad import memory
size = int([l for l in open('/proc/self/status') if l.startswith('VmSize:')][0].split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + (512 << 20), resource.RLIM_INFINITY))
room, what = memory.available()
assert what.startswith('RLIMIT_AS') and room <= 512 << 20, (room, what)
try:
    lossgrad.mse_loss_backward(np.ones((), np.float32), np.ones((1 << 15, 1), np.float32),
                               np.zeros((1, 1 << 14), np.float32), reduction='none')
except lossgrad.errors.OutputTooLarge as exc:
    print(exc)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "takes 2.0 GiB" in r.stdout and "RLIMIT_AS" in r.stdout


def test_the_command_line_says_it_in_one_line() -> None:
    r = CliRunner().invoke(main, ["bench", "--op", "mse", "--shapes", "();(2097152,1);(1,2097152)"])
    assert r.exit_code == 1, r.output
    lines = r.output.strip().splitlines()
    assert lines[-1].startswith("lossgrad: error: mse_loss_backward: the output (2097152x2097152, float32) takes "
                                "16.0 TiB")
    assert "Traceback" not in r.output


def test_format_bytes() -> None:
    assert [memory.format_bytes(n) for n in (0, 1023, 1536, 3 << 30, 1 << 42)] == [
        "0 B", "1023 B", "1.5 KiB", "3.0 GiB", "4.0 TiB"]
