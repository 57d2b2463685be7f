"""The edges of the torch integration: mixed devices refused as aten refuses them, the drop-ins' gradient under CPU
autocast and for every float dtype mix torch accepts (judged by torch's own tolerance for the dtype), the wrappers'
scalar types, dtypes without a NumPy view, and torch.func's transforms."""
from __future__ import annotations

import itertools
import re
from typing import Any, Callable

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch.func import grad, vjp, vmap  # noqa: E402

import lossgrad.runners.twin as twin_runner  # noqa: E402
import lossgrad.torch as lt  # noqa: E402
from lossgrad.errors import LossGradError  # noqa: E402
from lossgrad.registry import OPS as REGISTRY, op_part  # noqa: E402

from _torch_support import drop_in_ops, op_fact, rand  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using a target size:UserWarning",
                                        "ignore:reduction. 'mean' divides:UserWarning")

OPS = list(REGISTRY)  # every registered op
# label -> (our drop-in, torch's, keywords, spec): every registered op with its folder's keyword sets for these tests
# (test_facts.TORCH_EDGE_VARIANTS, default: the op's short name and no keywords)
LOSSES: dict[str, tuple[Callable[..., Any], Callable[..., Any], dict[str, Any], Any]] = {
    label: (op_part(op, "torch_facts").LOSS.function, op_part(op, "torch_facts").LOSS.torch_function, dict(kw), op)
    for op in drop_in_ops() for label, kw in op_fact(op, "TORCH_EDGE_VARIANTS", {op.template: {}}).items()}


def _target_grad(loss: str) -> bool:
    """torch differentiates the loss with respect to target (test_facts.TARGET_GRAD "none": it does not)."""
    return op_fact(LOSSES[loss][3], "TARGET_GRAD", "kernel") != "none"


def _broadcasts_input(loss: str) -> bool:
    return op_fact(LOSSES[loss][3], "TORCH_BROADCASTS_INPUT", True)
FLOATS = [torch.float32, torch.float16, torch.bfloat16]


@pytest.fixture
def kernel_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = twin_runner.run_twin
    monkeypatch.setattr(twin_runner, "run_twin", lambda call: (calls.append(call.op.name), real(call))[1])
    return calls


def _probability_target(loss: str) -> bool:
    *_, kw, op = LOSSES[loss]
    return op_fact(op, "TORCH_TARGET", "any") == "probability" and not kw.get("log_target")


def _inputs(loss: str, shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    if _probability_target(loss) and seed % 2:  # KL's target is a probability (log_target=False)
        return rand(shape, dtype, seed, scale=0.98).abs() + 0.01
    if _probability_input(loss) and not seed % 2:  # BCE's input is a probability too
        return rand(shape, dtype, seed, scale=0.98).abs() + 0.01
    return rand(shape, dtype, seed)


def _probability_input(loss: str) -> bool:
    return op_fact(LOSSES[loss][3], "TORCH_INPUT", "any") == "probability"


def _same_shape(loss: str) -> bool:
    """torch's function refuses a target of another size than the input (BCE)."""
    return op_fact(LOSSES[loss][3], "TORCH_SAME_SHAPE", False)


# -- item 1: mixed devices -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("devices", [d for d in itertools.product(["cpu", "meta"], repeat=3) if len(set(d)) == 2])
def test_mixed_devices_are_refused_like_aten(name: str, devices: tuple[str, ...]) -> None:
    tensors = [torch.ones(3, device=d) for d in devices]
    with pytest.raises(RuntimeError, match="not on the expected device"):
        torch.ops.aten.mse_loss_backward(*tensors, 1)  # aten's own refusal of the same call
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        getattr(torch.ops.lossgrad, name)(*tensors, *REGISTRY[name].absent_optional, 1)


@pytest.mark.parametrize("name", OPS)
def test_cpu_scalar_may_accompany_meta_tensors(name: str) -> None:
    g, s, t = torch.tensor(2.0), torch.ones(3, device="meta"), torch.ones(3, device="meta")
    assert torch.ops.aten.mse_loss_backward(g, s, t, 1).device.type == "meta"
    assert getattr(torch.ops.lossgrad, name)(g, s, t, *REGISTRY[name].absent_optional, 1).device.type == "meta"
    with pytest.raises(RuntimeError, match="same device"):  # a 0-d meta tensor is no CPU scalar
        getattr(torch.ops.lossgrad, name)(torch.tensor(2.0, device="meta"), torch.ones(3), torch.ones(3),
                                          *REGISTRY[name].absent_optional, 1)


# -- item 2: autocast and dtype mixes --------------------------------------------------------------------------------

def _grads(fn: Callable[..., Any], x: torch.Tensor, t: torch.Tensor, kw: dict[str, Any], autocast: bool,
           target_grad: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    x, t = x.detach().clone().requires_grad_(), t.detach().clone().requires_grad_(target_grad)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        loss = fn(x, t, **kw)
    loss.backward(torch.ones_like(loss))
    return x.grad, t.grad


def _assert_torch_close(ours: torch.Tensor, theirs: torch.Tensor, what: str) -> None:
    if ours is None or theirs is None:  # no gradient on either side (torch's target of soft margin)
        assert ours is None and theirs is None, what
        return
    assert ours.dtype == theirs.dtype, what
    torch.testing.assert_close(ours, theirs, msg=lambda m: f"{what}: {m}")  # torch's tolerance for the dtype


@pytest.mark.parametrize("target_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shapes", [((4, 6), (4, 6)), ((3, 1, 6), (4, 6))], ids=["same", "broadcast"])
@pytest.mark.parametrize("loss", list(LOSSES))
def test_autocast_bfloat16(loss: str, shapes: Any, target_dtype: torch.dtype, kernel_calls: list[str]) -> None:
    ours_fn, torch_fn, kw, _ = LOSSES[loss]
    x, t = _inputs(loss, shapes[0], torch.float32, 1 + 2 * len(loss)), _inputs(loss, shapes[1], torch.float32, 2)
    if _probability_target(loss):
        t = _inputs(loss, shapes[1], torch.float32, 3)
    if shapes[0] != shapes[1] and _same_shape(loss):
        pytest.skip("torch's function refuses a target of another size than the input (tests/torch/"
                    "test_torch_losses.py checks that the drop-in refuses it too)")
    if shapes[0] != torch.broadcast_shapes(shapes[0], shapes[1]) and not _broadcasts_input(loss):
        pytest.skip("torch's forward refuses an input smaller than the broadcast (tests/torch/test_torch_losses.py "
                    "checks that the drop-in refuses it too)")
    t = t.to(target_dtype)
    w = torch.nn.Linear(shapes[0][-1], shapes[0][-1])
    torch.nn.init.eye_(w.weight)

    def through_linear(fn: Callable[..., Any]) -> Callable[..., Any]:
        if _probability_input(loss):  # a probability: the sigmoid of a bfloat16 activation, as BCE is used
            return lambda a, b, **k: fn(torch.sigmoid(w(a)), b, **k)
        return lambda a, b, **k: fn(w(a), b, **k)  # a bfloat16 activation under autocast, as in training

    ours = _grads(through_linear(ours_fn), x, t, kw, autocast=True, target_grad=_target_grad(loss))
    theirs = _grads(through_linear(torch_fn), x, t, kw, autocast=True, target_grad=_target_grad(loss))
    assert kernel_calls, "the gradient must come from our kernel"
    _assert_torch_close(ours[0], theirs[0], "input gradient")
    _assert_torch_close(ours[1], theirs[1], "target gradient")


@pytest.mark.parametrize("dtypes", list(itertools.permutations(FLOATS, 2)), ids=lambda d: f"{d[0]}-{d[1]}")
@pytest.mark.parametrize("loss", list(LOSSES))
def test_dtype_mixes(loss: str, dtypes: tuple[torch.dtype, torch.dtype], kernel_calls: list[str]) -> None:
    ours_fn, torch_fn, kw, _ = LOSSES[loss]
    t_shape = (3, 5) if _same_shape(loss) else (5,)
    x, t = _inputs(loss, (3, 5), dtypes[0], 4), _inputs(loss, t_shape, dtypes[1], 7 if _probability_target(loss) else 5)
    try:
        theirs = _grads(torch_fn, x, t, kw, False, _target_grad(loss))
    except RuntimeError as exc:  # torch's function refuses the mix (BCE: "Found dtype Half but expected Float")
        with pytest.raises(RuntimeError, match=re.escape(str(exc))):
            _grads(ours_fn, x, t, kw, False, _target_grad(loss))
        return
    ours = _grads(ours_fn, x, t, kw, False, _target_grad(loss))
    assert kernel_calls
    for k, what in enumerate(("input gradient", "target gradient")):
        try:
            _assert_torch_close(ours[k], theirs[k], what)
        except AssertionError:
            if not op_fact(LOSSES[loss][3], "TORCH_MIXES_ROUND_EARLY", None):
                raise
            # torch's own is off where the op's facts say so: then ours must be at least as close to the float64 one
            exact = _grads(torch_fn, x.double(), t.double(), kw, False, _target_grad(loss))[k]
            assert (ours[k].double() - exact).abs().max() <= (theirs[k].double() - exact).abs().max(), \
                f"{what}: neither close to torch's nor closer to the float64 gradient"


# the losses of input - target (their target gradient is minus the input's), which torch computes for integer targets
@pytest.mark.parametrize("loss", [label for label, (*_, op) in LOSSES.items()
                                  if op_fact(op, "TARGET_GRAD", "kernel") == "kernel"])
def test_integer_target(loss: str) -> None:
    ours_fn, torch_fn, kw, _ = LOSSES[loss]
    x, t = rand((4, 3), torch.float16, 8).requires_grad_(), torch.arange(12).reshape(4, 3) % 3 - 1
    (a,) = torch.autograd.grad(ours_fn(x, t, **kw), x)
    (b,) = torch.autograd.grad(torch_fn(x, t, **kw), x)
    _assert_torch_close(a, b, "input gradient")


def test_float64_mix_is_refused_with_aclnn_code() -> None:
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(LossGradError) as info:
        lt.mse_loss(x, torch.zeros(3)).backward()
    assert info.value.code == 161002


# -- item 3: the wrappers' scalar types and dtypes without a NumPy view ---------------------------------------------

@pytest.mark.parametrize("call", [
    lambda g, s, t: lt.kl_div_backward(g, s, t, "mean", log_target=2),
    lambda g, s, t: lt.kl_div_backward(g, s, t, "mean", log_target=None),
    lambda g, s, t: lt.kl_div_backward(g, s, t, "mean", log_target=1),
    lambda g, s, t: lt.smooth_l1_loss_backward(g, s, t, "mean", beta=True),
    lambda g, s, t: lt.smooth_l1_loss_backward(g, s, t, "mean", beta="1"),
    lambda g, s, t: lt.mse_loss_backward(g, s, t, True),
    lambda g, s, t: lt.l1_loss_backward(g, s, t, None),
    lambda g, s, t: lt.kl_div_backward(g, s, t, 1.0),
], ids=["log_target=2", "log_target=None", "log_target=1", "beta=True", "beta='1'", "reduction=True",
        "reduction=None", "reduction=1.0"])
def test_wrapper_scalar_types(call: Callable[..., Any]) -> None:
    g, s, t = torch.ones(()), torch.ones(3), torch.zeros(3)
    with pytest.raises(LossGradError) as info:
        call(g, s, t)
    assert info.value.code == 161002


def test_wrapper_accepts_what_numpy_api_accepts() -> None:
    g, s, t = torch.ones(()), torch.ones(3), torch.zeros(3)
    assert lt.kl_div_backward(g, s, t, 2, log_target=True).shape == (3,)
    assert lt.smooth_l1_loss_backward(g, s, t, "sum", beta=1).shape == (3,)  # an int beta is a real number


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2, torch.complex32, torch.complex64,
                                   torch.uint16])
@pytest.mark.parametrize("name", OPS)
def test_dtypes_without_a_tensor_type(name: str, dtype: torch.dtype, device: str) -> None:
    g, s, t = torch.ones(()), torch.ones(3), torch.zeros(3)
    for position in range(3):
        args = [x.to(device) for x in (g, s, t)]
        args[position] = torch.zeros(args[position].shape, dtype=dtype, device=device)
        with pytest.raises(LossGradError) as info:
            getattr(torch.ops.lossgrad, name)(*args, *REGISTRY[name].absent_optional, 1)
        assert info.value.code == 161002 and "not a tensor dtype aclnn accepts" in str(info.value)


# -- item 4: torch.func --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", list(LOSSES))
def test_torch_func_transforms(loss: str, kernel_calls: list[str]) -> None:
    ours_fn, torch_fn, kw, _ = LOSSES[loss]
    x, t = _inputs(loss, (4, 5), torch.float32, 10), _inputs(loss, (4, 5), torch.float32,
                                                              13 if _probability_target(loss) else 11)
    for argnums in ((0, 1) if _target_grad(loss) else (0,)):
        _assert_torch_close(grad(lambda a, b: ours_fn(a, b, **kw), argnums=argnums)(x, t),
                            grad(lambda a, b: torch_fn(a, b, **kw), argnums=argnums)(x, t), f"grad {argnums}")
    assert kernel_calls
    ours_out, ours_vjp = vjp(lambda a: ours_fn(a, t, **kw), x)
    theirs_out, theirs_vjp = vjp(lambda a: torch_fn(a, t, **kw), x)
    _assert_torch_close(ours_vjp(torch.ones_like(ours_out))[0], theirs_vjp(torch.ones_like(theirs_out))[0], "vjp")
    # per-sample gradients: vmap over grad, the ops' vmap rule at work
    per_sample = vmap(grad(lambda a, b: ours_fn(a, b, **kw)))(x, t)
    _assert_torch_close(per_sample, vmap(grad(lambda a, b: torch_fn(a, b, **kw)))(x, t), "vmap(grad)")
    # second order through the ops' registered derivative
    hess_diag = grad(lambda a: grad(lambda z: ours_fn(z, t, **kw))(a).sum())(x)
    _assert_torch_close(hess_diag, grad(lambda a: grad(lambda z: torch_fn(z, t, **kw))(a).sum())(x), "grad(grad)")


@pytest.mark.parametrize("name", OPS)
def test_vmap_of_the_ops(name: str) -> None:
    g, s, t = torch.ones(3, 4), rand((3, 4), torch.float32, 1), rand((3, 4), torch.float32, 2).abs()
    op = getattr(torch.ops.lossgrad, name)
    batched = vmap(lambda a, b, c: op(a, b, c, *REGISTRY[name].absent_optional, "mean"))(g, s, t)
    # mean is per entry, not over the batch
    rows = torch.stack([op(g[i], s[i], t[i], *REGISTRY[name].absent_optional, "mean") for i in range(3)])
    assert torch.equal(batched, rows)


@pytest.mark.parametrize("name", OPS)
def test_functional_form_under_torch_func_grad(name: str) -> None:
    """torch.ops.lossgrad.* under torch.func.grad fails in torch's generated autograd.Function (documented);
    ops.functional(name) is the same op and derivative as a Function torch.func accepts."""
    from lossgrad.torch.ops import functional

    g, s, t = rand((3, 4), torch.float32, 1), rand((3, 4), torch.float32, 2), rand((3, 4), torch.float32, 3).abs()
    op = getattr(torch.ops.lossgrad, name)
    with pytest.raises(RuntimeError, match="setup_context"):
        grad(lambda x: op(x, s, t, *REGISTRY[name].absent_optional, "sum").sum())(g)
    ours = grad(lambda x: functional(name)(x, s, t, *REGISTRY[name].absent_optional, "sum").sum())(g)
    x = g.clone().requires_grad_()
    # the registered derivative, eager autograd
    (expected,) = torch.autograd.grad(op(x, s, t, *REGISTRY[name].absent_optional, "sum").sum(), x)
    assert torch.equal(ours, expected)
