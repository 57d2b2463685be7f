"""Progress notices for long work (a kernel compile of several seconds), one line each on stderr.

Shown when stderr is a terminal, or when LOSSGRAD_PROGRESS=1; LOSSGRAD_PROGRESS=0 silences them everywhere. The
command line shows them on every command, even into a log (`enable()`), so a long first run never looks hung;
library calls from a script or a test stay quiet unless a person is watching the terminal.
"""
from __future__ import annotations

import os
import sys
import threading

ENV = "LOSSGRAD_PROGRESS"

_forced: bool | None = None
_quiet = threading.local()  # a thread that reports progress its own way (verify's status line) mutes notices
_write_lock = threading.Lock()


def enable(on: bool = True) -> None:
    """Show (or hide) notices whatever stderr is; the LOSSGRAD_PROGRESS environment variable still wins."""
    global _forced
    _forced = on


def enabled() -> bool:
    env = os.environ.get(ENV, "").strip()
    if env == "0" or getattr(_quiet, "on", False):
        return False
    if env == "1":
        return True
    if _forced is not None:
        return _forced
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


class muted:
    """Context manager: no notices from this thread (its caller reports progress itself)."""

    def __enter__(self) -> "muted":
        self._was = getattr(_quiet, "on", False)
        _quiet.on = True
        return self

    def __exit__(self, *exc: object) -> None:
        _quiet.on = self._was


def notice(message: str) -> None:
    if not enabled():
        return
    with _write_lock:
        try:
            sys.stderr.write(f"lossgrad: {message}\n")
            sys.stderr.flush()
        except (AttributeError, ValueError, OSError):
            pass
