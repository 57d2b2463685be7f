"""The kernels' UB buffer plan, shared by the kernel templates and the tiling.

Every buffer a kernel allocates is declared here once: the template renders its member and its InitBuffer call from
the `Buffer` entry, and the tiling sums the same entries to size the tile so that the plan fills the UB budget. A
buffer costs `count * tileLen * mult * sizeof(ctype) / div` bytes; `when` names the bit of the tiling's `bufMask`
that enables it (None = always), so the decision is made once, by the tiling, and read by the kernel.

Queue event IDs. On the real TQue (asc-devkit impl/basic_api/kernel_tquebind_impl.h) FreeTensor reserves an event ID
of the queue's free event (VECIN: V_MTE2, VECOUT: MTE3_V) that the buffer keeps until it is allocated again, and
buffers are handed out in rotation; EnQue holds one of the enqueue event (MTE2_V, V_MTE3) until DeQue. The pool per
event type is QUE_MAX_EVENT IDs (asc-devkit impl/basic_api/kernel_macros.h; the SoC table's `events_per_position`:
4 on Atlas 910 (1001), 8 elsewhere), shared with the kernel's own FetchEventID/AllocEventID. So every input of a
tile is a *slice* of one buffer of a single double-buffered VECIN queue (`inQ_`): all of a tile's loads go into one
buffer, one EnQue/DeQue, one FreeTensor. That holds 2 V_MTE2 IDs whatever the number of inputs (three queues of two
buffers held 6, over 1001's 4) and keeps full double buffering of every input on every architecture; the UB it
takes, and so the tile length, is what three separate queues took. `held_event_ids` states the peak per event type
and `check_event_budget` compares it with the architecture's pool (tests and the kernel's static_assert use both).

UB bank groups (A2/A3). asc-devkit examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub: UB
address bits 8:5 select one of 16 bank groups of 32-byte rows, so a 256-byte repeat covers half of them, and two
sources of one instruction that start at the same address mod 512 read the same groups every repeat (a read-read
conflict; the example measures up to 1.85x the instruction's time). Every buffer that is an operand of a binary
vector instruction therefore has a bank `phase`, 0 or 1: its data starts at phase * skew mod 2 * skew, with
`bank_skew(npu_arch)` = 256 on A2/A3 and 0 (no placement) elsewhere. The phases are chosen so that the two sources
of every binary instruction of the compute bodies differ: self and target (Sub, Compare), grad and the result (Mul),
the result and the compute scratch (L1's Sub/Mul, smooth L1's Sub, KL's accumulating Add). The input slices get
their phase from a fixed lead inside the queue buffer (each buffer stays a multiple of 2 * skew, so both buffers of
the queue agree); a VECCALC buffer reserves one skew and takes its lead at run time from the UB offset reached
(TPipe hands out UB from offset 0 in InitBuffer order: asc-devkit impl/basic_api/kernel_tpipe_impl.h), so the plan
holds whichever buffers bufMask enables. Buffer.pad is the bytes that placement adds to each buffer instance.
"""
from __future__ import annotations

from dataclasses import replace

# The buffer vocabulary (bufMask bits, bank phases, Buffer) is declared in opspec, where op folders declare their
# compute bodies' scratch; the plan below places it.
from ..opspec import (MASK_ACC, MASK_CONST, MASK_REPEAT, MASK_RESULT, MASK_WORK, RESULT_PHASE,  # noqa: F401
                      ROLE, ROLE_PHASE, SCRATCH_PHASE, Buffer, OpSpec)
from ..registry import INPUT_ROLES
from ..registry import scratch as op_scratch
from ..socs import ARCHS

ROLE_TYPE = {**{r: ROLE[r].type_param for r in INPUT_ROLES}, "out": "TO"}

# Names of the bits in the shared C header (LOSSGRAD_BUF_<NAME>), so the kernels read them by name: those of the
# roles the ops declare.
MASK_NAMES: dict[int, str] = {
    **{MASK_WORK[role]: f"WORK_{role.upper()}" for role in INPUT_ROLES},
    MASK_ACC: "ACC", MASK_CONST: "CONST", MASK_RESULT: "RESULT",
    **{MASK_REPEAT[role]: f"REPEAT_{role.upper()}" for role in INPUT_ROLES},
}


# Buffers of the one VECIN queue (each holds a slice per input) and of the VECOUT queue.
IN_QUEUE_DEPTH = 2
OUT_QUEUE_DEPTH = 2


def bank_skew(npu_arch: int) -> int:
    """Bytes between the two bank phases (0: the architecture has no bank placement; unknown archs get none)."""
    return int(ARCHS[npu_arch].ub_bank_skew.value) if npu_arch in ARCHS else 0


def slices(roles: list[str], skew: int) -> list[Buffer]:
    """The input slices of one inQ_ buffer in order, each led to its role's phase; the last one pads the buffer back
    to phase 0 (tile-scaled sizes are multiples of 2 * skew: TILE_ALIGN elements of at least 2 bytes)."""
    out: list[Buffer] = []
    at = 0
    for i, role in enumerate(roles):
        want = ROLE_PHASE[role] * skew
        lead = (want - at) % (2 * skew) if skew else 0
        at = want
        trail = (-at) % (2 * skew) if skew and i == len(roles) - 1 else 0
        out.append(Buffer(f"{role}In_", "in", IN_QUEUE_DEPTH, ROLE_TYPE[role], phase=ROLE_PHASE[role], lead=lead,
                          pad=lead + trail, doc=f"{role}'s slice of the tile's input buffer (inQ_, double buffered)"))
    return out


def io_buffers(read_roles: tuple[str, ...], grad_scalar: bool, skew: int = 0) -> list[Buffer]:
    """Allocation order: the input slices, the output queue (both at phase 0 whatever bufMask enables), then the
    VECCALC buffers with a phase (each reserves `skew` bytes for its lead)."""
    roles = [r for r in read_roles if not (r == "grad" and grad_scalar)]
    out = slices(roles, skew)
    out.append(Buffer("outQ_", "out", OUT_QUEUE_DEPTH, "TO", phase=RESULT_PHASE,
                      doc="output tiles to GM (double buffered)"))
    for role in roles:
        out.append(Buffer(f"{role}Work_", "tbuf", 1, "float", when=MASK_WORK[role], phase=ROLE_PHASE[role], pad=skew,
                          doc=f"{role} as float: cast target, or the resident copy of a broadcast operand"))
    out.append(Buffer("result_", "tbuf", 1, "float", when=MASK_RESULT, phase=RESULT_PHASE, pad=skew,
                      doc="float result before the cast to the output dtype (float outputs use the out tile)"))
    return out


# Atlas 910 (1001) lacks Compares, Select modes 1/2 and Maxs/Mins: masks are written one 64-lane chunk per 32-byte
# slot (4x the bytes) so that Select mode 0 can take each chunk's bits from an aligned address.
MASK_CHUNKED_DIV = 2

# The one buffer whose size does not scale with the tile: scalarStage_ turns a scalar gradOutput into a float (one
# 32-byte block of its dtype in, the float at byte 64). The kernel allocates exactly this; the tile gets the rest.
SCALAR_STAGE_BYTES = 128
FIXED_BYTES = SCALAR_STAGE_BYTES


def read_roles(op: OpSpec, absent: "tuple[str, ...] | frozenset[str]" = ()) -> tuple[str, ...]:
    """Inputs the kernel reads from GM, in role order: not KL's self (only its shape matters), nor an absent
    optional input."""
    return tuple(r for r in op.roles if op.input(r).values_read and r not in absent)


def has_constants(op: OpSpec) -> bool:
    """Whether the op's compute body has constant buffers (allocated only where needs_constants says)."""
    return any(b.when == MASK_CONST for b in op_scratch(op))


def needs_constants(op: OpSpec, npu_arch: int) -> bool:
    """Atlas 910 selects with tensors only (Select mode 0), so compare-based ops keep a zero tensor there."""
    return npu_arch == 1001 and has_constants(op)


def buffers(op: OpSpec, grad_scalar: bool, npu_arch: int, absent: "tuple[str, ...] | frozenset[str]" = ()
            ) -> list[Buffer]:
    """The plan in allocation order: io_buffers, the op's phased float scratch, the phased masks (their sizes are not
    multiples of skew, so no float buffer with a phase follows them), then the rest. `absent`: optional inputs the
    call leaves out (no slice, no work buffer)."""
    skew = bank_skew(npu_arch)
    scratch = [replace(b, pad=phase_reserve(b, skew)) if b.phase is not None else b for b in op_scratch(op)]
    if npu_arch == 1001:
        scratch = [replace(b, div=MASK_CHUNKED_DIV) if b.ctype == "uint8_t" else b for b in scratch]
    scratch.sort(key=lambda b: (b.phase is None, b.ctype == "uint8_t"))
    return io_buffers(read_roles(op, absent), grad_scalar, skew) + scratch


def phase_reserve(b: Buffer, skew: int) -> int:
    """Bytes a phased VECCALC buffer reserves for its lead: float buffers start at multiples of `skew` (everything
    before them is), so their lead is 0 or skew; masks (tile / 8 bytes) follow them at any 32-byte offset, so theirs
    is up to 2 * skew - 32 (the kernel's CalcBuf::Init, `anyOffset`)."""
    if not skew:
        return 0
    return 2 * skew - 32 if b.ctype == "uint8_t" else skew


def fixed_bytes(bufs: list[Buffer], buf_mask: int) -> int:
    """UB bytes that do not scale with the tile: the scalar stage and the bank placement of the enabled buffers."""
    return FIXED_BYTES + sum(b.count * b.pad for b in bufs if b.when is None or buf_mask >> b.when & 1)


# The kernel's own event use (data_move.h.j2): FetchEventID + SetFlag/WaitFlag pairs, one ID at a time per type, of
# types no queue uses (scalar <-> vector/MTE2/MTE3 around scalar UB access on the 310P/910 row paths).
KERNEL_EVENTS = ("S_V", "V_S", "S_MTE2", "S_MTE3", "MTE3_S")


def held_event_ids(op: OpSpec, grad_scalar: bool, npu_arch: int) -> dict[str, int]:
    """Peak event IDs held at once per HardEvent by the kernel's queues and its own synchronisation.

    VECIN (one queue, all inputs): each freed buffer keeps a V_MTE2 ID until its next allocation, EnQue holds one
    MTE2_V ID until the DeQue that follows it. VECOUT: MTE3_V per freed buffer, V_MTE3 from EnQue to DeQue.
    FetchEventID needs one free ID of its type at the call."""
    bufs = buffers(op, grad_scalar, npu_arch)
    held: dict[str, int] = {}
    if any(b.kind == "in" for b in bufs):
        held["V_MTE2"] = IN_QUEUE_DEPTH
        held["MTE2_V"] = 1
    held["MTE3_V"] = OUT_QUEUE_DEPTH
    held["V_MTE3"] = 1
    for e in KERNEL_EVENTS:
        held[e] = held.get(e, 0) + 1
    return held


def blocks_only(npu_arch: int) -> bool:
    """310P/910 (no DataCopyPad): the kernel writes whole 32-byte blocks only (data_move.h.j2 RowWriter), so the
    tiling keeps each core's output one GM-contiguous run of at least one block where rows are ragged. Architectures
    not in the SoC table are taken to have DataCopyPad (as everywhere else in the tiling)."""
    return npu_arch in ARCHS and not ARCHS[npu_arch].datacopy_pad


def event_budget(npu_arch: int) -> int:
    """IDs per event type of the architecture's TQue/TPipe pool (QUE_MAX_EVENT)."""
    return ARCHS[npu_arch].events_per_position if npu_arch in ARCHS else min(a.events_per_position
                                                                             for a in ARCHS.values())


def check_event_budget(op: OpSpec, grad_scalar: bool, npu_arch: int) -> None:
    over = {e: n for e, n in held_event_ids(op, grad_scalar, npu_arch).items() if n > event_budget(npu_arch)}
    if over:
        raise AssertionError(f"{op.name} on NpuArch {npu_arch}: event IDs over the pool of "
                             f"{event_budget(npu_arch)}: {over}")
