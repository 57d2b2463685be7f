"""Public per-op functions made from the registry: one per op, with a real signature and docstring.

`public_function(op, impl, keyword_only)` returns a function named after the op whose `inspect.signature` is the op's
aclnn order (its tensors, each named by its role's Python parameter, an optional one defaulting to None; reduction;
then the op's attributes with their defaults) followed by the keyword-only options of the module that builds it
(out_dtype, soc, backend, ...); `help()` shows both. `impl` gets the op, the tensors (a tuple in aclnn's order), the
reduction, the attributes as a dict (None for an op without attributes) and the keyword-only options.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

from .opspec import ROLE, OpSpec

_POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
_KW = inspect.Parameter.KEYWORD_ONLY
ATTR_TYPES: dict[str, type] = {"Float": float, "Bool": bool}  # an attribute's kernel type -> its Python type


def signature(op: OpSpec, keyword_only: Mapping[str, tuple[Any, Any]], returns: Any = Any,
              reduction_default: Any = "mean") -> inspect.Signature:
    """The op's public signature: tensors, reduction, attributes, then `keyword_only` (name -> (default,
    annotation))."""
    params = [inspect.Parameter(ROLE[i.role].param, _POS, annotation=Any, **({"default": None} if i.optional else {}))
              for i in op.inputs]
    params.append(inspect.Parameter("reduction", _POS, default=reduction_default, annotation=Any))
    params += [inspect.Parameter(a.name, _POS, default=a.default, annotation=ATTR_TYPES.get(a.kernel_type, Any))
               for a in op.attrs]
    params += [inspect.Parameter(name, _KW, default=default, annotation=ann)
               for name, (default, ann) in keyword_only.items()]
    return inspect.Signature(params, return_annotation=returns)


def public_function(op: OpSpec, impl: Callable[..., Any], keyword_only: Mapping[str, tuple[Any, Any]],
                    module: str, doc: str, returns: Any = Any, reduction_default: Any = "mean") -> Callable[..., Any]:
    sig = signature(op, keyword_only, returns, reduction_default)
    attr_names = tuple(a.name for a in op.attrs)

    def function(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        values = bound.arguments
        tensors = tuple(values[ROLE[i.role].param] for i in op.inputs)
        attrs = {name: values[name] for name in attr_names} if attr_names else None
        options = {name: values[name] for name in keyword_only}
        return impl(op, tensors, values["reduction"], attrs, **options)

    function.__name__ = function.__qualname__ = op.name
    function.__module__ = module
    function.__doc__ = doc
    function.__signature__ = sig  # type: ignore[attr-defined]
    function.__annotations__ = {p.name: p.annotation for p in sig.parameters.values()} | {"return": returns}
    return function


def describe(op: OpSpec, what: str) -> str:
    """A generated docstring: what the function is, the op's formula and its attributes."""
    lines = [f"{what} {op.aclnn}.", "", op.formula]
    if op.attrs:
        lines += ["", "Attributes: " + ", ".join(f"{a.name} (aclnn {a.aclnn_name}, default {a.default!r})"
                                                 for a in op.attrs)]
    return "\n".join(lines)
