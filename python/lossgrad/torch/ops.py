"""Every op of the registry as a PyTorch custom operator: ``torch.ops.lossgrad.<name>``.

Each op is defined once, from the registry, with two overloads that share every kernel:

    lossgrad::l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction=1, *,
                               ScalarType? out_dtype=None, str? soc=None) -> Tensor
    lossgrad::l1_loss_backward.str(Tensor grad_output, Tensor self, Tensor target, str reduction, *,
                                   ScalarType? out_dtype=None, str? soc=None) -> Tensor

(SmoothL1 adds ``float beta=1.0`` and KL ``bool log_target=False`` after ``reduction``, as aclnn orders them; an
optional input is ``Tensor? weight=None`` after target.) The
``default`` overload takes aclnn's integer reduction, as aten's ``mse_loss_backward`` does; the ``str`` overload takes
its name and is a CompositeImplicitAutograd alias of the default one, so ``torch.ops.lossgrad.<name>(..., "sum")``
and ``(..., 2)`` are the same op to every backend, to fake tensors and to autograd.

Kernels:
- CPU: the real kernel on the twin (``lossgrad.<name>(..., backend="twin")``), on NumPy views of the tensors' memory.
- PrivateUse1 (torch_npu's ``npu`` device): the installed custom-op package's aclnn two-stage API
  (``lossgrad.torch.npu``).
- Fake/Meta: output shape and dtype from the same validation the kernels run (``lossgrad.validation``).
- Autograd: the derivative of each backward (double backward): the op folder's ``torch_facts.derivative``, with
  torch ops; the reduction coefficient comes from ``lossgrad.validation.coefficient``.

Validation (``LossGradError`` 161002, and 561002 for a mean over nothing) happens inside every kernel and the fake
one. The required tensor arguments are not optional in the schema, so a null cannot reach the op: aclnn's 161001 is
raised by the Python wrappers in ``lossgrad.torch`` (``l1_loss_backward`` etc.), which also accept ``None``.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

import torch
from torch.fx.experimental.symbolic_shapes import optimization_hint

from .. import api
from ..errors import LossGradError
from ..registry import OPS, ROLE, OpSpec, Reduction, op_part
from ..socs import get_soc
from ..validation import Call, coefficient, parse_reduction, validate
from ._convert import DTYPE_TO_TORCH, from_numpy, lossgrad_dtype, shape_stand_in, to_numpy

NAMESPACE = "lossgrad"
_SCHEMA_TYPES = {"Float": "float", "Bool": "bool"}

# -- the SoC the CPU kernels (the twin) emulate ---------------------------------------------------------------------

_SOC: contextvars.ContextVar[str | None] = contextvars.ContextVar("lossgrad_torch_soc", default=None)


@contextlib.contextmanager
def soc(name: str) -> Iterator[str]:
    """Run the CPU kernels inside the block as on this SoC (a CANN SoC version or an alias such as "A2").

    An op's own ``soc=`` argument wins over the block. NPU tensors always run as the device's SoC. The SoC in effect
    is the one where the kernel runs, i.e. where ``loss.backward()`` is called, not where the loss was built.
    """
    resolved = get_soc(name).name  # an unknown name fails here, not at the first backward
    token = _SOC.set(resolved)
    try:
        yield resolved
    finally:
        _SOC.reset(token)


def current_soc(explicit: str | None = None) -> str:
    """The SoC a CPU kernel runs as: the op's ``soc=``, else the innermost ``soc()`` block, else the default part."""
    return get_soc(explicit if explicit is not None else _SOC.get()).name


# -- schema and argument binding -------------------------------------------------------------------------------------

def _attr_default(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else repr(value)


def schema(op: OpSpec, overload: str) -> str:
    """The op's schema (without the namespace) for the "default" (int reduction) or "str" overload."""
    reduction = "int reduction=1" if overload == "default" else "str reduction"
    attrs = "".join(f", {_SCHEMA_TYPES[a.kernel_type]} {a.name}={_attr_default(a.default)}" for a in op.attrs)
    name = op.name if overload == "default" else f"{op.name}.{overload}"
    # An optional tensor defaults to None where the reduction has a default too (the str overload's reduction has
    # none, and no default may precede a positional argument without one: it takes the optional tensor as given).
    default = "=None" if overload == "default" else ""
    tensors = ", ".join(f"Tensor? {ROLE[i.role].param}{default}" if i.optional else f"Tensor {ROLE[i.role].param}"
                        for i in op.inputs)
    return f"{name}({tensors}, {reduction}{attrs}, *, ScalarType? out_dtype=None, str? soc=None) -> Tensor"


@dataclass(frozen=True)
class Bound:
    """One call's arguments, however the dispatcher passed them."""

    op: OpSpec
    tensors: tuple[torch.Tensor | None, ...]  # the op's tensors in aclnn's order (None: an absent optional one)
    reduction: Any
    attrs: dict[str, Any]
    out_dtype: torch.dtype | None
    soc: str | None

    def role(self, name: str) -> torch.Tensor | None:
        return next(t for i, t in zip(self.op.inputs, self.tensors) if i.role == name)

    @property
    def grad(self) -> torch.Tensor:
        return self.role("grad")  # type: ignore[return-value]  # a required role

    @property
    def self_(self) -> torch.Tensor:
        return self.role("self")  # type: ignore[return-value]

    @property
    def target(self) -> torch.Tensor:
        return self.role("target")  # type: ignore[return-value]

    def present(self) -> list[tuple[str, torch.Tensor]]:
        """(aclnn name, tensor) of the tensors the call has."""
        return [(i.aclnn, t) for i, t in zip(self.op.inputs, self.tensors) if t is not None]

    def lossgrad_out_dtype(self) -> Any:
        return None if self.out_dtype is None else lossgrad_dtype(self.out_dtype, self.op.output_param)


def bind(op: OpSpec, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Bound:
    params = [ROLE[i.role].param for i in op.inputs]
    names = (*params, "reduction", *(a.name for a in op.attrs), "out_dtype", "soc")
    values: dict[str, Any] = {"reduction": int(Reduction.MEAN), "out_dtype": None, "soc": None}
    values.update({ROLE[i.role].param: None for i in op.inputs if i.optional})
    values.update({a.name: a.default for a in op.attrs})
    values.update(zip(names, args))
    values.update(kwargs)
    return Bound(op, tuple(values[p] for p in params), values["reduction"],
                 {a.name: values[a.name] for a in op.attrs}, values["out_dtype"], values["soc"])


def _hint(size: Any) -> int:
    return size if isinstance(size, int) else optimization_hint(size, fallback=2)


def validate_shapes(b: Bound, soc_name: str) -> Call:
    """aclnn's validation of a call from the tensors' shapes and dtypes only (fake, meta and device tensors). Symbolic
    sizes are validated at their example values; the fake output's shape stays symbolic."""
    arrays = [None if t is None else shape_stand_in(tuple(_hint(n) for n in t.shape), lossgrad_dtype(t.dtype, i.aclnn))
              for t, i in zip(b.tensors, b.op.inputs)]
    return validate(b.op, *arrays, b.reduction, b.attrs, out_dtype=b.lossgrad_out_dtype(), soc=soc_name)


def common_device(b: Bound) -> torch.device:
    """The device every tensor must share, as aten's TensorIterator decides it: the first tensor's that is not a 0-d
    CPU tensor (torch's CPU scalars may accompany any device). Mixed devices raise aten's RuntimeError, so a meta
    tensor among CPU ones is refused instead of yielding an uninitialised result."""
    device: torch.device | None = None
    for name, t in b.present():
        if t.dim() == 0 and t.device.type == "cpu":
            continue
        if device is None:
            device = t.device
        elif t.device != device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{device} and {t.device}! ({name} of {NAMESPACE}::{b.op.name})")
    return device if device is not None else torch.device("cpu")


def output_shape(b: Bound) -> torch.Size:
    if b.op.reduced_onto:  # KL: self's shape, KlDivTarget: target's
        return b.self_.shape if b.op.reduced_onto == "self" else b.target.shape
    return torch.broadcast_shapes(*(t.shape for _, t in b.present()))


# -- kernels ----------------------------------------------------------------------------------------------------------

def _cpu_kernel(op: OpSpec) -> Callable[..., torch.Tensor]:
    fn = getattr(api, op.name)

    def kernel(*args: Any, **kwargs: Any) -> torch.Tensor:
        b = bind(op, args, kwargs)
        common_device(b)
        for name, x in b.present():  # float8, complex32: no NumPy view, 161002 before one is made
            lossgrad_dtype(x.dtype, name)
        arrays = (None if x is None else to_numpy(x) for x in b.tensors)
        result = fn(*arrays, b.reduction, **b.attrs, out_dtype=b.lossgrad_out_dtype(), soc=current_soc(b.soc),
                    backend="twin")
        if not (result.flags.c_contiguous and result.flags.writeable):  # torch.from_numpy wants to own it
            result = result.copy(order="C")
        return from_numpy(result)

    return kernel


def _fake_kernel(op: OpSpec) -> Callable[..., torch.Tensor]:
    def fake(*args: Any, **kwargs: Any) -> torch.Tensor:
        b = bind(op, args, kwargs)
        device = common_device(b)
        call = validate_shapes(b, _fake_soc(b))
        like = next(t for t in (b.self_, *(x for _, x in b.present())) if t.device == device)  # keeps the fake mode
        return like.new_empty(output_shape(b), dtype=DTYPE_TO_TORCH[call.out_dtype])

    return fake


def _fake_soc(b: Bound) -> str:
    if b.self_.device.type not in ("cpu", "meta"):
        from .npu import device_soc_or_none  # the device's SoC where torch_npu can tell it
        found = device_soc_or_none(b.self_.device)
        if found is not None:
            return found
    return current_soc(b.soc)


def _by_name(op: OpSpec) -> Callable[..., torch.Tensor]:
    """The "str" overload: the reduction's name mapped to aclnn's integer, then the default overload."""
    default = getattr(getattr(torch.ops, NAMESPACE), op.name).default

    def alias(*args: Any, **kwargs: Any) -> torch.Tensor:
        b = bind(op, args, kwargs)
        reduction = int(parse_reduction(op, b.reduction))  # unknown or unsupported names: 161002, as aclnn's ints
        return default(*b.tensors, reduction, *b.attrs.values(), out_dtype=b.out_dtype, soc=b.soc)

    return alias


# -- autograd: the derivative of each backward (double backward) -----------------------------------------------------

def _setup_context(op: OpSpec) -> Callable[..., None]:
    def setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: Mapping[str, Any], output: torch.Tensor
              ) -> None:
        b = bind(op, inputs, keyword_only_inputs)
        reduction = parse_reduction(op, b.reduction)
        iter_shape = (torch.broadcast_shapes(b.self_.shape, b.target.shape) if op.reduced_onto
                      else torch.broadcast_shapes(*(t.shape for _, t in b.present())))
        try:
            ctx.c = coefficient(op, reduction, tuple(output_shape(b)), tuple(b.self_.shape), tuple(iter_shape))
        except LossGradError:  # a mean over nothing: the op returned without launching, nothing depends on c
            ctx.c = 0.0
        ctx.attrs = b.attrs
        ctx.save_for_backward(*b.tensors)

    return setup


def _double_backward(op: OpSpec) -> Callable[..., tuple[torch.Tensor | None, ...]]:
    n_rest = 1 + len(op.attrs)  # reduction and the attributes take no gradient
    n = len(op.inputs)

    def backward(ctx: Any, gg: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        # the op folder's torch_facts.derivative: the gradients of out = backward(<tensors>) with respect to each
        # tensor, in aclnn's order (g, s, t, then an optional one, None when absent)
        derivative = op_part(op, "torch_facts").derivative
        found = derivative(gg, *ctx.saved_tensors, ctx.c, ctx.attrs, tuple(ctx.needs_input_grad[:n]))
        return tuple(found) + (None,) * n_rest

    return backward


def _functional(op: OpSpec) -> Callable[..., torch.Tensor]:
    """The op as a setup_context-style autograd.Function, for the drop-ins' backward: the Function torch.func's
    grad, vjp and vmap require (torch.library.register_autograd's generated one lacks setup_context and fails under
    them, and a Function cannot be applied inside a dispatcher kernel there). Its forward runs the op (without
    recording), its backward is the op's registered derivative; vmap is generated from the op's vmap rule."""
    default = getattr(getattr(torch.ops, NAMESPACE), op.name).default
    setup, derivative = _setup_context(op), _double_backward(op)

    class Fn(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(*args: Any) -> torch.Tensor:
            *positional, out_dtype, soc_name = args
            # grad mode is off in a Function's forward: the op's autograd kernel passes straight to its kernels
            return default(*positional, out_dtype=out_dtype, soc=soc_name)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
            *positional, out_dtype, soc_name = inputs
            setup(ctx, tuple(positional), {"out_dtype": out_dtype, "soc": soc_name}, output)

        @staticmethod
        def backward(ctx: Any, gg: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
            return (*derivative(ctx, gg), None, None)  # out_dtype and soc take no gradient

    Fn.__name__ = f"{op.name}_function"

    def call(*args: Any, **kwargs: Any) -> torch.Tensor:
        b = bind(op, args, kwargs)
        reduction = int(parse_reduction(op, b.reduction))  # the default overload's integer
        return Fn.apply(*b.tensors, reduction, *b.attrs.values(), b.out_dtype, b.soc)

    return call


# -- vmap: one kernel call per batch entry ------------------------------------------------------------------------

def _vmap_rule(op: OpSpec) -> Callable[..., tuple[torch.Tensor, int]]:
    """torch.func.vmap over the op: the op on each batch entry, stacked along dim 0. A batched call cannot be one
    kernel launch: the reduction's divisor and KL's sum to self's shape are per entry."""
    default = getattr(getattr(torch.ops, NAMESPACE), op.name).default

    def rule(info: Any, in_dims: tuple[Any, ...], *args: Any, **kwargs: Any) -> tuple[torch.Tensor, int]:
        def entry(i: int) -> list[Any]:
            return [a.select(d, i) if d is not None else a for a, d in zip(args, in_dims)]

        return torch.stack([default(*entry(i), **kwargs) for i in range(info.batch_size)]), 0

    return rule


# -- registration -----------------------------------------------------------------------------------------------------

LIBRARY = torch.library.Library(NAMESPACE, "DEF")


def _register(op: OpSpec) -> None:
    from .npu import npu_kernel  # imports torch_npu lazily, at the first NPU call

    qualified = f"{NAMESPACE}::{op.name}"
    LIBRARY.define(schema(op, "default"))
    LIBRARY.define(schema(op, "str"))
    LIBRARY.impl(op.name, _cpu_kernel(op), "CPU")
    LIBRARY.impl(op.name, npu_kernel(op), "PrivateUse1")
    torch.library.register_fake(qualified, _fake_kernel(op), lib=LIBRARY)
    torch.library.register_autograd(qualified, _double_backward(op), setup_context=_setup_context(op), lib=LIBRARY)
    LIBRARY.impl(f"{op.name}.str", _by_name(op), "CompositeImplicitAutograd")
    torch.library.register_vmap(qualified, _vmap_rule(op), lib=LIBRARY)


for _op in OPS.values():
    _register(_op)


_FUNCTIONAL = {name: _functional(spec) for name, spec in OPS.items()}


def functional(name: str) -> Callable[..., torch.Tensor]:
    """The op as an autograd.Function that torch.func's transforms accept (what the drop-ins' backward calls)."""
    return _FUNCTIONAL[name]


def op(name: str) -> Any:
    """The op's overload packet, e.g. ``op("mse_loss_backward") is torch.ops.lossgrad.mse_loss_backward``."""
    return getattr(getattr(torch.ops, NAMESPACE), name)
