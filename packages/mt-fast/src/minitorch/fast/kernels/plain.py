"""The course's kernels (tasks 3.1 and 3.2): one ``prange`` loop nest per primitive.

A ``KernelModule`` (see ``kernels/__init__.py``). This is the fast backend a student
writes in module 3, and what ``PlainFastOps`` / ``PlainFastBackend`` run. Each kernel
takes ``(storage, shape, strides)`` triples, as the backend protocol of mt-tensor defines
them; the outer loop is a ``prange`` over output positions, each iteration with its own
index buffers, so threads share nothing but the output positions they own. The index
helpers are mt-tensor's own, compiled by Numba. The reduce kernel is the course's
(``make_fold``: it folds into what ``out`` holds); ``make_reduce`` fills ``out`` with the
protocol's ``start`` first. ``minitorch.fast.course`` offers these kernels under the
course's names (``tensor_map``, ...). The released package's ``tuned`` module computes the
same results faster, and ``FastOps`` runs it; a course starter leaves it out, and there
``FastOps`` runs these kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange

from minitorch.operators import add
from minitorch.tensor import broadcast_index, index_to_position, to_index

from .. import _cache
from ..runtime import jit_scalar, run

__all__ = [
    "KERNELS",
    "PARALLEL",
    "make_fold",
    "make_map",
    "make_reduce",
    "make_zip",
    "matmul",
    "run",
]

# The operators and the index helpers are compiled into the kernels: key the cache on
# the files that define them (found through the public functions, not private modules).
_cache.install(__file__, _cache.defining_modules(add, index_to_position))

KERNELS: dict[str, Any] = {}
"""Every cached kernel built so far, by name (``map[neg]``, ``matmul``)."""
PARALLEL = KERNELS
"""The parallel kernels by name, for Numba's parallel diagnostics: every kernel here is
parallel only (``tuned``'s have serial twins), so this is ``KERNELS`` itself."""


def make_map(fn: Callable[[float], float], cache: bool = True) -> Callable[..., None]:
    """Return a parallel kernel ``out = fn(in)`` with ``in`` broadcast to ``out``.

    ``cache=False`` builds it outside Numba's disk cache and leaves it out of ``KERNELS``
    (the course's ``tensor_map``: a kernel loaded from the cache has no parallel report).
    """
    fn = jit_scalar(fn)

    @njit(parallel=True, cache=cache)
    def kernel(out, out_shape, out_strides, in_storage, in_shape, in_strides):  # type: ignore[no-untyped-def]
        # BEGIN SOLUTION task3_1
        for i in prange(np.prod(out_shape)):
            out_index = np.empty(len(out_shape), np.int64)
            in_index = np.empty(len(in_shape), np.int64)
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, in_shape, in_index)
            o = index_to_position(out_index, out_strides)
            j = index_to_position(in_index, in_strides)
            out[o] = fn(in_storage[j])
        # END SOLUTION

    if cache:
        KERNELS[f"map[{fn.__name__}]"] = kernel
    return kernel  # type: ignore[no-any-return]


def make_zip(fn: Callable[[float, float], float], cache: bool = True) -> Callable[..., None]:
    """Return a parallel kernel ``out = fn(a, b)`` with ``a`` and ``b`` broadcast to ``out``.

    ``cache=False`` as for ``make_map``.
    """
    fn = jit_scalar(fn)

    @njit(parallel=True, cache=cache)
    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
        # BEGIN SOLUTION task3_1
        for i in prange(np.prod(out_shape)):
            out_index = np.empty(len(out_shape), np.int64)
            a_index = np.empty(len(a_shape), np.int64)
            b_index = np.empty(len(b_shape), np.int64)
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            broadcast_index(out_index, out_shape, b_shape, b_index)
            o = index_to_position(out_index, out_strides)
            ja = index_to_position(a_index, a_strides)
            jb = index_to_position(b_index, b_strides)
            out[o] = fn(a[ja], b[jb])
        # END SOLUTION

    if cache:
        KERNELS[f"zip[{fn.__name__}]"] = kernel
    return kernel  # type: ignore[no-any-return]


def make_fold(fn: Callable[[float, float], float], cache: bool = True) -> Callable[..., None]:
    """Return a parallel kernel folding ``fn`` over dimension ``dim`` of ``a`` into ``out``.

    The course's reduce: ``kernel(out, out_shape, out_strides, a, a_shape, a_strides, dim)``
    where ``out`` has ``a``'s shape with ``dim`` of size 1 and already holds the start
    value, so ``out[o] = fn(...fn(fn(out[o], a[.., 0, ..]), a[.., 1, ..])...)``; an empty
    ``dim`` leaves ``out`` as it is. ``cache=False`` as for ``make_map``.
    """
    fn = jit_scalar(fn)

    @njit(parallel=True, cache=cache)
    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, dim):  # type: ignore[no-untyped-def]
        # BEGIN SOLUTION task3_1
        for i in prange(np.prod(out_shape)):
            index = np.empty(len(out_shape), np.int64)
            to_index(i, out_shape, index)
            o = index_to_position(index, out_strides)
            acc = out[o]
            for k in range(a_shape[dim]):
                index[dim] = k
                acc = fn(acc, a[index_to_position(index, a_strides)])
            out[o] = acc
        # END SOLUTION

    if cache:
        KERNELS[f"reduce[{fn.__name__}]"] = kernel
    return kernel  # type: ignore[no-any-return]


def make_reduce(fn: Callable[[float, float], float]) -> Callable[..., None]:
    """Return the backend protocol's reduce: ``out`` filled with ``start``, then ``make_fold``.

    ``kernel(out, out_shape, out_strides, a, a_shape, a_strides, dim, start)``; ``out`` is
    the fresh output buffer, so every element of it is filled.
    """
    fold = make_fold(fn)

    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, dim, start):  # type: ignore[no-untyped-def]
        out.fill(start)
        fold(out, out_shape, out_strides, a, a_shape, a_strides, dim)

    return kernel


@njit(parallel=True, cache=True)
def _matmul(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
    """``out[n, i, j] = sum_k a[n, i, k] * b[n, k, j]``; a batch of 1 broadcasts."""
    # BEGIN SOLUTION task3_2
    a_batch = a_strides[0] if a_shape[0] > 1 else 0
    b_batch = b_strides[0] if b_shape[0] > 1 else 0
    rows = out_shape[1]
    for p in prange(out_shape[0] * rows):
        n = p // rows
        i = p % rows
        for j in range(out_shape[2]):
            acc = 0.0
            for k in range(a_shape[2]):
                acc += (
                    a[n * a_batch + i * a_strides[1] + k * a_strides[2]]
                    * b[n * b_batch + k * b_strides[1] + j * b_strides[2]]
                )
            out[n * out_strides[0] + i * out_strides[1] + j * out_strides[2]] = acc
    # END SOLUTION


def matmul(*args: Any) -> None:
    """Batched matrix multiply over 3-D ``(storage, shape, strides)`` triples (see ``_matmul``)."""
    out_shape, a_shape = args[1], args[4]
    run(_matmul, int(np.prod(out_shape)) * int(a_shape[2]), *args)


KERNELS["matmul"] = _matmul
