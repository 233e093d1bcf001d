"""Layers: ``Linear``, ``Conv1d`` and ``Conv2d``, with PyTorch's default initialisation.

Weights and biases are drawn uniformly from ``[-1/sqrt(fan_in), 1/sqrt(fan_in)]``, where
``fan_in`` is the number of inputs one output sums over (``in_size``, or ``in_channels``
times the kernel size): what ``torch.nn.Linear``/``Conv*d`` do by default, which keeps the
scale of activations steady from layer to layer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from minitorch.operators import Module, Parameter
from minitorch.tensor import Tensor, TensorBackend, from_numpy, seeded_rng

from .conv import conv1d, conv2d

__all__ = ["Conv1d", "Conv2d", "Linear"]

Seed = int | np.random.Generator | None


def _uniform(
    shape: tuple[int, ...],
    fan_in: int,
    backend: TensorBackend | str | None,
    rng: np.random.Generator,
) -> Parameter:
    bound = 1.0 / math.sqrt(fan_in)
    return Parameter(from_numpy(rng.uniform(-bound, bound, shape), backend=backend))


def _positive(name: str, **sizes: int) -> tuple[int, ...]:
    """The sizes as Python ints (NumPy's integers are ints), each checked positive.

    Raises:
        TypeError: for a size that is not an integer (a bool, a float, a string).
        ValueError: for a size below 1.
    """
    out = []
    for key, value in sizes.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name}: {key} must be an int, got {type(value).__name__} {value!r}")
        if value < 1:
            raise ValueError(f"{name}: {key} must be a positive int, got {int(value)}")
        out.append(int(value))
    return tuple(out)


class Linear(Module):
    """Fully connected layer ``y = x @ weight + bias``.

    Args:
        in_size: inputs per example.
        out_size: outputs per example.
        backend: where the parameters live (default: ``get_default_backend()``).
        seed: an int or ``numpy.random.Generator`` for the initial values.

    Attributes:
        weight: ``(in_size, out_size)``, as in the course (``torch.nn.Linear`` stores the
            transpose).
        bias: ``(out_size,)``.
    """

    def __init__(
        self,
        in_size: int,
        out_size: int,
        backend: TensorBackend | str | None = None,
        seed: Seed = None,
    ) -> None:
        super().__init__()
        in_size, out_size = _positive("Linear", in_size=in_size, out_size=out_size)
        rng = seeded_rng(seed, "Linear")
        self.in_size, self.out_size = in_size, out_size
        self.weight = _uniform((in_size, out_size), in_size, backend, rng)
        self.bias = _uniform((out_size,), in_size, backend, rng)

    def forward(self, x: Tensor) -> Tensor:
        """Map ``(batch, in_size)`` to ``(batch, out_size)``, as ``torch.nn.Linear``.

        Any leading dimensions work (``(*, in_size)`` to ``(*, out_size)``), and so does
        an unbatched ``(in_size,)``, which gives ``(out_size,)``.

        Raises:
            ValueError: if the last dimension is not ``in_size``.
        """
        if x.dims == 0 or x.shape[-1] != self.in_size:
            raise ValueError(
                f"Linear expects input of shape (batch, {self.in_size}) or "
                f"({self.in_size},), got {x.shape}"
            )
        if x.dims == 2:
            out: Tensor = x @ self.weight.value + self.bias.value
            return out
        lead = x.shape[:-1]
        flat: Tensor = x.contiguous().view(-1, self.in_size) @ self.weight.value + self.bias.value
        return flat.view(*lead, self.out_size)


class Conv1d(Module):
    """1-D convolution layer (the course's: output as wide as the input) plus a bias.

    Args:
        in_channels: channels of the input.
        out_channels: channels of the output.
        kernel_width: width of the kernel.
        backend: where the parameters live (default: ``get_default_backend()``).
        seed: an int or ``numpy.random.Generator`` for the initial values.

    Attributes:
        weight: ``(out_channels, in_channels, kernel_width)``.
        bias: ``(out_channels,)``, added inside the convolution kernel.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_width: int,
        backend: TensorBackend | str | None = None,
        seed: Seed = None,
    ) -> None:
        super().__init__()
        in_channels, out_channels, kernel_width = _positive(
            "Conv1d", in_channels=in_channels, out_channels=out_channels, kernel_width=kernel_width
        )
        rng = seeded_rng(seed, "Conv1d")
        fan_in = in_channels * kernel_width
        self.weight = _uniform((out_channels, in_channels, kernel_width), fan_in, backend, rng)
        self.bias = _uniform((out_channels,), fan_in, backend, rng)

    def forward(self, x: Tensor) -> Tensor:
        """Map ``(batch, in_channels, width)`` to ``(batch, out_channels, width)``.

        An unbatched ``(in_channels, width)`` gives ``(out_channels, width)``, as PyTorch.
        """
        if x.dims == 2:
            return _unbatched(conv1d, x, self.weight.value, self.bias.value)
        return conv1d(x, self.weight.value, self.bias.value)


class Conv2d(Module):
    """2-D convolution layer (the course's: output the size of the input) plus a bias.

    Args:
        in_channels: channels of the input.
        out_channels: channels of the output.
        kernel: ``(kh, kw)``, or one int for a square kernel.
        backend: where the parameters live (default: ``get_default_backend()``).
        seed: an int or ``numpy.random.Generator`` for the initial values.

    Attributes:
        weight: ``(out_channels, in_channels, kh, kw)``.
        bias: ``(out_channels,)``, added inside the convolution kernel.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel: int | Sequence[int],
        backend: TensorBackend | str | None = None,
        seed: Seed = None,
    ) -> None:
        super().__init__()
        if isinstance(kernel, (int, np.integer)):
            kh, kw = kernel, kernel
        elif isinstance(kernel, (tuple, list)) and len(kernel) == 2:
            kh, kw = kernel
        else:
            raise TypeError(f"Conv2d: kernel must be an int or a pair (kh, kw), got {kernel!r}")
        in_channels, out_channels, kh, kw = _positive(
            "Conv2d", in_channels=in_channels, out_channels=out_channels, kh=kh, kw=kw
        )
        rng = seeded_rng(seed, "Conv2d")
        fan_in = in_channels * kh * kw
        self.weight = _uniform((out_channels, in_channels, kh, kw), fan_in, backend, rng)
        self.bias = _uniform((out_channels,), fan_in, backend, rng)

    def forward(self, x: Tensor) -> Tensor:
        """Map ``(batch, in_channels, h, w)`` to ``(batch, out_channels, h, w)``.

        An unbatched ``(in_channels, h, w)`` gives ``(out_channels, h, w)``, as PyTorch.
        """
        if x.dims == 3:
            return _unbatched(conv2d, x, self.weight.value, self.bias.value)
        return conv2d(x, self.weight.value, self.bias.value)


def _unbatched(
    conv: Callable[[Tensor, Tensor, Tensor], Tensor], x: Tensor, weight: Tensor, bias: Tensor
) -> Tensor:
    """``conv`` of one unbatched example: a batch of one in, its only item out."""
    out = conv(x.contiguous().view(1, *x.shape), weight, bias)
    return out.contiguous().view(*out.shape[1:])
