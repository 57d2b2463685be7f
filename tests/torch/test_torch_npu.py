"""The PrivateUse1 (torch_npu) kernels with a stand-in ACL layer: no device exists here, so lossgrad.cann.acl and
torch_npu are replaced by stand-ins that interpret the aclnn two-stage calls the way the custom-op package's generated
API does (inputs in OpDef order, reduction string, attributes, output, then workspace/executor/stream) and compute
the result with the golden model from the tensors' memory. A wrong argument order, dtype enum, shape, stride,
stream or output pointer therefore gives a wrong result. The real-device test skips without torch_npu and a device."""
from __future__ import annotations

import ctypes
import importlib.util
import sys
import types
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lossgrad.golden  # noqa: E402
import lossgrad.torch as lt  # noqa: E402
from lossgrad import dtypes as dt  # noqa: E402
from lossgrad.cann import acl as acl_layer  # noqa: E402
from lossgrad.cann.detect import device_present  # noqa: E402
from lossgrad.errors import LossGradError  # noqa: E402
from lossgrad.registry import OPS, Check, Reduction  # noqa: E402
from lossgrad.torch import npu  # noqa: E402
from lossgrad.torch._convert import to_numpy  # noqa: E402

from _torch_support import rand  # noqa: E402

STREAM = 0x5EA
WORKSPACE = 256
# every op's attributes at a value other than their default (a bool flipped, a float at 0.5)
ATTRS = {name: {a.name: (not a.default) if a.kernel_type == "Bool" else 0.5 for a in op.attrs}
         for name, op in OPS.items()}


class StandInAcl:
    """lossgrad.cann.acl.Acl: only the status check is used in-process (torch_npu owns device and stream)."""

    def __init__(self, lib_dirs: Any = None) -> None:
        self.lib_dirs = lib_dirs

    def check(self, call: str, code: int) -> None:
        if code != 0:
            raise acl_layer.AclError(call, int(code), "stand-in failure")


class StandInTensors:
    """lossgrad.cann.acl.AclnnTensors: handles recording shape, dtype enum and device address."""

    def __init__(self, lib_dirs: Any = None) -> None:
        self.live: dict[int, tuple[list[int], int, int]] = {}
        self.next = 1

    def create(self, shape: list[int], acl_dtype: int, data: ctypes.c_void_p) -> ctypes.c_void_p:
        handle, self.next = self.next, self.next + 1
        self.live[handle] = (list(shape), acl_dtype, int(data.value or 0))
        return ctypes.c_void_p(handle)

    def destroy(self, tensor: ctypes.c_void_p) -> None:
        del self.live[int(tensor.value)]


def _array(record: tuple[list[int], int, int]) -> np.ndarray:
    shape, acl_dtype, address = record
    dtype = next(d for d in dt.DType if d.acl_enum == acl_dtype).np_dtype
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return np.zeros(shape, dtype)
    return np.frombuffer((ctypes.c_char * (n * dtype.itemsize)).from_address(address), dtype=dtype).reshape(shape)


class StandInPackage:
    """The package's op_api library: aclnn<Op>GetWorkspaceSize / aclnn<Op> for every op, as Python callables."""

    def __init__(self, tensors: StandInTensors, status: int = 0) -> None:
        self.tensors, self.status = tensors, status
        self.launches: list[dict[str, Any]] = []
        self.pending: dict[int, dict[str, Any]] = {}
        for op in OPS.values():
            setattr(self, f"aclnn{op.custom_op_type}GetWorkspaceSize", self._first(op))
            setattr(self, f"aclnn{op.custom_op_type}", self._second(op))

    def _first(self, op: Any) -> Any:
        def first(*args: Any) -> int:
            n = len(op.kernel_inputs)
            handles, reduction, scalars = args[:n], args[n], args[n + 1:n + 1 + len(op.attrs)]
            out, size, executor = args[n + 1 + len(op.attrs):]
            inputs = [self.tensors.live[int(h.value)] if h.value else None for h in handles]  # None: absent
            key = len(self.pending) + 100
            self.pending[key] = {"op": op, "inputs": inputs, "out": self.tensors.live[int(out.value)],
                                 "addresses": [h.value and self.tensors.live[int(h.value)][2] for h in handles],
                                 "sized_under": list(getattr(self, "guards", [])),
                                 "reduction": reduction.value.decode(), "attrs": [s.value for s in scalars],
                                 "scalar_types": [type(s) for s in scalars]}
            size._obj.value = WORKSPACE
            executor._obj.value = key
            return self.status
        return first

    def _second(self, op: Any) -> Any:
        def second(workspace: ctypes.c_void_p, size: ctypes.c_uint64, executor: ctypes.c_void_p,
                   stream: ctypes.c_void_p) -> int:
            job = self.pending.pop(int(executor.value))
            job.update(stream=stream.value, workspace=bool(workspace.value), workspace_size=size.value,
                       launched_under=list(getattr(self, "guards", [])))
            arrays = {io.role: _array(rec) for io, rec in zip(op.kernel_inputs, job["inputs"]) if rec is not None}
            out = _array(job["out"])
            attrs = dict(zip((a.name for a in op.attrs), job["attrs"]))
            golden = getattr(lossgrad.golden, op.name)(*(arrays.get(i.role) for i in op.inputs),
                                                       job["reduction"], **attrs, out_dtype=out.dtype)
            out[...] = golden
            self.launches.append(job)
            return 0
        return second


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> dict[str, Any]:
    vendor = tmp_path / "opp" / "vendors" / "lossgrad"
    (vendor / "op_api" / "lib").mkdir(parents=True)
    (vendor / "op_api" / "lib" / npu.PACKAGE_LIBRARY).write_bytes(b"")
    (tmp_path / "cann" / "lib64").mkdir(parents=True)  # what detect_cann recognises as a toolkit
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "cann"))
    monkeypatch.setenv(npu.CUSTOM_OPP_VAR, str(vendor))
    monkeypatch.delenv(npu.OPP_VAR, raising=False)
    device = {"name": "Ascend910B3", "current": 0, "guards": [], "formats": {}, "format_casts": []}

    class DeviceGuard:  # torch_npu.npu.device: makes a device current for the block
        def __init__(self, index: int) -> None:
            self.index = index

        def __enter__(self) -> None:
            self.saved, device["current"] = device["current"], self.index
            device["guards"].append(self.index)

        def __exit__(self, *exc: Any) -> None:
            device["current"] = self.saved
            device["guards"].pop()

    def format_cast(t: torch.Tensor, acl_format: int) -> torch.Tensor:
        device["format_casts"].append((device["formats"][t.data_ptr()], acl_format))
        out = t.clone()
        device["formats"][out.data_ptr()] = acl_format
        return out

    def raw_stream(index: int) -> int:
        device["stream_fetched_under"] = list(device["guards"])
        return STREAM

    # torch_npu's draining raw-stream accessor gives STREAM; Stream.npu_stream (the fallback) something else
    fake_torch_npu = types.SimpleNamespace(
        _C=types.SimpleNamespace(_npu_getCurrentRawStream=raw_stream),
        npu=types.SimpleNamespace(current_stream=lambda dev: types.SimpleNamespace(npu_stream=STREAM + 1),
                                  get_device_name=lambda index: device["name"], device=DeviceGuard,
                                  current_device=lambda: device["current"]),
        get_npu_format=lambda t: device["formats"].get(t.data_ptr(), npu.ACL_FORMAT_ND),
        npu_format_cast=format_cast)
    monkeypatch.setitem(sys.modules, "torch_npu", fake_torch_npu)
    tensors = StandInTensors()
    package = StandInPackage(tensors)
    package.guards = device["guards"]
    searched: list[Any] = []

    def find(symbol: str, names: Any, dirs: Any) -> Any:
        searched.append((symbol, list(names), list(dirs)))
        return package if any((d / n).is_file() for d in dirs for n in names) else None

    monkeypatch.setattr(acl_layer, "Acl", StandInAcl)
    monkeypatch.setattr(acl_layer, "AclnnTensors", lambda dirs: tensors)
    monkeypatch.setattr(acl_layer, "find_symbol_library", find)
    monkeypatch.setattr(npu, "_RUNTIMES", {})
    return {"package": package, "tensors": tensors, "searched": searched, "device": device, "vendor": vendor,
            "torch_npu": fake_torch_npu}


def _kernel(name: str) -> Any:
    return npu.npu_kernel(OPS[name])


def test_privateuse1_kernels_are_registered() -> None:
    for name in OPS:
        for key in ("CPU", "PrivateUse1", "Meta", "Autograd"):
            assert torch._C._dispatch_has_kernel_for_dispatch_key(f"lossgrad::{name}", key), (name, key)


@pytest.mark.parametrize("name", list(OPS))
def test_two_stage_call_on_the_current_stream(name: str, stand_in: dict[str, Any]) -> None:
    op = OPS[name]
    g = rand((3, 4), torch.float16, 1)
    s = rand((4, 3), torch.float16, 2).t()          # non-contiguous: the package needs contiguous memory
    t = rand((3, 4) if Check.TARGET_IS_SELF in op.checks else (1, 4), torch.float16, 3)  # BCEWithLogits: self's
    reduction = Reduction.BATCHMEAN if Reduction.BATCHMEAN in op.reductions else Reduction.MEAN
    out = _kernel(name)(g, s, t, *op.absent_optional, int(reduction), *ATTRS[name].values())
    expected = getattr(lossgrad.golden, name)(to_numpy(g), to_numpy(s), to_numpy(t), *op.absent_optional,
                                              int(reduction), **ATTRS[name])
    assert np.array_equal(to_numpy(out), expected)
    (job,) = stand_in["package"].launches
    assert job["stream"] == STREAM and job["workspace"] and job["workspace_size"] == WORKSPACE
    assert job["reduction"] == reduction.name.lower()
    assert job["scalar_types"] == [ctypes.c_double if a.kernel_type == "Float" else ctypes.c_bool for a in op.attrs]
    assert {rec[1] for rec in job["inputs"] if rec is not None} == {dt.DType.FLOAT16.acl_enum}
    given = {"grad": g, "self": s, "target": t}  # an optional input left out is a null aclTensor*
    assert [rec and rec[0] for rec in job["inputs"]] == [list(given[io.role].shape) if io.role in given else None
                                                         for io in op.kernel_inputs]
    assert stand_in["tensors"].live == {}  # every aclTensor destroyed
    symbol, names, dirs = stand_in["searched"][0]
    assert symbol == f"aclnn{op.custom_op_type}GetWorkspaceSize" and names == [npu.PACKAGE_LIBRARY]
    assert dirs[0] == stand_in["vendor"] / "op_api" / "lib"


def test_stream_fallback_without_the_raw_accessor(stand_in: dict[str, Any]) -> None:
    del stand_in["torch_npu"]._C  # an older torch_npu: the public Stream's npu_stream
    x = torch.zeros(3)
    _kernel("mse_loss_backward")(torch.zeros(()), x, x, 1)
    assert stand_in["package"].launches[0]["stream"] == STREAM + 1


def test_mixed_dtypes_run_in_the_promoted_dtype_and_cast_to_out(stand_in: dict[str, Any]) -> None:
    g, s, t = rand((), torch.float16, 1), rand((2, 3), torch.float32, 2), rand((2, 3), torch.bfloat16, 3)
    out = _kernel("l1_loss_backward")(g, s, t, 2, out_dtype=torch.float16)
    (job,) = stand_in["package"].launches
    # self/target differ: not a registered column, so cast to the promoted dtype; (f32, f32, f32 -> f16) is one
    assert {rec[1] for rec in job["inputs"]} == {dt.DType.FLOAT32.acl_enum}
    assert job["out"][1] == dt.DType.FLOAT16.acl_enum
    assert out.dtype == torch.float16
    assert torch.equal(out, (torch.sign(s - t.float()) * g.float()).half())


def test_validation_uses_the_device_soc(stand_in: dict[str, Any]) -> None:
    stand_in["device"]["name"] = "Ascend310P3"
    x = torch.zeros(3, dtype=torch.bfloat16)
    with pytest.raises(LossGradError) as info:
        _kernel("mse_loss_backward")(x, x, x, 1)
    assert info.value.code == 161002 and "Ascend310P3" in str(info.value)
    assert stand_in["package"].launches == []


def test_soc_argument_must_name_the_device(stand_in: dict[str, Any]) -> None:
    x = torch.zeros(3)
    _kernel("mse_loss_backward")(torch.zeros(()), x, x, 1, soc="Ascend910B3")
    with lt.soc("Ascend950PR_9579"):  # the block chooses the twin's SoC; NPU tensors run as the device
        _kernel("mse_loss_backward")(torch.zeros(()), x, x, 1)
    with pytest.raises(LossGradError) as info:
        _kernel("mse_loss_backward")(torch.zeros(()), x, x, 1, soc="Ascend910B1")
    assert info.value.code == 161002 and "Ascend910B3" in str(info.value)
    assert len(stand_in["package"].launches) == 2


def test_tensors_on_other_devices(stand_in: dict[str, Any]) -> None:
    x = torch.zeros(3)
    with pytest.raises(RuntimeError, match="same device"):
        _kernel("mse_loss_backward")(torch.zeros(3, device="meta"), x, x, 0)


def test_launch_inside_the_device_guard(stand_in: dict[str, Any]) -> None:
    """torch_npu runs each op under an OptionalDeviceGuard on self's device: both aclnn stages and the stream fetch
    happen inside torch_npu.npu.device(...) for the tensors' device, and the previous device is restored."""
    stand_in["device"]["current"] = 0
    x = torch.zeros(3)
    _kernel("mse_loss_backward")(torch.zeros(()), x, x, 1)
    (job,) = stand_in["package"].launches
    assert job["sized_under"] == job["launched_under"] == stand_in["device"]["stream_fetched_under"] == [0]
    assert stand_in["device"]["guards"] == [] and stand_in["device"]["current"] == 0


def test_device_guard_takes_the_tensors_device(stand_in: dict[str, Any]) -> None:
    rt = npu.runtime(OPS["mse_loss_backward"])
    stand_in["device"]["current"] = 0
    with rt.device_guard(torch.device("privateuseone", 1)):  # tensors on npu:1 while npu:0 is current
        assert stand_in["device"]["current"] == 1
    assert stand_in["device"]["current"] == 0


@pytest.mark.parametrize("fmt", [3, 4, 29])  # NC1HWC0, FRACTAL_Z, FRACTAL_NZ: torch_npu's L1 tests use them
def test_private_storage_formats_are_converted_to_nd(fmt: int, stand_in: dict[str, Any]) -> None:
    g, s, t = rand((4, 6), torch.float32, 1), rand((4, 6), torch.float32, 2), rand((4, 6), torch.float32, 3)
    stand_in["device"]["formats"][s.data_ptr()] = fmt
    stand_in["device"]["formats"][t.data_ptr()] = 0  # NCHW is a base format: described as it is
    out = _kernel("l1_loss_backward")(g, s, t, 0)
    assert stand_in["device"]["format_casts"] == [(fmt, npu.ACL_FORMAT_ND)]  # only the private one, to ND
    (job,) = stand_in["package"].launches
    assert s.data_ptr() not in job["addresses"]  # the aclTensor describes the ND copy, never the private layout
    assert torch.equal(out, torch.sign(s - t) * g)


def _vendor(root: Any, name: str) -> Any:
    lib = root / "vendors" / name / "op_api" / "lib"
    lib.mkdir(parents=True)
    return lib


def test_vendors_follow_load_priority(tmp_path: Any) -> None:
    libs = {name: _vendor(tmp_path, name) for name in ("alpha", "lossgrad", "zeta")}
    (tmp_path / "vendors" / "config.ini").write_text("# vendors\nload_priority=zeta,lossgrad\n")
    dirs = npu.package_lib_dirs({npu.OPP_VAR: str(tmp_path)})
    assert dirs == [libs["zeta"], libs["lossgrad"]]  # config order, not alphabetical; alpha is not listed
    custom = tmp_path / "custom"
    assert npu.package_lib_dirs({npu.OPP_VAR: str(tmp_path), npu.CUSTOM_OPP_VAR: str(custom)})[0] == \
        custom / "op_api" / "lib"  # ASCEND_CUSTOM_OPP_PATH first


@pytest.mark.parametrize("config,expected", [
    (None, []),                                       # no config.ini: opbase loads no vendor
    ("load_prioritymdc\n", []),                       # the priority line without '=' is invalid
    ("\n# load_priority=alpha\nload_priority=lossgrad\r\n", ["lossgrad"]),
    ("other=1\nload_priority=a,,b\nload_priority=c\n", ["a", "b"]),  # the first priority line only
])
def test_load_priority_parsing(tmp_path: Any, config: str | None, expected: list[str]) -> None:
    if config is not None:
        (tmp_path / "config.ini").write_bytes(config.encode())
    assert npu.load_priority(tmp_path / "config.ini") == expected


def test_empty_call_launches_nothing(stand_in: dict[str, Any]) -> None:
    x = torch.zeros(0, 3)
    assert _kernel("mse_loss_backward")(torch.zeros(()), x, x, 1).shape == (0, 3)
    assert stand_in["package"].launches == []


def test_aclnn_status_is_checked(stand_in: dict[str, Any]) -> None:
    stand_in["package"].status = 161002
    x = torch.zeros(3)
    with pytest.raises(acl_layer.AclError, match="aclnnMseLossGradCustomGetWorkspaceSize returned 161002"):
        _kernel("mse_loss_backward")(torch.zeros(()), x, x, 1)
    assert stand_in["tensors"].live == {}


def test_missing_everything_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch_npu", None)  # import torch_npu -> ImportError
    for var in ("ASCEND_HOME_PATH", npu.CUSTOM_OPP_VAR, npu.OPP_VAR):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(npu, "_RUNTIMES", {})
    x = torch.zeros(3)
    with pytest.raises(lt.NpuUnavailable) as info:
        _kernel("kl_div_backward")(x, x, x, 1)
    message = str(info.value)
    assert "3 missing" in message and "(1) torch_npu" in message and "(2) the aclnn call needs the CANN" in message
    assert "ASCEND_HOME_PATH is not set" in message and "(3) the lossgrad custom-op package" in message
    assert "aclnnKlDivLossGradCustomGetWorkspaceSize" in message


def test_missing_package_only(stand_in: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(npu.CUSTOM_OPP_VAR)
    x = torch.zeros(3)
    with pytest.raises(lt.NpuUnavailable) as info:
        _kernel("l1_loss_backward")(x, x, x, 1)
    message = str(info.value)
    assert "1 missing: (1) the lossgrad custom-op package" in message and "torch_npu" not in message
    assert "ASCEND_HOME_PATH" not in message


def _real_npu() -> bool:
    return importlib.util.find_spec("torch_npu") is not None and device_present()


@pytest.mark.skipif(not _real_npu(), reason="needs torch_npu and an Ascend device (/dev/davinciN) with CANN")
def test_real_device() -> None:  # pragma: no cover - no device on this project's machines
    import torch_npu  # noqa: F401

    g, s, t = rand((), torch.float32, 1), rand((3, 4), torch.float32, 2), rand((3, 4), torch.float32, 3)
    out = torch.ops.lossgrad.mse_loss_backward(g.npu(), s.npu(), t.npu(), "mean").cpu()
    expected = lossgrad.golden.mse_loss_backward(to_numpy(g), to_numpy(s), to_numpy(t), "mean")
    assert np.array_equal(to_numpy(out), expected)


LINE_SOCS = {"950": "Ascend950PR_9579", "A3": "Ascend910_9391", "A2": "Ascend910B3", "310P": "Ascend310P3",
             "910": "Ascend910A"}


@pytest.mark.parametrize("line", list(LINE_SOCS))
@pytest.mark.parametrize("name", list(OPS))
def test_every_mixed_call_reaches_a_registered_column(name: str, line: str, stand_in: dict[str, Any],
                                                      accepted_mixes) -> None:
    """Each float mix aclnn accepts reaches the package either as its own registered OpDef column (fused) or cast to
    aclnn's compute dtype, never as an unregistered mix; the result is the golden model's for the original tensors."""
    from lossgrad.cann.op_host import kernel_combos
    from lossgrad.socs import get_soc

    op, soc = OPS[name], LINE_SOCS[line]
    stand_in["device"]["name"] = soc
    columns = set(kernel_combos(op, get_soc(soc).arch.npu_arch))
    to_torch = {dt.DType.FLOAT32: torch.float32, dt.DType.FLOAT16: torch.float16, dt.DType.BFLOAT16: torch.bfloat16}
    if not op.supported_dtypes(get_soc(soc).arch.npu_arch):  # aclnn refuses every dtype (KlDivTarget on 310P/910)
        assert not columns and not op.ours_support[line]
        launched = len(stand_in["package"].launches)
        with pytest.raises(LossGradError) as info:
            _kernel(name)(*(rand((2, 3), torch.float32, k) for k in range(3)), *op.absent_optional, 2,
                          *ATTRS[name].values())
        assert info.value.code == 161002 and len(stand_in["package"].launches) == launched
        return
    mixes = accepted_mixes(op, soc)
    assert len(mixes) > len(columns) // 2
    fused = 0
    for i, (g, s, t, o) in enumerate(mixes):
        tensors = {"grad": rand((2, 3), to_torch[g], 3 * i), "self": rand((2, 3), to_torch[s], 3 * i + 1),
                   "target": rand((2, 3), to_torch[t], 3 * i + 2)}
        out = _kernel(name)(tensors["grad"], tensors["self"], tensors["target"], *OPS[name].absent_optional, 2,
                            *ATTRS[name].values(), out_dtype=to_torch[o])
        job = stand_in["package"].launches[-1]
        by_role = {io.role: rec[1] for io, rec in zip(op.kernel_inputs, job["inputs"]) if rec is not None}
        # an absent optional input selects the column that gives it self's dtype (OpSpec.absent_as_self)
        sent = tuple(by_role.get(io.role, by_role["self"]) for io in op.kernel_inputs) + (job["out"][1],)
        assert sent in {tuple(d.acl_enum for d in c) for c in columns}, (g, s, t, o)
        mix = op.absent_as_self({"grad": g, "self": s, "target": t})
        own = tuple(mix[io.role].acl_enum for io in op.kernel_inputs) + (o.acl_enum,)
        fused += sent == own
        expected = getattr(lossgrad.golden, name)(*(to_numpy(tensors[r]) for r in ("grad", "self", "target")),
                                                  *OPS[name].absent_optional, 2, **ATTRS[name], out_dtype=o.np_dtype)
        assert out.dtype == to_torch[o] and np.array_equal(to_numpy(out), expected, equal_nan=True), (g, s, t, o)
    assert fused == sum(1 for m in mixes if tuple(op.absent_as_self({"grad": m[0], "self": m[1], "target": m[2]})[
        io.role] for io in op.kernel_inputs) + (m[3],) in columns)
    assert fused == len(columns)  # every registered column is one of the accepted mixes
