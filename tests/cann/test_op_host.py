"""The generated op_host sources: compiled warnings-clean (-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror)
against the fake CANN headers, then run through a driver that prints what the OpDef registered and what InferShape,
InferDataType and the TilingFunc adapter did. Every expectation comes from the registry and the SoC table."""
from __future__ import annotations

import json
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from lossgrad.cann import op_host
from lossgrad.dtypes import DType
from lossgrad.registry import OPS, OpSpec, OutputShape
from lossgrad.socs import ARCHS, SOCS
from lossgrad.tiling import cxx_tables
from lossgrad.tiling.cxx_tables import UB_RESERVED_BYTES

from _cann_support import FAKE_CANN, HERE, STANDIN, compile_cxx, needs_cxx

pytestmark = needs_cxx

SOC_VERSION = {"ASCEND910": 0, "ASCEND910B": 1, "ASCEND310P": 2, "ASCEND950_unknown": 77}


# The generation of CANN's SocVersion enum the fake platform header declares for each op's driver (see the header's
# comment): every generation is compiled by some driver, so the adapter builds against old and new headers alike.
SOC_ENUM_GENERATION = {name: min(i, 2) for i, name in enumerate(OPS)}  # the first three ops cover 0, 1 and 2


@lru_cache(maxsize=None)
def _driver(op_name: str, workdir: str) -> Path:
    soc_versions = SOC_ENUM_GENERATION[op_name]
    op = OPS[op_name]
    project = Path(workdir) / f"{op_name}-{soc_versions}" / "project"
    op_host.write_host_files(project, [op])
    (project / "op_kernel").mkdir(parents=True, exist_ok=True)
    (project / "op_kernel" / "lossgrad_tiling_data.h").write_text(
        (STANDIN / "op_kernel" / "lossgrad_tiling_data.h").read_text())
    exe = Path(workdir) / f"{op_name}-{soc_versions}" / "driver"
    compile_cxx([HERE / "cxx" / "op_host_driver.cpp", STANDIN / "tiling_core_standin.cpp"],
                include_dirs=[FAKE_CANN, STANDIN],
                defines=[f'LG_OP_SOURCE="{project / "op_host" / (op.entry_name + ".cpp")}"',
                         f"LG_CLASS={op.custom_op_type}", f"FAKE_CANN_SOC_VERSIONS={soc_versions}"], output=exe)
    return exe


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("op_host"))


def _run(exe: Path, *args: str) -> dict:
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _units(op: OpSpec) -> dict[str, tuple[tuple[DType, ...], ...]]:
    """compute unit -> the registered dtype columns (kernel inputs in kernel order, then the output)."""
    out: dict[str, tuple[tuple[DType, ...], ...]] = {}
    for soc in SOCS.values():
        if op.ours_support.get(soc.line):
            out[soc.compute_unit] = op.kernel_combos(soc.arch.npu_arch)
    return out


@pytest.mark.parametrize("op_name", list(OPS))
def test_opdef_matches_registry(workdir: str, op_name: str) -> None:
    op = OPS[op_name]
    d = _run(_driver(op_name, workdir), "2x3", "2x3", "2x3", "2x3", "0", "mean", "unset", "unset", "1")
    assert d["op_type"] == op.custom_op_type
    assert [p["name"] for p in d["inputs"]] == [io.proto for io in op.kernel_inputs]
    assert [p["name"] for p in d["outputs"]] == [op.kernel_output]
    assert d["has_infer_shape"] and d["has_infer_dtype"] and d["has_tiling"]
    # Attributes: reduction (OPTIONAL string "mean") then the op's attrs with the registry's kernel names/defaults.
    attrs = d["attrs"]
    assert (attrs[0]["name"], attrs[0]["kind"], attrs[0]["value"], attrs[0]["optional"]) == \
        ("reduction", "String", "mean", True)
    assert [(a["name"], a["kind"]) for a in attrs[1:]] == [(a.kernel_attr, a.kernel_type) for a in op.attrs]
    for got, spec in zip(attrs[1:], op.attrs):
        expected = ("true" if spec.default else "false") if spec.kernel_type == "Bool" else f"{spec.default:.6f}"
        assert got["value"] == expected
    # Every compute unit of the registry's product lines, each with its own dtype list.
    units = {u["unit"]: u for u in d["units"]}
    expected_units = _units(op)
    assert set(units) == set(expected_units)
    op_level = [p["dtypes"] for p in d["inputs"]] + [p["dtypes"] for p in d["outputs"]]
    for unit, combos in expected_units.items():
        u = units[unit]
        lists = [p["dtypes"] for p in u["inputs"]] + [p["dtypes"] for p in u["outputs"]] if u["inputs"] else op_level
        # column-aligned: column i of every input and the output is the i-th registered dtype mix
        assert list(zip(*lists)) == [tuple(d.acl_enum for d in c) for c in combos], unit
        assert u["extend"] == {"opFile.value": op.entry_name, "opInterface.value": op.entry_name}
        for p in u["inputs"]:
            assert p["auto_contiguous"] and p["formats"] == len(p["dtypes"])
        for p in u["outputs"]:
            assert not p["auto_contiguous"] and p["formats"] == len(p["dtypes"])
    for p, io in zip(d["inputs"] + d["outputs"], [*op.kernel_inputs, None]):
        assert p["formats"] == len(p["dtypes"])
        assert p["param"] == (1 if io is not None and op.input(io.role).optional else 2)  # OPTIONAL / REQUIRED
    # Inputs are AutoContiguous as in ops-nn's loss defs (aclnn makes a strided input contiguous); the output is not.
    assert all(p["auto_contiguous"] for p in d["inputs"]) and not d["outputs"][0]["auto_contiguous"]
    for unit in ("ascend310p", "ascend910"):  # no bf16 there; no unit at all where aclnn refuses every dtype
        assert unit not in units or not any(DType.BFLOAT16.acl_enum in p["dtypes"] for p in units[unit]["inputs"])


@pytest.mark.parametrize("op_name", list(OPS))
def test_infer_shape_and_dtype(workdir: str, op_name: str) -> None:
    op = OPS[op_name]
    roles = [io.role for io in op.kernel_inputs]
    shapes = {"grad": "4x1x3", "self": "1x5x3", "target": "3"}
    args = [shapes[r] for r in roles[:3]]  # the optional inputs after them are left out
    d = _run(_driver(op_name, workdir), *args, "4x5x3", "1", "sum", "0.5", "1", "1")
    if op.output_shape is OutputShape.BROADCAST_ALL:
        assert d["infer_shape"] == {"ok": True, "shape": [4, 5, 3]}
    elif op.reduced_onto == "target":
        assert d["infer_shape"] == {"ok": True, "shape": [3]}  # KlDivTarget: target's shape
    else:
        assert d["infer_shape"] == {"ok": True, "shape": [1, 5, 3]}  # KL: self's shape
    # Inputs f16, bf16, f16 (kernel order): promoted ops meet in f32, the others take self's dtype.
    mixed = d["infer_dtype_mixed"]
    assert mixed["ok"]
    given = [DType.FLOAT16, DType.BFLOAT16, DType.FLOAT16]
    if op.default_out_dtype == "promoted":
        assert mixed["dtype"] == DType.FLOAT32.acl_enum
    else:  # self's, or target's (BCEWithLogits)
        like = "target" if op.default_out_dtype == "target" else "self"
        assert mixed["dtype"] == given[roles.index(like)].acl_enum


@pytest.mark.parametrize("op_name", list(OPS))
def test_tiling_adapter_fills_inputs(workdir: str, op_name: str) -> None:
    op = OPS[op_name]
    d = _run(_driver(op_name, workdir), "2x3", "1x3", "3", "2x3", str(DType.BFLOAT16.acl_enum), "sum", "0.25", "1",
             str(SOC_VERSION["ASCEND310P"]))
    t = d["tiling"]
    assert t["ok"] and t["calls"] == 1
    assert t["op"] == list(OPS).index(op_name)
    assert t["reduction"] == 2
    assert [x["dims"] for x in t["inputs"]][:3] == [[2, 3], [1, 3], [3]]  # an optional input left out: absent
    assert all(x["dtype"] == DType.BFLOAT16.acl_enum for x in t["inputs"][:3]) and t["output"]["dims"] == [2, 3]
    # ub_bytes is the kernel UB budget of the arch (socs ARCHS[npu_arch].ub_kernel_bytes, as the Python tiling uses),
    # not the platform's physical UB size (196608 in the fake platform).
    assert t["core_num"] == 40 and t["npu_arch"] == 2002
    assert t["ub_bytes"] == ARCHS[2002].ub_kernel_bytes.value
    # The stand-in core's Result lands in the context; workspace = CANN's library workspace + the user's.
    assert (t["block_dim"], t["tiling_key"], t["workspace"], t["data_size"]) == (2, 7, 1000 + 64, 32)
    beta = next((a for a in op.attrs if a.kernel_type == "Float"), None)
    log_target = next((a for a in op.attrs if a.kernel_type == "Bool"), None)
    assert t["beta"] == (0.25 if beta else 1.0)
    assert t["log_target"] is bool(log_target)


@pytest.mark.parametrize("op_name", list(OPS))
def test_tiling_adapter_defaults_and_failures(workdir: str, op_name: str) -> None:
    op = OPS[op_name]
    exe = _driver(op_name, workdir)
    d = _run(exe, "5", "5", "5", "5", "0", "mean", "unset", "unset", str(SOC_VERSION["ASCEND950_unknown"]))
    t = d["tiling"]
    assert t["ok"] and t["reduction"] == 1 and t["npu_arch"] == 0
    # An architecture the adapter cannot name: the platform's UB minus the reserved scratch.
    assert t["ub_bytes"] == 196608 - UB_RESERVED_BYTES
    for a in op.attrs:  # unset attrs fall back to the registry defaults
        if a.kernel_type == "Float":
            assert t["beta"] == a.default
        else:
            assert t["log_target"] is a.default
    assert not _run(exe, "5", "5", "5", "5", "0", "avg", "unset", "unset", "1")["tiling"]["ok"]
    assert not _run(exe, "5", "5", "5", "5", "3", "sum", "unset", "unset", "1")["tiling"]["ok"]  # int32
    refused = _run(exe, "1x1x1x1x1x1x1", "5", "5", "5", "0", "sum", "unset", "unset", "1")["tiling"]
    assert not refused["ok"] and refused["calls"] == 1  # the core's refusal becomes GRAPH_FAILED


# SocVersion values of the current devkit header (asc-devkit include/utils/tiling/platform/platform_ascendc.h).
ASCEND950, ASCEND910_93 = 4, 11


@pytest.mark.parametrize("op_name", [next(n for n, g in SOC_ENUM_GENERATION.items() if g == k) for k in (1, 2)])
def test_950_takes_the_soc_tables_row(workdir: str, op_name: str) -> None:
    """A toolkit that declares the 950 (as ASCEND950, or as ASCEND910_95 in older headers) gets NpuArch 3510 and the
    SoC table's 3510 UB budget, not the unknown-architecture fallback; ASCEND910_93 (A3) is 2201."""
    soc_versions = SOC_ENUM_GENERATION[op_name]
    assert soc_versions in (1, 2)
    exe = _driver(op_name, workdir)
    t = _run(exe, "5", "5", "5", "5", "0", "mean", "unset", "unset", str(ASCEND950))["tiling"]
    assert t["ok"] and t["npu_arch"] == 3510
    assert t["ub_bytes"] == ARCHS[3510].ub_kernel_bytes.value != 196608 - UB_RESERVED_BYTES
    if soc_versions == 2:
        t = _run(exe, "5", "5", "5", "5", "0", "mean", "unset", "unset", str(ASCEND910_93))["tiling"]
        assert t["ok"] and t["npu_arch"] == 2201 and t["ub_bytes"] == ARCHS[2201].ub_kernel_bytes.value
    # Undeclared values stay unnamed (the generation-0 header has no 4: that is test_tiling_adapter_defaults...).
    assert _run(exe, "5", "5", "5", "5", "0", "mean", "unset", "unset", "77")["tiling"]["npu_arch"] == 0


def test_lib_api_workspace_error_fails_the_tiling(workdir: str) -> None:
    """GetLibApiWorkSpaceSize() returns (uint32_t)-1 when the platform cannot name the architecture: the tiling fails
    before the core runs, instead of asking for ~4 GiB of workspace; any other value is added as is."""
    exe = _driver("l1_loss_backward", workdir)
    soc = str(SOC_VERSION["ASCEND910B"])
    failed = subprocess.run([str(exe), "5", "5", "5", "5", "0", "mean", "unset", "unset", soc, str(2**32 - 1)],
                            capture_output=True, text=True)
    assert failed.returncode == 0, failed.stderr
    t = json.loads(failed.stdout)["tiling"]
    assert not t["ok"] and t["calls"] == 0 and t["workspace"] == 0
    assert "GetLibApiWorkSpaceSize" in failed.stderr + failed.stdout
    t = _run(exe, "5", "5", "5", "5", "0", "mean", "unset", "unset", soc, str(2**32 - 2))["tiling"]
    assert t["ok"] and t["workspace"] == 2**32 - 2 + 64


def test_every_op_renders_one_source_and_the_shared_files() -> None:
    files = op_host.host_files(list(OPS.values()))
    assert {f"op_host/{op.entry_name}.cpp" for op in OPS.values()} <= set(files)
    assert "op_host/lossgrad_op_host.h" in files and "op_host/tiling_core/lossgrad_tiling_core.h" in files
    for op in OPS.values():
        text = files[f"op_host/{op.entry_name}.cpp"]
        assert f"OP_ADD({op.custom_op_type});" in text
        # the op's registry position as the core's opaque OpId, named in a comment
        assert f"static_cast<lossgrad_tiling::OpId>({list(OPS).index(op.name)}) /* {cxx_tables.op_enum(op)} */" in text


OPTIONAL_OPS = [name for name, op in OPS.items() if any(i.optional for i in op.inputs)]


@pytest.mark.parametrize("op_name", OPTIONAL_OPS)
def test_an_optional_input_absent_and_present_through_the_adapter(workdir: str, op_name: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """CANN hands an absent optional input to InferShape, InferDataType and the TilingFunc as a null shape and
    desc (GetOptionalInput*): the OpDef declares it OPTIONAL, InferShape and InferDataType skip it, and the adapter
    tells the core its bit in the absent mask; given, it is an input like the others."""
    op = OPS[op_name]
    exe = _driver(op_name, workdir)
    roles = [io.role for io in op.kernel_inputs]
    optional = [k for k, io in enumerate(op.kernel_inputs) if op.input(io.role).optional]
    shapes = {"grad": "1", "self": "2x3", "target": "3"}
    args = [shapes[r] for r in roles[:3]]
    for given in (False, True):
        monkeypatch.setenv("LG_OPTIONAL", ",".join("1x3" if given else "-" for _ in optional))
        d = _run(exe, *args, "2x3", "1", "sum", "unset", "unset", "1")
        assert [p["param"] for p in d["inputs"]] == [1 if k in optional else 2 for k in range(len(roles))]  # OPTIONAL
        assert d["infer_shape"] == {"ok": True, "shape": [2, 3]}
        assert d["infer_dtype_mixed"]["ok"]
        t = d["tiling"]
        assert t["ok"] and t["num_inputs"] == len(roles)
        absent = sum(1 << k for k in optional) if not given else 0
        assert t["absent"] == absent
        dims = [x["dims"] for x in t["inputs"]]
        assert dims[:3] == [[int(n) for n in a.split("x")] for a in args]
        for k in optional:
            assert (dims[k] == [1, 3]) if given else True
