"""DataCopy with DataCopyParams (gaps in 32-byte blocks on both sides) and DataCopyPad (A2/A3, 950): padding with
isPad / SetPadValue, left and right padding, blockCount > 1, and the stride units per direction (GM side in bytes,
UB side in blocks)."""
import numpy as np
import pytest

from _twin_api import Call, scalar_bits
from _twin_expect import assert_same

PAD_ARCHS = (2201, 3510)


def _pad_in_expected(a, out, count, elems, left, right, src_gap_elems, dst_gap_blocks, pad):
    per_block = 32 // a.dtype.itemsize
    row_blocks = -(-(left + elems + right) // per_block)
    pitch = (row_blocks + dst_gap_blocks) * per_block
    want = out.copy()
    for r in range(count):
        src = r * (elems + src_gap_elems)
        row = np.concatenate([np.repeat(pad, left), a[src:src + elems], np.repeat(pad, right)])
        want[r * pitch:r * pitch + row.size] = row
    return want


@pytest.mark.parametrize("arch", PAD_ARCHS)
@pytest.mark.parametrize("how", ["isPad", "SetPadValue"])
def test_pad_in_float(arch, how):
    """3 rows of 5 floats, 12-byte GM gaps, left 1 / right 2 padding elements, a 1-block UB gap after each row."""
    a = np.arange(100, dtype=np.float32) + 0.5
    out = np.full(64, -1.0, np.float32)
    pad = np.float32(7.0 if how == "isPad" else 5.0)
    p = (3, 20, 12, 1, 1, 2, int(how == "isPad"), int(how == "SetPadValue"))
    call = Call("PAD_IN", "f32", a=a, out=out, p=p, scalar=scalar_bits(pad, np.float32))
    got = call.run_as(arch, np.float32)
    assert_same(got, _pad_in_expected(a, out, 3, 5, 1, 2, 3, 1, pad), f"DataCopyPad in ({how})")
    core = call.report.cores[0]
    assert core.data_copy_pad_calls == 1 and call.report.buffers[0].read_distinct >= 60


@pytest.mark.parametrize("arch", PAD_ARCHS)
def test_pad_in_half_no_dst_gap(arch):
    """11 halves per row, a 2-byte GM gap, left 2 / right 3, rows back to back in UB."""
    a = (np.arange(80) - 40).astype(np.float16)
    out = np.full(64, -1.0, np.float16)
    pad = np.float16(-0.0)
    p = (2, 22, 2, 0, 2, 3, 1, 0)
    got = Call("PAD_IN", "f16", a=a, out=out, p=p, scalar=scalar_bits(pad, np.float16)).run_as(arch, np.float16)
    assert_same(got, _pad_in_expected(a, out, 2, 11, 2, 3, 1, 0, pad), "DataCopyPad in (half)")


@pytest.mark.parametrize("arch", PAD_ARCHS)
def test_pad_out(arch):
    """UB -> GM: 3 rows of 20 bytes; UB rows 1 block + a 1-block gap apart, GM rows 8 bytes apart."""
    a = np.arange(64, dtype=np.float32)
    out = np.full(40, -3.0, np.float32)
    call = Call("PAD_OUT", "f32", a=a, out=out, p=(3, 20, 1, 8, 0, 0, 0, 0))
    got = call.run_as(arch, np.float32)
    want = out.copy()
    for r in range(3):
        want[7 * r:7 * r + 5] = a[16 * r:16 * r + 5]
    assert_same(got, want, "DataCopyPad out")
    buf = call.report.buffers[3]
    assert buf.write_bytes == buf.write_distinct == 60  # exactly blockLen bytes per row, nothing else


@pytest.mark.parametrize("arch", [2201, 3510, 2002, 1001])
def test_data_copy_params(arch):
    """DataCopyParams: lengths and gaps in 32-byte blocks on both sides (GM -> UB and UB -> GM)."""
    a = np.arange(256, dtype=np.int32)
    out = np.full(128, -1, np.int32)
    got = Call("COPY_IN", "i32", a=a, out=out, p=(4, 1, 1, 2, 0, 0, 0, 0)).run_as(arch, np.int32)
    want = out.copy()
    for r in range(4):  # GM rows 2 blocks (16 ints) apart, UB rows 3 blocks (24 ints) apart
        want[24 * r:24 * r + 8] = a[16 * r:16 * r + 8]
    assert_same(got, want, "DataCopy GM->UB with gaps")
    call = Call("COPY_OUT", "i32", a=a, out=out, p=(3, 2, 1, 1, 0, 0, 0, 0))
    got = call.run_as(arch, np.int32)
    want = out.copy()
    for r in range(3):  # UB rows 3 blocks apart, GM rows 3 blocks apart, 2 blocks each
        want[24 * r:24 * r + 16] = a[24 * r:24 * r + 16]
    assert_same(got, want, "DataCopy UB->GM with gaps")
    assert call.report.buffers[3].write_distinct == 3 * 64
