"""Parallel Numba kernels for 2-D convolution (1-D convolution is the case ``height = 1``).

The course's convolution keeps the input's size: with the kernel anchored at the top left,
``out[b, o, y, x] = sum_{c, i, j} in[b, c, y + i, x + j] * w[o, c, i, j]``, reading zero
past the bottom and right edges; ``reverse`` anchors it at the bottom right instead,
``in[b, c, y - i, x - j]``, reading zero before the top and left edges.

Two kernels cover the forward pass and both gradients:

- ``conv_forward``: one parallel task per output row ``(b, o, y)``. The task accumulates the
  row in a local buffer: for each ``(c, i, j)`` it adds a weight times a shifted input row,
  a unit-stride loop that LLVM vectorises. The input gradient is this kernel too, in the
  other direction, with the weight's channel axes swapped (a strided view, no copy).
- ``conv_weight_grad``: one parallel task per channel pair ``(o, c)``, which sums over the
  batch and every position ``gout[b, o, y, x] * in[b, c, y + i, x + j]`` for all ``(i, j)``
  at once. Products go into one vector of partial sums per ``(i, j)``, added up at the end,
  so the inner loop is elementwise (vectorised) and the order of additions is fixed.

Activations and gradients arrive as contiguous flat float64 buffers and sizes as ints; the
weight also brings its four strides. The kernels are cached on disk like mt-fast's.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from minitorch.fast import _cache
from minitorch.fast import kernels as _fast_kernels
from minitorch.operators import scalar as _scalar_ops
from minitorch.tensor import tensor_data as _tensor_data

__all__ = ["conv_forward", "conv_weight_grad", "run"]

# The same dependency list as mt-fast's kernels: the locator's dependency hash is one value
# for the process, so keeping it identical leaves mt-fast's kernels' cache stamps as they are.
# These kernels inline nothing from other files; their own source is Numba's usual stamp.
_cache.install(__file__, [_scalar_ops, _tensor_data])

run = _fast_kernels.run
"""``run(kernel, work, *args)``: mt-fast's launcher (one thread for small work)."""


@register_jitable
def _pad(src, planes, height, width, top, left, hp, wp):  # type: ignore[no-untyped-def]
    """Copy ``planes`` contiguous ``height x width`` planes into zeroed ``hp x wp`` planes.

    Row ``y`` of a plane lands at row ``y + top``, column ``left``: a zero border of
    ``hp - height`` rows and ``wp - width`` columns, split by ``top`` and ``left``.
    """
    out = np.zeros(planes * hp * wp, np.float64)
    for p in range(planes * height):
        dst = (p // height) * hp * wp + (p % height + top) * wp + left
        out[dst : dst + width] = src[p * width : (p + 1) * width]
    return out


@register_jitable
def _tap_offsets(channels, kh, kw, hp, wp, reverse):  # type: ignore[no-untyped-def]
    """Distance from output ``(y, x)`` to its input through each tap ``(c, i, j)``.

    In padded planes the distance is the same for every output position; taps are
    numbered ``(c * kh + i) * kw + j``, the order of a contiguous weight.
    """
    offsets = np.empty(channels * kh * kw, np.int64)
    for c in range(channels):
        for i in range(kh):
            for j in range(kw):
                # Anchored at the top left, the input is i rows and j columns further; at
                # the bottom right, (kh - 1 - i, kw - 1 - j) from the padded plane's corner.
                di = kh - 1 - i if reverse else i
                dj = kw - 1 - j if reverse else j
                offsets[(c * kh + i) * kw + j] = c * hp * wp + di * wp + dj
    return offsets


@njit(parallel=True, fastmath={"contract"}, cache=True)
def conv_forward(  # type: ignore[no-untyped-def]
    out, inp, w, bias, batch, in_ch, out_ch, height, width, kh, kw, ws0, ws1, ws2, ws3, reverse
):
    """``out[b, o] = bias[o] + conv(in[b, :], w[o, :])``, zero padded, anchored by ``reverse``.

    ``out`` is ``(batch, out_ch, height, width)`` and ``inp`` ``(batch, in_ch, height,
    width)``, both contiguous; ``w`` is ``(out_ch, in_ch, kh, kw)`` with strides ``ws*``;
    ``bias`` has ``out_ch`` values.
    """
    hp, wp = height + kh - 1, width + kw - 1
    top, left = (kh - 1, kw - 1) if reverse else (0, 0)
    padded = _pad(inp, batch * in_ch, height, width, top, left, hp, wp)
    taps = in_ch * kh * kw
    offsets = _tap_offsets(in_ch, kh, kw, hp, wp, reverse)
    # Output (y, x) of a padded plane is at y * wp + x, and the input it meets through a
    # tap is a fixed distance further, so one flat run of n values per tap covers the
    # plane. The runs also compute the wp - width padding columns, which are dropped.
    n = (height - 1) * wp + width
    for t in prange(batch * out_ch):
        b = t // out_ch
        o = t % out_ch
        weights = np.empty(taps, np.float64)
        for c in range(in_ch):
            for i in range(kh):
                for j in range(kw):
                    weights[(c * kh + i) * kw + j] = w[o * ws0 + c * ws1 + i * ws2 + j * ws3]
        image = b * in_ch * hp * wp
        acc = np.full(n, bias[o], np.float64)
        q = 0
        while q + 4 <= taps:  # four taps per pass over the accumulator
            w0, w1, w2, w3 = weights[q], weights[q + 1], weights[q + 2], weights[q + 3]
            p0 = padded[image + offsets[q] :]
            p1 = padded[image + offsets[q + 1] :]
            p2 = padded[image + offsets[q + 2] :]
            p3 = padded[image + offsets[q + 3] :]
            for k in range(n):
                acc[k] += w0 * p0[k] + w1 * p1[k] + w2 * p2[k] + w3 * p3[k]
            q += 4
        while q < taps:
            w0, p0 = weights[q], padded[image + offsets[q] :]
            for k in range(n):
                acc[k] += w0 * p0[k]
            q += 1
        for y in range(height):
            dst = (t * height + y) * width
            out[dst : dst + width] = acc[y * wp : y * wp + width]


@njit(parallel=True, fastmath={"contract", "reassoc"}, cache=True)
def conv_weight_grad(  # type: ignore[no-untyped-def]
    gw, gout, inp, batch, in_ch, out_ch, height, width, kh, kw, reverse
):
    """``gw[o, c, i, j] = sum_{b, y, x} gout[b, o, y, x] * in[b, c, y +- i, x +- j]``.

    ``gw`` is contiguous ``(out_ch, in_ch, kh, kw)``; ``gout`` is ``(batch, out_ch, height,
    width)`` and ``inp`` ``(batch, in_ch, height, width)``, both contiguous. The sign is
    ``-`` for ``reverse``, matching ``conv_forward``. Each sum over a plane is a dot
    product of flat runs, as in ``conv_forward``, four taps at a time; ``gout`` gets zero
    padding columns so the padding positions add nothing.
    """
    hp, wp = height + kh - 1, width + kw - 1
    top, left = (kh - 1, kw - 1) if reverse else (0, 0)
    padded = _pad(inp, batch * in_ch, height, width, top, left, hp, wp)
    grad = _pad(gout, batch * out_ch, height, width, 0, 0, height, wp)
    taps = kh * kw
    offsets = _tap_offsets(1, kh, kw, hp, wp, reverse)
    n = (height - 1) * wp + width
    for t in prange(out_ch * in_ch):
        o = t // in_ch
        c = t % in_ch
        acc = np.zeros(taps, np.float64)
        for b in range(batch):
            g = grad[(b * out_ch + o) * height * wp :]
            plane = (b * in_ch + c) * hp * wp
            q = 0
            while q + 4 <= taps:
                p0 = padded[plane + offsets[q] :]
                p1 = padded[plane + offsets[q + 1] :]
                p2 = padded[plane + offsets[q + 2] :]
                p3 = padded[plane + offsets[q + 3] :]
                a0 = a1 = a2 = a3 = 0.0
                for k in range(n):
                    a0 += g[k] * p0[k]
                    a1 += g[k] * p1[k]
                    a2 += g[k] * p2[k]
                    a3 += g[k] * p3[k]
                acc[q] += a0
                acc[q + 1] += a1
                acc[q + 2] += a2
                acc[q + 3] += a3
                q += 4
            while q < taps:
                p0 = padded[plane + offsets[q] :]
                a0 = 0.0
                for k in range(n):
                    a0 += g[k] * p0[k]
                acc[q] += a0
                q += 1
        for k in range(taps):
            gw[t * taps + k] = acc[k]
