"""The PrivateUse1 (torch_npu ``npu`` device) kernels: the installed custom-op package's aclnn two-stage API.

For ``torch.ops.lossgrad.<name>`` on NPU tensors this module, inside torch_npu's device guard for the tensors'
device and with every tensor in private storage formats (NZ, 5HD, ...) first converted to ND,
  1. validates the call from the tensors' shapes and dtypes, for the device's SoC (``torch_npu.npu.get_device_name``);
  2. keeps the inputs' dtypes when they form one of the package's OpDef columns, else casts them to aclnn's compute
     dtype (exact: it only widens), and makes them contiguous on the device (docs/cann.md §2-3);
  3. creates aclTensors over the tensors' device memory and calls ``aclnn<CustomOpType>GetWorkspaceSize`` (inputs in
     OpDef order, the reduction as a C string, SmoothL1's beta as double, KL's log_target as bool, then the output)
     and ``aclnn<CustomOpType>(workspace, size, executor, stream)`` on torch_npu's current stream, through the
     project's ACL layer (``lossgrad.cann.acl``), every status checked;
  4. writes the requested output dtype directly: every registered column exists with each output dtype.

The workspace is a torch tensor on the device, so torch_npu's caching allocator orders its reuse on the stream. The
package is found through ``ASCEND_CUSTOM_OPP_PATH`` (the installed vendor directories, docs/cann.md §2), then
the vendors ``$ASCEND_OPP_PATH/vendors/config.ini`` lists in ``load_priority`` order. torch_npu, CANN and the
package are looked up at the first NPU call; when any is missing, one ``NpuUnavailable`` names all that are.
"""
from __future__ import annotations

import ctypes
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from ..cann import acl as acl_layer
from ..cann.detect import detect_cann, unavailable_message
from ..cann.op_host import package_dtypes
from ..errors import BackendUnavailable, invalid_error
from ..registry import OpSpec
from ..socs import get_soc
from ._convert import DTYPE_TO_TORCH, lossgrad_dtype

PACKAGE_LIBRARY = "libcust_opapi.so"
CUSTOM_OPP_VAR = "ASCEND_CUSTOM_OPP_PATH"
OPP_VAR = "ASCEND_OPP_PATH"
# aclFormat: the base (plain strided) formats, FormatHelper::IsBaseFormatType's set; every other is a private layout
ACL_FORMAT_ND = 2
BASE_FORMATS = frozenset({0, 1, ACL_FORMAT_ND, 30})  # NCHW, NHWC, ND, NCDHW
_SCALAR_CTYPES = {"Float": ctypes.c_double, "Bool": ctypes.c_bool}  # OpDef attr type -> aclnn C argument


class NpuUnavailable(BackendUnavailable):
    """An NPU tensor reached a lossgrad op, but torch_npu, CANN or the custom-op package is missing."""


def _import_torch_npu() -> Any:
    import torch_npu  # noqa: F401  (registers the "npu" device and its streams)
    return torch_npu


def device_soc_or_none(device: torch.device) -> str | None:
    """The SoC name of an NPU device, or None without torch_npu (fake tensors traced on a machine without it)."""
    try:
        torch_npu = _import_torch_npu()
    except ImportError:
        return None
    return str(torch_npu.npu.get_device_name(device.index if device.index is not None else 0))


def package_lib_dirs(environ: "os._Environ[str] | dict[str, str] | None" = None) -> list[Path]:
    """Where an installed custom-op package keeps libcust_opapi.so: each ASCEND_CUSTOM_OPP_PATH vendor directory,
    then the vendors under $ASCEND_OPP_PATH/vendors in config.ini's load_priority order (opbase's
    NnopbaseGetOppApiPath: $ASCEND_OPP_PATH/vendors/<name>/op_api/lib/libcust_opapi.so)."""
    env = os.environ if environ is None else environ
    vendors = [Path(p) for p in env.get(CUSTOM_OPP_VAR, "").split(os.pathsep) if p]
    opp = env.get(OPP_VAR, "")
    if opp:
        vendors += [Path(opp) / "vendors" / name for name in load_priority(Path(opp) / "vendors" / "config.ini")]
    return [v / "op_api" / "lib" for v in vendors]


def load_priority(config: Path) -> list[str]:
    """The vendor names of $ASCEND_OPP_PATH/vendors/config.ini, highest priority first, read as opbase reads them
    (src/nnopbase/individual_op/executor/indv_collector.cpp, NnopbaseReadConfigFile): the first line, not empty and
    not starting with '#', that contains "priority"; its value after '=' split at ','. No file, or that line without
    '=', loads no vendor: vendors not listed are never searched, whatever their directory names."""
    try:
        lines = config.read_text(errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        line = line.strip("\r\n")
        if not line or line.startswith("#") or "priority" not in line:
            continue
        if "=" not in line:
            return []
        return [name for name in line.split("=", 1)[1].split(",") if name]
    return []


@dataclass
class NpuRuntime:
    """What an NPU call needs, loaded once: torch_npu, the ACL layer, and the package's op_api library."""

    torch_npu: Any
    acl: Any                  # lossgrad.cann.acl.Acl: status checks with aclGetRecentErrMsg
    tensors: Any              # lossgrad.cann.acl.AclnnTensors
    library: Any              # the ctypes library exporting aclnn<CustomOpType>*

    def stream(self, device: torch.device) -> int:
        """The current aclrtStream, through torch_npu's accessor that first drains its task queue (the "NoWait"
        one does not), so torch work queued before this call reaches the stream before our launch."""
        raw = getattr(getattr(self.torch_npu, "_C", None), "_npu_getCurrentRawStream", None)
        if raw is not None:
            return int(raw(device.index if device.index is not None else 0))
        return int(self.torch_npu.npu.current_stream(device).npu_stream)

    def soc(self, device: torch.device) -> str:
        return str(self.torch_npu.npu.get_device_name(device.index if device.index is not None else 0))

    def device_guard(self, device: torch.device) -> Any:
        """torch_npu's device guard (its ops each hold a c10::OptionalDeviceGuard on self's device, op-plugin
        op_plugin/utils/ops.cpp): without it, tensors on npu:1 while npu:0 is current would get npu:0's context."""
        return self.torch_npu.npu.device(device.index if device.index is not None else self.current_device())

    def current_device(self) -> int:
        return int(self.torch_npu.npu.current_device())

    def base_format(self, b: Any, device: torch.device) -> Any:
        """The call with every tensor in a base storage format. torch_npu describes a tensor in a private format
        (NC1HWC0 = 3, FRACTAL_Z = 4, FRACTAL_NZ = 29, ...) to aclnn with that format and its storage dims
        (op-plugin op_plugin/utils/op_api_common.cpp, ConvertType); our aclTensors are plain strided ND views and
        the package's OpDef lists ND only, so such a tensor is first converted to ND (npu_format_cast), the copy
        torch_npu's own ops make when a kernel needs ND."""
        get_format = getattr(self.torch_npu, "get_npu_format", None)
        if get_format is None:  # a torch_npu without private formats
            return b

        def nd(t: torch.Tensor | None) -> torch.Tensor | None:
            if t is None or t.device != device or int(get_format(t)) in BASE_FORMATS:  # a CPU scalar: no NPU format
                return t
            return self.torch_npu.npu_format_cast(t, ACL_FORMAT_ND)

        return dataclasses.replace(b, tensors=tuple(nd(t) for t in b.tensors))


_RUNTIMES: dict[str, NpuRuntime] = {}


def runtime(op: OpSpec) -> NpuRuntime:
    """The runtime for one op, or NpuUnavailable naming every missing piece (torch_npu, CANN, the package)."""
    cached = _RUNTIMES.get(op.name)
    if cached is not None:
        return cached
    missing: list[str] = []
    try:
        torch_npu = _import_torch_npu()
    except ImportError as exc:
        torch_npu = None
        missing.append(f"torch_npu is not importable ({exc}); install the torch_npu release matching torch "
                       f"{torch.__version__}.")
    cann = detect_cann()
    if cann is None:
        missing.append(unavailable_message("the aclnn call", alternative="move the tensors to the CPU, where the "
                                           "op runs the kernel on the host twin"))
    symbol = f"aclnn{op.custom_op_type}GetWorkspaceSize"
    dirs = package_lib_dirs()
    library = acl_layer.find_symbol_library(symbol, (PACKAGE_LIBRARY,), dirs) if cann is not None else None
    if library is None:
        where = ", ".join(str(d) for d in dirs) or f"nowhere: {CUSTOM_OPP_VAR} and {OPP_VAR} are unset"
        missing.append(f"the lossgrad custom-op package is not installed: no {PACKAGE_LIBRARY} exports {symbol} "
                       f"(searched {where}); build and install it with `lossgrad build --flow package` and set "
                       f"{CUSTOM_OPP_VAR} to its vendor directory (docs/cann.md §2)")
    if missing:
        raise NpuUnavailable(f"torch.ops.lossgrad.{op.name} cannot run on NPU tensors, {len(missing)} missing: "
                             + " ".join(f"({i}) {m}" for i, m in enumerate(missing, 1)))
    assert cann is not None and torch_npu is not None
    lib_dirs = [*dirs, cann.lib64]
    rt = NpuRuntime(torch_npu=torch_npu, acl=acl_layer.Acl(lib_dirs), tensors=acl_layer.AclnnTensors(lib_dirs),
                    library=library)
    _RUNTIMES[op.name] = rt
    return rt


def call_aclnn(rt: NpuRuntime, op: OpSpec, inputs: Sequence[torch.Tensor | None], reduction: str,
               attrs: dict[str, Any], out: torch.Tensor) -> None:
    """aclnn<CustomOpType>GetWorkspaceSize + aclnn<CustomOpType> on contiguous device tensors (OpDef input order)."""
    name = "aclnn" + op.custom_op_type
    first, second = getattr(rt.library, name + "GetWorkspaceSize"), getattr(rt.library, name)
    # an absent optional input is a null aclTensor*
    handles = [ctypes.c_void_p(None) if t is None else
               rt.tensors.create(list(t.shape), lossgrad_dtype(t.dtype, "tensor").acl_enum,
                                 ctypes.c_void_p(t.data_ptr())) for t in [*inputs, out]]
    try:
        scalars = [_SCALAR_CTYPES[a.kernel_type](attrs[a.name]) for a in op.attrs]
        args = [*handles[:-1], ctypes.c_char_p(reduction.encode()), *scalars, handles[-1]]
        first.argtypes = ([ctypes.c_void_p] * len(inputs) + [ctypes.c_char_p] + [type(s) for s in scalars]
                          + [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p)])
        first.restype = ctypes.c_int
        second.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p]
        second.restype = ctypes.c_int
        size, executor = ctypes.c_uint64(0), ctypes.c_void_p()
        rt.acl.check(name + "GetWorkspaceSize", first(*args, ctypes.byref(size), ctypes.byref(executor)))
        workspace = torch.empty(size.value, dtype=torch.uint8, device=out.device) if size.value else None
        ws_ptr = ctypes.c_void_p(workspace.data_ptr() if workspace is not None else None)
        # Fetched last, just before the launch (see NpuRuntime.stream): the input casts and copies queued above
        # reach the stream before our kernel does.
        stream = ctypes.c_void_p(rt.stream(out.device))
        rt.acl.check(name, second(ws_ptr, size, executor, stream))
    finally:
        for h, t in zip(handles, [*inputs, out]):  # host-side descriptors; the launched task holds what it needs
            if t is not None:
                rt.tensors.destroy(h)


def npu_kernel(op: OpSpec) -> Callable[..., torch.Tensor]:
    from .ops import bind, common_device, validate_shapes

    def kernel(*args: Any, **kwargs: Any) -> torch.Tensor:
        b = bind(op, args, kwargs)
        rt = runtime(op)
        device = common_device(b)  # aten's rule: one device, CPU scalars (0-d) may accompany it
        with rt.device_guard(device):  # the tensors' device is current for allocation, stream and launch
            return launch(rt, rt.base_format(b, device), device)

    def launch(rt: NpuRuntime, b: Any, device: torch.device) -> torch.Tensor:
        soc = rt.soc(device)
        if b.soc is not None and get_soc(b.soc).name != soc:  # the lt.soc() block applies to the twin only
            raise invalid_error(f"soc: {b.soc!r} was requested but the tensors are on {device}, a {soc}")
        call = validate_shapes(b, soc)
        out = torch.empty(call.out_shape, dtype=DTYPE_TO_TORCH[call.out_dtype], device=device)
        if not call.launch:  # aclnn's early return: empty, or KL's zeros for an empty broadcast
            return out.zero_()
        # A registered OpDef column as it is, any other mix cast to aclnn's compute dtype (exact: it only widens);
        # the output is always written in its own dtype (lossgrad.cann.op_host.package_dtypes).
        send = package_dtypes(call)
        by_role = {i.role: t for i, t in zip(op.inputs, b.tensors)}
        inputs = [None if by_role[io.role] is None else
                  by_role[io.role].to(device=device, dtype=DTYPE_TO_TORCH[send[io.role]]).contiguous()
                  for io in op.kernel_inputs]
        call_aclnn(rt, op, inputs, call.reduction.label, dict(call.attrs), out)
        return out

    return kernel
