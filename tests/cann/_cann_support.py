"""Test helpers for tests/cann: stand-in kernel sources (so no test depends on the real kernel templates), a g++
wrapper, and the paths of the fake CANN headers. Everything here is test scaffolding."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Sequence

import pytest

from lossgrad.cann import kernel_sources
from lossgrad.registry import OpSpec

HERE = Path(__file__).resolve().parent
FAKE_CANN = HERE / "fake_cann"
STANDIN = HERE / "standin"
# "kernel_operator.h" as the real devkit gives it outside op_build, on top of the twin (see the header's comment).
DEVKIT_STANDIN = HERE / "devkit_standin"
# lossgrad.codegen's real kernel rendering, kept before the autouse fixture (conftest.py) swaps in the stand-in.
REAL_RENDER_KERNEL_SOURCES = kernel_sources.render_kernel_sources
CXX = shutil.which("g++")
CXXFLAGS = ("-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wshadow", "-Wconversion")

needs_cxx = pytest.mark.skipif(CXX is None, reason="g++ is not installed")

# A stand-in kernel with the contract's entry signature. It computes out = in0 + 2*in1 + 3*in2 over the first
# totalLength elements (float32 inputs of one shape), so argument order and .bin plumbing are checkable.
STANDIN_KERNEL = """\
// TEST STAND-IN for lossgrad.codegen's op_kernel/{entry}.cpp (same entry signature, trivial body).
#include "kernel_operator.h"
#include "lossgrad_tiling_data.h"

namespace {{
// float elements carry values; the 16-bit types only have to compile here.
inline double LgLoad(const float* p, uint64_t i) {{ return static_cast<double>(p[i]); }}
inline double LgLoad(const half*, uint64_t) {{ return 0.0; }}
inline double LgLoad(const bfloat16_t*, uint64_t) {{ return 0.0; }}
inline void LgStore(float* p, uint64_t i, double v) {{ p[i] = static_cast<float>(v); }}
inline void LgStore(half* p, uint64_t i, double) {{ p[i] = half{{}}; }}
inline void LgStore(bfloat16_t* p, uint64_t i, double) {{ p[i] = bfloat16_t{{}}; }}
}} // namespace

extern "C" __global__ __aicore__ void {entry}(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR out, GM_ADDR workspace,
                                              GM_ADDR tiling)
{{
    (void)workspace;
    LossGradTilingData td;
    const uint8_t* src = tiling;
    uint8_t* dst = reinterpret_cast<uint8_t*>(&td);
    for (unsigned i = 0; i < sizeof(td); ++i) {{
        dst[i] = src[i];
    }}
    const auto* x = reinterpret_cast<const DTYPE_{in0}*>(a);
    const auto* y = reinterpret_cast<const DTYPE_{in1}*>(b);
    const auto* z = reinterpret_cast<const DTYPE_{in2}*>(c);
    auto* o = reinterpret_cast<DTYPE_{out}*>(out);
    for (uint64_t i = 0; i < td.totalLength; ++i) {{
        LgStore(o, i, LgLoad(x, i) + 2 * LgLoad(y, i) + 3 * LgLoad(z, i));
    }}
}}
"""


def write_standin_kernels(project_dir: Path, ops: Sequence[OpSpec]) -> list[Path]:
    kernel_dir = Path(project_dir) / "op_kernel"
    kernel_dir.mkdir(parents=True, exist_ok=True)
    written = [kernel_dir / "lossgrad_tiling_data.h"]
    shutil.copyfile(STANDIN / "op_kernel" / "lossgrad_tiling_data.h", written[0])
    for op in ops:
        protos = [io.proto.upper() for io in op.kernel_inputs] + [op.kernel_output.upper()]
        path = kernel_dir / f"{op.entry_name}.cpp"
        path.write_text(STANDIN_KERNEL.format(entry=op.entry_name, in0=protos[0], in1=protos[1], in2=protos[2],
                                              out=protos[3]))
        written.append(path)
    return written


def fake_render_kernel_sources(project_dir: Path, ops: Sequence[OpSpec]) -> list[Path]:
    """Stands in for lossgrad.cann.kernel_sources.render_kernel_sources (which runs lossgrad.codegen)."""
    return write_standin_kernels(project_dir, ops)


def compile_cxx(sources: Sequence[Path], *, include_dirs: Sequence[Path] = (), defines: Sequence[str] = (),
                output: Path | None = None, extra: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    assert CXX is not None
    cmd = [CXX, *CXXFLAGS, *(f"-I{d}" for d in include_dirs), *(f"-D{d}" for d in defines), *extra]
    cmd += ["-o", str(output)] if output is not None else ["-fsyntax-only"]
    cmd += [str(s) for s in sources]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return proc


def fake_legacy_toolkit(root: Path, soc_lists: dict[str, list[str]] | None,
                        cmake_dir: str = "compiler/tikcpp/ascendc_kernel_cmake") -> Path:
    """A toolkit tree holding only the legacy flow's ascendc.cmake and, unless soc_lists is None, its
    legacy_modules/host_config.cmake with those set(<family>_list ...) lists (multi-line, commented, as CANN writes
    them: asc-devkit cmake/asc/legacy_modules/host_config.cmake)."""
    d = root / cmake_dir
    (d / "legacy_modules").mkdir(parents=True, exist_ok=True)
    (d / "ascendc.cmake").write_text("# stand-in\n")
    if soc_lists is not None:
        lines = ["# SoC lists (stand-in)"]
        for family, names in soc_lists.items():
            lines.append(f"set({family}_list " + "\n    ".join(names) + ")  # " + family)
        lines.append("set(all_product " + " ".join(f"${{{f}_list}}" for f in soc_lists) + ")")
        lines.append('if(NOT DEFINED SOC_VERSION)\n    message(FATAL_ERROR "SOC_VERSION value not set.")\nendif()')
        (d / "legacy_modules" / "host_config.cmake").write_text("\n".join(lines) + "\n")
    return root


# The CPU-debug install of the asc-tools run package (scripts/package/module/ascend/TIKCppSim.xml, cpudebug/
# CMakeLists.txt): tools/cpudebug/lib64/<product>/libcpudebug.so, one product directory per architecture, the per-SoC
# soft links the package creates for it (and no others), and tools/tikicpulib -> tools/cpudebug,
# tools/cpudebug/lib -> lib64, tools/cpudebug/lib64/cmake -> ../cmake.
CPUDEBUG_PRODUCT_LINKS: dict[str, tuple[str, ...]] = {
    "Ascend910A": ("Ascend910B", "Ascend910PremiumA", "Ascend910ProA", "Ascend910ProB"),
    "Ascend310P1": ("Ascend310P3",),
    "Ascend910B1": ("Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4", "Ascend910_9391", "Ascend910_9392",
                    "Ascend910_9381", "Ascend910_9382", "Ascend910_9372", "Ascend910_9361"),
    "Ascend310B1": ("Ascend310B2", "Ascend310B3", "Ascend310B4"),
    "Ascend950PR_9599": (),
}


def standin_cpudebug_install(root: Path, libraries: dict[str, Path]) -> Path:
    """A toolkit root holding the CPU-debug layout above; libraries maps a product directory to the libcpudebug.so
    to install there (a product without one gets an empty directory, as on a toolkit without that chip)."""
    lib64 = root / "tools" / "cpudebug" / "lib64"
    for product, links in CPUDEBUG_PRODUCT_LINKS.items():
        (lib64 / product).mkdir(parents=True, exist_ok=True)
        if product in libraries:
            shutil.copyfile(libraries[product], lib64 / product / "libcpudebug.so")
            (lib64 / product / "libtikcpp_debug.so").symlink_to("libcpudebug.so")
        for alias in links:
            (lib64 / alias).symlink_to(product)
    (root / "tools" / "cpudebug" / "cmake").mkdir(exist_ok=True)
    (root / "tools" / "cpudebug" / "lib").symlink_to("lib64")
    (lib64 / "cmake").symlink_to("../cmake")
    (root / "tools" / "tikicpulib").symlink_to("cpudebug")
    return root


ASC_PACKAGE_STANDIN = STANDIN / "asc_package" / "asc-config.cmake"


def standin_copy_kernel_sources(ini: Path, kernel_base: Path, dst: Path) -> None:
    """What CANN's copy step ships from the kernel base into the package's kernel directory, with the semantics of
    asc-devkit cmake/asc/fwk_modules/util/ascendc_copy_kernel_src.py (written for the tests): for every section of
    <target>_custom_source_files.ini, a kernel_dir is copied as a whole tree (soft links refused), a kernel_file
    alone (relative to its kernel_dir, else to the base); relative paths may not climb out of the base."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ini)

    def safe(rel: str) -> str:
        assert not Path(rel).is_absolute() and ".." not in Path(rel).parts, rel
        return rel

    for section in config.sections():
        sub = safe(config.get(section, "kernel_dir")) if config.has_option(section, "kernel_dir") else None
        if sub is not None:
            src = kernel_base / sub
            for path in sorted(src.rglob("*")):
                assert not path.is_symlink(), path
                if path.is_file():
                    target = dst / sub / path.relative_to(src)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if not target.exists():
                        shutil.copy2(path, target)
        if config.has_option(section, "kernel_file"):
            rel = Path(sub or ".") / config.get(section, "kernel_file")
            src_file = kernel_base / safe(str(rel))
            assert src_file.is_file(), f"kernel src file {src_file} not found"
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            if not (dst / rel).exists():
                shutil.copy2(src_file, dst / rel)
