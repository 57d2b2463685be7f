"""The environment of each CANN step, computed rather than inherited blindly.

The dynamic loader reads LD_LIBRARY_PATH at process start, so CPU-debug, simulator and device runs each get their own
subprocess with the library directories of their mode first (build_tooling.md §2.3, §4.2). ASCEND_CUSTOM_OPP_PATH is
never passed through from the caller: it perturbs CANN's op build and would let a stale package shadow ours
(build_tooling.md §6 #8), so builds and runs unset it and runs of our package set it to our install dir only.
ASCEND_OPP_PATH is the caller's everywhere but in the package installer, where it is unset so a missing
--install-path can never fall back to CANN's own vendors directory. Runs keep it: the aclnn executor reads
scene.info, the built-in kernel base and vendors/config.ini through it when they are not under ASCEND_HOME_PATH
(opbase src/nnopbase/individual_op/executor/indv_collector.cpp).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .targets import BuildTarget

CUSTOM_OPP_VAR = "ASCEND_CUSTOM_OPP_PATH"
OPP_VAR = "ASCEND_OPP_PATH"
BUILD_UNSET = (CUSTOM_OPP_VAR,)
RUN_UNSET = (CUSTOM_OPP_VAR,)
INSTALL_UNSET = (CUSTOM_OPP_VAR, OPP_VAR)
MODES = ("cpu", "sim", "npu")


def _join(paths: Iterable[Path | str], tail: str | None) -> str:
    parts = [str(p) for p in paths]
    if tail:
        parts.append(tail)
    seen: list[str] = []
    for p in parts:
        if p and p not in seen:
            seen.append(p)
    return os.pathsep.join(seen)


def mode_lib_dirs(mode: str, target: BuildTarget, root: Path, host_arch: str, *,
                  existing_only: bool) -> list[Path]:
    """Library directories a run in this mode needs from CANN, in search order."""
    if mode == "cpu":
        dirs = list(target.tikicpulib_lib_dirs(root, host_arch))
    elif mode == "sim":
        dirs = list(target.simulator_lib_dirs(root, host_arch))
    elif mode == "npu":
        dirs = []
    else:
        raise ValueError(f"unknown run mode {mode!r}; expected one of {', '.join(MODES)}")
    dirs += [root / "lib64", root / f"{host_arch}-linux" / "lib64"]
    if existing_only:
        dirs = [d for d in dirs if d.is_dir()]
    return dirs


def run_environment(mode: str, target: BuildTarget, root: Path, host_arch: str, *,
                    first_lib_dirs: Sequence[Path] = (), custom_opp: Path | None = None,
                    run_dir: Path | None = None, base: Mapping[str, str] | None = None,
                    existing_only: bool = True) -> dict[str, str]:
    """The full environment of one run: the caller's (ASCEND_OPP_PATH included) minus ASCEND_CUSTOM_OPP_PATH, plus
    this mode's paths."""
    env = dict(os.environ if base is None else base)
    for name in RUN_UNSET:
        env.pop(name, None)
    dirs = list(first_lib_dirs) + mode_lib_dirs(mode, target, root, host_arch, existing_only=existing_only)
    env["LD_LIBRARY_PATH"] = _join(dirs, env.get("LD_LIBRARY_PATH"))
    env.setdefault("ASCEND_HOME_PATH", str(root))
    if custom_opp is not None:
        env[CUSTOM_OPP_VAR] = str(custom_opp)
    if mode == "sim" and run_dir is not None:
        env["CAMODEL_LOG_PATH"] = str(run_dir / "sim_log")  # the simulator's log directory (samples' run.sh)
    return env

