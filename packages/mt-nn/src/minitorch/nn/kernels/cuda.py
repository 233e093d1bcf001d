"""The convolution kernels of ``CudaBackend``: CUDA, one thread (or block) per output value.

A ``ConvKernels`` module (see ``kernels/__init__.py``). They compute what ``simple``
computes (read that first; the formulas are there), with
the same two functions over flat device storages. ``conv``'s table imports this module
only when a convolution meets a ``CudaBackend`` tensor, so ``import minitorch.nn`` never
loads the CUDA toolchain.

- ``conv_forward``: one thread per output element ``(b, o, y, x)``, summing over
  ``(c, i, j)`` and skipping positions past the edge (the zero padding).
- ``conv_weight_grad``: one block per weight element ``(o, c, i, j)``. Its threads each sum
  a strided share of the ``batch * height * width`` products, then combine their partial
  sums in shared memory with mt-cuda's block reduction (``block_reduce``).

Only names of ``minitorch.cuda.__all__`` are used: the launch configuration and the block
reduction are mt-cuda's public API.
"""

from __future__ import annotations

from typing import Any

from numba import cuda, types

from minitorch.cuda import (
    THREADS_PER_BLOCK,
    block_reduce,
    elementwise_launch,
    reduction_threads,
    require_device,
)
from minitorch.operators import add

from . import Sizes

__all__ = ["conv_forward", "conv_weight_grad"]

_BLOCK = THREADS_PER_BLOCK
_block_sum = block_reduce(add)


@cuda.jit
def _forward_kernel(  # type: ignore[no-untyped-def]
    out, inp, w, bias, batch, in_ch, out_ch, height, width, kh, kw, ws0, ws1, ws2, ws3, reverse
):
    t = cuda.grid(1)
    if t >= batch * out_ch * height * width:
        return
    x = t % width
    y = (t // width) % height
    o = (t // (width * height)) % out_ch
    b = t // (width * height * out_ch)
    acc = bias[o]
    for c in range(in_ch):
        plane = (b * in_ch + c) * height
        for i in range(kh):
            yy = y - i if reverse else y + i
            if yy < 0 or yy >= height:
                continue
            for j in range(kw):
                xx = x - j if reverse else x + j
                if 0 <= xx < width:
                    acc += inp[(plane + yy) * width + xx] * w[o * ws0 + c * ws1 + i * ws2 + j * ws3]
    out[t] = acc


@cuda.jit
def _weight_grad_kernel(gw, gout, inp, batch, in_ch, out_ch, height, width, kh, kw, reverse):  # type: ignore[no-untyped-def]
    cache = cuda.shared.array(_BLOCK, types.float64)
    k = cuda.blockIdx.x  # this block's weight element (o, c, i, j)
    j = k % kw
    i = (k // kw) % kh
    c = (k // (kw * kh)) % in_ch
    o = k // (kw * kh * in_ch)
    tid = cuda.threadIdx.x
    acc = 0.0
    for p in range(tid, batch * height * width, cuda.blockDim.x):
        x = p % width
        y = (p // width) % height
        b = p // (width * height)
        yy = y - i if reverse else y + i
        xx = x - j if reverse else x + j
        if 0 <= yy < height and 0 <= xx < width:
            acc += (
                gout[((b * out_ch + o) * height + y) * width + x]
                * inp[((b * in_ch + c) * height + yy) * width + xx]
            )
    total = _block_sum(cache, acc)
    if tid == 0:
        gw[k] = total


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
    require_device()
    batch, in_ch, height, width, out_ch, kh, kw = sizes
    size = batch * out_ch * height * width
    if size == 0:
        return
    blocks, threads = elementwise_launch(size)
    _forward_kernel[blocks, threads](
        out,
        inp,
        weight,
        bias,
        batch,
        in_ch,
        out_ch,
        height,
        width,
        kh,
        kw,
        *weight_strides,
        bool(reverse),
    )


def conv_weight_grad(
    grad_weight: Any,
    grad_out: Any,
    inp: Any,
    sizes: Sizes,
    reverse: bool,
) -> None:
    """Write the weight's gradient into ``grad_weight`` (see ``simple``)."""
    require_device()
    batch, in_ch, height, width, out_ch, kh, kw = sizes
    blocks = out_ch * in_ch * kh * kw
    if blocks == 0:
        return
    threads = reduction_threads(batch * height * width)
    _weight_grad_kernel[blocks, threads](
        grad_weight, grad_out, inp, batch, in_ch, out_ch, height, width, kh, kw, bool(reverse)
    )
