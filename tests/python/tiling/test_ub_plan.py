"""The UB buffer plan's bank placement (lossgrad.tiling.ub_plan): the input slices and phased buffers land on the
bank phases the plan states, the pads are whole 32-byte blocks, and only parts with a bank layout pay for them."""
from __future__ import annotations

import pytest

from lossgrad.registry import OPS, op_part
from lossgrad.socs import ARCHS
from lossgrad.tiling import TILE_ALIGN, ub_plan


@pytest.mark.parametrize("grad_scalar", (False, True))
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_slices_start_on_their_phase_and_the_buffer_ends_on_a_cycle(arch: int, op: str, grad_scalar: bool):
    skew = ub_plan.bank_skew(arch)
    bufs = ub_plan.buffers(OPS[op], grad_scalar, arch)
    slices = [b for b in bufs if b.kind == "in"]
    for tile in (TILE_ALIGN, 7 * TILE_ALIGN):
        at = 0
        for b in slices:
            at += b.lead
            if skew:
                assert at % (2 * skew) == b.phase * skew, b.name
            at += tile * 2 + (b.pad - b.lead)  # 16-bit slices: the narrowest tile-scaled size
        if skew:
            assert at % (2 * skew) == 0
    for b in bufs:
        assert b.pad % 32 == 0 and b.lead <= b.pad, b.name
        if not skew:
            assert b.pad == 0, b.name


def test_binary_operands_are_on_opposite_phases():
    # The pairs the compute bodies read together (ops/<op>/compute.h; each op's own in its test_facts.UB_APART):
    # Sub/Compare(self, target), Mul(result, grad),
    # L1's Sub/Mul(result, scratch), smooth L1's Sub(result, linear branch), KL's Add(accumulator, result), and each
    # Select's mask against the tensor it selects into.
    pairs = [("selfIn_", "targetIn_"), ("selfWork_", "targetWork_"), ("gradIn_", "outQ_"), ("gradWork_", "result_"),
             ("gradIn_", "targetIn_"), ("maskA_", "outQ_"), ("maskA_", "result_")]
    for name, op in OPS.items():
        phase = {b.name: b.phase for b in ub_plan.buffers(op, False, 2201)}
        for a, b in pairs + list(getattr(op_part(op, "test_facts"), "UB_APART", ())):  # the op's own pairs
            if a in phase and b in phase:
                assert phase[a] is not None and phase[a] != phase[b], (name, a, b)


def test_phased_buffers_precede_the_masks_and_the_rest():
    for op in OPS.values():
        kinds = [(b.phase is None, b.ctype == "uint8_t") for b in ub_plan.buffers(op, False, 2201)
                 if b.kind == "tbuf"]
        assert kinds == sorted(kinds), op.name


def test_fixed_bytes_count_the_enabled_buffers_pads():
    bufs = ub_plan.buffers(OPS["mse_loss_backward"], False, 2201)
    base = ub_plan.fixed_bytes(bufs, 0)
    assert base == ub_plan.SCALAR_STAGE_BYTES + 2 * 512  # the two inQ_ buffers' slice leads
    assert ub_plan.fixed_bytes(bufs, 1 << ub_plan.MASK_RESULT) == base + 256
    assert ub_plan.fixed_bytes(ub_plan.buffers(OPS["mse_loss_backward"], False, 2002), 0xFFFF) == \
        ub_plan.SCALAR_STAGE_BYTES
