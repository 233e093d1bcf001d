"""The convolution kernels of ``SimpleBackend``: plain Python loops, written to be read.

A ``ConvKernels`` module (see ``kernels/__init__.py``), as ``fast`` and ``cuda`` are.

This is the course's reference convolution (tasks 4.1 and 4.2), the one to read first; the
``fast`` (Numba) and ``cuda`` kernels compute the same numbers, faster. A 1-D convolution
is the 2-D one with ``height = 1`` and ``kh = 1``, so two functions serve both:

- ``conv_forward``: ``out[b, o, y, x] = bias[o] + sum_{c, i, j} in[b, c, y + i, x + j] *
  w[o, c, i, j]``, reading zero past the bottom and right edges (``reverse`` reads
  ``in[b, c, y - i, x - j]``, zero before the top and left edges). The input gradient is
  this function too, in the other direction, with the weight's channel axes swapped.
- ``conv_weight_grad``: ``grad_w[o, c, i, j] = sum_{b, y, x} grad_out[b, o, y, x] *
  in[b, c, y +- i, x +- j]``: every output position that tap ``(i, j)`` of channel pair
  ``(o, c)`` touched, weighted by how much that output mattered.

Storages are flat float64 buffers; activations are contiguous ``(batch, channels, height,
width)`` tensors, their elements in row-major (C) order, the last axis varying fastest.
The weight may be a strided view (the input gradient permutes it), so it brings its strides.
"""

from __future__ import annotations

from typing import Any

from . import Sizes

__all__ = ["conv_forward", "conv_weight_grad"]


def conv_forward(
    out: Any,
    inp: Any,
    weight: Any,
    weight_strides: tuple[int, int, int, int],
    bias: Any,
    sizes: Sizes,
    reverse: bool,
) -> None:
    """Write the convolution of ``inp`` with ``weight``, plus ``bias``, into ``out``.

    ``out`` is ``(batch, out_channels, height, width)``, ``inp`` ``(batch, in_channels,
    height, width)``, ``weight`` ``(out_channels, in_channels, kh, kw)`` with
    ``weight_strides``, ``bias`` ``(out_channels,)``.
    """
    batch, in_ch, height, width, out_ch, kh, kw = sizes
    s0, s1, s2, s3 = weight_strides
    step = -1 if reverse else 1  # walk the input backwards when anchored at the end
    # BEGIN SOLUTION task4_1
    for b in range(batch):
        for o in range(out_ch):
            for y in range(height):
                for x in range(width):
                    total = bias[o]
                    for c in range(in_ch):
                        for i in range(kh):
                            for j in range(kw):
                                yy, xx = y + step * i, x + step * j
                                if 0 <= yy < height and 0 <= xx < width:  # else zero
                                    value = inp[((b * in_ch + c) * height + yy) * width + xx]
                                    total += value * weight[o * s0 + c * s1 + i * s2 + j * s3]
                    out[((b * out_ch + o) * height + y) * width + x] = total
    # END SOLUTION


def conv_weight_grad(
    grad_weight: Any, grad_out: Any, inp: Any, sizes: Sizes, reverse: bool
) -> None:
    """Write the gradient of the weight into ``grad_weight``, ``(out, in, kh, kw)``.

    ``grad_out`` is ``(batch, out_channels, height, width)`` and ``inp`` ``(batch,
    in_channels, height, width)``; ``reverse`` as in ``conv_forward``.
    """
    batch, in_ch, height, width, out_ch, kh, kw = sizes
    step = -1 if reverse else 1
    # BEGIN SOLUTION task4_1
    for o in range(out_ch):
        for c in range(in_ch):
            for i in range(kh):
                for j in range(kw):
                    total = 0.0
                    for b in range(batch):
                        for y in range(height):
                            for x in range(width):
                                yy, xx = y + step * i, x + step * j
                                if 0 <= yy < height and 0 <= xx < width:
                                    g = grad_out[((b * out_ch + o) * height + y) * width + x]
                                    total += g * inp[((b * in_ch + c) * height + yy) * width + xx]
                    grad_weight[((o * in_ch + c) * kh + i) * kw + j] = total
    # END SOLUTION
