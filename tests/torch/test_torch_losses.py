"""Drop-in losses: torch's gradient (float64 oracle, CANN's precision standard) from our kernels, for many shapes,
dtypes and reductions, including where aclnn and torch differ (mean under broadcasting, KL batchmean, beta = 0);
target gradients, weight, legacy arguments, nn.Module wrappers and double backward."""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import lossgrad.runners.twin as twin_runner  # noqa: E402
import lossgrad.torch as lt  # noqa: E402

from _torch_support import (DTYPES, assert_within_standard, drop_in_losses, drop_in_ops, op_fact,  # noqa: E402
                            probabilities, rand)

from lossgrad.registry import OPS, OutputShape, get_op, op_part  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using a target size:UserWarning",
                                        "ignore:reduction. 'mean' divides:UserWarning")

LOSSES = drop_in_losses()  # every registered op's drop-in, with its folder's keyword sets
# (input shape, target shape): equal, broadcast both ways (the mean divisors differ from aclnn's here), 0-d input.
SHAPES = [((4, 5), (4, 5)), ((3, 1, 5), (4, 5)), ((5,), (3, 5)), ((1, 4), (3, 4)), ((), (3,))]


@pytest.fixture
def kernel_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The op names the twin ran, so a test can tell the gradient came from our kernel."""
    calls: list[str] = []
    real = twin_runner.run_twin

    def spy(call: Any) -> Any:
        calls.append(call.op.name)
        return real(call)

    monkeypatch.setattr(twin_runner, "run_twin", spy)
    return calls


def _grads(fn: Callable[..., Any], x: torch.Tensor, t: torch.Tensor, reduction: str, kw: dict[str, Any],
           weight: torch.Tensor | None = None, target_grad: bool = True
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = x.detach().clone().requires_grad_()
    t = t.detach().clone().requires_grad_(target_grad)
    loss = fn(x, t, reduction=reduction, **kw) if weight is None else fn(x, t, reduction=reduction, weight=weight)
    w = rand(tuple(loss.shape), loss.dtype, 99) if loss.dim() else torch.ones((), dtype=loss.dtype)
    loss.backward(w)
    return loss.detach(), x.grad, t.grad


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("loss", list(LOSSES))
def test_gradients_match_torch(loss: str, dtype: str, kernel_calls: list[str]) -> None:
    ours_fn, torch_fn, kw, op = LOSSES[loss]
    reductions = [r.name.lower() for r in op.reductions]
    # "kernel": minus the input's; "target_kernel": another op's kernel (kl_div's: KlDivTarget); "torch": torch's own
    target_grad = op_fact(op, "TARGET_GRAD", "kernel")
    torch_target_grad = target_grad in ("torch", "none")  # aclnn has none: the drop-in's is torch's (or none)
    tg = target_grad != "none"
    kernel_sums = op.output_shape is OutputShape.SELF  # the kernel sums over the broadcast axes itself
    launches = 0
    for i, (x_shape, t_shape) in enumerate(SHAPES):
        x, t = rand(x_shape, DTYPES[dtype], 3 * i), rand(t_shape, DTYPES[dtype], 3 * i + 1)
        if op_fact(op, "TORCH_TARGET", "any") == "probability" and not kw.get("log_target"):
            t = t.abs()  # probabilities (log_target takes any real): torch's forward is NaN for negative targets
        x, t = probabilities(op, x, t)
        if op_fact(op, "TORCH_SAME_SHAPE", False) and x.shape != t.shape:
            with pytest.raises(ValueError) as theirs:  # torch's function refuses a target of another size
                torch_fn(x, t, **kw)
            with pytest.raises(ValueError, match=re.escape(str(theirs.value))):  # so do we, with torch's message
                ours_fn(x, t, **kw)
            continue
        if not op_fact(op, "TORCH_BROADCASTS_INPUT", True) and x.shape != torch.broadcast_shapes(x.shape, t.shape):
            for fn in (ours_fn, torch_fn):  # torch's forward refuses an input smaller than the broadcast: so do we
                with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
                    fn(x, t, **kw)
            continue
        for reduction in reductions:
            what = f"{loss} {dtype} {x_shape} {t_shape} {reduction}"
            loss_ours, gx, gt = _grads(ours_fn, x, t, reduction, kw, target_grad=tg)
            _, gx64, gt64 = _grads(torch_fn, x.double(), t.double(), reduction, kw, target_grad=tg)
            loss_ref, gx_ref, gt_ref = _grads(torch_fn, x, t, reduction, kw, target_grad=tg)
            torch.testing.assert_close(loss_ours, loss_ref, rtol=0, atol=0, equal_nan=True, msg=what)  # torch's
            if not tg:  # torch has no target gradient, and neither has the drop-in
                assert gt is None and gt_ref is None, what
                gt = gt64 = torch.zeros_like(t)
            elif torch_target_grad:  # aclnn has no target gradient: ours is torch's own, bit for bit
                torch.testing.assert_close(gt, gt_ref, rtol=0, atol=0, equal_nan=True, msg=what)
                gt, gt64 = gt_ref, gt_ref
            assert gx.dtype == x.dtype and gt.dtype == t.dtype, what
            full = torch.broadcast_shapes(x.shape, t.shape)
            if dtype == "float32" or (x.shape == full and t.shape == full):
                assert_within_standard(gx, gx64, what + " d/dinput")
                assert_within_standard(gt, gt64, what + " d/dtarget")
            else:
                # A 16-bit gradient summed over broadcast axes adds per-element gradients already rounded to the
                # dtype (by torch, as torch's own backward does), so a float64 oracle of the sum would judge the
                # summation's cancellation, not the kernel. Judge the per-element gradients (inputs materialised at
                # the broadcast shape: same values, same divisor) and require the sum to be torch's sum of them.
                launches += 1
                xf, tf = x.expand(full).contiguous(), t.expand(full).contiguous()
                _, gxf, gtf = _grads(ours_fn, xf, tf, reduction, kw, target_grad=tg)
                _, gxf64, gtf64 = _grads(torch_fn, xf.double(), tf.double(), reduction, kw, target_grad=tg)
                assert_within_standard(gxf, gxf64, what + " d/dinput per element")
                if not torch_target_grad:
                    assert_within_standard(gtf, gtf64, what + " d/dtarget per element")
                if target_grad == "kernel":  # torch sums minus the input's per-element gradients
                    assert torch.equal(gt, gtf.sum_to_size(t.shape)), what
                if kernel_sums:  # KL's kernel sums over the broadcast axes itself, in float32
                    if reduction != "batchmean" or x.shape[:1] == full[:1]:  # else xf changes torch's divisor
                        assert_within_standard(gx, gxf.float().sum_to_size(x.shape), what + " d/dinput sum")
                else:
                    assert torch.equal(gx, gxf.sum_to_size(x.shape)), what
            launches += 1
    assert kernel_calls.count(ours_fn.__name__ + "_backward") == launches


def test_kl_batchmean_uses_the_aclnn_divisor_where_it_agrees(kernel_calls: list[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Same dim 0: the op runs with batchmean; input dim 0 = 1 broadcast to 3: sum on grad / input.size(0)."""
    seen: list[int] = []
    real = twin_runner.run_twin

    def spy(call: Any) -> Any:
        seen.append(int(call.reduction))
        return real(call)

    monkeypatch.setattr(twin_runner, "run_twin", spy)
    for x_shape, expected in (((3, 4), 3), ((1, 4), 2)):
        x = rand(x_shape, torch.float32, 1).requires_grad_()
        lt.kl_div(x, rand((3, 4), torch.float32, 2), reduction="batchmean").backward()
    assert seen == [3, 2]


def test_weight_and_legacy_arguments() -> None:
    x, t = rand((4, 5), torch.float32, 1), rand((4, 5), torch.float32, 2)
    w = rand((4, 5), torch.float32, 3).abs() + 0.1
    for ours, ref in ((lt.l1_loss, F.l1_loss), (lt.mse_loss, F.mse_loss)):
        for reduction in ("none", "mean", "sum"):
            _, gx, _ = _grads(ours, x, t, reduction, {}, weight=w)
            _, gx_ref, _ = _grads(ref, x.double(), t.double(), reduction, {}, weight=w.double())
            assert_within_standard(gx, gx_ref, f"{ours.__name__} weight {reduction}")
        with pytest.raises(ValueError):
            ours(x, t, weight=w[:2])
    with pytest.warns(UserWarning):
        legacy = lt.mse_loss(x, t, size_average=False)
    assert torch.equal(legacy, F.mse_loss(x, t, reduction="sum"))


def test_modules_mirror_torch_nn() -> None:
    x, t = rand((4, 5), torch.float32, 1), rand((4, 5), torch.float32, 2)
    pairs = [(lt.L1Loss(reduction="sum"), torch.nn.L1Loss(reduction="sum")),
             (lt.MSELoss(), torch.nn.MSELoss()),
             (lt.SmoothL1Loss(beta=0.25), torch.nn.SmoothL1Loss(beta=0.25)),
             (lt.KLDivLoss(reduction="batchmean", log_target=True),
              torch.nn.KLDivLoss(reduction="batchmean", log_target=True))]
    for ours, ref in pairs:
        assert isinstance(ours, type(ref))
        xo, xr = x.clone().requires_grad_(), x.double().requires_grad_()
        ours(xo, t).backward()
        ref(xr, t.double()).backward()
        assert_within_standard(xo.grad, xr.grad, type(ours).__name__)


def test_every_drop_in_module_is_torchs_module_with_our_backward(kernel_calls: list[str]) -> None:
    """Each op folder's torch.nn module subclasses torch's namesake and, with its defaults, gives torch's gradient
    from our kernel."""
    x, t = rand((4, 5), torch.float32, 1), rand((4, 5), torch.float32, 2)
    for op in drop_in_ops():
        module, reference = op_part(op, "torch_facts").LOSS.module, op_part(op, "torch_facts").LOSS.torch_module
        assert issubclass(module, reference) and module is not reference, op.name
        target = t.abs() if op_fact(op, "TORCH_TARGET", "any") == "probability" else t
        xx, target = probabilities(op, x, target)
        xo, xr = xx.clone().requires_grad_(), xx.double().requires_grad_()
        module()(xo, target).backward()
        reference()(xr, target.double()).backward()
        assert_within_standard(xo.grad, xr.grad, module.__name__)
    assert set(kernel_calls) == {op.name for op in drop_in_ops()}


@pytest.mark.parametrize("loss", [next(label for label, (*_, o) in LOSSES.items() if o is op) for op in drop_in_ops()
                                  if op_fact(op, "DOUBLE_BACKWARD", True)])  # each op's first keyword set
def test_double_backward_matches_torch(loss: str) -> None:
    """create_graph=True through our op's registered derivative: Hessian-vector products equal torch's."""
    ours_fn, torch_fn, kw, op = LOSSES[loss]
    tg = op_fact(op, "TARGET_GRAD", "kernel") != "none"
    x, t, v = rand((3, 4), torch.float32, 1), rand((3, 4), torch.float32, 2), rand((3, 4), torch.float32, 3)
    x, t = probabilities(op, x, t)

    def hvp(fn: Callable[..., Any], dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        xx = x.to(dtype).requires_grad_()
        tt = t.to(dtype).requires_grad_(tg)
        (gx,) = torch.autograd.grad(fn(xx, tt, reduction="sum", **kw), xx, create_graph=True)
        return torch.autograd.grad((gx * v.to(dtype)).sum(), (xx, tt) if tg else (xx,), allow_unused=True,
                                   materialize_grads=True)

    for ours, ref in zip(hvp(ours_fn, torch.float32), hvp(torch_fn, torch.float64)):
        assert_within_standard(ours, ref, f"{loss} second derivative")


@pytest.mark.parametrize("loss", [label for label, (*_, op) in LOSSES.items()
                                  if op_fact(op, "TARGET_GRAD", "kernel") == "target_kernel"])
def test_target_gradient_double_backward_matches_torch(loss: str, kernel_calls: list[str]) -> None:
    """create_graph=True through the target gradient's own op (kl_div's: KlDivTarget's registered derivative), with
    target broadcast along the rows: Hessian-vector products with respect to input and target equal torch's."""
    ours_fn, torch_fn, kw, op = LOSSES[loss]
    x, t, v = rand((3, 4), torch.float32, 1), rand((4,), torch.float32, 2).abs() + 0.1, rand((4,), torch.float32, 3)

    def hvp(fn: Callable[..., Any], dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        xx, tt = x.to(dtype).requires_grad_(), t.to(dtype).requires_grad_()
        (gt,) = torch.autograd.grad(fn(xx, tt, reduction="mean", **kw), tt, create_graph=True)
        return torch.autograd.grad((gt * v.to(dtype)).sum(), (xx, tt), materialize_grads=True)

    for ours, ref in zip(hvp(ours_fn, torch.float32), hvp(torch_fn, torch.float64)):
        assert_within_standard(ours, ref, f"{loss} second derivative through the target gradient")
    assert kernel_calls.count(get_op("kl_div_target").name) == 1  # the target gradient came from the op


def test_soc_in_effect_at_backward_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel runs in backward(), so the lt.soc() block around backward() chooses the SoC."""
    seen: list[str] = []
    real = twin_runner.run_twin
    monkeypatch.setattr(twin_runner, "run_twin", lambda call: (seen.append(call.soc.name), real(call))[1])
    x, t = rand((4, 3), torch.float32, 1).requires_grad_(), rand((4, 3), torch.float32, 2)
    with lt.soc("Ascend910B4"):
        lt.mse_loss(x, t).backward()
    loss = lt.mse_loss(x, t)
    with lt.soc("Ascend910_9391"):
        loss.backward()
    assert seen == ["Ascend910B4", "Ascend910_9391"]


def test_a_drop_in_named_like_another_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from lossgrad.registry import OpFolderError

    first, second = list(lt.DROP_INS)[:2]
    monkeypatch.setitem(lt.DROP_INS, second, lt.DROP_INS[first])
    with pytest.raises(OpFolderError, match="already exported by the op folder"):
        lt._check_drop_in_names()


def test_a_pointwise_drop_in_passes_only_attributes_torch_takes() -> None:
    from lossgrad.torch.losses import pointwise_drop_in

    op = next(o for o in OPS.values() if o.attrs)  # an op with an attribute, against a torch loss without it
    with pytest.raises(TypeError, match="are not parameters of"):
        pointwise_drop_in(op, lambda input, target, reduction="mean": input, torch.nn.L1Loss, "torch")
