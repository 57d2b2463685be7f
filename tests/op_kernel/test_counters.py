"""The kernels' memory behaviour, proven from the twin's counters at 10^6+ elements, for every op and broadcast
pattern: every input element a core needs is read by that core exactly once (the independent footprint model in
footprint.py), each output byte is written exactly once, all cores of the part are busy and balanced, tiles are as
large as the UB plan allows, and the plan fills the UB budget."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lossgrad.registry import OPS, get_op, runs_on
from lossgrad.runners.twin import run_twin
from lossgrad.tiling import data as td
from lossgrad.tiling.ub_plan import blocks_only
from lossgrad.validation import shapes_accepted, validate

from footprint import block_rewrites, input_footprints, written_elements

# Every pattern on an A2 part; the architectures with other copy paths (950; 310P and 910 without DataCopyPad) on
# a subset that covers each operand mode and split.
SOCS = {"Ascend910B1": None, "Ascend950PR_9579": ("same", "row_column_split", "column"),
        "Ascend310P3": ("same", "grad_scalar", "row_flat", "column", "general", "ragged", "ragged_row"),
        "Ascend910A": ("same", "grad_scalar", "row_column_split", "column", "batch", "ragged", "ragged_row")}

# name -> (grad, self, target); every pattern has >= 10^6 output (or iteration) elements.
PATTERNS = {
    "same": ((1 << 20,), (1 << 20,), (1 << 20,)),
    "grad_scalar": ((), (1000, 1024), (1000, 1024)),
    "row_column_split": ((64, 65536), (64, 65536), (65536,)),
    "row_flat": ((1024, 1024), (1024, 1024), (1024,)),
    "column": ((1024, 1), (1024, 1024), (1024, 1024)),
    "batch": ((), (16, 256, 256), (1, 256, 256)),
    "general": ((4, 1, 512), (1, 512, 512), (4, 512, 512)),
}
# Rows off the 32-byte block, where 310P/910 write the tails by back-shifted whole blocks (RowWriter): on those
# parts only (DataCopyPad writes exact rows elsewhere).
RAGGED = {
    "ragged": ((1000, 1), (1000, 1001), (1000, 1001)),
    "ragged_row": ((999, 1003), (999, 1003), (1003,)),
}
KL_REDUCE = {
    "kl_sum_rows": ((), (1024, 1), (1024, 1024)),
    "kl_sum_cols": ((), (1, 4096), (256, 4096)),
}


def _cases():
    for soc, names in SOCS.items():
        for op in [o for o in OPS if runs_on(o, soc)]:  # KlDivTarget: not on 310P/910
            for name, shapes in {**PATTERNS, **RAGGED}.items():
                if (names is None and name in PATTERNS) or (names is not None and name in names):
                    if not shapes_accepted(op, *shapes):
                        continue  # aclnn refuses the pattern (BCE: inputs into self; BCEWithLogits: target = self)
                    yield soc, op, name, shapes
                    if name == "same" and len(OPS[op].inputs) > 3:  # the optional inputs given: each read once
                        yield soc, op, "same_optional", shapes + (shapes[1],) * len(OPS[op].absent_optional)
        for name, shapes in KL_REDUCE.items():
            if names is None or name in names:
                yield soc, "kl_div_backward", name, shapes


def _run(op: str, shapes, soc: str = "Ascend910B1", dtype=np.float32):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]
    call = validate(op, *arrays, *get_op(op).absent_optional[len(arrays) - 3:], "none", soc=soc)
    return call, run_twin(call)


@pytest.mark.parametrize("soc,op,name,shapes", list(_cases()), ids=[f"{s}-{o}-{n}" for s, o, n, _ in _cases()])
def test_memory_traffic(soc: str, op: str, name: str, shapes) -> None:
    call, r = _run(op, shapes, soc)
    rep, plan = r.report, r.plan
    spec = OPS[op]
    out = rep.buffers[len(spec.kernel_inputs)]
    out_bytes = r.output.nbytes
    size = r.output.itemsize
    # Each output byte written, by exactly one core (the twin refuses cross-core overlaps), and once: where the
    # kernel writes whole blocks only (310P/910), ragged pieces rewrite exactly the back-shifted overlap of their
    # last block (footprint.block_rewrites, from each core's flat output range).
    assert out.write_distinct == out_bytes
    rewrites = 0
    if blocks_only(call.soc.arch.npu_arch) and plan.fields["splitMode"] != td.SPLIT_KL_REDUCE:
        # flat: one contiguous run per core; column: one range per row (or one run when a core has every column)
        E = plan.fields["dims"][plan.fields["rank"] - 1]
        for core in range(rep.block_dim):
            ranges = out.by_core[core].write_ranges
            assert len(ranges) == 1 or plan.fields["splitMode"] == td.SPLIT_COLUMN
            rewrites += sum(block_rewrites(b // size, e // size, E, 32 // size) for b, e in ranges) * size
    assert out.write_bytes == out_bytes + rewrites
    if name.startswith("ragged"):
        assert rewrites > 0 or not blocks_only(call.soc.arch.npu_arch)
    # Inputs: per core, each needed element read exactly once (footprint of the outputs it wrote).
    # the inputs the call has, with their kernel positions; an absent optional input is never read (a null address)
    roles = [(i, io.role) for i, io in enumerate(spec.kernel_inputs) if io.role in r.inputs]
    for i, io in enumerate(spec.kernel_inputs):
        if io.role not in r.inputs:
            assert rep.buffers[i].read_bytes == 0, f"{io.role} is absent, yet read"
    reads_self = op != "kl_div_backward"  # KL's gradient never depends on self's values (only on its shape)
    if plan.fields["segments"] > 1:
        # The two-stage sum: the cores sharing an output unit each read one segment of its reduced range, and one of
        # them writes it. So the check is of the whole launch: every needed element read by one core, once, except
        # that an input broadcast over the reduced dims (no segment of them) is read once per segment.
        need = input_footprints(written_elements(((0, out_bytes),), size), tuple(call.out_shape),
                                tuple(call.iter_shape), {role: r.inputs[role].shape for _, role in roles})
        it = tuple(call.iter_shape)
        out_al = (1,) * (len(it) - len(call.out_shape)) + tuple(call.out_shape)
        reduced = [d for d in range(len(it)) if out_al[d] == 1 and it[d] > 1]
        for i, role in roles:
            shape = tuple(r.inputs[role].shape)
            shape = (1,) * (len(it) - len(shape)) + shape
            per_segment = not any(shape[d] > 1 for d in reduced)
            buf = rep.buffers[i]
            expected = need[role] * r.inputs[role].itemsize if (reads_self or role != "self") else 0
            assert buf.read_distinct == expected, (role, buf.read_distinct, expected)
            assert buf.read_bytes == expected * (plan.fields["segments"] if per_segment else 1), (role, buf.read_bytes)
        return
    for core in range(rep.block_dim):
        mine = written_elements(out.by_core[core].write_ranges, r.output.itemsize)
        assert not out.by_core[core].write_ranges_truncated
        need = input_footprints(mine, tuple(call.out_shape), tuple(call.iter_shape),
                                {role: r.inputs[role].shape for _, role in roles})
        for i, role in roles:
            acc = rep.buffers[i].by_core[core]
            expected = need[role] * r.inputs[role].itemsize if (reads_self or role != "self") else 0
            assert acc.read == acc.read_distinct, f"core {core} re-read {role}"
            assert acc.read == expected, f"core {core} {role}: read {acc.read}, needed {expected}"
    # No input is read beyond its own size times the cores that need it; same-shape inputs exactly once.
    for i, role in roles:
        size = r.inputs[role].nbytes
        total = rep.buffers[i].read_bytes
        if role == "self" and not reads_self:
            assert total == 0  # KL never reads self's values
        elif r.inputs[role].shape == tuple(call.out_shape):
            assert total == size
        else:
            assert total <= rep.block_dim * size
    # All cores busy, balanced within one balance unit (a 32-byte block; per row in column split; written bytes, so
    # the rewrites are taken off).
    assert rep.block_dim == call.soc.cores
    written = [sum(e - b for b, e in out.by_core[c].write_ranges) for c in range(rep.block_dim)]
    assert min(written) > 0
    unit_bytes = int(plan.fields["unitElems"]) * r.output.itemsize
    rows = math.prod(plan.fields["dims"][: int(plan.fields["rank"]) - 1])
    allowed = unit_bytes * (rows if plan.fields["splitMode"] == td.SPLIT_COLUMN else 1)
    if plan.fields["splitMode"] != td.SPLIT_KL_REDUCE:
        assert max(written) - min(written) <= allowed
    # The buffer plan fills at least 75% of the UB a kernel may use, on every core.
    assert all(c.ub_peak_bytes >= 0.75 * rep.ub_kernel_bytes for c in rep.cores)
    assert all(c.ub_peak_bytes <= rep.ub_kernel_bytes for c in rep.cores)
    # ... and the kernel allocates exactly what the tiling's buffer plan sized the tile by.
    assert all(c.ub_peak_bytes == plan.ub_bytes for c in rep.cores), (plan.ub_bytes, rep.cores[0].ub_peak_bytes)


@pytest.mark.parametrize("op", list(OPS))
def test_tiles_at_least_16k_where_ub_allows(op: str) -> None:
    """float32 same-shape inputs: the per-transfer size of the full tiles reaches 16 KB."""
    call, r = _run(op, PATTERNS["same"])
    tile_bytes = int(r.plan.fields["tileLen"]) * 4
    assert tile_bytes >= 16 * 1024
    copies = [c for c in r.report.cores if c.copy_count]
    assert max(c.copy_bytes_max for c in copies) == tile_bytes
