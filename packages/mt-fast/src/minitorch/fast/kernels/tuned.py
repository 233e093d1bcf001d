"""The tuned kernels: what makes ``FastBackend`` fast (the default ``FastOps``).

A ``KernelModule`` (see ``kernels/__init__.py``), as ``plain`` is.

They compute what the course's kernels in ``plain`` compute, with fast paths: stride-aligned
map and zip without index arithmetic, glibc's vector ``exp`` for ``exp`` and ``sigmoid``
(``vecmath``), reductions unrolled into eight partial folds or split into blocks of whole
rows, and a packed, tiled, register-blocked matrix multiply. Every kernel takes
``(storage, shape, strides)`` triples, as the backend protocol of mt-tensor defines them.
Where the course's kernels fill index buffers with mt-tensor's index helpers, these find a
storage position in scalar arithmetic (``_position``), so small tensors allocate nothing;
short inner dimensions of a matrix product skip packing (``_matmul_rows``). The outer loop
of each kernel is a ``prange`` over independent pieces of the output, so threads share
nothing but the output positions they own. Each kernel is compiled
twice from one source (``runtime.twin``): with ``prange`` for large work and with ``range``
for small work, which then costs a function call rather than a parallel launch. Kernels are
cached on disk (``cache=True``); see ``_cache`` for how a change to an operator or an index
helper invalidates them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from minitorch.operators import add
from minitorch.tensor import index_to_position, is_contiguous_layout

from .. import _cache, vecmath
from ..runtime import GRAIN, Kernel, jit_scalar, run, twin

__all__ = ["KERNELS", "PARALLEL", "make_map", "make_reduce", "make_zip", "matmul", "run"]

# The operators and the index helpers are compiled into the kernels: key the cache on
# the files that define them (found through the public functions, not private modules).
_cache.install(__file__, [*_cache.defining_modules(add, index_to_position), vecmath])

KERNELS: dict[str, Any] = {}
"""Every kernel built so far, by name (``map[neg]``, ``matmul``): the serial twins, which
small work runs (see ``runtime.Kernel``)."""
PARALLEL: dict[str, Any] = {}
"""The parallel twins of ``KERNELS``, by the same names, for Numba's parallel diagnostics."""


def _register(name: str, kernel: Kernel) -> Kernel:
    KERNELS[name] = kernel.serial
    PARALLEL[name] = kernel.parallel
    return kernel


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


@register_jitable
def _position(ordinal: int, out_shape: Any, shape: Any, strides: Any) -> Any:
    """Where the output element with row-major ``ordinal`` reads a broadcast operand (an int).

    The operand has ``shape`` and ``strides`` and broadcasts to ``out_shape``; with the
    output's own shape and strides this is the output's position. It is ``to_index``,
    ``broadcast_index`` and ``index_to_position`` in scalar arithmetic: no index buffer to
    allocate, which on small tensors costs more than the loop it feeds.
    """
    ordinal = np.int64(ordinal)  # a prange index may be unsigned: keep the arithmetic signed
    position = np.int64(0)
    offset = len(out_shape) - len(shape)
    for d in range(len(out_shape) - 1, -1, -1):
        size = out_shape[d]
        i = ordinal % size
        ordinal //= size
        e = d - offset
        if e >= 0 and shape[e] != 1:
            position += i * strides[e]
    return position


def make_map(fn: Callable[[float], float]) -> Kernel:
    """Return the kernel pair ``out = fn(in)`` with ``in`` broadcast to ``out``.

    Operators with a vector form in ``vecmath.VECTOR_MAPS`` (``exp``, ``sigmoid``) use it
    on stride-aligned data, in runs of ``vecmath.CHUNK`` elements per parallel task.
    """
    fn = jit_scalar(fn)
    block = vecmath.VECTOR_MAPS.get(fn, vecmath.no_block)
    vector = block is not vecmath.no_block
    chunk = vecmath.CHUNK

    def build(loop: Any) -> Any:
        @njit(parallel=loop is prange, cache=True)
        def kernel(out, out_shape, out_strides, in_storage, in_shape, in_strides):  # type: ignore[no-untyped-def]
            size = _size(out_shape)
            if size == 0:
                pass
            elif _same_layout(
                out_shape, out_strides, in_shape, in_strides
            ) and is_contiguous_layout(out_shape, out_strides):
                # Stride-aligned: storage positions are the ordinals, no index arithmetic.
                if vector:
                    for t in loop((size + chunk - 1) // chunk):
                        lo = t * chunk
                        hi = min(size, lo + chunk)
                        block(out[lo:hi], in_storage[lo:hi], np.empty(chunk, np.float64))
                else:
                    for i in loop(size):
                        out[i] = fn(in_storage[i])
            else:
                # One parallel task per row of the output's last dimension.
                row, out_step = _last(out_shape, out_strides)
                _, in_step = _last(in_shape, in_strides)
                for r in loop(size // row):
                    o = _position(r * row, out_shape, out_shape, out_strides)
                    j = _position(r * row, out_shape, in_shape, in_strides)
                    for k in range(row):
                        out[o + k * out_step] = fn(in_storage[j + k * in_step])

        return kernel

    return _register(f"map[{fn.__name__}]", twin(build))


def make_zip(fn: Callable[[float, float], float]) -> Kernel:
    """Return the kernel pair ``out = fn(a, b)`` with ``a`` and ``b`` broadcast."""
    fn = jit_scalar(fn)

    def build(loop: Any) -> Any:
        @njit(parallel=loop is prange, cache=True)
        def kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
            size = _size(out_shape)
            if size == 0:
                pass
            elif (
                _same_layout(out_shape, out_strides, a_shape, a_strides)
                and _same_layout(out_shape, out_strides, b_shape, b_strides)
                and is_contiguous_layout(out_shape, out_strides)
            ):
                for i in loop(size):
                    out[i] = fn(a[i], b[i])
            else:
                row, out_step = _last(out_shape, out_strides)
                _, a_step = _last(a_shape, a_strides)
                _, b_step = _last(b_shape, b_strides)
                for r in loop(size // row):
                    o = _position(r * row, out_shape, out_shape, out_strides)
                    ja = _position(r * row, out_shape, a_shape, a_strides)
                    jb = _position(r * row, out_shape, b_shape, b_strides)
                    for k in range(row):
                        out[o + k * out_step] = fn(a[ja + k * a_step], b[jb + k * b_step])

        return kernel

    return _register(f"zip[{fn.__name__}]", twin(build))


_REDUCE_BLOCKS = 8


def make_reduce(fn: Callable[[float, float], float]) -> Kernel:
    """Return the kernel pair folding ``fn`` over dimension ``dim`` of ``a``.

    Reducing the last dimension, each output element folds a run of ``a``; over unit
    stride it keeps eight partial folds, so consecutive steps do not wait on each other
    and LLVM can vectorise them (Numba does not pass fast-math flags into parallel loop
    bodies, so it cannot reorder a single running fold). Reducing any other dimension, each
    parallel task folds a block of whole rows of ``a`` into a partial row (streaming memory
    in order), and the partials are combined in block order. ``fn`` must be associative
    (add, mul, max); the fold order is fixed, so results are deterministic.
    """
    fn = jit_scalar(fn)

    def build(loop: Any) -> Any:
        @njit(parallel=loop is prange, cache=True)
        def kernel(out, out_shape, out_strides, a, a_shape, a_strides, dim, start):  # type: ignore[no-untyped-def]
            size = _size(out_shape)
            n = a_shape[dim]
            step = a_strides[dim]
            nd = len(out_shape)
            row, out_step = _last(out_shape, out_strides)
            if size == 0:
                pass
            elif n == 0:
                # Nothing to fold: every output is the start value (``sum`` 0, ``max`` -inf).
                for i in loop(size):
                    out[_position(i, out_shape, out_shape, out_strides)] = start
            elif dim == nd - 1 or row == 1:
                for i in loop(size):
                    # The reduced dimension has size 1 in the output: index 0 in ``a``.
                    o = _position(i, out_shape, out_shape, out_strides)
                    j = _position(i, out_shape, a_shape, a_strides)
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
                for t in loop(outer * blocks):
                    k0 = (t % blocks) * per
                    k1 = min(n, k0 + per)
                    j = _position((t // blocks) * row, out_shape, a_shape, a_strides)
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
                for r in loop(outer):
                    o = _position(r * row, out_shape, out_shape, out_strides)
                    acc = np.full(row, start, np.float64)
                    for b in range(blocks):
                        p = (r * blocks + b) * row
                        part = partial[p : p + row]
                        for c in range(row):
                            acc[c] = fn(acc[c], part[c])
                    for c in range(row):
                        out[o + c * out_step] = acc[c]

        return kernel

    return _register(f"reduce[{fn.__name__}]", twin(build))


# Matrix multiply. Each output element is a dot product over k, so both operands are used
# "k-major": rows of A and columns of B (rows of B transposed) with unit stride along k.
# Views that already are (a row-major A, a transposed B as in the backward pass) are read
# in place; anything else is packed once, in parallel, into a k-major buffer. Tiles of the
# output are then independent parallel tasks; within a tile a 4 x 4 register block keeps
# sixteen running dot products in vector registers (see ``_dot_4x4``), so each step of the
# inner loop does sixteen multiply-adds for eight loads.
_TILE_M = 64
_TILE_N = 128
_TILE_K = 512
_PACK_BLOCK = 8
_FAST = {"reassoc", "contract", "nsz"}  # reorder sums (to vectorise), keep NaN/inf semantics


def _build_pack(loop: Any) -> Any:
    @njit(parallel=loop is prange, cache=True)
    def _pack_k_major(dst, src, batches, count, inner, batch_stride, row_stride, k_stride):  # type: ignore[no-untyped-def]
        """Pack ``src`` k-major: ``dst[(n * count + r) * inner + k] = src[n, r, k]``.

        ``src[n, r, k]`` is ``src[n * batch_stride + r * row_stride + k * k_stride]``.

        Tasks take eight rows at a time and walk k, so a transposed source is read one cache
        line (eight neighbouring rows) per step instead of one element per line.
        """
        blocks = (count + _PACK_BLOCK - 1) // _PACK_BLOCK
        for t in loop(batches * blocks):
            n = t // blocks
            r0 = (t % blocks) * _PACK_BLOCK
            r1 = min(count, r0 + _PACK_BLOCK)
            first = (n * count + r0) * inner
            for k in range(inner):
                line = src[n * batch_stride + r0 * row_stride + k * k_stride :]
                for r in range(r1 - r0):
                    dst[first + r * inner + k] = line[r * row_stride]

    return _pack_k_major


_PACK_K_MAJOR = twin(_build_pack)


@register_jitable
def _dot_4x4(acc, i, j, a0, a1, a2, a3, b0, b1, b2, b3):  # type: ignore[no-untyped-def]
    """Add the 16 dot products of rows ``a0..a3`` with ``b0..b3`` to ``acc[i:i+4, j:j+4]``.

    Sixteen independent sums over unit-stride rows: LLVM vectorises the loop over k and
    keeps every sum in a vector register, which needs the caller compiled with ``_FAST``
    (summing in vector lanes reorders the additions).
    """
    c00 = c01 = c02 = c03 = c10 = c11 = c12 = c13 = 0.0
    c20 = c21 = c22 = c23 = c30 = c31 = c32 = c33 = 0.0
    for k in range(len(a0)):
        x0, x1, x2, x3 = a0[k], a1[k], a2[k], a3[k]
        y0, y1, y2, y3 = b0[k], b1[k], b2[k], b3[k]
        c00 += x0 * y0
        c01 += x0 * y1
        c02 += x0 * y2
        c03 += x0 * y3
        c10 += x1 * y0
        c11 += x1 * y1
        c12 += x1 * y2
        c13 += x1 * y3
        c20 += x2 * y0
        c21 += x2 * y1
        c22 += x2 * y2
        c23 += x2 * y3
        c30 += x3 * y0
        c31 += x3 * y1
        c32 += x3 * y2
        c33 += x3 * y3
    acc[i, j] += c00
    acc[i, j + 1] += c01
    acc[i, j + 2] += c02
    acc[i, j + 3] += c03
    acc[i + 1, j] += c10
    acc[i + 1, j + 1] += c11
    acc[i + 1, j + 2] += c12
    acc[i + 1, j + 3] += c13
    acc[i + 2, j] += c20
    acc[i + 2, j + 1] += c21
    acc[i + 2, j + 2] += c22
    acc[i + 2, j + 3] += c23
    acc[i + 3, j] += c30
    acc[i + 3, j + 1] += c31
    acc[i + 3, j + 2] += c32
    acc[i + 3, j + 3] += c33


@register_jitable
def _k_row(x, base, stride, r, count, k0, k1, zeros):  # type: ignore[no-untyped-def]
    """Row ``r`` of a k-major operand, ``[k0, k1)``; rows past ``count`` read as zeros."""
    if r >= count:
        return zeros[: k1 - k0]
    start = base + r * stride
    return x[start + k0 : start + k1]


def _build_matmul_tiles(loop: Any) -> Any:
    @njit(parallel=loop is prange, fastmath=_FAST, cache=True)
    def _matmul_tiles(out, out_shape, out_strides, a, a_batch, a_row, b, b_batch, b_row, inner):  # type: ignore[no-untyped-def]
        """``out[n] = A[n] @ B[n]`` from k-major operands (unit stride along k).

        Row ``i`` of ``A[n]`` starts at ``n * a_batch + i * a_row`` in ``a``, column ``j`` of
        ``B[n]`` at ``n * b_batch + j * b_row`` in ``b``.
        """
        batches, rows, cols = out_shape[0], out_shape[1], out_shape[2]
        o_batch, o_row, o_col = out_strides[0], out_strides[1], out_strides[2]
        tiles_m = (rows + _TILE_M - 1) // _TILE_M
        tiles_n = (cols + _TILE_N - 1) // _TILE_N
        zeros = np.zeros(min(inner, _TILE_K), np.float64)
        for t in loop(batches * tiles_m * tiles_n):
            n = t // (tiles_m * tiles_n)
            i0 = ((t // tiles_n) % tiles_m) * _TILE_M
            j0 = (t % tiles_n) * _TILE_N
            mi = min(_TILE_M, rows - i0)
            nj = min(_TILE_N, cols - j0)
            a_base = n * a_batch + i0 * a_row
            b_base = n * b_batch + j0 * b_row
            # The tile's own size, rounded up to the 4 x 4 blocks: a narrow or short output
            # (a pooling product is 7 wide) zeroes and reads no more than it uses.
            acc = np.zeros(((mi + 3) // 4 * 4, (nj + 3) // 4 * 4), np.float64)
            for k0 in range(0, inner, _TILE_K):
                k1 = min(inner, k0 + _TILE_K)
                for i in range(0, mi, 4):
                    a0 = _k_row(a, a_base, a_row, i, mi, k0, k1, zeros)
                    a1 = _k_row(a, a_base, a_row, i + 1, mi, k0, k1, zeros)
                    a2 = _k_row(a, a_base, a_row, i + 2, mi, k0, k1, zeros)
                    a3 = _k_row(a, a_base, a_row, i + 3, mi, k0, k1, zeros)
                    for j in range(0, nj, 4):
                        b0 = _k_row(b, b_base, b_row, j, nj, k0, k1, zeros)
                        b1 = _k_row(b, b_base, b_row, j + 1, nj, k0, k1, zeros)
                        b2 = _k_row(b, b_base, b_row, j + 2, nj, k0, k1, zeros)
                        b3 = _k_row(b, b_base, b_row, j + 3, nj, k0, k1, zeros)
                        _dot_4x4(acc, i, j, a0, a1, a2, a3, b0, b1, b2, b3)
            o_base = n * o_batch + i0 * o_row + j0 * o_col
            for i in range(mi):
                for j in range(nj):
                    out[o_base + i * o_row + j * o_col] = acc[i, j]

    return _matmul_tiles


_MATMUL_TILES = twin(_build_matmul_tiles)


def _build_matmul_rows(loop: Any) -> Any:
    @njit(parallel=loop is prange, fastmath=_FAST, cache=True)
    def _matmul_rows(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
        """``out[n] = a[n or 0] @ b[n or 0]`` read in place, one output row per task.

        For short inner dimensions and small products, where packing and tiling cost more
        than the multiply-adds. When rows of ``b`` and ``out`` have unit stride, each output
        row is a sum of rows of ``b`` scaled by ``a[i, k]`` (a loop LLVM vectorises);
        otherwise each output element is one dot product over k.
        """
        batches, rows, cols = out_shape[0], out_shape[1], out_shape[2]
        inner = a_shape[2]
        a_b = a_strides[0] if a_shape[0] > 1 else 0
        b_b = b_strides[0] if b_shape[0] > 1 else 0
        a_i, a_k = a_strides[1], a_strides[2]
        b_k, b_j = b_strides[1], b_strides[2]
        o_b, o_i, o_j = out_strides[0], out_strides[1], out_strides[2]
        by_rows = b_j == 1 and o_j == 1 and cols >= 4
        for t in loop(batches * rows):
            n = t // rows
            i = t % rows
            a0 = n * a_b + i * a_i
            o0 = n * o_b + i * o_i
            if by_rows:
                row = out[o0 : o0 + cols]
                row[:] = 0.0
                b0 = n * b_b
                k = 0
                while k + 4 <= inner:  # four rows of b per pass over the output row
                    x0, x1 = a[a0 + k * a_k], a[a0 + (k + 1) * a_k]
                    x2, x3 = a[a0 + (k + 2) * a_k], a[a0 + (k + 3) * a_k]
                    r0 = b[b0 + k * b_k :]
                    r1 = b[b0 + (k + 1) * b_k :]
                    r2 = b[b0 + (k + 2) * b_k :]
                    r3 = b[b0 + (k + 3) * b_k :]
                    for j in range(cols):
                        row[j] += x0 * r0[j] + x1 * r1[j] + x2 * r2[j] + x3 * r3[j]
                    k += 4
                while k < inner:
                    x0, r0 = a[a0 + k * a_k], b[b0 + k * b_k :]
                    for j in range(cols):
                        row[j] += x0 * r0[j]
                    k += 1
            else:
                for j in range(cols):
                    b0 = n * b_b + j * b_j
                    acc = 0.0
                    for k in range(inner):
                        acc += a[a0 + k * a_k] * b[b0 + k * b_k]
                    out[o0 + j * o_j] = acc

    return _matmul_rows


_MATMUL_ROWS = twin(_build_matmul_rows)

_ROWS_MAX_INNER = 16
"""Inner dimensions up to this run ``_matmul_rows`` (packing would cost more than it saves)."""


def _k_major(
    x: Any, batches: int, count: int, inner: int, strides: tuple[int, int, int]
) -> tuple[Any, int, int]:
    """Return ``(storage, batch_stride, row_stride)`` of ``x`` with unit stride along k.

    ``strides`` are the batch, row and k strides of ``x`` viewed as ``batches`` stacks of
    ``count`` rows of length ``inner``; when the k stride is not 1 the rows are packed.
    """
    batch_stride, row_stride, k_stride = strides
    if batches == 1:
        batch_stride = 0
    if k_stride == 1 or inner == 1:
        return x, batch_stride, row_stride
    packed = np.empty(batches * count * inner, np.float64)
    run(
        _PACK_K_MAJOR,
        len(packed),
        packed,
        x,
        batches,
        count,
        inner,
        batch_stride,
        row_stride,
        k_stride,
    )
    return packed, (count * inner if batches > 1 else 0), inner


def matmul(
    out: Any,
    out_shape: Any,
    out_strides: Any,
    a: Any,
    a_shape: Any,
    a_strides: Any,
    b: Any,
    b_shape: Any,
    b_strides: Any,
) -> None:
    """``out[n] = a[n or 0] @ b[n or 0]`` over 3-D strided operands (batch size 1 broadcasts).

    Short inner dimensions and small products run ``_matmul_rows`` on the operands as they
    are. Otherwise an operand is packed when it is not k-major already, and the tiled
    kernel runs; on one thread when the product is small (see ``run``).
    """
    batches, rows, cols = out_shape.tolist()
    inner = int(a_shape[2])
    work = batches * rows * cols * inner
    if inner <= _ROWS_MAX_INNER or work < GRAIN:
        if b_strides[2] != 1 and out_strides[2] == 1 and cols >= 4 and rows > 1:
            # Rows of b with unit stride turn each output row into a sum of scaled rows
            # (vectorised); packing b costs one pass over it, shared by every output row.
            b_batches = int(b_shape[0])
            b, b_batch, _ = _k_major(
                b, b_batches, inner, cols, (b_strides[0], b_strides[1], b_strides[2])
            )
            b_strides = np.array((b_batch, cols, 1), np.int64)
        operands = (out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)
        run(_MATMUL_ROWS, work, *operands)
        return
    a_k, a_batch, a_row = _k_major(
        a, int(a_shape[0]), rows, inner, (a_strides[0], a_strides[1], a_strides[2])
    )
    # Columns of b are the rows of its transpose: column j starts at j * b_strides[2].
    b_k, b_batch, b_row = _k_major(
        b, int(b_shape[0]), cols, inner, (b_strides[0], b_strides[2], b_strides[1])
    )
    tasks = batches * -(-rows // _TILE_M) * -(-cols // _TILE_N)
    work = batches * rows * cols * inner // 8 if tasks > 1 else 0
    run(
        _MATMUL_TILES,
        work,
        *(out, out_shape, out_strides, a_k, a_batch, a_row, b_k, b_batch, b_row, inner),
    )


_register("matmul", _MATMUL_TILES)
_register("matmul.rows", _MATMUL_ROWS)
_register("matmul.pack", _PACK_K_MAJOR)
