"""Compare, Compares (and CompareScalar), Select, and the CMPMASK register forms: bitmask layout (bit i of byte i/8,
LSB first), NaN (false except NE), all SELMODEs including mode-0 reuse, level 0, per architecture and dtype."""
import numpy as np
import pytest
from lossgrad.twin import KernelFault

from _twin_api import Call, cases, dt, sample, scalar_bits
from _twin_expect import assert_same, f64

CMP = ("LT", "GT", "EQ", "LE", "GE", "NE")
SEL = ("VSEL_CMPMASK_SPR", "VSEL_TENSOR_SCALAR_MODE", "VSEL_TENSOR_TENSOR_MODE")


def _cond(a, b, mode: str) -> np.ndarray:
    x, y = (f64(a), f64(b)) if a.dtype.kind not in "iu" else (a.astype(np.int64), b.astype(np.int64))
    with np.errstate(invalid="ignore"):
        return {"LT": x < y, "GT": x > y, "EQ": x == y, "LE": x <= y, "GE": x >= y, "NE": x != y}[mode]


def _bits(cond: np.ndarray) -> np.ndarray:
    return np.packbits(cond, bitorder="little")


def _cmp_data(d, n, rng):
    a = sample(d, n, rng, lo=-5 if d.kind != "u" else 0, hi=5)
    b = sample(d, n, rng, lo=-5 if d.kind != "u" else 0, hi=5)
    if d.kind == "f" or d.itemsize == 2 and d.kind not in "iu":
        a[:4] = np.array([np.nan, 1.0, np.nan, -0.0]).astype(d)
        b[:4] = np.array([1.0, np.nan, np.nan, 0.0]).astype(d)
    return a, b


def _arch_cmp_modes(arch, t):
    return ("EQ",) if (arch == 2201 and t == "i32") else CMP


@pytest.mark.parametrize("arch,op,t", cases("CMP"))
def test_compare(arch, op, t):
    d = dt(t)
    n = 2 * 256 // d.itemsize  # two repeats
    a, b = _cmp_data(d, n, np.random.default_rng(2))
    for m in _arch_cmp_modes(arch, t):
        got = Call("CMP", t, count=n, mode=CMP.index(m), a=a, b=b, out_bytes=64).run(arch)[:n // 8]
        assert_same(got, _bits(_cond(a, b, m)), f"Compare<{t}> {m} arch {arch}")


def test_compare_bit_layout_is_lsb_first():
    a = np.zeros(64, np.float32)
    a[[0, 9, 63]] = 1.0
    got = Call("CMP", "f32", count=64, mode=CMP.index("GT"), a=a, b=np.zeros(64, np.float32), out_bytes=32).run(2201)
    assert got[:8].tolist() == [0b1, 0b10, 0, 0, 0, 0, 0, 0b10000000]


def test_compare_int32_only_eq_on_2201():
    a = np.arange(64, dtype=np.int32)
    with pytest.raises(KernelFault, match="CMPMODE::LT on int32_t") as e:
        Call("CMP", "i32", count=64, mode=0, a=a, b=a, out_bytes=32).run(2201)
    assert e.value.api == "Compare"


@pytest.mark.parametrize("arch,op,t", cases("CMPS"))
def test_compares(arch, op, t):
    d = dt(t)
    n = 256 // d.itemsize
    a, _ = _cmp_data(d, n, np.random.default_rng(4))
    s = np.array([1]).astype(d)
    for m in _arch_cmp_modes(arch, t):
        for name in ("CMPS", "CMPSCALAR"):
            got = Call(name, t, count=n, mode=CMP.index(m), a=a, scalar=scalar_bits(s[0], d),
                       out_bytes=32).run(arch)[:n // 8]
            assert_same(got, _bits(_cond(a, np.repeat(s, n), m)), f"{name}<{t}> {m} arch {arch}")


def _select_cases():
    out = []
    for arch, _, t in cases("SEL"):
        modes = (0,) if arch == 1001 else (0, 1, 2)
        for mode in modes:
            for u in ("u8", "u16", "u32", "u64") if t in ("f16", "f32") else ("u8",):
                out.append((arch, t, mode, u))
    return out


@pytest.mark.parametrize("arch,t,mode,u", _select_cases())
def test_select(arch, t, mode, u):
    d = dt(t)
    lanes = 256 // d.itemsize
    n = 2 * lanes + 5  # count is unrestricted for Select: 3 repeats, the last partial
    rng = np.random.default_rng(5)
    a = sample(d, n, rng, lo=0, hi=50)
    b = sample(d, n, rng, lo=60, hi=100)
    bits = rng.integers(0, 256, 3 * lanes // 8 + 32, dtype=np.uint8)
    sc = np.array([77]).astype(d)
    op = "SELS" if mode == 1 else "SEL"
    got = Call(op, t, t1=u, count=n, mode=mode, a=a, b=b, c=bits, scalar=scalar_bits(sc[0], d),
               out_bytes=n * d.itemsize).run_as(arch, d, n)
    flat = np.unpackbits(bits, bitorder="little").astype(bool)
    idx = np.arange(n)
    sel = flat[idx % lanes] if mode == 0 else flat[idx]  # mode 0 reuses the first 256/sizeof(T) bits
    want = np.where(sel, a, np.repeat(sc, n) if mode == 1 else b).astype(d)
    assert_same(got, want, f"Select<{t},{u}> mode {mode} arch {arch}")


def test_select_mode2_on_1001_is_a_runtime_fault():
    a = np.ones(64, np.float32)
    with pytest.raises(KernelFault, match="VSEL_TENSOR_TENSOR_MODE is not supported on NpuArch 1001") as e:
        Call("SEL", "f32", t1="u8", count=64, mode=2, a=a, b=a, c=np.zeros(32, np.uint8), out_bytes=256).run(1001)
    assert e.value.api == "Select" and e.value.core == 0


@pytest.mark.parametrize("arch", [2201, 3510, 2002, 1001])
def test_level0_compare_and_compares(arch):
    """Level 0: two repeats with src repeat stride 16 blocks (every other 256 bytes); the dst bitmask is packed."""
    rng = np.random.default_rng(8)
    a = rng.uniform(-1, 1, 256).astype(np.float32)
    b = rng.uniform(-1, 1, 256).astype(np.float32)
    idx = np.concatenate([np.arange(64), np.arange(128, 192)])
    for kind, mask in (("count", (64, 0)), ("bits", ((1 << 64) - 1, 0))):
        got = Call("CMP", "f32", mode=CMP.index("LT"), a=a, b=b, out_bytes=32, mask=kind, mask_lo=mask[0],
                   repeat=2, strides=(1, 1, 1, 8, 16, 16)).run(arch)[:16]
        assert_same(got, _bits(a[idx] < b[idx]), f"level-0 Compare {kind}")
    if arch != 1001:
        got = Call("CMPS", "f32", mode=CMP.index("GE"), a=a, scalar=scalar_bits(0.25, np.float32), out_bytes=32,
                   mask="count", mask_lo=64, repeat=2, strides=(1, 1, 0, 8, 16, 0)).run(arch)[:16]
        assert_same(got, _bits(a[idx] >= 0.25), "level-0 Compares")


def test_level0_compare_partial_mask_faults():
    a = np.ones(64, np.float32)
    with pytest.raises(KernelFault, match="partial mask") as e:
        Call("CMP", "f32", mode=0, a=a, b=a, out_bytes=32, mask="count", mask_lo=32, repeat=1).run(2201)
    assert e.value.api == "Compare"


@pytest.mark.parametrize("arch,mode", [(a, m) for a in (2201, 3510, 2002, 1001)
                                       for m in ((0,) if a == 1001 else (0, 1, 2))])
def test_level0_select(arch, mode):
    """Level-0 Select: mask filters lanes (masked-off dst lanes keep their value); mode 0 reuses the first bits."""
    rng = np.random.default_rng(6)
    a = rng.uniform(0, 1, 192).astype(np.float32)
    b = rng.uniform(2, 3, 192).astype(np.float32)
    bits = rng.integers(0, 256, 64, dtype=np.uint8)
    out = np.full(192, -1.0, np.float32)
    op = "SELS" if mode == 1 else "SEL"
    got = Call(op, "f32", t1="u8", mode=mode, a=a, b=b, c=bits, out=out, scalar=scalar_bits(9.0, np.float32),
               mask="count", mask_lo=50, repeat=3).run_as(arch, np.float32, 192)
    flat = np.unpackbits(bits, bitorder="little").astype(bool)
    want = out.copy()
    for r in range(3):
        for i in range(50):
            k = r * 64 + i
            bit = flat[i] if mode == 0 else flat[k]
            want[k] = a[k] if bit else (9.0 if mode == 1 else b[k])
    assert_same(got, want, f"level-0 Select mode {mode}")


@pytest.mark.parametrize("arch", [2201, 3510, 2002])
def test_cmpmask_register(arch):
    """Compare into CMPMASK then GetCmpMask; Select<T, VSEL_CMPMASK_SPR> from the register; SetCmpMask."""
    rng = np.random.default_rng(12)
    a = rng.uniform(-1, 1, 128).astype(np.float16)
    b = rng.uniform(-1, 1, 128).astype(np.float16)
    got = Call("CMP_REG", "f16", mode=CMP.index("LE"), a=a, b=b, out_bytes=32, mask="count", mask_lo=128).run(arch)
    assert_same(got[:16], _bits(a <= b), "GetCmpMask")
    out = np.zeros(256, np.float16)
    lo, hi = (1 << 64) - 1, (1 << 10) - 1  # lanes 0..73
    got = Call("SEL_REG", "f16", mode=CMP.index("GT"), a=a, b=b, out=out, mask_lo=lo, mask_hi=hi,
               repeat=1).run_as(arch, np.float16, 256)
    want = out.copy()
    want[:74] = np.where(a[:74] > b[:74], a[:74], b[:74])
    assert_same(got, want, "Select from CMPMASK")
    bits = rng.integers(0, 256, 32, dtype=np.uint8)
    got = Call("SETCMP_SEL", "f16", a=a, b=b, c=bits, out=out, mask_lo=lo, mask_hi=hi,
               repeat=1).run_as(arch, np.float16, 256)
    sel = np.unpackbits(bits[:16], bitorder="little").astype(bool)
    want[:74] = np.where(sel[:74], a[:74], b[:74])
    assert_same(got, want, "SetCmpMask + Select")
