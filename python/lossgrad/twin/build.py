"""Compile a kernel source against the twin headers into a shared library, with a content-hashed cache.

The cache key covers the kernel source, every twin header, the launcher, the extra include directories' headers,
the defines and the compiler's version, so a cached library is reused only when nothing that could change it did.
Builds go to a temporary file and are renamed into place, so two processes building the same kernel at once are
safe (the loser's rename just replaces an identical file); an flock keeps them from doing the work twice.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from ..socs import Soc

TWIN_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = TWIN_DIR / "include"
RUNTIME_DIR = TWIN_DIR / "runtime"

CXX = os.environ.get("LOSSGRAD_CXX", "g++")
CXXFLAGS = ("-std=c++17", "-O1", "-fPIC", "-shared", "-fvisibility=hidden", "-fno-gnu-unique", "-Wall", "-Wextra",
            "-Wno-unused-parameter")


class TwinCompileError(RuntimeError):
    """The kernel does not compile against the twin (e.g. a dtype or API the architecture does not have)."""

    def __init__(self, message: str, stderr: str) -> None:
        super().__init__(message)
        self.stderr = stderr


@dataclass(frozen=True)
class BuiltKernel:
    path: Path
    cached: bool
    seconds: float


def cache_root() -> Path:
    """$LOSSGRAD_CACHE, else $XDG_CACHE_HOME/lossgrad, else ~/.cache/lossgrad (an empty or relative XDG_CACHE_HOME
    is ignored, as the XDG base-directory spec says)."""
    root = os.environ.get("LOSSGRAD_CACHE")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "lossgrad"


@lru_cache(maxsize=1)
def _compiler_version() -> str:
    try:
        return subprocess.run([CXX, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise TwinCompileError(f"the twin needs a C++17 compiler ({CXX}): {exc}", "") from exc


def _headers(directory: Path, recursive: bool) -> list[Path]:
    found = directory.rglob("*") if recursive else directory.glob("*")
    return sorted(p for p in found if p.suffix in (".h", ".hpp", ".inc") and p.is_file())


def arch_defines(soc: Soc) -> dict[str, str]:
    """The macros the device compiler (and tikicpulib) define for the architecture, plus the twin's UB figures."""
    a = soc.arch
    return {
        "__NPU_ARCH__": str(a.npu_arch),
        "__CCE_AICORE__": str(a.cce_aicore),
        a.dav_macro: "1",
        "TWIN_UB_BYTES": str(a.ub_bytes.value),
        "TWIN_UB_KERNEL_BYTES": str(a.ub_kernel_bytes.value),
        "TWIN_EVENTS_PER_POSITION": str(a.events_per_position),
        "LOSSGRAD_TWIN": "1",
    }


PCH_NAME = "twin_all.h"


def _shim(source: Path, kernel_name: str, nargs: int, pch: Path | None) -> str:
    """The translation unit: the twin (precompiled when possible), the kernel, and the launcher's entry hook."""
    call = ", ".join(f"args[{i}]" for i in range(nargs))
    head = f'#include "{pch / PCH_NAME}"\n' if pch else ""
    return (f'{head}#include "{source}"\n#include "launcher.h"\n'
            f"void TwinInvoke(GM_ADDR* args) {{ {kernel_name}({call}); }}\n")


def _twin_digest() -> str:
    h = hashlib.sha256()
    h.update(_compiler_version().encode())
    for d in (INCLUDE_DIR, RUNTIME_DIR):
        for p in _headers(d, True):
            h.update(str(p.relative_to(d)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def _precompiled(macro: Mapping[str, str]) -> Path | None:
    """A precompiled twin header for these flags and defines (about half of a kernel's compile time), built once
    per configuration and shared; None when it cannot be built (the compile then parses the headers)."""
    key = hashlib.sha256(repr((_twin_digest(), CXXFLAGS, sorted(macro.items()))).encode()).hexdigest()[:32]
    d = cache_root() / "twin" / "pch" / key
    gch = d / (PCH_NAME + ".gch")
    if gch.exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    with open(d / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if gch.exists():
                return d
            (d / PCH_NAME).write_text('#include "kernel_operator.h"\n#include "launcher.h"\n')
            tmp = d / f"{PCH_NAME}.gch.tmp{os.getpid()}"
            flags = [f for f in CXXFLAGS if f != "-shared"]
            cmd = [CXX, *flags, "-x", "c++-header", f"-I{INCLUDE_DIR}", f"-I{RUNTIME_DIR}",
                   *[f"-D{k}={v}" for k, v in macro.items()], "-o", str(tmp), str(d / PCH_NAME)]
            if subprocess.run(cmd, capture_output=True, text=True).returncode != 0:
                tmp.unlink(missing_ok=True)
                return None
            os.replace(tmp, gch)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return d


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _explain(stderr: str) -> str:
    """The lines a reader needs: static_assert texts and errors, without template backtraces."""
    keep = [ln.strip() for ln in stderr.splitlines()
            if "static assertion failed" in ln or "error:" in ln or "#error" in ln]
    return "\n".join(dict.fromkeys(keep)) or stderr.strip()[-2000:]


def build(source: "str | os.PathLike[str]", kernel_name: str, nargs: int, soc: Soc,
          include_dirs: Sequence["str | os.PathLike[str]"] = (), defines: Mapping[str, object] | None = None
          ) -> BuiltKernel:
    src = Path(source).resolve()
    if not src.is_file():
        raise FileNotFoundError(f"kernel source {src} does not exist")
    if not _IDENT.match(kernel_name):
        raise ValueError(f"kernel_name {kernel_name!r} is not a C identifier")
    macro = dict(arch_defines(soc))
    for k, v in (defines or {}).items():
        macro[str(k)] = "1" if v is None else str(v)
    incs = [Path(d).resolve() for d in include_dirs]
    h = hashlib.sha256()
    h.update(_compiler_version().encode())
    h.update(repr((CXXFLAGS, sorted(macro.items()), kernel_name, nargs, [str(d) for d in incs])).encode())
    h.update(src.read_bytes())
    for d, recursive in [(INCLUDE_DIR, True), (RUNTIME_DIR, True), (src.parent, False), *[(i, False) for i in incs]]:
        for p in _headers(d, recursive):
            h.update(str(p.relative_to(d)).encode())
            h.update(p.read_bytes())
    key = h.hexdigest()[:32]
    out_dir = cache_root() / "twin" / key
    lib = out_dir / f"{kernel_name}.so"
    if lib.exists():
        return BuiltKernel(lib, True, 0.0)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with open(out_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if lib.exists():
                return BuiltKernel(lib, True, time.perf_counter() - t0)
            pch = _precompiled(macro)
            with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
                shim = Path(tmp) / "shim.cpp"
                shim.write_text(_shim(src, kernel_name, nargs, pch))
                tmp_lib = Path(tmp) / "kernel.so"
                cmd = [CXX, *CXXFLAGS, f"-I{INCLUDE_DIR}", f"-I{RUNTIME_DIR}", f"-I{src.parent}",
                       *[f"-I{d}" for d in incs], *[f"-D{k}={v}" for k, v in macro.items()],
                       "-o", str(tmp_lib), str(shim)]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    raise TwinCompileError(f"{src.name} does not compile for {soc.name} "
                                           f"(NpuArch {soc.arch.npu_arch}):\n{_explain(proc.stderr)}", proc.stderr)
                os.replace(tmp_lib, lib)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return BuiltKernel(lib, False, time.perf_counter() - t0)


def clear_cache() -> None:
    shutil.rmtree(cache_root() / "twin", ignore_errors=True)
