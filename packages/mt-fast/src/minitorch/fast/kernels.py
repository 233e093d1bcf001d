"""Parallel Numba kernels for map, zip, reduce and matrix multiply.

Every kernel takes ``(storage, shape, strides)`` triples, as the backend protocol of
mt-tensor defines them, and reuses mt-tensor's index helpers compiled by Numba. The outer
loop of each kernel is a ``prange`` over independent pieces of the output; each iteration
allocates its own index buffers, so threads share nothing but the output positions they
own. Kernels are cached on disk (``cache=True``); see ``_cache`` for how a change to an
operator or an index helper invalidates them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from minitorch.operators import scalar as _scalar_ops
from minitorch.tensor import tensor_data as _tensor_data
from minitorch.tensor.tensor_data import broadcast_index, index_to_position, to_index

from . import _cache

__all__ = ["GRAIN", "jit_scalar", "make_map", "make_reduce", "make_zip", "matmul", "run"]

# The index helpers, compiled from mt-tensor's source (inlined into each kernel).
for _helper in (index_to_position, to_index, broadcast_index):
    register_jitable(_helper)

_cache.install(__file__, [_scalar_ops, _tensor_data])

_registered: set[Any] = set()

KERNELS: dict[str, Any] = {}
"""Every kernel built so far, by name (``map[neg]``, ``matmul``), for diagnostics."""


def jit_scalar(fn: Callable[..., float]) -> Callable[..., float]:
    """Make a plain scalar function (e.g. ``operators.mul``) callable from kernels.

    ``register_jitable`` keeps ``fn`` itself as the closure value, so kernels built on it
    hit Numba's cache across processes (a closure over an ``njit`` dispatcher would not).
    """
    if fn not in _registered:
        register_jitable(fn)
        _registered.add(fn)
    return fn


@register_jitable
def _is_contiguous(shape: Any, strides: Any) -> bool:
    expected = 1
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] != 1 and strides[i] != expected:
            return False
        expected *= shape[i]
    return True


@register_jitable
def _same_layout(shape_a: Any, strides_a: Any, shape_b: Any, strides_b: Any) -> bool:
    if len(shape_a) != len(shape_b):
        return False
    for i in range(len(shape_a)):
        if shape_a[i] != shape_b[i] or strides_a[i] != strides_b[i]:
            return False
    return True


@register_jitable
def _size(shape: Any) -> int:
    n = 1
    for i in range(len(shape)):
        n *= shape[i]
    return n


@register_jitable
def _last(shape: Any, strides: Any) -> tuple[int, int]:
    """Size of the last dimension and its stride (0 where it broadcasts)."""
    if len(shape) == 0:
        return 1, 0
    n = shape[len(shape) - 1]
    return n, (strides[len(shape) - 1] if n > 1 else 0)


# Below this much work (elements touched) a kernel runs on one thread: waking the thread
# pool costs more than it saves, and far more on a busy machine. Numba cannot cache a
# kernel that sets its own thread count, so the caller decides.
GRAIN = 1 << 15


def run(kernel: Callable[..., None], work: int, *args: Any) -> None:
    """Call ``kernel(*args)``, on one thread when ``work`` is below ``GRAIN``."""
    if work >= GRAIN:
        kernel(*args)
        return
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        kernel(*args)
    finally:
        numba.set_num_threads(threads)


def make_map(fn: Callable[[float], float]) -> Callable[..., None]:
    """Return a parallel kernel ``out = fn(in)`` with ``in`` broadcast to ``out``."""
    fn = jit_scalar(fn)

    @njit(parallel=True, cache=True)
    def kernel(out, out_shape, out_strides, in_storage, in_shape, in_strides):  # type: ignore[no-untyped-def]
        size = _size(out_shape)
        if size == 0:
            pass
        elif _same_layout(out_shape, out_strides, in_shape, in_strides) and _is_contiguous(
            out_shape, out_strides
        ):
            # Stride-aligned: storage positions are the ordinals, no index arithmetic.
            for i in prange(size):
                out[i] = fn(in_storage[i])
        else:
            # One parallel task per row of the output's last dimension.
            row, out_step = _last(out_shape, out_strides)
            _, in_step = _last(in_shape, in_strides)
            for r in prange(size // row):
                out_index = np.empty(len(out_shape), np.int64)
                in_index = np.empty(len(in_shape), np.int64)
                to_index(r * row, out_shape, out_index)
                broadcast_index(out_index, out_shape, in_shape, in_index)
                o = index_to_position(out_index, out_strides)
                j = index_to_position(in_index, in_strides)
                for k in range(row):
                    out[o + k * out_step] = fn(in_storage[j + k * in_step])

    KERNELS[f"map[{fn.__name__}]"] = kernel
    return kernel  # type: ignore[no-any-return]


def make_zip(fn: Callable[[float, float], float]) -> Callable[..., None]:
    """Return a parallel kernel ``out = fn(a, b)`` with ``a`` and ``b`` broadcast."""
    fn = jit_scalar(fn)

    @njit(parallel=True, cache=True)
    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
        size = _size(out_shape)
        if size == 0:
            pass
        elif (
            _same_layout(out_shape, out_strides, a_shape, a_strides)
            and _same_layout(out_shape, out_strides, b_shape, b_strides)
            and _is_contiguous(out_shape, out_strides)
        ):
            for i in prange(size):
                out[i] = fn(a[i], b[i])
        else:
            row, out_step = _last(out_shape, out_strides)
            _, a_step = _last(a_shape, a_strides)
            _, b_step = _last(b_shape, b_strides)
            for r in prange(size // row):
                out_index = np.empty(len(out_shape), np.int64)
                a_index = np.empty(len(a_shape), np.int64)
                b_index = np.empty(len(b_shape), np.int64)
                to_index(r * row, out_shape, out_index)
                broadcast_index(out_index, out_shape, a_shape, a_index)
                broadcast_index(out_index, out_shape, b_shape, b_index)
                o = index_to_position(out_index, out_strides)
                ja = index_to_position(a_index, a_strides)
                jb = index_to_position(b_index, b_strides)
                for k in range(row):
                    out[o + k * out_step] = fn(a[ja + k * a_step], b[jb + k * b_step])

    KERNELS[f"zip[{fn.__name__}]"] = kernel
    return kernel  # type: ignore[no-any-return]


_REDUCE_BLOCKS = 8


def make_reduce(fn: Callable[[float, float], float]) -> Callable[..., None]:
    """Return a parallel kernel folding ``fn`` over dimension ``dim`` of ``a``.

    Reducing the last dimension, each output element folds a run of ``a``; over unit
    stride it keeps eight partial folds, so consecutive steps do not wait on each other
    and LLVM can vectorise them (Numba does not pass fast-math flags into parallel loop
    bodies, so it cannot reorder a single running fold). Reducing any other dimension, each
    parallel task folds a block of whole rows of ``a`` into a partial row (streaming memory
    in order), and the partials are combined in block order. ``fn`` must be associative
    (add, mul, max); the fold order is fixed, so results are deterministic.
    """
    fn = jit_scalar(fn)

    @njit(parallel=True, cache=True)
    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, dim, start):  # type: ignore[no-untyped-def]
        size = _size(out_shape)
        n = a_shape[dim]
        step = a_strides[dim]
        nd = len(out_shape)
        row, out_step = _last(out_shape, out_strides)
        if size == 0:
            pass
        elif dim == nd - 1 or row == 1:
            for i in prange(size):
                index = np.empty(nd, np.int64)
                to_index(i, out_shape, index)
                o = index_to_position(index, out_strides)
                j = index_to_position(index, a_strides)
                k = 0
                acc = start
                if step == 1 and n >= 16:
                    p0, p1, p2, p3 = a[j], a[j + 1], a[j + 2], a[j + 3]
                    p4, p5, p6, p7 = a[j + 4], a[j + 5], a[j + 6], a[j + 7]
                    k = 8
                    while k + 8 <= n:
                        p0 = fn(p0, a[j + k])
                        p1 = fn(p1, a[j + k + 1])
                        p2 = fn(p2, a[j + k + 2])
                        p3 = fn(p3, a[j + k + 3])
                        p4 = fn(p4, a[j + k + 4])
                        p5 = fn(p5, a[j + k + 5])
                        p6 = fn(p6, a[j + k + 6])
                        p7 = fn(p7, a[j + k + 7])
                        k += 8
                    acc = fn(acc, fn(fn(fn(p0, p1), fn(p2, p3)), fn(fn(p4, p5), fn(p6, p7))))
                for r in range(k, n):
                    acc = fn(acc, a[j + r * step])
                out[o] = acc
        else:
            # Split the reduced dimension into a fixed number of blocks (not the thread
            # count, so results never depend on it); each task streams whole rows of ``a``
            # into its own partial row, then the partials are combined in block order.
            _, a_step = _last(a_shape, a_strides)
            outer = size // row
            per = (n + _REDUCE_BLOCKS - 1) // _REDUCE_BLOCKS
            blocks = (n + per - 1) // per
            partial = np.empty(outer * blocks * row, np.float64)
            for t in prange(outer * blocks):
                k0 = (t % blocks) * per
                k1 = min(n, k0 + per)
                index = np.empty(nd, np.int64)
                to_index((t // blocks) * row, out_shape, index)
                j = index_to_position(index, a_strides)
                p = t * row
                if a_step == 1:
                    # Slices first: indexing ``x[c]`` with a range index skips Numba's
                    # negative-index check, which would keep the loop from vectorising.
                    mine = partial[p : p + row]
                    first = a[j + k0 * step : j + k0 * step + row]
                    for c in range(row):
                        mine[c] = first[c]
                    for k in range(k0 + 1, k1):
                        src = a[j + k * step : j + k * step + row]
                        for c in range(row):
                            mine[c] = fn(mine[c], src[c])
                else:
                    for c in range(row):
                        partial[p + c] = a[j + k0 * step + c * a_step]
                    for k in range(k0 + 1, k1):
                        base = j + k * step
                        for c in range(row):
                            partial[p + c] = fn(partial[p + c], a[base + c * a_step])
            for r in prange(outer):
                index = np.empty(nd, np.int64)
                to_index(r * row, out_shape, index)
                o = index_to_position(index, out_strides)
                acc = np.full(row, start, np.float64)
                for b in range(blocks):
                    p = (r * blocks + b) * row
                    part = partial[p : p + row]
                    for c in range(row):
                        acc[c] = fn(acc[c], part[c])
                for c in range(row):
                    out[o + c * out_step] = acc[c]

    KERNELS[f"reduce[{fn.__name__}]"] = kernel
    return kernel  # type: ignore[no-any-return]


# Matrix multiply: tiles of the output are independent parallel tasks. Each task copies
# ("packs") the blocks of A and B it needs into contiguous buffers, whatever the input
# strides (so transposed views in the backward pass cost nothing extra), and accumulates
# into a local tile with an i-k-j loop whose innermost step is one multiply-add over
# contiguous memory, which LLVM vectorises.
_TILE_M = 64
_TILE_N = 256
_TILE_K = 128


@njit(parallel=True, fastmath=True, cache=True)
def matmul(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
    """``out[n] = a[n or 0] @ b[n or 0]`` over 3-D strided operands (batch size 1 broadcasts)."""
    batches = out_shape[0]
    rows = out_shape[1]
    cols = out_shape[2]
    inner = a_shape[2]
    a_batch = a_strides[0] if a_shape[0] > 1 else 0
    b_batch = b_strides[0] if b_shape[0] > 1 else 0
    a_row, a_col = a_strides[1], a_strides[2]
    b_row, b_col = b_strides[1], b_strides[2]
    o_batch, o_row, o_col = out_strides[0], out_strides[1], out_strides[2]
    tiles_m = (rows + _TILE_M - 1) // _TILE_M
    tiles_n = (cols + _TILE_N - 1) // _TILE_N
    for t in prange(batches * tiles_m * tiles_n):
        n = t // (tiles_m * tiles_n)
        i0 = ((t // tiles_n) % tiles_m) * _TILE_M
        j0 = (t % tiles_n) * _TILE_N
        mi = min(_TILE_M, rows - i0)
        nj = min(_TILE_N, cols - j0)
        acc = np.zeros((_TILE_M, _TILE_N), np.float64)
        a_pack = np.empty((_TILE_M, _TILE_K), np.float64)
        b_pack = np.empty((_TILE_K, _TILE_N), np.float64)
        for k0 in range(0, inner, _TILE_K):
            kk = min(_TILE_K, inner - k0)
            a_base = n * a_batch + i0 * a_row + k0 * a_col
            # Pack through row slices: a unit-stride row is one slice copy, and indexing a
            # slice with a range variable skips Numba's negative-index check, which costs
            # more than the copy itself when done per element.
            for i in range(mi):
                row_a = a[a_base + i * a_row :]
                if a_col == 1:
                    a_pack[i, :kk] = row_a[:kk]
                else:
                    for k in range(kk):
                        a_pack[i, k] = row_a[k * a_col]
            b_base = n * b_batch + k0 * b_row + j0 * b_col
            for k in range(kk):
                row_b = b[b_base + k * b_row :]
                if b_col == 1:
                    b_pack[k, :nj] = row_b[:nj]
                else:
                    for j in range(nj):
                        b_pack[k, j] = row_b[j * b_col]
            for i in range(mi):
                for k in range(kk):
                    aik = a_pack[i, k]
                    for j in range(nj):
                        acc[i, j] += aik * b_pack[k, j]
        o_base = n * o_batch + i0 * o_row + j0 * o_col
        for i in range(mi):
            for j in range(nj):
                out[o_base + i * o_row + j * o_col] = acc[i, j]


KERNELS["matmul"] = matmul
