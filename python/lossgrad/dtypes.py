"""Data types: NumPy <-> aclnn/ge <-> Ascend C names, aclnn's promotion and cast rules.

Promotion follows ops-nn `docs/zh/context/deduction_relationship.md` (f16+bf16 -> f32, int+float -> the float, ...);
castability follows `conversion_relationship.md` (floats never cast to integers or bool).
"""
from __future__ import annotations

import enum

import ml_dtypes
import numpy as np


class DType(enum.Enum):
    """Tensor element types the API can meet. Only the three float types can reach a kernel."""

    #        name        numpy dtype                  bytes  acl/ge enum  Ascend C type   kind
    FLOAT32 = ("float32", np.dtype(np.float32), 4, 0, "float", "float")
    FLOAT16 = ("float16", np.dtype(np.float16), 2, 1, "half", "float")
    BFLOAT16 = ("bfloat16", np.dtype(ml_dtypes.bfloat16), 2, 27, "bfloat16_t", "float")
    FLOAT64 = ("float64", np.dtype(np.float64), 8, 11, "double", "float")
    INT8 = ("int8", np.dtype(np.int8), 1, 2, "int8_t", "int")
    UINT8 = ("uint8", np.dtype(np.uint8), 1, 4, "uint8_t", "uint")
    INT16 = ("int16", np.dtype(np.int16), 2, 6, "int16_t", "int")
    INT32 = ("int32", np.dtype(np.int32), 4, 3, "int32_t", "int")
    INT64 = ("int64", np.dtype(np.int64), 8, 9, "int64_t", "int")
    BOOL = ("bool", np.dtype(np.bool_), 1, 12, "bool", "bool")

    def __init__(self, label: str, np_dtype: np.dtype, itemsize: int, acl_enum: int, cpp: str, kind: str) -> None:
        self.label = label
        self.np_dtype = np_dtype
        self.itemsize = itemsize
        self.acl_enum = acl_enum
        self.cpp = cpp
        self.kind = kind

    def __str__(self) -> str:
        return self.label

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def ge_name(self) -> str:
        """ge::DataType spelling used by OpDef (DT_FLOAT, DT_FLOAT16, DT_BF16, ...)."""
        return "DT_" + _ACL_NAMES[self][4:]


_ACL_NAMES = {
    DType.FLOAT32: "ACL_FLOAT",
    DType.FLOAT16: "ACL_FLOAT16",
    DType.BFLOAT16: "ACL_BF16",
    DType.FLOAT64: "ACL_DOUBLE",
    DType.INT8: "ACL_INT8",
    DType.UINT8: "ACL_UINT8",
    DType.INT16: "ACL_INT16",
    DType.INT32: "ACL_INT32",
    DType.INT64: "ACL_INT64",
    DType.BOOL: "ACL_BOOL",
}

KERNEL_DTYPES = (DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16)

_BY_NP = {d.np_dtype: d for d in DType}
_BY_LABEL = {d.label: d for d in DType}
_BY_LABEL.update({"fp32": DType.FLOAT32, "float": DType.FLOAT32, "fp16": DType.FLOAT16, "half": DType.FLOAT16,
                  "bf16": DType.BFLOAT16})


def from_numpy(dtype: np.dtype | type) -> DType | None:
    """The DType of a NumPy dtype, or None for types aclnn has no tensor type for (complex, strings, ...)."""
    return _BY_NP.get(np.dtype(dtype))


def parse(value: "str | DType | np.dtype | type") -> DType:
    """Accept a DType, a label ("float16", "bf16", ...) or anything np.dtype() understands."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value.lower() in _BY_LABEL:
        return _BY_LABEL[value.lower()]
    try:
        found = from_numpy(np.dtype(value))
    except TypeError:
        found = None
    if found is None:
        raise ValueError(f"unknown dtype {value!r}")
    return found


# Float ranking for promotion: f16 and bf16 are siblings (their join is f32).
_FLOAT_RANK = {DType.FLOAT16: 1, DType.BFLOAT16: 1, DType.FLOAT32: 2, DType.FLOAT64: 3}
_INT_ORDER = (DType.BOOL, DType.UINT8, DType.INT8, DType.INT16, DType.INT32, DType.INT64)


def promote(a: DType, b: DType) -> DType:
    """aclnn's PromoteType for the types we meet; always defined for this set (failures come from support lists)."""
    if a == b:
        return a
    if a.is_float and b.is_float:
        if {a, b} == {DType.FLOAT16, DType.BFLOAT16}:
            return DType.FLOAT32
        return a if _FLOAT_RANK[a] > _FLOAT_RANK[b] else b
    if a.is_float:
        return a
    if b.is_float:
        return b
    if DType.BOOL in (a, b):
        return b if a == DType.BOOL else a
    if {a, b} == {DType.UINT8, DType.INT8}:
        return DType.INT16
    return a if _INT_ORDER.index(a) > _INT_ORDER.index(b) else b


def can_cast(src: DType, dst: DType) -> bool:
    """aclnn's CanCast: floats never cast to integers or bool; integers cast to integers and floats; bool to
    anything."""
    if src == DType.BOOL:
        return True
    if dst == DType.BOOL:
        return False
    if src.is_float:
        return dst.is_float
    return True
