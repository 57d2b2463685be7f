"""PyTorch's own OpInfo samples (torch.testing._internal.common_methods_invocations.op_db) through each op's drop-in:
every sample torch's test suite runs for the loss, in float32, float16 and bfloat16, gives torch's gradients (the
input's from our kernel, judged against torch's float64 autograd by CANN's precision standard; the target's as the
drop-in declares). The OpInfo an op's drop-in stands in for is its folder's test fact `OPINFO`."""
from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch's internal test module imports it (the [test] extra installs it)

import lossgrad.torch  # noqa: E402,F401  (registers the ops and drop-ins before their folders are read)

from _torch_support import assert_within_standard, op_fact  # noqa: E402

from lossgrad import precision  # noqa: E402
from lossgrad.dtypes import DType  # noqa: E402
from lossgrad.registry import OPS, op_part  # noqa: E402

WITH_OPINFO = [op for op in OPS.values() if op_fact(op, "OPINFO", None)]


def _samples(name: str, dtype: torch.dtype) -> list[Any]:
    from torch.testing._internal.common_methods_invocations import op_db
    info = next(o for o in op_db if o.name == name)
    return list(info.sample_inputs("cpu", dtype, requires_grad=True))


def _grads(fn: Any, sample: Any, dtype: torch.dtype, rounded: torch.dtype | None = None
           ) -> tuple[torch.Tensor, ...]:
    """The gradients of every tensor the sample differentiates, computed in `dtype` on the sample's values rounded
    to `rounded` first (the values the lower-precision call saw)."""
    def cast(v: Any) -> Any:
        if not isinstance(v, torch.Tensor):
            return v
        return v.detach().to(rounded or dtype).to(dtype).requires_grad_(v.requires_grad)
    x = cast(sample.input)
    args = [cast(a) for a in sample.args]
    kwargs = {k: (cast(v).detach() if isinstance(v, torch.Tensor) else v) for k, v in sample.kwargs.items()}
    loss = fn(x, *args, **kwargs)
    leaves = [t for t in (x, *args) if isinstance(t, torch.Tensor) and t.requires_grad]
    grads = torch.autograd.grad(loss, leaves, torch.ones_like(loss))
    return grads


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16],
                         ids=["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", WITH_OPINFO, ids=[op.template for op in WITH_OPINFO])
def test_opinfo_samples_give_torchs_gradients(op: Any, dtype: torch.dtype) -> None:
    loss = op_part(op, "torch_facts").LOSS
    samples = _samples(op_fact(op, "OPINFO", None), torch.float32)
    assert samples, op.name
    for i, sample in enumerate(samples):
        what = f"{op.template} OpInfo sample {i} {dtype}: {tuple(sample.input.shape)} {sample.kwargs}"
        ours = _grads(loss.function, sample, dtype)
        want = _grads(loss.torch_function, sample, torch.float64, rounded=dtype)
        torchs = _grads(loss.torch_function, sample, dtype)
        assert len(ours) == len(want), what
        for k, (g, w, t) in enumerate(zip(ours, want, torchs)):
            assert g.dtype == dtype, what
            if k == 1 and op_fact(op, "TARGET_GRAD", "kernel") == "torch":  # the drop-in's is torch's own
                torch.testing.assert_close(g, t, rtol=0, atol=0, equal_nan=True, msg=what)
            elif dtype == torch.float16 and bool((w.abs() < 2.0 ** -14).any()):
                # results in float16's subnormal range have a spacing of 2^-24, where no relative bound holds: the
                # normal ones are judged by the standard, all of them by the absolute part of the mixed standard
                # (as tests/python/golden judges such results)
                normal = w.abs() >= 2.0 ** -14
                assert_within_standard(g[normal], w[normal], f"{what} gradient {k} (normal results)")
                result = precision.compare(g.double().numpy(), w.numpy(), DType.FLOAT16, "mixed")
                assert result.passed, f"{what} gradient {k}: {result.describe()}"
            else:
                assert_within_standard(g, w, f"{what} gradient {k}")
