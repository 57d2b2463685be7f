"""The kernel cache's edges (issue 27): compilers die with the Python process that started them and their
temporaries are swept; a damaged library (a zeroed code page) is rebuilt, never loaded; LOSSGRAD_CACHE is taken as
a shell would take it; deleting the cache while calls run re-renders; a full disk names the cache; `lossgrad cache`
and `lossgrad cache clean`; the test suite's own cache."""
from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import lossgrad.twin.build  # noqa: F401  (the module; lossgrad.twin.build is also a function)
from lossgrad import codegen
from lossgrad.cli import main
from lossgrad.runners import twin as twin_runner
from lossgrad.validation import validate

build = sys.modules["lossgrad.twin.build"]

TINY_KERNEL = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void tiny(GM_ADDR x) {
    AscendC::GlobalTensor<int32_t> g;
    g.SetGlobalBuffer((__gm__ int32_t*)x, 1);
    if (AscendC::GetBlockIdx() == 0) { g.SetValue(0, g.GetValue(0) + 1); }
}
"""
RUN_TINY = """
import sys, numpy as np, lossgrad.twin as twin
x = np.zeros(1, np.int32)
report = twin.run_kernel(sys.argv[1], "tiny", 1, [x])
print(int(x[0]), report.cached)
"""
LOSSGRAD = [sys.executable, "-m", "lossgrad.cli"]


def _processes_with(cache: Path) -> list[str]:
    """Live processes whose command line or environment names this cache (compilers, their watchdog, workers)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1]
        except OSError:
            continue
        if state != "Z" and (str(cache).encode() in env or str(cache).encode() in cmd):
            found.append(cmd.replace(b"\0", b" ").decode(errors="replace")[:120])
    return found


def _wait_for_compiler(cache: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if any("cc1plus" in p for p in _processes_with(cache)):
            return
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"the compile never started: {proc.communicate()}")


def _gone(cache: Path, within: float = 5.0) -> list[str]:
    deadline = time.monotonic() + within
    while _processes_with(cache) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _processes_with(cache)


def _temporaries(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if build._is_temporary(p) or ".tmp" in p.name)


# -- compilers die with their parent; stale temporaries are swept -------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_compilers_die_with_a_python_program_that_dies(tmp_path: Path, sig: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A cancelled training job (SIGTERM, or SIGKILL) whose first call is compiling: the compiler must not outlive
    it, and the temporaries it leaves (here the ~80 MB precompiled header being written) go at the next build."""
    cache = tmp_path / "cache"
    src = tmp_path / "k.cpp"
    src.write_text(TINY_KERNEL)
    proc = subprocess.Popen([sys.executable, "-c", RUN_TINY, str(src)], env=dict(os.environ, LOSSGRAD_CACHE=str(cache)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for_compiler(cache, proc)
    # Kill once the compile has written something: on a loaded machine the compiler shows before its output.
    deadline = time.monotonic() + 60
    while not _temporaries(cache) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    assert _gone(cache) == []
    assert _temporaries(cache), "the killed compile left no temporary: nothing was tested"
    monkeypatch.setenv("LOSSGRAD_CACHE", str(cache))
    assert build.sweep_stale(force=True) >= 1
    assert _temporaries(cache) == []


def test_sighup_stops_verify_like_ctrl_c(tmp_path: Path) -> None:
    """A closed terminal: verify stops cleanly (compiles killed, one line, exit 128 + SIGHUP)."""
    cache = tmp_path / "cache"
    proc = subprocess.Popen(LOSSGRAD + ["verify", "--soc", "310P", "--op", "mse", "--limit", "40", "-j", "2"],
                            env=dict(os.environ, LOSSGRAD_CACHE=str(cache)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _wait_for_compiler(cache, proc)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGHUP, err
    assert err.strip().splitlines()[-1] == "lossgrad: error: terminated (SIGHUP)"
    assert _gone(cache) == []


def test_sigterm_to_bench_during_a_compile_leaves_no_compiler(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    proc = subprocess.Popen(LOSSGRAD + ["bench", "--op", "l1", "--elements", "4096", "--soc", "310P"],
                            env=dict(os.environ, LOSSGRAD_CACHE=str(cache)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _wait_for_compiler(cache, proc)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert _gone(cache) == []


def test_the_sweep_spares_live_builds_and_takes_dead_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path))
    live, dead, pch = tmp_path / "twin" / "live", tmp_path / "twin" / "dead", tmp_path / "twin" / "pch" / "k"
    kernels = tmp_path / "kernels" / "k"
    for d in (live, dead, pch, kernels):
        d.mkdir(parents=True)
    (live / f"{build.TMP_MARK}abc").mkdir()
    (dead / f"{build.TMP_MARK}def").mkdir()
    (dead / "tmpold").mkdir()  # an earlier version's build directory
    (dead / "tiny.so").write_bytes(b"kept")
    (pch / "twin_all.h.gch.tmp123.456").write_bytes(b"x")  # an earlier version's half-written header
    gone_pid = 2 ** 22 + 7  # above the default pid_max: no such process
    (kernels / f"k.cpp.tmp{gone_pid}.1").write_text("x")
    (kernels / f"k.cpp.tmp{os.getpid()}.1").write_text("x")  # this process is writing it
    with open(live / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a build in progress holds its directory's lock
        assert build.sweep_stale(force=True) == 4
    assert _temporaries(tmp_path) == [f"kernels/k/k.cpp.tmp{os.getpid()}.1", f"twin/live/{build.TMP_MARK}abc"]
    assert (dead / "tiny.so").read_bytes() == b"kept"


# -- damaged libraries ---------------------------------------------------------------------------------------------

def test_a_zeroed_code_page_is_detected_and_rebuilt(tmp_path: Path) -> None:
    """ELF headers intact, one page of code zeroed (as after a crash): the next call rebuilds it instead of dying
    of SIGSEGV."""
    env = dict(os.environ, LOSSGRAD_CACHE=str(tmp_path / "cache"))
    src = tmp_path / "k.cpp"
    src.write_text(TINY_KERNEL)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", RUN_TINY, str(src)], env=env, capture_output=True, text=True,
                              timeout=300)

    assert run().stdout.split() == ["1", "False"]
    (lib,) = (tmp_path / "cache" / "twin").glob("*/tiny.so")
    good = lib.read_bytes()
    text = _section(good, b".text")
    damaged = bytearray(good)
    damaged[text[0]:text[0] + text[1]] = bytes(text[1])
    lib.write_bytes(bytes(damaged))
    assert lib.read_bytes()[:64] == good[:64]
    r = run()
    assert r.returncode == 0 and r.stdout.split() == ["1", "False"], r.stdout + r.stderr  # rebuilt, it ran
    assert lib.read_bytes() == good
    assert run().stdout.split() == ["1", "True"]


def _section(elf: bytes, name: bytes) -> tuple[int, int]:
    """(file offset, size) of an ELF64 little-endian section."""
    import struct
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    strtab_off, = struct.unpack_from("<Q", elf, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        base = shoff + i * shentsize
        name_off, = struct.unpack_from("<I", elf, base)
        off, size = struct.unpack_from("<QQ", elf, base + 0x18)
        if elf[strtab_off + name_off:].split(b"\0", 1)[0] == name:
            return off, min(size, 4096)
    raise AssertionError(f"no {name!r} section")


def test_a_library_without_its_digest_is_not_loaded(tmp_path: Path) -> None:
    lib = tmp_path / "x.so"
    lib.write_bytes(b"\x7fELF")
    assert not build._loadable(lib)


# -- LOSSGRAD_CACHE ------------------------------------------------------------------------------------------------

def test_lossgrad_cache_is_taken_as_a_shell_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOSSGRAD_CACHE", "~/x")  # as a .env file or a Dockerfile ENV passes it
    assert build.cache_root() == tmp_path / "home" / "x"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOSSGRAD_CACHE", "rel/cache")
    assert build.cache_root() == tmp_path / "rel" / "cache" and build.cache_root().is_absolute()
    monkeypatch.setenv("LOSSGRAD_CACHE", "~no_such_user_lossgrad/x")
    with pytest.raises(build.CacheDirError, match="cannot expand '~no_such_user_lossgrad'"):
        build.cache_root()
    r = CliRunner().invoke(main, ["cache"])
    assert r.exit_code == 2 and r.output.startswith("lossgrad: error: LOSSGRAD_CACHE=") and len(
        r.output.splitlines()) == 1
    assert not (tmp_path / "~no_such_user_lossgrad").exists() and not (tmp_path / "~").exists()


def test_the_suite_has_a_cache_of_its_own() -> None:
    """The suite compiles hundreds of kernels: never into the user's ~/.cache/lossgrad (tests/conftest.py)."""
    chosen = os.environ.get("LOSSGRAD_TEST_SUITE_CACHE")
    if chosen is None:  # the caller set LOSSGRAD_CACHE: their explicit choice is kept
        assert os.environ.get("LOSSGRAD_CACHE")
        return
    assert build.cache_root() == Path(chosen)
    assert build.cache_root() != Path.home() / ".cache" / "lossgrad"
    assert ".pytest_cache" in build.cache_root().parts or ".lossgrad-cache" in build.cache_root().parts


# -- the cache deleted while calls run ----------------------------------------------------------------------------

def test_deleting_the_cache_while_verify_runs_renders_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README calls the cache safe to delete: a bundle registered by verify whose source (and library) were
    deleted meanwhile is rendered and built again, instead of FileNotFoundError for every later case."""
    import shutil

    from lossgrad.dtypes import DType

    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path / "cache"))
    kernels = [("mse_loss_backward", {r: DType.FLOAT32 for r in codegen.kernel_roles("mse_loss_backward")})]
    source = codegen.cached_bundle(kernels, build.cache_root())
    twin_runner.use_bundle(source, kernels, ["Ascend310P3"])
    try:
        shutil.rmtree(tmp_path / "cache")
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        out = twin_runner.run_twin(validate("mse", np.ones_like(x), x, np.zeros_like(x), "sum", soc="310P")).output
        np.testing.assert_array_equal(out, 2 * x)
        assert source.is_file()
    finally:
        twin_runner.clear_bundles()


# -- a full disk ---------------------------------------------------------------------------------------------------

def test_a_full_disk_under_the_cache_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing a kernel source into a full cache: one message naming the cache directory and LOSSGRAD_CACHE."""
    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path / "cache"))

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    x = np.ones(3, np.float32)
    with pytest.raises(OSError) as info:
        twin_runner.run_twin(validate("l1", x, x, x, "sum", soc="310P"))
    message = str(info.value)
    assert info.value.errno == errno.ENOSPC
    assert f"the kernel cache {tmp_path / 'cache'}" in message and "LOSSGRAD_CACHE" in message
    assert not [p for p in (tmp_path / "cache").rglob("*") if ".tmp" in p.name]


# -- lossgrad cache ------------------------------------------------------------------------------------------------

def test_cache_lists_and_cleans_only_what_lossgrad_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "shared"
    monkeypatch.setenv("LOSSGRAD_CACHE", str(root))
    for rel, size in (("twin/k1/a.so", 3000), ("twin/pch/p1/twin_all.h.gch", 5000), ("kernels/s/k.cpp", 100),
                      ("tiling/t/lib.so", 200)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"x" * size)
    (root / "notes.txt").write_text("the user's own file")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "c").mkdir(parents=True)
    (elsewhere / "c" / "keep").write_text("not the cache's")
    (root / "cann").symlink_to(elsewhere)
    r = CliRunner().invoke(main, ["cache"])
    assert r.exit_code == 0, r.output
    assert f"kernel cache: {root}" in r.output
    assert "twin/pch" in r.output and "4.9 KiB" in r.output and "8.1 KiB" in r.output  # the pch; the total
    r = CliRunner().invoke(main, ["cache", "clean"])
    assert r.exit_code == 0 and "8.1 KiB freed" in r.output, r.output
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]
    assert (elsewhere / "c" / "keep").read_text() == "not the cache's"
