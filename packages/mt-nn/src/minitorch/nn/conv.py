"""1-D and 2-D convolution as autodiff ``Function``s over per-backend kernels.

The course's convolution keeps the input's size. With the kernel anchored at the left (top
left in 2-D), ``out[b, o, x] = sum_{c, k} in[b, c, x + k] * w[o, c, k]``, reading zero past
the right edge; with ``reverse=True`` it is anchored at the right, ``in[b, c, x - k]``,
reading zero before the left edge. The backward pass is two more convolutions:

- input gradient: ``grad_out`` convolved in the *other* direction with the weight's
  channel axes swapped, ``w.permute(1, 0, ...)`` (a view);
- weight gradient: ``grad_w[o, c, k] = sum_{b, x} grad_out[b, o, x] * in[b, c, x +- k]``.

A 1-D convolution is the 2-D one with height 1, so one pair of kernels serves both. Each
backend has its own pair, in its own module, found in ``CONV_KERNELS`` by the backend's
``TensorOps`` class: the ``name`` that class declares (``simple``, ``fast``, ``cuda``), or
the nearest base class's, so ``TensorBackend(FastOps)`` and ``PlainFastBackend`` find the
fast kernels whatever they are called: ``kernels/simple.py`` (plain loops, the course's
reference), ``kernels/fast.py`` (parallel Numba; a course starter leaves it out, and its
table sends the fast backends to ``simple``) and ``kernels/cuda.py`` (CUDA, imported only
when a ``CudaBackend`` tensor is convolved). Every module is a ``kernels.ConvKernels``: the
same two functions over flat storages,

- ``conv_forward(out, inp, weight, weight_strides, bias, sizes, reverse)``
- ``conv_weight_grad(grad_weight, grad_out, inp, sizes, reverse)``

This module checks the shapes and allocates the outputs on the input's backend (its
``storage_empty``), so a kernel module only writes loops.
"""

from __future__ import annotations

import importlib
from math import prod
from typing import Any, Protocol, cast

from minitorch.autodiff import Context
from minitorch.tensor import Function, Tensor, TensorBackend

from .kernels import ConvKernels, PoolSizes, Sizes

__all__ = [
    "CONV_KERNELS",
    "AvgpoolKernelFun",
    "Conv1dFun",
    "Conv2dFun",
    "PoolKernels",
    "conv1d",
    "conv2d",
    "kernels_for",
    "pool_kernels_for",
]

CONV_KERNELS: dict[str, str] = {
    "simple": "minitorch.nn.kernels.simple",
    "fast": "minitorch.nn.kernels.fast",
    "cuda": "minitorch.nn.kernels.cuda",
}
"""``TensorOps.name`` of a backend's ops class -> the module of its convolution kernels."""


def kernels_for(backend: TensorBackend) -> ConvKernels:
    """Return the module of convolution kernels for ``backend`` (imported on first use).

    The kernels are found by the backend's ops class (``backend.ops``): the first class in
    its method resolution order whose declared ``name`` is a key of ``CONV_KERNELS``.

    Raises:
        LookupError: if neither the ops class nor a base class of it has kernels.
    """
    for ops in backend.ops.__mro__:
        module = CONV_KERNELS.get(vars(ops).get("name", ""))
        if module is not None:
            return cast(ConvKernels, importlib.import_module(module))
    raise LookupError(
        f"conv has no kernels for backend {backend.name!r} (ops {backend.ops.__name__}); it "
        f"has kernels for the backends {sorted(CONV_KERNELS)}: move the tensors with "
        ".to(backend), or add the backend's kernel module to minitorch.nn.conv.CONV_KERNELS"
    )


class PoolKernels(Protocol):
    """Average pooling over flat storages, which a kernel module may also give.

    Optional, beside the ``ConvKernels`` every module has: ``avgpool2d`` runs these where
    the backend's module has them (``fast``) and is built from the backend's operations
    elsewhere. Both buffers are contiguous ``(planes, height, width)`` and ``(planes,
    height / kh, width / kw)``; the kernel sizes divide the image.
    """

    def avgpool_forward(self, out: Any, inp: Any, sizes: PoolSizes) -> None:
        """Write ``out[p, y, x] = mean(inp[p, y*kh : (y+1)*kh, x*kw : (x+1)*kw])``."""
        ...

    def avgpool_backward(self, grad_input: Any, grad_out: Any, sizes: PoolSizes) -> None:
        """Write ``grad_input[p, y, x] = grad_out[p, y // kh, x // kw] / (kh * kw)``."""
        ...


def pool_kernels_for(backend: TensorBackend) -> PoolKernels | None:
    """Return the average pooling kernels of ``backend``'s kernel module, or None.

    The module is the one ``kernels_for`` finds; it gives pooling kernels only if it
    defines both ``avgpool_forward`` and ``avgpool_backward`` (``PoolKernels``). None
    (also for a backend with no kernel module) means: pool with the backend's operations.
    """
    try:
        module = kernels_for(backend)
    except LookupError:
        return None
    if hasattr(module, "avgpool_forward") and hasattr(module, "avgpool_backward"):
        return cast(PoolKernels, module)
    return None


class AvgpoolKernelFun(Function):
    """Average pooling on the backend's own kernels (``pool_kernels_for``).

    ``avgpool2d`` runs it where a backend has them, and ``Avgpool2dFun`` elsewhere (the
    course's task, which a starter's backends, without these kernels, always run).
    ``apply(input, kh, kw)`` with sizes that divide the input (``avgpool2d`` checks them).
    The context keeps plain values only.
    """

    grad_fn_name = "AvgPool2DBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx: Context, input: Tensor, kh: int, kw: int) -> Tensor:
        """Average each window."""
        batch, channel, height, width = input.shape
        sizes = (batch * channel, height, width, kh, kw)
        out = input.backend.ops.storage_empty(batch * channel * (height // kh) * (width // kw))
        _pool_kernels(input.backend).avgpool_forward(out, input.contiguous().tuple()[0], sizes)
        ctx.save_for_backward(input.shape, kh, kw)
        return Tensor.make(out, (batch, channel, height // kh, width // kw), backend=input.backend)

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """Each input of a window gets the window's gradient over ``kh * kw``."""
        shape, kh, kw = ctx.saved_values
        batch, channel, height, width = shape
        f = grad_output.backend
        grad = f.ops.storage_empty(batch * channel * height * width)
        g = grad_output.contiguous().tuple()[0]
        _pool_kernels(f).avgpool_backward(grad, g, (batch * channel, height, width, kh, kw))
        return Tensor.make(grad, shape, backend=f)


def _pool_kernels(backend: TensorBackend) -> PoolKernels:
    """``pool_kernels_for(backend)``, which must exist."""
    kernels = pool_kernels_for(backend)
    if kernels is None:
        raise LookupError(f"backend {backend.name!r} has no pooling kernels: use avgpool2d")
    return kernels


def _check(name: str, input: Tensor, weight: Tensor, dims: int) -> Sizes:
    """Validate shapes and return the sizes as 2-D (``height = 1`` for 1-D)."""
    axes = "width" if dims == 1 else "height, width"
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(
            f"{name} takes two Tensors, got {type(input).__name__} and {type(weight).__name__}"
        )
    if input.dims != dims + 2:
        raise ValueError(
            f"{name} expects an input of shape (batch, in_channels, {axes}), got shape "
            f"{input.shape}"
        )
    kernel_axes = "kernel_width" if dims == 1 else "kernel_height, kernel_width"
    if weight.dims != dims + 2:
        raise ValueError(
            f"{name} expects a weight of shape (out_channels, in_channels, {kernel_axes}), "
            f"got shape {weight.shape}"
        )
    if weight.shape[1] != input.shape[1]:
        raise ValueError(
            f"{name}: the input has {input.shape[1]} channels but the weight expects "
            f"{weight.shape[1]} (input shape {input.shape}, weight shape {weight.shape})"
        )
    space, kernel = input.shape[2:], weight.shape[2:]
    if any(k < 1 for k in kernel):
        raise ValueError(
            f"{name}: kernel {tuple(kernel)} has a zero size; each size must be >= 1 "
            f"(weight shape {weight.shape})"
        )
    if any(k > s for k, s in zip(kernel, space, strict=True)):
        raise ValueError(
            f"{name}: kernel {tuple(kernel)} does not fit the input's {tuple(space)} "
            f"(input shape {input.shape}, weight shape {weight.shape})"
        )
    batch, in_ch = input.shape[:2]
    out_ch = weight.shape[0]
    if dims == 1:
        return batch, in_ch, 1, space[0], out_ch, 1, kernel[0]
    return batch, in_ch, space[0], space[1], out_ch, kernel[0], kernel[1]


def _strides4(t: Tensor) -> tuple[int, int, int, int]:
    """The weight's strides as 2-D ``(out, in, kernel_height, kernel_width)``."""
    s = [int(x) for x in t.tuple()[2]]
    if len(s) == 3:  # 1-D: a kernel height of 1, whose stride is never used
        return s[0], s[1], 0, s[2]
    return s[0], s[1], s[2], s[3]


def _forward(
    input: Tensor, weight: Tensor, bias: Tensor | None, sizes: Sizes, reverse: bool, shape: Any
) -> Tensor:
    """Run the forward kernel of ``input``'s backend; return a tensor of ``shape``."""
    kernels = kernels_for(input.backend)
    ops = input.backend.ops
    out = ops.storage_empty(prod(shape))
    b = ops.storage_zeros(sizes[4]) if bias is None else bias.contiguous().tuple()[0]
    x = input.contiguous().tuple()[0]
    kernels.conv_forward(out, x, weight.tuple()[0], _strides4(weight), b, sizes, bool(reverse))
    return Tensor.make(out, shape, backend=input.backend)


def _weight_grad(grad: Tensor, input: Tensor, sizes: Sizes, reverse: bool, shape: Any) -> Tensor:
    """Run the weight-gradient kernel; return a tensor of the weight's ``shape``."""
    kernels = kernels_for(input.backend)
    out = input.backend.ops.storage_empty(prod(shape))
    g, x = grad.contiguous().tuple()[0], input.contiguous().tuple()[0]
    kernels.conv_weight_grad(out, g, x, sizes, bool(reverse))
    return Tensor.make(out, shape, backend=input.backend)


def _bias_grad(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``sum_{b, positions} grad[b, o, ...]``: two reductions over a view of the gradient."""
    f = grad.backend
    batch, out_ch = grad.shape[:2]
    per_plane = f.add_reduce(
        grad.contiguous().view(batch, out_ch, grad.size // max(1, batch * out_ch)), 2
    )
    return f.add_reduce(per_plane, 0).view(*shape)


def _transposed(sizes: Sizes) -> Sizes:
    """Sizes of the input-gradient convolution: the channel counts swap."""
    batch, in_ch, height, width, out_ch, kh, kw = sizes
    return batch, out_ch, height, width, in_ch, kh, kw


class _ConvFun(Function):
    """Shared forward/backward of ``Conv1dFun`` and ``Conv2dFun``.

    ``apply(input, weight, bias, reverse)``: ``bias`` is a tensor of ``out_channels`` values
    or None; when it is None the backward returns two gradients, else three.
    """

    dims = 2
    op_name = "conv2d"

    @classmethod
    def forward(
        cls,
        ctx: Context,
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        reverse: bool = False,
    ) -> Tensor:
        """Convolve, anchored at the start (the end if ``reverse``), zero past the edge."""
        sizes = _check(cls.op_name, input, weight, cls.dims)
        if bias is not None and (not isinstance(bias, Tensor) or bias.size != weight.shape[0]):
            raise ValueError(
                f"{cls.op_name}: bias must be a tensor of {weight.shape[0]} values (one per "
                f"output channel), got {getattr(bias, 'shape', type(bias).__name__)}"
            )
        ctx.save_for_backward(input, weight, bias, sizes, bool(reverse), not input.is_constant())
        shape = (input.shape[0], weight.shape[0], *input.shape[2:])
        return _forward(input, weight, bias, sizes, reverse, shape)

    @classmethod
    def backward(cls, ctx: Context, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        """Gradients for the input, the weight and (if given) the bias.

        A constant input (the images) gets None: its gradient would be thrown away.
        """
        input, weight, bias, sizes, reverse, input_needs_grad = ctx.saved_values
        grad_weight = _weight_grad(grad_output, input, sizes, reverse, weight.shape)
        grad_input = None
        if input_needs_grad:
            swapped = weight.permute(1, 0, *range(2, weight.dims))
            grad_input = _forward(
                grad_output, swapped, None, _transposed(sizes), not reverse, input.shape
            )
        if bias is None:
            return grad_input, grad_weight
        return grad_input, grad_weight, _bias_grad(grad_output, bias.shape)


class Conv1dFun(_ConvFun):
    """1-D convolution: ``(batch, in, width)`` by ``(out, in, k)`` gives ``(batch, out, width)``."""

    grad_fn_name = "ConvolutionBackward0"  # PyTorch's name for the node

    dims = 1
    op_name = "conv1d"


class Conv2dFun(_ConvFun):
    """2-D convolution: ``(batch, in, h, w)`` by ``(out, in, kh, kw)`` is ``(batch, out, h, w)``."""

    grad_fn_name = "ConvolutionBackward0"  # PyTorch's name for the node

    dims = 2
    op_name = "conv2d"


def conv1d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, reverse: bool = False
) -> Tensor:
    """1-D convolution keeping the width: ``out[b, o, x] = sum_{c,k} in[b, c, x + k] w[o, c, k]``.

    Args:
        input: ``(batch, in_channels, width)``.
        weight: ``(out_channels, in_channels, k)`` with ``k <= width``.
        bias: optional, ``out_channels`` values added to each output channel.
        reverse: anchor the kernel at the right (``in[b, c, x - k]``) instead of the left.

    Returns:
        ``(batch, out_channels, width)``; inputs past the edge count as zero. PyTorch's
        equivalent is ``F.conv1d(F.pad(input, (0, k - 1)), weight, bias)``.

    Raises:
        ValueError: for wrong dimensions, mismatched channels, a kernel of size 0 or wider
            than the input, or a bias of the wrong size.
    """
    return Conv1dFun.apply(input, weight, bias, bool(reverse))


def conv2d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, reverse: bool = False
) -> Tensor:
    """2-D convolution keeping the size, kernel anchored at the top left (zero padding).

    ``out[b, o, y, x] = sum_{c, i, j} in[b, c, y + i, x + j] * w[o, c, i, j]`` (+ ``bias[o]``);
    PyTorch's equivalent is ``F.conv2d(F.pad(input, (0, kw - 1, 0, kh - 1)), weight, bias)``.

    Args:
        input: ``(batch, in_channels, height, width)``.
        weight: ``(out_channels, in_channels, kh, kw)``, no larger than the input.
        bias: optional, ``out_channels`` values added to each output channel.
        reverse: anchor at the bottom right (``in[b, c, y - i, x - j]``).

    Returns:
        ``(batch, out_channels, height, width)``.

    Raises:
        ValueError: for wrong dimensions, mismatched channels, a kernel with a zero size or
            larger than the input, or a bias of the wrong size.
    """
    return Conv2dFun.apply(input, weight, bias, bool(reverse))
