"""Kernel rendering: deterministic, one source per op valid for every architecture, warnings-clean C++17."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lossgrad import codegen
from lossgrad.dtypes import DType
from lossgrad.registry import OPS
from lossgrad.socs import ARCHS, SOCS
from lossgrad.twin.build import CXX, INCLUDE_DIR, arch_defines

ARCH_SOC = {a: next(s for s in SOCS.values() if s.arch.npu_arch == a) for a in ARCHS}


def test_rendering_is_deterministic() -> None:
    # Across processes with different hash seeds (set and dict orders of strings differ between them).
    import hashlib
    import os
    import sys
    script = ("import hashlib; from lossgrad import codegen; from lossgrad.dtypes import DType; "
              "from lossgrad.registry import OPS; d = {r: DType.FLOAT16 for r in ('grad', 'self', 'target', 'out')}; "
              "print(hashlib.sha256(''.join(codegen.render_kernel(o, d) + codegen.render_kernel(o) "
              "for o in OPS).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONHASHSEED": seed},
                              capture_output=True, text=True, check=True).stdout.strip() for seed in ("1", "2")}
    here = hashlib.sha256("".join(codegen.render_kernel(o, {r: DType.FLOAT16 for r in ("grad", "self", "target",
                                                                                      "out")})
                                  + codegen.render_kernel(o) for o in OPS).encode()).hexdigest()
    assert digests == {here}


def test_entry_signature_follows_the_registry() -> None:
    for op in OPS.values():
        src = codegen.render_kernel(op)
        params = ", ".join(f"GM_ADDR {io.proto}" for io in op.kernel_inputs)
        assert f'extern "C" __global__ __aicore__ void {op.entry_name}({params}, GM_ADDR {op.kernel_output}, ' \
               f"GM_ADDR workspace, GM_ADDR tiling)" in src
        for io in op.kernel_inputs:
            assert f"DTYPE_{io.proto.upper()}" in src


def test_tiling_header_is_the_declared_struct(tmp_path: Path) -> None:
    path = codegen.write_kernel(tmp_path, "mse_loss_backward")
    header = (path.parent / codegen.TILING_HEADER).read_text()
    assert "struct LossGradTilingData {" in header and "static_assert(sizeof(LossGradTilingData)" in header


def _combos(npu_arch: int):
    dts = [DType.FLOAT32, DType.FLOAT16] + ([DType.BFLOAT16] if ARCHS[npu_arch].bf16_io else [])
    for d in dts:
        yield {"grad": d, "self": d, "target": d, "out": d}
    yield {"grad": DType.FLOAT16, "self": DType.FLOAT32, "target": DType.FLOAT16, "out": DType.FLOAT32}


@pytest.mark.parametrize("npu_arch", sorted(ARCHS))
@pytest.mark.parametrize("op", list(OPS))
def test_package_source_compiles_warnings_clean(op: str, npu_arch: int, tmp_path: Path) -> None:
    """The package form (CANN's DTYPE_ macros) for each dtype combination, with -Werror against the twin."""
    path = codegen.write_kernel(tmp_path, op)
    spec = OPS[op]
    protos = {io.role: io.proto for io in spec.kernel_inputs}
    protos["out"] = spec.kernel_output
    defines = arch_defines(ARCH_SOC[npu_arch])
    for combo in map(spec.absent_as_self, _combos(npu_arch)):  # an optional input: self's dtype, as the OpDef
        macros = [f"-DDTYPE_{protos[r].upper()}={combo[r].cpp}" for r in protos]
        cmd = [CXX, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE_DIR}",
               f"-I{tmp_path}", *[f"-D{k}={v}" for k, v in defines.items()], *macros, str(path)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]


def test_concurrent_writers_of_one_file_never_collide(tmp_path: Path) -> None:
    # verify renders from a thread pool; every thread writes the shared tiling header into the same directory.
    from concurrent.futures import ThreadPoolExecutor
    target = tmp_path / "shared.h"
    texts = [f"// version {i % 2}\n" * 2000 for i in range(64)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(lambda t: codegen._write(target, t), texts))
    assert target.read_text() in set(texts)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.h"]  # no temp file left behind


def test_tiling_keys_are_the_keys_the_kernel_branches_on() -> None:
    import re
    for op in OPS:
        branched = {int(k) for k in re.findall(r"LOSSGRAD_KEY_IS\(\s*(\d+)\s*\)", codegen.render_kernel(op))}
        assert set(codegen.tiling_keys(op)) == branched, op


def test_rewriting_identical_sources_keeps_their_mtime(tmp_path: Path) -> None:
    import os
    path = codegen.write_kernel(tmp_path, "mse_loss_backward")
    os.utime(path, (1, 1))
    codegen.write_kernel(tmp_path, "mse_loss_backward")
    assert path.stat().st_mtime == 1  # CMake sees no change, so nothing is recompiled
