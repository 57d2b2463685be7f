"""Host side of tests/twin/kernels/vec_api.cpp: pack its tiling struct, run one API on given data, unpack dst."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from lossgrad.twin import Report, run_kernel

from _twin_common import KERNELS, SOCS
from _twin_expect import BF16

SOURCE = KERNELS / "vec_api.cpp"

OPS = {name: i for i, name in enumerate(
    "ADD SUB MUL DIV MAX MIN ADDS MULS MAXS MINS DUP ABS EXP LN SQRT RSQRT RECIP RELU LEAKY AND OR NOT CAST CMP "
    "CMPS CMPSCALAR SEL SELS REDUCE SIGN CMP_REG SEL_REG SETCMP_SEL SCALAR_CAST".split(), start=1)}
OPS.update(PAD_IN=100, PAD_OUT=101, COPY_IN=102, COPY_OUT=103)

DTYPES = {"f16": (0, np.dtype(np.float16)), "f32": (1, np.dtype(np.float32)), "i16": (2, np.dtype(np.int16)),
          "i32": (3, np.dtype(np.int32)), "u16": (4, np.dtype(np.uint16)), "bf16": (5, BF16),
          "i8": (6, np.dtype(np.int8)), "u8": (7, np.dtype(np.uint8)), "i64": (8, np.dtype(np.int64)),
          "u32": (9, np.dtype(np.uint32)), "u64": (10, np.dtype(np.uint64))}

MASK_KINDS = {"level2": 0, "count": 1, "bits": 2, "counter": 3, "ext_bits": 4, "ext_counter": 5}

_TILING = struct.Struct("<4I I 5I 3I 8I I 3Q 8B")


def dt(name: str) -> np.dtype:
    return DTYPES[name][1]


def _gm(data, minimum: int = 32) -> np.ndarray:
    """A GM buffer of whole 32-byte blocks holding `data` (bytes or array), zero-padded."""
    raw = np.frombuffer(np.ascontiguousarray(data).tobytes() if data is not None else b"", np.uint8)
    n = (max(minimum, raw.size) + 31) // 32 * 32
    buf = np.zeros(n, np.uint8)
    buf[:raw.size] = raw
    return buf


def scalar_bits(value, dtype: np.dtype) -> int:
    b = np.array([value]).astype(dtype).tobytes()
    return int.from_bytes(b.ljust(8, b"\0"), "little")


@dataclass
class Call:
    op: str
    t0: str
    t1: str = "f16"
    count: int = 0
    mode: int = 0
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    c: np.ndarray | None = None
    out: np.ndarray | None = None          # initial dst content (defines the dst buffer size)
    out_bytes: int = 0                     # dst buffer size when `out` is None
    tmp_bytes: int = 32
    repeat: int = 0
    mask: str = "level2"
    mask_lo: int = 0
    mask_hi: int = 0
    scalar: int = 0                        # raw bits
    strides: tuple = (1, 1, 1, 8, 8, 8)
    inplace: int = 0                       # 1: src0 is dst, 2: src1 is dst
    p: tuple = (0,) * 8
    report: Report | None = field(default=None, repr=False)

    def run(self, arch: int, block_dim: int = 1) -> np.ndarray:
        """Run on `arch`; returns the final dst buffer as raw bytes (uint8)."""
        bufs = [_gm(self.a), _gm(self.b), _gm(self.c)]
        out = _gm(self.out, max(32, self.out_bytes))
        st = list(self.strides) + [0] * (8 - len(self.strides))
        t1 = DTYPES[self.t1][0]
        tiling = _TILING.pack(OPS[self.op], DTYPES[self.t0][0], t1, self.count, self.mode, bufs[0].size,
                              bufs[1].size, bufs[2].size, out.size, max(32, self.tmp_bytes), self.repeat,
                              MASK_KINDS[self.mask], int(self.inplace), *self.p, 0, self.mask_lo, self.mask_hi,
                              self.scalar, *st)
        # The arithmetic itself, under the twin's primary answers to the questions sources leave open (a float32
        # Inf/NaN saturates on 310P/910, NaN passes Max/Min); test_saturation.py and test_fidelity.py cover the rest.
        self.report = run_kernel(SOURCE, "vec_api", block_dim, [*bufs, out, tiling], soc=SOCS[arch],
                                 undetermined="primary")
        return out

    def run_as(self, arch: int, dtype, n: int | None = None) -> np.ndarray:
        out = self.run(arch).view(dtype)
        return out if n is None else out[:n]


# ---- dtypes each API supports per architecture (ascendc_api.md §2.6) ----
def _per_arch(a3510, a2201, a2002, a1001):
    return {3510: a3510.split(), 2201: a2201.split(), 2002: a2002.split(), 1001: a1001.split()}


_ADD = _per_arch("i8 u8 i16 u16 f16 bf16 i32 u32 f32 i64", "i16 f16 i32 f32", "i16 f16 i32 f32", "f16 i32 f32")
_ADDS = _per_arch("i16 u16 f16 bf16 i32 u32 f32", "i16 f16 i32 f32", "i16 f16 i32 f32", "f16 f32")
_CMP = _per_arch("i16 u16 f16 bf16 i32 u32 f32", "f16 f32 i32", "f16 f32", "f16 f32")
_FLOAT = _per_arch("f16 f32", "f16 f32", "f16 f32", "f16 f32")
LEGAL = {
    "ADD": _ADD, "SUB": _ADD, "MAX": _ADD, "MIN": _ADD,
    "MUL": _per_arch("i16 u16 f16 bf16 i32 u32 f32", "i16 f16 i32 f32", "i16 f16 i32 f32", "f16 i32 f32"),
    "DIV": _per_arch("i16 u16 f16 i32 u32 f32", "f16 f32", "f16 f32", "f16 f32"),
    "ADDS": _ADDS, "MULS": _ADDS,
    "MAXS": {**_ADDS, 1001: []}, "MINS": {**_ADDS, 1001: []},
    "DUP": _per_arch("i8 u8 i16 u16 f16 bf16 i32 u32 f32 i64", *(["i16 u16 f16 bf16 i32 u32 f32"] * 3)),
    "ABS": _per_arch("i8 i16 f16 i32 f32 i64", "f16 f32", "f16 f32", "f16 f32"),
    "EXP": _FLOAT, "LN": _FLOAT, "SQRT": _FLOAT, "RSQRT": _FLOAT, "RECIP": _FLOAT,
    "RELU": _per_arch("f16 i32 f32 i64", "f16 i32 f32", "f16 i32 f32", "f16"),
    "LEAKY": {**_FLOAT, 1001: []},
    "AND": _per_arch(*(["i16 u16"] * 4)), "OR": _per_arch(*(["i16 u16"] * 4)), "NOT": _per_arch(*(["i16 u16"] * 4)),
    "CMP": _CMP, "CMPS": {**_CMP, 1001: []},
    "SEL": _per_arch("i16 u16 f16 bf16 i32 u32 f32", "f16 f32", "f16 f32", "f16 f32"),
    "REDUCE": _per_arch("f16 f32", "f16 f32", "f16 f32", "f16"),
    "SIGN": {**_FLOAT, 1001: []},
}


def cases(*ops: str, archs=(2201, 3510, 2002, 1001)):
    """(arch, op, dtype) for every legal combination."""
    return [(a, op, t) for op in ops for a in archs for t in LEGAL[op][a]]


def sample(dtype: np.dtype, n: int, rng: np.random.Generator, *, lo: float = -100.0, hi: float = 100.0,
           specials: bool = False) -> np.ndarray:
    """n values of dtype: uniform in [lo, hi] (integers: within the type and [lo, hi]), optionally with specials."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, int(lo)), min(info.max, int(hi)) + 1, n).astype(dtype)
    x = rng.uniform(lo, hi, n)
    if specials and n >= 8:
        x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-7, -3e-39, 2.5]
    return x.astype(dtype)
