"""Pooling, ``max``/``argmax``, ``softmax``/``logsoftmax`` and ``dropout``.

Everything here is built from the backend primitives (``map``, ``zip``, ``reduce``), so it
runs on every backend, the CUDA one included; ``avgpool2d`` runs a backend's own pooling
kernels instead where its kernel module has them (``conv.AvgpoolKernelFun``: the fast
backends). Each operation is one ``Function`` whose ``forward`` and ``backward`` call
several primitives, rather than a chain of small tensor functions: the graph stays short
and the Python overhead per operation low.

Pooling never copies a contiguous input, it views it. ``maxpool2d`` views it as
``(batch, channel, height / kh, kh, width / kw, kw)`` and reduces the two kernel
dimensions; ``avgpool2d`` without pooling kernels multiplies bands of ``kh`` rows by a
fixed averaging matrix, and takes a window's mean from its own values only where that
product meets an ``inf`` or NaN. Either way a NaN or ``inf`` in one window never reaches
another, as in PyTorch.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import Context
from minitorch.tensor import (
    Function,
    Max,
    Tensor,
    TensorBackend,
    check_dim,
    check_reduction_dim,
    check_seed,
    from_numpy,
    is_max,
    max_mask,
)

from .conv import AvgpoolKernelFun, pool_kernels_for

__all__ = [
    "Avgpool2dFun",
    "DropoutFun",
    "LogSoftmaxFun",
    "Maxpool2dFun",
    "SoftmaxFun",
    "argmax",
    "avgpool2d",
    "dropout",
    "logsoftmax",
    "max",
    "maxpool2d",
    "softmax",
    "tile",
]


def _const(value: float, backend: TensorBackend) -> Tensor:
    """A one-element constant (it broadcasts against anything)."""
    return Tensor.make([float(value)], (1,), backend=backend)


def _check_tensor(t: object, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} takes a Tensor, got {type(t).__name__}")


def _dim(t: Tensor, dim: int, name: str) -> int:
    """``dim`` checked by mt-tensor's one validator (an IndexingError, as PyTorch's)."""
    _check_tensor(t, name)
    return check_dim(dim, t.shape)


# ------------------------------------------------------------------------------- pooling


def _kernel_size(name: str, input: Tensor, kernel: Sequence[int]) -> tuple[int, int]:
    if not isinstance(input, Tensor) or input.dims != 4:
        shape = getattr(input, "shape", type(input).__name__)
        raise ValueError(f"{name} expects a (batch, channel, height, width) tensor, got {shape}")
    try:
        kh, kw = kernel
    except (TypeError, ValueError):
        raise ValueError(f"{name}: kernel must be a pair of ints, got {kernel!r}") from None
    for k in (kh, kw):
        if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
            raise TypeError(
                f"{name}: kernel must be a pair of ints, got {kernel!r} ({type(k).__name__} {k!r})"
            )
    kh, kw = int(kh), int(kw)
    if kh < 1 or kw < 1:
        raise ValueError(
            f"{name}: kernel {(kh, kw)} has a zero or negative size; each size must be >= 1"
        )
    height, width = input.shape[2:]
    if height % kh or width % kw:
        raise ValueError(
            f"{name}: kernel {(kh, kw)} must divide the input's height and width "
            f"{(height, width)} (input shape {input.shape})"
        )
    return kh, kw


def _windows(input: Tensor, kh: int, kw: int) -> Tensor:
    """View (no copy if contiguous) as ``(batch, channel, nh, kh, nw, kw)``."""
    batch, channel, height, width = input.shape
    return input.contiguous().view(batch, channel, height // kh, kh, width // kw, kw)


def tile(input: Tensor, kernel: tuple[int, int]) -> tuple[Tensor, int, int]:
    """Split each ``kh x kw`` window into the last dimension, for pooling.

    Args:
        input: ``(batch, channel, height, width)``.
        kernel: ``(kh, kw)``, dividing ``height`` and ``width``.

    Returns:
        ``(tiled, new_height, new_width)`` with ``tiled`` of shape ``(batch, channel,
        new_height, new_width, kh * kw)``. It is a view of the input when the layout allows
        (``kh == 1`` or ``kw == width``); otherwise one copy. Gradients flow through it.

    Raises:
        TypeError: if a kernel size is not an int.
        ValueError: if the input is not 4-D, a kernel size is below 1, or the kernel does
            not divide the input.
    """
    kh, kw = _kernel_size("tile", input, kernel)
    # BEGIN SOLUTION task4_3
    batch, channel, height, width = input.shape
    nh, nw = height // kh, width // kw
    windows = _windows(input, kh, kw).permute(0, 1, 2, 4, 3, 5)
    return windows.contiguous().view(batch, channel, nh, nw, kh * kw), nh, nw
    # END SOLUTION


@functools.lru_cache(maxsize=32)
def _averaging_values(kh: int, kw: int, width: int) -> npt.NDArray[np.float64]:
    """The values of ``_averaging_matrix``, kept per size (host memory, read-only)."""
    matrix = np.zeros((kh * width, width // kw))
    x = np.arange(kh * width) % width
    matrix[np.arange(kh * width), x // kw] = 1.0 / (kh * kw)
    matrix.flags.writeable = False  # each use copies it (a shared tensor could be written)
    return matrix


def _averaging_matrix(kh: int, kw: int, width: int, backend: TensorBackend) -> Tensor:
    """``(kh * width, width / kw)``: ``1 / (kh * kw)`` at ``[i * width + x, x // kw]``.

    Made at each call on the input's backend, from values computed once per size: no
    cache keeps tensors (device memory on a GPU backend) alive after the graph that used
    them is gone, and building the values took a sixth of a LeNet step's pooling.
    """
    return from_numpy(_averaging_values(kh, kw, width).copy(), backend=backend)


def _all_finite(t: Tensor) -> bool:
    """Whether every element of ``t`` is finite (no inf, no NaN).

    A sum is finite only if every term is (an inf or NaN term makes it inf or NaN), so a
    finite sum answers yes in one pass; an infinite one is checked element by element
    (finite terms can overflow a sum). Host storage is read in place.
    """
    storage = t.contiguous().tuple()[0]
    values = storage[: t.size] if isinstance(storage, np.ndarray) else t.to_numpy()
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow or inf - inf: no
        total = np.add.reduce(values, axis=None)
    if np.isfinite(total):
        return True
    return bool(np.isfinite(values).all())


class Avgpool2dFun(Function):
    """Mean over each ``kh x kw`` window, from that window's elements only.

    The fast way is one matrix product: the contiguous input viewed as bands of ``kh``
    image rows (``kh * width`` values) times a fixed averaging matrix, ``1 / (kh * kw)``
    where a band's value belongs to a window and 0 elsewhere. It is exact while every
    value is finite; but it multiplies each value by the zeros of the other windows of
    its band, and ``inf * 0`` is NaN: one ``inf`` would spoil the whole band. Any ``inf``
    or NaN in the input makes its own window's mean non-finite, so a product whose means
    are all finite is the answer; otherwise the means are taken again window by window
    (two folds, the ``kw`` values of each window row and then the ``kh`` row sums), as
    ``torch.nn.functional.avg_pool2d`` computes them. The backward pass does the same
    with the gradient: one product with the matrix's transpose, or spread window by window.
    (The window-by-window way alone made a LeNet step 2.4 times slower.) (``avgpool2d``
    runs ``conv.AvgpoolKernelFun`` instead on a backend with pooling kernels.)
    """

    grad_fn_name = "AvgPool2DBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx: Context, input: Tensor, kh: int, kw: int) -> Tensor:
        """Average each window."""
        # BEGIN SOLUTION task4_3
        f = input.backend
        batch, channel, height, width = input.shape
        nh, nw = height // kh, width // kw
        planes = batch * channel
        x = input.contiguous()
        matrix = _averaging_matrix(kh, kw, width, f)
        ctx.save_for_backward(input.shape, kh, kw, matrix)
        with np.errstate(invalid="ignore"):  # inf * 0, caught just below (simple backend)
            out = f.matrix_multiply(x.view(planes * nh, kh * width), matrix)
        if not _all_finite(out):  # an inf or NaN: each window from its own values
            rows = f.add_reduce(x.view(planes * height * nw, kw), 1)  # each window row
            total = f.add_reduce(rows.view(planes * nh, kh, nw), 1)  # each window
            out = f.div_zip(total.view(planes * nh * nw), _const(kh * kw, f))
        return out.view(batch, channel, nh, nw)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """Each input of a window gets the window's gradient over ``kh * kw``."""
        # BEGIN SOLUTION task4_3
        shape, kh, kw, matrix = ctx.saved_values
        f = grad_output.backend
        batch, channel, height, width = shape
        nh, nw = height // kh, width // kw
        planes = batch * channel
        g = grad_output.contiguous()
        if _all_finite(g):  # no inf: the product is exact
            return f.matrix_multiply(g.view(planes * nh, nw), matrix.permute(1, 0)).view(*shape)
        share = f.div_zip(g.view(planes * nh * nw, 1), _const(kh * kw, f))
        # Over each window's columns, then its rows: two broadcasts of long rows.
        wide = f.id_map(share, grad_output.zeros((planes * nh * nw, kw)))
        grad = f.id_map(
            wide.view(planes * nh, 1, nw * kw), grad_output.zeros((planes * nh, kh, nw * kw))
        )
        return grad.view(*shape)
        # END SOLUTION


class Maxpool2dFun(Function):
    """Max over each ``kh x kw`` window."""

    grad_fn_name = "MaxPool2DWithIndicesBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx: Context, input: Tensor, kh: int, kw: int) -> Tensor:
        """Max of each window."""
        # BEGIN SOLUTION task4_3
        f = input.backend
        windows = _windows(input, kh, kw)
        top = f.max_reduce(f.max_reduce(windows, 5), 3)
        ctx.save_for_backward(windows, top)
        return top.view(*input.shape[:2], input.shape[2] // kh, input.shape[3] // kw)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient goes to the window's maximum, split evenly between ties."""
        # BEGIN SOLUTION task4_3
        windows, top = ctx.saved_values
        f = grad_output.backend
        batch, channel, nh, kh, nw, kw = windows.shape
        mask = is_max(windows, top)  # a NaN in a window is its maximum, as in PyTorch
        count = f.add_reduce(f.add_reduce(mask, 5), 3)
        g = grad_output.contiguous().view(batch, channel, nh, 1, nw, 1)
        grad = f.mul_zip(mask, f.mul_zip(g, f.inv_map(count)))
        return grad.view(batch, channel, nh * kh, nw * kw)
        # END SOLUTION


def avgpool2d(input: Tensor, kernel: tuple[int, int]) -> Tensor:
    """Average pooling: ``(batch, channel, h, w)`` to ``(batch, channel, h / kh, w / kw)``.

    Raises:
        TypeError: if a kernel size is not an int.
        ValueError: if the input is not 4-D, a kernel size is below 1, or the kernel does
            not divide the input.
    """
    kh, kw = _kernel_size("avgpool2d", input, kernel)
    if pool_kernels_for(input.backend) is not None:  # the backend's own loops
        return AvgpoolKernelFun.apply(input, kh, kw)
    return Avgpool2dFun.apply(input, kh, kw)


def maxpool2d(input: Tensor, kernel: tuple[int, int]) -> Tensor:
    """Max pooling: ``(batch, channel, h, w)`` to ``(batch, channel, h / kh, w / kw)``.

    The gradient of a window goes to its maximum; tied maxima share it equally (as
    ``torch.amax`` does; ``torch.nn.functional.max_pool2d`` gives it all to one of them).
    A NaN is a window's maximum and takes its gradient, as in ``max_pool2d``.

    Raises:
        TypeError: if a kernel size is not an int.
        ValueError: if the input is not 4-D, a kernel size is below 1, or the kernel does
            not divide the input.
    """
    kh, kw = _kernel_size("maxpool2d", input, kernel)
    return Maxpool2dFun.apply(input, kh, kw)


# ----------------------------------------------------------------------------- max, argmax


def max(input: Tensor, dim: int | None = None) -> Tensor:
    """The maximum over ``dim`` (kept with size 1, as ``torch.amax(keepdim=True)``).

    With ``dim=None`` the maximum of every element, shape ``(1,)``. The gradient goes to
    the maximal elements; ties share it equally, as with ``torch.amax``, whose rule this
    keeps for a NaN too: the maximum is NaN and so is its gradient. (mt-tensor's ``Max``
    with ``split=True, amax=True``.)
    """
    _check_tensor(input, "max")
    d = check_reduction_dim("max", dim, input.shape)
    # BEGIN SOLUTION task4_4
    if d is None:
        return Max.apply(input.contiguous().view(input.numel()), 0, True, True)
    return Max.apply(input, d, True, True)
    # END SOLUTION


def argmax(input: Tensor, dim: int) -> Tensor:
    """A one-hot tensor marking the maximum along ``dim`` (a constant, no gradient).

    Among tied maxima the first is marked, as ``torch.argmax`` picks the first index; a
    NaN is the maximum, as there.
    """
    _check_tensor(input, "argmax")
    dim = check_reduction_dim("argmax", dim, input.shape)
    # BEGIN SOLUTION task4_4
    return max_mask(input.detach(), dim)[2]
    # END SOLUTION


# ------------------------------------------------------------------------ softmax family


def _shifted(a: Tensor, dim: int) -> Tensor:
    """``a - max(a, dim)``: at most 0, so ``exp`` cannot overflow."""
    f = a.backend
    return f.add_zip(a, f.neg_map(f.max_reduce(a, dim)))


class SoftmaxFun(Function):
    """``exp(a) / sum(exp(a), dim)``, computed stably."""

    grad_fn_name = "SoftmaxBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        """Softmax."""
        # BEGIN SOLUTION task4_4
        f = a.backend
        e = f.exp_map(_shifted(a, dim))
        out = f.mul_zip(e, f.inv_map(f.add_reduce(e, dim)))
        ctx.save_for_backward(out, dim)
        return out
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input (from the saved output)."""
        # BEGIN SOLUTION task4_4
        s, dim = ctx.saved_values
        f = s.backend
        inner = f.add_reduce(f.mul_zip(grad_output, s), dim)
        grad: Tensor = f.mul_zip(s, f.add_zip(grad_output, f.neg_map(inner)))
        return grad
        # END SOLUTION


class LogSoftmaxFun(Function):
    """``a - log(sum(exp(a), dim))``, computed stably."""

    grad_fn_name = "LogSoftmaxBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        """Log-softmax."""
        # BEGIN SOLUTION task4_4
        f = a.backend
        shifted = _shifted(a, dim)
        log_total = f.log_map(f.add_reduce(f.exp_map(shifted), dim))
        out = f.add_zip(shifted, f.neg_map(log_total))
        ctx.save_for_backward(out, dim)
        return out
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input (from the saved output)."""
        # BEGIN SOLUTION task4_4
        out, dim = ctx.saved_values
        f = out.backend
        total = f.add_reduce(grad_output, dim)
        grad: Tensor = f.add_zip(grad_output, f.neg_map(f.mul_zip(f.exp_map(out), total)))
        return grad
        # END SOLUTION


def softmax(input: Tensor, dim: int) -> Tensor:
    """Softmax over ``dim``: non-negative values summing to 1; stable for large inputs."""
    return SoftmaxFun.apply(input, _dim(input, dim, "softmax"))


def logsoftmax(input: Tensor, dim: int) -> Tensor:
    """Log of the softmax over ``dim``, via the log-sum-exp trick (no overflow, no log 0)."""
    return LogSoftmaxFun.apply(input, _dim(input, dim, "logsoftmax"))


# ----------------------------------------------------------------------------------- dropout


class DropoutFun(Function):
    """Multiply by a fixed mask (given as a numpy array, a plain value)."""

    grad_fn_name = "MulBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx: Context, a: Tensor, mask: npt.NDArray[np.float64]) -> Tensor:
        """The input with the dropped elements zeroed and the rest scaled."""
        # BEGIN SOLUTION task4_4
        m = from_numpy(mask, backend=a.backend)
        ctx.save_for_backward(m)
        return a.backend.mul_zip(a, m)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input."""
        # BEGIN SOLUTION task4_4
        (m,) = ctx.saved_values
        return grad_output.backend.mul_zip(grad_output, m)
        # END SOLUTION


def dropout(
    input: Tensor,
    rate: float,
    ignore: bool = False,
    seed: int | np.random.Generator | None = None,
) -> Tensor:
    """Zero each element with probability ``rate``; scale the rest by ``1 / (1 - rate)``.

    This is PyTorch's (inverted) dropout: the expected value of each element is unchanged,
    so evaluation needs no rescaling. ``rate=0`` and ``ignore=True`` (evaluation) return
    ``input`` itself; ``rate=1`` returns zeros (with a zero gradient).

    Args:
        input: any tensor.
        rate: the probability of dropping an element, in ``[0, 1]``.
        ignore: return ``input`` unchanged (pass ``not module.training``).
        seed: an int or a ``numpy.random.Generator`` for the mask; the global random
            state is never used.

    Raises:
        TypeError: if ``input`` is not a Tensor, ``rate`` not a real number, or ``seed``
            neither an int, a Generator nor None.
        ValueError: if ``rate`` is not in ``[0, 1]`` or ``seed`` is negative.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"dropout takes a Tensor, got {type(input).__name__}")
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real):
        raise TypeError(f"dropout rate must be a real number, got {type(rate).__name__} {rate!r}")
    rate = float(rate)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"dropout rate must be in [0, 1], got {rate}")
    check_seed(seed, "dropout")
    # BEGIN SOLUTION task4_4
    if ignore or rate == 0.0:
        return input
    if rate == 1.0:
        return input * 0.0
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    keep = rng.random(input.shape) >= rate
    return DropoutFun.apply(input, keep * (1.0 / (1.0 - rate)))
    # END SOLUTION
