"""Build parameters of one SoC, all derived from the SoC table (lossgrad.socs), never restated.

CANN names the same chip four ways: the SoC version (SOC_VERSION, simulator directory, tikicpulib alias), the compute
unit (ASCEND_COMPUTE_UNIT, OpDef AddConfig), the legacy ``--cce-aicore-arch`` and the new ``--npu-arch`` /
CMAKE_ASC_ARCHITECTURES (build_tooling.md §3.3). A bare "Ascend910B" is the first-generation 910 (arch 1001):
socs.get_soc resolves it so, and every name below follows from that.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..socs import Soc, get_soc

# Compiler-inserted pipeline synchronisation, stated explicitly in every device build (launch CMakeLists, the
# package's cmake/config.cmake): on, the toolkit's default (asc-devkit docs/zh 核内同步/关键特性说明.md). The twin
# models it as run_kernel(auto_sync=True); the kernels are also verified with auto_sync=False.
AUTO_SYNC_OPTION = "--cce-auto-sync=on"

# CMAKE_ASC_RUN_MODE=cpu accepts only these architectures (asc-devkit cmake/asc/asc_modules/CMakeASCInformation.cmake,
# FATAL_ERROR for any other), and so does CMAKE_ASC_RUN_MODE=sim (same file: dav-1001 has no simulator directory).
ASC_CPU_ARCHS = frozenset({2201, 2002, 3510})
ASC_SIM_ARCHS = frozenset({2201, 2002, 3510})

# The CPU-debug library (libcpudebug.so, alias libtikcpp_debug.so) exists once per architecture, in one product
# directory: asc-tools builds it for ascend910/ascend310p/ascend910B1/ascend950pr_9599 and installs it into
# tools/cpudebug/lib64/<product_dir(...)> (asc-tools cpudebug/CMakeLists.txt, cpudebug/cmake/fun.cmake product_dir);
# the run package links tools/tikicpulib -> tools/cpudebug and tools/cpudebug/lib -> lib64, plus a few per-SoC
# aliases only (scripts/package/module/ascend/TIKCppSim.xml: none for Ascend910B4-1, Ascend910_9362 or any 950 part
# but 9599). CANN's own CPU build maps the architecture the same way (asc-devkit CMakeASCInformation.cmake:
# dav-2002 -> Ascend310P1, dav-2201 -> Ascend910B1, dav-3510 -> Ascend950PR_9599).
CPU_DEBUG_PRODUCT_DIRS: dict[int, str] = {1001: "Ascend910A", 2002: "Ascend310P1", 2201: "Ascend910B1",
                                          3510: "Ascend950PR_9599"}
CPU_DEBUG_LIB_ROOTS = ("tools/tikicpulib/lib", "tools/cpudebug/lib64")  # the link and the directory it points to
CPU_DEBUG_CMAKE_DIRS = ("tools/tikicpulib/lib/cmake", "tools/cpudebug/cmake")  # tikicpulib-config.cmake

# camodel simulator libraries (libruntime_camodel.so, libnpu_drv_camodel.so): the ASC flow links
# tools/simulator/dav_<arch>/lib (CMakeASCInformation.cmake, devkit docs/zh 调试调优/性能调优.md); Findpvmodel.cmake
# searches <any>/simulator/dav_3510/lib for 950 and per-product directories (Ascend910A, Ascend310P1, Ascend910B1)
# for the older architectures; the legacy ascendc_library() links tools/simulator/<SOC_VERSION>/lib
# (cmake/asc/legacy_modules/function.cmake).
SIM_PRODUCT_DIRS: dict[int, str] = {1001: "Ascend910A", 2002: "Ascend310P1", 2201: "Ascend910B1"}
# Ascend 950 is also simulated by npusim, which runs the board build of a program (ops-nn docs/zh/debug/npu_sim.md:
# 950PR/950DT only, x86 only; named cannsim before the 2026-07-30 release, which keeps cannsim as an alias).
NPUSIM_NAMES = ("npusim", "cannsim")
NPUSIM_ARCHS = frozenset({3510})

# Where a toolkit keeps its Ascend C CMake modules (ascendc_kernel_cmake/: the legacy ascendc.cmake, fwk_modules/,
# asc_modules/), relative to its root ("<host>" = x86_64 | aarch64): the documented compiler/... location, older
# layouts and the per-host tree the devkit installs into (build_tooling.md §2.2; asc-devkit cmake/CMakeLists.txt).
KERNEL_CMAKE_DIRS = ("compiler/tikcpp/ascendc_kernel_cmake", "tools/tikcpp/ascendc_kernel_cmake",
                     "<host>-linux/tikcpp/ascendc_kernel_cmake")
# find_package(ASC) hints. Its package config file is asc-config.cmake, which the devkit installs into
# <host>-linux/lib64/cmake and leaves out of ascendc_kernel_cmake/ (asc-devkit cmake/CMakeLists.txt); the module
# directories stay as hints for layouts that ship a config file there.
ASC_CMAKE_DIRS = ("<host>-linux/lib64/cmake", "lib64/cmake") + KERNEL_CMAKE_DIRS
ASCENDC_CMAKE_DIRS = KERNEL_CMAKE_DIRS + ("ascendc_devkit/tikcpp/samples/cmake",)


# The legacy flow's SoC list: ascendc.cmake includes it from its legacy_modules/ directory, and it accepts exactly
# the SOC_VERSIONs of its set(<family>_list ...) lists, compared in lower case (asc-devkit
# cmake/asc/legacy_modules/host_config.cmake; current toolkits list the ascend950* parts there, older ones did not).
# Read from the installed toolkit at build time, never assumed.
LEGACY_SOC_LIST_FILE = "legacy_modules/host_config.cmake"


class LegacySocListMissing(RuntimeError):
    """The toolkit has the legacy flow's ascendc.cmake but not the SoC list it reads."""


def parse_legacy_soc_list(text: str) -> frozenset[str]:
    """Every name in the set(<name>_list ...) commands of host_config.cmake, lower-cased."""
    text = re.sub(r"#[^\n]*", "", text)
    names: set[str] = set()
    for match in re.finditer(r"\bset\s*\(\s*\w+_list\b([^)]*)\)", text):
        names.update(tok.lower() for tok in match.group(1).split() if not tok.startswith("${"))
    return frozenset(names)


def legacy_soc_list(root: Path, host_arch: str) -> frozenset[str] | None:
    """The SOC_VERSIONs the installed ascendc_library() flow accepts, from the first directory holding ascendc.cmake
    (the order the generated CMakeLists searches); None when the toolkit has no ascendc.cmake."""
    for d in toolkit_dirs(root, host_arch, ASCENDC_CMAKE_DIRS):
        if (d / "ascendc.cmake").is_file():
            path = d / LEGACY_SOC_LIST_FILE
            if not path.is_file():
                raise LegacySocListMissing(
                    f"{path} is missing: the toolkit has {d / 'ascendc.cmake'} but not the SoC list of its legacy "
                    "kernel-launch flow, so lossgrad cannot tell whether it supports this SoC; use --flow launch-asc")
            names = parse_legacy_soc_list(path.read_text(errors="replace"))
            if not names:
                raise LegacySocListMissing(f"{path} has no set(<family>_list ...) SoC list that lossgrad can read")
            return names
    return None


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

    def in_legacy_soc_list(self, soc_list: frozenset[str]) -> bool:
        """Whether the legacy flow's list (legacy_soc_list) has this SoC; host_config.cmake lower-cases SOC_VERSION."""
        return self.soc_version.lower() in soc_list

    @property
    def asc_cpu_supported(self) -> bool:
        return self.npu_arch in ASC_CPU_ARCHS

    def simulator_lib_dirs(self, root: Path, host_arch: str) -> tuple[Path, ...]:
        """camodel library directories, in search order; a run uses those that exist (SIM_PRODUCT_DIRS)."""
        a = self.npu_arch
        dirs = [root / "tools" / "simulator" / f"dav_{a}" / "lib",
                root / f"{host_arch}-linux" / "simulator" / f"dav_{a}" / "lib"]
        if a in SIM_PRODUCT_DIRS:
            dirs.append(root / "tools" / "simulator" / SIM_PRODUCT_DIRS[a] / "lib")
        dirs.append(root / "tools" / "simulator" / self.soc_version / "lib")
        return tuple(dict.fromkeys(dirs))

    def camodel_lib_dir(self, root: Path, host_arch: str) -> Path | None:
        """The first simulator directory that holds libruntime_camodel.so, or None."""
        for d in self.simulator_lib_dirs(root, host_arch):
            if (d / "libruntime_camodel.so").is_file():
                return d
        return None

    @property
    def asc_sim_supported(self) -> bool:
        return self.npu_arch in ASC_SIM_ARCHS

    @property
    def npusim_supported(self) -> bool:
        return self.npu_arch in NPUSIM_ARCHS

    @property
    def cpu_debug_product_dir(self) -> str:
        """The one directory that holds this architecture's libcpudebug.so (CPU_DEBUG_PRODUCT_DIRS)."""
        return CPU_DEBUG_PRODUCT_DIRS[self.npu_arch]

    def tikicpulib_lib_dirs(self, root: Path, host_arch: str) -> tuple[Path, ...]:
        """Where the CPU-debug runtime libraries live: the shared libraries (libcpudebug_stubreg.so, ...) in the
        library root, libcpudebug.so in the architecture's product directory (CPU_DEBUG_PRODUCT_DIRS). host_arch is
        unused: asc-tools installs under tools/, on every host."""
        del host_arch
        dirs: list[Path] = []
        for rel in CPU_DEBUG_LIB_ROOTS:
            dirs += [root / rel, root / rel / self.cpu_debug_product_dir]
        return tuple(dirs)

    def tikicpulib_cmake_dirs(self, root: Path, host_arch: str) -> tuple[Path, ...]:
        del host_arch
        return tuple(root / rel for rel in CPU_DEBUG_CMAKE_DIRS)
