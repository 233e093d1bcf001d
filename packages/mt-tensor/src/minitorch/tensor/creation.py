"""Making tensors: ``tensor``, ``zeros``, ``ones``, ``rand`` and ``from_numpy``."""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np
import numpy.typing as npt

from .backends.protocol import TensorBackend
from .backends.registry import resolve_backend
from .seeds import seeded_rng
from .tensor import Tensor
from .tensor_data import TensorData, check_shape, flatten_nested

__all__ = [
    "from_numpy",
    "ones",
    "rand",
    "tensor",
    "zeros",
]


BackendLike = TensorBackend | str | None
"""A backend, a registered backend name (``"fast"``), or None for the default backend."""


def _make(
    values: npt.NDArray[np.float64],
    shape: tuple[int, ...],
    backend: BackendLike,
    requires_grad: bool,
) -> Tensor:
    where = resolve_backend(backend)
    storage = where.ops.storage_from_numpy(values)
    t = Tensor(TensorData(storage, shape), backend=where)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _shape_args(
    name: str, args: tuple[Any, ...], backend: BackendLike
) -> tuple[tuple[int, ...], BackendLike]:
    """The shape of ``zeros(2, 3)``, ``zeros((2, 3))`` or the course's ``zeros((2, 3), backend)``.

    Raises:
        TypeError: for no shape, a backend given twice, or a size that is not an int.
        IndexingError: for a negative size.
    """
    if args and isinstance(args[-1], TensorBackend):
        if backend is not None:
            raise TypeError(f"{name}(): the backend is given twice (by position and keyword)")
        args, backend = args[:-1], args[-1]
    if not args:
        raise TypeError(f"{name}() needs a shape: {name}(2, 3) or {name}((2, 3))")
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        return check_shape(args[0]), backend
    return check_shape(args), backend


def _allocate(
    name: str, shape: tuple[int, ...], make: Callable[[int], npt.NDArray[np.float64]]
) -> npt.NDArray[np.float64]:
    """``make(size)`` for a tensor of ``shape``; a MemoryError names the shape and the bytes."""
    try:
        return make(prod(shape))
    except MemoryError:
        nbytes = 8 * prod(shape)
        raise MemoryError(
            f"{name}(): a tensor of shape {shape} needs {nbytes:,} bytes "
            f"({nbytes / 2**30:,.1f} GiB of float64), more than can be allocated here"
        ) from None


def tensor(ls: Any, backend: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """Make a tensor from a number or a nested list of numbers.

    ``tensor([[1, 2], [3, 4]])`` has shape ``(2, 2)``; a plain number gives shape ``(1,)``.
    ``backend`` is a TensorBackend, a name (``"fast"``) or None for the default backend
    (``get_default_backend()``).

    Raises:
        ValueError: for a ragged list.
        TypeError: for an element that is not a number.
        OverflowError: for an int too large for float64 (beyond about 1.8e308).
    """
    values, shape = flatten_nested(ls)
    if shape == ():
        shape = (1,)
    return _make(np.array(values, dtype=np.float64), shape, backend, requires_grad)


def zeros(*shape: Any, backend: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """Make a tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))`` (as PyTorch).

    The course's ``zeros(shape, backend)`` (the backend by position) works too; without a
    backend the tensor goes to the default backend (``get_default_backend()``).

    Raises:
        TypeError: for a size that is not an int (floats and bools are rejected).
        IndexingError: for a negative size.
        MemoryError: naming the shape and its bytes, if it cannot be allocated.
    """
    s, where = _shape_args("zeros", shape, backend)
    return _make(_allocate("zeros", s, np.zeros), s, where, requires_grad)


def ones(*shape: Any, backend: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """Make a tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))`` (see ``zeros``).

    Raises:
        TypeError: for a size that is not an int (floats and bools are rejected).
        IndexingError: for a negative size.
    """
    s, where = _shape_args("ones", shape, backend)
    return _make(_allocate("ones", s, np.ones), s, where, requires_grad)


def rand(
    *shape: Any,
    backend: BackendLike = None,
    requires_grad: bool = False,
    seed: int | np.random.Generator | None = None,
) -> Tensor:
    """Make a tensor of uniform random values in ``[0, 1)``: ``rand(2, 3)`` or ``rand((2, 3))``.

    Args:
        *shape: the sizes, or one sequence of them (the course's ``rand(shape, backend)``
            with the backend by position works too).
        backend: where the tensor lives (a TensorBackend, a name, or None for the default).
        requires_grad: make it a leaf that accumulates a gradient.
        seed: an int or a ``numpy.random.Generator`` for reproducible values; the global
            random state is never touched.

    Raises:
        TypeError: for a size that is not an int, or a ``seed`` that is neither an int, a
            Generator nor None.
        IndexingError: for a negative size.
        ValueError: for a negative ``seed``.
    """
    s, where = _shape_args("rand", shape, backend)
    rng = seeded_rng(seed, "rand()")
    return _make(_allocate("rand", s, rng.random), s, where, requires_grad)


def from_numpy(
    array: npt.ArrayLike, backend: BackendLike = None, requires_grad: bool = False
) -> Tensor:
    """Make a tensor from a numpy array.

    A C-contiguous float64 array on a host backend is shared, not copied (changes to one show
    in the other, as with ``torch.from_numpy``); other real dtypes are converted. The shape
    is the array's: a 0-d array (or a numpy scalar) gives a 0-d tensor of shape ``()``, as
    ``torch.from_numpy`` does.

    Raises:
        TypeError: for a complex, string, object or other non-real dtype.
    """
    arr = np.asarray(array)
    if arr.dtype != np.float64:
        if arr.dtype.kind not in "biuf":
            raise TypeError(
                f"from_numpy takes an array of real numbers (bool, int or float), got dtype "
                f"{arr.dtype}" + (": take .real or abs() first" if arr.dtype.kind == "c" else "")
            )
        arr = arr.astype(np.float64)
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    return _make(arr.reshape(-1), tuple(arr.shape), backend, requires_grad)
