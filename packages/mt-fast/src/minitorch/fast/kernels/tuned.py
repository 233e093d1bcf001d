"""The tuned kernels: what makes ``FastBackend`` fast (the default ``FastOps``).

A ``KernelModule`` (see ``kernels/__init__.py``), as ``plain`` is.

They compute what the course's kernels in ``plain`` compute, with fast paths: stride-aligned
map and zip without index arithmetic, glibc's vector ``exp`` for ``exp`` and ``sigmoid``
(``vecmath``), reductions unrolled into eight partial folds or split into blocks of whole
rows, and a packed, blocked matrix multiply whose inner loop is a vector-register
micro-kernel (``microkernel``). Every kernel takes
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

import ctypes
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from minitorch.operators import add
from minitorch.tensor import index_to_position, is_contiguous_layout

from .. import _cache, microkernel, vecmath
from ..microkernel import micro_kernel
from ..runtime import GRAIN, Kernel, jit_scalar, run, twin

__all__ = ["KERNELS", "PARALLEL", "make_map", "make_reduce", "make_zip", "matmul", "run"]

# The operators and the index helpers are compiled into the kernels: key the cache on
# the files that define them (found through the public functions, not private modules).
_cache.install(__file__, [*_cache.defining_modules(add, index_to_position), microkernel, vecmath])

KERNELS: dict[str, Any] = {}
"""Every kernel built so far, by name (``map[neg]``, ``matmul``): the serial twins, which
small work runs (see ``runtime.Kernel``), and the same-layout kernels of maps and zips
(``map[neg].same``), which small work whose operands share one layout runs."""
PARALLEL: dict[str, Any] = {}
"""The parallel twins of ``KERNELS``, by the same names, for Numba's parallel diagnostics."""


def _register(name: str, kernel: Kernel) -> Kernel:
    KERNELS[name] = kernel.serial
    PARALLEL[name] = kernel.parallel
    if kernel.same is not None:  # serial only: no parallel twin for the diagnostics
        KERNELS[f"{name}.same"] = kernel.same
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


@register_jitable
def _stride_along(d: int, out_shape: Any, shape: Any, strides: Any) -> Any:
    """A broadcast operand's stride along the output's dimension ``d`` (0 where it broadcasts)."""
    e = d - (len(out_shape) - len(shape))
    if e < 0 or shape[e] == 1:
        return np.int64(0)
    return np.int64(strides[e])


@register_jitable
def _run(
    out_shape: Any, out_strides: Any, a_shape: Any, a_strides: Any, b_shape: Any, b_strides: Any
) -> Any:
    """``(row, out_step, a_step, b_step)``: the output's trailing dimensions walked evenly.

    The output's last dimensions (size-1 ones skipped) whose elements lie ``step`` apart
    in each operand, row after row, are one run of ``row`` elements: ``(6272, 1) / (1,)``
    is one run of 6272, not 6272 runs of one, and ``(392, 64) * (1,)`` one of 25088; a
    broadcast operand's step is 0. The kernels find each run's start with ``_position``
    (divisions) and walk it, so long runs make that arithmetic rare. ``b_shape`` may
    repeat ``a_shape`` (a map has one operand).
    """
    row = np.int64(1)
    out_step = a_step = b_step = np.int64(0)
    for d in range(len(out_shape) - 1, -1, -1):
        n = out_shape[d]
        if n == 1:
            continue
        o = np.int64(out_strides[d])
        x = _stride_along(d, out_shape, a_shape, a_strides)
        y = _stride_along(d, out_shape, b_shape, b_strides)
        if row == 1:
            out_step, a_step, b_step = o, x, y
        elif o != out_step * row or x != a_step * row or y != b_step * row:
            break
        row *= n
    return row, out_step, a_step, b_step


def make_map(fn: Callable[[float], float]) -> Kernel:
    """Return the kernel pair ``out = fn(in)`` with ``in`` broadcast to ``out``.

    Operators with a vector form in ``vecmath.VECTOR_MAPS`` (``exp``, ``sigmoid``) use it
    on stride-aligned data, in runs of ``vecmath.CHUNK`` elements per parallel task.
    """
    fn = jit_scalar(fn)
    block = vecmath.VECTOR_MAPS.get(fn, vecmath.no_block)
    vector = block is not vecmath.no_block
    chunk = vecmath.CHUNK

    @njit(cache=True)
    def same(out, in_storage, shape, strides):  # type: ignore[no-untyped-def]
        # ``out`` and ``in`` share ``shape`` and ``strides``: one position for both.
        size = _size(shape)
        if is_contiguous_layout(shape, strides):
            if vector:
                for lo in range(0, size, chunk):
                    hi = min(size, lo + chunk)
                    block(out[lo:hi], in_storage[lo:hi], np.empty(chunk, np.float64))
            else:
                for i in range(size):
                    out[i] = fn(in_storage[i])
        else:
            for i in range(size):
                p = _position(i, shape, shape, strides)
                out[p] = fn(in_storage[p])

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
                # One parallel task per run of the output's trailing dimensions (``_run``).
                row, out_step, in_step, _ = _run(
                    out_shape, out_strides, in_shape, in_strides, in_shape, in_strides
                )
                for r in loop(size // row):
                    o = _position(r * row, out_shape, out_shape, out_strides)
                    j = _position(r * row, out_shape, in_shape, in_strides)
                    if out_step == 1 and in_step == 1:  # slices: a loop LLVM vectorises
                        dst, src = out[o : o + row], in_storage[j : j + row]
                        for k in range(row):
                            dst[k] = fn(src[k])
                    else:
                        for k in range(row):
                            out[o + k * out_step] = fn(in_storage[j + k * in_step])

        return kernel

    return _register(f"map[{fn.__name__}]", twin(build)._replace(same=same))


def make_zip(fn: Callable[[float, float], float]) -> Kernel:
    """Return the kernel pair ``out = fn(a, b)`` with ``a`` and ``b`` broadcast."""
    fn = jit_scalar(fn)

    @njit(cache=True)
    def same(out, a, b, shape, strides):  # type: ignore[no-untyped-def]
        # ``out``, ``a`` and ``b`` share ``shape`` and ``strides``: one position for all.
        size = _size(shape)
        if is_contiguous_layout(shape, strides):
            for i in range(size):
                out[i] = fn(a[i], b[i])
        else:
            for i in range(size):
                p = _position(i, shape, shape, strides)
                out[p] = fn(a[p], b[p])

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
                # One parallel task per run of the output's trailing dimensions (``_run``).
                row, out_step, a_step, b_step = _run(
                    out_shape, out_strides, a_shape, a_strides, b_shape, b_strides
                )
                for r in loop(size // row):
                    o = _position(r * row, out_shape, out_shape, out_strides)
                    ja = _position(r * row, out_shape, a_shape, a_strides)
                    jb = _position(r * row, out_shape, b_shape, b_strides)
                    if out_step == 1 and a_step == 1 and b_step == 1:  # slices: vectorised
                        dst, x, y = out[o : o + row], a[ja : ja + row], b[jb : jb + row]
                        for k in range(row):
                            dst[k] = fn(x[k], y[k])
                    else:
                        for k in range(row):
                            out[o + k * out_step] = fn(a[ja + k * a_step], b[jb + k * b_step])

        return kernel

    return _register(f"zip[{fn.__name__}]", twin(build)._replace(same=same))


_REDUCE_BLOCKS = 8


def make_reduce(fn: Callable[[float, float], float]) -> Kernel:
    """Return the kernel pair folding ``fn`` over dimension ``dim`` of ``a``.

    Reducing the last dimension, each output element folds a run of ``a``; over unit
    stride it keeps eight partial folds, so consecutive steps do not wait on each other
    and LLVM can vectorise them (Numba does not pass fast-math flags into parallel loop
    bodies, so it cannot reorder a single running fold). Reducing any other dimension of
    at most ``_REDUCE_BLOCKS``, each task folds the rows of one output row into it, in
    order; of a longer one, each parallel task folds a block of whole rows of ``a`` into a
    partial row (streaming memory in order), and the partials are combined in block order.
    ``fn`` must be associative (add, mul, max); the fold order is fixed, so results are
    deterministic.
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
                # Both row-major and folding the last dimension: output i folds the run at
                # i * n (no index arithmetic per output, which cost more than a short fold).
                flat = (
                    dim == nd - 1
                    and is_contiguous_layout(a_shape, a_strides)
                    and is_contiguous_layout(out_shape, out_strides)
                )
                for i in loop(size):
                    # The reduced dimension has size 1 in the output: index 0 in ``a``.
                    if flat:  # (a parallel loop's index is unsigned: int64 keeps o an int)
                        o = np.int64(i)
                        j = o * n
                    else:
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
            elif n <= _REDUCE_BLOCKS:
                # A few rows to fold (a pooling window's rows): each task folds them into its
                # output row in order, start first, which is what the blocks below compute
                # with one row each, without their buffer and second parallel loop.
                _, a_step = _last(a_shape, a_strides)
                for t in loop(size // row):
                    j = _position(t * row, out_shape, a_shape, a_strides)
                    o = _position(t * row, out_shape, out_shape, out_strides)
                    if a_step == 1 and out_step == 1:
                        mine = out[o : o + row]  # slices index without Numba's checks
                        first = a[j : j + row]
                        for c in range(row):
                            mine[c] = fn(start, first[c])
                        for k in range(1, n):
                            src = a[j + k * step : j + k * step + row]
                            for c in range(row):
                                mine[c] = fn(mine[c], src[c])
                    else:
                        for c in range(row):
                            acc = fn(start, a[j + c * a_step])
                            for k in range(1, n):
                                acc = fn(acc, a[j + k * step + c * a_step])
                            out[o + c * out_step] = acc
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


# Matrix multiply, as BLAS libraries do it (the "BLIS" loop nest). Both operands are packed
# into panels (``_PACK_PANELS``): A in panels of ``rows`` rows stored ``[k][rows]``, B in
# panels of ``cols`` columns stored ``[k][cols]``, zero-padded at the edges, so the inner loop
# reads both contiguously whatever their strides. The output is cut into blocks of
# ``_BLOCK_M x _BLOCK_N``, independent parallel tasks; within one, k runs in slices of
# ``_BLOCK_K`` (a 256 x 16 panel of B on AVX-512, 32 KiB, stays in L1 while the 72 x 256 block of A,
# 144 KiB, stays in L2), and each ``rows x cols`` piece of C is one call of
# ``microkernel.micro_kernel``, which keeps it in vector registers over the slice. With more
# than one slice the task sums its block of C in a buffer of its own (contiguous, in L2),
# stored into the output once at the end. Large packing buffers go on huge pages
# (``_buffer``).
_BLOCK_K = 256
_BLOCK_M_PANELS = 12  # 72 rows of A per task (six-row panels)
_TALL_BYTES = 16 << 20
"""Packed B larger than this (bytes) gets tasks of twice ``_BLOCK_M_PANELS`` panels.

Each task reads its columns of B once per slice of k, so B is read once per task down M.
While the packed B fits in L3 (8 MiB at 1024 x 1024) those reads are cheap and more, smaller
tasks share the threads out more evenly; beyond it (32 MiB at 2048, 128 MiB at 4096) they
come from memory, and tasks twice as tall (A's slice 288 KiB and C's block 295 KiB, still in
a 1 MiB L2) halve them. Measured on 2 cores (AVX-512): 2048 176 -> 190 GFLOP/s, 4096 175
-> 191; at 1024 tall tasks ran 196 against 201.
"""
_BLOCK_N = 256  # columns of B per task: a multiple of every block width (4, 8, 16)
_PACK_ROWS = 16  # steps of k per packing task of a B (row by row)
_PACK_RUN = 64  # steps of k per pass over a row (row by row)
_FAST = {"reassoc", "contract", "nsz"}  # reorder sums (to vectorise), keep NaN/inf semantics


@register_jitable
def _pack_groups(count, width, inner, k_stride):  # type: ignore[no-untyped-def]
    """Tasks per batch of ``_pack_task``: one per panel, or one per ``_PACK_ROWS`` steps of k."""
    if k_stride == 1:
        return (count + width - 1) // width
    return (inner + _PACK_ROWS - 1) // _PACK_ROWS


@register_jitable
def _pack_task(dst, src, t, count, inner, batch_stride, row_stride, k_stride, width):  # type: ignore[no-untyped-def]
    """Task ``t`` of packing ``src`` into panels of ``width`` rows, stored k-major.

    ``dst[((n * panels + p) * inner + k) * width + r] = src[n, p * width + r, k]``, zero
    for rows past ``count``; ``src[n, r, k]`` is
    ``src[n * batch_stride + r * row_stride + k * k_stride]``. Where rows have unit stride
    along k (a row-major A) a task fills one panel, reading its rows ``_PACK_RUN`` steps of
    k at a time (the piece of the panel they fill stays in L1). Otherwise (a row-major B,
    whose columns are the rows packed here) a task takes ``_PACK_ROWS`` steps of k across
    every panel: it reads whole rows of B, and the tasks are equal whatever the number of
    panels (tasks of whole panels left one thread a 256 x 256 B's four tasks of eight).
    """
    panels = (count + width - 1) // width
    groups = _pack_groups(count, width, inner, k_stride)
    n = t // groups
    if k_stride == 1:
        p = t % groups
        r0 = p * width
        live = min(width, count - r0)
        first = n * batch_stride + r0 * row_stride
        if width == 6 and live == 6:  # every block's rows (microkernel.ROWS): one pass
            d = (n * panels + p) * inner * width
            for k in range(inner):  # six loads, six contiguous stores: at a copy's pace
                dst[np.uint64(d)] = src[np.uint64(first + k)]
                dst[np.uint64(d + 1)] = src[np.uint64(first + row_stride + k)]
                dst[np.uint64(d + 2)] = src[np.uint64(first + 2 * row_stride + k)]
                dst[np.uint64(d + 3)] = src[np.uint64(first + 3 * row_stride + k)]
                dst[np.uint64(d + 4)] = src[np.uint64(first + 4 * row_stride + k)]
                dst[np.uint64(d + 5)] = src[np.uint64(first + 5 * row_stride + k)]
                d += 6
            return
        panel = dst[(n * panels + p) * inner * width : (n * panels + p + 1) * inner * width]
        for k0 in range(0, inner, _PACK_RUN):
            steps = min(_PACK_RUN, inner - k0)
            for r in range(width):
                column = panel[k0 * width + r :]  # slices index without checks
                if r < live:
                    row = src[first + r * row_stride + k0 :]
                    for k in range(steps):
                        column[k * width] = row[k]
                else:
                    for k in range(steps):
                        column[k * width] = 0.0
        return
    # Unsigned positions, no slices: a slice per piece of ``width`` doubles (and Numba's
    # fix-up of a negative index) cost more than the copy (a 256 x 256 B on one core:
    # 62 us, against 34 us so and 16 us for a plain copy of it).
    k0 = (t % groups) * _PACK_ROWS
    span = inner * width
    whole = count // width if row_stride == 1 else 0  # panels copied as runs of ``width``
    for k in range(k0, min(inner, k0 + _PACK_ROWS)):
        s = n * batch_stride + k * k_stride
        d = (n * panels * inner + k) * width
        for p in range(whole):
            run = s + p * width
            for r in range(width):
                dst[np.uint64(d + r)] = src[np.uint64(run + r)]
            d += span
        for p in range(whole, panels):
            r0 = p * width
            live = min(width, count - r0)
            for r in range(live):
                dst[np.uint64(d + r)] = src[np.uint64(s + (r0 + r) * row_stride)]
            for r in range(live, width):
                dst[np.uint64(d + r)] = 0.0
            d += span


def _build_pack(loop: Any) -> Any:
    @njit(parallel=loop is prange, cache=True)
    def _pack_panels(dst, src, batches, count, inner, batch_stride, row_stride, k_stride, width):  # type: ignore[no-untyped-def]
        """Pack ``src`` into panels of ``width`` rows, each stored k-major (``_pack_task``)."""
        for t in loop(batches * _pack_groups(count, width, inner, k_stride)):
            _pack_task(dst, src, t, count, inner, batch_stride, row_stride, k_stride, width)

    return _pack_panels


_PACK_PANELS = twin(_build_pack)


def _build_matmul_blocked(shape: microkernel.Shape) -> Callable[[Any], Any]:
    """The blocked kernel's builder for ``twin``, with ``shape``'s block baked in."""
    rows, lanes, vecs = shape
    cols = shape.cols

    def build(loop: Any) -> Any:
        @njit(parallel=loop is prange, cache=True)
        def _matmul_blocked(  # type: ignore[no-untyped-def]
            out, out_shape, out_strides, a, a_batch, b, b_batch, inner, tall,
            x, x_n, x_s, y, y_n, y_s,
        ):  # fmt: skip
            """``out[n] = X[n] @ Y[n]``: pack both operands into panels, then multiply them.

            First every task of packing X into ``a`` (panels of ``rows`` rows, the panels
            of batch ``n`` at ``n * a_batch``) and Y's columns into ``b`` (panels of
            ``cols`` columns, at ``n * b_batch``) runs, as ``_pack_panels`` would (one
            launch for both operands, not one each); then the blocked product, a task per
            block of at most ``tall`` panels of A by ``_BLOCK_N`` columns. ``x_n``, ``y_n``
            are the operands' batch sizes and ``x_s``, ``y_s`` their (batch, row, k)
            strides: Y's "rows" are its columns.
            """
            batches, m, n = out_shape[0], out_shape[1], out_shape[2]
            x_tasks = x_n * _pack_groups(m, rows, inner, x_s[2])
            y_tasks = y_n * _pack_groups(n, cols, inner, y_s[2])
            # X's and Y's tasks spread evenly over the loop (the threads split it into
            # equal ranges, so each range gets its share of each kind: one after the
            # other, or in turns while both last, one thread got most of the larger ones).
            # Task t is X's when the count of X's tasks before t + 1 steps up.
            total = x_tasks + y_tasks
            for t in loop(total):
                before = t * x_tasks // total  # X's tasks among the first t
                on_x = (t + 1) * x_tasks // total > before
                u = before if on_x else t - before
                if on_x:
                    _pack_task(a, x, u, m, inner, x_s[0], x_s[1], x_s[2], rows)
                else:
                    _pack_task(b, y, u, n, inner, y_s[0], y_s[1], y_s[2], cols)
            o_b, o_i, o_j = out_strides[0], out_strides[1], out_strides[2]
            # Tasks of at most ``tall`` panels by ``_BLOCK_N`` columns, the
            # panels shared out evenly between them (1024 rows are 15 tasks of 11 or 12
            # panels, not 14 of 12 and one of 3: the threads split the tasks, not the
            # work, so equal tasks keep them equal).
            panels_m = (m + rows - 1) // rows
            panels_n = (n + cols - 1) // cols
            tiles_m = (panels_m + tall - 1) // tall
            tiles_n = (n + _BLOCK_N - 1) // _BLOCK_N
            for t in loop(batches * tiles_m * tiles_n):
                nb = t // (tiles_m * tiles_n)
                tm = (t // tiles_n) % tiles_m
                tn = t % tiles_n
                p0 = tm * panels_m // tiles_m
                down = (tm + 1) * panels_m // tiles_m - p0  # pieces of C down the task
                i0 = p0 * rows
                p0 = tn * panels_n // tiles_n
                across = (tn + 1) * panels_n // tiles_n - p0
                j0 = p0 * cols
                # More than one slice of k: the task's block of C is summed in a buffer of
                # its own, then stored once. In place, its rows are ``o_i`` apart: 4096
                # doubles (32 KiB) put every row's line in the same two sets of L2, which
                # then holds 32 of the 72 rows and fetches the block again for each slice.
                staged = inner > _BLOCK_K or o_j != 1
                width = across * cols
                block = np.empty((down * rows * width) if staged else rows * cols, np.float64)
                for k0 in range(0, max(inner, 1), _BLOCK_K):  # k = 0: one pass of zeros
                    depth = min(_BLOCK_K, inner - k0)
                    more = k0 > 0  # carry on the sums of the earlier slices of k
                    for q in range(across * down):  # a panel of B meets every panel of A
                        di, dj = (q % down) * rows, (q // down) * cols
                        i, j = i0 + di, j0 + dj
                        a_at = nb * a_batch + ((i // rows) * inner + k0) * rows
                        b_at = nb * b_batch + ((j // cols) * inner + k0) * cols
                        if staged:
                            at = di * width + dj
                            micro_kernel(
                                depth, a, a_at, b, b_at, block, at, width, more, rows, lanes, vecs
                            )
                            continue
                        mi, nj = min(rows, m - i), min(cols, n - j)
                        o = nb * o_b + i * o_i + j
                        if mi == rows and nj == cols:  # in place
                            micro_kernel(
                                depth, a, a_at, b, b_at, out, o, o_i, False, rows, lanes, vecs
                            )
                            continue
                        micro_kernel(
                            depth, a, a_at, b, b_at, block, 0, cols, False, rows, lanes, vecs
                        )
                        for r in range(mi):
                            for s in range(nj):
                                out[o + r * o_i + s] = block[r * cols + s]
                if staged:
                    mi, nj = min(down * rows, m - i0), min(width, n - j0)
                    for r in range(mi):
                        o = nb * o_b + (i0 + r) * o_i + j0 * o_j
                        line = block[r * width : r * width + nj]
                        for s in range(nj):
                            out[o + s * o_j] = line[s]

        return _matmul_blocked

    return build


_BLOCKED: dict[microkernel.Shape, Kernel] = {}


def _blocked(shape: microkernel.Shape) -> Kernel:
    """The blocked kernel pair for ``shape`` (built once per shape; compiled on first call)."""
    if shape not in _BLOCKED:
        _BLOCKED[shape] = twin(_build_matmul_blocked(shape))
    return _BLOCKED[shape]


SHAPE = microkernel.shape()
"""The register block of this CPU (``microkernel.shape``), chosen when this module loads."""


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


_WORKSPACE = threading.local()
_WORKSPACE_KEEP = 1 << 22
"""Packing buffers up to this many doubles (32 MiB) are kept for the next product."""


_HUGE = 1 << 21
"""Bytes in a huge page (x86-64 and arm64 Linux): buffers of two or more are advised to use them."""


def _madvise() -> Any:
    """The C library's ``madvise`` on Linux, else None (no huge pages are asked for elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    function.restype = ctypes.c_int
    return function


_MADVISE = _madvise()
_MADV_HUGEPAGE = 14  # <linux/mman.h>


def _buffer(size: int) -> Any:
    """An uninitialised float64 buffer of ``size``, on huge pages where Linux grants them.

    The packed panels of a 4096 x 4096 product are two buffers of 128 MiB, written once.
    On 4 KiB pages that is 65,536 page faults (each one a trap and a zeroed page): measured
    on 2 cores, packing took 90-190 ms of a 900 ms product, 17-22 ms on 2 MiB pages, which
    also take the kernel's reads of the panels off the TLB's critical path. With
    ``transparent_hugepage`` set to ``madvise`` (a common default) a range gets huge pages
    only when asked (``MADV_HUGEPAGE``), before it is first touched; ``never`` ignores the
    advice, and so do other systems (the buffer is then an ordinary one).
    """
    if _MADVISE is None or size * 8 < 2 * _HUGE:
        return np.empty(size, np.float64)
    raw = np.empty(size + _HUGE // 8, np.float64)  # room to start on a 2 MiB boundary
    skip = (-raw.ctypes.data % _HUGE) // 8
    buffer = raw[skip : skip + size]
    _MADVISE(buffer.ctypes.data, size * 8 // _HUGE * _HUGE, _MADV_HUGEPAGE)  # advice only
    return buffer


def _workspace(slot: int, size: int) -> Any:
    """A float64 buffer of ``size`` for packing operand ``slot``, reused between products.

    Fresh memory costs the kernel a page fault for each 4 KiB it first writes: packing the
    two operands of a 1024 x 1024 product into new arrays took several milliseconds more
    than into used ones, a tenth of the product. So this thread keeps its last buffer for
    each slot (0: A, 1: B) up to ``_WORKSPACE_KEEP`` doubles, as BLAS libraries keep theirs;
    larger products allocate (their multiply-adds outweigh the faults). One per thread: two
    Python threads multiplying at once never share one.
    """
    if size > _WORKSPACE_KEEP:
        return _buffer(size)
    buffers = getattr(_WORKSPACE, "buffers", None)
    if buffers is None:
        buffers = _WORKSPACE.buffers = [np.empty(0, np.float64), np.empty(0, np.float64)]
    if len(buffers[slot]) < size:
        buffers[slot] = _buffer(size)
    return buffers[slot][:size]


def _panels(
    x: Any,
    batches: int,
    count: int,
    inner: int,
    strides: tuple[int, int, int],
    width: int,
    slot: int,
) -> tuple[Any, int]:
    """Pack ``x`` into panels of ``width`` rows (``_pack_panels``); return them, batch stride.

    ``strides`` are the batch, row and k strides of ``x`` viewed as ``batches`` stacks of
    ``count`` rows of length ``inner``. A single stack has batch stride 0 (it broadcasts).
    The panels are written into this thread's workspace ``slot`` (``_workspace``): they are
    valid until the next product packs into it.
    """
    batch_stride, row_stride, k_stride = strides
    size = -(-count // width) * inner * width
    packed = _workspace(slot, batches * size)
    args = (packed, x, batches, count, inner, batch_stride, row_stride, k_stride, width)
    run(_PACK_PANELS, len(packed), *args)
    return packed, (size if batches > 1 else 0)


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
    block: microkernel.Shape | None = None,
) -> None:
    """``out[n] = a[n or 0] @ b[n or 0]`` over 3-D strided operands (batch size 1 broadcasts).

    Short inner dimensions and small products run ``_matmul_rows`` on the operands as they
    are. Otherwise both operands are packed into panels and the blocked kernel runs its
    register-blocked micro-kernel; on one thread when the product is small (see ``run``).
    ``block`` picks another register block than this CPU's ``SHAPE`` (the tests run the
    blocks of other machines with it).
    """
    batches, rows, cols = out_shape.tolist()
    inner = int(a_shape[2])
    work = batches * rows * cols * inner
    if block is None and (inner <= _ROWS_MAX_INNER or work < GRAIN):
        if b_strides[2] != 1 and out_strides[2] == 1 and cols >= 4 and rows > 1:
            # Rows of b with unit stride turn each output row into a sum of scaled rows
            # (vectorised); packing b costs one pass over it, shared by every output row.
            # One panel as wide as b: b[n, k, j] at (n * inner + k) * cols + j.
            strides = (b_strides[0], b_strides[2], b_strides[1])
            b, b_batch = _panels(b, int(b_shape[0]), cols, inner, strides, cols, 1)
            b_strides = np.array((b_batch, cols, 1), np.int64)
        operands = (out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)
        run(_MATMUL_ROWS, work, *operands)
        return
    shape = SHAPE if block is None else block
    a_n, b_n = int(a_shape[0]), int(b_shape[0])
    a_size = -(-rows // shape.rows) * inner * shape.rows
    b_size = -(-cols // shape.cols) * inner * shape.cols
    a_p, b_p = _workspace(0, a_n * a_size), _workspace(1, b_n * b_size)
    # Columns of b are the rows of its transpose: column j starts at j * b_strides[2].
    b_strides3 = np.array((b_strides[0], b_strides[2], b_strides[1]), np.int64)
    tall = _BLOCK_M_PANELS * (2 if len(b_p) * 8 > _TALL_BYTES else 1)
    tasks = batches * -(-rows // (tall * shape.rows)) * -(-cols // _BLOCK_N)
    work = batches * rows * cols * inner // 8 if tasks > 1 else 0
    panels = (a_p, a_size if a_n > 1 else 0, b_p, b_size if b_n > 1 else 0, inner, tall)
    sources = (a, a_n, a_strides, b, b_n, b_strides3)
    run(_blocked(shape), work, out, out_shape, out_strides, *panels, *sources)


_register("matmul", _blocked(SHAPE))
_register("matmul.rows", _MATMUL_ROWS)
_register("matmul.pack", _PACK_PANELS)
