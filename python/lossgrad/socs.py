"""The SoC table: every part the project targets, with each figure's source and confidence.

Names are CANN's exact SoC version strings (the `SOC_VERSION` the kernel-launch flow and the simulator directories
use). Architecture-wide facts live in `ARCHS`; per-part figures live in `SOCS`. Citations use the shorthand of
`../shared/reference/ascendc_api.md` §0/§4 (IR = AscendNPU-IR NPUTargetSpec.td, ADK = asc-devkit, ATL = asc-tools,
ONN = ops-nn, ini-q = third-party quotes of CANN's platform_config ini, HAMi = Project-HAMi device plugin config,
model = a third-party performance model, press = press reports).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from .errors import invalid_error


@dataclass(frozen=True)
class Fact:
    """A figure with where it comes from. ``value`` is None when no public source gives it."""

    value: Any
    source: str
    confidence: str  # "high" | "medium" | "low" | "none"


def _unknown(why: str = "no public source found") -> Fact:
    return Fact(None, why, "none")


@dataclass(frozen=True)
class Arch:
    """Facts shared by every part of one NPU architecture (``__NPU_ARCH__``)."""

    npu_arch: int                 # __NPU_ARCH__ / --npu-arch number
    cce_aicore: int               # legacy __CCE_AICORE__
    dav_macro: str                # __DAV_*__ macro the device compiler defines
    cce_aicore_arch: str          # legacy `--cce-aicore-arch` for the vector kernel
    coupled: bool                 # cube and vector in one AI Core (310P, 910) vs split AIC/AIV
    ub_bytes: Fact                # physical UB per vector core
    ub_kernel_bytes: Fact         # what a kernel's TPipe may allocate (reserved regions removed)
    datacopy_pad: bool            # DataCopyPad exists (A2/A3, 950) or not (310P, 910)
    bf16_io: bool                 # bf16 tensors can be moved and cast
    bf16_arith: bool              # vector arithmetic on bf16
    kernel_types: tuple[str, ...] # KERNEL_TASK_TYPE_DEFAULT values the arch accepts ( () = macro unsupported )
    events_per_position: int      # QUE_MAX_EVENT: event IDs per HardEvent pool (TQue free/EnQue + AllocEventID)
    overflow_mode: Fact           # float overflow behaviour of the device ("inf_nan" IEEE or "saturation")
    cpu_debug_series: str         # tikicpulib series alias (V220, C310, V200, V100)
    ub_bank_skew: Fact = field(default_factory=lambda: Fact(0, "no UB bank-group layout published", "low"))
    # bytes between the two UB bank phases of lossgrad.tiling.ub_plan (0: no placement)
    gm_row_align_bytes: Fact = field(default_factory=lambda: Fact(32, "DataCopy's 32-byte unit", "medium"))
    # GM alignment a copied row needs to stream at full rate (the tiling cuts column pieces on it)

    @property
    def npu_arch_flag(self) -> str:
        return f"dav-{self.npu_arch}"

    @property
    def kernel_type(self) -> str | None:
        """The kernel type our vector kernels declare, or None where the macro does not exist."""
        return self.kernel_types[0] if self.kernel_types else None


_UB_SRC = "ADK kernel_utils_constants.h TMP_UB_OFFSET (reserved scratch for Select/Compares removed)"

ARCHS: dict[int, Arch] = {
    2201: Arch(
        npu_arch=2201, cce_aicore=220, dav_macro="__DAV_C220__", cce_aicore_arch="dav-c220-vec", coupled=False,
        ub_bytes=Fact(196608, "IR; ADK NPU架构版本2201; ini-q ub_size=196608", "high"),
        ub_kernel_bytes=Fact(188416, "192 KB - 8 KB reserved: " + _UB_SRC, "medium"),
        datacopy_pad=True, bf16_io=True, bf16_arith=False,
        kernel_types=("KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_MIX_AIC_1_2",
                      "KERNEL_TYPE_MIX_AIC_1_1", "KERNEL_TYPE_MIX_AIC_1_0", "KERNEL_TYPE_MIX_AIV_1_0"),
        events_per_position=8,
        overflow_mode=Fact("inf_nan", "CANN set_device_sat_mode doc: A2/A3 default Inf/NaN mode", "medium"),
        cpu_debug_series="V220",
        ub_bank_skew=Fact(256, "ADK examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub "
                          "(A2/A3: bank group = UB address bits 8:5, 16 groups of 32 B; a 256-byte repeat covers 8)",
                          "high"),
    ),
    3510: Arch(
        npu_arch=3510, cce_aicore=310, dav_macro="__DAV_C310__", cce_aicore_arch="dav-c310-vec", coupled=False,
        ub_bytes=Fact(262144, "ADK NPU架构版本3510 (256 KB physical)", "high"),
        ub_kernel_bytes=Fact(253952, "ADK kernel_utils_constants.h for 3510: TOTAL_UB_SIZE = TMP_UB_OFFSET = 248 KB",
                             "high"),
        datacopy_pad=True, bf16_io=True, bf16_arith=True,
        kernel_types=("KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_MIX_AIC_1_2",
                      "KERNEL_TYPE_MIX_AIC_1_1", "KERNEL_TYPE_MIX_AIC_1_0", "KERNEL_TYPE_MIX_AIV_1_0"),
        events_per_position=8,
        overflow_mode=Fact("inf_nan", "CANN aclrtFloatOverflowMode doc: Atlas 350 (950) supports Inf/NaN mode only",
                           "high"),
        cpu_debug_series="C310",
        gm_row_align_bytes=Fact(128, "ADK examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/"
                                     "README.md: 950 recommends 128-byte aligned rows", "medium"),
    ),
    2002: Arch(
        npu_arch=2002, cce_aicore=200, dav_macro="__DAV_M200__", cce_aicore_arch="dav-m200", coupled=True,
        ub_bytes=Fact(262144, "ADK TOTAL_UB_SIZE for 2002; ATL-cpu; ini-q ub_size=262144", "high"),
        ub_kernel_bytes=Fact(253952, "256 KB - 8 KB reserved: " + _UB_SRC, "medium"),
        datacopy_pad=False, bf16_io=False, bf16_arith=False,
        kernel_types=("KERNEL_TYPE_AICORE", "KERNEL_TYPE_MIX_VECTOR_CORE"),
        events_per_position=8,
        overflow_mode=Fact("saturation", "CANN aclrtFloatOverflowMode doc: Atlas inference series supports saturation "
                           "mode only", "high"),
        cpu_debug_series="V200",
    ),
    1001: Arch(
        npu_arch=1001, cce_aicore=100, dav_macro="__DAV_C100__", cce_aicore_arch="dav-c100", coupled=True,
        ub_bytes=Fact(262144, "ADK TOTAL_UB_SIZE for 1001; ATL-cpu", "high"),
        ub_kernel_bytes=Fact(253952, "256 KB - 8 KB reserved: " + _UB_SRC, "medium"),
        datacopy_pad=False, bf16_io=False, bf16_arith=False,
        kernel_types=(),
        events_per_position=4,
        overflow_mode=Fact("saturation", "CANN set_device_sat_mode / aclrtFloatOverflowMode docs: Atlas training "
                           "series supports saturation mode only", "high"),
        cpu_debug_series="V100",
    ),
}


@dataclass(frozen=True)
class Soc:
    name: str                  # CANN SoC version string
    line: str                  # product-line key: A2, A3, 950, 310P, 910
    product: str               # product-line name as the Ascend docs spell it
    compute_unit: str          # ASCEND_COMPUTE_UNIT / OpDef AddConfig string
    arch: Arch
    vector_cores: Fact         # cores a vector kernel launches on (AIV count; AI Core count on coupled parts)
    cube_cores: Fact
    l2_bytes: Fact = field(default_factory=_unknown)
    memory_bytes: Fact = field(default_factory=_unknown)
    hbm_bandwidth: Fact = field(default_factory=_unknown)  # bytes per second
    clock_mhz: Fact = field(default_factory=_unknown)
    note: str = ""

    @property
    def cores(self) -> int:
        return int(self.vector_cores.value)

    @property
    def ub_kernel_bytes(self) -> int:
        return int(self.arch.ub_kernel_bytes.value)


_MB = 1 << 20
_GB = 1 << 30

_A2 = "Atlas A2 training/inference series"
_A3 = "Atlas A3 training/inference series"
_INF = "Atlas inference series (310P)"
_TRN = "Atlas training series (Ascend 910, 1st gen)"


def _a2(name: str, aiv: int, **kw: Any) -> Soc:
    src = "IR NPUTargetSpec.td" + ("; catlass MaxAivBlock=40" if aiv == 40 else "")
    return Soc(name, "A2", _A2, "ascend910b", ARCHS[2201], Fact(aiv, src, "high"), Fact(aiv // 2, "IR", "high"), **kw)


def _a3(name: str, aiv: int, **kw: Any) -> Soc:
    return Soc(name, "A3", _A3, "ascend910_93", ARCHS[2201], Fact(aiv, "IR NPUTargetSpec.td (per die)", "high"),
               Fact(aiv // 2, "IR", "high"), **kw)


def _950(name: str, line_name: str, aic: int, **kw: Any) -> Soc:
    src = "secondary summary of a newer NPUTargetSpec (AIV = 2 x AIC)"
    return Soc(name, "950", line_name, "ascend950", ARCHS[3510], Fact(2 * aic, src, "low"), Fact(aic, src, "low"),
               **kw)


def _910(name: str, **kw: Any) -> Soc:
    return Soc(name, "910", _TRN, "ascend910", ARCHS[1001],
               Fact(30, "HAMi ascend-device-configmap (Ascend910A: 30); HotChips 2019 shows 32 on the die", "low"),
               Fact(30, "coupled AI Cores (same as vector_cores)", "low"),
               l2_bytes=Fact(32 * _MB, "ini-q", "low"), memory_bytes=Fact(32 * _GB, "HAMi", "medium"),
               hbm_bandwidth=Fact(1.2e12, "press, unconfirmed", "low"),
               clock_mhz=Fact(1000, "third-party", "low"), **kw)


_A2_BW = Fact(1.6e12, "model (third-party performance model, B2/B3)", "medium")
_A3_BW = Fact(1.6e12, "derived: 3.2 TB/s per 2-die package (press) / 2", "medium")

SOCS: dict[str, Soc] = {s.name: s for s in (
    _a2("Ascend910B1", 48, l2_bytes=Fact(192 * _MB, "ini-q", "low"), memory_bytes=Fact(64 * _GB, "ini-q", "medium"),
        hbm_bandwidth=_A2_BW, clock_mhz=Fact(1850, "ini-q (test sample)", "low")),
    _a2("Ascend910B2", 48, l2_bytes=Fact(192 * _MB, "ini-q l2_size=201326592", "low"),
        memory_bytes=Fact(64 * _GB, "ini-q", "medium"), hbm_bandwidth=_A2_BW, clock_mhz=Fact(1800, "model", "low")),
    _a2("Ascend910B2C", 48, note="in CANN's A2 lists; one field report shows this npu-smi name on an A3 box"),
    _a2("Ascend910B3", 40, l2_bytes=Fact(192 * _MB, "catlass arch.hpp", "medium"),
        memory_bytes=Fact(64 * _GB, "HAMi", "medium"), hbm_bandwidth=_A2_BW, clock_mhz=Fact(1800, "model", "low")),
    _a2("Ascend910B4", 40, l2_bytes=Fact(96 * _MB, "ini-q l2_size=100663296", "low"),
        memory_bytes=Fact(32 * _GB, "ini-q", "medium"), hbm_bandwidth=Fact(0.8e12, "model", "low"),
        clock_mhz=Fact(1500, "model; ini-q test", "low")),
    _a2("Ascend910B4-1", 40, memory_bytes=Fact(64 * _GB, "HAMi", "medium")),
    _a3("Ascend910_9391", 48, l2_bytes=Fact(192 * _MB, "ini-q (Ascend910_9382, same die)", "low"),
        memory_bytes=Fact(64 * _GB, "ini-q (9382, per die)", "low"), hbm_bandwidth=_A3_BW,
        clock_mhz=Fact(1800, "ini-q (9382)", "low")),
    _a3("Ascend910_9392", 48, l2_bytes=Fact(192 * _MB, "ini-q (9382, same die)", "low"), hbm_bandwidth=_A3_BW),
    _a3("Ascend910_9381", 48, l2_bytes=Fact(192 * _MB, "ini-q (9382, same die)", "low"), hbm_bandwidth=_A3_BW),
    _a3("Ascend910_9382", 48, l2_bytes=Fact(192 * _MB, "ini-q", "low"),
        memory_bytes=Fact(64 * _GB, "ini-q (per die)", "low"), hbm_bandwidth=_A3_BW,
        clock_mhz=Fact(1800, "ini-q", "low")),
    _a3("Ascend910_9372", 40),
    _a3("Ascend910_9362", 40),
    _950("Ascend950PR_9579", "Ascend 950PR", 28, l2_bytes=Fact(128 * _MB, "ini-q (Ascend950PR_9579)", "low"),
         memory_bytes=Fact(128 * _GB, "press (HiBL 1.0)", "medium"),
         hbm_bandwidth=Fact(1.6e12, "press (Huawei Connect 2025)", "medium"),
         clock_mhz=Fact(1650, "ini-q (Ascend950PR_9579)", "low")),
    _950("Ascend950PR_9589", "Ascend 950PR", 32, memory_bytes=Fact(128 * _GB, "press", "medium"),
         hbm_bandwidth=Fact(1.6e12, "press", "medium"), note="64 vector cores, as in ONN's Ascend950 tiling UTs"),
    _950("Ascend950PR_9599", "Ascend 950PR", 36, memory_bytes=Fact(128 * _GB, "press", "medium"),
         hbm_bandwidth=Fact(1.6e12, "press", "medium")),
    _950("Ascend950DT_9582", "Ascend 950DT", 32, memory_bytes=Fact(144 * _GB, "press (HiZQ 2.0)", "medium"),
         hbm_bandwidth=Fact(4.0e12, "press", "medium")),
    Soc("Ascend310P3", "310P", _INF, "ascend310p", ARCHS[2002],
        Fact(8, "ini-q ai_core_cnt=8; HAMi aiCore 8 (7 extra Vector Cores need KERNEL_TYPE_MIX_VECTOR_CORE)", "medium"),
        Fact(8, "coupled AI Cores", "medium"), memory_bytes=Fact(24 * _GB, "HAMi memoryCapacity 24576", "medium"),
        hbm_bandwidth=Fact(204e9, "derived: Atlas 300I Duo 408 GB/s for 2 chips (press)", "medium")),
    Soc("Ascend310P1", "310P", _INF, "ascend310p", ARCHS[2002],
        Fact(10, "ADK test stub for 2002; GE doc example ai_core_cnt=10", "low"), Fact(10, "coupled", "low")),
    _910("Ascend910A"),
    _910("Ascend910B", note="the bare name is the 1st-generation 910 variant (arch 1001), never an A2 part"),
    _910("Ascend910ProA"),
    _910("Ascend910ProB"),
    _910("Ascend910PremiumA"),
)}

DEFAULT_SOC = "Ascend910B1"

# One default part per product line, plus CANN's compute-unit names. A key here never equals a SoC version in
# SOCS case-insensitively (test_registry checks it): "ascend910b", CANN's compute unit of the A2 line, is also the
# lower-case spelling of the SoC version Ascend910B (a first-generation 910, arch 1001), so it is no alias: the exact
# spelling "Ascend910B" names that part, and any other spelling of it is refused as ambiguous.
ALIASES: dict[str, str] = {
    "a2": "Ascend910B1", "a3": "Ascend910_9391", "950": "Ascend950PR_9579", "950pr": "Ascend950PR_9579",
    "950dt": "Ascend950DT_9582", "310p": "Ascend310P3", "910": "Ascend910A",
    "ascend910_93": "Ascend910_9391", "ascend950": "Ascend950PR_9579", "ascend310p": "Ascend310P3",
    "ascend910": "Ascend910A",
}

# Spellings that could mean two parts: refused with both readings (ALIASES never holds them).
AMBIGUOUS: dict[str, str] = {
    "ascend910b": "the SoC version Ascend910B (Atlas training, 1st-generation 910, arch 1001; write it exactly "
                  "\"Ascend910B\") or CANN's compute unit ascend910b (the Atlas A2 line; write \"A2\" or a part "
                  "such as \"Ascend910B1\")",
}

# The verification default: one part per architecture, both A2 and A3 lines.
VERIFY_DEFAULT_SOCS = ("Ascend910B1", "Ascend910_9391", "Ascend950PR_9579", "Ascend310P3", "Ascend910A")

_BY_LOWER = {name.lower(): name for name in SOCS}


def aliases_of(name: str) -> tuple[str, ...]:
    """The aliases that resolve to the SoC version `name`."""
    return tuple(a for a, target in ALIASES.items() if target == name)


def get_soc(name: "str | Soc | None" = None) -> Soc:
    """Resolve a SoC version (exact spelling first, then case-insensitive) or a product-line / compute-unit alias.
    Unknown or ambiguous names raise LossGradError (161002)."""
    if isinstance(name, Soc):
        return name
    if name is None:
        return SOCS[DEFAULT_SOC]
    if not isinstance(name, str):
        raise invalid_error(f"soc: expected a SoC version string, got {type(name).__name__}")
    key = name.strip()
    if key in SOCS:
        return SOCS[key]
    if key.lower() in AMBIGUOUS:
        raise invalid_error(f"soc: {name!r} is ambiguous: {AMBIGUOUS[key.lower()]}")
    exact = _BY_LOWER.get(key.lower())
    if exact is not None:
        return SOCS[exact]
    alias = ALIASES.get(key.lower())
    if alias is not None:
        return SOCS[alias]
    raise invalid_error(f"soc: unknown SoC version {name!r}; known: {', '.join(SOCS)}; aliases: "
                        f"{', '.join(f'{a}={t}' for a, t in ALIASES.items())} (`lossgrad socs` lists them)")


def product_lines() -> tuple[str, ...]:
    return ("950", "A3", "A2", "310P", "910")


def socs_in_line(line: str) -> Iterable[Soc]:
    return (s for s in SOCS.values() if s.line == line)


def soc_record(soc: Soc) -> dict[str, Any]:
    """A flat JSON-friendly description, each figure with its source and confidence."""
    def fact(f: Fact) -> dict[str, Any]:
        return {"value": f.value, "source": f.source, "confidence": f.confidence}

    a = soc.arch
    return {
        "name": soc.name, "line": soc.line, "product": soc.product, "compute_unit": soc.compute_unit,
        "npu_arch": a.npu_arch, "npu_arch_flag": a.npu_arch_flag, "cce_aicore_arch": a.cce_aicore_arch,
        "coupled": a.coupled, "vector_cores": fact(soc.vector_cores), "cube_cores": fact(soc.cube_cores),
        "ub_bytes": fact(a.ub_bytes), "ub_kernel_bytes": fact(a.ub_kernel_bytes),
        "l2_bytes": fact(soc.l2_bytes), "memory_bytes": fact(soc.memory_bytes),
        "hbm_bandwidth": fact(soc.hbm_bandwidth), "clock_mhz": fact(soc.clock_mhz),
        "datacopy_pad": a.datacopy_pad, "bf16_io": a.bf16_io, "bf16_arith": a.bf16_arith,
        "ub_bank_skew": fact(a.ub_bank_skew), "gm_row_align_bytes": fact(a.gm_row_align_bytes),
        "kernel_type": a.kernel_type, "overflow_mode": fact(a.overflow_mode),
        "cpu_debug_series": a.cpu_debug_series, "aliases": list(aliases_of(soc.name)), "note": soc.note,
    }
