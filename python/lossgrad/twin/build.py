"""Compile a kernel source against the twin headers into a shared library, with a content-hashed cache.

The cache key covers the kernel source, every twin header, the launcher, the extra include directories' headers,
the defines and the compiler's version, so a cached library is reused only when nothing that could change it did.
Builds go to a temporary file and are renamed into place, so two processes building the same kernel at once are
safe (the loser's rename just replaces an identical file); an flock keeps them from doing the work twice. A
compile that is interrupted (Ctrl-C, `cancel_builds`) is killed and leaves only its temporary directory's removal
behind: no partial library is ever renamed into place, and flocks die with their process. Compilers also die with
the Python process that started them (a closed terminal, a SIGTERM to a program, a crash), and the temporaries such a
death leaves in the cache are swept by the next build (`sweep_stale`). Every cached library has a SHA-256 beside it,
checked before its first load in a process: a damaged file is rebuilt, never loaded.

`bundle_source` puts several kernels into one translation unit (one library): verify builds one per architecture,
which costs about as much compiler time as two single kernels instead of one per kernel.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from .. import progress
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


CACHE_ENV = "LOSSGRAD_CACHE"


class CacheDirError(ValueError):
    """$LOSSGRAD_CACHE names no usable directory (a `~` that cannot be expanded)."""


def cache_root() -> Path:
    """$LOSSGRAD_CACHE, else $XDG_CACHE_HOME/lossgrad, else ~/.cache/lossgrad (an empty or relative XDG_CACHE_HOME
    is ignored, as the XDG base-directory spec says). LOSSGRAD_CACHE is taken as a shell would: a leading `~` is
    expanded (a .env file or a Dockerfile ENV passes it unexpanded) and a relative path is taken from the current
    directory, so the result is always absolute."""
    root = os.environ.get(CACHE_ENV)
    if root:
        expanded = os.path.expanduser(root)
        if expanded.startswith("~"):
            raise CacheDirError(f"{CACHE_ENV}={root!r}: cannot expand {expanded.split('/')[0]!r} (no such user, or "
                                "no HOME); give an absolute path")
        return Path(os.path.abspath(expanded))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "lossgrad"


@contextmanager
def cache_space(what: str) -> Iterator[None]:
    """A full disk or quota (ENOSPC, EDQUOT) while writing the kernel cache becomes one OSError whose message names
    the cache directory and LOSSGRAD_CACHE (the CLI prints it as one line)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or getattr(exc, "cache_full", False):
            raise
        raise cache_full_error(what, exc.strerror or str(exc)) from None


def cache_full_error(what: str, detail: str) -> OSError:
    err = OSError(errno.ENOSPC, f"{detail} while {what} in the kernel cache {cache_root()}: free space there, or set "
                                f"{CACHE_ENV} to a directory on another disk")
    err.cache_full = True  # type: ignore[attr-defined]
    return err


@lru_cache(maxsize=1)
def _compiler_version() -> str:
    try:
        return subprocess.run([CXX, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise TwinCompileError(f"the twin needs a C++17 compiler ({CXX}): {exc}", "") from exc


def _headers(directory: Path, recursive: bool) -> list[Path]:
    found = directory.rglob("*") if recursive else directory.glob("*")
    return sorted(p for p in found if p.suffix in (".h", ".hpp", ".inc") and p.is_file())


# A cache hit must cost far less than a kernel run (verify looks a library up for each of its thousands of cases):
# the twin's header list is read once per process (a header that nothing includes cannot change a build) and a
# file's digest is reused while its size, mtime and inode are unchanged.
_twin_header_list: list[tuple[Path, Path]] = []
_file_digests: dict[tuple[str, int, int, int], bytes] = {}


def _file_digest(path: Path) -> bytes:
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
    d = _file_digests.get(key)
    if d is None:
        d = hashlib.sha256(path.read_bytes()).digest()
        _file_digests[key] = d
    return d


def _digest_headers(h: "hashlib._Hash", dirs: Sequence[tuple[Path, bool]]) -> None:
    """Feed every header of the twin and of `dirs` (name and content digest) into h."""
    if not _twin_header_list:
        _twin_header_list[:] = [(d, p) for d in (INCLUDE_DIR, RUNTIME_DIR) for p in _headers(d, True)]
    for d, p in _twin_header_list:
        h.update(str(p.relative_to(d)).encode())
        h.update(_file_digest(p))
    for d, recursive in dirs:
        for p in _headers(d, recursive):
            h.update(str(p.relative_to(d)).encode())
            h.update(_file_digest(p))


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
        "TWIN_SATURATION": "1" if a.overflow_mode.value == "saturation" else "0",
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
    _digest_headers(h, ())
    return h.hexdigest()


# ---- compiler processes: announced when slow, killed on Ctrl-C or cancel_builds() -----------------------------------

NOTICE_AFTER_S = 1.0  # a compile that takes longer than this says so (progress.notice)

_running: dict[subprocess.Popen, bool] = {}  # live compiler processes -> cancelled by cancel_builds()
_running_lock = threading.Lock()


class BuildCancelled(RuntimeError):
    """A compile stopped by cancel_builds() (an interrupted verify): nothing of it reached the cache."""


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the watchdog shell, the driver and its cc1plus/as/ld: one group
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


# The compiler runs under a watchdog shell in a process group of its own: when the Python process dies without
# killing it (SIGHUP of a closed terminal, a SIGTERM or SIGKILL to a program whose call is compiling, a crash), the
# kernel sends the shell SIGTERM (Linux PR_SET_PDEATHSIG) and its trap kills the whole group. The driver alone would
# not do: cc1plus, its child, would keep compiling for tens of seconds after the driver died.
_WATCHDOG = 'trap "kill -KILL 0" TERM HUP INT; "$@" & wait $!'
_PR_SET_PDEATHSIG = 1


@lru_cache(maxsize=1)
def _prctl() -> "ctypes._CFuncPtr | None":
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return prctl


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Ask Linux to send this process `signum` when its parent dies (verify's worker processes); no-op elsewhere."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)


def _parent_death_hook() -> "Callable[[], None] | None":
    """A preexec_fn that asks for SIGTERM when the parent dies (None where prctl does not exist)."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def hook() -> None:  # in the child, between fork and exec: no allocation-heavy work, no locks
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(128 + signal.SIGTERM)
    return hook


def _run_compiler(cmd: Sequence[str], what: str, tmpdir: "Path | None" = None) -> tuple[int, str]:
    """Run a compiler command and return (exit status, stderr). It runs in a session of its own, so a terminal's
    Ctrl-C reaches Python only, which kills it: a KeyboardInterrupt here, or cancel_builds() from another thread; it
    dies with this process otherwise (_WATCHDOG). `tmpdir` becomes the compiler's TMPDIR (its intermediate files
    then live in the build's temporary directory: swept with it, and on the cache's disk, which a full-disk error
    names). The wait is a loop of short timeouts, so the main thread takes a KeyboardInterrupt at once."""
    env = None if tmpdir is None else dict(os.environ, TMPDIR=str(tmpdir))
    proc = subprocess.Popen(["/bin/sh", "-c", _WATCHDOG, "lossgrad-cc", *cmd], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_parent_death_hook(), env=env)
    with _running_lock:
        _running[proc] = False
    t0 = time.monotonic()
    announced = False
    try:
        while True:
            try:
                _, err = proc.communicate(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                if not announced and time.monotonic() - t0 >= NOTICE_AFTER_S:
                    progress.notice(f"compiling {what}...")
                    announced = True
    except BaseException:
        _kill(proc)
        raise
    finally:
        with _running_lock:
            cancelled = _running.pop(proc, False)
    if cancelled:
        raise BuildCancelled(f"the compile of {what} was cancelled")
    if proc.returncode == 127 and not shutil.which(cmd[0]):
        raise TwinCompileError(f"the twin needs a C++17 compiler ({cmd[0]}): not found", err)
    return proc.returncode, err


def cancel_builds() -> int:
    """Kill every compile running in this process (their build() calls raise BuildCancelled); returns how many."""
    with _running_lock:
        procs = list(_running)
        for proc in procs:
            _running[proc] = True
    for proc in procs:
        _kill(proc)
    return len(procs)


def _precompiled(macro: Mapping[str, str], what: str) -> Path | None:
    """A precompiled twin header for these flags and defines (about a third of a single kernel's compile time),
    built once per configuration and shared; None when it cannot be built (the compile then parses the headers)."""
    key = hashlib.sha256(repr((_twin_digest(), CXXFLAGS, sorted(macro.items()))).encode()).hexdigest()[:32]
    d = cache_root() / "twin" / "pch" / key
    gch = d / (PCH_NAME + ".gch")
    if gch.exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    with open(d / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tmp = d / f"{PCH_NAME}.gch{TMP_MARK}{os.getpid()}.{threading.get_ident()}"
        try:
            if gch.exists():
                return d
            _remove_temporaries(d)  # a dead process's (this lock is ours)
            (d / PCH_NAME).write_text('#include "kernel_operator.h"\n#include "launcher.h"\n')
            flags = [f for f in CXXFLAGS if f != "-shared"]
            cmd = [CXX, *flags, "-x", "c++-header", f"-I{INCLUDE_DIR}", f"-I{RUNTIME_DIR}",
                   *[f"-D{k}={v}" for k, v in macro.items()], "-o", str(tmp), str(d / PCH_NAME)]
            if _run_compiler(cmd, what)[0] != 0:
                return None
            os.replace(tmp, gch)
        finally:
            tmp.unlink(missing_ok=True)
            fcntl.flock(lock, fcntl.LOCK_UN)
    return d


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _explain(stderr: str) -> str:
    """The lines a reader needs: static_assert texts and errors, without template backtraces."""
    keep = [ln.strip() for ln in stderr.splitlines()
            if "static assertion failed" in ln or "error:" in ln or "#error" in ln]
    return "\n".join(dict.fromkeys(keep)) or stderr.strip()[-2000:]


# Compile errors are deterministic for a key: remembered per process, so a kernel that does not compile fails every
# later call at once instead of running the compiler again for each.
_failed: dict[str, TwinCompileError] = {}


def build(source: "str | os.PathLike[str]", kernel_name: str, nargs: int, soc: Soc,
          include_dirs: Sequence["str | os.PathLike[str]"] = (), defines: Mapping[str, object] | None = None, *,
          label: str | None = None, precompiled: bool = True) -> BuiltKernel:
    """Compile `source` (cached): a library whose launches call `kernel_name` with `nargs` GM arguments.

    `label` names the kernel in the progress notice ("compiling <label>..."); `precompiled=False` skips the
    precompiled twin header, which only pays off over several compiles of one configuration (not for a bundle)."""
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
    h.update(hashlib.sha256(src.read_bytes()).digest())  # read every time: a rewrite may keep size and mtime tick
    _digest_headers(h, [(src.parent, False), *[(i, False) for i in incs]])
    key = h.hexdigest()[:32]
    out_dir = cache_root() / "twin" / key
    lib = out_dir / f"{kernel_name}.so"
    if lib.exists() and _loadable(lib):
        return BuiltKernel(lib, True, 0.0)
    if key in _failed:
        err = _failed[key]
        raise TwinCompileError(str(err), err.stderr)
    what = f"{label or kernel_name} for {soc.name}"
    t0 = time.perf_counter()
    with cache_space(f"compiling {what}"):
        sweep_stale()
        out_dir.mkdir(parents=True, exist_ok=True)
        with open(out_dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if lib.exists():
                    if _loadable(lib):
                        return BuiltKernel(lib, True, time.perf_counter() - t0)
                    _discard_damaged(lib)  # then rebuilt below
                _remove_temporaries(out_dir)  # a dead process's (this lock is ours)
                pch = _precompiled(macro, f"the twin headers for {soc.name}") if precompiled else None
                with tempfile.TemporaryDirectory(dir=out_dir, prefix=TMP_MARK) as tmp:
                    shim = Path(tmp) / "shim.cpp"
                    shim.write_text(_shim(src, kernel_name, nargs, pch))
                    tmp_lib = Path(tmp) / "kernel.so"
                    cmd = [CXX, *CXXFLAGS, f"-I{INCLUDE_DIR}", f"-I{RUNTIME_DIR}", f"-I{src.parent}",
                           *[f"-I{d}" for d in incs], *[f"-D{k}={v}" for k, v in macro.items()],
                           "-o", str(tmp_lib), str(shim)]
                    status, stderr = _run_compiler(cmd, what, tmpdir=Path(tmp))
                    if status != 0 and _NO_SPACE in stderr:  # not the kernel's fault, and not remembered as one
                        raise cache_full_error(f"compiling {what}",
                                               f"{_NO_SPACE} (g++: {_explain(stderr).splitlines()[0]})")
                    if status != 0:
                        err = TwinCompileError(f"{src.name} does not compile for {soc.name} "
                                               f"(NpuArch {soc.arch.npu_arch}):\n{_explain(stderr)}", stderr)
                        _failed[key] = err
                        raise err
                    install(tmp_lib, lib)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    return BuiltKernel(lib, False, time.perf_counter() - t0)


# ---- damaged cache entries, stale temporaries and full disks ------------------------------------------------------

_NO_SPACE = os.strerror(errno.ENOSPC)  # "No space left on device", as g++, as and ld report it
_LOADABLE: set[str] = set()  # libraries this process has checked and loaded (a damaged file never gets here)
DIGEST_SUFFIX = ".sha256"  # beside every cached library: the SHA-256 of its bytes, hex
TMP_MARK = "tmp-lossgrad-"  # names of the cache's temporary files and directories (removed when their writer died)


def _digest_path(lib: Path) -> Path:
    return lib.with_name(lib.name + DIGEST_SUFFIX)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def install(built: Path, lib: Path) -> None:
    """Move a freshly built library into the cache at `lib`, its digest first: a library is only ever found with
    the digest of its bytes beside it (a crash between the two renames leaves a digest without a library)."""
    digest = _digest_path(lib)
    tmp = digest.with_name(f"{digest.name}{TMP_MARK}{os.getpid()}.{threading.get_ident()}")
    try:
        tmp.write_text(_sha256(built) + "\n")
        os.replace(tmp, digest)
    finally:
        tmp.unlink(missing_ok=True)
    os.replace(built, lib)


def _intact(lib: Path) -> bool:
    """Whether the library's bytes are those its digest file records. dlopen maps a truncated library and the process
    dies of SIGBUS when the loader touches the missing pages; a zeroed code page (a crash, a disk fault) loads and
    dies of SIGSEGV at the first call: neither may reach dlopen."""
    try:
        return _digest_path(lib).read_text().strip() == _sha256(lib)
    except OSError:
        return False
def _loadable(lib: Path, entry: str = "twin_launch") -> bool:
    """Whether a cached library is intact (its digest), loads and has its `entry` symbol (the launcher's, or the tiling
    core's C ABI). A library is only ever renamed into place whole, but a disk fault, a crash, a copied cache or a
    hand edit can still damage one, and every later call would fail the same way (or die)."""
    key = str(lib)
    if key in _LOADABLE:
        return True
    if not _intact(lib):
        return False
    try:
        getattr(ctypes.CDLL(key, mode=os.RTLD_LOCAL), entry)  # the symbol lookup is the check
    except (OSError, AttributeError):
        return False
    _LOADABLE.add(key)
    return True


def _discard_damaged(lib: Path) -> None:
    """Remove a damaged cached library so that it is rebuilt; when that is impossible, say what to delete."""
    progress.notice(f"the cached library {lib} is damaged (its bytes do not match its digest, or it does not "
                    "load); rebuilding it")
    try:
        lib.unlink()
        _digest_path(lib).unlink(missing_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, f"the cached library {lib} is damaged and cannot be removed "
                      f"({exc.strerror}); delete the kernel cache {cache_root()} (it is rebuilt as needed) or "
                      f"set {CACHE_ENV} to another directory", str(lib)) from None


def _remove_temporaries(directory: Path) -> int:
    """Remove the temporaries in a cache directory whose lock the caller holds: whoever wrote them died (their
    writers hold the same lock while they exist). Returns how many were removed."""
    removed = 0
    try:
        entries = list(directory.iterdir())
    except OSError:
        return 0
    for p in entries:
        if not _is_temporary(p):
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed += 1
    return removed


def _is_temporary(p: Path) -> bool:
    """Ours, or one an earlier version left: a build directory (tempfile's "tmp" prefix) or a ".gch.tmp" file."""
    return TMP_MARK in p.name or ".gch.tmp" in p.name or (p.name.startswith("tmp") and p.is_dir())


_swept: set[str] = set()  # cache roots swept by this process


def sweep_stale(force: bool = False) -> int:
    """Remove the temporaries that processes killed mid-build left in the cache (a half-written precompiled header
    of ~80 MB, a build directory): every entry directory whose lock no live process holds is cleaned. Run once per
    process and cache root before its first compile (a listing of the cache: milliseconds), and by `lossgrad cache
    clean`; returns how many temporaries were removed."""
    root = cache_root()
    if str(root) in _swept and not force:
        return 0
    _swept.add(str(root))
    removed = 0
    for parent in (root / "twin", root / "twin" / "pch", root / "tiling"):
        try:
            entries = [d for d in parent.iterdir() if d.is_dir() and not d.is_symlink() and d.name != "pch"]
        except OSError:
            continue
        for d in entries:
            if not any(_is_temporary(p) for p in d.iterdir()):
                continue
            try:
                with open(d / ".lock", "a") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # busy: a live build; its temporaries stay
                    try:
                        removed += _remove_temporaries(d)
                    finally:
                        fcntl.flock(lock, fcntl.LOCK_UN)
            except OSError:
                continue
    removed += _sweep_kernel_sources(root / "kernels")
    return removed


def _sweep_kernel_sources(kernels: Path) -> int:
    """codegen.write_atomic's temporaries (`<name>.tmp<pid>.<thread>`) whose process is gone."""
    removed = 0
    try:
        dirs = [d for d in kernels.iterdir() if d.is_dir()]
    except OSError:
        return 0
    for d in dirs:
        for p in d.glob("*.tmp*"):
            pid = p.name.rsplit(".tmp", 1)[1].split(".")[0]
            if pid.isdigit() and not _alive(int(pid)):
                p.unlink(missing_ok=True)
                removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---- bundles: several kernels in one library ---------------------------------------------------------------------

BUNDLE_ENTRY = "twin_bundle"
BUNDLE_SHIFT = 32  # launch key = kernel index << 32 | the kernel's tiling key


def bundle_key(index: int, tiling_key: int) -> int:
    """The launch key that runs kernel `index` of a bundle with `tiling_key`."""
    if not 0 <= tiling_key < 1 << BUNDLE_SHIFT:
        raise ValueError(f"tiling key {tiling_key} does not fit a bundle's launch key")
    return index << BUNDLE_SHIFT | tiling_key


def bundle_source(kernels: Sequence[tuple[str, str]], nargs: int) -> str:
    """One translation unit holding several kernels, given as (source text, entry name) with `nargs` GM arguments
    each: every kernel in a namespace of its own with its entry renamed, and one entry, BUNDLE_ENTRY, that runs
    kernel `launch key >> 32` with the tiling key `launch key & 0xFFFFFFFF` (build() it with that kernel name).

    The kernels' own #include lines must come before their code; they are hoisted to the top (included once, at
    global scope) so that every namespace sees the same headers. The twin headers and the compiler's code for them
    are then shared by all the kernels: a bundle of sixteen kernels compiles in about the time of two single ones."""
    if not kernels:
        raise ValueError("a bundle needs at least one kernel")
    includes: list[str] = []
    bodies: list[str] = []
    for i, (text, entry) in enumerate(kernels):
        if not _IDENT.match(entry):
            raise ValueError(f"entry {entry!r} is not a C identifier")
        lines = text.splitlines()
        head = 0
        while head < len(lines) and (not lines[head].strip() or lines[head].lstrip().startswith(("//", "#include"))):
            head += 1
        if any(ln.lstrip().startswith("#include") for ln in lines[head:]):
            raise ValueError(f"kernel {i} ({entry}) has an #include after its first line of code; a bundle cannot "
                             "hoist it")
        includes += [ln.strip() for ln in lines[:head] if ln.lstrip().startswith("#include")]
        body = "\n".join(ln for ln in lines if not ln.lstrip().startswith("#include"))
        bodies.append(f"namespace twin_bundle_{i} {{\n#define {entry} twin_bundle_{i}_entry\n{body}\n#undef {entry}\n"
                      f"}}  // namespace twin_bundle_{i}\n")
    params = ", ".join(f"GM_ADDR a{i}" for i in range(nargs))
    args = ", ".join(f"a{i}" for i in range(nargs))
    cases = "\n".join(f"    case {i}: twin_bundle_{i}::twin_bundle_{i}_entry({args}); break;"
                      for i in range(len(kernels)))
    return (
        "// A twin bundle: several kernels in one library (lossgrad.twin.build.bundle_source); do not edit.\n"
        + "\n".join(dict.fromkeys(includes)) + "\n\n" + "\n".join(bodies) + f"""
namespace twin_bundle_detail {{
// The kernel sees its own tiling key; the launch key is restored for the next core's call.
struct KeyScope {{
    uint64_t launch;
    KeyScope() : launch(TILING_KEY_VAR) {{ TILING_KEY_VAR = launch & 0xFFFFFFFFull; }}
    ~KeyScope() {{ TILING_KEY_VAR = launch; }}
}};
}}  // namespace twin_bundle_detail

extern "C" __global__ __aicore__ void {BUNDLE_ENTRY}({params}) {{
    twin_bundle_detail::KeyScope scope;
    switch (scope.launch >> {BUNDLE_SHIFT}) {{
{cases}
    default: throw ::twin::KernelFaultError("twin bundle: no kernel " + std::to_string(scope.launch >> 32));
    }}
}}
""")


def clear_cache() -> None:
    shutil.rmtree(cache_root() / "twin", ignore_errors=True)
