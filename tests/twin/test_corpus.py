"""Corpus of production-style kernels (tests/twin/corpus/): each op runs on every architecture and element type it
claims, against an independent NumPy expectation in float64 with a tolerance for the op (the kernels compute in
float32; transcendental chains and the final rounding to half/bfloat16 set the tolerance). One compile per
(source, arch, DTYPE_X); the op is chosen by the tiling key. They rely on auto-sync (run_kernel's default), as the
production kernels do: no manual synchronisation around scalar accesses."""
from __future__ import annotations

import os
import struct
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from lossgrad.socs import get_soc
from lossgrad.twin import run_kernel
from lossgrad.twin.build import build

from _twin_common import SOCS
from _twin_expect import BF16, F16, F32

CORPUS = Path(__file__).resolve().parent / "corpus"

@pytest.fixture(scope="module", autouse=True)
def _prebuilt() -> None:
    """Compile every (source, arch, DTYPE_X) of the corpus up front in parallel threads (cached afterwards)."""
    jobs = [("elementwise.cpp", "corpus_elementwise", arch, {"DTYPE_X": d, "DTYPE_Y": d})
            for arch, dtypes in EW_DTYPES.items() for d in dtypes]
    jobs += [("rows.cpp", "corpus_rows", arch, {"DTYPE_X": "float"}) for arch in ROWS_ARCHS]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for f in [pool.submit(build, CORPUS / src, name, 5, get_soc(SOCS[arch]), (), defines)
                  for src, name, arch, defines in jobs]:
            f.result()


# ---- elementwise.cpp ---------------------------------------------------------------------------------------------
EW_OPS = ("RELU LEAKY_RELU SIGMOID SOFTPLUS GELU_TANH HARDSWISH SILU ABS SIGN CLAMP AXPB ELU RSQRT_EPS L1 MSE "
          "SMOOTH_L1 HUBER BCE SOFT_MARGIN KL MSE_GRAD L1_GRAD DIV_SCALE").split()
EW_KEY = {name: i for i, name in enumerate(EW_OPS, start=1)}
NOT_ON_1001 = {"LEAKY_RELU", "HARDSWISH", "SIGN", "CLAMP", "ELU", "L1_GRAD"}  # Maxs/Mins/LeakyRelu/Sign
EW_DTYPES = {2201: ("float", "half", "bfloat16_t"), 3510: ("float", "bfloat16_t"), 2002: ("float", "half"),
             1001: ("float", "half")}
NP_DTYPE = {"float": F32, "half": F16, "bfloat16_t": BF16}
ALPHA = {"LEAKY_RELU": 0.1, "CLAMP": -0.5, "AXPB": 1.75, "ELU": 0.8, "RSQRT_EPS": 0.25, "SMOOTH_L1": 0.6,
         "HUBER": 0.7, "MSE_GRAD": 2.0 / 3000, "L1_GRAD": 1.0 / 3000, "DIV_SCALE": 0.5}
BETA = {"CLAMP": 0.75, "AXPB": -0.3}
BINARY = set(EW_OPS[EW_OPS.index("L1"):])


def ew_expect(op: str, x: np.ndarray, t: np.ndarray) -> np.ndarray:
    a, b = ALPHA.get(op, 0.0), BETA.get(op, 0.0)
    a, b = float(np.float32(a)), float(np.float32(b))
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    d = x - t
    return {
        "RELU": lambda: np.maximum(x, 0.0),
        "LEAKY_RELU": lambda: np.where(x < 0, x * a, x),
        "SIGMOID": lambda: sig(x),
        "SOFTPLUS": lambda: np.log1p(np.exp(x)),
        "GELU_TANH": lambda: x * sig(1.5957691 * (x + 0.044715 * x ** 3)),
        "HARDSWISH": lambda: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
        "SILU": lambda: x * sig(x),
        "ABS": lambda: np.abs(x),
        "SIGN": lambda: np.sign(x),
        "CLAMP": lambda: np.minimum(np.maximum(x, a), b),
        "AXPB": lambda: a * x + b,
        "ELU": lambda: np.maximum(x, 0.0) + a * (np.exp(np.minimum(x, 0.0)) - 1.0),
        "RSQRT_EPS": lambda: 1.0 / np.sqrt(x * x + a),
        "L1": lambda: np.abs(d),
        "MSE": lambda: d * d,
        "SMOOTH_L1": lambda: np.where(np.abs(d) < a, 0.5 * d * d / a, np.abs(d) - 0.5 * a),
        "HUBER": lambda: np.where(np.abs(d) < a, 0.5 * d * d, a * (np.abs(d) - 0.5 * a)),
        "BCE": lambda: -(t * np.log(x) + (1.0 - t) * np.log(1.0 - x)),
        "SOFT_MARGIN": lambda: np.log1p(np.exp(-t * x)),
        "KL": lambda: t * (np.log(t) - x),
        "MSE_GRAD": lambda: a * d,
        "L1_GRAD": lambda: a * np.sign(d),
        "DIV_SCALE": lambda: a * x / t,
    }[op]()


def ew_inputs(op: str, n: int, dtype: np.dtype, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if op == "BCE":
        x, t = rng.uniform(0.02, 0.98, n), rng.uniform(0.0, 1.0, n)
    elif op == "KL":
        x, t = rng.uniform(-4.0, 0.0, n), rng.uniform(0.01, 1.0, n)
    elif op == "SOFT_MARGIN":
        x, t = rng.uniform(-3.0, 3.0, n), rng.choice([-1.0, 1.0], n)
    elif op == "DIV_SCALE":
        x, t = rng.uniform(-4.0, 4.0, n), rng.uniform(0.5, 3.0, n) * rng.choice([-1.0, 1.0], n)
    else:
        x, t = rng.uniform(-5.0, 5.0, n), rng.uniform(-5.0, 5.0, n)
    if op == "SIGN":
        x[:4] = [0.0, -0.0, 2.0, -3.0]
    return x.astype(dtype), t.astype(dtype)


# Tolerance (rtol, atol) by output type: float32 compute of a few steps, then the output rounding.
TOL = {"float": (2e-5, 2e-6), "half": (2e-3, 2e-3), "bfloat16_t": (1.6e-2, 1.6e-2)}


def ew_cases():
    for arch, dtypes in EW_DTYPES.items():
        for dtype in dtypes:
            for op in EW_OPS:
                if arch == 1001 and op in NOT_ON_1001:
                    continue
                yield pytest.param(arch, dtype, op, id=f"{arch}-{dtype}-{op}")


def _tiling(total: int, tile: int, alpha: float, beta: float) -> np.ndarray:
    return np.frombuffer(struct.pack("<IIff", total, tile, alpha, beta), np.uint8).copy()


@pytest.mark.parametrize("arch,dtype,op", list(ew_cases()))
def test_elementwise(arch: int, dtype: str, op: str) -> None:
    npd = NP_DTYPE[dtype]
    # DataCopyPad archs get a ragged length (tails inside tiles and cores); the others whole 32-byte blocks.
    n = 3001 if arch in (2201, 3510) else 3008
    rng = np.random.default_rng(EW_KEY[op] * 7919 + arch)
    x, t = ew_inputs(op, n, npd, rng)
    y = np.zeros(n, npd)
    tiling = _tiling(n, 512, ALPHA.get(op, 0.0), BETA.get(op, 0.0))
    run_kernel(CORPUS / "elementwise.cpp", "corpus_elementwise", 3, [x, t, y, np.zeros(32, np.uint8), tiling],
               soc=SOCS[arch], defines={"DTYPE_X": dtype, "DTYPE_Y": dtype}, tiling_key=EW_KEY[op])
    # The kernel sees the inputs as stored (rounded to dtype) and computes in float32.
    want = ew_expect(op, x.astype(np.float64), t.astype(np.float64))
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=rtol, atol=atol, err_msg=f"{op} {dtype} {arch}")


# ---- rows.cpp ----------------------------------------------------------------------------------------------------
ROWS_OPS = ("ROW_SUM", "ROW_MEAN", "ROW_VAR", "RMS_NORM", "LAYER_NORM", "ROW_MAX", "SOFTMAX")
ROWS_KEY = {name: i for i, name in enumerate(ROWS_OPS, start=1)}
ROWS_ARCHS = (2201, 3510, 2002)  # ReduceSum has no float on 1001
REDUCING = {"ROW_SUM", "ROW_MEAN", "ROW_VAR", "ROW_MAX"}


def rows_expect(op: str, x: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return {
        "ROW_SUM": lambda: x.sum(axis=1),
        "ROW_MEAN": lambda: mean[:, 0],
        "ROW_VAR": lambda: var[:, 0],
        "ROW_MAX": lambda: x.max(axis=1),
        "RMS_NORM": lambda: x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * gamma,
        "LAYER_NORM": lambda: (x - mean) / np.sqrt(var + eps) * gamma,
        "SOFTMAX": lambda: np.exp(x - x.max(axis=1, keepdims=True)) / np.exp(x - x.max(axis=1, keepdims=True)).sum(
            axis=1, keepdims=True),
    }[op]()


@pytest.mark.parametrize("arch", ROWS_ARCHS)
@pytest.mark.parametrize("op", ROWS_OPS)
def test_rows(arch: int, op: str) -> None:
    rows, cols, cores, eps = 37, 200, 3, 1e-5
    per_core = -(-(-(-rows // cores)) // 8) * 8
    rng = np.random.default_rng(ROWS_KEY[op] * 104729 + arch)
    x = (rng.uniform(-2.0, 2.0, (rows, cols)) + 0.5).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    y = np.zeros(cores * per_core if op in REDUCING else rows * cols, np.float32)
    tiling = np.frombuffer(struct.pack("<IIIf", rows, cols, per_core, eps), np.uint8).copy()
    run_kernel(CORPUS / "rows.cpp", "corpus_rows", cores, [x, gamma, y, np.zeros(32, np.uint8), tiling],
               soc=SOCS[arch], defines={"DTYPE_X": "float"}, tiling_key=ROWS_KEY[op])
    want = rows_expect(op, x.astype(np.float64), gamma.astype(np.float64), float(np.float32(eps)))
    if op in REDUCING:
        got = np.concatenate([y[c * per_core:c * per_core + max(0, min(per_core, rows - c * per_core))]
                              for c in range(cores)])
    else:
        got = y.reshape(rows, cols)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-5, atol=2e-5, err_msg=f"{op} {arch}")


def test_rows_rely_on_auto_sync() -> None:
    """The corpus reads ReduceSum's result with GetValue and no manual sync: without auto-sync that is a race."""
    from lossgrad.twin import KernelFault
    rows, cols, per_core = 8, 64, 8
    x = np.ones((rows, cols), np.float32)
    tiling = np.frombuffer(struct.pack("<IIIf", rows, cols, per_core, 1e-5), np.uint8).copy()
    args = [x, np.ones(cols, np.float32), np.zeros(per_core, np.float32), np.zeros(32, np.uint8), tiling]
    with pytest.raises(KernelFault, match="races"):
        run_kernel(CORPUS / "rows.cpp", "corpus_rows", 1, args, soc=SOCS[2201], defines={"DTYPE_X": "float"},
                   tiling_key=ROWS_KEY["ROW_SUM"], auto_sync=False)
    run_kernel(CORPUS / "rows.cpp", "corpus_rows", 1, args, soc=SOCS[2201], defines={"DTYPE_X": "float"},
               tiling_key=ROWS_KEY["ROW_SUM"])
    assert args[2].tolist() == [64.0] * 8
