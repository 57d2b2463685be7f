"""Helpers for tests/torch: tensors from seeded NumPy data, bf16-safe conversions, the precision check."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from lossgrad import precision
from lossgrad.dtypes import DType

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
LOSSGRAD_DTYPES = {torch.float32: DType.FLOAT32, torch.float16: DType.FLOAT16, torch.bfloat16: DType.BFLOAT16}


def rand(shape: tuple[int, ...], dtype: torch.dtype, seed: int, scale: float = 2.0) -> torch.Tensor:
    """Seeded values in (-scale, scale), rounded to dtype by torch."""
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.uniform(-scale, scale, size=shape)).to(dtype)


def as_f64(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float64).numpy()


def assert_within_standard(actual: torch.Tensor, golden: Any, what: str) -> None:
    """CANN's experimental precision standard for actual's dtype (NaN/Inf positions must match)."""
    golden = golden.detach().to(torch.float64).numpy() if isinstance(golden, torch.Tensor) else np.asarray(golden)
    assert tuple(actual.shape) == tuple(golden.shape), f"{what}: shape {tuple(actual.shape)} vs {golden.shape}"
    result = precision.compare(as_f64(actual), golden.astype(np.float64), LOSSGRAD_DTYPES[actual.dtype])
    assert result.passed, f"{what}: {result.describe()}"


def bits(t: torch.Tensor) -> np.ndarray:
    """The raw bits of a float tensor (bit-identity checks, NaN-safe)."""
    t = t.detach().contiguous()
    return t.view({4: torch.int32, 2: torch.int16}[t.element_size()]).numpy()


# -- the registered ops' drop-ins, with the test facts of their folders (tests iterate the registry) ---------------

def op_fact(op: Any, name: str, default: Any) -> Any:
    """An optional test fact of an op's folder (python/lossgrad/ops/<op>/test_facts.py)."""
    from lossgrad.registry import op_part
    return getattr(op_part(op, "test_facts"), name, default)


def drop_in_ops() -> list[Any]:
    """The registered ops with a drop-in of their own (torch_facts.LOSS; KlDivTarget's gradient serves kl_div's)."""
    from lossgrad.registry import OPS, op_part

    return [op for op in OPS.values() if op_part(op, "torch_facts").LOSS is not None]


def drop_in_losses() -> dict[str, tuple[Any, Any, dict[str, Any], Any]]:
    """label -> (our drop-in function, torch.nn.functional's, keyword arguments, the op's spec) for every registered
    op and every keyword set its test facts name (TORCH_VARIANTS; default: one call with no keywords)."""

    from lossgrad.registry import OPS, op_part

    found: dict[str, tuple[Any, Any, dict[str, Any], Any]] = {}
    for op in drop_in_ops():
        loss = op_part(op, "torch_facts").LOSS
        for label, kw in op_fact(op, "TORCH_VARIANTS", {op.template: {}}).items():
            found[label] = (loss.function, loss.torch_function, dict(kw), op)
    return found


def probabilities(op: Any, x: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(input, target) as the op's torch loss takes them: for an op whose input is a probability (test fact
    TORCH_INPUT, BCE) both mapped into [0.01, 0.99] (|v| / 2 of values in (-2, 2)); other ops' values unchanged."""
    if op_fact(op, "TORCH_INPUT", "any") != "probability":
        return x, t
    return (x.abs() * 0.49 + 0.01).to(x.dtype), (t.abs() * 0.49 + 0.01).to(t.dtype)
