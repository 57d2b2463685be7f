"""The public functions: validation first, the twin by default here, out=, broadcast views, backends."""
from __future__ import annotations


import ml_dtypes
import numpy as np
import pytest

import lossgrad
from lossgrad import golden
from lossgrad.errors import BackendUnavailable
from lossgrad.registry import OPS
from lossgrad.runners import resolve_backend
from lossgrad.runners.twin import run_twin
from lossgrad.validation import validate

rng = np.random.default_rng(7)


def _inputs(shape=(37, 19), dtype=np.float32):
    return [rng.uniform(-3, 3, shape).astype(dtype) for _ in range(3)]


@pytest.mark.parametrize("name", list(OPS))
def test_positional_call_matches_golden(name: str) -> None:
    g, s, t = _inputs()
    fn, ref = getattr(lossgrad, name), getattr(golden, name)
    absent = OPS[name].absent_optional  # aclnn's order: the optional inputs before the reduction
    out = fn(g, s, t, *absent, 2, backend="twin")  # reduction as aclnn's integer (2 = sum)
    np.testing.assert_array_equal(out, ref(g, s, t, *absent, "sum", compute="float32"))


def test_default_backend_is_the_twin_without_a_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)  # no CANN, hence no device
    assert resolve_backend("auto") == "twin"


def test_cann_backends_fail_fast_without_cann(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    g, s, t = _inputs((8,))
    for backend in ("cpu", "sim", "npu"):
        with pytest.raises(BackendUnavailable, match="ASCEND_HOME_PATH"):
            lossgrad.mse_loss_backward(g, s, t, backend=backend)


def test_unknown_backend_is_an_invalid_call() -> None:
    g, s, t = _inputs((8,))
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.l1_loss_backward(g, s, t, backend="gpu")
    assert e.value.code == 161002 and "backend" in e.value.message


def test_validation_runs_before_any_backend() -> None:
    g, s, t = _inputs((8,))
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.l1_loss_backward(None, s, t, backend="npu")
    assert e.value.code == 161001


def test_out_array_is_written_like_grad_input() -> None:
    g, s, t = _inputs((6, 5))
    buf = np.zeros((6, 10), np.float16)
    view = buf[:, ::2]  # a strided output, as aclnn's ViewCopy allows
    res = lossgrad.smooth_l1_loss_backward(g, s, t, "none", 0.5, out=view, backend="twin")
    assert res is view
    expected = golden.smooth_l1_loss_backward(g, s, t, "none", 0.5, out_dtype="float16", compute="float32")
    np.testing.assert_array_equal(view, expected)
    assert not buf[:, 1::2].any()  # nothing else of the caller's array touched


def test_out_shape_and_dtype_errors() -> None:
    g, s, t = _inputs((6, 5))
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.l1_loss_backward(g, s, t, out=np.zeros((5, 6), np.float32))
    assert e.value.code == 161002 and "gradInput" in e.value.message
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.l1_loss_backward(g, s, t, out=np.zeros((6, 5), np.float32), out_dtype="float16")
    assert e.value.code == 161002


def test_integer_inputs_are_promoted_for_l1() -> None:
    g = rng.integers(-3, 4, (10,)).astype(np.int32)
    s, t = _inputs((10,))[1:]
    out = lossgrad.l1_loss_backward(g, s, t, "none", backend="twin")
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, golden.l1_loss_backward(g, s, t, "none", compute="float32"))


def test_broadcast_views_are_read_at_their_own_size() -> None:
    row = rng.uniform(-1, 1, (1, 4096)).astype(np.float32)
    s = np.broadcast_to(row, (256, 4096))  # a stride-0 view: never materialised
    g, _, t = _inputs((256, 4096))
    call = validate("mse_loss_backward", g, s, t, "none")
    r = run_twin(call)
    assert r.inputs["self"].shape == (1, 4096)
    self_buffer = [io.role for io in call.op.kernel_inputs].index("self")
    assert r.report.buffers[self_buffer].read_bytes == row.nbytes  # column split: the row is read once in total
    np.testing.assert_array_equal(r.output, golden.compute_call(call, "float32"))


def test_bfloat16_on_a2_and_rejected_on_310p() -> None:
    g, s, t = _inputs((33,), ml_dtypes.bfloat16)
    out = lossgrad.kl_div_backward(g, s, np.abs(t), "batchmean", True, soc="A2", backend="twin")
    assert out.dtype == ml_dtypes.bfloat16
    with pytest.raises(lossgrad.LossGradError) as e:
        lossgrad.kl_div_backward(g, s, np.abs(t), soc="310P", backend="twin")
    assert e.value.code == 161002


def test_empty_and_zero_d() -> None:
    e = np.zeros((0, 3), np.float32)
    assert lossgrad.l1_loss_backward(e, e, e, backend="twin").shape == (0, 3)
    z = np.float32(2.0)
    out = lossgrad.mse_loss_backward(np.array(z), np.array(z), np.array(np.float32(1.0)), "sum", backend="twin")
    assert out.shape == () and float(out) == 4.0
