"""Output directories that lossgrad owns: created with a marker file, reused only when the marker is there.

`lossgrad build` and the runners' build cache write only below such a directory and never delete anything they
did not create; a non-empty directory without the marker is refused, so a mistyped --out cannot scribble over (or
be mistaken for) someone else's files.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

MARKER = ".lossgrad-build"


class UnsafeOutputDir(RuntimeError):
    """The output directory cannot be used safely (exists with foreign content, or a path escapes it)."""


def inspect(out: Path) -> str:
    """'create' (missing), 'adopt' (empty, not ours yet), 'reuse' (has our marker); raises otherwise."""
    if not out.exists():
        return "create"
    if not out.is_dir():
        raise UnsafeOutputDir(f"{out} exists and is not a directory")
    if (out / MARKER).is_file():
        return "reuse"
    if any(out.iterdir()):
        raise UnsafeOutputDir(f"{out} is not empty and was not created by lossgrad (no {MARKER} marker); "
                              "choose a new or empty directory")
    return "adopt"


def claim(out: Path, purpose: str) -> Path:
    """Create (or adopt, or reuse) out and write the marker; returns the resolved path."""
    state = inspect(out)
    out.mkdir(parents=True, exist_ok=True)
    marker = out / MARKER
    if state != "reuse":
        marker.write_text(json.dumps({"created_by": "lossgrad", "purpose": purpose, "pid": os.getpid(),
                                      "time": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=1) + "\n")
    return out.resolve()


def inside(out: Path, rel: "str | Path") -> Path:
    """out/rel, refusing anything that resolves outside out."""
    root = out.resolve()
    path = (root / rel).resolve()
    if path != root and root not in path.parents:
        raise UnsafeOutputDir(f"{rel} resolves outside the output directory {root}")
    return path


def write(out: Path, rel: "str | Path", text: str, *, executable: bool = False) -> Path:
    path = inside(out, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not (path.is_file() and path.read_text() == text):  # an unchanged file keeps its mtime (no CMake rebuild)
        path.write_text(text)
    if executable:
        path.chmod(path.stat().st_mode | 0o111)
    return path
