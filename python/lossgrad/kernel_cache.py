"""The kernel cache as a whole: what it holds (`lossgrad cache`) and emptying it (`lossgrad cache clean`).

The cache root is lossgrad.twin.build.cache_root() ($LOSSGRAD_CACHE, else $XDG_CACHE_HOME/lossgrad, else
~/.cache/lossgrad). Only the parts lossgrad writes are listed and removed; anything else in that directory (it may be
a directory the user shares with other things) is never touched.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .twin.build import cache_root, sweep_stale

# The parts lossgrad writes below the cache root: directory name -> what it holds.
PARTS = {
    "twin": "compiled twin kernels and bundles",
    "tiling": "the compiled tiling core",
    "kernels": "rendered kernel sources",
    "cann": "CANN builds of the custom-op package and kernel-launch libraries",
}


@dataclass(frozen=True)
class Part:
    name: str
    what: str
    bytes: int
    entries: int  # directories directly below the part (one per cached build or source set)


def _size(path: Path) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        for f in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def parts(root: Path | None = None) -> list[Part]:
    """The parts present under the cache root, with their sizes."""
    root = root or cache_root()
    found = []
    for name, what in PARTS.items():
        d = root / name
        if not d.is_dir() or d.is_symlink():
            continue
        entries = sum(1 for p in d.iterdir() if p.is_dir() and p.name != "pch")
        pch = d / "pch"
        pch_bytes = _size(pch) if name == "twin" and pch.is_dir() else 0
        found.append(Part(name, what, _size(d) - pch_bytes, entries))
        if pch_bytes:
            found.append(Part("twin/pch", "precompiled twin headers (one per architecture and twin version)",
                              pch_bytes, sum(1 for p in pch.iterdir() if p.is_dir())))
    return found


def clean(root: Path | None = None) -> int:
    """Remove every part lossgrad wrote under the cache root (it is rebuilt as needed); returns the bytes freed. A
    build running meanwhile in another process renders and compiles again what it needs."""
    root = root or cache_root()
    sweep_stale(force=True)
    freed = 0
    for name in PARTS:
        d = root / name
        if d.is_symlink():  # a link the user made: the link goes, not what it points to
            d.unlink()
            continue
        if d.is_dir():
            freed += _size(d)
            shutil.rmtree(d, ignore_errors=True)
    return freed
