"""The C++ tiling core as a shared library: built with g++ on first use, cached, loaded with ctypes.

lossgrad_tiling::Compute (op_host/tiling_core/lossgrad_tiling_core.cpp) is the only implementation of the tiling;
CANN's TilingFunc runs it on the host of a device, and this module runs the same source for every Python caller
(runners, verify, bench, `lossgrad tiling`). The sources come from lossgrad.project_files.project_root(), i.e. the
checkout or the copy an installed wheel carries, with the two generated headers (lossgrad_tiling_tables.h from
lossgrad.tiling.cxx_tables, lossgrad_tiling_data.h from lossgrad.tiling.data).

The cache key covers the compiler's version and flags, every source file and both generated headers. The sources
are copied into a temporary directory in the layout the core expects (op_host/tiling_core/, op_kernel/), compiled
there and the library is renamed into place, under an flock: concurrent processes (pytest-xdist, verify workers)
build it once and never see a partial file (the same scheme as lossgrad.twin.build).
"""
from __future__ import annotations

import ctypes
import fcntl
import hashlib
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ACLNN_ERR_INNER_TILING_ERROR, LossGradError
from ..project_files import project_root
from ..twin.build import (CXX, TMP_MARK, _compiler_version, _discard_damaged, _loadable, _remove_temporaries,
                          _run_compiler, cache_root, cache_space, install, sweep_stale)
from . import cxx_tables
from . import data as td

CORE_DIR = "op_host/tiling_core"
CAPI_SOURCE = "op_host/tiling_capi/lossgrad_tiling_capi.cpp"
ABI_VERSION = 4  # lossgrad_tiling_capi.cpp kAbiVersion
ENTRY = "lossgrad_tiling_compute"  # the C ABI's entry: a cached library without it is damaged
MAX_RANK = 8     # lossgrad_tiling::kMaxRank (the generated tables static_assert it against registry.MAX_RANK)
CXXFLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wpedantic",
            "-Wshadow", "-Wconversion", "-Werror")

STATUS_OK, STATUS_INVALID, STATUS_UNSUPPORTED, STATUS_INTERNAL = 0, 1, 2, 3
_STATUS_NAMES = {STATUS_INVALID: "invalid argument", STATUS_UNSUPPORTED: "unsupported", STATUS_INTERNAL: "internal"}
_MESSAGE_BYTES = 256


class TilingError(LossGradError):
    """The tiling core refused a call (aclnn's ACLNN_ERR_INNER_TILING_ERROR); `status` is lossgrad_tiling::Status."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(ACLNN_ERR_INNER_TILING_ERROR, f"tiling ({_STATUS_NAMES.get(status, status)}): {message}")


class NativeBuildError(RuntimeError):
    """The tiling core does not compile (a broken checkout or a compiler without C++17)."""


@dataclass(frozen=True)
class NativeResult:
    block_dim: int
    tiling_key: int
    workspace_bytes: int
    ub_bytes: int     # UB the kernel's buffer plan allocates at the tile length
    data: bytes       # packed LossGradTilingData
    check_complete: bool = True  # the plan check walked every tile (lossgrad_plan_check.h kMaxWalkTiles)


@dataclass(frozen=True)
class BuiltLibrary:
    path: Path
    cached: bool
    seconds: float    # compile time (0 when cached)


def _sources() -> dict[str, bytes]:
    """Relative path -> content of everything the library is compiled from (sources and generated headers)."""
    root = project_root()
    files = {f"{CORE_DIR}/{p.name}": p.read_bytes() for p in sorted((root / CORE_DIR).glob("*"))
             if p.is_file() and p.suffix in (".h", ".cpp") and p.name != cxx_tables.TABLES_HEADER}
    files[CAPI_SOURCE] = (root / CAPI_SOURCE).read_bytes()
    files[f"{CORE_DIR}/{cxx_tables.TABLES_HEADER}"] = cxx_tables.c_tables_header().encode()
    files["op_kernel/lossgrad_tiling_data.h"] = td.c_header().encode()
    from ..codegen import WALK_HEADERS  # codegen imports this package: a late import

    for name in WALK_HEADERS:  # the plan check's tile walk
        files[f"op_kernel/{name}"] = (root / "op_kernel" / name).read_bytes()
    return files


def build() -> BuiltLibrary:
    """The library for the current sources: from the cache, or compiled now (seconds, once per change)."""
    files = _sources()
    h = hashlib.sha256()
    h.update(_compiler_version().encode())
    h.update(repr((CXX, CXXFLAGS, ABI_VERSION)).encode())
    for rel, content in sorted(files.items()):
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256(content).digest())
    out_dir = cache_root() / "tiling" / h.hexdigest()[:32]
    lib = out_dir / "liblossgrad_tiling.so"
    if lib.exists() and _loadable(lib, ENTRY):
        return BuiltLibrary(lib, True, 0.0)
    t0 = time.perf_counter()
    with cache_space("compiling the tiling core"):
        sweep_stale()
        out_dir.mkdir(parents=True, exist_ok=True)
        with open(out_dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if lib.exists():
                    if _loadable(lib, ENTRY):
                        return BuiltLibrary(lib, True, 0.0)
                    _discard_damaged(lib)  # then rebuilt below, as the twin's kernel libraries are
                _remove_temporaries(out_dir)  # a dead process's (this lock is ours)
                with tempfile.TemporaryDirectory(dir=out_dir, prefix=TMP_MARK) as tmp:
                    for rel, content in files.items():
                        path = Path(tmp) / rel
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_bytes(content)
                    tmp_lib = Path(tmp) / lib.name
                    core = Path(tmp) / CORE_DIR
                    cmd = [CXX, *CXXFLAGS, f"-I{core}", "-o", str(tmp_lib), str(Path(tmp) / CAPI_SOURCE),
                           *sorted(str(core / rel.rsplit("/", 1)[1]) for rel in files
                                   if rel.startswith(CORE_DIR + "/") and rel.endswith(".cpp"))]
                    status, stderr = _run_compiler(cmd, "the tiling core", tmpdir=Path(tmp))
                    if status != 0:
                        raise NativeBuildError(f"the tiling core ({project_root() / CORE_DIR}) does not compile:\n"
                                               f"{stderr.strip()[-4000:]}")
                    install(tmp_lib, lib)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    return BuiltLibrary(lib, False, time.perf_counter() - t0)


_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_loaded: BuiltLibrary | None = None


def library() -> ctypes.CDLL:
    """The loaded library (built or found once per process)."""
    global _lib, _loaded
    with _lock:
        if _lib is None:
            built = build()
            lib = ctypes.CDLL(str(built.path))
            if lib.lossgrad_tiling_abi_version() != ABI_VERSION:
                raise NativeBuildError(f"{built.path}: tiling C ABI version {lib.lossgrad_tiling_abi_version()}, "
                                       f"expected {ABI_VERSION}")
            f = lib.lossgrad_tiling_compute
            u32p, u64p = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
            i32p, i64p = ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int64)
            # op, num_inputs, absent, ranks, dims, dtypes, logical ranks and dims, reduction, beta, log_target,
            # core_num, ub_bytes, npu_arch, kl_fold_tiles (lossgrad_tiling_capi.cpp), then the outputs
            call = [ctypes.c_int32, ctypes.c_int32, ctypes.c_uint32, i32p, i64p, i32p, i32p, i64p, ctypes.c_int32,
                    ctypes.c_double, ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32, ctypes.c_uint32]
            f.argtypes = call + [u32p, u64p, u64p, u64p, ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint32, u32p, i32p,
                                 ctypes.c_char_p, ctypes.c_uint32]
            f.restype = ctypes.c_int32
            c = lib.lossgrad_tiling_check
            c.argtypes = call + [ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint32, ctypes.c_uint64, ctypes.c_char_p,
                                 ctypes.c_uint32]
            c.restype = ctypes.c_int32
            lib.lossgrad_tiling_data_capacity.restype = ctypes.c_uint32
            _lib, _loaded = lib, built
        return _lib


def loaded() -> BuiltLibrary | None:
    """How the library of this process was obtained (None before the first call)."""
    return _loaded


def _u(value: int, bits: int, what: str) -> int:
    if not 0 <= value < 1 << bits:
        raise TilingError(STATUS_INVALID, f"{what} {value} does not fit an unsigned {bits}-bit integer")
    return value


def _shapes(shapes: "list[tuple[int, ...]] | tuple[tuple[int, ...], ...]") -> tuple[ctypes.Array, ctypes.Array]:
    """Ranks and row-major dims (MAX_RANK slots each) of these shapes, as the C ABI takes them."""
    ranks = (ctypes.c_int32 * len(shapes))()
    dims = (ctypes.c_int64 * (len(shapes) * MAX_RANK))()
    for t, shape in enumerate(shapes):
        if len(shape) > MAX_RANK:
            raise TilingError(STATUS_INVALID, f"rank {len(shape)} is above {MAX_RANK}")
        ranks[t] = len(shape)
        for d, n in enumerate(shape):
            if not 0 <= n < 1 << 63:
                raise TilingError(STATUS_INVALID, f"dim {n} is outside int64")
            dims[t * MAX_RANK + d] = n
    return ranks, dims


def _dtypes(inputs: cxx_tables.CoreInputs) -> ctypes.Array:
    """The tensors' dtypes as the C ABI takes them: one per kernel input, then the output's; the ranks and dims
    arrays have the same length."""
    n = len(inputs.inputs)
    return (ctypes.c_int32 * (n + 1))(*(d.acl_enum for _, d in (*inputs.inputs, inputs.output)))


def compute(inputs: cxx_tables.CoreInputs) -> NativeResult:
    """lossgrad_tiling::Compute for these Inputs; TilingError when the core refuses them."""
    lib = library()
    ranks, dims = _shapes([shape for shape, _ in (*inputs.inputs, inputs.output)])
    dtypes = _dtypes(inputs)
    logical_ranks, logical_dims = _shapes(inputs.logical) if inputs.logical is not None else (None, None)
    block_dim, data_size, complete = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_int32()
    key, workspace, ub = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
    capacity = lib.lossgrad_tiling_data_capacity()
    data = (ctypes.c_uint8 * capacity)()
    message = ctypes.create_string_buffer(_MESSAGE_BYTES)
    status = lib.lossgrad_tiling_compute(
        inputs.op, len(inputs.inputs), inputs.absent, ranks, dims, dtypes, logical_ranks, logical_dims,
        inputs.reduction, inputs.beta,
        int(inputs.log_target),
        _u(inputs.core_num, 32, "core_num"), _u(inputs.ub_bytes, 64, "ub_bytes"), inputs.npu_arch,
        _u(inputs.kl_fold_tiles, 32, "kl_fold_tiles"),
        ctypes.byref(block_dim), ctypes.byref(key), ctypes.byref(workspace), ctypes.byref(ub), data, capacity,
        ctypes.byref(data_size), ctypes.byref(complete), message, _MESSAGE_BYTES)
    if status != STATUS_OK:
        raise TilingError(status, message.value.decode(errors="replace"))
    if data_size.value != td.SIZE:
        raise TilingError(STATUS_INTERNAL, f"the core returned {data_size.value} bytes of tiling data, the struct "
                                           f"has {td.SIZE}")
    return NativeResult(block_dim=block_dim.value, tiling_key=key.value, workspace_bytes=workspace.value,
                        ub_bytes=ub.value, data=bytes(data[:data_size.value]), check_complete=bool(complete.value))


def check(inputs: cxx_tables.CoreInputs, data: bytes, workspace_bytes: int) -> None:
    """The plan check (op_host/tiling_core/lossgrad_plan_check.cpp) of packed tiling data for the call `inputs`
    describe; TilingError (status internal, with the violation) when the plan is not safe. compute() runs it on every
    plan it returns; this lets tests check altered plans."""
    lib = library()
    ranks, dims = _shapes([shape for shape, _ in (*inputs.inputs, inputs.output)])
    dtypes = _dtypes(inputs)
    logical_ranks, logical_dims = _shapes(inputs.logical) if inputs.logical is not None else (None, None)
    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    message = ctypes.create_string_buffer(_MESSAGE_BYTES)
    status = lib.lossgrad_tiling_check(
        inputs.op, len(inputs.inputs), inputs.absent, ranks, dims, dtypes, logical_ranks, logical_dims,
        inputs.reduction, inputs.beta,
        int(inputs.log_target), _u(inputs.core_num, 32, "core_num"), _u(inputs.ub_bytes, 64, "ub_bytes"),
        inputs.npu_arch, _u(inputs.kl_fold_tiles, 32, "kl_fold_tiles"), buf, len(data),
        _u(workspace_bytes, 64, "workspace_bytes"), message, _MESSAGE_BYTES)
    if status != STATUS_OK:
        raise TilingError(status, message.value.decode(errors="replace"))
