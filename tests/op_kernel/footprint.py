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
