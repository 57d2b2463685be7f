"""aclnn-exact argument validation, driven by the op registry.

Each op lists its checks in its op_api's order (`OpSpec.checks`); the first failing check raises LossGradError with
aclnn's code (161001 null, 161002 invalid) and a message naming the argument and the rule. Success yields a
`Call`: the normalised description of the invocation that the golden model, the tiling and every backend consume.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from . import dtypes as dt
from .dtypes import DType
from .errors import ACLNN_ERR_INNER_TILING_ERROR, ACLNN_ERR_PARAM_INVALID, LossGradError, invalid_error, null_error
from .registry import (MAX_RANK, Check, Divisor, EmptyRule, OpSpec, Reduction, arch_dtypes, get_op,
                       kernel_dtypes, promoted_dtype)
from .socs import Soc, get_soc

Shape = tuple[int, ...]

_REDUCTION_LABELS = {r.label: r for r in Reduction}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class Call:
    """A validated invocation. Arrays are the caller's (never copied here)."""

    op: OpSpec
    soc: Soc
    inputs: Mapping[str, np.ndarray]  # role -> the caller's array, for every input the call has (an absent
                                      # optional input is not in it)
    reduction: Reduction
    attrs: Mapping[str, Any]
    out_shape: Shape
    out_dtype: DType
    iter_shape: Shape          # the broadcast space the kernel iterates (== out_shape except for KL)
    coefficient: float         # reduction coefficient c in float64 (numerator / divisor), sign not included
    launch: bool               # False: aclnn returns early (empty) and the result needs no kernel
    dtypes: Mapping[str, DType] = field(default_factory=dict)  # role -> dtype, for every input in `inputs`

    @property
    def grad(self) -> np.ndarray:
        return self.inputs["grad"]

    @property
    def self_(self) -> np.ndarray:
        return self.inputs["self"]

    @property
    def target(self) -> np.ndarray:
        return self.inputs["target"]

    @property
    def roles(self) -> tuple[str, ...]:
        """The inputs the call has, in role order (the golden formulas' and the kernel's order)."""
        return tuple(r for r in self.op.roles if r in self.inputs)

    @property
    def in_dtypes(self) -> tuple[DType, ...]:
        return tuple(self.dtypes[r] for r in self.roles)

    @property
    def promoted(self) -> DType:
        """promote(promote(gradOutput, self), target): what the op_api casts non-float inputs to."""
        return promoted_dtype(self.dtypes)

    @property
    def kernel_dtypes(self) -> dict[str, DType]:
        """grad/self/target/out as the kernel is instantiated (registry.kernel_dtypes)."""
        return kernel_dtypes(self.dtypes, self.out_dtype)


def broadcast_shapes(a: Shape, b: Shape) -> Shape | None:
    """NumPy broadcasting of two shapes, or None when they do not broadcast."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def numel(shape: Shape) -> int:
    return math.prod(shape)


def parse_reduction(op: OpSpec, reduction: Any) -> Reduction:
    """Strings and aclnn integers; range errors per the op (KL maps unknown integers to none, as aclnn does)."""
    if isinstance(reduction, str):
        r = _REDUCTION_LABELS.get(reduction.lower())
        if r is None:
            raise invalid_error(f"reduction: unknown value {reduction!r}; expected one of "
                                f"{', '.join(repr(x.label) for x in op.reductions)} or their integers")
    elif isinstance(reduction, (numbers.Integral, np.integer)) and not isinstance(reduction, (bool, np.bool_)):
        value = int(reduction)
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise invalid_error(f"reduction: {value} does not fit {op.aclnn}'s int64_t reduction")
        if value not in set(Reduction):
            if op.reduction_validated:
                raise invalid_error(f"reduction: {value} is out of range; {op.aclnn} accepts "
                                    f"{min(op.reductions).value}..{max(op.reductions).value}")
            return Reduction.NONE  # KlDivBackward's op_api maps every other value to "none" (ops_semantics §4.2)
        r = Reduction(value)
    else:
        raise invalid_error(f"reduction: expected an int or a string, got {type(reduction).__name__}")
    if r not in op.reductions:
        if op.reduction_validated or isinstance(reduction, str):
            raise invalid_error(f"reduction: {r.label} ({r.value}) is not supported by {op.aclnn}; accepted: "
                                f"{', '.join(f'{x.label} ({x.value})' for x in op.reductions)}")
        return Reduction.NONE
    return r


def _as_array(name: str, value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, np.generic):
        arr = np.asarray(value)
    else:
        raise invalid_error(f"{name}: expected a numpy.ndarray, got {type(value).__name__}")
    if dt.from_numpy(arr.dtype) is None:
        raise invalid_error(f"{name}: dtype {arr.dtype} is not a tensor dtype aclnn accepts")
    return arr


def _to_float32(value: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def _check_attr_type(op: OpSpec, key: str, value: Any) -> None:
    """aclnn's scalar attributes are C types: a bool is a Python or NumPy bool, nothing else (a string "False" or
    the integer 2 must not be read as a truth value)."""
    if op.attr(key).aclnn_type == "bool" and not isinstance(value, (bool, np.bool_)):
        raise invalid_error(f"{op.attr(key).aclnn_name}: expected a bool, got {type(value).__name__} {value!r:.40}")


def _fmt(dtypes: tuple[DType, ...]) -> str:
    return ", ".join(d.label for d in dtypes) or "none (the op's dtype list is empty on this part)"


class _Validator:
    """Runs one op's checks in order over the already-typed arguments."""

    def __init__(self, op: OpSpec, soc: Soc, names: dict[str, str], arrays: dict[str, np.ndarray],
                 out_shape: Shape | None, out_dtype: DType | None, reduction: Any, attrs: dict[str, Any]) -> None:
        self.op, self.soc, self.names, self.arrays = op, soc, names, arrays
        self.dtypes = {role: dt.from_numpy(a.dtype) for role, a in arrays.items()}
        self.given_out_shape, self.given_out_dtype = out_shape, out_dtype
        self.raw_reduction, self.attrs = reduction, attrs
        self.supported = op.supported_dtypes(soc.arch.npu_arch)
        self.reduction: Reduction | None = None
        self.promoted: DType | None = None
        self.iter_shape: Shape | None = None
        self.result_shape: Shape | None = None

    # -- helpers -------------------------------------------------------------------------------------------------
    def out_dtype(self) -> DType:
        if self.given_out_dtype is not None:
            return self.given_out_dtype
        if self.op.default_out_dtype == "promoted":
            return self._promoted()
        return self.dtypes["target" if self.op.default_out_dtype == "target" else "self"]

    def _promoted(self) -> DType:
        if self.promoted is None:
            self.promoted = promoted_dtype(self.dtypes)
        return self.promoted

    def _require_supported(self, role_or_out: str, d: DType) -> None:
        if d not in self.supported:
            name = self.op.output_param if role_or_out == "out" else self.names[role_or_out]
            raise invalid_error(f"{name}: dtype {d.label} is not supported by {self.op.aclnn} on {self.soc.name} "
                                f"(NpuArch {self.soc.arch.npu_arch}); supported: {_fmt(self.supported)}")

    def _require_cast(self, src: DType, what: str) -> None:
        dst = self.out_dtype()
        if not dt.can_cast(src, dst):
            raise invalid_error(f"{self.op.output_param}: the result ({what}, {src.label}) cannot be cast to the "
                                f"output dtype {dst.label}")

    # -- checks ---------------------------------------------------------------------------------------------------
    def check_reduction(self) -> None:
        self.reduction = parse_reduction(self.op, self.raw_reduction)

    def check_promote(self) -> None:
        p = self._promoted()
        # L1's op_api tests CanCast(promoted -> gradInput) before the support list (ops_semantics §1.2 step 3);
        # for SmoothL1 the order cannot matter: its earlier per-tensor check leaves only supported floats.
        self._require_cast(p, "promoted dtype")
        if p not in self.supported:
            g, s, t = (self.dtypes[r].label for r in ("grad", "self", "target"))
            raise invalid_error(f"{self.names['grad']}/{self.names['self']}/{self.names['target']}: the promoted "
                                f"dtype of ({g}, {s}, {t}) is {p.label}, which {self.op.aclnn} does not support on "
                                f"{self.soc.name}; supported: {_fmt(self.supported)}")
        self._require_supported("out", self.out_dtype())

    def check_same_dtype(self) -> None:
        s = self.dtypes["self"]
        for role in ("grad", "target"):
            if self.dtypes[role] != s:
                raise invalid_error(f"{self.names[role]}: dtype {self.dtypes[role].label} must equal "
                                    f"{self.names['self']}'s dtype {s.label} ({self.op.aclnn} does not promote)")

    def check_self_out_supported(self) -> None:
        self._require_supported("self", self.dtypes["self"])
        self._require_supported("out", self.out_dtype())
        self._require_cast(self.dtypes["self"], f"{self.names['self']}'s dtype")

    def check_each_supported(self) -> None:
        for role in self.dtypes:  # every tensor the call has, in aclnn's order
            self._require_supported(role, self.dtypes[role])
        self._require_supported("out", self.out_dtype())

    def check_out_target_dtype(self) -> None:
        out, t = self.out_dtype(), self.dtypes["target"]
        if out != t:
            raise invalid_error(f"{self.op.output_param}: dtype {out.label} must equal {self.names['target']}'s "
                                f"dtype {t.label}")

    def check_target_is_self(self) -> None:
        s, t = self._bshape("self"), self._bshape("target")
        if self.arrays["self"].size and t != s:  # aclnn skips the shape checks for an empty self
            raise invalid_error(f"{self.names['target']} shape {t} must equal {self.names['self']}'s shape {s}")

    def check_self_casts_to_out(self) -> None:
        self._require_cast(self.dtypes["self"], f"{self.names['self']}'s dtype")

    def check_rank(self) -> None:
        ranks = {self.names[r]: a.ndim for r, a in self.arrays.items()}
        if self.given_out_shape is not None:
            ranks[self.op.output_param] = len(self.given_out_shape)
        elif self.op.shaped_like:  # the out aclnn's caller allocates: that input's shape
            ranks[self.op.output_param] = self.arrays[self.op.shaped_like].ndim
        for name in self.op.rank_checked:
            if ranks.get(name, 0) > MAX_RANK:
                raise invalid_error(f"{name}: rank {ranks[name]} exceeds the maximum of {MAX_RANK} dimensions")

    def check_beta(self) -> None:
        spec = self.op.attr("beta")
        beta = self.attrs["beta"]
        if isinstance(beta, (bool, np.bool_)) or not isinstance(beta, (numbers.Real, np.floating, np.integer)):
            raise invalid_error(f"beta: expected a real number, got {type(beta).__name__}")
        try:
            value = float(beta)
        except OverflowError:  # an integer beyond the float64 range
            value = math.inf if beta > 0 else -math.inf
            if value > 0:
                raise invalid_error("beta: the integer is beyond the float32 range of aclnn's C float beta") from None
        if math.isnan(value) or value < spec.minimum:
            raise invalid_error(f"beta: must be >= {spec.minimum:g} and not NaN, got {value!r}")
        if math.isfinite(value) and not math.isfinite(_to_float32(value)):
            # aclnn's beta is a C float: a finite value that rounds past FLT_MAX has no float to become.
            raise invalid_error(f"beta: {value!r} is beyond the float32 range of aclnn's C float beta "
                                f"(max {_FLOAT32_MAX!r}; inf is accepted)")

    def check_kernel_dtypes(self) -> None:
        allowed = arch_dtypes(self.soc.arch.npu_arch)
        for role, d in kernel_dtypes(self.dtypes, self.out_dtype()).items():
            if d not in allowed:
                name = self.op.output_param if role == "out" else self.names[role]
                cast = "" if d == self.dtypes.get(role, d) else f" (the promoted dtype of {self.dtypes[role].label})"
                raise invalid_error(f"{name}: dtype {d.label}{cast} cannot run on {self.soc.name} (NpuArch "
                                    f"{self.soc.arch.npu_arch}): the part neither moves nor casts {d.label}; "
                                    f"dtypes it runs: {_fmt(allowed)}")

    def _bshape(self, role: str) -> Shape:
        return tuple(self.arrays[role].shape)

    def check_broadcast_all(self) -> None:
        g, s, t = self._bshape("grad"), self._bshape("self"), self._bshape("target")
        gs = broadcast_shapes(g, s)
        if gs is None:
            raise invalid_error(f"{self.names['grad']} shape {g} and {self.names['self']} shape {s} "
                                f"are not broadcastable")
        full = broadcast_shapes(gs, t)
        if full is None:
            raise invalid_error(f"{self.names['target']} shape {t} is not broadcastable with the broadcast of "
                                f"{self.names['grad']} and {self.names['self']} {gs}")
        for role in self.arrays:  # an optional input the call has (aclnn's order) broadcasts with them too
            if role in ("grad", "self", "target"):
                continue
            wider = broadcast_shapes(full, self._bshape(role))
            if wider is None:
                raise invalid_error(f"{self.names[role]} shape {self._bshape(role)} is not broadcastable with the "
                                    f"broadcast of the other inputs {full}")
            full = wider
        self._check_out_shape(full, "the broadcast shape of the inputs")
        self.iter_shape = self.result_shape = full

    def check_kl_shapes(self) -> None:
        g, s, t = self._bshape("grad"), self._bshape("self"), self._bshape("target")
        st = broadcast_shapes(s, t)
        if st is None:
            raise invalid_error(f"{self.names['self']} shape {s} and {self.names['target']} shape {t} "
                                f"are not broadcastable")
        if broadcast_shapes(g, st) != st:
            raise invalid_error(f"{self.names['grad']} shape {g} must broadcast into broadcast({self.names['self']}, "
                                f"{self.names['target']}) = {st} without enlarging it")
        onto = self.op.reduced_onto  # KL: self; KlDivTarget: target
        self._check_out_shape(self._bshape(onto), f"{self.names[onto]}'s shape")
        self.iter_shape, self.result_shape = st, self._bshape(onto)

    def check_into_self(self) -> None:
        s = self._bshape("self")
        self.iter_shape = self.result_shape = s
        if not self.arrays["self"].size:
            return  # aclnn skips the shape checks for an empty self (EmptyRule.SELF_SKIPS_SHAPES)
        self._check_out_shape(s, f"{self.names['self']}'s shape")
        for role in [r for r in self.arrays if r not in ("grad", "self")] + ["grad"]:  # aclnn's order: gradOutput last
            shape = self._bshape(role)
            if broadcast_shapes(s, shape) != s:
                raise invalid_error(f"{self.names[role]} shape {shape} must broadcast into {self.names['self']}'s "
                                    f"shape {s} without enlarging it")

    def _check_out_shape(self, expected: Shape, what: str) -> None:
        if self.given_out_shape is not None and tuple(self.given_out_shape) != tuple(expected):
            raise invalid_error(f"{self.op.output_param}: shape {tuple(self.given_out_shape)} must equal {what} "
                                f"{tuple(expected)}")

    def run(self) -> None:
        dispatch = {
            Check.REDUCTION: self.check_reduction, Check.PROMOTE: self.check_promote,
            Check.SAME_DTYPE: self.check_same_dtype, Check.SELF_OUT_SUPPORTED: self.check_self_out_supported,
            Check.EACH_SUPPORTED: self.check_each_supported, Check.SELF_CASTS_TO_OUT: self.check_self_casts_to_out,
            Check.RANK: self.check_rank, Check.BETA: self.check_beta, Check.BROADCAST_ALL: self.check_broadcast_all,
            Check.KL_SHAPES: self.check_kl_shapes, Check.INTO_SELF: self.check_into_self,
            Check.KERNEL_DTYPES: self.check_kernel_dtypes, Check.OUT_TARGET_DTYPE: self.check_out_target_dtype,
            Check.TARGET_IS_SELF: self.check_target_is_self,
        }
        for check in self.op.checks:
            if check is not Check.NULL:
                dispatch[check]()
        if self.reduction is None:  # ops whose reduction aclnn never validates still need it parsed
            self.check_reduction()


def _divisor(rule: Divisor, out_shape: Shape, self_shape: Shape, iter_shape: Shape) -> int:
    if rule is Divisor.OUTPUT_NUMEL:
        return numel(out_shape)
    if rule is Divisor.SELF_NUMEL:
        return numel(self_shape)
    if rule is Divisor.SELF_TARGET_NUMEL:
        return numel(iter_shape)
    if rule is Divisor.SELF_TARGET_DIM0:
        return iter_shape[0] if iter_shape else 1
    raise AssertionError(rule)


def coefficient(op: OpSpec, reduction: Reduction, out_shape: Shape, self_shape: Shape, iter_shape: Shape) -> float:
    """The reduction coefficient in float64 (the kernels round it to fp32 once)."""
    if reduction is Reduction.MEAN:
        rule = op.mean_divisor
    elif reduction is Reduction.BATCHMEAN:
        rule = op.batchmean_divisor
    else:
        return op.coefficient
    n = _divisor(rule, out_shape, self_shape, iter_shape)
    if n == 0:
        # aclnn's tiling refuses a mean over an empty space (ops_semantics §1.1/§4.1): ACLNN_ERR_INNER_TILING_ERROR.
        raise LossGradError(ACLNN_ERR_INNER_TILING_ERROR,
                            f"reduction {reduction.label}: the divisor ({rule.value}) is 0")
    return op.coefficient / n


def split_args(spec: OpSpec, args: tuple[Any, ...]) -> tuple[dict[str, Any], Any, Any]:
    """aclnn's positional order: the op's tensors (OpSpec.inputs; None for an absent optional one), then
    reduction (default "mean"), then the attributes (a mapping, or None). Returns (role -> tensor, reduction,
    attrs)."""
    n = len(spec.inputs)
    if not n <= len(args) <= n + 2:
        raise TypeError(f"{spec.name}: expected the {n} tensors ({', '.join(i.aclnn for i in spec.inputs)}), then "
                        f"reduction and attributes (optional), got {len(args)} positional arguments")
    tensors = {i.role: v for i, v in zip(spec.inputs, args)}
    reduction = args[n] if len(args) > n else "mean"
    attrs = args[n + 1] if len(args) > n + 1 else None
    return tensors, reduction, attrs


def shapes_accepted(op: "str | OpSpec", *shapes: Shape | None, soc: "str | Soc | None" = None) -> bool:
    """Whether aclnn's validation accepts these input shapes (aclnn's order; None for an absent optional input, and
    optional inputs left out at the end are absent) in float32 with reduction none: the shape patterns a test or a
    tool draws that an op refuses (BCE's inputs broadcast into self, BCEWithLogits' target is self's shape)."""
    spec = get_op(op)
    padded = list(shapes) + [None] * (len(spec.inputs) - len(shapes))
    arrays = [None if s is None else np.broadcast_to(np.zeros((), np.float32), s) for s in padded]
    try:
        validate(spec, *arrays, "none", soc=soc)
    except LossGradError as e:
        if e.code != ACLNN_ERR_PARAM_INVALID:
            raise
        return False
    return True


def validate(op: "str | OpSpec", *args: Any, out_shape: Shape | None = None,
             out_dtype: "DType | str | np.dtype | None" = None, soc: "str | Soc | None" = None) -> Call:
    """Validate an invocation exactly as the op's aclnn first stage does; return the normalised Call. `args`, in
    aclnn's order: the op's tensors (None for an absent optional one), reduction (default "mean"), attributes."""
    spec = get_op(op)
    values, reduction, attrs = split_args(spec, args)
    soc_ = get_soc(soc)
    names = {i.role: i.aclnn for i in spec.inputs}
    missing = [i.aclnn for i in spec.inputs if values[i.role] is None and not i.optional]
    if missing:
        but = " but the optional ones" if any(i.optional for i in spec.inputs) else ""
        raise null_error(f"{', '.join(missing)}: null input ({spec.aclnn} requires every tensor argument{but})")
    arrays = {role: _as_array(names[role], v) for role, v in values.items() if v is not None}
    full_attrs = {a.name: a.default for a in spec.attrs}
    for key, value in (attrs or {}).items():
        if key not in full_attrs:
            raise invalid_error(f"{key}: {spec.aclnn} has no attribute of that name")
        _check_attr_type(spec, key, value)
        full_attrs[key] = value
    if out_dtype is not None:
        try:
            out_dtype = dt.parse(out_dtype)
        except ValueError:
            raise invalid_error(f"{spec.output_param}: unknown dtype {out_dtype!r}") from None
    v = _Validator(spec, soc_, names, arrays, None if out_shape is None else tuple(out_shape), out_dtype,
                   reduction, full_attrs)
    v.run()
    assert v.reduction is not None and v.iter_shape is not None and v.result_shape is not None
    if "log_target" in full_attrs:
        full_attrs["log_target"] = bool(full_attrs["log_target"])
    if "beta" in full_attrs:
        full_attrs["beta"] = float(full_attrs["beta"])
    s_shape = tuple(arrays["self"].shape)
    if spec.empty_rule is EmptyRule.ANY_INPUT:
        launch = all(a.size for a in arrays.values())
    else:  # SELF_ONLY, SELF_SKIPS_SHAPES (where another empty input already failed the shape check)
        launch = arrays["self"].size > 0
    if launch and numel(v.iter_shape) == 0:
        launch = False  # KL with an empty target broadcast: the sum over no contributions is zero
    coef = spec.coefficient
    if launch or (spec.empty_rule is EmptyRule.SELF_ONLY and arrays["self"].size > 0 and spec.empty_mean_refused):
        coef = coefficient(spec, v.reduction, v.result_shape, s_shape, v.iter_shape)
    return Call(op=spec, soc=soc_, inputs=arrays,
                reduction=v.reduction, attrs=full_attrs, out_shape=v.result_shape, out_dtype=v.out_dtype(),
                iter_shape=v.iter_shape, coefficient=coef, launch=launch,
                dtypes={role: dt.from_numpy(a.dtype) for role, a in arrays.items()})
