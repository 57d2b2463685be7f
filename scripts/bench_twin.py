#!/usr/bin/env python3
"""Benchmark the twin (not a test): compile time per kernel (cold, in a private cache, and cached), the cost a
cached launch adds on top of the kernel's own run time, and mul_add throughput at 10^7 fp32 elements on one core and
on 48 cores.

    .venv/bin/python scripts/bench_twin.py [--n 10000000] [--repeats 30]

Targets: cached launch overhead < 50 ms; 10^7 elements on one core < 2 s. Runs in well under a minute.
"""
from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from lossgrad.socs import get_soc  # noqa: E402
from lossgrad.twin import run_kernel  # noqa: E402
from lossgrad.twin.build import build  # noqa: E402

KERNELS = ROOT / "tests" / "twin" / "kernels"
ARCH_SOCS = {2201: "Ascend910B1", 3510: "Ascend950PR_9579", 2002: "Ascend310P3", 1001: "Ascend910A"}
# (source, entry, GM arguments, archs to compile cold)
COMPILE = (("mul_add.cpp", "mul_add", 4, (2201, 3510, 2002, 1001)), ("vec_api.cpp", "vec_api", 5, (2201,)))
TILE = 4096


def mul_add_args(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    return [x, y, np.empty(n, np.float32), struct.pack("<QII", n, TILE, 0)]


def bench_compile(rows: list) -> None:
    old = os.environ.get("LOSSGRAD_CACHE")
    with tempfile.TemporaryDirectory(prefix="lossgrad-bench-") as cache:
        os.environ["LOSSGRAD_CACHE"] = cache  # a cold, private cache
        try:
            for src, name, nargs, archs in COMPILE:
                for arch in archs:
                    soc = get_soc(ARCH_SOCS[arch])
                    cold = build(KERNELS / src, name, nargs, soc)
                    t0 = time.perf_counter()
                    warm = build(KERNELS / src, name, nargs, soc)
                    cached = time.perf_counter() - t0
                    assert not cold.cached and warm.cached
                    rows.append((f"compile {src} ({arch})", f"cold {cold.seconds:6.2f} s",
                                 f"cached {cached * 1e3:6.1f} ms", ""))
        finally:
            if old is None:
                os.environ.pop("LOSSGRAD_CACHE", None)
            else:
                os.environ["LOSSGRAD_CACHE"] = old


def bench_launch(rows: list, repeats: int) -> None:
    args = mul_add_args(8)
    run_kernel(KERNELS / "mul_add.cpp", "mul_add", 1, args, soc="Ascend910B1")  # build and load once
    overhead, walls = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        rep = run_kernel(KERNELS / "mul_add.cpp", "mul_add", 1, args, soc="Ascend910B1")
        wall = time.perf_counter() - t0
        walls.append(wall)
        overhead.append(wall - rep.run_seconds)
    med = statistics.median(overhead)
    rows.append(("cached launch overhead (8 elements)", f"median {med * 1e3:6.2f} ms",
                 f"max {max(overhead) * 1e3:6.2f} ms", "ok (< 50 ms)" if med < 0.05 else "ABOVE TARGET"))


def bench_throughput(rows: list, n: int) -> None:
    args = mul_add_args(n)
    for arch in (2201, 2002):
        for cores in (1, 48):
            t0 = time.perf_counter()
            rep = run_kernel(KERNELS / "mul_add.cpp", "mul_add", cores, args, soc=ARCH_SOCS[arch])
            wall = time.perf_counter() - t0
            assert np.array_equal(args[2], args[0] * args[1] + args[0])
            verdict = "" if cores > 1 else ("ok (< 2 s)" if rep.run_seconds < 2 else "ABOVE TARGET")
            rows.append((f"mul_add {n:.0e} fp32, {cores} core(s) ({arch})", f"run {rep.run_seconds:6.3f} s",
                         f"{n / rep.run_seconds / 1e6:7.1f} Melem/s (wall {wall:5.2f} s)", verdict))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000, help="mul_add elements for the throughput rows")
    ap.add_argument("--repeats", type=int, default=30, help="launches for the overhead median")
    a = ap.parse_args()
    rows: list = []
    t0 = time.perf_counter()
    bench_compile(rows)
    bench_launch(rows, a.repeats)
    bench_throughput(rows, a.n)
    w = max(len(r[0]) for r in rows)
    print(f"{'measurement':<{w}}  {'value':<16} {'detail':<40} target")
    for r in rows:
        print(f"{r[0]:<{w}}  {r[1]:<16} {r[2]:<40} {r[3]}")
    print(f"(benchmark took {time.perf_counter() - t0:.1f} s; g++ {os.environ.get('LOSSGRAD_CXX', 'g++')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
