"""Cast: every legal (src, dst, RoundMode) of every architecture (VEC/类型转换/Cast.md, ascendc_api.md §2.8) on
edge values (ties, negative ties, overflow, NaN/Inf, subnormals, integer saturation), the run-time fault for a
mode the pair lacks, level-0 Cast geometry, and the scalar Cast<T, U, roundMode> helper."""
import numpy as np
import pytest
from lossgrad.twin import KernelFault

from _twin_api import Call, dt
from _twin_expect import BF16, MODES, assert_same, f64, round_float, round_integral, to_int, saturated

M5 = "rint floor ceil round trunc"


def _table(spec: str) -> dict:
    out = {}
    for line in spec.strip().splitlines():
        pair, modes = line.split(":")
        s, d = pair.split()
        out[(s, d)] = modes.split()
    return out


LEGAL = {
    2201: _table(f"""
        i8 f16: none
        u8 f16: none
        i16 f16: {M5} none
        i16 f32: none
        f16 i8: {M5} none
        f16 u8: {M5} none
        f16 i16: {M5}
        f16 i32: {M5}
        f16 f32: none
        bf16 i32: {M5}
        bf16 f32: none
        i32 i16: none
        i32 i64: none
        i32 f32: {M5} none
        f32 i16: {M5}
        f32 i32: {M5}
        f32 i64: {M5}
        f32 f16: {M5} odd none
        f32 bf16: {M5}
        f32 f32: {M5}
        i64 i32: none
        i64 f32: {M5}"""),
    3510: _table(f"""
        i8 f16: none
        i8 i32: none
        u8 f16: none
        i16 f16: {M5}
        i16 f32: none
        i16 i32: none
        f16 i8: {M5}
        f16 u8: {M5}
        f16 i16: {M5}
        f16 i32: {M5}
        f16 bf16: {M5}
        f16 f32: none
        bf16 f16: {M5}
        bf16 i32: {M5}
        bf16 f32: none
        i32 i16: none
        i32 i64: none
        i32 f32: {M5}
        f32 i16: {M5}
        f32 i32: {M5}
        f32 i64: {M5}
        f32 f16: {M5} odd none
        f32 bf16: {M5}
        f32 f32: {M5}
        i64 i32: none
        i64 f32: {M5}"""),
    2002: _table(f"""
        i8 f16: none
        u8 f16: none
        i16 f16: none
        f16 i8: floor ceil round trunc none
        f16 u8: floor ceil round trunc none
        f16 i16: rint
        f16 i32: {M5}
        f16 f32: none
        i32 i16: none
        i32 f32: none
        f32 f16: odd none
        f32 i64: {M5}"""),
    1001: _table(f"""
        i8 f16: none
        u8 f16: none
        i16 f16: none
        f16 i8: floor ceil round trunc none
        f16 u8: floor ceil round trunc none
        f16 i32: {M5}
        f16 f32: none
        i32 f32: none
        f32 f16: odd none
        f32 i64: {M5}"""),
}

FLOAT_EDGES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 3.7, -3.7, 0.0, -0.0, np.nan, np.inf, -np.inf,
               1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 1 + 2**-8 + 2**-12, 2049.0, 65504.0, 65519.0, 65520.0,
               70000.0, -70000.0, 1e30, -1e30, 3e9, -3e9, 2**31, -(2**31), 127.5, -128.5, 255.5, 300.0, -1.0,
               2**-20, -(2**-20), 2**-25, 3 * 2**-26, 1e-9, 1e-40, -1e-40, 3.4e38, 1.0000001, 33000.7, -33000.5]
INT_EDGES = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 2048, 2049, 2051, 4097, 32767, -32768, 65535, 70000,
             2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1, -(2**31), 2**53 + 1, 2**60 + 2**36 + 1,
             -(2**60 + 2**36), 2**62 + 2**38, 2**63 - 1, -(2**63)]


def _src_values(s: str) -> np.ndarray:
    d = dt(s)
    if d.kind == "f" or d == BF16:
        with np.errstate(over="ignore"):
            return np.array(FLOAT_EDGES, np.float64).astype(d)
    info = np.iinfo(d)
    return np.array([v for v in INT_EDGES if info.min <= v <= info.max], d)


def _int_to_float(v: int, d: np.dtype, mode: str):
    """Exact rounding of a Python int to the float format d (for int64 sources beyond 2^53)."""
    p = {2: 11 if d == np.float16 else 8, 4: 24}[d.itemsize]
    mag = abs(v)
    if mag < 2 ** 53:
        return round_float(np.array([float(v)]), d, mode)[0]
    shift = mag.bit_length() - p
    lo, rem, q = (mag >> shift) << shift, mag & ((1 << shift) - 1), 1 << shift
    neg = v < 0
    up = {"rint": rem > q // 2 or (rem == q // 2 and (lo >> shift) & 1), "none": None, "round": rem >= q // 2,
          "trunc": False, "floor": neg and rem > 0, "ceil": (not neg) and rem > 0,
          "odd": rem > 0 and not (lo >> shift) & 1}
    u = up["rint"] if mode == "none" else up[mode]
    r = float(lo + (q if u else 0))
    return np.array([-r if neg else r]).astype(d)[0]


def _expect(x: np.ndarray, dst: np.dtype, mode: str) -> np.ndarray:
    m = "rint" if mode == "none" else mode
    if dst.kind in "iu":
        if x.dtype.kind in "iu":
            info = np.iinfo(dst)
            return np.clip(x.astype(np.int64), info.min, info.max).astype(dst)
        return to_int(f64(x), dst, m)
    if x.dtype == np.int64:
        return np.array([_int_to_float(int(v), dst, m) for v in x], dst)
    if x.dtype == dst:  # float -> float of the same type: round to an integral value
        return round_integral(f64(x), m).astype(dst)
    return round_float(f64(x), dst, m)


def _cases(level0: bool = False):
    out = []
    for arch, table in LEGAL.items():
        for (s, d), modes in table.items():
            for m in modes:
                out.append((arch, s, d, m))
    return out


@pytest.mark.parametrize("arch,s,d,mode", _cases())
def test_cast(arch, s, d, mode):
    x = _src_values(s)
    n = x.size
    dd = dt(d)
    got = Call("CAST", s, t1=d, count=n, mode=MODES.index(mode), a=x, out_bytes=n * dd.itemsize).run_as(arch, dd, n)
    assert_same(got, saturated(arch, _expect(x, dd, mode)), f"Cast {s}->{d} {mode} arch {arch}")


@pytest.mark.parametrize("arch", LEGAL)
def test_cast_illegal_mode_is_a_runtime_fault(arch):
    table = LEGAL[arch]
    for (s, d), modes in table.items():
        bad = [m for m in MODES if m not in modes]
        if not bad:
            continue
        x = _src_values(s)[:8]
        with pytest.raises(KernelFault) as e:
            Call("CAST", s, t1=d, count=8, mode=MODES.index(bad[0]), a=x, out_bytes=64).run(arch)
        assert e.value.api == "Cast" and e.value.core == 0
        assert f"round mode CAST_{bad[0].upper()} is not legal" in str(e.value)


def test_float_to_bf16_cast_none_fails_at_run_time():
    x = np.ones(16, np.float32)
    with pytest.raises(KernelFault, match=r"CAST_NONE is not legal for float -> bfloat16_t on NpuArch 2201"):
        Call("CAST", "f32", t1="bf16", count=16, mode=0, a=x, out_bytes=64).run(2201)


@pytest.mark.parametrize("arch", [2201, 3510, 2002, 1001])
def test_cast_level0_half_to_float_strides(arch):
    """Level-0 Cast: 64 lanes per repeat (the larger type), src repeat stride 4 blocks, dst 8; masked lanes keep dst."""
    x = (np.arange(256) * 0.5 - 30).astype(np.float16)
    out = np.full(256, -7.0, np.float32)
    mask_lo = (1 << 40) - 1  # lanes 0..39 of each repeat
    got = Call("CAST", "f16", t1="f32", mode=0, a=x, out=out, mask="bits", mask_lo=mask_lo, repeat=3,
               strides=(1, 1, 0, 8, 4, 0)).run_as(arch, np.float32, 256)
    want = out.copy()
    for r in range(3):
        want[r * 64:r * 64 + 40] = x[r * 64:r * 64 + 40].astype(np.float32)
    assert_same(got, want, "level-0 Cast")


@pytest.mark.parametrize("arch", [2201, 2002])
def test_in_place_cast_between_sizes_faults(arch):
    """half -> float over the same UB bytes would overwrite unread source: the twin refuses it."""
    with pytest.raises(KernelFault, match="cannot run in place") as e:
        Call("CAST", "f16", t1="f32", count=64, mode=0, out=np.ones(128, np.float16), inplace=True).run(arch)
    assert e.value.api == "Cast"


@pytest.mark.parametrize("arch", [2201, 3510, 2002])
def test_scalar_cast_helper(arch):
    """Cast<float, half, CAST_ODD> and Cast<float, int32_t, mode> (run by the strictness kernel's helper case)."""
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.14159, 1e10, -1e10, 7.25, 65519.0, 1 + 2**-11,
                  1 + 3 * 2**-11, -(1 + 2**-11), 1e-6, 100.0], np.float32)
    n = x.size
    out = Call("SCALAR_CAST", "f32", count=n, a=x, out_bytes=n * 16 + n * 2).run(arch)
    ints = out[:n * 16].view(np.int32).reshape(n, 4)
    for k, mode in enumerate(("rint", "floor", "ceil", "round")):
        assert_same(ints[:, k], to_int(f64(x), np.int32, mode), f"scalar Cast float->int32 {mode}")
    assert_same(out[n * 16:n * 18].view(np.float16), round_float(f64(x), np.float16, "odd"), "scalar Cast odd")
    assert out[n * 16:].view(np.float16)[6] == np.float16(3.142578125)  # the documented example


def test_expectation_helper_agrees_with_numpy_rounding():
    """The independent rounding helper matches NumPy/ml_dtypes round-to-nearest-even where those are exact."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(4000) * 10.0 ** rng.integers(-9, 6, 4000), FLOAT_EDGES])
    with np.errstate(over="ignore"):
        assert_same(round_float(x, np.float16), x.astype(np.float16), "half")
        assert_same(round_float(x, np.float32), x.astype(np.float32), "float")
        x32 = x.astype(np.float32)
        assert_same(round_float(f64(x32), BF16), x32.astype(BF16), "bf16")
    assert round_integral(np.array([2.5, -2.5, 3.5, 0.49999999999999994]), "round").tolist() == [3, -3, 4, 0]
    assert round_integral(np.array([2.5, -2.5, 3.5]), "rint").tolist() == [2, -2, 4]
