"""lossgrad.profile: the public view of one call's output, tiling, counters and modelled time, on every op and
default SoC; invalid calls refused as the op functions refuse them."""
from __future__ import annotations

import math

import numpy as np
import pytest

import lossgrad
from lossgrad import golden
from lossgrad.errors import LossGradError
from lossgrad.registry import OPS, get_op, runs_on
from lossgrad.socs import VERIFY_DEFAULT_SOCS

rng = np.random.default_rng(11)
PIPES = {"MTE2", "MTE3", "V", "S"}
COUNTER_KEYS = {"gm_bytes_read", "gm_bytes_written", "vec_repeats", "vec_calls", "dma_calls", "tiles_per_core",
                "ub_peak", "event_ids_peak"}


def _inputs(shape=(64, 300)):
    return [rng.uniform(-2, 2, shape).astype(np.float32) for _ in range(3)]


@pytest.mark.parametrize("soc", VERIFY_DEFAULT_SOCS)
@pytest.mark.parametrize("op", list(OPS))
def test_profile_every_op_and_soc(op: str, soc: str) -> None:
    g, s, t = _inputs()
    absent = get_op(op).absent_optional  # the optional inputs, left out (before the reduction)
    if not runs_on(op, soc):  # aclnn refuses every dtype there (KlDivTarget on 310P/910): so does the profile
        with pytest.raises(LossGradError) as info:
            lossgrad.profile(op, g, s, t, *absent, "sum", soc=soc)
        assert info.value.code == 161002
        return
    p = lossgrad.profile(op, g, s, t, *absent, "sum", soc=soc)
    ref = getattr(golden, op)(g, s, t, *absent, "sum", compute="float32", soc=soc)
    np.testing.assert_array_equal(p.output, ref)  # no exp, no sum (same shapes): bit-exact in aclnn's order
    assert p.op == op and p.soc == soc and p.block_dim >= 1
    assert COUNTER_KEYS <= set(p.counters)
    nbytes = g.nbytes + t.nbytes + (s.nbytes if get_op(op).kernel_reads_self else 0)  # KL never reads self
    # Each input byte read and each output byte written once; 310P/910, without DataCopyPad, re-read and rewrite a
    # few whole 32-byte blocks at row and core boundaries (docs/kernels.md)
    slack = 1.0 if p.tiling.get("modes") is None or soc not in ("Ascend310P3", "Ascend910A") else 1.05
    assert nbytes <= p.counters["gm_bytes_read"] <= slack * nbytes
    assert p.output.nbytes <= p.counters["gm_bytes_written"] <= slack * p.output.nbytes
    assert p.counters["vec_repeats"] > 0 and p.counters["dma_calls"] > 0
    assert p.tiling["block_dim"] == p.block_dim
    t_ = p.timing
    assert t_ is not None and t_.soc == soc
    assert t_.total_us >= t_.roofline_us > 0       # a cold call is never faster than its HBM roofline
    assert t_.bound in PIPES | {"latency"}
    assert len(t_.per_core) == p.block_dim and all(set(c) == PIPES for c in t_.per_core)
    text = p.describe()                           # the time with its band, % of roofline with its band
    assert f"{t_.total_us:.1f} us" in text and "band" in text and "% of roofline" in text


def test_profile_op_by_any_name_and_without_timing() -> None:
    g, s, t = _inputs((8, 40))
    by_short = lossgrad.profile("mse", g, s, t, timing=False)
    by_aclnn = lossgrad.profile("aclnnMseLossBackward", g, s, t, timing=False)
    by_api = lossgrad.profile("mse_loss_backward", g, s, t, timing=False)
    for p in (by_short, by_aclnn, by_api):
        assert p.timing is None and p.op == "mse_loss_backward"
        np.testing.assert_array_equal(p.output, by_short.output)


def test_profile_attrs_reach_the_kernel() -> None:
    g, s, t = _inputs((8, 40))
    p = lossgrad.profile("smooth_l1", g, s, t, "none", beta=0.25, timing=False)
    np.testing.assert_array_equal(p.output, golden.smooth_l1_loss_backward(g, s, t, "none", beta=0.25,
                                                                           compute="float32"))
    k = lossgrad.profile("kl_div", g, s, t, "batchmean", log_target=True, timing=False)
    # exp(target) on the vector unit is not bit-identical to NumPy's: CANN's float32 bound (docs/verify.md)
    np.testing.assert_allclose(k.output, golden.kl_div_backward(g, s, t, "batchmean", log_target=True),
                               rtol=2e-6, atol=1e-9)


def test_profile_counts_broadcast_inputs_once() -> None:
    g = np.float32(1.5) * np.ones((), np.float32)
    s = rng.uniform(-2, 2, (256, 512)).astype(np.float32)
    t = rng.uniform(-2, 2, (512,)).astype(np.float32)
    p = lossgrad.profile("l1", g, s, t, "none", timing=False)
    # the streamed input once; each broadcast input at most once per core (resident in UB, never re-read per row)
    low = g.nbytes + s.nbytes + t.nbytes
    assert low <= p.counters["gm_bytes_read"] <= low + (p.block_dim - 1) * (g.nbytes + t.nbytes)
    assert p.counters["gm_bytes_written"] == s.nbytes


def test_profile_of_a_call_that_launches_nothing() -> None:
    e = np.zeros((0, 4), np.float32)
    p = lossgrad.profile("l1", e, e, e, "none")
    assert p.block_dim == 0 and p.timing is None and p.output.shape == (0, 4)
    assert p.counters["gm_bytes_read"] == 0 and p.counters["vec_repeats"] == 0


@pytest.mark.parametrize("bad", [
    dict(op="nope"), dict(reduction="batchmean"), dict(attrs={"beta": 1.0}), dict(timing="yes"), dict(l2="hot")])
def test_profile_refuses_invalid_calls(bad: dict) -> None:
    g, s, t = _inputs((4, 4))
    with pytest.raises(LossGradError) as exc:
        lossgrad.profile(bad.get("op", "l1"), g, s, t, bad.get("reduction", "mean"),
                         timing=bad.get("timing", False), l2=bad.get("l2", "cold"), **bad.get("attrs", {}))
    assert exc.value.code == 161002


def test_profile_null_input() -> None:
    g, s, _ = _inputs((4, 4))
    with pytest.raises(LossGradError) as exc:
        lossgrad.profile("mse", g, s, None)
    assert exc.value.code == 161001



def test_profile_checks_its_arguments_before_compiling(tmp_path, monkeypatch) -> None:
    """auto_sync='off' (a string) is refused before any kernel library is compiled or anything allocated."""
    monkeypatch.setenv("LOSSGRAD_CACHE", str(tmp_path / "cache"))
    g, s, t = _inputs((8, 40))
    with pytest.raises(LossGradError, match="auto_sync: expected True, False or None, got str 'off'"):
        lossgrad.profile("mse", g, s, t, auto_sync="off")
    assert not (tmp_path / "cache").exists()


def test_profile_tiling_keeps_the_structs_modes_field() -> None:
    """`modes` is LossGradTilingData's field (2 bits per input); the per-input names are `operand_modes`."""
    from lossgrad.tiling import data as td
    g, s, t = _inputs((8, 40))
    p = lossgrad.profile("mse", g, s[:1], t, "sum", timing=False)
    assert isinstance(p.tiling["modes"], int)
    from lossgrad.registry import INPUT_ROLES
    assert p.tiling["operand_modes"] == {r: td.MODES[p.tiling["modes"] >> (2 * INPUT_ROLES.index(r)) & 3]
                                         for r in p.tiling["operand_modes"]}
    assert p.tiling["operand_modes"]["self"] == "row"
