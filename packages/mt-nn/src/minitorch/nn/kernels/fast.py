"""The convolution kernels of ``FastBackend``: parallel Numba, on register-blocked loops.

A ``ConvKernels`` module (see ``kernels/__init__.py``). They compute what ``simple``
computes (read that first; the formulas are there), with
the same two functions ``conv_forward`` and ``conv_weight_grad`` over flat storages. The
loops are arranged for speed:

Both kernels first copy the input into zero-padded planes of ``hp x wp = (height + kh - 1)
x (width + kw - 1)``, one long row per channel holding the whole batch: position
``p = (b * hp + y) * wp + x``. Then the input that output ``(b, y, x)`` meets through tap
``(i, j)`` is at ``p + offset(i, j)`` for *every* output position, and a convolution is a sum
of shifted flat runs, ``out[p] += w * padded[p + offset]``: unit-stride loops over the
whole batch (padding rows and columns are computed and dropped).

- ``conv_forward``: a matrix product ``out[o, p] = sum_t w[o, t] * padded[p + offset[t]]``
  over the taps ``t = (c, i, j)``, whose right operand is read in place: mt-fast's
  ``shifted_micro_kernel`` holds a block of ``ROWS`` output channels by two vectors of
  positions in vector registers over every tap (each step broadcasts ``ROWS`` weights
  against two runs of the input: eight fused multiply-adds for two loads on AVX2, where
  a sum of shifted runs into an accumulator in memory loads and stores it for every few
  taps). One parallel task per block of channels and chunk of about ``CHUNK`` positions.
- ``conv_weight_grad``: one parallel task per block of ``ROWS`` output channels and input
  channel ``c``: each weight's gradient is the dot product of the (zero-padded) output
  gradient's run with the input's run shifted by the tap's offset, for ``ROWS`` channels
  and two taps per pass (eight sums, six loads per step).

Runs are taken as slices (``padded[start:]``) before the loop: indexing ``padded[start + k]``
directly makes Numba check for negative indices, which stops the loop from vectorising
(about 8x slower). The micro-kernel is mt-fast's, so this module's cache is keyed on its
source too (``cache_kernels_of``). They are launched with mt-fast's ``run_kernel`` (one
thread for small work).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from minitorch.fast import cache_kernels_of, micro_kernel_shape, run_kernel, shifted_micro_kernel

from . import PoolSizes, Sizes

__all__ = [
    "CHUNK",
    "ROWS",
    "avgpool_backward",
    "avgpool_forward",
    "conv_forward",
    "conv_weight_grad",
]

cache_kernels_of(__file__, [sys.modules[micro_kernel_shape.__module__]])

CHUNK = 1024
"""Positions per task of the forward kernel (its block of ``ROWS`` outputs, 32 KB, in L1)."""

ROWS = 4
"""Output channels per block of both kernels (LeNet's layers have 4 and 8)."""

_GRAD_CHUNK = 2048
"""Positions per piece of the weight gradient's runs (five runs of 16 KB, in L2 cache)."""

_GRAD_TASKS = 8
"""Tasks the weight gradient aims for when it has fewer channel pairs (positions split)."""

_VECTORS = 2
_LANES = micro_kernel_shape().lanes
_COLS = _LANES * _VECTORS  # positions per block of the forward kernel

# Scales a convolution's multiply-adds to mt-fast's unit of work (elements of a map), which
# decides when a kernel is worth the thread pool: one vectorised multiply-add costs far
# less than one element of a strided map.
_FLOPS_PER_ELEMENT = 4


def _work(sizes: Sizes) -> int:
    batch, in_ch, height, width, out_ch, kh, kw = sizes
    return batch * out_ch * height * width * in_ch * kh * kw // _FLOPS_PER_ELEMENT


def conv_forward(
    out: Any,
    inp: Any,
    weight: Any,
    weight_strides: tuple[int, int, int, int],
    bias: Any,
    sizes: Sizes,
    reverse: bool,
) -> None:
    """Write ``bias[o] + conv(inp[b], weight[o])`` into ``out`` (see ``simple``)."""
    batch, in_ch, height, width, out_ch, kh, kw = sizes
    run_kernel(
        _forward_kernel, _work(sizes), out, inp, weight, bias,
        batch, in_ch, out_ch, height, width, kh, kw, *weight_strides, bool(reverse),
    )  # fmt: skip


def conv_weight_grad(
    grad_weight: Any, grad_out: Any, inp: Any, sizes: Sizes, reverse: bool
) -> None:
    """Write the weight's gradient into ``grad_weight`` (see ``simple``)."""
    batch, in_ch, height, width, out_ch, kh, kw = sizes
    run_kernel(
        _weight_grad_kernel, _work(sizes), grad_weight, grad_out, inp,
        batch, in_ch, out_ch, height, width, kh, kw, bool(reverse),
    )  # fmt: skip


@register_jitable
def _copy_run(dst, d, src, s, count):  # type: ignore[no-untyped-def]
    """``dst[d : d + count] = src[s : s + count]`` for short runs (an image row).

    Unsigned indices: Numba then skips the negative-index fix-up that a signed index gets.
    A slice assignment per row cost more than the copy itself: padding the input and the
    output gradient of LeNet's second convolution (batch 16) took 105-145 µs with slices,
    about 49 µs with this loop.
    """
    for k in range(count):
        dst[np.uint64(d + k)] = src[np.uint64(s + k)]


@register_jitable
def _pad_image(out, src, channels, c, b, height, width, top, left, hp, wp):  # type: ignore[no-untyped-def]
    """Write image ``b``'s channel ``c`` of ``src``, zero padded, into its ``hp`` rows of ``out``.

    ``out`` is the channel's long row: row ``y`` of the image lands at ``(b * hp + y +
    top) * wp + left``; every other position of its rows ``b * hp ... (b + 1) * hp - 1`` is
    written zero (so ``out`` need not be zeroed first: one pass over it, not two).
    """
    for r in range(hp):
        d = (b * hp + r) * wp
        y = r - top
        if y < 0 or y >= height:
            for k in range(wp):
                out[np.uint64(d + k)] = 0.0
            continue
        for k in range(left):
            out[np.uint64(d + k)] = 0.0
        _copy_run(out, d + left, src, ((b * channels + c) * height + y) * width, width)
        for k in range(left + width, wp):
            out[np.uint64(d + k)] = 0.0


@register_jitable
def _pad_task(out, src, t, batch, channels, height, width, top, left, hp, wp, row_len):  # type: ignore[no-untyped-def]
    """Task ``t`` (of ``channels * batch``) of padding every channel of ``src`` into ``out``.

    Channel ``c`` becomes one zero-padded long row of ``row_len`` at ``c * row_len``, its
    positions past the batch's planes zero; task ``t`` writes image ``t % batch`` of
    channel ``t // batch`` (and, for the last image, that tail).
    """
    c, b = t // batch, t % batch
    row = out[c * row_len : (c + 1) * row_len]
    _pad_image(row, src, channels, c, b, height, width, top, left, hp, wp)
    if b == batch - 1:
        for k in range(batch * hp * wp, row_len):
            row[np.uint64(k)] = 0.0


@register_jitable
def _tap_offsets(kh, kw, wp, reverse):  # type: ignore[no-untyped-def]
    """Distance from an output position to its input through each tap ``(i, j)``.

    Anchored at the top left (input at the plane's corner) it is ``i`` rows and ``j``
    columns on; anchored at the bottom right (input shifted by ``kh - 1, kw - 1``),
    ``kh - 1 - i`` rows and ``kw - 1 - j`` columns.
    """
    offsets = np.empty(kh * kw, np.int64)
    for i in range(kh):
        for j in range(kw):
            di = kh - 1 - i if reverse else i
            dj = kw - 1 - j if reverse else j
            offsets[i * kw + j] = di * wp + dj
    return offsets


@njit(parallel=True, cache=True)
def _forward_kernel(  # type: ignore[no-untyped-def]
    out, inp, w, bias, batch, in_ch, out_ch, height, width, kh, kw, ws0, ws1, ws2, ws3, reverse
):
    """``out[b, o] = bias[o] + conv(in[b, :], w[o, :])``, zero padded, anchored by ``reverse``.

    ``out`` is ``(batch, out_ch, height, width)`` and ``inp`` ``(batch, in_ch, height,
    width)``, both contiguous; ``w`` is ``(out_ch, in_ch, kh, kw)`` with strides ``ws*``;
    ``bias`` has ``out_ch`` values.
    """
    hp, wp = height + kh - 1, width + kw - 1
    top, left = (kh - 1, kw - 1) if reverse else (0, 0)
    rows = batch * hp
    # Positions computed: whole blocks of ``_COLS``. One row per input channel, with room
    # for the furthest tap past the last of them.
    span = (rows * wp + _COLS - 1) // _COLS * _COLS
    row_len = span + (kh - 1) * wp + kw - 1
    padded = np.empty(in_ch * row_len, np.float64)
    for t in prange(in_ch * batch):
        _pad_task(padded, inp, t, batch, in_ch, height, width, top, left, hp, wp, row_len)
    taps = in_ch * kh * kw
    offsets = np.empty(taps, np.int64)
    plane_offsets = _tap_offsets(kh, kw, wp, reverse)
    for c in range(in_ch):
        for k in range(kh * kw):
            offsets[c * kh * kw + k] = c * row_len + plane_offsets[k]
    # The weights of each block of ``ROWS`` channels, stored [tap][channel] (zero past
    # ``out_ch``): the left operand of the micro-kernel.
    blocks = (out_ch + ROWS - 1) // ROWS
    weights = np.zeros(blocks * taps * ROWS, np.float64)
    for o in range(out_ch):
        for c in range(in_ch):
            for i in range(kh):
                for j in range(kw):
                    t = (c * kh + i) * kw + j
                    at = ((o // ROWS) * taps + t) * ROWS + o % ROWS
                    weights[at] = w[o * ws0 + c * ws1 + i * ws2 + j * ws3]
    chunk = max(_COLS, CHUNK // _COLS * _COLS)
    chunks = (span + chunk - 1) // chunk
    for task in prange(blocks * chunks):
        block = task // chunks
        p0 = (task % chunks) * chunk
        p1 = min(span, p0 + chunk)
        acc = np.empty(ROWS * chunk, np.float64)  # [channel][position in the chunk]
        for q in range(0, p1 - p0, _COLS):
            shifted_micro_kernel(
                taps, weights, block * taps * ROWS, padded, p0 + q, offsets,
                acc, q, chunk, False, ROWS, _LANES, _VECTORS,
            )  # fmt: skip
        for r in range(p0 // wp, min(rows, (p1 - 1) // wp + 1)):  # real outputs, plus bias
            y = r % hp
            x0, x1 = max(0, p0 - r * wp), min(width, p1 - r * wp)
            if y >= height or x0 >= x1:
                continue
            for i in range(min(ROWS, out_ch - block * ROWS)):
                o = block * ROWS + i
                dst = (((r // hp) * out_ch + o) * height + y) * width
                src = i * chunk + r * wp - p0
                b = bias[o]
                for x in range(x0, x1):
                    out[np.uint64(dst + x)] = acc[np.uint64(src + x)] + b


@register_jitable(fastmath={"contract", "reassoc"})
def _dots(g0, g1, g2, g3, p0, p1, count):  # type: ignore[no-untyped-def]
    """The eight dot products of four channels' runs ``g*`` with two runs ``p0``, ``p1``.

    A function of its own: LLVM vectorises its loop (eight vector sums) when it is
    compiled alone, not when written inline in the kernel's task loop.
    """
    a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = 0.0
    for k in range(count):
        x, z = p0[k], p1[k]
        a0 += g0[k] * x
        a1 += g1[k] * x
        a2 += g2[k] * x
        a3 += g3[k] * x
        b0 += g0[k] * z
        b1 += g1[k] * z
        b2 += g2[k] * z
        b3 += g3[k] * z
    return a0, a1, a2, a3, b0, b1, b2, b3


@register_jitable(fastmath={"contract", "reassoc"})
def _dot(g, p, count):  # type: ignore[no-untyped-def]
    """``sum(g[:count] * p[:count])``."""
    a = 0.0
    for k in range(count):
        a += g[k] * p[k]
    return a


@njit(parallel=True, cache=True)
def _weight_grad_kernel(  # type: ignore[no-untyped-def]
    gw, gout, inp, batch, in_ch, out_ch, height, width, kh, kw, reverse
):
    """``gw[o, c, i, j] = sum_{b, y, x} gout[b, o, y, x] * in[b, c, y +- i, x +- j]``.

    ``gw`` is contiguous ``(out_ch, in_ch, kh, kw)``; ``gout`` is ``(batch, out_ch, height,
    width)`` and ``inp`` ``(batch, in_ch, height, width)``, both contiguous. The sign is
    ``-`` for ``reverse``, matching ``_forward_kernel``. ``gout`` is laid out like the padded
    input, with zeros at the padding positions, so they add nothing to the dot products.
    A task takes the runs ``_GRAD_CHUNK`` positions at a time, every tap of each piece
    while it is in cache (a whole run of LeNet's batch of 16 is 115 KB: four channels'
    and the input's did not fit in L2, and were read again from L3 for every tap).
    """
    hp, wp = height + kh - 1, width + kw - 1
    top, left = (kh - 1, kw - 1) if reverse else (0, 0)
    n = batch * hp * wp
    row_len = n + (kh - 1) * wp + kw - 1
    padded = np.empty(in_ch * row_len, np.float64)
    grad = np.empty(out_ch * n, np.float64)
    for t in prange((in_ch + out_ch) * batch):
        if t < in_ch * batch:
            _pad_task(padded, inp, t, batch, in_ch, height, width, top, left, hp, wp, row_len)
        else:
            u = t - in_ch * batch
            _pad_task(grad, gout, u, batch, out_ch, height, width, 0, 0, hp, wp, n)
    taps = kh * kw
    offsets = _tap_offsets(kh, kw, wp, reverse)
    blocks = (out_ch + ROWS - 1) // ROWS
    pairs = blocks * in_ch
    # Few channel pairs (LeNet's first layer has one block and one channel) split the
    # positions into parts too, so both threads work: at least ``_GRAD_TASKS`` tasks where
    # there are chunks enough. Parts add up in order after the loop, so the result does
    # not depend on how many threads ran them.
    chunks = (n + _GRAD_CHUNK - 1) // _GRAD_CHUNK
    parts = max(1, min(chunks, (_GRAD_TASKS + pairs - 1) // pairs))
    per = (chunks + parts - 1) // parts * _GRAD_CHUNK  # positions per part
    partial = np.empty(pairs * parts * ROWS * taps, np.float64)
    for task in prange(pairs * parts):
        pair, part = task // parts, task % parts
        o0 = (pair // in_ch) * ROWS
        live = min(ROWS, out_ch - o0)
        c = pair % in_ch
        sums = partial[task * ROWS * taps : (task + 1) * ROWS * taps]  # [channel][tap]
        sums[:] = 0.0
        for k0 in range(part * per, min(n, (part + 1) * per), _GRAD_CHUNK):
            count = min(_GRAD_CHUNK, n - k0)
            row = c * row_len + k0
            if live == ROWS:  # four channels, two taps per pass: eight sums
                g0 = grad[o0 * n + k0 :]
                g1 = grad[(o0 + 1) * n + k0 :]
                g2 = grad[(o0 + 2) * n + k0 :]
                g3 = grad[(o0 + 3) * n + k0 :]
                for q in range(0, taps, 2):
                    r = min(q + 1, taps - 1)  # q + 1, or q again past the last tap
                    d = _dots(g0, g1, g2, g3, padded[row + offsets[q] :],
                              padded[row + offsets[r] :], count)  # fmt: skip
                    for i in range(ROWS):
                        sums[i * taps + q] += d[i]
                    if r > q:
                        for i in range(ROWS):
                            sums[i * taps + r] += d[ROWS + i]
                continue
            for i in range(live):  # the last, partial block: a channel at a time
                g = grad[(o0 + i) * n + k0 :]
                for q in range(taps):
                    sums[i * taps + q] += _dot(g, padded[row + offsets[q] :], count)
    for pair in range(pairs):
        o0, c = (pair // in_ch) * ROWS, pair % in_ch
        for i in range(min(ROWS, out_ch - o0)):
            for q in range(taps):
                total = 0.0
                for part in range(parts):
                    total += partial[((pair * parts + part) * ROWS + i) * taps + q]
                gw[((o0 + i) * in_ch + c) * taps + q] = total


def avgpool_forward(out: Any, inp: Any, sizes: PoolSizes) -> None:
    """Write each ``kh x kw`` window's mean of ``inp`` into ``out`` (``conv.PoolKernels``)."""
    planes, height, width, kh, kw = sizes
    run_kernel(_avgpool_kernel, planes * height * width, out, inp, planes, height, width, kh, kw)


def avgpool_backward(grad_input: Any, grad_out: Any, sizes: PoolSizes) -> None:
    """Write each window's gradient over ``kh * kw`` into its inputs (``conv.PoolKernels``)."""
    planes, height, width, kh, kw = sizes
    run_kernel(
        _avgpool_grad_kernel, planes * height * width,
        grad_input, grad_out, planes, height, width, kh, kw,
    )  # fmt: skip


_POOL_CHUNK = 512
"""Windows per task of the pooling kernels."""


@register_jitable
def _window(w, nw, kh, kw, width):  # type: ignore[no-untyped-def]
    """The position of window ``w``'s first value: its band's start plus its column's."""
    return np.uint64((w // nw) * kh * width + (w % nw) * kw)


@njit(parallel=True, cache=True)
def _avgpool_kernel(out, inp, planes, height, width, kh, kw):  # type: ignore[no-untyped-def]
    """``out[p, y, x] = sum(inp[p, y*kh : (y+1)*kh, x*kw : (x+1)*kw]) / (kh * kw)``.

    A window's values are added row by row from 0, then the sum is divided, as PyTorch's
    CPU kernel does: the same bits, an overflowing sum is ``inf`` as there, and an ``inf``
    or NaN stays in its own window. Windows are numbered in the output's order; four at a
    time are summed side by side (one window's sum is a chain of ``kh * kw`` dependent
    additions, each waiting for the last), ``_POOL_CHUNK`` windows per task.
    """
    nw = width // kw
    windows = planes * (height // kh) * nw
    count = float(kh * kw)
    for task in prange((windows + _POOL_CHUNK - 1) // _POOL_CHUNK):
        w = task * _POOL_CHUNK
        end = min(windows, w + _POOL_CHUNK)
        while w + 4 <= end:
            p0, p1 = _window(w, nw, kh, kw, width), _window(w + 1, nw, kh, kw, width)
            p2, p3 = _window(w + 2, nw, kh, kw, width), _window(w + 3, nw, kh, kw, width)
            t0 = t1 = t2 = t3 = 0.0
            for i in range(kh):
                for j in range(kw):
                    d = np.uint64(i * width + j)
                    t0 += inp[p0 + d]
                    t1 += inp[p1 + d]
                    t2 += inp[p2 + d]
                    t3 += inp[p3 + d]
            out[w], out[w + 1], out[w + 2], out[w + 3] = (
                t0 / count,
                t1 / count,
                t2 / count,
                t3 / count,
            )
            w += 4
        while w < end:
            p0 = _window(w, nw, kh, kw, width)
            t0 = 0.0
            for i in range(kh):
                for j in range(kw):
                    t0 += inp[p0 + np.uint64(i * width + j)]
            out[w] = t0 / count
            w += 1


@njit(parallel=True, cache=True)
def _avgpool_grad_kernel(grad_input, grad_out, planes, height, width, kh, kw):  # type: ignore[no-untyped-def]
    """``grad_input[p, y, x] = grad_out[p, y // kh, x // kw] / (kh * kw)``.

    Each window's share is computed once and written to its ``kh x kw`` values: every
    input value is written once, and nothing is read but the gradient. Windows are taken
    ``_POOL_CHUNK`` per task, as in the forward kernel.
    """
    nw = width // kw
    windows = planes * (height // kh) * nw
    count = float(kh * kw)
    for task in prange((windows + _POOL_CHUNK - 1) // _POOL_CHUNK):
        for w in range(task * _POOL_CHUNK, min(windows, (task + 1) * _POOL_CHUNK)):
            share = grad_out[w] / count
            p = _window(w, nw, kh, kw, width)
            for i in range(kh):
                row = p + np.uint64(i * width)
                for j in range(kw):
                    grad_input[row + np.uint64(j)] = share
