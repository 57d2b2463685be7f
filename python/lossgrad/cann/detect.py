"""Finding the CANN toolkit and an Ascend device, and the one message every backend gives when they are missing.

CANN is found only through ``ASCEND_HOME_PATH``, the variable CANN's ``set_env.sh`` exports and the official samples
test (build_tooling.md §3.1). The version comes from ``<root>/<host-arch>-linux/ascend_toolkit_install.info`` (CANN
9.x and 8.x layouts) or ``<root>/version.cfg`` (older third-party CMake reads it), whichever exists first.
"""
from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..errors import BackendUnavailable

HOME_VAR = "ASCEND_HOME_PATH"
SET_ENV_HINT = "`source <cann>/set_env.sh` (e.g. /usr/local/Ascend/cann/set_env.sh; " \
               "/usr/local/Ascend/ascend-toolkit/set_env.sh on CANN 8.x)"


@dataclass(frozen=True)
class CannInstall:
    root: Path
    host_arch: str                 # x86_64 | aarch64: CANN's per-host directory prefix "<arch>-linux"
    version: str | None
    version_source: str | None     # the file the version was read from

    @property
    def arch_dir(self) -> Path:
        return self.root / f"{self.host_arch}-linux"

    @property
    def lib64(self) -> Path:
        return self.root / "lib64"

    def describe(self) -> str:
        version = self.version or "unknown version"
        return f"CANN {version} at {self.root}" + (f" (from {self.version_source})" if self.version_source else "")


def host_arch() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def _parse_version(text: str) -> str | None:
    # ascend_toolkit_install.info: "version=8.0.RC1"; version.cfg: "toolkit_running_version=[8.0.RC1:...]".
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() in ("version", "toolkit_running_version", "toolkit_installed_version"):
            match = re.search(r"\d+\.\d+[.\w-]*", value)
            if match:
                return match.group(0).rstrip(":]")
    return None


def read_version(root: Path, arch: str) -> tuple[str | None, str | None]:
    candidates = (root / f"{arch}-linux" / "ascend_toolkit_install.info", root / "ascend_toolkit_install.info",
                  root / "version.cfg")
    for path in candidates:
        try:
            version = _parse_version(path.read_text(errors="replace"))
        except OSError:
            continue
        if version:
            return version, str(path)
    return None, None


def detect_cann(environ: Mapping[str, str] | None = None) -> CannInstall | None:
    """The CANN install named by ASCEND_HOME_PATH, or None when the variable is unset or names no directory."""
    env = os.environ if environ is None else environ
    value = env.get(HOME_VAR, "").strip()
    if not value:
        return None
    root = Path(value).expanduser()
    arch = host_arch()
    if not root.is_dir() or not _has_toolkit(root, arch):
        return None
    version, source = read_version(root, arch)
    return CannInstall(root=root.resolve(), host_arch=arch, version=version, version_source=source)


def _toolkit_markers(arch: str) -> tuple[str, ...]:
    return (f"{arch}-linux", "lib64", "version.cfg", "ascend_toolkit_install.info")


def _has_toolkit(root: Path, arch: str) -> bool:
    """An empty or unrelated directory is no install: one of CANN's top-level entries must be there."""
    return any((root / name).exists() for name in _toolkit_markers(arch))


def unavailable_message(what: str, environ: Mapping[str, str] | None = None, alternative: str | None = None) -> str:
    """Why CANN was not found and what to do; `alternative` replaces the default suggestion (the twin backend)."""
    env = os.environ if environ is None else environ
    value = env.get(HOME_VAR, "").strip()
    if value and Path(value).expanduser().is_dir():
        why = f"{HOME_VAR}={value} holds no CANN toolkit (none of {', '.join(_toolkit_markers(host_arch()))})"
    elif value:
        why = f"{HOME_VAR}={value} is not a directory"
    else:
        why = f"{HOME_VAR} is not set"
    if alternative is None:
        alternative = ("use the host twin instead (backend=\"twin\", `--backend twin`), which emulates Ascend C on "
                       "this machine and needs no CANN")
    return (f"{what} needs the CANN toolkit, and none was found: {why}. Install CANN and run {SET_ENV_HINT}, "
            f"which sets {HOME_VAR}; or {alternative}.")


def require_cann(what: str, environ: Mapping[str, str] | None = None, alternative: str | None = None) -> CannInstall:
    cann = detect_cann(environ)
    if cann is None:
        raise BackendUnavailable(unavailable_message(what, environ, alternative))
    return cann


def _device_nodes() -> list[str]:
    try:
        names = os.listdir("/dev")
    except OSError:
        return []
    return sorted(n for n in names if re.fullmatch(r"davinci\d+", n))


def device_present(environ: Mapping[str, str] | None = None) -> bool:
    """True when CANN is installed and the driver exposes at least one NPU (/dev/davinciN).

    Cheap and side-effect free, for backend="auto": no process is started and no ACL call is made.
    """
    return detect_cann(environ) is not None and bool(_device_nodes())
