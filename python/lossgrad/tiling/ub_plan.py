"""The kernels' UB buffer plan, shared by the kernel templates and the tiling.

Every buffer a kernel allocates is declared here once: the template renders its member and its InitBuffer call from
the `Buffer` entry, and the tiling sums the same entries to size the tile so that the plan fills the UB budget. A
buffer costs `count * tileLen * mult * sizeof(ctype) / div` bytes; `when` names the bit of the tiling's `bufMask`
that enables it (None = always), so the decision is made once, by the tiling, and read by the kernel.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from ..registry import OpSpec

ROLES = ("grad", "self", "target")
ROLE_TYPE = {"grad": "TG", "self": "TS", "target": "TT", "out": "TO"}

# bufMask bits, decided by the tiling per launch.
MASK_WORK = {"grad": 0, "self": 1, "target": 2}   # fp32 work/resident buffer of an input
MASK_ACC = 6                                       # KL reduction accumulator
MASK_CONST = 7                                     # Atlas 910 compare-based ops: a constant zero tensor
MASK_RESULT = 8                                    # float result buffer (the output dtype is not float)
MASK_REPEAT = {"grad": 9, "self": 10, "target": 11}  # keep a streamed tile resident: the next tiles repeat it

# Names of the bits in the shared C header (LOSSGRAD_BUF_<NAME>), so the kernels read them by name.
MASK_NAMES: dict[int, str] = {
    **{bit: f"WORK_{role.upper()}" for role, bit in MASK_WORK.items()},
    MASK_ACC: "ACC", MASK_CONST: "CONST", MASK_RESULT: "RESULT",
    **{bit: f"REPEAT_{role.upper()}" for role, bit in MASK_REPEAT.items()},
}


@dataclass(frozen=True)
class Buffer:
    name: str            # C++ member
    kind: str            # "in" (TQue VECIN), "out" (TQue VECOUT), "tbuf" (TBuf VECCALC)
    count: int           # buffers in the queue (2 = double buffering)
    ctype: str           # element type symbol: TG/TS/TT/TO/float/uint8_t
    mult: int = 1
    div: int = 1
    when: int | None = None  # bufMask bit
    doc: str = ""

    def bytes_per_elem(self, sizes: Mapping[str, int]) -> Fraction:
        return Fraction(self.count * self.mult * sizes[self.ctype], self.div)


def io_buffers(read_roles: tuple[str, ...], grad_scalar: bool) -> list[Buffer]:
    out: list[Buffer] = []
    for role in read_roles:
        if role == "grad" and grad_scalar:
            continue
        t = ROLE_TYPE[role]
        out.append(Buffer(f"{role}In_", "in", 2, t, doc=f"{role} tiles from GM (double buffered)"))
        out.append(Buffer(f"{role}Work_", "tbuf", 1, "float", when=MASK_WORK[role],
                          doc=f"{role} as float: cast target, or the resident copy of a broadcast operand"))
    out.append(Buffer("outQ_", "out", 2, "TO", doc="output tiles to GM (double buffered)"))
    out.append(Buffer("result_", "tbuf", 1, "float", when=MASK_RESULT,
                      doc="float result before the cast to the output dtype (float outputs use the out tile)"))
    return out


# Compute scratch per op template (compare-based ops need masks and constant tensors).
_MASK = dict(kind="tbuf", count=1, ctype="uint8_t", div=8)
OP_SCRATCH: dict[str, tuple[Buffer, ...]] = {
    "l1": (
        Buffer("maskA_", **_MASK, doc="comparison bits"),
        Buffer("maskB_", **_MASK, doc="comparison bits"),
        Buffer("tmpA_", "tbuf", 1, "float", doc="selected values"),
        Buffer("zeros_", "tbuf", 1, "float", when=MASK_CONST, doc="constant 0.0 (Select mode 0 needs a tensor)"),
    ),
    "mse": (),
    "smooth_l1": (
        Buffer("maskA_", **_MASK, doc="comparison bits"),
        Buffer("maskB_", **_MASK, doc="comparison bits"),
        Buffer("maskC_", **_MASK, doc="comparison bits"),
        Buffer("tmpA_", "tbuf", 1, "float", doc="x = self - target"),
        Buffer("tmpB_", "tbuf", 1, "float", doc="|x|, then the linear branch x / beta"),
        Buffer("zeros_", "tbuf", 1, "float", when=MASK_CONST, doc="constant 0.0 (Select mode 0 needs a tensor)"),
    ),
    "kl_div": (
        Buffer("acc_", "tbuf", 1, "float", when=MASK_ACC, doc="KL reduction: running sums of contributions"),
    ),
}

# Atlas 910 (1001) lacks Compares, Select modes 1/2 and Maxs/Mins: masks are written one 64-lane chunk per 32-byte
# slot (4x the bytes) so that Select mode 0 can take each chunk's bits from an aligned address.
MASK_CHUNKED_DIV = 2

# The one buffer whose size does not scale with the tile: scalarStage_ turns a scalar gradOutput into a float (one
# 32-byte block of its dtype in, the float at byte 64). The kernel allocates exactly this; the tile gets the rest.
SCALAR_STAGE_BYTES = 128
FIXED_BYTES = SCALAR_STAGE_BYTES


def read_roles(op: OpSpec) -> tuple[str, ...]:
    """Inputs the kernel reads from GM (KL never reads self: only its shape matters)."""
    return ROLES if op.kernel_reads_self else ("grad", "target")


def has_constants(op: OpSpec) -> bool:
    """Whether the op's compute body has constant buffers (allocated only where needs_constants says)."""
    return any(b.when == MASK_CONST for b in OP_SCRATCH[op.template])


def needs_constants(op: OpSpec, npu_arch: int) -> bool:
    """Atlas 910 selects with tensors only (Select mode 0), so compare-based ops keep a zero tensor there."""
    return npu_arch == 1001 and has_constants(op)


def buffers(op: OpSpec, grad_scalar: bool, npu_arch: int) -> list[Buffer]:
    scratch = list(OP_SCRATCH[op.template])
    if npu_arch == 1001:
        scratch = [Buffer(b.name, b.kind, b.count, b.ctype, b.mult, MASK_CHUNKED_DIV, b.when, b.doc)
                   if b.ctype == "uint8_t" else b for b in scratch]
    return io_buffers(read_roles(op), grad_scalar) + scratch
