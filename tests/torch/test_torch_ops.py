"""torch.ops.lossgrad.*: opcheck, results against lossgrad's own API (bit-identical: the same kernel) and the golden
model (CANN's precision standard), dtypes, strides, broadcasting, the SoC argument and context, validation errors in
the real and the fake kernels."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lossgrad  # noqa: E402
import lossgrad.golden  # noqa: E402
import lossgrad.torch as lt  # noqa: E402
from lossgrad.errors import LossGradError  # noqa: E402
from lossgrad.registry import OPS, Check, OutputShape, op_part  # noqa: E402
from lossgrad.torch._convert import to_numpy  # noqa: E402
from lossgrad.validation import shapes_accepted  # noqa: E402

from _torch_support import DTYPES, assert_within_standard, bits, rand  # noqa: E402

# every op's attributes at a value other than their default (a bool flipped, a float at 0.5)
ATTR_KW = {name: {a.name: (not a.default) if a.kernel_type == "Bool" else 0.5 for a in op.attrs}
           for name, op in OPS.items()}
ATTRS = {name: tuple(kw.values()) for name, kw in ATTR_KW.items()}

ALL_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")

# (grad shape, self shape, target shape, reduction): plain, broadcast, none with a full grad, empty, 0-d.
CASES = [
    ((), (4, 5), (4, 5), "mean"),
    ((), (3, 1, 5), (4, 5), "sum"),
    ((3, 4), (3, 4), (1, 4), "none"),
    ((3, 1), (3, 4), (3, 4), "none"),
    ((), (2, 3), (2, 3), 1),
    ((), (0, 3), (0, 3), "sum"),
    ((), (), (), "mean"),
]


def _inputs(case: tuple, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g_shape, s_shape, t_shape, _ = case
    return rand(g_shape, dtype, seed), rand(s_shape, dtype, seed + 1), rand(t_shape, dtype, seed + 2)


def test_each_op_has_the_int_and_str_overloads() -> None:
    for name in OPS:
        assert sorted(getattr(torch.ops.lossgrad, name).overloads()) == ["default", "str"]


@pytest.mark.parametrize("name", list(OPS))
def test_opcheck(name: str) -> None:
    """Schema, fake kernel, autograd registration and AOT dispatch with dynamic shapes (which runs the double
    backward) of the int overload; the str overload (a CompositeImplicitAutograd alias of it) without the AOT run,
    which would only repeat the int overload's (~1.5 s each)."""
    op = getattr(torch.ops.lossgrad, name)
    t_shape = (3, 4) if Check.TARGET_IS_SELF in OPS[name].checks else (1, 4)  # BCEWithLogits: self's shape
    g, s, t = rand((), torch.float32, 1), rand((3, 4), torch.float32, 2), rand(t_shape, torch.float32, 3)
    for overload, reduction, utils in ((op.default, 2, ALL_UTILS), (getattr(op, "str"), "mean", ALL_UTILS[:3])):
        args = (g.clone().requires_grad_(), s.clone().requires_grad_(), t.clone().requires_grad_(),
                *OPS[name].absent_optional, reduction, *ATTRS[name])
        result = torch.library.opcheck(overload, args, test_utils=utils)
        assert result == {u: "SUCCESS" for u in utils}, result


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("name", list(OPS))
def test_results_match_lossgrad_and_golden(name: str, dtype: str) -> None:
    fn = getattr(lt, name)
    for i, case in enumerate(CASES):
        if OPS[name].output_shape is OutputShape.SELF and case[1] == (3, 1, 5):
            continue  # KL's gradOutput must broadcast into broadcast(self, target); covered below
        if not shapes_accepted(name, case[0], case[1], case[2]):
            continue  # BCE: gradOutput and target must broadcast into self (tests/python/test_validation_errors.py)
        g, s, t = _inputs(case, DTYPES[dtype], 10 * i)
        reduction = case[3]
        ours = fn(g, s, t, *OPS[name].absent_optional, reduction, *ATTRS[name])
        arrays = [to_numpy(x) for x in (g, s, t)] + list(OPS[name].absent_optional)
        reference = getattr(lossgrad, name)(*arrays, reduction, **ATTR_KW[name], backend="twin")
        assert ours.dtype == s.dtype and tuple(ours.shape) == reference.shape, (case, ours.shape)
        assert np.array_equal(bits(ours).reshape(-1), reference.view(bits(ours).dtype).reshape(-1)), case
        golden = getattr(lossgrad.golden, name)(*arrays, reduction, **ATTR_KW[name])
        assert_within_standard(ours, golden.astype(np.float64), f"{name} {dtype} {case}")


def test_kl_batchmean_broadcast_divisor_follows_aclnn() -> None:
    """aclnn divides KL batchmean by dim 0 of broadcast(self, target), here 3, not self.size(0) = 1."""
    g, s, t = rand((), torch.float32, 1), rand((1, 4), torch.float32, 2), rand((3, 4), torch.float32, 3)
    ours = lt.kl_div_backward(g, s, t, "batchmean")
    expected = (-t * g / 3).sum(0, keepdim=True)
    assert_within_standard(ours, expected.double(), "kl batchmean")


def test_mse_mean_divides_by_numel_of_self() -> None:
    """aclnn's MSE mean divisor is numel(self) as passed (4), not the broadcast count (12)."""
    g, s, t = rand((), torch.float32, 1), rand((4,), torch.float32, 2), rand((3, 4), torch.float32, 3)
    ours = lt.mse_loss_backward(g, s, t, "mean")
    assert_within_standard(ours, (2 * (s - t) * g / 4).double(), "mse mean")


def test_non_contiguous_and_expanded_inputs() -> None:
    """Transposed, sliced and stride-0 (expanded) inputs give the bits their contiguous copies give."""
    base = rand((6, 8), torch.bfloat16, 5)
    s = base.t()[::2]                      # (4, 6), strides (1, 16)
    t = rand((1, 6), torch.bfloat16, 6).expand(4, 6)
    g = rand((4, 6), torch.bfloat16, 7)[:, :]
    assert not s.is_contiguous() and t.stride(0) == 0
    for name in OPS:
        fn = getattr(lt, name)
        strided = fn(g, s, t, *OPS[name].absent_optional, "none", *ATTRS[name])
        dense = fn(g.contiguous(), s.contiguous(), t.contiguous(), *OPS[name].absent_optional, "none", *ATTRS[name])
        assert np.array_equal(bits(strided), bits(dense)), name


def test_bf16_is_not_rounded_through_float32() -> None:
    """bf16 values travel as their bits: odd bit patterns (subnormal, max, negative zero) come out as the kernel
    writes them, i.e. equal to lossgrad's NumPy API on ml_dtypes.bfloat16 views of the same bits."""
    raw = torch.from_numpy(np.array([0x0001, 0x7F7F, 0x8000, 0x3F81, 0xC2F7, 0x0080], np.uint16).view(np.int16))
    s = raw.view(torch.bfloat16)
    t = torch.zeros(6, dtype=torch.bfloat16)
    g = torch.ones(6, dtype=torch.bfloat16)
    ours = lt.mse_loss_backward(g, s, t, "sum")
    reference = lossgrad.mse_loss_backward(to_numpy(g), to_numpy(s), to_numpy(t), "sum", backend="twin")
    assert np.array_equal(bits(ours), reference.view(np.int16))
    assert to_numpy(s).view(np.int16).tolist() == raw.tolist()


def test_out_dtype_argument() -> None:
    g, s, t = rand((), torch.float16, 1), rand((3, 4), torch.float16, 2), rand((3, 4), torch.float16, 3)
    ours = torch.ops.lossgrad.l1_loss_backward(g, s, t, 2, out_dtype=torch.float32)
    assert ours.dtype == torch.float32
    assert torch.equal(ours, torch.sign(s.float() - t.float()) * g.float())


def test_soc_argument_and_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """The op's soc= wins over lt.soc(...), which wins over the default; the twin runs as that SoC."""
    import lossgrad.runners.twin as twin_runner

    seen: list[str] = []
    real = twin_runner.run_twin

    def spy(call):  # type: ignore[no-untyped-def]
        seen.append(call.soc.name)
        return real(call)

    monkeypatch.setattr(twin_runner, "run_twin", spy)
    g, s, t = rand((), torch.float32, 1), rand((3, 4), torch.float32, 2), rand((3, 4), torch.float32, 3)
    lt.mse_loss_backward(g, s, t)
    with lt.soc("Ascend910B4"):
        lt.mse_loss_backward(g, s, t)
        lt.mse_loss_backward(g, s, t, soc="Ascend910_9391")
        assert lt.current_soc() == "Ascend910B4"
    assert seen == [lossgrad.socs.get_soc(None).name, "Ascend910B4", "Ascend910_9391"]
    with pytest.raises(LossGradError):
        with lt.soc("NoSuchSoc"):
            pass


# -- validation: the same errors from the real kernel and the fake one ---------------------------------------------

def _error_cases() -> list[tuple[str, str, dict, int]]:
    f32, f64, bf = torch.float32, torch.float64, torch.bfloat16
    return [
        ("l1_loss_backward", "reduction 3", {"reduction": 3}, 161002),
        ("l1_loss_backward", "reduction batchmean", {"reduction": "batchmean"}, 161002),
        ("mse_loss_backward", "unknown name", {"reduction": "average"}, 161002),
        ("mse_loss_backward", "float64", {"dtype": f64}, 161002),
        ("mse_loss_backward", "dtype mismatch", {"target_dtype": torch.float16}, 161002),
        ("smooth_l1_loss_backward", "beta < 0", {"attrs": (-1.0,)}, 161002),
        ("l1_loss_backward", "shapes", {"target_shape": (5,)}, 161002),
        ("kl_div_backward", "grad enlarges", {"grad_shape": (2, 3, 4)}, 161002),
        ("l1_loss_backward", "bf16 on 310P", {"dtype": bf, "soc": "Ascend310P3"}, 161002),
        ("mse_loss_backward", "complex", {"dtype": torch.complex64}, 161002),
        ("kl_div_backward", "mean over empty broadcast", {"target_shape": (0, 4), "self_shape": (1, 4)}, 561002),
        ("l1_loss_backward", "out dtype", {"out_dtype": torch.int32}, 161002),
    ] if f32 else []


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("name,what,kw,code", _error_cases(), ids=[c[1] for c in _error_cases()])
def test_validation_errors(name: str, what: str, kw: dict, code: int, device: str) -> None:
    dtype = kw.get("dtype", torch.float32)
    g = torch.zeros(kw.get("grad_shape", ()), dtype=dtype, device=device)
    s = torch.zeros(kw.get("self_shape", (3, 4)), dtype=dtype, device=device)
    t = torch.zeros(kw.get("target_shape", (3, 4)), dtype=kw.get("target_dtype", dtype), device=device)
    op = getattr(torch.ops.lossgrad, name)
    with pytest.raises(LossGradError) as info:
        op(g, s, t, kw.get("reduction", 1), *kw.get("attrs", ()), out_dtype=kw.get("out_dtype"), soc=kw.get("soc"))
    assert info.value.code == code, info.value


def test_soc_context_reaches_validation() -> None:
    g, s, t = (torch.zeros((2,), dtype=torch.bfloat16) for _ in range(3))
    with lt.soc("Ascend310P3"):
        with pytest.raises(LossGradError) as info:
            torch.ops.lossgrad.mse_loss_backward(g, s, t)
    assert info.value.code == 161002 and "Ascend310P3" in str(info.value)


def test_null_input_is_161001() -> None:
    s = torch.zeros(3)
    for name in OPS:
        with pytest.raises(LossGradError) as info:
            getattr(lt, name)(None, s, s)
        assert info.value.code == 161001


def test_kl_unknown_reduction_int_means_none() -> None:
    """aclnn's KlDivBackward maps every other integer to none."""
    g, s, t = rand((3, 4), torch.float32, 1), rand((3, 4), torch.float32, 2), rand((3, 4), torch.float32, 3)
    assert torch.equal(torch.ops.lossgrad.kl_div_backward(g, s, t, 7), torch.ops.lossgrad.kl_div_backward(g, s, t, 0))


def test_empty_inputs_with_autograd() -> None:
    """A mean over no elements launches nothing (aclnn's early return), with or without autograd recording."""
    for name in OPS:
        s = torch.zeros((0, 3), requires_grad=True)
        absent = OPS[name].absent_optional
        out = getattr(lt, name)(torch.ones(()), s, torch.zeros((0, 3)), *absent, "mean", *ATTRS[name])
        assert out.shape == (0, 3) and out.requires_grad
        out.sum().backward()  # runs the op's derivative (L1's and KL's with respect to self are zero: None)
        assert (s.grad is None) == _self_derivative_is_zero(name), name


def _self_derivative_is_zero(name: str) -> bool:
    """The op folder's derivative gives no gradient for self (its values never enter the backward's result)."""
    x = torch.ones(2)
    attrs = {a.name: a.default for a in OPS[name].attrs}
    roles = OPS[name].roles
    needs = tuple(r == "self" for r in roles)
    return op_part(name, "torch_facts").derivative(x, *(x,) * len(roles), 1.0, attrs, needs)[1] is None


def test_fake_tensor_shapes_and_dtypes() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        g, s, t = torch.empty(()), torch.empty(3, 1, 5), torch.empty(4, 5)
        assert torch.ops.lossgrad.l1_loss_backward(g, s, t, "sum").shape == (3, 4, 5)
        assert torch.ops.lossgrad.kl_div_backward(g, s, t, 3).shape == (3, 1, 5)
        half = torch.ops.lossgrad.mse_loss_backward(g.half(), s.half(), t.half(), out_dtype=torch.float32)
        assert half.dtype == torch.float32 and half.shape == (3, 4, 5)
