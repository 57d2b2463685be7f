"""The kernel side of a build: lossgrad.codegen's sources, plus per-dtype wrappers for kernel-launch builds.

lossgrad.codegen.render_sources writes ``<entry_name>.cpp`` per op (element types from CANN's DTYPE_<NAME> macros) and
``lossgrad_tiling_data.h`` into the project's ``op_kernel/``; one source serves every architecture (#if __NPU_ARCH__
inside). A custom-op package compiles each source once per dtype combination with those macros defined by CANN; a
kernel-launch build has nobody to define them, so each (op, dtype combination) gets a small wrapper that defines them
and includes the op's source (one kernel per source file, as the launch flow requires).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import codegen
from ..dtypes import DType
from ..registry import OpSpec
from ..socs import Soc
from . import templates
from .op_host import Combo, kernel_combos
from .worker import ABSENT, CANARY, SYSTEM_WORKSPACE

TILING_DATA_HEADER = f"op_kernel/{codegen.TILING_HEADER}"
WALK_HEADERS = [f"op_kernel/{name}" for name in codegen.WALK_HEADERS]


class KernelSourcesUnavailable(RuntimeError):
    """The op has no kernel for a dtype combination on the SoC, or codegen did not write the files a plan lists."""


def expected_files(ops: Sequence[OpSpec]) -> list[str]:
    return [f"op_kernel/{op.entry_name}.cpp" for op in ops] + [TILING_DATA_HEADER, *WALK_HEADERS]


def render_kernel_sources(project_dir: Path, ops: Sequence[OpSpec]) -> list[Path]:
    """The ops' kernel sources and the tiling header in project_dir/op_kernel (unchanged files keep their mtime, so
    CMake rebuilds only what changed)."""
    target = Path(project_dir) / "op_kernel"
    codegen.render_sources(target, list(ops))
    missing = [rel for rel in expected_files(ops) if not (project_dir / rel).is_file()]
    if missing:
        raise KernelSourcesUnavailable(f"lossgrad.codegen.render_sources did not write {', '.join(missing)}")
    return sorted(p for p in target.rglob("*") if p.is_file())


def kernel_tiling_keys(op: OpSpec) -> tuple[int, ...]:
    """The tiling keys the op's kernel branches on; kernel-launch builds compile one library per key (Variant)."""
    return codegen.tiling_keys(op)


def combo_tag(combo: Combo) -> str:
    codes = [d.label.replace("float", "f") for d in combo]  # float32 -> f32, bfloat16 -> bf16
    return codes[0] if len(set(codes)) == 1 else "_".join(codes)


@dataclass(frozen=True)
class Variant:
    """One op compiled for one dtype combination: a kernel library / executable of its own."""

    op: OpSpec
    combo: Combo
    # A kernel-launch library serves one tiling key, compiled in as LOSSGRAD_LAUNCH_TILING_KEY: TILING_KEY_IS is not
    # supported in kernel-launch projects (and the legacy flow pins TILING_KEY_VAR to 0, asc-devkit
    # cmake/asc/legacy_modules/bisheng_intf.cmake), in every run mode, CPU debug included.
    tiling_key: int

    @property
    def name(self) -> str:
        return f"{self.op.entry_name}_{combo_tag(self.combo)}_k{self.tiling_key}"

    @property
    def protos(self) -> tuple[str, ...]:
        return tuple(k.proto for k in self.op.kernel_inputs) + (self.op.kernel_output,)

    def dtype_macros(self) -> list[tuple[str, str]]:
        return [(f"DTYPE_{p.upper()}", d.cpp) for p, d in zip(self.protos, self.combo)]


def variants_for(ops: Sequence[OpSpec], soc: Soc, dtypes: Sequence[DType] | None = None) -> list[Variant]:
    """Every (op, same-dtype combination, tiling key) the SoC supports; with dtypes, only combinations of those
    dtypes. A `lossgrad build` of a launch flow builds the same-dtype columns of the package (one library per
    variant); a direct run of a mixed call builds its own variant on demand (variant_for_call)."""
    out = []
    for op in ops:
        keys = kernel_tiling_keys(op)
        for combo in kernel_combos(op, soc.arch.npu_arch):
            if len(set(combo)) != 1:
                continue
            if dtypes is None or set(combo) <= set(dtypes):
                out += [Variant(op, combo, key) for key in keys]
    return out


def variant_for_call(op: OpSpec, soc: Soc, input_dtypes: Sequence[DType], output_dtype: DType,
                     tiling_key: int) -> Variant:
    """The variant a direct launch needs: the kernel takes each tensor in its own dtype (the twin's convention), so
    any combination of dtypes the architecture supports is built on demand, not only the package's columns."""
    combo = tuple(input_dtypes) + (output_dtype,)
    supported = op.supported_dtypes(soc.arch.npu_arch)
    unsupported = sorted({d.label for d in combo if d not in supported})
    if unsupported:
        raise KernelSourcesUnavailable(f"{op.name}: {', '.join(unsupported)} has no kernel on {soc.name}")
    if tiling_key not in kernel_tiling_keys(op):
        raise KernelSourcesUnavailable(f"{op.name}: the kernel has no tiling key {tiling_key} "
                                       f"(it has {', '.join(map(str, kernel_tiling_keys(op)))})")
    return Variant(op, combo, tiling_key)


def launch_symbol(variant: Variant, flow: str) -> str:
    """The C symbol a host calls: ascendc_library's generated aclrtlaunch_<kernel> stub (legacy flow), or the
    extern "C" launcher our wrapper defines for the find_package(ASC) flow, which generates no stub."""
    prefix = "aclrtlaunch_" if flow == "launch-legacy" else "lossgrad_launch_"
    return prefix + variant.op.entry_name


def launch_params(variant: Variant) -> list[str]:
    return [k.proto for k in variant.op.kernel_inputs] + [variant.op.kernel_output, "workspace", "tiling"]


def render_variant(variant: Variant) -> str:
    return templates.render("cmake/templates/launch/variant.cpp.j2", v=variant, entry=variant.op.entry_name,
                            params=launch_params(variant),
                            labels=", ".join(d.label for d in variant.combo))


def render_main(variant: Variant, kind: str, flow: str, split_cores: bool) -> str:
    """kind 'cpu': tikicpulib executable (ICPU_RUN_KF); kind 'acl': sim/npu host runner calling the launch symbol."""
    template = {"cpu": "cmake/templates/launch/main_cpu.cpp.j2", "acl": "cmake/templates/launch/main_acl.cpp.j2"}[kind]
    return templates.render(template, v=variant, entry=variant.op.entry_name, params=launch_params(variant),
                            symbol=launch_symbol(variant, flow), split_cores=split_cores,
                            n_inputs=len(variant.op.kernel_inputs), canary=CANARY, absent=ABSENT,
                            system_workspace=SYSTEM_WORKSPACE)
