"""torch <-> NumPy without copies or lossy round trips, and the dtype map between torch and lossgrad.

bfloat16 has no NumPy dtype in torch: its bits travel as a 16-bit integer view (same strides, no copy) and are
reinterpreted as ml_dtypes.bfloat16 on the NumPy side (and back), never through float32.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import torch

from ..dtypes import DType
from ..errors import invalid_error

TORCH_TO_DTYPE: dict[torch.dtype, DType] = {
    torch.float32: DType.FLOAT32, torch.float16: DType.FLOAT16, torch.bfloat16: DType.BFLOAT16,
    torch.float64: DType.FLOAT64, torch.int8: DType.INT8, torch.uint8: DType.UINT8, torch.int16: DType.INT16,
    torch.int32: DType.INT32, torch.int64: DType.INT64, torch.bool: DType.BOOL,
}
DTYPE_TO_TORCH: dict[DType, torch.dtype] = {v: k for k, v in TORCH_TO_DTYPE.items()}
_BF16_NP = np.dtype(ml_dtypes.bfloat16)


def lossgrad_dtype(dtype: torch.dtype, name: str) -> DType:
    """The lossgrad DType of a torch dtype; 161002 for dtypes aclnn has no tensor type for (complex, float8, ...)."""
    found = TORCH_TO_DTYPE.get(dtype)
    if found is None:
        raise invalid_error(f"{name}: dtype {dtype} is not a tensor dtype aclnn accepts")
    return found


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A NumPy view of a CPU tensor's memory with the tensor's strides (stride-0 broadcast dims stay stride 0)."""
    t = t.detach().resolve_conj().resolve_neg()
    if t.dtype == torch.bfloat16:
        return t.view(torch.uint16).numpy().view(_BF16_NP)
    return t.numpy()


def from_numpy(a: np.ndarray) -> torch.Tensor:
    """A tensor sharing a (freshly computed, writable) NumPy array's memory."""
    if a.dtype == _BF16_NP:
        return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def shape_stand_in(shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    """A zero-stride array of a given shape and dtype (no memory per element): what validation needs to see of a
    tensor whose data it must not touch (meta, fake or device tensors)."""
    return np.broadcast_to(np.zeros((), dtype=dtype.np_dtype), shape)
