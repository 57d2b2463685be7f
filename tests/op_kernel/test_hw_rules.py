"""The kernels under the real machine's rules that the twin models (issue 9):

- Atlas 910 (NpuArch 1001) has 4 TQue event IDs per event type (QUE_MAX_EVENT): for every op and dtype mix, on
  launches of several tiles (so the queues' buffers rotate) and in every operand mode, no event type ever holds
  more IDs than the pool, by the twin's per-core peak of held IDs; and the buffer plan's own statement
  (ub_plan.held_event_ids) fits every architecture's pool.
- 310P/910 (no DataCopyPad) write row tails without scalar GM writes: no core writes GM by SetValue (the only
  exception, an output smaller than one 32-byte block on one core, is flushed), no byte is written by two cores, no
  64-byte GM line written by SetValue is shared with any other writer, and what a core rewrites is exactly the
  back-shifted overlap of its ragged pieces (an independent model of the pieces from the core's output range).
- The project kernels run clean with strict manual synchronisation (auto_sync=False) as with auto_sync=True.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from lossgrad import golden
from lossgrad.registry import OPS, get_op, runs_on
from lossgrad.runners.twin import run_twin
from lossgrad.socs import ARCHS, Fact, Soc, get_soc
from lossgrad.tiling import ub_plan
from lossgrad.validation import shapes_accepted, validate
from lossgrad.verify.cases import default_cases

from footprint import block_rewrites, output_bytes_written

# Each operand mode and split, on an Atlas 910 of two cores so that every core runs several tiles (the 1001 tiles
# of these plans hold 6K-16K elements) and the queues' buffers rotate.
EVENT_PATTERNS = {
    "same": ((120000,), (120000,), (120000,)),
    "grad_scalar": ((), (1000, 131), (1000, 131)),
    "row": ((1000, 131), (1000, 131), (131,)),
    "column": ((1000, 1), (1000, 131), (1000, 131)),
}
KL_EVENT_PATTERNS = {
    "kl_sum_rows": ((1000, 131), (1000, 1), (1000, 131)),
    "kl_sum_cols": ((1000, 131), (1, 131), (1000, 131)),
}
TWO_CORE_910 = dataclasses.replace(get_soc("Ascend910A"), vector_cores=Fact(2, "test: two cores", "none"))


def _mixes(soc: str) -> list[tuple[str, tuple[str, str, str, str]]]:
    """Every (op, grad;self;target;out dtype) the verify matrix runs on this SoC."""
    return sorted({(c.op, c.dtypes) for c in default_cases((soc,))})


def _arrays(shapes, dtypes, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2.0, 2.0, s).astype(d) for s, d in zip(shapes, dtypes)]


def _run(op: str, shapes, dtypes, soc: "str | Soc", auto_sync: bool = True):
    """`dtypes`: the inputs' (an optional input's "" when absent, else given with self's shape), then out's."""
    optional = [None if not d else _arrays([shapes[1]], [d], seed=7)[0] for d in dtypes[3:-1]]
    absent = get_op(op).absent_optional[len(optional):]
    call = validate(op, *_arrays(shapes, dtypes[:3]), *optional, *absent, "none", out_dtype=dtypes[-1], soc=soc)
    return call, run_twin(call, auto_sync=auto_sync)


# ---------------------------------------------------------------------------------------------------------------
# Event IDs
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("npu_arch", sorted(ARCHS))
def test_buffer_plan_states_event_ids_within_every_pool(npu_arch: int) -> None:
    for op in OPS.values():
        for grad_scalar in (False, True):
            held = ub_plan.held_event_ids(op, grad_scalar, npu_arch)
            ub_plan.check_event_budget(op, grad_scalar, npu_arch)
            # one VECIN queue whatever the number of inputs: two held V_MTE2 IDs (three queues held six)
            assert held["V_MTE2"] == ub_plan.IN_QUEUE_DEPTH == 2
            assert max(held.values()) <= ub_plan.event_budget(npu_arch)
    assert ub_plan.event_budget(1001) == 4


def test_event_budget_check_refuses_an_over_budget_plan(monkeypatch) -> None:
    monkeypatch.setattr(ub_plan, "IN_QUEUE_DEPTH", 6)  # what three double-buffered VECIN queues held
    with pytest.raises(AssertionError, match="V_MTE2"):
        ub_plan.check_event_budget(OPS["l1_loss_backward"], False, 1001)
    ub_plan.check_event_budget(OPS["l1_loss_backward"], False, 2201)  # 6 <= 8


MIXES_1001 = _mixes("Ascend910A")


def test_1001_mixes_cover_every_op_and_several_dtype_mixes() -> None:
    assert {op for op, _ in MIXES_1001} == {op for op in OPS if runs_on(op, "Ascend910A")}
    assert len({d for _, d in MIXES_1001}) >= 4


@pytest.mark.parametrize("op,dtypes", MIXES_1001, ids=[f"{o}-{'.'.join(d)}" for o, d in MIXES_1001])
def test_1001_event_ids_within_four(op: str, dtypes) -> None:
    budget = ub_plan.event_budget(1001)
    patterns = dict(EVENT_PATTERNS)
    if OPS[op].reduced_onto:  # KL: target reduced onto self (KlDivTarget: the other way round)
        patterns.update(_onto(op, KL_EVENT_PATTERNS))
    for name, shapes in patterns.items():
        if not shapes_accepted(op, *shapes):
            continue  # aclnn refuses the pattern (BCEWithLogits: target must be self's shape)
        call, r = _run(op, shapes, dtypes, TWO_CORE_910)
        per_core = math.prod(call.iter_shape) // r.report.block_dim
        assert per_core > 2 * r.plan.fields["tileLen"], f"{name}: too few tiles per core to rotate the queues"
        for core in r.report.cores:
            peak = dict(core.event_ids_peak)
            assert peak, "the twin reports no event-ID peaks"
            assert max(peak.values()) <= budget, (name, core.index, peak)
            # the queues' own share is what the buffer plan states (the kernel's own IDs come and go)
            assert peak.get("V_MTE2", 0) <= ub_plan.IN_QUEUE_DEPTH, (name, peak)


# ---------------------------------------------------------------------------------------------------------------
# 310P/910 row tails
# ---------------------------------------------------------------------------------------------------------------

BLOCK_SOCS = ("Ascend310P3", "Ascend910A")
# Ragged rows (and tiny ones), row/column broadcasts, 1-D, a KL reduction with ragged output pieces, outputs
# smaller than one block.
TAIL_PATTERNS = {
    "ragged": ((517, 1), (517, 1001), (517, 1001)),
    "ragged_row": ((300, 1003), (300, 1003), (1003,)),
    "ragged_col": ((3000, 1), (3000, 77), (3000, 77)),
    "tiny_rows": ((20000, 1), (20000, 3), (20000, 3)),
    "flat": ((100003,), (100003,), (100003,)),
    "column_split": ((8, 40001), (8, 40001), (40001,)),
    "tiny": ((5,), (5,), (5,)),
}
KL_TAIL_PATTERNS = {
    "kl_rows": ((9000, 13), (9000, 1), (9000, 13)),
    "kl_cols": ((900, 1003), (1, 1003), (900, 1003)),
    "kl_tiny": ((3, 4000), (3, 1), (3, 4000)),
}


def _onto(op: str, patterns: dict) -> dict:
    """KL's reduction patterns (target broadcast onto self's shape) for an op that reduces onto `reduced_onto`:
    KlDivTarget's trade self and target."""
    if OPS[op].reduced_onto == "self":
        return dict(patterns)
    return {name: (g, t, s) for name, (g, s, t) in patterns.items()}


def _tail_cases():
    for soc in BLOCK_SOCS:
        for op in [o for o in OPS if runs_on(o, soc)]:  # KlDivTarget: not on 310P/910
            pats = dict(TAIL_PATTERNS)
            if OPS[op].reduced_onto:  # KL: target reduced onto self (KlDivTarget: the other way round)
                pats = {**{k: v for k, v in pats.items() if k in ("ragged", "tiny_rows", "tiny")},
                        **_onto(op, KL_TAIL_PATTERNS)}
            for name, shapes in pats.items():
                if not shapes_accepted(op, *shapes):
                    continue  # aclnn refuses the pattern (BCEWithLogits: target must be self's shape)
                for dtypes in (("float32",) * 4, ("float16",) * 4):
                    yield soc, op, name, shapes, dtypes


TAIL_CASES = list(_tail_cases())


@pytest.mark.parametrize("soc,op,name,shapes,dtypes", TAIL_CASES,
                         ids=[f"{s}-{o}-{n}-{d[0]}" for s, o, n, _, d in TAIL_CASES])
def test_block_writes_no_scalar_gm_and_no_shared_lines(soc, op, name, shapes, dtypes) -> None:
    call, r = _run(op, shapes, dtypes, soc)
    want = getattr(golden, op)(*_arrays(shapes, dtypes[:3]), reduction="none", soc=soc, compute="float32")
    np.testing.assert_allclose(r.output.astype(np.float64), np.asarray(want, np.float64), rtol=2e-3, atol=1e-6)
    rep = r.report
    spec = OPS[op]
    out = rep.buffers[len(spec.kernel_inputs)]
    size = r.output.itemsize
    block = 32 // size
    out_bytes = r.output.nbytes
    # Every output byte written; on 910 an output under one block is its whole block, read-modify-written once by
    # one core (the bytes past the output written back unchanged: the twin runner checks them).
    npu_arch = get_soc(soc).arch.npu_arch
    assert out.write_distinct == output_bytes_written(npu_arch, out_bytes)
    scalar_writes = [c.scalar_gm_writes for c in rep.cores]
    if out_bytes < 32:
        # One core writes it (310P: SetValue, flushed, twin checks the line; 910: the block by DMA, no scalar GM
        # write); KL's two-stage reduction runs more cores, whose stage-1 partials go to the workspace only.
        assert sum(1 for c in out.by_core if c.write) == 1
        if npu_arch == 1001:
            assert not any(scalar_writes), scalar_writes
            assert out.write_bytes == out.read_bytes == 32 and out.read_distinct == 32
    else:
        assert not any(scalar_writes), scalar_writes
    # Cross-core: each core's bytes are its own (the twin's overlap check also raises on any shared byte); lines
    # scalar-written by one core are touched by no other writer (twin's line check raises otherwise).
    ranges = [out.by_core[c].write_ranges for c in range(rep.block_dim)]
    owned = sorted((b, e, c) for c, rs in enumerate(ranges) for b, e in rs)
    for (b0, e0, c0), (b1, e1, c1) in zip(owned, owned[1:]):
        assert e0 <= b1 or c0 == c1, (c0, c1, e0, b1)
    # Rewrites: exactly the back-shifted overlap of each ragged piece, (block - n % block) % block elements.
    plan = r.plan.fields
    E = plan["dims"][plan["rank"] - 1]
    for c in range(rep.block_dim):
        acc = out.by_core[c]
        rewritten = acc.write - sum(e - b for b, e in acc.write_ranges)
        if out_bytes < 32:
            assert rewritten == 0
            continue
        if plan["splitMode"] == 2 or plan["splitMode"] == 1:  # KL output pieces / column chunks: bounded
            assert 0 <= rewritten < 32 * max(1, acc.write // 32 + 1)
            continue
        (b, e), = acc.write_ranges  # flat: one GM-contiguous run per core
        expect = block_rewrites(b // size, e // size, E, block) * size
        assert rewritten == expect, (c, rewritten, expect)


@pytest.mark.parametrize("auto_sync", [False, True])
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend950PR_9579", "Ascend310P3", "Ascend910A"])
def test_kernels_run_with_and_without_auto_sync(soc: str, op: str, auto_sync: bool) -> None:
    """Strict manual synchronisation (auto_sync=False) as well as bisheng's auto-sync: ragged and tiny rows (the
    scalar row paths), a scalar gradOutput (the scalar stage) and a column operand (scalar GM reads)."""
    if not runs_on(op, soc):
        pytest.skip(f"aclnn refuses every dtype of {op} on {soc}")
    pats = {"ragged_row": ((60, 1003), (60, 1003), (1003,)), "tiny_rows": ((3000, 1), (3000, 3), (3000, 3)),
            "grad_scalar": ((), (60, 131), (60, 131))}
    if OPS[op].reduced_onto:  # KL: target reduced onto self (KlDivTarget: the other way round)
        pats.update(_onto(op, KL_TAIL_PATTERNS))
    for name, shapes in pats.items():
        if not shapes_accepted(op, *shapes):
            continue  # aclnn refuses the pattern (BCEWithLogits: target must be self's shape)
        for dtypes in (("float32",) * 4, ("float16",) * 4):
            call, r = _run(op, shapes, dtypes, soc, auto_sync=auto_sync)
            out = r.report.buffers[len(OPS[op].kernel_inputs)]
            assert out.write_distinct == output_bytes_written(get_soc(soc).arch.npu_arch, r.output.nbytes), name
            want = getattr(golden, op)(*_arrays(shapes, dtypes[:3]), reduction="none", soc=soc, compute="float32")
            np.testing.assert_allclose(r.output.astype(np.float64), np.asarray(want, np.float64), rtol=2e-3,
                                       atol=1e-6, err_msg=name)


def test_output_allocation_as_aclrtmalloc_and_padding_checked() -> None:
    """The twin runner's output buffer is what aclrtMalloc gives (ALIGN_UP(n, 32) + 32 bytes, 64-byte aligned; CANN
    aclrtMalloc 约束说明), so 910's read-modify-write of an output's last block stays in bounds; a changed byte past
    the output is a fault."""
    from lossgrad.runners.twin import PADDING, check_padding, device_allocation
    from lossgrad.twin import KernelFault

    for n, size in ((0, 32), (4, 64), (20, 64), (32, 64), (33, 96)):
        buf = device_allocation(n)
        assert buf.nbytes == size and buf.ctypes.data % 64 == 0
        assert (buf[n:] == PADDING).all()
        check_padding(buf, n)  # untouched: fine
        buf[:n] = 0
        check_padding(buf, n)  # the output itself may change
        buf[n + (size - n) // 2] ^= 1
        with pytest.raises(KernelFault, match="past its"):
            check_padding(buf, n)
