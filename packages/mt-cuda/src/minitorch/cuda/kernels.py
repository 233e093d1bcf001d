"""CUDA kernels for map, zip, reduce and matrix multiply, and the host code that launches them.

Each kernel takes ``(storage, shape, strides)`` triples as the backend protocol of
mt-tensor defines them. Storages are device arrays; shapes and strides are passed as
tuples, which travel by value in the launch parameters (a numpy array argument would be
copied to the device and back at every launch). The index helpers of mt-tensor and the
scalar operators of mt-operators are compiled unchanged as device functions.

- ``map`` and ``zip``: one thread per output element. A thread turns its ordinal into an
  index (``to_index``), maps it to each input's index (``broadcast_index``) and to storage
  positions (``index_to_position``), using ``cuda.local.array`` index buffers. When every
  operand has the output's contiguous layout, the ordinal is the position: no indexing.
- ``reduce``: one block per output element. Each thread folds a strided slice of the
  reduced dimension, then the block combines the partial results in shared memory by
  halving (a tree, ``block_reduce``), so any reduced size works with at most
  ``THREADS_PER_BLOCK`` threads.
- ``matmul``: one block per ``t x t`` tile of the output (and per batch entry). Step by step
  along the inner dimension, the block copies a ``t x t`` tile of A and of B into shared
  memory (each thread copies one element of each), synchronises, and each thread adds up
  its row-times-column over the tile. Every input element is read from global memory once
  per tile; the edges of partial tiles are padded with zeros.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

from numba import cuda, types

from minitorch.tensor import MAX_DIMS, broadcast_index, index_to_position, to_index

from . import launch

__all__ = [
    "KERNELS",
    "block_reduce",
    "device_fn",
    "make_map",
    "make_reduce",
    "make_zip",
    "matmul",
]

Launcher = Callable[..., None]

_DEVICE_FNS: dict[Callable[..., Any], Any] = {}

KERNELS: dict[str, Any] = {}
"""Every CUDA kernel built so far, by name (``map[neg]``, ``matmul``), for inspection."""


def device_fn(fn: Callable[..., Any]) -> Any:
    """Return ``fn`` compiled as a CUDA device function (once per function)."""
    compiled = _DEVICE_FNS.get(fn)
    if compiled is None:
        compiled = _DEVICE_FNS[fn] = cuda.jit(device=True)(fn)
    return compiled


_BLOCK_REDUCERS: dict[Callable[..., Any], Any] = {}


def block_reduce(fn: Callable[[float, float], float]) -> Any:
    """Return a device function ``fold(cache, value) -> float``: ``fn`` over a whole block.

    Every thread of the block calls ``fold`` with its own ``value`` (it synchronises the
    block, so none may skip it) and gets back the fold of all the block's values. ``cache``
    is a shared float64 array with a slot per thread, e.g.
    ``cuda.shared.array(THREADS_PER_BLOCK, float64)``. The block size must be a power of two
    (``reduction_threads`` gives one): each step the first half of the threads folds in the
    second half, ``log2(threads)`` steps in all. ``fn`` must be associative and commutative,
    as the values are combined in a tree, not left to right (slot 0 meets slot ``half``
    first). Call ``cuda.syncthreads()`` before writing
    ``cache`` again. Built once per ``fn``.
    """
    fold = _BLOCK_REDUCERS.get(fn)
    if fold is None:
        f = device_fn(fn)

        @cuda.jit(device=True)
        def fold(cache, value):  # type: ignore[no-untyped-def]
            tid = cuda.threadIdx.x
            cache[tid] = value
            cuda.syncthreads()
            half = cuda.blockDim.x // 2
            while half > 0:  # the first half folds in the second half
                if tid < half:
                    cache[tid] = f(cache[tid], cache[tid + half])
                cuda.syncthreads()
                half //= 2
            return cache[0]

        _BLOCK_REDUCERS[fn] = fold
    return fold


# mt-tensor's index helpers, compiled for the GPU from their own source.
_to_index = device_fn(to_index)
_broadcast_index = device_fn(broadcast_index)
_index_to_position = device_fn(index_to_position)

_REDUCE_BLOCK = launch.THREADS_PER_BLOCK
_TILE = launch.TILE


def _tuples(shape: Any, strides: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and strides as int tuples (a 0-d tensor as one element)."""
    if len(shape) == 0:
        return (1,), (1,)
    return tuple(int(s) for s in shape), tuple(int(s) for s in strides)


def _contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    expected = 1
    for s, st in zip(reversed(shape), reversed(strides), strict=True):
        if s != 1 and st != expected:
            return False
        expected *= s
    return True


# ---------------------------------------------------------------------------------------
# map and zip


def make_map(fn: Callable[[float], float]) -> Launcher:
    """Return a launcher ``call(out, out_shape, out_strides, in, in_shape, in_strides)``.

    It writes ``fn(in)`` into every element of ``out``, ``in`` broadcast to ``out``.
    """
    f = device_fn(fn)

    @cuda.jit
    def kernel(out, out_shape, out_strides, size, in_storage, in_shape, in_strides, aligned):  # type: ignore[no-untyped-def]
        # BEGIN SOLUTION task3_3
        i = cuda.grid(1)
        if i >= size:
            return
        if aligned:  # stride-aligned: the ordinal is the position
            out[i] = f(in_storage[i])
            return
        out_index = cuda.local.array(MAX_DIMS, types.int64)
        in_index = cuda.local.array(MAX_DIMS, types.int64)
        _to_index(i, out_shape, out_index)
        _broadcast_index(out_index, out_shape, in_shape, in_index)
        o = _index_to_position(out_index[: len(out_shape)], out_strides)
        j = _index_to_position(in_index[: len(in_shape)], in_strides)
        out[o] = f(in_storage[j])
        # END SOLUTION

    KERNELS[f"map[{fn.__name__}]"] = kernel

    def call(
        out: Any, out_shape: Any, out_strides: Any, a: Any, a_shape: Any, a_strides: Any
    ) -> None:
        shape, strides = _tuples(out_shape, out_strides)
        shape_a, strides_a = _tuples(a_shape, a_strides)
        size = prod(shape)
        if size == 0:
            return
        aligned = shape == shape_a and strides == strides_a and _contiguous(shape, strides)
        if aligned:  # one signature for every aligned call, whatever its dimensions
            shape = shape_a = (size,)
            strides = strides_a = (1,)
        blocks, threads = launch.elementwise_launch(size)
        kernel[blocks, threads](out, shape, strides, size, a, shape_a, strides_a, aligned)

    return call


def make_zip(fn: Callable[[float, float], float]) -> Launcher:
    """Return a launcher ``call(out, out_shape, out_strides, a, ..., b, ...)``.

    It writes ``fn(a, b)`` into every element of ``out``, ``a`` and ``b`` broadcast to it.
    """
    f = device_fn(fn)

    @cuda.jit
    def kernel(  # type: ignore[no-untyped-def]
        out, out_shape, out_strides, size, a, a_shape, a_strides, b, b_shape, b_strides, aligned
    ):
        # BEGIN SOLUTION task3_3
        i = cuda.grid(1)
        if i >= size:
            return
        if aligned:
            out[i] = f(a[i], b[i])
            return
        out_index = cuda.local.array(MAX_DIMS, types.int64)
        a_index = cuda.local.array(MAX_DIMS, types.int64)
        b_index = cuda.local.array(MAX_DIMS, types.int64)
        _to_index(i, out_shape, out_index)
        _broadcast_index(out_index, out_shape, a_shape, a_index)
        _broadcast_index(out_index, out_shape, b_shape, b_index)
        o = _index_to_position(out_index[: len(out_shape)], out_strides)
        ja = _index_to_position(a_index[: len(a_shape)], a_strides)
        jb = _index_to_position(b_index[: len(b_shape)], b_strides)
        out[o] = f(a[ja], b[jb])
        # END SOLUTION

    KERNELS[f"zip[{fn.__name__}]"] = kernel

    def call(
        out: Any, out_shape: Any, out_strides: Any,
        a: Any, a_shape: Any, a_strides: Any,
        b: Any, b_shape: Any, b_strides: Any,
    ) -> None:  # fmt: skip
        shape, strides = _tuples(out_shape, out_strides)
        shape_a, strides_a = _tuples(a_shape, a_strides)
        shape_b, strides_b = _tuples(b_shape, b_strides)
        size = prod(shape)
        if size == 0:
            return
        aligned = (
            shape == shape_a == shape_b
            and strides == strides_a == strides_b
            and _contiguous(shape, strides)
        )
        if aligned:
            shape = shape_a = shape_b = (size,)
            strides = strides_a = strides_b = (1,)
        blocks, threads = launch.elementwise_launch(size)
        kernel[blocks, threads](
            out, shape, strides, size, a, shape_a, strides_a, b, shape_b, strides_b, aligned
        )

    return call


# ---------------------------------------------------------------------------------------
# reduce


def make_reduce(fn: Callable[[float, float], float]) -> Launcher:
    """Return a launcher ``call(out, out_shape, out_strides, a, a_shape, a_strides, dim, start)``.

    ``out`` has ``a``'s shape with ``dim`` of size 1; each of its elements is the fold of
    ``fn`` over ``dim``. ``start`` must be an identity of ``fn`` (0 for add, 1 for mul,
    -inf for max), and ``fn`` associative and commutative: each thread folds a strided
    slice of ``dim`` and the block combines the slices in a tree, so values meet out of
    order.
    """
    f = device_fn(fn)
    fold = block_reduce(fn)

    @cuda.jit
    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, dim, start):  # type: ignore[no-untyped-def]
        # BEGIN SOLUTION task3_3
        cache = cuda.shared.array(_REDUCE_BLOCK, types.float64)
        index = cuda.local.array(MAX_DIMS, types.int64)
        tid = cuda.threadIdx.x
        width = cuda.blockDim.x
        # This block's output element; index[dim] is 0 there, the first reduced position.
        _to_index(cuda.blockIdx.x, out_shape, index)
        base = _index_to_position(index[: len(a_shape)], a_strides)
        step = a_strides[dim]
        # Each thread folds positions tid, tid + width, tid + 2 * width, ...
        acc = start
        for k in range(tid, a_shape[dim], width):
            acc = f(acc, a[base + k * step])
        total = fold(cache, acc)  # the block's partial results, folded in a tree
        if tid == 0:
            out[_index_to_position(index[: len(out_shape)], out_strides)] = total
        # END SOLUTION

    KERNELS[f"reduce[{fn.__name__}]"] = kernel

    def call(
        out: Any, out_shape: Any, out_strides: Any,
        a: Any, a_shape: Any, a_strides: Any,
        dim: int, start: float,
    ) -> None:  # fmt: skip
        shape, strides = _tuples(out_shape, out_strides)
        shape_a, strides_a = _tuples(a_shape, a_strides)
        blocks = prod(shape)
        if blocks == 0:
            return
        threads = launch.reduction_threads(shape_a[dim])
        kernel[blocks, threads](out, shape, strides, a, shape_a, strides_a, int(dim), float(start))

    return call


# ---------------------------------------------------------------------------------------
# matrix multiply


@cuda.jit
def _matmul_kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
    # BEGIN SOLUTION task3_4
    a_tile = cuda.shared.array((_TILE, _TILE), types.float64)
    b_tile = cuda.shared.array((_TILE, _TILE), types.float64)
    t = cuda.blockDim.x  # the tile side, at most _TILE
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    i = cuda.blockIdx.y * t + ty  # this thread's output row
    j = cuda.blockIdx.x * t + tx  # and column
    rows = out_shape[1]
    cols = out_shape[2]
    inner = a_shape[2]
    a_batch = a_strides[0] if a_shape[0] > 1 else 0  # a batch of 1 broadcasts
    b_batch = b_strides[0] if b_shape[0] > 1 else 0
    for n in range(cuda.blockIdx.z, out_shape[0], cuda.gridDim.z):
        acc = 0.0
        for k0 in range(0, inner, t):
            # Copy A[i, k0 + tx] and B[k0 + ty, j] into the tiles (0 beyond the edges).
            k = k0 + tx
            if i < rows and k < inner:
                a_tile[ty, tx] = a[n * a_batch + i * a_strides[1] + k * a_strides[2]]
            else:
                a_tile[ty, tx] = 0.0
            k = k0 + ty
            if k < inner and j < cols:
                b_tile[ty, tx] = b[n * b_batch + k * b_strides[1] + j * b_strides[2]]
            else:
                b_tile[ty, tx] = 0.0
            cuda.syncthreads()
            for kk in range(t):
                acc += a_tile[ty, kk] * b_tile[kk, tx]
            cuda.syncthreads()  # everyone is done with the tiles before they are refilled
        if i < rows and j < cols:
            out[n * out_strides[0] + i * out_strides[1] + j * out_strides[2]] = acc
    # END SOLUTION


KERNELS["matmul"] = _matmul_kernel


def matmul(
    out: Any, out_shape: Any, out_strides: Any,
    a: Any, a_shape: Any, a_strides: Any,
    b: Any, b_shape: Any, b_strides: Any,
) -> None:  # fmt: skip
    """Launch ``out[n] = a[n or 0] @ b[n or 0]`` over 3-D strided operands on the device."""
    shape, strides = _tuples(out_shape, out_strides)
    shape_a, strides_a = _tuples(a_shape, a_strides)
    shape_b, strides_b = _tuples(b_shape, b_strides)
    if prod(shape) == 0:
        return
    grid, block = launch.tiles(*shape)
    _matmul_kernel[grid, block](out, shape, strides, a, shape_a, strides_a, b, shape_b, strides_b)
