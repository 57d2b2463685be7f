"""Streaming passes of aclnn's composition (BroadcastTo, Cast, ReduceSum), as event logs for the replay.

aclnn runs an op with broadcast or mixed-dtype inputs as several launches (ops_semantics §1.3, §7): each of its
BroadcastTo, Cast and ReduceSum passes is a plain streaming kernel that reads its input once and writes its output
once. `stream_pass` writes the log such a kernel leaves in the twin (per core: TQue pipeline of copy-in, one vector
instruction per tile, copy-out; double buffered) and replays it with the SoC's parameters, so the composition is
modelled by the same scheduler and figures as our kernels, launch head and tail included. The split follows the
usual elementwise tiling: even shares over the cores, at least MIN_CORE_BYTES (our tiling's) each, tiles of
TILE_BYTES of the wider side.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..socs import Soc, get_soc
from ..tiling import MIN_CORE_BYTES  # as our tiling: a core gets at least this much before another core is added
from .events import MTE2, MTE3, V, LogBuilder, make_log
from .params import params_for
from .replay import Timing, replay

TILE_BYTES = 32 * 1024       # per buffer of the wider side (two buffers each way fit every part's UB)


@dataclass(frozen=True)
class PassModel:
    block_dim: int
    tiles_per_core: int
    vec_calls: int
    dma_calls: int
    timing: Timing | None


def _core_log(in_bytes: int, out_bytes: int, repeats: int, tiles: int, api: str) -> LogBuilder:
    """One core's pipeline: MTE2 -> (V) -> MTE3 with two buffers on each queue."""
    b = LogBuilder()
    token = 0

    def new() -> int:
        nonlocal token
        token += 1
        return token

    free_in: list[int] = []    # tokens V (or MTE3) sets when an input buffer is free again
    free_out: list[int] = []   # tokens MTE3 sets when an output buffer is free again
    for t in range(tiles):
        ib = in_bytes // tiles + (1 if t < in_bytes % tiles else 0)
        ob = out_bytes // tiles + (1 if t < out_bytes % tiles else 0)
        rep = repeats // tiles + (1 if t < repeats % tiles else 0)
        slot = t % 2
        if t >= 2:
            b.wait(MTE2, free_in[t - 2], api="TQue::AllocTensor")
        b.copy_in(ib, ub=slot * TILE_BYTES)
        loaded = new()
        b.set(MTE2, loaded, api="TQue::EnQue")
        if rep:
            b.wait(V, loaded, api="TQue::DeQue")
            if t >= 2:
                b.wait(V, free_out[t - 2], api="TQue::AllocTensor")
            b.vec(api, rep, dst=0x20000 + slot * TILE_BYTES, src0=slot * TILE_BYTES)
            released = new()
            b.set(V, released, api="TQue::FreeTensor")
            free_in.append(released)
            done = new()
            b.set(V, done, api="TQue::EnQue")
            b.wait(MTE3, done, api="TQue::DeQue")
        else:  # a pure data move (BroadcastTo): MTE3 writes from the buffer MTE2 filled
            b.wait(MTE3, loaded, api="TQue::DeQue")
        b.copy_out(ob, ub=0x20000 + slot * TILE_BYTES)
        out_free = new()
        b.set(MTE3, out_free, api="TQue::FreeTensor")
        free_out.append(out_free)
        if not rep:
            free_in.append(out_free)
    return b


def stream_pass(soc: "str | Soc", in_bytes: int, out_bytes: int, vec_repeats: int, *, timing: bool = True,
                api: str = "Cast") -> PassModel:
    """Model one streaming launch that reads `in_bytes`, writes `out_bytes` and issues `vec_repeats` 256-byte vector
    repeats (0: a data move) on `soc`."""
    soc_ = get_soc(soc)
    wide = max(in_bytes, out_bytes, 1)
    block_dim = max(1, min(soc_.cores, wide // MIN_CORE_BYTES))
    logs = []
    tiles_max = 0
    vec_calls = dma_calls = 0
    for c in range(block_dim):
        share = lambda total: total // block_dim + (1 if c < total % block_dim else 0)  # noqa: E731
        ci, co, cr = share(in_bytes), share(out_bytes), share(vec_repeats)
        tiles = max(1, math.ceil(max(ci, co) / TILE_BYTES))
        tiles_max = max(tiles_max, tiles)
        logs.append(_core_log(ci, co, cr, tiles, api))
        vec_calls += tiles if cr else 0
        dma_calls += 2 * tiles
    t = replay(make_log(logs), params_for(soc_), soc=soc_, roofline_bytes=in_bytes + out_bytes,
               roofline_written=out_bytes) if timing else None
    return PassModel(block_dim=block_dim, tiles_per_core=tiles_max, vec_calls=vec_calls, dma_calls=dma_calls,
                     timing=t)
