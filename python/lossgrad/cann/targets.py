"""Build parameters of one SoC, all derived from the SoC table (lossgrad.socs), never restated.

CANN names the same chip four ways: the SoC version (SOC_VERSION, simulator directory, tikicpulib alias), the compute
unit (ASCEND_COMPUTE_UNIT, OpDef AddConfig), the legacy ``--cce-aicore-arch`` and the new ``--npu-arch`` /
CMAKE_ASC_ARCHITECTURES (build_tooling.md §3.3). A bare "Ascend910B" is the first-generation 910 (arch 1001):
socs.get_soc resolves it so, and every name below follows from that.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..socs import Soc, get_soc

# The legacy ascendc_library() flow's SOC_VERSION list has no 950 part (ADK cmake/asc/legacy_modules/
# host_config.cmake), and CMAKE_ASC_RUN_MODE=cpu accepts only these architectures (ascendc_api.md §3.1).
LEGACY_LAUNCH_ARCHS = frozenset({2201, 2002, 1001})
ASC_CPU_ARCHS = frozenset({2201, 2002, 3510})

# Where a toolkit keeps its Ascend C CMake packages, relative to its root ("<host>" = x86_64 | aarch64): ASCConfig.cmake
# for find_package(ASC) in the documented location (compiler/...), older layouts and CANN 9.1's per-host tree
# (build_tooling.md §2.2); the legacy ascendc.cmake in those and in the devkit samples.
ASC_CMAKE_DIRS = ("compiler/tikcpp/ascendc_kernel_cmake", "tools/tikcpp/ascendc_kernel_cmake",
                  "<host>-linux/tikcpp/ascendc_kernel_cmake")
ASCENDC_CMAKE_DIRS = ASC_CMAKE_DIRS + ("ascendc_devkit/tikcpp/samples/cmake",)


def cmake_dirs(rel_dirs: tuple[str, ...]) -> list[str]:
    """The directories as CMake expressions (for the generated CMakeLists)."""
    return ["${ASCEND_CANN_PACKAGE_PATH}/" + d.replace("<host>", "${CMAKE_HOST_SYSTEM_PROCESSOR}") for d in rel_dirs]


def toolkit_dirs(root: Path, host_arch: str, rel_dirs: tuple[str, ...]) -> list[Path]:
    """The directories under an installed toolkit."""
    return [root / d.replace("<host>", host_arch) for d in rel_dirs]


@dataclass(frozen=True)
class BuildTarget:
    soc: Soc

    @classmethod
    def of(cls, soc: "str | Soc | None") -> "BuildTarget":
        return cls(get_soc(soc))

    @property
    def soc_version(self) -> str:
        return self.soc.name

    @property
    def compute_unit(self) -> str:
        return self.soc.compute_unit

    @property
    def npu_arch(self) -> int:
        return self.soc.arch.npu_arch

    @property
    def npu_arch_flag(self) -> str:
        return self.soc.arch.npu_arch_flag

    @property
    def cce_aicore_arch(self) -> str:
        return self.soc.arch.cce_aicore_arch

    @property
    def cpu_debug_series(self) -> str:
        return self.soc.arch.cpu_debug_series

    @property
    def split_cores(self) -> bool:
        """Separate AIV cores (A2/A3/950): the CPU-debug library must run the kernel in AIV mode."""
        return not self.soc.arch.coupled

    @property
    def legacy_launch_supported(self) -> bool:
        return self.npu_arch in LEGACY_LAUNCH_ARCHS

    @property
    def asc_cpu_supported(self) -> bool:
        return self.npu_arch in ASC_CPU_ARCHS

    def simulator_lib_dirs(self, root: Path, host_arch: str) -> tuple[Path, Path]:
        """(CANN 9.x dav_<arch> dir, legacy per-SoC dir); a run uses the first that exists."""
        return (Path(self.soc.simulator_lib(str(root), host_arch)), Path(self.soc.legacy_simulator_lib(str(root))))

    def tikicpulib_lib_dirs(self, root: Path, host_arch: str) -> tuple[Path, ...]:
        """Where the CPU-debug runtime libraries live: the samples' run.sh adds the generic, the per-series and the
        per-SoC directories (build_tooling.md §2.3); CANN 9.x keeps tools under <arch>-linux as well."""
        dirs = []
        for base in (root / "tools" / "tikicpulib" / "lib", root / f"{host_arch}-linux" / "tikicpulib" / "lib"):
            dirs += [base, base / self.cpu_debug_series, base / self.soc_version]
        return tuple(dirs)

    def tikicpulib_cmake_dirs(self, root: Path, host_arch: str) -> tuple[Path, ...]:
        return (root / "tools" / "tikicpulib" / "lib" / "cmake",
                root / f"{host_arch}-linux" / "tikicpulib" / "lib" / "cmake")
