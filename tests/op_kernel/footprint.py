"""Independent model of what each core must read: from the output bytes a core wrote (the twin's per-core write
ranges), the set of input elements those outputs depend on, by NumPy broadcasting index arithmetic. Nothing here
uses the tiling or the kernel code."""
from __future__ import annotations

import numpy as np


def written_elements(ranges: tuple[tuple[int, int], ...], itemsize: int) -> np.ndarray:
    """Flat output indices covered by a core's merged byte ranges."""
    parts = [np.arange(b // itemsize, e // itemsize, dtype=np.int64) for b, e in ranges]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _project(multi: tuple[np.ndarray, ...], shape: tuple[int, ...]) -> np.ndarray:
    """Flat indices into an operand of `shape` broadcast against the multi-index space (right-aligned)."""
    lead = len(multi) - len(shape)
    idx = [np.zeros_like(multi[0]) if n == 1 else multi[lead + i] for i, n in enumerate(shape)]
    if not shape:
        return np.zeros_like(multi[0]) if multi else np.zeros(1, np.int64)
    return np.ravel_multi_index(tuple(idx), shape)


def input_footprints(out_flat: np.ndarray, out_shape: tuple[int, ...], iter_shape: tuple[int, ...],
                     input_shapes: dict[str, tuple[int, ...]]) -> dict[str, int]:
    """Distinct elements of each input needed to produce the given output elements.

    Elementwise ops: the output index space is the iteration space. KL over a broadcast self: an output element
    gathers every iteration element that projects onto it (the axes where self has size 1 are summed)."""
    if out_flat.size == 0:
        return {r: 0 for r in input_shapes}
    if tuple(out_shape) == tuple(iter_shape):
        multi = np.unravel_index(out_flat, iter_shape) if iter_shape else ()
        if not iter_shape:
            return {r: 1 for r in input_shapes}
        return {r: int(np.unique(_project(multi, s)).size) for r, s in input_shapes.items()}
    # Reduction: enumerate the iteration space, keep the elements whose projection is one of the outputs.
    it = np.arange(int(np.prod(iter_shape)), dtype=np.int64)
    multi = np.unravel_index(it, iter_shape)
    owner = _project(multi, tuple(out_shape))
    keep = np.isin(owner, out_flat)
    multi = tuple(m[keep] for m in multi)
    return {r: int(np.unique(_project(multi, s)).size) for r, s in input_shapes.items()}


# ---- 310P/910 whole-block writes (data_move.h.j2 RowWriter): what a core must rewrite, independent of the kernel ----

def row_pieces(start: int, end: int, row: int) -> list[int]:
    """Lengths of the pieces of [start, end) cut at multiples of `row` (the output rows a flat range crosses)."""
    out, pos = [], start
    while pos < end:
        nxt = min(end, (pos // row + 1) * row)
        out.append(nxt - pos)
        pos = nxt
    return out


def _rewritten(pieces: list[int], block: int) -> int:
    """Elements a core must write twice to emit these GM-contiguous pieces in whole blocks, never before its run:
    a piece ends with a block back-shifted onto its own (or, if shorter than a block, the run's earlier) elements,
    (block - n % block) % block of them; the run's head, while shorter than a block, waits for the next pieces, and
    its first block overlaps what follows by block - head (a head of more than a block: two blocks, 2 * block - head).
    """
    rew, head, started = 0, 0, False
    for n in pieces:
        if started:
            rew += (block - n % block) % block
        elif n >= block:
            started = True
            rew += (block - head if head else 0) + (block - n % block) % block
        else:
            head += n
            if head >= block:
                started = True
                rew += 2 * block - head if head > block else 0
    return rew


def block_rewrites(start: int, end: int, row: int, block: int) -> int:
    """Elements written twice by a core whose output is the GM-contiguous run [start, end) of rows `row` long."""
    return _rewritten(row_pieces(start, end, row), block)


def output_bytes_written(npu_arch: int, nbytes: int) -> int:
    """Distinct bytes of the output's allocation a kernel writes. Atlas 910 (1001) has no data-cache write-back, so an
    output shorter than one 32-byte block goes out as that whole block, read-modify-written by one core
    (RowWriter::Finish; the allocation holds ALIGN_UP(n, 32) + 32 bytes, and the twin runner checks that the bytes
    past the output come back unchanged). Everywhere else: exactly the output."""
    return 32 if npu_arch == 1001 and 0 < nbytes < 32 else nbytes
