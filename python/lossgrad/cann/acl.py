"""A small ctypes binding of the ACL runtime, used only inside the worker subprocess (lossgrad.cann.worker).

Every call's return code is checked and turned into AclError with aclGetRecentErrMsg's text. The runtime library is
libascendcl.so where it exists and libacl_rt.so otherwise (CANN 9.x; hicann/ops-nn build.sh makes the same choice).
C signatures as in CANN's acl headers and their use in the samples (hicann/asc-tools
examples/03_msopgen/aclnn_invocation/main.cpp; cann/shmem src/host/utils/under_api/dl_acl_api.h, per
build_tooling.md §4.2); aclnn tensors via aclCreateTensor (build_tooling.md §1.9).
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Sequence

MEMCPY_HOST_TO_DEVICE = 1
MEMCPY_DEVICE_TO_HOST = 2
MALLOC_HUGE_FIRST = 0
FORMAT_ND = 2  # aclFormat ACL_FORMAT_ND

c_void_p = ctypes.c_void_p
c_size_t = ctypes.c_size_t


class AclError(RuntimeError):
    def __init__(self, call: str, code: int, message: str) -> None:
        super().__init__(f"{call} returned {code}" + (f": {message}" if message else ""))
        self.call = call
        self.code = code


def _load_first(names: Sequence[str], dirs: Sequence[Path]) -> ctypes.CDLL:
    errors = []
    for name in names:
        for candidate in [*(str(d / name) for d in dirs if (d / name).exists()), name]:
            try:
                return ctypes.CDLL(candidate, mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                errors.append(f"{candidate}: {exc}")
    raise OSError("cannot load any of " + ", ".join(names) + ": " + "; ".join(errors[-3:]))


def cann_lib_dirs() -> list[Path]:
    root = os.environ.get("ASCEND_HOME_PATH")
    return [Path(root) / "lib64"] if root else []


class Acl:
    """The runtime calls the runners need; each raises AclError on a non-zero return code."""

    def __init__(self, lib_dirs: Sequence[Path] | None = None) -> None:
        dirs = list(lib_dirs) if lib_dirs is not None else cann_lib_dirs()
        self.lib = _load_first(("libascendcl.so", "libacl_rt.so"), dirs)
        self._declare()

    def _declare(self) -> None:
        L = self.lib
        i32, f32p = ctypes.c_int32, ctypes.POINTER(ctypes.c_float)
        sig = {
            "aclInit": [ctypes.c_char_p], "aclFinalize": [], "aclrtSetDevice": [i32], "aclrtResetDevice": [i32],
            "aclrtCreateStream": [ctypes.POINTER(c_void_p)], "aclrtDestroyStream": [c_void_p],
            "aclrtSynchronizeStream": [c_void_p],
            "aclrtMalloc": [ctypes.POINTER(c_void_p), c_size_t, ctypes.c_int], "aclrtFree": [c_void_p],
            "aclrtMemcpy": [c_void_p, c_size_t, c_void_p, c_size_t, ctypes.c_int],
            "aclrtMemset": [c_void_p, c_size_t, i32, c_size_t],
            "aclrtMemsetAsync": [c_void_p, c_size_t, i32, c_size_t, c_void_p],
            "aclrtCreateEvent": [ctypes.POINTER(c_void_p)], "aclrtDestroyEvent": [c_void_p],
            "aclrtRecordEvent": [c_void_p, c_void_p], "aclrtSynchronizeEvent": [c_void_p],
            "aclrtEventElapsedTime": [f32p, c_void_p, c_void_p],
        }
        for name, argtypes in sig.items():
            fn = getattr(L, name)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
        L.aclGetRecentErrMsg.argtypes = []
        L.aclGetRecentErrMsg.restype = ctypes.c_char_p

    def check(self, call: str, code: int) -> None:
        if code != 0:
            try:
                raw = self.lib.aclGetRecentErrMsg()
            except (AttributeError, OSError):
                raw = None
            raise AclError(call, int(code), raw.decode(errors="replace") if raw else "")

    def call(self, name: str, *args: object) -> None:
        self.check(name, getattr(self.lib, name)(*args))

    # -- device, stream, memory ------------------------------------------------------------------------------------
    def init(self, device: int) -> c_void_p:
        self.call("aclInit", None)
        self.call("aclrtSetDevice", device)
        stream = c_void_p()
        self.call("aclrtCreateStream", ctypes.byref(stream))
        return stream

    def shutdown(self, device: int, stream: c_void_p) -> None:
        self.call("aclrtDestroyStream", stream)
        self.call("aclrtResetDevice", device)
        self.call("aclFinalize")

    def malloc(self, nbytes: int) -> c_void_p:
        ptr = c_void_p()
        self.call("aclrtMalloc", ctypes.byref(ptr), max(int(nbytes), 1), MALLOC_HUGE_FIRST)
        return ptr

    def to_device(self, data: bytes) -> c_void_p:
        ptr = self.malloc(len(data))
        if data:
            buf = ctypes.create_string_buffer(data, len(data))
            self.call("aclrtMemcpy", ptr, len(data), buf, len(data), MEMCPY_HOST_TO_DEVICE)
        return ptr

    def to_host(self, ptr: c_void_p, nbytes: int) -> bytes:
        if nbytes == 0:
            return b""
        buf = ctypes.create_string_buffer(nbytes)
        self.call("aclrtMemcpy", buf, nbytes, ptr, nbytes, MEMCPY_DEVICE_TO_HOST)
        return buf.raw

    def memset(self, ptr: c_void_p, nbytes: int, value: int) -> None:
        if nbytes:
            self.call("aclrtMemset", ptr, nbytes, value, nbytes)

    def memset_async(self, ptr: c_void_p, nbytes: int, value: int, stream: c_void_p) -> None:
        if nbytes:
            self.call("aclrtMemsetAsync", ptr, nbytes, value, nbytes, stream)

    def free(self, ptr: c_void_p) -> None:
        self.call("aclrtFree", ptr)

    def sync(self, stream: c_void_p) -> None:
        self.call("aclrtSynchronizeStream", stream)

    # -- events (device timing) ------------------------------------------------------------------------------------
    def event(self) -> c_void_p:
        ev = c_void_p()
        self.call("aclrtCreateEvent", ctypes.byref(ev))
        return ev

    def record(self, ev: c_void_p, stream: c_void_p) -> None:
        self.call("aclrtRecordEvent", ev, stream)

    def elapsed_ms(self, start: c_void_p, end: c_void_p) -> float:
        self.call("aclrtSynchronizeEvent", end)
        ms = ctypes.c_float()
        self.call("aclrtEventElapsedTime", ctypes.byref(ms), start, end)
        return float(ms.value)

    def destroy_event(self, ev: c_void_p) -> None:
        self.call("aclrtDestroyEvent", ev)


class KernelLibrary:
    """A kernel-launch library's C entry: uint32_t <symbol>(uint32_t blockDim, void* stream, void* args...)."""

    def __init__(self, path: Path, symbol: str, nargs: int) -> None:
        self.lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        self.symbol = symbol
        self.fn = getattr(self.lib, symbol)
        self.fn.argtypes = [ctypes.c_uint32, c_void_p] + [c_void_p] * nargs
        self.fn.restype = ctypes.c_uint32

    def launch(self, acl: Acl, block_dim: int, stream: c_void_p, args: Sequence[c_void_p]) -> None:
        acl.check(self.symbol, self.fn(block_dim, stream, *args))


class AclnnTensors:
    """aclCreateTensor/aclDestroyTensor from libnnopbase (where the aclnn samples link them from)."""

    def __init__(self, lib_dirs: Sequence[Path]) -> None:
        self.lib = _load_first(("libnnopbase.so",), lib_dirs)
        i64p = ctypes.POINTER(ctypes.c_int64)
        self.lib.aclCreateTensor.argtypes = [i64p, ctypes.c_uint64, ctypes.c_int, i64p, ctypes.c_int64, ctypes.c_int,
                                             i64p, ctypes.c_uint64, c_void_p]
        self.lib.aclCreateTensor.restype = c_void_p
        self.lib.aclDestroyTensor.argtypes = [c_void_p]
        self.lib.aclDestroyTensor.restype = ctypes.c_int

    def create(self, shape: Sequence[int], acl_dtype: int, data: c_void_p) -> c_void_p:
        n = len(shape)
        dims = (ctypes.c_int64 * max(n, 1))(*shape)
        strides = [1] * n
        for i in range(n - 2, -1, -1):
            strides[i] = strides[i + 1] * max(int(shape[i + 1]), 1)
        st = (ctypes.c_int64 * max(n, 1))(*strides)
        tensor = self.lib.aclCreateTensor(dims, n, acl_dtype, st, 0, FORMAT_ND, dims, n, data)
        if not tensor:
            raise AclError("aclCreateTensor", -1, "returned null")
        return c_void_p(tensor)

    def destroy(self, tensor: c_void_p) -> None:
        self.lib.aclDestroyTensor(tensor)


def find_symbol_library(symbol: str, names: Sequence[str], dirs: Sequence[Path]) -> ctypes.CDLL | None:
    """The first library among names (searched in dirs) that exports symbol, or None."""
    for name in names:
        for d in dirs:
            path = d / name
            if not path.exists():
                continue
            try:
                lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            if hasattr(lib, symbol):
                return lib
    return None
