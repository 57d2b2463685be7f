"""Host memory a call needs, checked against what this process can still get before anything is allocated.

A call whose output cannot fit would otherwise be allocated and filled first: under an address-space limit that is a
MemoryError after seconds of work, and in a container with a cgroup memory limit the kernel's OOM killer ends the
process without a message. The limits read here are the ones that end a process on Linux: the memory the system can
still hand out (MemAvailable + SwapFree), the cgroup's limit above its current use (v2 memory.max, v1
memory.limit_in_bytes, for the process's cgroup and every ancestor) and RLIMIT_AS above the current address space.
"""
from __future__ import annotations

import math
import resource
from pathlib import Path

from .errors import OutputTooLarge
from .validation import Call

_PROC = Path("/proc")
_CGROUP = Path("/sys/fs/cgroup")


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB' (binary units, as memory is sized)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # "max" (v2: no limit) and anything unexpected: None


def _meminfo() -> int | None:
    fields: dict[str, int] = {}
    try:
        for line in (_PROC / "meminfo").read_text().splitlines():
            name, _, rest = line.partition(":")
            parts = rest.split()
            if parts and parts[0].isdigit():
                fields[name] = int(parts[0]) * 1024
    except OSError:
        return None
    if "MemAvailable" not in fields:
        return None
    return fields["MemAvailable"] + fields.get("SwapFree", 0)


def _cgroup_headroom() -> list[tuple[int, str]]:
    """(bytes left under the limit, which limit) for every limited cgroup the process is in, v2 and v1."""
    found: list[tuple[int, str]] = []
    try:
        lines = (_PROC / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # v2
            base, limit_file, use_file = _CGROUP, "memory.max", "memory.current"
        elif "memory" in controllers.split(","):  # v1
            base, limit_file, use_file = _CGROUP / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        d = base / path.lstrip("/")
        while True:
            limit, used = _read_int(d / limit_file), _read_int(d / use_file)
            if limit is not None and used is not None and limit < 1 << 60:  # v1 spells "no limit" as ~2^63
                swap = _read_int(d / "memory.swap.max") if controllers == "" else None
                swap_used = _read_int(d / "memory.swap.current") if swap is not None else None
                room = max(0, limit - used) + (max(0, swap - (swap_used or 0)) if swap is not None else 0)
                found.append((room, f"cgroup {d / limit_file}"))
            if d == base or d.parent == d:
                break
            d = d.parent
    return found


def _address_space_headroom() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        for line in (_PROC / "self" / "status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return max(0, soft - int(line.split()[1]) * 1024)
    except OSError:
        return None
    return None


def available() -> tuple[int, str] | None:
    """The most host memory this process can still allocate and the limit that sets it; None when unknown (not
    Linux). A fresh read every time: memory comes and goes."""
    limits: list[tuple[int, str]] = []
    system = _meminfo()
    if system is not None:
        limits.append((system, "MemAvailable + SwapFree"))
    limits += _cgroup_headroom()
    rlimit = _address_space_headroom()
    if rlimit is not None:
        limits.append((rlimit, "RLIMIT_AS (ulimit -v)"))
    return min(limits) if limits else None


def call_bytes(call: Call) -> tuple[int, int]:
    """(the output's bytes, the host bytes a call needs in all): the output (as allocated for the kernel) and the
    kernel's compacted copies of the inputs (broadcast dims read once, in the kernel's dtypes)."""
    out = math.prod(call.out_shape) * call.out_dtype.itemsize
    need = out + 96  # device_allocation's alignment and padding
    if call.launch:
        kd = call.kernel_dtypes
        for role, arr in call.inputs.items():
            compact = math.prod(n if st != 0 else 1 for n, st in zip(arr.shape, arr.strides))
            need += compact * kd[role].itemsize
    return out, need


def require(call: Call) -> None:
    """Refuse a call whose memory this process cannot get (OutputTooLarge, a MemoryError naming the sizes), before
    anything is allocated."""
    out, need = call_bytes(call)
    limit = available()
    if limit is None or need <= limit[0]:
        return
    shape = "x".join(map(str, call.out_shape)) or "a scalar"
    raise OutputTooLarge(f"{call.op.name}: the output ({shape}, {call.out_dtype.label}) takes {format_bytes(out)} "
                         f"and the call needs {format_bytes(need)} of host memory, but only "
                         f"{format_bytes(limit[0])} can be allocated ({limit[1]}); nothing was allocated")
