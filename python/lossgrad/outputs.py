"""Files the command line writes for the user (bench's --trace and --plot, verify's --export-cases).

Every output is checked before the work that produces it starts (`check_target`: a missing directory or a directory
given as the file costs nothing), then written whole or not at all, with the permissions any other new file gets
(0666 less the umask, like `open()`; an existing file keeps its own), through symlinks (a link the user made points
at where the data goes: the link stays, its target is written) and into special files as they are (`/dev/stdout`,
a FIFO: written directly, never replaced by a regular file).
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading
from typing import Callable

_umask_lock = threading.Lock()


def _new_file_mode() -> int:
    with _umask_lock:  # os.umask can only be read by setting it
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def check_target(path: str, option: str) -> None:
    """Refuse, before any work, a target that cannot be written: its directory missing or not writable, the path a
    directory, an existing file that is read-only. Raises ValueError naming the option."""
    try:
        st = os.stat(path)  # through symlinks: /dev/stdout is a terminal, a pipe or a file
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise ValueError(f"{option} {path}: is a directory; give a file name")
        if not os.access(path, os.W_OK):
            raise ValueError(f"{option} {path}: not writable")
        if not stat.S_ISREG(st.st_mode):
            return  # a device or FIFO: written as it is
    parent = os.path.dirname(os.path.realpath(path)) or "."
    if not os.path.isdir(parent):
        raise ValueError(f"{option} {path}: directory {os.path.dirname(path) or '.'} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {path}: directory {os.path.dirname(path) or '.'} is not writable")


def _temporary(real: str) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".{os.path.basename(real)}.", suffix=".tmp", dir=os.path.dirname(real) or ".")


def _fill(fd: int, tmp: str, write: Callable[[str], None], mode: int) -> None:
    """Let `write(tmp)` write the temporary file, then give it `mode` and flush it to the disk (a full disk may only
    show at fsync)."""
    os.close(fd)
    write(tmp)
    os.chmod(tmp, mode)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())


def write_replace(path: str, write: Callable[[str], None]) -> None:
    """Write the file at `path` (after symlinks) whole or not at all: `write(name)` writes a temporary file beside
    it, which is renamed over it. A special file (/dev/stdout, a FIFO) is written directly instead."""
    try:
        st = os.stat(path)  # through symlinks
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        write(path)
        return
    real = os.path.realpath(path)  # a symlink's target is replaced, the link stays
    mode = stat.S_IMODE(st.st_mode) if st is not None else _new_file_mode()
    fd, tmp = _temporary(real)
    try:
        _fill(fd, tmp, write, mode)
        os.replace(tmp, real)
    except OSError as exc:
        _unlink(tmp)
        raise _naming(exc, path) from None
    except BaseException:
        _unlink(tmp)
        raise


def write_new(path: str, write: Callable[[str], None]) -> None:
    """Create the file at `path` whole, never replacing one: the temporary file is hard-linked to the name, which
    fails if anything took the name meanwhile (two runs started together: one wins, the other gets
    FileExistsError). Where the file system has no hard links, an exclusive create of the name is used."""
    if os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, f"{path} exists; choose a new file name (nothing is overwritten)")
    fd, tmp = _temporary(os.path.abspath(path))
    try:
        try:
            _fill(fd, tmp, write, _new_file_mode())
        except OSError as exc:
            raise _naming(exc, path) from None
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise FileExistsError(errno.EEXIST, f"{path} exists (created meanwhile by another process); choose a "
                                  "new file name (nothing is overwritten)") from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOTSUP):
                raise
            _copy_exclusive(tmp, path)
    finally:
        _unlink(tmp)


def _copy_exclusive(src: str, path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as fh:
            out.write(fh.read())
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        _unlink(path)
        raise


def _naming(exc: OSError, path: str) -> OSError:
    """The error as the user's file's: never the name of a temporary file they did not ask for."""
    return type(exc)(exc.errno, exc.strerror or str(exc), path) if exc.errno is not None else exc


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
