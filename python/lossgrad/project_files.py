"""Where the project's non-Python sources live: the kernel templates (op_kernel/), the CANN host side (op_host/),
the CMake project skeletons (cmake/) and build.sh (scripts/).

A source checkout (``pip install -e .``) uses the repository's own directories; a wheel (``pip install .``)
carries a copy of them in ``lossgrad/_project`` (setup.py's build step copies ``PROJECT_DIRS``). This module
imports nothing but pathlib so that setup.py can read ``PROJECT_DIRS`` without importing the package.
"""
from __future__ import annotations

from pathlib import Path

PROJECT_DIRS = ("op_kernel", "op_host", "cmake", "scripts")
BUNDLE_NAME = "_project"

_PACKAGE_DIR = Path(__file__).resolve().parent
CHECKOUT_ROOT = _PACKAGE_DIR.parents[1]      # <repo>/python/lossgrad -> <repo>
BUNDLED_ROOT = _PACKAGE_DIR / BUNDLE_NAME     # <site-packages>/lossgrad/_project
_MARKERS = ("op_kernel/kernel.cpp.j2", "op_host/op.cpp.j2")


def project_root() -> Path:
    """The directory holding PROJECT_DIRS: the checkout when there is one, else the wheel's bundled copy."""
    for root in (CHECKOUT_ROOT, BUNDLED_ROOT):
        if all((root / marker).is_file() for marker in _MARKERS):
            return root
    raise FileNotFoundError(f"the project sources ({', '.join(PROJECT_DIRS)}) are neither in a source checkout "
                            f"({CHECKOUT_ROOT}) nor bundled with the package ({BUNDLED_ROOT}); reinstall "
                            f"ascend-lossgrad (pip install -e <checkout>, or pip install <checkout>)")
