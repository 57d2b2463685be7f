"""Constants shared by the twin's tests: the architectures, their SoCs and the test kernels."""
from __future__ import annotations

from pathlib import Path

KERNELS = Path(__file__).resolve().parent / "kernels"

# One SoC per modelled architecture.
SOCS = {2201: "Ascend910B1", 3510: "Ascend950PR_9579", 2002: "Ascend310P3", 1001: "Ascend910A"}
ARCHS = tuple(SOCS)

# (source, entry, number of GM arguments) of every kernel the suite runs.
SUITE_KERNELS = (("vec_api.cpp", "vec_api", 5), ("strict.cpp", "strict", 4), ("mul_add.cpp", "mul_add", 4))
