"""The convolution kernels: one module per backend, each of one shape, ``ConvKernels``.

- ``simple``: plain Python loops, the course's reference (tasks 4.1 and 4.2): read it first;
- ``fast``: parallel Numba, arranged for speed (a course starter leaves it out, and its
  fast backend runs ``simple``);
- ``cuda``: CUDA, one thread (or block) per output value; imported only when a
  convolution meets a ``CudaBackend`` tensor.

``conv.CONV_KERNELS`` chooses the module by the backend's name; ``conv.py`` checks the
shapes and allocates the outputs, so a kernel module only writes loops. A 1-D convolution
is the 2-D one with ``height = 1`` and ``kh = 1``. A module may also give average pooling
kernels, ``conv.PoolKernels`` over ``PoolSizes`` (``fast`` does; ``avgpool2d`` is built
from the backend's operations where a module has none). Importing this package (which
holds only the protocol) imports no Numba.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeAlias

__all__ = ["ConvKernels", "PoolSizes", "Sizes"]

Sizes: TypeAlias = tuple[int, int, int, int, int, int, int]
"""``(batch, in_channels, height, width, out_channels, kernel_height, kernel_width)``."""

PoolSizes: TypeAlias = tuple[int, int, int, int, int]
"""``(planes, height, width, kernel_height, kernel_width)``: one plane per image and channel."""


class ConvKernels(Protocol):
    """What ``conv.py`` needs from a backend's kernel module: the two kernels over flat storages.

    Activations are contiguous ``(batch, channels, height, width)`` buffers; the weight may
    be a strided view (the input gradient permutes it), so it brings its strides.
    """

    def conv_forward(
        self,
        out: Any,
        inp: Any,
        weight: Any,
        weight_strides: tuple[int, int, int, int],
        bias: Any,
        sizes: Sizes,
        reverse: bool,
    ) -> None:
        """Write ``bias[o] + sum_{c,i,j} inp[b, c, y +- i, x +- j] * weight[o, c, i, j]``."""
        ...

    def conv_weight_grad(
        self, grad_weight: Any, grad_out: Any, inp: Any, sizes: Sizes, reverse: bool
    ) -> None:
        """Write ``grad_w[o,c,i,j] = sum_{b,y,x} grad_out[b,o,y,x] * inp[b,c,y +- i,x +- j]``."""
        ...
