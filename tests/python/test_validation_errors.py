"""Every error condition of the aclnn APIs (ops_semantics §1.2, §2.2, §3.2, §4.2, new_ops_semantics and the
161001/161002 tables in the aclnn docs): the code, and a message naming the argument and the rule.

The rules every op shares are run for every registered op; a rule that only some ops have runs for the ops whose
registry entry declares it (its `checks`, `reductions`, `promotion`, `output_shape`, `attrs`). The tests that name
one op pin that op's own call."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lossgrad.golden as golden
from lossgrad.errors import LossGradError
from lossgrad.registry import OPS, Check, EmptyRule, OpSpec, OutputShape, Promotion, Reduction, get_op
from lossgrad.validation import validate

# single ops whose own calls some tests below pin
L1 = get_op("l1").name
MSE = get_op("mse").name
SL1 = get_op("smooth_l1").name
KL = get_op("kl_div").name
BF16_OK = ("Ascend910B1", "Ascend910_9391", "Ascend950PR_9579")
BF16_REJECTED = ("Ascend310P3", "Ascend910A")


def arr(shape=(2, 3), dtype: Any = np.float32) -> np.ndarray:
    return np.ones(shape, dtype=dtype)


F, H, B, I32 = np.float32, np.float16, ml_dtypes.bfloat16, np.int32


def tensors(op: str, *required: Any, **optional: Any) -> tuple[Any, ...]:
    """gradOutput, self and target, then the op's optional inputs (None, i.e. absent, unless given by role)."""
    return (*required, *(optional.get(i.role) for i in get_op(op).inputs[3:]))


def err(op: str, g: Any = None, s: Any = None, t: Any = None, reduction: Any = "mean", attrs=None, *,
        default: bool = True, weight: Any = None, **kw) -> LossGradError:
    if default:
        g = arr() if g is None else g
        s = arr() if s is None else s
        t = arr() if t is None else t
    with pytest.raises(LossGradError) as info:
        validate(op, *tensors(op, g, s, t, weight=weight), reduction, attrs, **kw)
    return info.value


def expect(e: LossGradError, code: int, *parts: str) -> None:
    assert e.code == code, str(e)
    for p in parts:
        assert p in str(e), f"{p!r} not in {str(e)!r}"


def ok(op: str, g: Any = None, s: Any = None, t: Any = None, reduction: Any = "mean", attrs=None, *,
       weight: Any = None, **kw):
    return validate(op, *tensors(op, arr() if g is None else g, arr() if s is None else s,
                                 arr() if t is None else t, weight=weight), reduction, attrs, **kw)


# -- 161001: null inputs -----------------------------------------------------------------------------------------

def ops_where(pred) -> list[str]:
    """The registered ops whose entry satisfies `pred`."""
    return [name for name, op in OPS.items() if pred(op)]


ALL = list(OPS)
NAMES = {name: op.aclnn_params[:3] for name, op in OPS.items()}  # aclnn's names of gradOutput, self, target
VALIDATED = ops_where(lambda o: o.reduction_validated)
NO_BATCHMEAN = ops_where(lambda o: o.reduction_validated and Reduction.BATCHMEAN not in o.reductions)
BROADCAST_ALL = ops_where(lambda o: o.output_shape is OutputShape.BROADCAST_ALL)


def _first_out_dtype_check(op: OpSpec) -> Check:
    return next(c for c in op.checks if c in (Check.PROMOTE, Check.SELF_CASTS_TO_OUT, Check.EACH_SUPPORTED,
                                              Check.SELF_OUT_SUPPORTED))


# an int32 output fails a cast check where the op's first check that sees out is one, else its support list
CAST_FIRST = ops_where(lambda o: _first_out_dtype_check(o) in (Check.PROMOTE, Check.SELF_CASTS_TO_OUT))
LIST_FIRST = [name for name in ALL if name not in CAST_FIRST]


@pytest.mark.parametrize("op", NAMES)
@pytest.mark.parametrize("which", range(3))
def test_null_input(op: str, which: int) -> None:
    args = [arr(), arr(), arr()]
    args[which] = None
    with pytest.raises(LossGradError) as info:
        validate(op, *tensors(op, *args))
    expect(info.value, 161001, NAMES[op][which], "null")


def test_null_is_reported_before_anything_else() -> None:
    with pytest.raises(LossGradError) as info:
        validate(L1, None, arr(dtype=I32), arr((1,) * 9), 7)
    assert info.value.code == 161001


def test_non_array_input_is_invalid() -> None:
    expect(err(L1, [1.0, 2.0]), 161002, "gradOutput", "numpy.ndarray")


# -- reduction ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", NO_BATCHMEAN)
@pytest.mark.parametrize("value", [3, "batchmean"])
def test_batchmean_rejected_outside_kl(op: str, value: Any) -> None:
    expect(err(op, reduction=value), 161002, "reduction", "batchmean", "not supported")


@pytest.mark.parametrize("op", VALIDATED)
@pytest.mark.parametrize("value", [-1, 4, 100])
def test_reduction_out_of_range(op: str, value: int) -> None:
    expect(err(op, reduction=value), 161002, "reduction", str(value), "out of range")


@pytest.mark.parametrize("op", ALL)
def test_reduction_of_wrong_kind(op: str) -> None:
    expect(err(op, reduction="average"), 161002, "reduction", "unknown value")
    expect(err(op, reduction=1.0), 161002, "reduction", "expected an int or a string")


@pytest.mark.parametrize("value, expected", [(-1, Reduction.NONE), (4, Reduction.NONE), (6, Reduction.NONE),
                                             (3, Reduction.BATCHMEAN), ("batchmean", Reduction.BATCHMEAN),
                                             (1, Reduction.MEAN), (2, Reduction.SUM), (0, Reduction.NONE)])
def test_kl_reduction_is_not_validated(value: Any, expected: Reduction) -> None:
    assert ok(KL, reduction=value).reduction is expected


# -- dtypes -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ALL)
@pytest.mark.parametrize("soc", BF16_OK)
def test_bf16_accepted_on_a2_a3_950(op: str, soc: str) -> None:
    call = ok(op, arr(dtype=B), arr(dtype=B), arr(dtype=B), soc=soc)
    assert call.out_dtype.label == "bfloat16"


@pytest.mark.parametrize("op", ALL)
@pytest.mark.parametrize("soc", BF16_REJECTED)
def test_bf16_rejected_on_310p_and_910(op: str, soc: str) -> None:
    e = err(op, arr(dtype=B), arr(dtype=B), arr(dtype=B), soc=soc)
    expect(e, 161002, "bfloat16", soc, "not support")


@pytest.mark.parametrize("soc", BF16_REJECTED)
@pytest.mark.parametrize("role", [0, 1, 2])
def test_l1_bf16_input_promoted_away_is_still_refused_where_the_part_has_no_bf16(soc: str, role: int) -> None:
    # f16 + bf16 promote to f32, which aclnn's L1 check accepts; but the kernel would have to read and cast the bf16
    # tensor, which 310P and Atlas 910 cannot: refused up front, naming the tensor, the dtype and the part
    args = [arr(dtype=H), arr(dtype=H), arr(dtype=H)]
    args[role] = arr(dtype=B)
    expect(err(L1, *args, soc=soc), 161002, NAMES[L1][role], "bfloat16", soc, "cannot run")
    assert ok(L1, arr(dtype=H), arr(dtype=B), arr(dtype=H), soc="A2").out_dtype.label == "float32"


@pytest.mark.parametrize("soc", BF16_REJECTED)
def test_l1_int_input_promoted_to_a_kernel_dtype_is_fine(soc: str) -> None:
    # an integer input is cast to the promoted dtype by the op_api, so the kernel reads float16 here
    assert ok(L1, arr(dtype=I32), arr(dtype=H), arr(dtype=H), soc=soc).kernel_dtypes["grad"].label == "float16"


@pytest.mark.parametrize("soc", BF16_REJECTED)
def test_bf16_output_rejected_on_310p_and_910(soc: str) -> None:
    expect(err(SL1, out_dtype="bfloat16", soc=soc), 161002, "gradInput", "bfloat16", "not supported")
    expect(err(KL, out_dtype="bfloat16", soc=soc), 161002, "out", "bfloat16", "not supported")


@pytest.mark.parametrize("op", ops_where(lambda o: o.promotion is Promotion.PROMOTE_ALL))
def test_promotion_to_an_unsupported_type(op: str) -> None:
    name = NAMES[op][0]
    expect(err(op, arr(dtype=np.float64), arr(), arr()), 161002, "float64", "not support")
    assert name in str(err(op, arr(dtype=np.float64), arr(), arr()))


def test_l1_promotes_int32_alone_to_an_unsupported_type() -> None:
    expect(err(L1, arr(dtype=I32), arr(dtype=I32), arr(dtype=I32)), 161002, "promoted dtype", "int32",
           "does not support")


def test_l1_accepts_int_mixed_with_float() -> None:
    assert ok(L1, arr(dtype=I32), arr(dtype=H), arr(dtype=H)).out_dtype.label == "float16"


@pytest.mark.parametrize("op", ALL)
def test_int32_output_cannot_be_cast(op: str) -> None:
    e = err(op, out_dtype="int32")
    out_name = get_op(op).output_param
    assert e.code == 161002 and out_name in str(e)
    assert "cannot be cast" in str(e) or "not supported" in str(e)


@pytest.mark.parametrize("op", CAST_FIRST)
def test_int32_output_is_a_cast_failure(op: str) -> None:
    expect(err(op, out_dtype=np.int32), 161002, "cannot be cast", "int32")


@pytest.mark.parametrize("op", LIST_FIRST)
def test_int32_output_fails_the_support_list_first(op: str) -> None:
    # e.g. SmoothL1 checks every tensor's dtype (gradInput included) and MSE self's and out's before anything else
    expect(err(op, out_dtype=np.int32), 161002, get_op(op).output_param, "int32", "not supported")


def test_unknown_output_dtype() -> None:
    expect(err(L1, out_dtype="float8"), 161002, "gradInput", "unknown dtype")


@pytest.mark.parametrize("role", [0, 2])
def test_mse_dtype_mismatch(role: int) -> None:
    args = [arr(), arr(), arr()]
    args[role] = arr(dtype=H)
    e = err(MSE, *args)
    expect(e, 161002, ("gradOutput", "self", "target")[role], "must equal", "does not promote")


def test_mse_int_inputs() -> None:
    expect(err(MSE, arr(dtype=I32), arr(), arr()), 161002, "gradOutput", "must equal")
    expect(err(MSE, arr(dtype=I32), arr(dtype=I32), arr(dtype=I32)), 161002, "self", "int32", "not supported")


def test_mse_dtype_checked_before_reduction() -> None:
    expect(err(MSE, arr(dtype=H), arr(), arr(), reduction=9), 161002, "must equal")
    expect(err(L1, arr(dtype=I32), arr(dtype=I32), arr(dtype=I32), reduction=9), 161002, "reduction")


@pytest.mark.parametrize("op", ops_where(lambda o: Check.EACH_SUPPORTED in o.checks))
@pytest.mark.parametrize("role", [0, 1, 2])
def test_each_dtype_checked(op: str, role: int) -> None:
    args = [arr(), arr(), arr()]
    args[role] = arr(dtype=I32)
    # a given float32 out: where out defaults to target's dtype, an int32 target would fail the cast check first
    expect(err(op, *args, out_dtype="float32"), 161002, NAMES[op][role], "int32", "not supported")


def test_kl_self_must_cast_to_out() -> None:
    expect(err(KL, out_dtype="int32"), 161002, "out", "self's dtype", "cannot be cast")


def test_kl_mixed_float_inputs_are_fine() -> None:
    call = ok(KL, arr(dtype=H), arr(dtype=B), arr())
    assert call.out_dtype.label == "bfloat16"


# -- rank -----------------------------------------------------------------------------------------------------------

RANK9 = (1,) * 9


@pytest.mark.parametrize("op, role", [(name, role) for name, op in OPS.items() for role in range(3)
                                      if op.inputs[role].rank_checked])
def test_rank_nine(op: str, role: int) -> None:
    args = [arr((1,)), arr((1,)), arr((1,))]
    args[role] = arr(RANK9)
    expect(err(op, *args), 161002, NAMES[op][role], "rank 9", "maximum of 8")


@pytest.mark.parametrize("op", ops_where(lambda o: o.output_param in o.rank_checked))
def test_rank_nine_output(op: str) -> None:
    expect(err(op, arr((1,)), arr((1,)), arr((1,)), out_shape=RANK9), 161002, get_op(op).output_param, "rank 9")


@pytest.mark.parametrize("op", ALL)
def test_rank_eight_is_fine(op: str) -> None:
    assert ok(op, arr((1,) * 8), arr((2,) * 8), arr((2,) * 8)).iter_shape == (2,) * 8


# -- shapes ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", BROADCAST_ALL)
def test_grad_and_self_not_broadcastable(op: str) -> None:
    expect(err(op, arr((2, 3)), arr((4, 3)), arr((3,))), 161002, NAMES[op][0], "self", "not broadcastable")


@pytest.mark.parametrize("op", BROADCAST_ALL)
def test_target_not_broadcastable(op: str) -> None:
    expect(err(op, arr((2, 3)), arr((2, 3)), arr((2,))), 161002, "target", "not broadcastable")


@pytest.mark.parametrize("op", BROADCAST_ALL)
def test_out_shape_must_equal_the_broadcast(op: str) -> None:
    out_name = get_op(op).output_param
    expect(err(op, arr((2, 1)), arr((3,)), arr((3,)), out_shape=(3,)), 161002, out_name, "(3,)", "(2, 3)",
           "broadcast shape")
    assert ok(op, arr((2, 1)), arr((3,)), arr((3,)), out_shape=(2, 3)).out_shape == (2, 3)


def test_kl_self_and_target_not_broadcastable() -> None:
    expect(err(KL, arr((2,)), arr((2, 3)), arr((4, 3))), 161002, "self", "target", "not broadcastable")


@pytest.mark.parametrize("grad_shape", [(2, 3, 4), (5,), (1, 3, 4), (2, 4)])
def test_kl_grad_must_not_enlarge_the_broadcast(grad_shape) -> None:
    expect(err(KL, arr(grad_shape), arr((3, 4)), arr((3, 1))), 161002, "gradOutput", "must broadcast into",
           "(3, 4)")


def test_kl_out_shape_must_equal_self() -> None:
    expect(err(KL, arr((2, 3)), arr((2, 1)), arr((2, 3)), out_shape=(2, 3)), 161002, "out", "self's shape",
           "(2, 1)")
    assert ok(KL, arr((2, 3)), arr((2, 1)), arr((2, 3)), out_shape=(2, 1)).out_shape == (2, 1)


def test_kl_grad_smaller_than_the_broadcast_is_fine() -> None:
    assert ok(KL, arr(()), arr((2, 1)), arr((2, 3))).iter_shape == (2, 3)
    assert ok(KL, arr((1, 3)), arr((2, 1)), arr((2, 3))).out_shape == (2, 1)


# -- beta -------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("beta", [-1.0, -1e-30, float("nan"), float("-inf")])
def test_beta_must_be_non_negative_and_not_nan(beta: float) -> None:
    expect(err(SL1, attrs={"beta": beta}), 161002, "beta", ">= 0", "not NaN")


@pytest.mark.parametrize("beta", [0.0, -0.0, 1e-40, 1.0, float("inf")])
def test_beta_accepted(beta: float) -> None:
    assert ok(SL1, attrs={"beta": beta}).attrs["beta"] == beta


def test_beta_checked_after_dtypes_and_reduction_and_before_shapes() -> None:
    expect(err(SL1, reduction=5, attrs={"beta": -1.0}), 161002, "reduction")
    expect(err(SL1, arr(dtype=np.float64), attrs={"beta": -1.0}), 161002, "float64")
    expect(err(SL1, arr((2,)), arr((3,)), arr((4,)), attrs={"beta": -1.0}), 161002, "beta")


def test_beta_of_wrong_type_and_unknown_attribute() -> None:
    expect(err(SL1, attrs={"beta": "1"}), 161002, "beta", "real number")
    expect(err(SL1, attrs={"sigma": 1.0}), 161002, "sigma", "no attribute")


# -- empty --------------------------------------------------------------------------------------------------------

def test_kl_mean_over_an_empty_broadcast_is_a_tiling_error() -> None:
    e = err(KL, arr(()), arr((2, 1)), arr((0, 2, 3)), "mean")
    expect(e, 561002, "mean", "0")
    e = err(KL, arr(()), arr((1, 3)), arr((0, 3)), 3)                 # batchmean over a dim 0 of size 0
    expect(e, 561002, "batchmean")
    assert not ok(KL, arr(()), arr((2, 1)), arr((0, 2, 3)), "sum").launch


@pytest.mark.parametrize("op", ops_where(lambda o: o.empty_rule is EmptyRule.ANY_INPUT))
def test_empty_inputs_do_not_launch_even_for_mean(op: str) -> None:
    call = ok(op, arr((1, 0, 1, 2)), arr((1, 1, 0, 2)), arr((1, 0, 1, 2)), "mean")
    assert not call.launch and call.out_shape == (1, 0, 0, 2)


def test_kl_empty_self_does_not_launch() -> None:
    call = ok(KL, arr((0,)), arr((0,)), arr((1,)), "mean")
    assert not call.launch and call.out_shape == (0,)


# -- the golden raises the same errors ----------------------------------------------------------------------------

def test_golden_entry_points_raise_validation_errors() -> None:
    with pytest.raises(LossGradError) as info:
        golden.l1_loss_backward(arr(), arr(), arr(), 3)
    assert info.value.code == 161002
    with pytest.raises(LossGradError) as info:
        golden.smooth_l1_loss_backward(arr(), arr(), arr(), "mean", -0.5)
    assert info.value.code == 161002 and "beta" in str(info.value)
    with pytest.raises(LossGradError) as info:
        golden.kl_div_backward(arr(dtype=B), arr(dtype=B), arr(dtype=B), soc="Ascend310P3")
    assert info.value.code == 161002
    with pytest.raises(LossGradError) as info:
        golden.mse_loss_backward(arr(), arr(), arr(), soc="Ascend999")
    assert info.value.code == 161002 and "soc" in str(info.value)


def test_l1_cast_check_precedes_the_support_list() -> None:
    # promoted float64 (unsupported) and an int32 gradInput: CanCast fails first (ops_semantics §1.2 step 3)
    expect(err(L1, arr(dtype=np.float64), arr(), arr(), out_dtype="int32"), 161002, "gradInput", "cannot be cast")


def test_kl_out_dtype_may_differ_from_self() -> None:
    # the doc says "self/out dtype mismatch"; the code only requires that self casts to out (ops_semantics §4.2)
    assert ok(KL, out_dtype="float16").out_dtype.label == "float16"


# -- argument types and ranges the C signature implies -----------------------------------------------------------

@pytest.mark.parametrize("value", ["False", "false", "", 2, 0, 1, 0.5, [False], None, np.array(True),
                                   np.array([True, False]), np.int64(1)])
def test_log_target_accepts_only_bools(value: Any) -> None:
    expect(err(KL, attrs={"log_target": value}), 161002, "logTarget", "expected a bool")


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.bool_(False)])
def test_log_target_bools(value: Any) -> None:
    assert ok(KL, attrs={"log_target": value}).attrs["log_target"] is bool(value)


@pytest.mark.parametrize("op", ALL)
@pytest.mark.parametrize("value", [2 ** 63, 2 ** 70, -(2 ** 63) - 1, np.uint64(2 ** 64 - 1)])
def test_reduction_beyond_int64_is_invalid_for_every_op(op: str, value: Any) -> None:
    # KL maps unknown int64 values to "none", but a value that is no int64 at all cannot reach aclnn
    expect(err(op, reduction=value), 161002, "reduction", "int64")


def test_kl_int64_extremes_still_map_to_none() -> None:
    assert ok(KL, reduction=2 ** 63 - 1).reduction is Reduction.NONE
    assert ok(KL, reduction=-(2 ** 63)).reduction is Reduction.NONE


@pytest.mark.parametrize("beta", [1e39, 3.5e38, float(np.finfo(np.float64).max), 10 ** 400],
                         ids=["1e39", "3.5e38", "f64max", "int1e400"])
def test_beta_beyond_float32_is_invalid_without_a_warning(beta: Any) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a leaked NumPy overflow warning would fail here
        expect(err(SL1, attrs={"beta": beta}), 161002, "beta", "float32")


def test_beta_at_the_float32_edge_is_fine() -> None:
    import warnings

    fmax = float(np.finfo(np.float32).max)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ok(SL1, attrs={"beta": fmax}).attrs["beta"] == fmax
        assert ok(SL1, attrs={"beta": float("inf")}).attrs["beta"] == float("inf")
    expect(err(SL1, attrs={"beta": -(10 ** 400)}), 161002, "beta", ">= 0")


# -- SoC names ---------------------------------------------------------------------------------------------------

def test_soc_aliases_never_shadow_a_soc_version() -> None:
    from lossgrad.socs import ALIASES, AMBIGUOUS, SOCS

    lower = {n.lower() for n in SOCS}
    assert not lower & set(ALIASES) and not set(AMBIGUOUS) & set(ALIASES)
    assert all(target in SOCS for target in ALIASES.values())


@pytest.mark.parametrize("name", ["ascend910b", "ASCEND910B", "Ascend910b"])
def test_ambiguous_soc_spelling_is_refused_with_both_readings(name: str) -> None:
    e = err(L1, soc=name)
    expect(e, 161002, "soc", "ambiguous", "Ascend910B", "A2")


@pytest.mark.parametrize("name, expected", [("Ascend910B", "Ascend910B"), ("a2", "Ascend910B1"),
                                            ("ascend910b1", "Ascend910B1"), ("310P", "Ascend310P3"),
                                            (" ascend910_93 ", "Ascend910_9391")])
def test_soc_names_resolve(name: str, expected: str) -> None:
    assert ok(L1, soc=name).soc.name == expected


@pytest.mark.parametrize("name", ["nonsense", "A2,310P", "", 910, 2.0])
def test_unknown_soc(name: Any) -> None:
    expect(err(L1, soc=name), 161002, "soc")


# -- ops whose inputs broadcast into self (Check.INTO_SELF: BCE, new_ops_semantics §2.3-§2.4) ------------------------

INTO_SELF = ops_where(lambda o: Check.INTO_SELF in o.checks)


def _shape_rule(spec: Any, role: str) -> str:
    """What aclnn requires of an input's shape: target equal to self's (Check.TARGET_IS_SELF, BCEWithLogits), every
    other input broadcast into self."""
    return "must equal" if role == "target" and Check.TARGET_IS_SELF in spec.checks else "must broadcast into"


@pytest.mark.parametrize("op", INTO_SELF)
@pytest.mark.parametrize("role", ["grad", "target", "weight", "pos_weight"])
def test_every_input_must_broadcast_into_self(op: str, role: str) -> None:
    spec = get_op(op)
    if role not in spec.roles:
        pytest.skip(f"{op} has no {role}")
    for bigger in ((2, 3), (1, 1, 3), (4,)):  # enlarging self, an extra leading 1, not broadcastable
        self_ = (2, 3) if bigger == (4,) else (3,)
        shapes = {"grad": (), "self": self_, "target": self_ if _shape_rule(spec, "target") == "must equal" else (3,)}
        shapes.update({r: (3,) for r in spec.roles if r not in shapes} | {role: bigger})
        given = {r: arr(shape) for r, shape in shapes.items()}
        with pytest.raises(LossGradError) as info:
            validate(op, *tensors(op, given["grad"], given["self"], given["target"], **given), "mean")
        expect(info.value, 161002, spec.input(role).aclnn, _shape_rule(spec, role), "self")
    target = (2, 3) if _shape_rule(spec, "target") == "must equal" else (1, 3)
    call = ok(op, arr(()), arr((2, 3)), arr(target), weight=arr((3,)) if "weight" in spec.roles else None)
    assert call.out_shape == call.iter_shape == (2, 3) and call.launch


@pytest.mark.parametrize("op", INTO_SELF)
def test_shapes_are_checked_in_aclnn_order_and_out_first(op: str) -> None:
    # out == self, then target, then the optional inputs, gradOutput last (the op_api's CheckShape); where target
    # must equal self (BCEWithLogits) that comes first, then out == self
    if Check.TARGET_IS_SELF in get_op(op).checks:
        expect(err(op, arr((5,)), arr((3,)), arr((4,)), out_shape=(2,)), 161002, "target", "must equal")
        expect(err(op, arr((5,)), arr((3,)), arr((3,)), out_shape=(2,)), 161002, "out", "self's shape")
    else:
        expect(err(op, arr((5,)), arr((3,)), arr((4,)), out_shape=(2,)), 161002, "out", "self's shape")
    expect(err(op, arr((5,)), arr((3,)), arr((4,))), 161002, "target")
    if "weight" in get_op(op).roles:
        expect(err(op, arr((5,)), arr((3,)), arr((3,)), weight=arr((4,))), 161002, "weightOptional")


@pytest.mark.parametrize("op", INTO_SELF)
def test_empty_self_is_a_no_op_that_skips_the_shape_checks(op: str) -> None:
    # an empty self returns before any shape check: the others' shapes (even rank 9) are not looked at
    for g, t in (((5,), (7,)), ((1,) * 9, (2, 0, 4)), ((), (0,))):
        call = ok(op, arr(g), arr((0, 3)), arr(t), "mean")
        assert not call.launch and call.out_shape == (0, 3)
    # only out's rank is checked (the inputs are const aclTensor*, new_ops_semantics §0): a rank-9 self is an
    # out of rank 9, empty or not
    expect(err(op, arr(()), arr((1,) * 8 + (0,)), arr(())), 161002, "out", "rank 9")


@pytest.mark.parametrize("op", INTO_SELF)
def test_another_empty_input_with_a_non_empty_self_is_invalid(op: str) -> None:
    spec = get_op(op)
    for role in spec.roles:
        if role == "self":
            continue
        given = {r: arr((2, 3)) for r in spec.roles} | {role: arr((0, 3))}
        with pytest.raises(LossGradError) as info:
            validate(op, *(given.get(i.role) for i in spec.inputs), "none")
        expect(info.value, 161002, spec.input(role).aclnn, _shape_rule(spec, role))


@pytest.mark.parametrize("op", INTO_SELF)
def test_reduction_is_checked_after_the_shapes_and_a_null_weight_is_fine(op: str) -> None:
    expect(err(op, arr((5,)), arr((3,)), arr((3,)), 7), 161002, "gradOutput")  # shapes before reduction
    expect(err(op, arr(()), arr((3,)), arr((3,)), 7), 161002, "reduction", "out of range")
    assert ok(op, arr(()), arr((3,)), arr((3,)), weight=None).launch


# -- ops whose out dtype must be target's (Check.OUT_TARGET_DTYPE: BCEWithLogits, new_ops_semantics §3.3) -------------

OUT_IS_TARGET = ops_where(lambda o: Check.OUT_TARGET_DTYPE in o.checks)


@pytest.mark.parametrize("op", OUT_IS_TARGET)
def test_out_dtype_is_target_s(op: str) -> None:
    # given: it must equal target's, after each dtype's support and before the shapes (aclnn's CheckDtypeValid)
    out = get_op(op).output_param
    expect(err(op, arr(()), arr((3,)), arr((3,)), out_dtype="float16"), 161002, out, "float16", "target")
    expect(err(op, arr(()), arr((3,)), arr((4,)), out_dtype="float16"), 161002, out, "target")
    if _first_out_dtype_check(get_op(op)) is Check.SELF_CASTS_TO_OUT:  # KlDivTarget: CanCast(self -> out) first
        expect(err(op, arr(()), arr((3,)), arr((3,), np.int32)), 161002, out, "cannot be cast", "int32")
    else:
        expect(err(op, arr(()), arr((3,)), arr((3,), np.int32)), 161002, "target", "int32")  # support first
    # not given: target's, even where the promoted dtype is wider (the kernel rounds once, to out's dtype)
    call = ok(op, arr((), np.float32), arr((3,), np.float32), arr((3,), np.float16))
    assert call.out_dtype.label == "float16"
    assert ok(op, arr(()), arr((3,)), arr((3,), np.float16), out_dtype="float16").out_dtype.label == "float16"


# -- KlDivTarget (new_ops_semantics §4.3, §4.4; the UT cases of ops-nn's
#    loss/kl_div_target_loss_grad/tests/ut/op_api/test_aclnn_kl_div_target_backward.cpp) ----------------------------

KLT = get_op("kl_div_target").name


@pytest.mark.parametrize("soc", BF16_REJECTED)
@pytest.mark.parametrize("dtype", [F, H])
def test_klt_every_dtype_is_refused_on_310p_and_910(soc: str, dtype: Any) -> None:
    # the op_api's dtype list is empty there: the first tensor checked, gradOutput, fails
    expect(err(KLT, arr(dtype=dtype), arr(dtype=dtype), arr(dtype=dtype), soc=soc), 161002, "gradOutput",
           "not supported", "none")


def test_klt_out_dtype_must_be_targets() -> None:
    expect(err(KLT, arr(dtype=H), arr(dtype=H), arr(dtype=H), out_dtype="float32"), 161002, "gradTarget",
           "must equal", "target")
    assert ok(KLT, arr(dtype=H), arr(), arr(dtype=H)).out_dtype.label == "float16"  # UT: f16/f32/f16 -> f16 out
    assert ok(KLT, arr(), arr(), arr(dtype=B)).out_dtype.label == "bfloat16"  # the default: target's


def test_klt_self_must_cast_to_out() -> None:
    expect(err(KLT, out_dtype="int32"), 161002, "gradTarget", "self's dtype", "cannot be cast")


@pytest.mark.parametrize("role", range(3))
def test_klt_rank_nine_is_refused_even_with_an_empty_self(role: int) -> None:
    shapes = [(1,), (0,), (1,)]
    shapes[role] = (1,) * 8 + ((0,) if role == 1 else (1,))
    expect(err(KLT, *(arr(s) for s in shapes)), 161002, "rank", "exceeds")


def test_klt_shapes() -> None:
    expect(err(KLT, arr(()), arr((2, 3)), arr((4, 3))), 161002, "self", "target", "not broadcastable")
    expect(err(KLT, arr((4, 1, 3)), arr((2, 3)), arr((1, 3))), 161002, "gradOutput", "without enlarging")
    expect(err(KLT, arr(()), arr((2, 3)), arr((1, 3)), out_shape=(2, 3)), 161002, "gradTarget", "target's shape")
    # the UT's broadcasts: the output is target's shape, summed over the axes self broadcasts it along
    for g, s, t in (((3, 1), (3, 5), (3, 1)), ((3, 1, 1), (6, 3, 1, 7), (3, 5, 1))):
        call = ok(KLT, arr(g), arr(s), arr(t), "sum")
        assert call.out_shape == t and call.iter_shape == np.broadcast_shapes(s, t)


def test_klt_reduction_is_not_validated() -> None:
    assert ok(KLT, reduction=6).reduction is Reduction.NONE  # UT: reduction 6 -> success, as none


def test_klt_empty_self_writes_zeros_of_targets_shape() -> None:
    call = ok(KLT, arr(()), arr((0, 3)), arr((1, 3)), "mean")
    assert not call.launch and call.out_shape == (1, 3)
    out = golden.kl_div_target_backward(arr(()), arr((0, 3)), arr((1, 3)), "mean")
    assert out.shape == (1, 3) and not out.any()


@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum"])
def test_klt_empty_broadcast_with_a_non_empty_self_is_an_empty_output(reduction: str) -> None:
    # A2/A3's l0 composition runs on the empty tensors: no tiling refuses the zero divisor (unlike KL's kernel)
    call = ok(KLT, arr(()), arr((1, 3)), arr((0, 3)), reduction)
    assert not call.launch and call.out_shape == (0, 3)
