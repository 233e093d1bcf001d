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
"""

from __future__ import annotations

from collections.abc import Callable

from numba import njit

from . import plain

__all__ = ["tensor_map", "tensor_matrix_multiply", "tensor_reduce", "tensor_zip"]


def tensor_map(fn: Callable[[float], float]) -> Callable[..., None]:
    """The course's map kernel: ``out = fn(in)`` with ``in`` broadcast to ``out``."""
    return plain.make_map(fn, cache=False)


def tensor_zip(fn: Callable[[float, float], float]) -> Callable[..., None]:
    """The course's zip kernel: ``out = fn(a, b)`` with ``a`` and ``b`` broadcast to ``out``."""
    return plain.make_zip(fn, cache=False)


def tensor_reduce(fn: Callable[[float, float], float]) -> Callable[..., None]:
    """The course's reduce kernel: fold ``fn`` over ``reduce_dim`` of ``a`` into ``out``.

    ``out`` has ``a``'s shape with ``reduce_dim`` of size 1 and holds the start value.
    """
    return plain.make_fold(fn, cache=False)


tensor_matrix_multiply: Callable[..., None] = njit(parallel=True)(plain.KERNELS["matmul"].py_func)
"""The course's matmul kernel: ``plain``'s, compiled without the disk cache."""
