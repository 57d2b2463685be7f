"""Level-0 ("high-dimensional split") forms: continuous and bit masks, counter mode, masks set outside the API
(isSetMask=false), block and repeat strides, masked-off lanes keeping dst, the cross-repeat accumulate exception,
and the level-0 rules (dstBlkStride 0, partial overlap, mask range)."""
import numpy as np
import pytest
from lossgrad.twin import KernelFault

from _twin_api import Call, scalar_bits
from _twin_expect import assert_same, round_float

ARCHS = (2201, 3510, 2002, 1001)


def lane_index(esize: int, blk: int, rep: int, r: int, i: int) -> int:
    """Element index (from the operand start) of lane i of repeat r: the twin's level-0 address model."""
    per = 32 // esize
    return (r * rep + (i // per) * blk) * per + i % per


def model(dst, srcs, f, strides, active, repeats):
    """Sequential level-0 reference: per repeat, all active lanes read, then written."""
    dst = dst.copy()
    es = dst.dtype.itemsize
    lanes = 256 // es
    (db, sb0, sb1, dr, sr0, sr1) = strides
    sblk, srep = (sb0, sb1), (sr0, sr1)
    for r in range(repeats):
        vals = {}
        for i in range(lanes):
            if active(r, i):
                ins = [s[lane_index(es, sblk[k], srep[k], r, i)] for k, s in enumerate(srcs)]
                vals[lane_index(es, db, dr, r, i)] = f(*ins)
        for k, v in vals.items():
            dst[k] = v
    return dst


def _add(d):
    return lambda a, b: round_float(np.array([float(a) + float(b)]), d)[0]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kind", ["count", "bits", "ext_bits"])
def test_binary_masks_and_strides(arch, kind):
    """Add<half> with a partial mask, dst/src0 block stride 2, repeat strides 16/16/8, 3 repeats."""
    rng = np.random.default_rng(1)
    n = 128 * 8
    a = rng.uniform(-5, 5, n).astype(np.float16)
    b = rng.uniform(-5, 5, n).astype(np.float16)
    out = np.full(n, 9.0, np.float16)
    strides = (2, 2, 1, 16, 16, 8)
    if kind == "count":
        lo, hi, active = 100, 0, (lambda r, i: i < 100)
    else:
        lo, hi = 0xF0F0_0000_FFFF_0001, 0x8000_0000_0000_00FF
        active = lambda r, i: bool(((hi << 64 | lo) >> i) & 1)
    got = Call("ADD", "f16", a=a, b=b, out=out, mask=kind, mask_lo=lo, mask_hi=hi, repeat=3,
               strides=strides).run_as(arch, np.float16, n)
    want = model(out, [a, b], _add(np.float16), strides, active, 3)
    assert_same(got, want, f"level-0 Add {kind}")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kind", ["counter", "ext_counter"])
def test_counter_mode(arch, kind):
    """Counter mode: the mask is the total element count (130), repeatTime is ignored."""
    n = 512
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    got = Call("ADDS", "f32", a=a, out=out, scalar=scalar_bits(0.5, np.float32), mask=kind, mask_lo=130,
               repeat=1).run_as(arch, np.float32, n)
    want = out.copy()
    want[:130] = a[:130] + 0.5
    assert_same(got, want, f"Adds {kind}")


@pytest.mark.parametrize("arch", ARCHS)
def test_unary_duplicate_logic_level0(arch):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 4, 256).astype(np.float32)
    out = np.full(256, -1.0, np.float32)
    strides = (1, 2, 0, 8, 16, 0)  # src block stride 2 (every other block), dst contiguous
    got = Call("SQRT", "f32", a=x, out=out, mask="count", mask_lo=64, repeat=2, strides=strides).run_as(
        arch, np.float32, 256)
    want = model(out, [x], lambda v: np.float32(np.sqrt(np.float64(v))), strides, lambda r, i: True, 2)
    assert_same(got, want, "level-0 Sqrt")
    got = Call("DUP", "f32", out=out, scalar=scalar_bits(2.5, np.float32), mask="count", mask_lo=10, repeat=4,
               strides=(2, 0, 0, 4, 0, 0)).run_as(arch, np.float32, 256)
    want = model(out, [], lambda: np.float32(2.5), (2, 0, 0, 4, 0, 0), lambda r, i: i < 10, 4)
    assert_same(got, want, "level-0 Duplicate")
    u = rng.integers(0, 65535, 256, dtype=np.uint16)
    got = Call("NOT", "u16", a=u, out=np.zeros(256, np.uint16), mask="count", mask_lo=128, repeat=2).run_as(
        arch, np.uint16, 256)
    assert_same(got, ~u, "level-0 Not")


@pytest.mark.parametrize("arch", ARCHS)
def test_accumulate_exception(arch):
    """Add with dst == src1 and repeat stride 0 accumulates the repeats of src0 into dst, in order."""
    a = np.random.default_rng(4).uniform(-1, 1, 64 * 4).astype(np.float32)
    acc = np.random.default_rng(5).uniform(-1, 1, 64).astype(np.float32)
    got = Call("ADD", "f32", a=a, out=acc, inplace=2, mask="count", mask_lo=64, repeat=4,
               strides=(1, 1, 1, 0, 8, 0)).run_as(arch, np.float32, 64)
    want = acc.copy()
    for r in range(4):
        want = want + a[r * 64:(r + 1) * 64]
    assert_same(got, want, "accumulate")


@pytest.mark.parametrize("arch", [2201, 1001])
def test_cross_repeat_overlap_outside_the_exception_faults(arch):
    a = np.ones(256, np.float32)
    with pytest.raises(KernelFault, match="cross-repeat overlap is not allowed") as e:  # Div has no exception
        Call("DIV", "f32", a=a, out=np.ones(64, np.float32), inplace=2, mask="count", mask_lo=64, repeat=2,
             strides=(1, 1, 1, 0, 8, 0)).run(arch)
    assert e.value.api == "Div" and e.value.core == 0


@pytest.mark.parametrize("case,match", [
    (dict(strides=(0, 1, 1, 8, 8, 8)), "dstBlkStride 0 is illegal"),
    (dict(mask_lo=0), r"continuous mask 0 is outside \[1, 64\]"),
    (dict(mask="bits", mask_lo=0), "mask is 0: no lane enabled"),
    (dict(mask_lo=65), r"continuous mask 65 is outside \[1, 64\]"),
    (dict(mask="bits", mask_lo=1, mask_hi=1), "mask high word 0x1 must be 0"),
    (dict(inplace=1, strides=(1, 1, 1, 8, 4, 8), repeat=2), "src0 and dst overlap without coinciding"),
    (dict(repeat=8), "past the end of the tensor"),
])
def test_level0_rules(case, match):
    kw = dict(a=np.ones(512, np.float32), b=np.ones(512, np.float32), out=np.ones(448, np.float32), mask="count",
              mask_lo=64, repeat=1)
    kw.update(case)
    with pytest.raises(KernelFault, match=match) as e:
        Call("ADD", "f32", **kw).run(2201)
    assert e.value.api == "Add" and e.value.core == 0
