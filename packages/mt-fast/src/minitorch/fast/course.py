"""The course's kernel factories, as its programs call them from ``minitorch.fast_ops``.

The course's ``project/parallel_check.py`` builds kernels with ``tensor_map(fn)``,
``tensor_zip(fn)`` and ``tensor_reduce(fn)``, takes ``tensor_matrix_multiply`` as it is,
runs each once on ``(storage, shape, strides)`` triples (``*t.tuple()``) and prints
``kernel.parallel_diagnostics(level=3)``. Here they are ``njit(parallel=True)`` kernels
with the course's signatures:

- ``tensor_map(fn)(out, out_shape, out_strides, in_storage, in_shape, in_strides)``;
- ``tensor_zip(fn)(out, out_shape, out_strides, a_storage, a_shape, a_strides, b_storage,
  b_shape, b_strides)``;
- ``tensor_reduce(fn)(out, out_shape, out_strides, a_storage, a_shape, a_strides,
  reduce_dim)``: folds ``fn`` over ``reduce_dim`` into what ``out`` already holds (the
  caller fills it with the start value, as the course's ``FastOps.reduce`` does);
- ``tensor_matrix_multiply(out, out_shape, out_strides, a_storage, a_shape, a_strides,
  b_storage, b_shape, b_strides)``: batched 3-D matrix multiply, a batch of 1 broadcasts.

``fn`` is a plain scalar function (``operators.mul``) or an ``njit``-compiled one (the
course passes ``njit(operators.mul)``). They are ``plain``'s kernels (the ones a student
writes: ``make_map``, ``make_zip``, ``make_fold``, ``_matmul``), compiled without Numba's
disk cache, since a kernel loaded from it carries no parallel report. So each compiles on
its first call in every process; the backends run the cached kernels instead.

A compiled kernel trusts its arguments: an output storage too small for its shape, a
2-D operand where matmul reads a third dimension, or a ``reduce_dim`` out of range make
it write or read outside its arrays (the interpreter aborts, crashes, or returns garbage).
So each kernel here is a ``CheckedKernel``: it checks the arguments once per call, in
Python, before the kernel runs, and raises an error naming the problem (``IndexingError``
for shapes, strides and sizes, ``TypeError`` for arguments of the wrong kind). Everything
else (``parallel_diagnostics``, ``py_func``, ...) is the compiled kernel's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import njit

from minitorch.tensor import MAX_DIMS, IndexingError, shape_broadcast

from .kernels import plain

__all__ = ["CheckedKernel", "tensor_map", "tensor_matrix_multiply", "tensor_reduce", "tensor_zip"]


class CheckedKernel:
    """A compiled kernel that checks its arguments before it runs (see the module's doc).

    Calling it runs ``check(*args)`` and then ``kernel(*args)``; every attribute is the
    kernel's (``parallel_diagnostics(level=3)``, ``py_func``, ``signatures``).
    """

    def __init__(self, kernel: Callable[..., None], check: Callable[..., None]) -> None:
        self.kernel = kernel
        self.check = check

    def __call__(self, *args: Any) -> None:
        """Check the arguments, then run the kernel on them."""
        self.check(*args)
        self.kernel(*args)

    def __getattr__(self, name: str) -> Any:
        if name in ("kernel", "check"):  # not set yet (copying): no recursion
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __repr__(self) -> str:
        return f"CheckedKernel({self.kernel!r})"


def _ints(what: str, values: Any) -> tuple[int, ...]:
    """``values`` (a shape or strides array) as a tuple of ints, or a TypeError naming it."""
    try:
        array = np.asarray(values)
    except Exception:
        array = np.asarray(None)
    if array.ndim != 1 or not (array.size == 0 or np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"{what} must be a 1-D array of ints, got {values!r}")
    return tuple(int(v) for v in array)


def _triple(what: str, storage: Any, shape: Any, strides: Any) -> tuple[int, ...]:
    """Check one ``(storage, shape, strides)`` triple; return its shape.

    Raises:
        TypeError: if the storage is not a 1-D float array, or shape or strides not ints.
        IndexingError: for a negative size, strides of another length than the shape or
            negative, more than ``MAX_DIMS`` dims, or a storage too small for them.
    """
    if not isinstance(storage, np.ndarray) or storage.ndim != 1:
        raise TypeError(
            f"{what}: the storage must be a 1-D numpy array (t.tuple()[0]), got "
            f"{type(storage).__name__}"
        )
    dims, steps = _ints(f"{what}: the shape", shape), _ints(f"{what}: the strides", strides)
    if len(dims) != len(steps):
        raise IndexingError(
            f"{what}: shape {dims} and strides {steps} differ in length (one stride per dim)"
        )
    if len(dims) > MAX_DIMS or any(d < 0 for d in dims) or any(s < 0 for s in steps):
        raise IndexingError(
            f"{what}: shape {dims} with strides {steps} is not a tensor's layout (sizes and "
            f"strides are non-negative, at most {MAX_DIMS} dims)"
        )
    if 0 not in dims:
        last = sum((d - 1) * s for d, s in zip(dims, steps, strict=True))
        if last >= len(storage):
            raise IndexingError(
                f"{what}: a storage of size {len(storage)} is too small for shape {dims} "
                f"with strides {steps} (it reaches position {last})"
            )
    return dims


def _broadcast(what: str, shape: tuple[int, ...], out: tuple[int, ...]) -> None:
    try:
        fits = shape_broadcast(shape, out) == out
    except IndexingError:
        fits = False
    if not fits:
        raise IndexingError(f"{what}: shape {shape} does not broadcast to the output's shape {out}")


def _check_map(*args: Any) -> None:
    """``(out, out_shape, out_strides, in, in_shape, in_strides)``."""
    _arity("tensor_map", args, 6)
    out = _triple("tensor_map output", *args[0:3])
    _broadcast("tensor_map input", _triple("tensor_map input", *args[3:6]), out)


def _check_zip(*args: Any) -> None:
    """``(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)``."""
    _arity("tensor_zip", args, 9)
    out = _triple("tensor_zip output", *args[0:3])
    _broadcast("tensor_zip a", _triple("tensor_zip a", *args[3:6]), out)
    _broadcast("tensor_zip b", _triple("tensor_zip b", *args[6:9]), out)


def _check_reduce(*args: Any) -> None:
    """``(out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim)``."""
    _arity("tensor_reduce", args, 7)
    out = _triple("tensor_reduce output", *args[0:3])
    a = _triple("tensor_reduce a", *args[3:6])
    dim = args[6]
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, (bool, np.bool_)):
        raise TypeError(f"tensor_reduce: reduce_dim must be an int, got {dim!r}")
    if not 0 <= dim < len(a):
        raise IndexingError(
            f"tensor_reduce: reduce_dim {dim} is out of range for a of shape {a} "
            f"(0 to {len(a) - 1})"
        )
    expected = (*a[:dim], 1, *a[dim + 1 :])
    if out != expected:
        raise IndexingError(
            f"tensor_reduce: the output's shape {out} must be a's shape {a} with reduce_dim "
            f"{dim} of size 1: {expected}"
        )


def _check_matmul(*args: Any) -> None:
    """``(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)``."""
    _arity("tensor_matrix_multiply", args, 9)
    names = ("output", "a", "b")
    shapes = [
        _triple(f"tensor_matrix_multiply {name}", *args[3 * i : 3 * i + 3])
        for i, name in enumerate(names)
    ]
    for name, shape in zip(names, shapes, strict=True):
        if len(shape) != 3:
            raise IndexingError(
                f"tensor_matrix_multiply: {name} has shape {shape}; the kernel multiplies 3-D "
                "(batch, rows, cols) tensors (view a matrix as (1, rows, cols) first)"
            )
    (n, rows, cols), (na, i, k), (nb, k2, j) = shapes
    if k != k2 or (rows, cols) != (i, j):
        raise IndexingError(
            f"tensor_matrix_multiply: shapes {shapes[1]} @ {shapes[2]} -> {shapes[0]} do not "
            f"fit: a's columns must equal b's rows and the output be (batch, {i}, {j})"
        )
    # The output's batch is the broadcast of the two (0 with 1 is 0), not their maximum.
    if na not in (1, n) or nb not in (1, n):
        raise IndexingError(
            f"tensor_matrix_multiply: batch sizes {na} (a) and {nb} (b) do not broadcast to "
            f"the output's {n} (each must be {n} or 1)"
        )
    if n != (nb if na == 1 else na):
        raise IndexingError(
            f"tensor_matrix_multiply: batch sizes {na} (a) and {nb} (b) broadcast to "
            f"{nb if na == 1 else na}, not to the output's {n}"
        )


def _arity(name: str, args: Sequence[Any], count: int) -> None:
    if len(args) != count:
        raise TypeError(f"{name} takes {count} arguments, got {len(args)}")


def tensor_map(fn: Callable[[float], float]) -> CheckedKernel:
    """The course's map kernel: ``out = fn(in)`` with ``in`` broadcast to ``out``."""
    return CheckedKernel(plain.make_map(fn, cache=False), _check_map)


def tensor_zip(fn: Callable[[float, float], float]) -> CheckedKernel:
    """The course's zip kernel: ``out = fn(a, b)`` with ``a`` and ``b`` broadcast to ``out``."""
    return CheckedKernel(plain.make_zip(fn, cache=False), _check_zip)


def tensor_reduce(fn: Callable[[float, float], float]) -> CheckedKernel:
    """The course's reduce kernel: fold ``fn`` over ``reduce_dim`` of ``a`` into ``out``.

    ``out`` has ``a``'s shape with ``reduce_dim`` of size 1 and holds the start value.
    """
    return CheckedKernel(plain.make_fold(fn, cache=False), _check_reduce)


tensor_matrix_multiply = CheckedKernel(
    njit(parallel=True)(plain.KERNELS["matmul"].py_func), _check_matmul
)
"""The course's matmul kernel: ``plain``'s, compiled without the disk cache (checked)."""
