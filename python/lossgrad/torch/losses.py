"""Drop-in losses: ``torch.nn.functional``'s signatures, forward computed by torch, backward by our operators.

What they share; each op folder's torch_facts.py declares its own drop-in (`DropIn`).

They reproduce torch's gradient wherever torch defines it (docs/torch.md lists how):
- mean under broadcasting: torch divides by the broadcast element count, aclnn's MSE/SmoothL1 by numel(self). The
  op is called on self and target expanded to the broadcast shape (stride-0 views, no copy; the kernel broadcasts),
  and the per-element gradient is summed back to each input's shape, as torch's autograd does after its own expand.
- KL batchmean: torch divides by input.size(0), aclnn by dim 0 of broadcast(input, target). Where they agree the op
  runs with "batchmean"; where they differ it runs with "sum" on grad_output / input.size(0), which is the gradient
  torch's ``kl_div`` computes (its batchmean is a sum divided afterwards).
- SmoothL1 beta = 0: torch routes it to l1_loss; the op's beta = 0 is exactly L1's sign with sign(0) = 0, the same
  gradient.
- the target's gradient: for a loss of input - target (L1/MSE/SmoothL1) it is minus the input's (before the sum to
  target's shape), as in torch; where aclnn has no target gradient (KL, SoftMargin) it comes from torch's own autograd.
- ``size_average``/``reduce``: mapped to a reduction by torch's own legacy rule (with torch's deprecation warning).
- ``weight`` (l1_loss, mse_loss): the unreduced loss from our op, weighted and reduced by torch ops, as torch does.
Where aclnn and torch still differ: a NaN in input - target gives 0 (aclnn's sign) instead of NaN for L1 and
SmoothL1.
- dtypes: the backward runs in torch's result dtype (the promotion of grad_output, input and target; float32 under
  CPU autocast), then casts to each input's dtype before summing to its shape, as torch's graph does; so every
  float32/float16/bfloat16 mix and autocast give torch's gradient. float64 has no kernel on any SoC: 161002.
- torch.func: setup_context-style Functions with generated vmap rules; inside a transform the backward calls the
  op's functional form (ops.functional), which torch.func accepts.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import torch
import torch.nn.functional as F
from torch.nn import _reduction as _legacy

from ..wrappers import ATTR_TYPES

if TYPE_CHECKING:
    from ..opspec import OpSpec


def legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy.legacy_get_string(size_average, reduce)
    return reduction


def backward_op(name: str) -> Any:
    """The operator the backward calls: under torch.func's transforms its setup_context-style Function (the only
    kind they accept), elsewhere the dispatcher's op (what torch.compile traces as an opaque node)."""
    from .ops import functional, op  # the ops register at import; the op folders' torch facts import this module

    if not torch.compiler.is_compiling() and torch._C._functorch.peek_interpreter_stack() is not None:
        return functional(name)
    return op(name)


def compute_dtype(*tensors: torch.Tensor) -> torch.dtype:
    """torch's result dtype for the loss's backward: the promotion of grad_output, input and target (under CPU
    autocast the loss ran in float32, so grad_output is float32 and so is the computation)."""
    found = tensors[0].dtype
    for t in tensors[1:]:
        found = torch.promote_types(found, t.dtype)
    return found


class Pointwise(torch.autograd.Function):
    """A pointwise loss(input, target) with torch; d/dinput from the kernel on the broadcast views.

    `forward(input, target, reduction, *attrs)` is torch's loss; the target's gradient is minus the input's
    (`target_grad` "minus_input": a loss of input - target) or torch's own (`"torch"`: a torch.func.vjp of forward).
    setup_context style with generate_vmap_rule, so torch.func's grad, vjp and vmap apply (the ops' own vmap rule
    is registered in ops.py)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(input: torch.Tensor, target: torch.Tensor, name: str, forward: Any, target_grad: str, reduction: str,
                *attrs: Any) -> torch.Tensor:
        return forward(input, target, reduction, *attrs)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        input, target, ctx.name, ctx.forward, ctx.target_grad, ctx.reduction, *attrs = inputs
        ctx.attrs = tuple(attrs)
        ctx.save_for_backward(input, target)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        input, target = ctx.saved_tensors
        shape = torch.broadcast_shapes(input.shape, target.shape)
        # As torch: the gradient in the promoted dtype (each input upcast exactly), then cast to each input's dtype
        # and summed to its shape there (the cast node sits before the expand's sum in torch's graph).
        compute = compute_dtype(grad_output, input, target)
        grad = backward_op(ctx.name)(grad_output.to(compute), input.to(compute).expand(shape),
                                     target.to(compute).expand(shape), ctx.reduction, *ctx.attrs, out_dtype=compute)
        grad_input = grad.to(input.dtype).sum_to_size(input.shape) if ctx.needs_input_grad[0] else None
        grad_target = None
        if ctx.needs_input_grad[1]:
            if ctx.target_grad == "minus_input":
                grad_target = (-grad).to(target.dtype).sum_to_size(target.shape)
            else:  # torch's own gradient (a torch.func.vjp composes with torch.func's transforms)
                _, vjp = torch.func.vjp(lambda t: ctx.forward(input, t, ctx.reduction, *ctx.attrs), target)
                (grad_target,) = vjp(grad_output)
        return (grad_input, grad_target, None, None, None, None) + (None,) * len(ctx.attrs)


@dataclass(frozen=True)
class DropIn:
    """An op folder's drop-in loss (torch_facts.LOSS): the function with torch.nn.functional's signature and the
    torch.nn.Module subclass, both exported by lossgrad.torch under their own names, and torch's function and module
    they stand in for (what the tests compare them with)."""

    function: Any
    module: type
    torch_function: Any
    torch_module: type


def pointwise_drop_in(op: "OpSpec", functional: Callable[..., torch.Tensor], module: type,
                      target_grad: str) -> DropIn:
    """The drop-in of a pointwise loss(input, target) (`Pointwise`): a function with `functional`'s own signature
    (size_average/reduce by torch's legacy rule; a `weight`, where torch's function has one, applied by `weighted`)
    and a subclass of torch's `module` whose forward passes its reduction and the op's attributes (SPEC.attrs, by
    their Python names, which must be `functional`'s parameters) on. `target_grad` as `Pointwise`.

    Both are named after the op: the function is SPEC.name without "_backward" (torch's own name for every torch
    loss: l1_loss, mse_loss, ...), the module is torch's module name where the function is torch's, else the
    function's name in CamelCase (an op torch lacks, or a copied folder: no clash with another op's drop-in)."""
    sig = inspect.signature(functional)
    attrs = tuple(op.attrs)
    unknown = [a.name for a in attrs if a.name not in sig.parameters]
    if unknown:
        raise TypeError(f"{op.template}: SPEC.attrs {unknown} are not parameters of {functional.__name__}")
    has_weight = "weight" in sig.parameters

    def forward(input: torch.Tensor, target: torch.Tensor, reduction: str, *values: Any) -> torch.Tensor:
        return functional(input, target, reduction=reduction, **{a.name: v for a, v in zip(attrs, values)})

    def loss(*args: Any, **kwargs: Any) -> torch.Tensor:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        reduction = legacy_reduction(given["size_average"], given["reduce"], given["reduction"])
        values = tuple(ATTR_TYPES.get(a.kernel_type, lambda v: v)(given[a.name]) for a in attrs)
        input, target = given["input"], given["target"]
        if has_weight and given["weight"] is not None:
            return weighted(Pointwise.apply(input, target, op.name, forward, target_grad, "none", *values),
                            given["weight"], input, reduction)
        return Pointwise.apply(input, target, op.name, forward, target_grad, reduction, *values)

    name, module_name = drop_in_names(op, functional, module)
    loss.__name__ = loss.__qualname__ = name
    loss.__module__ = "lossgrad.torch"
    loss.__doc__ = (f"``torch.nn.functional.{functional.__name__}``; the input gradient comes from "
                    f"``torch.ops.lossgrad.{op.name}``.")
    loss.__signature__ = sig  # type: ignore[attr-defined]

    def module_forward(self: Any, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return loss(input, target, reduction=self.reduction, **{a.name: getattr(self, a.name) for a in attrs})

    cls = type(module_name, (module,), {
        "forward": module_forward, "__module__": "lossgrad.torch", "__qualname__": module_name,
        "__doc__": f"``torch.nn.{module.__name__}`` whose backward runs our {op.aclnn} kernel."})
    return DropIn(loss, cls, functional, module)


def drop_in_names(op: "OpSpec", functional: Callable[..., torch.Tensor], module: type) -> tuple[str, str]:
    """(function name, module name) of an op's drop-in: SPEC.name without "_backward" (torch's own name for every
    torch loss), and torch's module name where the function is torch's, else the function's name in CamelCase (an
    op torch lacks, or a copied folder: no clash with another op's drop-in)."""
    name = op.name.removesuffix("_backward")
    return name, (module.__name__ if name == functional.__name__ else "".join(w.capitalize() for w in name.split("_")))


def named_drop_in(op: "OpSpec", function: Any, module: type, torch_function: Any, torch_module: type) -> DropIn:
    """A hand-built drop-in (a function and a torch.nn module subclass) renamed as `drop_in_names` says."""
    name, module_name = drop_in_names(op, torch_function, torch_module)
    function.__name__ = function.__qualname__ = name
    module.__name__ = module.__qualname__ = module_name
    return DropIn(function, module, torch_function, torch_module)


def weighted(loss: torch.Tensor, weight: torch.Tensor, input: torch.Tensor, reduction: str) -> torch.Tensor:
    """torch's weighted l1/mse: the unreduced loss times weight, then sum, or sum / sum(weight) for mean."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return torch.sum(weighted)
    if reduction == "mean":
        return torch.sum(weighted) / torch.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


# -- the derivative of a backward (double backward): what an op folder's torch_facts.derivative builds on ------------

def aclnn_sign(x: torch.Tensor) -> torch.Tensor:
    """aclnn's sign from two comparisons: 0 at 0 and at NaN (docs/semantics.md)."""
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


def pointwise_derivative(gg: torch.Tensor, g: torch.Tensor, s: torch.Tensor, t: torch.Tensor, c: float,
                         needs: tuple[bool, bool, bool], f: torch.Tensor, df_ds: torch.Tensor | None,
                         df_dt: torch.Tensor | None) -> tuple[torch.Tensor | None, ...]:
    """The derivative of out = f(self, target) * gradOutput * c (f, df/dself and df/dtarget in gg's dtype; None: 0
    almost everywhere): (d gradOutput, d self, d target), each summed to its input's shape in its dtype."""
    need_g, need_s, need_t = needs
    d_g = (gg * f * c).sum_to_size(g.shape).to(g.dtype) if need_g else None
    gf = g.to(gg.dtype)
    d_s = (gg * gf * df_ds * c).sum_to_size(s.shape).to(s.dtype) if need_s and df_ds is not None else None
    d_t = (gg * gf * df_dt * c).sum_to_size(t.shape).to(t.dtype) if need_t and df_dt is not None else None
    return d_g, d_s, d_t
