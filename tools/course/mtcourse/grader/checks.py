"""Checks the grader runs on every course object it rebuilds from the worker's answer.

An object the worker describes is rebuilt from the course's own class, but its attributes
are the worker's: a ``TensorData`` whose strides point past its storage would make the
grader's compiled kernels read or write outside it. Each check raises ``ValueError`` (the
answer is then refused, and the run fails) for an object the course's code could not
have made.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["VALIDATORS"]


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if type(value) is not tuple or not all(type(v) is int for v in value):
        raise ValueError(f"{what} must be a tuple of ints, got {type(value).__name__}")
    return value


def tensor_data(td: Any) -> None:
    """Shape, strides, storage and the cached kernel arguments agree; every position fits."""
    shape = _ints(getattr(td, "shape", None), "shape")
    strides = _ints(getattr(td, "strides", None), "strides")
    if len(shape) != len(strides) or len(shape) > 64:
        raise ValueError(f"shape {shape} and strides {strides} disagree")
    if any(s < 0 for s in shape) or any(s < 0 for s in strides):
        raise ValueError("negative sizes or strides")
    storage: Any = getattr(td, "_storage", None)
    if getattr(storage, "ndim", None) != 1 or str(getattr(storage, "dtype", "")) != "float64":
        raise ValueError("the storage must be a 1-D float64 array")
    size = math.prod(shape)
    if getattr(td, "size", None) != size or getattr(td, "dims", None) != len(shape):
        raise ValueError("size or dims do not match the shape")
    last = sum((s - 1) * st for s, st in zip(shape, strides, strict=True))
    if size > 0 and last >= len(storage):
        raise ValueError(f"shape {shape} with strides {strides} reaches past the storage")
    if type(getattr(td, "_contiguous", None)) is not bool:
        raise ValueError("_contiguous must be a bool")
    args = getattr(td, "_kernel_args", None)
    if args is not None:
        if type(args) is not tuple or len(args) != 3 or args[0] is not storage:
            raise ValueError("the cached kernel arguments are not this data's")
        if list(args[1]) != list(shape) or list(args[2]) != list(strides):
            raise ValueError("the cached kernel arguments disagree with shape and strides")


def tensor(t: Any) -> None:
    """A tensor holds a TensorData."""
    data = getattr(t, "_tensor", None)
    if type(data).__name__ != "TensorData":
        raise ValueError("a tensor without its data")


def version_counter(v: Any) -> None:
    """A version is an int."""
    if type(getattr(v, "value", None)) is not int:
        raise ValueError("a version that is not an int")


VALIDATORS = {
    "minitorch.tensor.tensor_data:TensorData": tensor_data,
    "minitorch.tensor.tensor_data:VersionCounter": version_counter,
    "minitorch.tensor.tensor:Tensor": tensor,
}
