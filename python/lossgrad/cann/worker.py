"""Subprocess entry for device runs: ``python -m lossgrad.cann.worker JOB.json``.

Runs in its own process so that the loader sees the run's LD_LIBRARY_PATH and a crashing kernel or driver cannot
take the caller down. Reads tensors from .bin files, launches a kernel-launch library through its C entry (ctypes)
and/or calls an aclnn two-stage API, writes the primary output, and prints one JSON line: {"ok": true, ...} only
when every ACL call (aclrtSynchronizeStream included) returned 0. With "bench", each repetition is timed with
device events after an L2 flush (a large device memset on the same stream), the kernel and the aclnn op alternating
A/B/A/B.
"""
from __future__ import annotations

import ctypes
import json
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

from .acl import Acl, AclError, AclnnTensors, KernelLibrary, find_symbol_library

SYSTEM_WORKSPACE = 16 * 1024 * 1024  # as the kernel-launch samples allocate for a direct launch
CANARY = 0xFF  # the output's fill byte before a launch: an output of nothing else means the kernel never stored


ABSENT = "-"  # an input path that stands for an absent optional input (runner.ABSENT_INPUT)


def _read(path: str) -> bytes:
    return Path(path).read_bytes()


class KernelRun:
    def __init__(self, acl: Acl, spec: dict[str, Any], out_ptr: ctypes.c_void_p) -> None:
        self.acl = acl
        self.block_dim = int(spec["block_dim"])
        # "-": an absent optional input, a null GM address the kernel never reads
        self.inputs = [ctypes.c_void_p(None) if p == ABSENT else acl.to_device(_read(p)) for p in spec["inputs"]]
        self.tiling = acl.to_device(_read(spec["tiling"]))
        self.workspace = acl.malloc(SYSTEM_WORKSPACE + int(spec.get("workspace_bytes", 0)))
        self.args = [*self.inputs, out_ptr, self.workspace, self.tiling]
        self.lib = KernelLibrary(Path(spec["library"]), spec["symbol"], len(self.args))

    def launch(self, stream: ctypes.c_void_p) -> None:
        self.lib.launch(self.acl, self.block_dim, stream, self.args)

    def free(self) -> None:
        for p in [*self.inputs, self.tiling, self.workspace]:
            if p.value:
                self.acl.free(p)


class AclnnRun:
    """An aclnn two-stage call: <fn>GetWorkspaceSize(args..., &ws, &executor) then <fn>(ws, size, executor, stream).
    The executor is single-use (ops-nn docs/zh/context/two_phase_api.md), so every launch runs both stages."""

    _CTYPES = {"int64": ctypes.c_int64, "float": ctypes.c_float, "double": ctypes.c_double, "bool": ctypes.c_bool,
               "string": ctypes.c_char_p}

    def __init__(self, acl: Acl, spec: dict[str, Any], out_ptr: ctypes.c_void_p | None) -> None:
        self.acl = acl
        dirs = [Path(d) for d in spec.get("lib_dirs", [])]
        self.tensors = AclnnTensors(dirs)
        name = spec["function"]
        lib = find_symbol_library(name + "GetWorkspaceSize", spec["libraries"], dirs)
        if lib is None:
            raise AclError(name, -1, f"no library among {spec['libraries']} in {', '.join(map(str, dirs))} exports it")
        self.first = getattr(lib, name + "GetWorkspaceSize")
        self.second = getattr(lib, name)
        self.name = name
        self.buffers: list[ctypes.c_void_p] = []
        self.handles: list[ctypes.c_void_p] = []
        self.values: list[Any] = []
        argtypes: list[Any] = []
        self.out_ptr = out_ptr
        for arg in spec["args"]:
            if arg["kind"] == "scalar":
                ctype = self._CTYPES[arg["ctype"]]
                value = arg["value"].encode() if arg["ctype"] == "string" else arg["value"]
                self.values.append(ctype(value))
                argtypes.append(ctype)
                continue
            if arg["kind"] == "null":  # an absent optional tensor: aclnn takes a null aclTensor*
                self.values.append(ctypes.c_void_p(None))
                argtypes.append(ctypes.c_void_p)
                continue
            if arg["kind"] == "tensor":
                ptr = acl.to_device(_read(arg["path"]))
                self.buffers.append(ptr)
            else:  # the output tensor: the caller's buffer, or a scratch one when timing only
                if self.out_ptr is None:
                    self.out_ptr = acl.malloc(int(arg["bytes"]))
                    self.buffers.append(self.out_ptr)
                ptr = self.out_ptr
            handle = self.tensors.create(arg["shape"], int(arg["acl_dtype"]), ptr)
            self.handles.append(handle)
            self.values.append(handle)
            argtypes.append(ctypes.c_void_p)
        self.first.argtypes = argtypes + [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p)]
        self.first.restype = ctypes.c_int
        self.second.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p]
        self.second.restype = ctypes.c_int
        self.workspace: ctypes.c_void_p | None = None
        self.workspace_size = 0

    def prepare(self) -> ctypes.c_void_p:
        size = ctypes.c_uint64(0)
        executor = ctypes.c_void_p()
        self.acl.check(self.name + "GetWorkspaceSize", self.first(*self.values, ctypes.byref(size),
                                                                  ctypes.byref(executor)))
        if size.value > self.workspace_size:
            if self.workspace is not None:
                self.acl.free(self.workspace)
            self.workspace = self.acl.malloc(size.value)
            self.workspace_size = size.value
        return executor

    def launch(self, stream: ctypes.c_void_p, executor: ctypes.c_void_p | None = None) -> None:
        executor = executor if executor is not None else self.prepare()
        self.acl.check(self.name, self.second(self.workspace, self.workspace_size, executor, stream))

    def free(self) -> None:
        for h in self.handles:
            self.tensors.destroy(h)
        for p in self.buffers + ([self.workspace] if self.workspace is not None else []):
            self.acl.free(p)


def _time(acl: Acl, stream: ctypes.c_void_p, flush: tuple[ctypes.c_void_p, int] | None, rep: int,
          launch: Callable[[], None]) -> float:
    if flush is not None:
        acl.memset_async(flush[0], flush[1], rep & 0xFF, stream)
    start, end = acl.event(), acl.event()
    acl.record(start, stream)
    launch()
    acl.record(end, stream)
    ms = acl.elapsed_ms(start, end)
    acl.sync(stream)
    acl.destroy_event(start)
    acl.destroy_event(end)
    return ms


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    acl = Acl()
    device = int(job.get("device", 0))
    stream = acl.init(device)
    out_bytes = int(job["output"]["bytes"])
    out_ptr = acl.malloc(out_bytes)
    acl.memset(out_ptr, out_bytes, CANARY)
    kernel = KernelRun(acl, job["kernel"], out_ptr) if job.get("kernel") else None
    primary_aclnn = job.get("primary") == "aclnn"
    result: dict[str, Any] = {"ok": False}
    aclnn = None
    if job.get("aclnn"):
        try:
            aclnn = AclnnRun(acl, job["aclnn"], out_ptr if primary_aclnn else None)
        except (AclError, OSError, AttributeError) as exc:
            if primary_aclnn or not job["aclnn"].get("optional"):
                raise
            result["aclnn_error"] = f"{type(exc).__name__}: {exc}"  # a comparison only: report, carry on
    first = aclnn if primary_aclnn else kernel
    if first is None:
        raise ValueError("job has nothing to run")
    first.launch(stream)
    acl.sync(stream)  # a kernel that faulted or never ran reports here
    Path(job["output"]["path"]).write_bytes(acl.to_host(out_ptr, out_bytes))

    bench = job.get("bench")
    if bench:
        flush_bytes = int(bench.get("flush_bytes", 0))
        flush = (acl.malloc(flush_bytes), flush_bytes) if flush_bytes else None
        times: dict[str, list[float]] = {"kernel": [], "aclnn": []}
        for rep in range(int(bench.get("warmup", 2)) + int(bench["reps"])):
            measured = rep >= int(bench.get("warmup", 2))
            if kernel is not None:
                ms = _time(acl, stream, flush, rep, lambda: kernel.launch(stream))
                if measured:
                    times["kernel"].append(ms)
            if aclnn is not None:
                executor = aclnn.prepare()  # host-side first stage, outside the timed region
                ms = _time(acl, stream, flush, rep, lambda: aclnn.launch(stream, executor))
                if measured:
                    times["aclnn"].append(ms)
        if flush is not None:
            acl.free(flush[0])
        result["times_ms"] = {k: v for k, v in times.items() if v}

    for part in (kernel, aclnn):
        if part is not None:
            part.free()
    acl.free(out_ptr)
    acl.shutdown(device, stream)
    result["ok"] = True
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m lossgrad.cann.worker JOB.json", file=sys.stderr)
        return 2
    try:
        result = run_job(json.loads(Path(argv[1]).read_text()))
    except Exception as exc:  # reported as data: the parent turns it into a clear error
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}",
                          "traceback": traceback.format_exc()}))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
