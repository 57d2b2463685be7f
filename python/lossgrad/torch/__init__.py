"""PyTorch integration (optional extra ``ascend-lossgrad[torch]``): custom operators and drop-in losses.

``import lossgrad.torch`` registers ``torch.ops.lossgrad.<op name>`` for every op of the registry (aclnn semantics; CPU
tensors run the real kernel on the twin, NPU tensors the installed custom-op package; fake kernels for tracing) and
provides each op folder's drop-in loss (``lossgrad.torch.mse_loss``, ``MSELoss``, ...) with ``torch.nn.functional``'s
signatures, whose backward runs those operators. ``import lossgrad`` never imports torch. See docs/torch.md.
"""
from __future__ import annotations

try:
    import torch as _torch  # noqa: F401
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess by tests/torch
    raise ImportError("lossgrad.torch needs PyTorch: pip install 'ascend-lossgrad[torch]' "
                      f"(or pip install torch==2.13.0) ({_exc})") from _exc

import numbers
from typing import Any

from ..errors import LossGradError, invalid_error, null_error
from ..registry import OPS, OpFolderError, OpSpec, op_part
from ..validation import parse_reduction
from ..wrappers import describe, public_function
from .npu import NpuUnavailable
from .ops import current_soc, op, soc



def _check_scalars(spec: OpSpec, reduction: Any, attrs: tuple[Any, ...]) -> None:
    """The NumPy API's scalar rules before torch's schema converts anything (a bool is an int to it, and an int a
    bool): reduction an int (not a bool) or a name, beta a real number (not a bool), log_target a bool."""
    parse_reduction(spec, reduction)
    for attr, value in zip(spec.attrs, attrs):
        if attr.kernel_type == "Bool" and not isinstance(value, bool):
            raise invalid_error(f"{attr.aclnn_name}: expected a bool, got {type(value).__name__} {value!r:.40}")
        if attr.kernel_type == "Float" and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise invalid_error(f"{attr.aclnn_name}: expected a real number, got {type(value).__name__}")


def _call(spec: OpSpec, grad_output: Any, self_: Any, target: Any, reduction: Any, attrs: tuple[Any, ...],
          out_dtype: Any, soc_name: str | None) -> _torch.Tensor:
    missing = [name for name, v in zip(spec.aclnn_params, (grad_output, self_, target)) if v is None]
    if missing:  # the schema's tensors are not optional: aclnn's null check happens here
        raise null_error(f"{', '.join(missing)}: null input ({spec.aclnn} requires every tensor argument)")
    _check_scalars(spec, reduction, attrs)
    return op(spec.name)(grad_output, self_, target, reduction, *attrs, out_dtype=out_dtype, soc=soc_name)


def _impl(spec: OpSpec, grad_output: Any, self_: Any, target: Any, reduction: Any, attrs: dict[str, Any] | None, *,
          out_dtype: "_torch.dtype | None", soc: str | None) -> _torch.Tensor:
    return _call(spec, grad_output, self_, target, reduction, tuple((attrs or {}).values()), out_dtype, soc)


# lossgrad.torch.<op name>: torch.ops.lossgrad.<op name> with aclnn's null check (reduction as int or name), and each
# op folder's drop-in loss (torch_facts.LOSS: the functional and the nn.Module) under its own names.
FUNCTIONS = {spec.name: public_function(spec, _impl, {"out_dtype": (None, "_torch.dtype | None"),
                                                      "soc": (None, "str | None")}, __name__,
                                        describe(spec, f"torch.ops.lossgrad.{spec.name} with aclnn's null check:"),
                                        returns=_torch.Tensor)
             for spec in OPS.values()}
DROP_INS = {spec.name: op_part(spec, "torch_facts").LOSS for spec in OPS.values()}


def _check_drop_in_names() -> None:
    seen: dict[str, str] = {name: "lossgrad.torch" for name in (*FUNCTIONS, "soc", "current_soc", "op")}
    for spec in OPS.values():
        loss = DROP_INS[spec.name]
        for exported in (loss.function.__name__, loss.module.__name__):
            if exported in seen:
                raise OpFolderError(f"op folder python/lossgrad/ops/{spec.template}/: torch_facts.py's drop-in "
                                    f"{exported!r} is already exported by {seen[exported]} (name the op's drop-in "
                                    "after the op; see docs/contributing.md)")
            seen[exported] = f"the op folder {spec.template}"


_check_drop_in_names()
globals().update(FUNCTIONS)
globals().update({d.function.__name__: d.function for d in DROP_INS.values()})
globals().update({d.module.__name__: d.module for d in DROP_INS.values()})
__all__ = ["soc", "current_soc", "op", *FUNCTIONS, *(d.function.__name__ for d in DROP_INS.values()),
           *(d.module.__name__ for d in DROP_INS.values()), "LossGradError", "NpuUnavailable"]
