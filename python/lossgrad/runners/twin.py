"""Run a validated call on the twin: kernel views of the inputs, tiling, rendered kernel, launch."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import codegen
from ..dtypes import DType
from ..registry import get_op
from ..tiling import TilingPlan
from ..twin import KernelFault, Report, run_kernel
from ..twin.build import BUNDLE_ENTRY, build, bundle_key, cache_root, cache_space
from ..validation import Call
from .kernel_args import kernel_view, prepare

__all__ = ["TwinRun", "run_twin", "device_allocation", "check_padding", "PADDING", "kernel_view", "default_auto_sync",
           "AUTO_SYNC_ENV", "use_bundle", "clear_bundles", "registered_bundles", "restore_bundles"]

UNWRITTEN = 0xFF  # output bytes start as NaN patterns, so an element the kernel never writes cannot pass
PADDING = 0xA5  # the allocation's bytes past the output (device_allocation): any change is a fault
# "on" (default) models bisheng --cce-auto-sync=on, CANN's default and what the project's builds use; "off" demands
# every S<->V/MTE2/MTE3 synchronisation in the kernel source. `lossgrad verify --auto-sync` sets it.
AUTO_SYNC_ENV = "LOSSGRAD_TWIN_AUTO_SYNC"


def default_auto_sync() -> bool:
    value = os.environ.get(AUTO_SYNC_ENV, "on").strip().lower()
    if value not in ("on", "off"):
        raise ValueError(f"{AUTO_SYNC_ENV} must be 'on' or 'off', got {value!r}")
    return value == "on"


@dataclass(frozen=True)
class TwinRun:
    output: np.ndarray
    report: Report
    plan: TilingPlan
    inputs: dict[str, np.ndarray]  # the kernel views the kernel read (broadcast views compacted)


def run_twin(call: Call, auto_sync: bool | None = None, timing: bool = False, l2: str = "cold",
             undetermined: str = "check") -> TwinRun:
    """Launch the call's kernel on the twin; `auto_sync` None takes the LOSSGRAD_TWIN_AUTO_SYNC setting; `timing`
    adds the time model's figures to the report (report.timing, docs/timing.md), with the inputs' L2 state `l2`
    ("cold": a first call, "warm": the same call ran just before); `undetermined` as run_kernel's (device behaviour
    public sources leave open: "check" faults when the output depends on it)."""
    if auto_sync is None:
        auto_sync = default_auto_sync()
    args = prepare(call)
    bundled = _bundles.get((call.op.name, call.soc.name, tuple(args.dtypes[r] for r in codegen.kernel_roles(call.op))))
    if bundled is not None:
        source, index, kernels = bundled
        name, tiling_key = BUNDLE_ENTRY, bundle_key(index, args.tiling.tiling_key)

        def render() -> Path:
            return codegen.cached_bundle(kernels, cache_root())
    else:
        name, tiling_key = call.op.entry_name, args.tiling.tiling_key

        def render() -> Path:
            return codegen.cached_kernel(call.op, args.dtypes, cache_root())
        with cache_space("writing a kernel source"):
            source = render()
            # Built here first only to name the kernel in the progress notice; run_kernel's build is then a hit.
            build(source, name, len(call.op.kernel_inputs) + 3, call.soc,
                  label=codegen.bundle_label(call.op, args.dtypes))
    # A launch still running after a second says so itself (twin.run_kernel), naming the kernel and its size.
    label = f"{codegen.bundle_label(call.op, args.dtypes)} ({int(np.prod(call.iter_shape)):,} elements)"
    out_bytes = int(np.prod(call.out_shape)) * call.out_dtype.np_dtype.itemsize
    device = device_allocation(out_bytes)
    device[:out_bytes] = UNWRITTEN
    inputs = args.ordered(call)
    gm = inputs + [device, workspace(args.tiling.workspace_bytes), args.tiling.data]
    scratch = (len(inputs) + 1,)  # the workspace: cross-core partial sums, nobody's result after the launch
    try:
        report = run_kernel(source, name, args.tiling.block_dim, gm, soc=call.soc, tiling_key=tiling_key,
                            auto_sync=auto_sync, timing=timing, label=label,
                            undetermined=undetermined, l2=l2, scratch=scratch)
    except FileNotFoundError:  # the kernel cache was deleted meanwhile (the README calls it safe to delete)
        with cache_space("writing a kernel source"):
            source = render()
        report = run_kernel(source, name, args.tiling.block_dim, gm, soc=call.soc, tiling_key=tiling_key,
                            auto_sync=auto_sync, timing=timing, label=label,
                            undetermined=undetermined, l2=l2, scratch=scratch)
    check_padding(device, out_bytes)
    out = device[:out_bytes].view(call.out_dtype.np_dtype).reshape(call.out_shape)
    return TwinRun(output=out, report=report, plan=args.tiling, inputs=args.inputs)


def device_allocation(nbytes: int) -> np.ndarray:
    """A GM buffer for `nbytes` as CANN allocates device memory: ALIGN_UP(nbytes, 32) + 32 bytes from a 64-byte
    aligned start (aclrtMalloc, and every segment of a self-managed pool: CANN aclrtMalloc / aclrtMallocAlign32
    约束说明). The bytes past `nbytes` hold PADDING, which check_padding expects back unchanged."""
    size = (nbytes + 31) // 32 * 32 + 32
    raw = np.empty(size + 64, np.uint8)
    start = -raw.ctypes.data % 64
    buf = raw[start:start + size]
    buf[nbytes:] = PADDING
    return buf


def check_padding(buf: np.ndarray, nbytes: int) -> None:
    """The allocation's bytes past the tensor may be rewritten (a whole-block copy, 910's tiny outputs), but only
    with the values they hold: on a device they may be another tensor's bytes in the same storage."""
    bad = np.flatnonzero(buf[nbytes:] != PADDING)
    if bad.size:
        raise KernelFault(f"the kernel changed {bad.size} byte(s) of the output's allocation past its {nbytes} bytes "
                          f"(first at byte {nbytes + int(bad[0])}): bytes beyond a tensor must be written back "
                          "unchanged")


def workspace(size: int) -> np.ndarray:
    """The user workspace the tiling asks for, as CANN hands it over: uninitialised (filled with 0xFF here, so a
    kernel that relies on zeros fails) and 64-byte aligned like a device allocation."""
    raw = np.full(size + 64, 0xFF, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + size]


# Bundles: `lossgrad verify` builds one library per architecture holding every kernel its cases need
# (codegen.cached_bundle; one compile instead of one per kernel) and registers it here. A call whose kernel is in a
# registered bundle is launched from it: the same rendered kernel source, compiled in a namespace of the bundle.
# (op, SoC, dtypes) -> (source, index, every kernel of the bundle: to render it again if the cache was deleted)
_bundles: dict[tuple[str, str, tuple[DType, ...]], tuple[Path, int, tuple[tuple[str, Mapping[str, DType]], ...]]] = {}


def use_bundle(source: Path, kernels: Sequence[tuple[str, Mapping[str, DType]]], socs: Iterable[str]) -> None:
    """Launch these kernels (op, dtypes by role), on these SoCs, from the bundle `source` (kernel i at index i)."""
    socs = list(socs)
    every = tuple((op, dict(dtypes)) for op, dtypes in kernels)
    for i, (op, dtypes) in enumerate(kernels):
        for soc in socs:
            key = tuple(dtypes[r] for r in codegen.kernel_roles(op))
            _bundles[(get_op(op).name, soc, key)] = (Path(source), i, every)


def clear_bundles() -> None:
    _bundles.clear()


def registered_bundles() -> dict[tuple[str, str, tuple[DType, ...]], Any]:
    """A copy of the registrations, for restore_bundles."""
    return dict(_bundles)


def restore_bundles(saved: dict[tuple[str, str, tuple[DType, ...]], Any]) -> None:
    """The registrations as registered_bundles saw them (verify's in-process runs register their libraries)."""
    _bundles.clear()
    _bundles.update(saved)
