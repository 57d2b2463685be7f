"""Every dtype mix x product line x op, against validation and against the kernel (issue 10, item 1).

Validation must accept exactly the mixes aclnn accepts whose kernel tensors (registry.kernel_dtypes: non-float inputs
cast to the promoted dtype, float inputs and the output as given) all have a dtype the part can move and cast
(registry.arch_dtypes); anything else is 161002 naming the dtype and the part, before anything compiles. The kernel
side is compiled against the twin: per op and architecture, one translation unit instantiates the kernel class for
every kernel-dtype mix validation accepts (every code path, i.e. every tiling-key variant) and must compile; and
per tensor, a bfloat16 tensor on an architecture without bfloat16 must not compile, so the rule is neither looser
nor stricter than the kernel. The compiles stop after semantic analysis (-fsyntax-only: the twin's dtype checks
are static_asserts at template instantiation), with the twin's flags, defines and headers, and their outcome is
cached by content under the kernel cache, like a twin build.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import itertools
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from lossgrad import codegen
from lossgrad.dtypes import KERNEL_DTYPES, DType
from lossgrad.errors import LossGradError
from lossgrad.registry import OPS, Check, OpSpec, Promotion, arch_dtypes
from lossgrad.socs import VERIFY_DEFAULT_SOCS, Soc, get_soc, product_lines
from lossgrad.validation import validate

twin_build = importlib.import_module("lossgrad.twin.build")

ROLES = ("grad", "self", "target", "out")
INPUT_DTYPES = (DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16, DType.INT32)  # int32: L1 promotes, the others refuse
OUT_DTYPES = (None, DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16)
LINE_SOC = {line: next(s for s in map(get_soc, VERIFY_DEFAULT_SOCS) if s.line == line) for line in product_lines()}
Mix = tuple[DType, ...]  # kernel dtypes of the op's roles (an absent optional input: self's), then out


def _without_kernel_check(op: OpSpec) -> OpSpec:
    return dataclasses.replace(op, checks=tuple(c for c in op.checks if c is not Check.KERNEL_DTYPES))


def _arrays(dts: tuple[DType, DType, DType]) -> list[np.ndarray]:
    return [np.ones((2, 3), d.np_dtype) for d in dts]


def _outcome(op: OpSpec, soc: Soc, ins: tuple[DType, DType, DType], out: DType | None):
    try:
        # optional inputs left out: the type parameter is then self's
        return validate(op, *_arrays(ins), *op.absent_optional, "mean", out_dtype=out, soc=soc)
    except LossGradError as exc:
        return exc


@lru_cache(maxsize=None)
def validation_table(op_name: str, line: str) -> dict[tuple, object]:
    op, soc = OPS[op_name], LINE_SOC[line]
    return {(ins, out): _outcome(op, soc, ins, out)
            for ins in itertools.product(INPUT_DTYPES, repeat=3) for out in OUT_DTYPES}


# -- the kernel side: syntax-only twin compiles, cached by content ------------------------------------------------

def _twin_digest() -> str:
    h = hashlib.sha256()
    h.update(subprocess.run([twin_build.CXX, "--version"], capture_output=True, text=True).stdout.encode())
    for d in (twin_build.INCLUDE_DIR, twin_build.RUNTIME_DIR):
        for p in sorted(x for x in d.rglob("*") if x.is_file() and x.suffix in (".h", ".hpp", ".inc")):
            h.update(str(p.relative_to(d)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def _instantiations(op: OpSpec, mixes: list[Mix]) -> str:
    """Every tiling-key variant's class for every mix: the same-shape class takes no KL_REDUCE argument."""
    cls = codegen._class_name(op)
    optional = any(i.optional for i in op.inputs)  # the classes then take the absent-input key bits too
    lines = []
    for mix in mixes:
        for v in codegen._variants(op):
            name = cls + ("SameShape" if v.same_shape else "")
            args = [*(d.cpp for d in mix), str(v.grad_scalar).lower()]
            args += [] if v.same_shape else [str(v.kl_reduce).lower()]
            args += [str(v.absent)] if optional else []
            lines.append(f"template class lossgrad::{name}<{', '.join(args)}>;\n")
    return "".join(lines)


def compiles(op: OpSpec, soc: Soc, mixes: list[Mix]) -> tuple[bool, str]:
    """Whether the kernel class instantiates for every mix (all tiling-key variants) on the SoC's architecture."""
    kernel = codegen.render_kernel(op, dict(zip((*op.roles, "out"), mixes[0])))
    tu = f'#include "{op.entry_name}.cpp"\n' + _instantiations(op, mixes)
    macro = twin_build.arch_defines(soc)
    flags = [f for f in twin_build.CXXFLAGS if f != "-shared"] + ["-fsyntax-only"]
    key = hashlib.sha256(repr((_twin_digest(), kernel, codegen.tiling_header(), tu, sorted(macro.items()),
                               flags)).encode()).hexdigest()[:32]
    d = twin_build.cache_root() / "dtype-mix" / key
    verdict = d / "verdict.json"
    if verdict.exists():
        v = json.loads(verdict.read_text())
        return v["ok"], v["errors"]
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{op.entry_name}.cpp").write_text(kernel)
    (d / codegen.TILING_HEADER).write_text(codegen.tiling_header())
    (d / "mixes.cpp").write_text(tu)
    cmd = [twin_build.CXX, *flags, f"-I{twin_build.INCLUDE_DIR}", f"-I{twin_build.RUNTIME_DIR}", f"-I{d}",
           *[f"-D{k}={v}" for k, v in macro.items()], str(d / "mixes.cpp")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    errors = "\n".join(ln for ln in proc.stderr.splitlines() if "error" in ln)
    tmp = verdict.with_suffix(".tmp")
    tmp.write_text(json.dumps({"ok": proc.returncode == 0, "errors": errors}))
    tmp.replace(verdict)
    return proc.returncode == 0, errors


def _accepted_mixes(op_name: str, npu_arch: int) -> list[Mix]:
    mixes: dict[Mix, None] = {}
    for line, soc in LINE_SOC.items():
        if soc.arch.npu_arch == npu_arch:
            for result in validation_table(op_name, line).values():
                if not isinstance(result, LossGradError):
                    kd = OPS[op_name].absent_as_self(result.kernel_dtypes)
                    mixes[tuple(kd[r] for r in (*OPS[op_name].roles, "out"))] = None
    return list(mixes)


ARCH_SOC = {s.arch.npu_arch: s for s in LINE_SOC.values()}


@pytest.fixture(scope="module")
def accepted_compiles() -> dict[tuple[str, int], tuple[bool, str, int]]:
    jobs = [(name, arch) for name in OPS for arch in ARCH_SOC]
    with ThreadPoolExecutor(2) as pool:
        def one(job: tuple[str, int]) -> tuple[bool, str, int]:
            mixes = _accepted_mixes(*job)
            if not mixes:  # aclnn refuses every dtype on the arch (KlDivTarget on 310P/910): nothing to compile
                return True, "", 0
            return (*compiles(OPS[job[0]], ARCH_SOC[job[1]], mixes), len(mixes))
        return dict(zip(jobs, pool.map(one, jobs)))


# -- tests ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", product_lines())
@pytest.mark.parametrize("op_name", list(OPS))
def test_validation_refuses_exactly_what_the_part_cannot_run(op_name: str, line: str) -> None:
    op, soc = OPS[op_name], LINE_SOC[line]
    allowed = set(arch_dtypes(soc.arch.npu_arch))
    aclnn_only = _without_kernel_check(op)
    refused_by_rule = 0
    for (ins, out), result in validation_table(op_name, line).items():
        aclnn = _outcome(aclnn_only, soc, ins, out)
        if isinstance(aclnn, LossGradError):  # aclnn's own checks come first and are unchanged
            assert isinstance(result, LossGradError) and result.message == aclnn.message
            continue
        bad = [(r, d) for r, d in aclnn.kernel_dtypes.items() if d not in allowed]
        if not bad:
            assert not isinstance(result, LossGradError), (ins, out, result)
            assert set(result.kernel_dtypes.values()) <= allowed
            continue
        refused_by_rule += 1
        assert isinstance(result, LossGradError), (ins, out)
        role, dtype = bad[0]
        name = op.output_param if role == "out" else op.aclnn_params[("grad", "self", "target").index(role)]
        assert result.code == 161002
        for part in (name, dtype.label, soc.name, "cannot run"):
            assert part in result.message, (part, result.message)
    # Only L1 checks nothing but the promoted dtype, so only L1 lets a bfloat16 tensor through aclnn's checks on a
    # part without bfloat16 (the issue's example); the others refuse every such mix themselves.
    expected = op.name == "l1_loss_backward" and DType.BFLOAT16 not in allowed
    assert (refused_by_rule > 0) == expected, refused_by_rule


def test_the_issue_example_is_refused_before_anything_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    import ml_dtypes

    import lossgrad

    def no_build(*_: object, **__: object) -> None:
        raise AssertionError("compiled")
    monkeypatch.setattr(twin_build, "build", no_build)
    for soc in ("310P", "910"):
        with pytest.raises(LossGradError) as e:
            lossgrad.l1_loss_backward(np.ones(8, np.float32), np.ones(8, ml_dtypes.bfloat16), np.zeros(8, np.float32),
                                      soc=soc, backend="twin")
        assert e.value.code == 161002 and "self" in e.value.message and "bfloat16" in e.value.message


@pytest.mark.parametrize("npu_arch", sorted(ARCH_SOC))
@pytest.mark.parametrize("op_name", list(OPS))
def test_every_accepted_mix_compiles_for_the_kernel(op_name: str, npu_arch: int, accepted_compiles) -> None:
    ok, errors, count = accepted_compiles[(op_name, npu_arch)]
    # every mix of the part's dtypes: gradOutput, self, target and out freely (MSE: inputs of self's dtype)
    n = len(arch_dtypes(npu_arch)) if OPS[op_name].supported_dtypes(npu_arch) else 0  # 0: aclnn refuses all
    free = 3 if Check.OUT_TARGET_DTYPE in OPS[op_name].checks else 4  # out's dtype may have to be target's
    assert count == (n ** 2 if OPS[op_name].promotion is Promotion.SAME_AS_SELF else n ** free), count
    assert ok, f"{op_name} on NpuArch {npu_arch}: an accepted dtype mix does not compile:\n{errors[:3000]}"


@pytest.mark.parametrize("npu_arch", [a for a, s in ARCH_SOC.items() if DType.BFLOAT16 not in arch_dtypes(a)])
@pytest.mark.parametrize("role", ROLES)
def test_a_bf16_tensor_does_not_compile_where_validation_refuses_it(npu_arch: int, role: str) -> None:
    # the kernel really cannot take what the rule refuses: one bf16 tensor among float32 ones fails to compile
    mix = tuple(DType.BFLOAT16 if r == role else DType.FLOAT32 for r in ROLES)
    ok, errors = compiles(OPS["l1_loss_backward"], ARCH_SOC[npu_arch], [mix])
    assert not ok and ("bfloat16" in errors or "NpuArch" in errors or "architecture" in errors), errors[:2000]


def test_kernel_dtypes_cover_every_kernel_type() -> None:
    assert set(arch_dtypes(2201)) == set(KERNEL_DTYPES)
    assert set(arch_dtypes(2002)) == set(arch_dtypes(1001)) == {DType.FLOAT32, DType.FLOAT16}
