"""CANN toolkit integration: op_host generation, custom-op package and kernel-launch builds, CPU-debug / simulator /
device runners and device benchmarks. Everything here works without CANN installed up to the point where CANN is
needed, and then raises lossgrad.errors.BackendUnavailable (or stops `lossgrad build`) with a message naming
ASCEND_HOME_PATH, `source <cann>/set_env.sh` and the host twin as the alternative.
"""
from __future__ import annotations

from .detect import CannInstall, detect_cann, device_present
from .runner import run_on_cann

__all__ = ["CannInstall", "detect_cann", "device_present", "run_on_cann"]
