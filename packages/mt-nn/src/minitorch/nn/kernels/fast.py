"""The convolution kernels of ``FastBackend``: parallel Numba, vectorised by LLVM.

A ``ConvKernels`` module (see ``kernels/__init__.py``). They compute what ``simple``
computes (read that first; the formulas are there), with
the same two functions ``conv_forward`` and ``conv_weight_grad`` over flat storages. The
loops are arranged for speed:

Both kernels first copy the input into zero-padded planes of ``hp x wp = (height + kh - 1)
x (width + kw - 1)``, one long row per channel holding the whole batch: position
``p = (b * hp + y) * wp + x``. Then the input that output ``(b, y, x)`` meets through tap
``(i, j)`` is at ``p + offset(i, j)`` for *every* output position, and a convolution is a sum
of shifted flat runs, ``out[p] += w * padded[p + offset]``: unit-stride loops that LLVM
vectorises, as long as the batch (padding rows and columns are computed and dropped).

- ``conv_forward``: one parallel task per output channel and chunk of about ``CHUNK``
  positions; it adds the shifted runs of every tap ``(c, i, j)``, four taps per pass over
  the accumulator.
- ``conv_weight_grad``: one parallel task per channel pair ``(o, c)``: each weight's
  gradient is the dot product of the (zero-padded) output gradient's run with the input's
  run shifted by the tap's offset, four taps per pass.

Runs are taken as slices (``padded[start:]``) before the loop: indexing ``padded[start + k]``
directly makes Numba check for negative indices, which stops the loop from vectorising
(about 8x slower). The kernels inline nothing from other files, so Numba's own on-disk
cache (keyed on this file) is safe. They are launched with mt-fast's ``run_kernel`` (one
thread for small work).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from minitorch.fast import run_kernel

from . import Sizes

__all__ = ["CHUNK", "conv_forward", "conv_weight_grad"]

CHUNK = 2048
"""Positions per task of the forward kernel (its accumulator, 16 KB, stays in L1 cache)."""

# Scales a convolution's multiply-adds to mt-fast's unit of work (elements of a map), which
# decides when a kernel is worth the thread pool: one vectorised multiply-add costs far
# less than one element of a strided map.
_FLOPS_PER_ELEMENT = 16


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
def _pad_channel(out, src, batch, channels, c, height, width, top, left, hp, wp):  # type: ignore[no-untyped-def]
    """Copy channel ``c`` of every image of ``src`` into the zeroed row ``out``.

    Row ``y`` of image ``b`` lands at ``(b * hp + y + top) * wp + left``.
    """
    for b in range(batch):
        for y in range(height):
            s = ((b * channels + c) * height + y) * width
            _copy_run(out, (b * hp + y + top) * wp + left, src, s, width)


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


@njit(parallel=True, fastmath={"contract"}, cache=True)
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
    # One row per input channel, with room for the furthest tap past the last position.
    row_len = rows * wp + (kh - 1) * wp + kw - 1
    padded = np.zeros(in_ch * row_len, np.float64)
    for c in prange(in_ch):
        _pad_channel(padded[c * row_len :], inp, batch, in_ch, c, height, width, top, left, hp, wp)
    taps = in_ch * kh * kw
    offsets = np.empty(taps, np.int64)
    plane_offsets = _tap_offsets(kh, kw, wp, reverse)
    for c in range(in_ch):
        for k in range(kh * kw):
            offsets[c * kh * kw + k] = c * row_len + plane_offsets[k]
    chunk_rows = max(1, CHUNK // wp)
    chunks = (rows + chunk_rows - 1) // chunk_rows
    for t in prange(out_ch * chunks):
        o = t // chunks
        r0 = (t % chunks) * chunk_rows
        r1 = min(rows, r0 + chunk_rows)
        start = r0 * wp
        n = (r1 - r0) * wp
        weights = np.empty(taps, np.float64)
        for c in range(in_ch):
            for i in range(kh):
                for j in range(kw):
                    weights[(c * kh + i) * kw + j] = w[o * ws0 + c * ws1 + i * ws2 + j * ws3]
        acc = np.full(n, bias[o], np.float64)
        q = 0
        while q + 8 <= taps:  # eight taps per pass over the accumulator
            w0, w1, w2, w3 = weights[q], weights[q + 1], weights[q + 2], weights[q + 3]
            w4, w5, w6, w7 = weights[q + 4], weights[q + 5], weights[q + 6], weights[q + 7]
            p0 = padded[start + offsets[q] :]
            p1 = padded[start + offsets[q + 1] :]
            p2 = padded[start + offsets[q + 2] :]
            p3 = padded[start + offsets[q + 3] :]
            p4 = padded[start + offsets[q + 4] :]
            p5 = padded[start + offsets[q + 5] :]
            p6 = padded[start + offsets[q + 6] :]
            p7 = padded[start + offsets[q + 7] :]
            for k in range(n):
                acc[k] += (w0 * p0[k] + w1 * p1[k] + w2 * p2[k] + w3 * p3[k]) + (
                    w4 * p4[k] + w5 * p5[k] + w6 * p6[k] + w7 * p7[k]
                )
            q += 8
        while q + 4 <= taps:
            w0, w1, w2, w3 = weights[q], weights[q + 1], weights[q + 2], weights[q + 3]
            p0 = padded[start + offsets[q] :]
            p1 = padded[start + offsets[q + 1] :]
            p2 = padded[start + offsets[q + 2] :]
            p3 = padded[start + offsets[q + 3] :]
            for k in range(n):
                acc[k] += w0 * p0[k] + w1 * p1[k] + w2 * p2[k] + w3 * p3[k]
            q += 4
        while q < taps:
            w0, p0 = weights[q], padded[start + offsets[q] :]
            for k in range(n):
                acc[k] += w0 * p0[k]
            q += 1
        for r in range(r0, r1):  # keep the rows and columns of real outputs
            y = r % hp
            if y < height:
                dst = (((r // hp) * out_ch + o) * height + y) * width
                _copy_run(out, dst, acc, (r - r0) * wp, width)


@njit(parallel=True, fastmath={"contract", "reassoc"}, cache=True)
def _weight_grad_kernel(  # type: ignore[no-untyped-def]
    gw, gout, inp, batch, in_ch, out_ch, height, width, kh, kw, reverse
):
    """``gw[o, c, i, j] = sum_{b, y, x} gout[b, o, y, x] * in[b, c, y +- i, x +- j]``.

    ``gw`` is contiguous ``(out_ch, in_ch, kh, kw)``; ``gout`` is ``(batch, out_ch, height,
    width)`` and ``inp`` ``(batch, in_ch, height, width)``, both contiguous. The sign is
    ``-`` for ``reverse``, matching ``_forward_kernel``. ``gout`` is laid out like the padded
    input, with zeros at the padding positions, so they add nothing to the dot products.
    """
    hp, wp = height + kh - 1, width + kw - 1
    top, left = (kh - 1, kw - 1) if reverse else (0, 0)
    n = batch * hp * wp
    row_len = n + (kh - 1) * wp + kw - 1
    padded = np.zeros(in_ch * row_len, np.float64)
    for c in prange(in_ch):
        _pad_channel(padded[c * row_len :], inp, batch, in_ch, c, height, width, top, left, hp, wp)
    grad = np.zeros(out_ch * n, np.float64)
    for o in prange(out_ch):
        _pad_channel(grad[o * n :], gout, batch, out_ch, o, height, width, 0, 0, hp, wp)
    taps = kh * kw
    offsets = _tap_offsets(kh, kw, wp, reverse)
    for t in prange(out_ch * in_ch):
        o = t // in_ch
        c = t % in_ch
        g = grad[o * n : (o + 1) * n]
        row = c * row_len
        q = 0
        while q + 4 <= taps:
            p0 = padded[row + offsets[q] :]
            p1 = padded[row + offsets[q + 1] :]
            p2 = padded[row + offsets[q + 2] :]
            p3 = padded[row + offsets[q + 3] :]
            a0 = a1 = a2 = a3 = 0.0
            for k in range(n):
                a0 += g[k] * p0[k]
                a1 += g[k] * p1[k]
                a2 += g[k] * p2[k]
                a3 += g[k] * p3[k]
            gw[t * taps + q] = a0
            gw[t * taps + q + 1] = a1
            gw[t * taps + q + 2] = a2
            gw[t * taps + q + 3] = a3
            q += 4
        while q < taps:
            p0 = padded[row + offsets[q] :]
            a0 = 0.0
            for k in range(n):
                a0 += g[k] * p0[k]
            gw[t * taps + q] = a0
            q += 1
