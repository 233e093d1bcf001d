"""mt-nn's part of the op database, on every backend, against PyTorch.

The entries and the runner of ``minitorch.tensor.opdb`` (which describes them), for
``conv1d``, ``conv2d``, ``avgpool2d``, ``maxpool2d``, ``tile``, ``softmax``, ``logsoftmax``,
``max``, ``argmax``, ``dropout`` (``rate=0`` and in evaluation) and the losses.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch.nn as fn
from minitorch.autodiff import SGD
from minitorch.fast import FastBackend, PlainFastBackend
from minitorch.nn import Linear, conv1d, conv2d, cross_entropy, nll_loss, save_checkpoint
from minitorch.operators import Module, Parameter
from minitorch.tensor import IndexingError, SimpleBackend, TensorBackend
from minitorch.tensor.opdb import (
    SPECIAL,
    ErrorInput,
    OpDatabaseSuite,
    OpInfo,
    Sample,
    rng_for,
    sample_values,
    unary_samples,
)

Array = np.ndarray


def _cuda_backend() -> TensorBackend | None:
    """``CudaBackend`` where mt-cuda (its ``cuda`` extra) and a GPU or the simulator are there."""
    try:
        import minitorch.cuda as mc
    except ImportError:
        return None
    return mc.CudaBackend if mc.is_available() else None


CUDA = _cuda_backend()


def _tf() -> Any:
    import torch.nn.functional

    return torch.nn.functional


def _torch() -> Any:
    import torch

    return torch


def _conv1d_ref(x: Any, w: Any, b: Any) -> Any:
    kw = w.shape[-1]
    return _tf().conv1d(_tf().pad(x, (0, kw - 1)), w, b)


def _conv2d_ref(x: Any, w: Any, b: Any) -> Any:
    kh, kw = w.shape[-2:]
    return _tf().conv2d(_tf().pad(x, (0, kw - 1, 0, kh - 1)), w, b)


def _conv_samples(name: str, x: tuple[int, ...], w: tuple[int, ...]) -> list[Sample]:
    rng = rng_for(name)

    def v(*shape: int) -> Array:
        return sample_values(rng, shape, False)

    b = (w[0],)
    empty = (0, *x[1:])
    one = (1, w[1], *(1,) * (len(x) - 2))
    ones_w = (1, w[1], *(1,) * (len(w) - 2))
    # Without the huge finite values: whether big + big + -inf overflows to NaN or stays
    # -inf depends on the order of the sum, which is each kernel's own (PyTorch's too).
    special = np.resize(SPECIAL[np.abs(SPECIAL) < 1e300], x)
    return [
        Sample("general", (v(*x), v(*w), v(*b))),
        Sample("one", (v(*one), v(*ones_w), v(1))),
        Sample("empty", (v(*empty), v(*w), v(*b))),
        Sample("permuted", (v(*x), v(*w), v(*b)), ("permuted", "permuted", "contiguous")),
        Sample("strided", (v(*x), v(*w), v(*b)), ("strided", "offset", "strided")),
        Sample("offset", (v(*x), v(*w), v(*b)), ("offset", "contiguous", "offset")),
        Sample("special", (special, v(*w), v(*b)), grad=False),
    ]


def _conv_errors(
    conv: Callable[..., Any], ref: Callable[..., Any], x: tuple[int, ...], w: tuple[int, ...]
) -> list[ErrorInput]:
    def channels(lib: str, make: Callable[..., Any]) -> Any:
        bad = (w[0], w[1] + 1, *w[2:])
        return (conv if lib == "minitorch" else ref)(
            make(np.ones(x)), make(np.ones(bad)), make(np.ones(w[0]))
        )

    def rank(lib: str, make: Callable[..., Any]) -> Any:
        return (conv if lib == "minitorch" else ref)(
            make(np.ones(x[1:-1])), make(np.ones(w)), make(np.ones(w[0]))
        )

    return [
        ErrorInput("input channels that are not the weight's", channels, ValueError, r"channel"),
        ErrorInput("an input of too few dimensions", rank, ValueError, r"dims|dimension|shape"),
    ]


def _pool_samples(name: str) -> list[Sample]:
    rng = rng_for(name)

    def v(*shape: int) -> Array:
        return sample_values(rng, shape, False)

    band = np.array([[[[np.inf, 1, 2, 3], [1, 1, 2, 3], [4, 5, 6, 7], [4, 5, 6, 7]]]])
    nan_band = band.copy()
    nan_band[0, 0, 0, 0] = np.nan
    return [
        Sample("general", (v(2, 3, 4, 6),), kwargs={"kernel": (2, 3)}),
        Sample("general", (v(1, 2, 4, 4),), kwargs={"kernel": (4, 1)}),
        Sample("one", (v(1, 1, 1, 1),), kwargs={"kernel": (1, 1)}),
        Sample("empty", (v(0, 2, 4, 4),), kwargs={"kernel": (2, 2)}),
        Sample("permuted", (v(2, 2, 4, 4),), ("permuted",), kwargs={"kernel": (2, 2)}),
        Sample("strided", (v(2, 2, 4, 4),), ("strided",), kwargs={"kernel": (2, 2)}),
        Sample("offset", (v(2, 2, 4, 4),), ("offset",), kwargs={"kernel": (2, 2)}),
        Sample("special", (band,), kwargs={"kernel": (2, 2)}, grad=False),
        Sample("special", (nan_band,), kwargs={"kernel": (2, 2)}, grad=False),
        Sample(
            "special", (np.resize(SPECIAL, (1, 1, 4, 4)),), kwargs={"kernel": (2, 2)}, grad=False
        ),
    ]


def _pool_errors(pool: Callable[..., Any], ref: Callable[..., Any]) -> list[ErrorInput]:
    def rank(lib: str, make: Callable[..., Any]) -> Any:
        return (pool if lib == "minitorch" else ref)(make(np.ones((4, 4))), kernel=(2, 2))

    def too_big(lib: str, make: Callable[..., Any]) -> Any:
        return (pool if lib == "minitorch" else ref)(make(np.ones((1, 1, 2, 2))), kernel=(3, 3))

    return [
        ErrorInput("a 2-d input", rank, (ValueError, IndexingError), r"4|dims|dimension|shape"),
        ErrorInput(
            "a kernel larger than the input",
            too_big,
            (ValueError, IndexingError),
            r"kernel|divide|larger",
        ),
    ]


def _dim_samples(name: str, positive: bool = False) -> list[Sample]:
    rng = rng_for(name)

    def v(*shape: int) -> Array:
        return sample_values(rng, shape, positive)

    out = []
    for shape, layout in (((2, 3), "contiguous"), ((2, 3, 4), "contiguous"), ((3, 4), "permuted"),
                          ((3, 4), "strided"), ((3, 4), "offset"), ((1,), "contiguous"),
                          ((0, 3), "contiguous")):  # fmt: skip
        kind = {"contiguous": "general"}.get(layout, layout)
        if shape == (1,):
            kind = "one"
        if 0 in shape:
            kind = "empty"
        for d in sorted({0, len(shape) - 1, -1}):
            if shape[d] == 0:
                continue
            out.append(Sample(kind, (v(*shape),), (layout,), {"dim": d}))
    special = np.stack([SPECIAL, SPECIAL[::-1]])
    out.append(Sample("special", (special,), (), {"dim": 1}, grad=False))
    return out


def _dim_errors(fn: Callable[..., Any], ref: Callable[..., Any]) -> list[ErrorInput]:
    def bad(lib: str, make: Callable[..., Any]) -> Any:
        return (fn if lib == "minitorch" else ref)(make(np.ones((2, 3))), dim=2)

    return [ErrorInput("dim 2 of a 2-d tensor", bad, IndexingError, r"dim")]


def _argmax_ref(x: Any, dim: int) -> Any:
    torch = _torch()
    idx = torch.argmax(x, dim, keepdim=True)
    return torch.zeros_like(x).scatter_(dim, idx, 1.0)


def _tile(x: Any, kernel: tuple[int, int]) -> Any:
    return fn.tile(x, kernel)[0]


def _tile_ref(x: Any, kernel: tuple[int, int]) -> Any:
    b, c, h, w = x.shape
    kh, kw = kernel
    t = x.contiguous().view(b, c, h // kh, kh, w // kw, kw).permute(0, 1, 2, 4, 3, 5)
    return t.reshape(b, c, h // kh, w // kw, kh * kw)


def _loss_samples(name: str) -> list[Sample]:
    rng = rng_for(name)

    def v(*shape: int) -> Array:
        return sample_values(rng, shape, False)

    return [
        Sample("general", (v(4, 3),), kwargs={"target": [0, 2, 1, 2]}),
        Sample("one", (v(1, 2),), kwargs={"target": [1]}),
        Sample("permuted", (v(3, 5),), ("permuted",), kwargs={"target": [4, 0, 2]}),
        Sample("strided", (v(3, 4),), ("strided",), kwargs={"target": [3, 3, 0]}),
        Sample(
            "special",
            (np.array([[1e308, -1e308, 0.0], [5e-324, 1.0, -1.0]]),),
            kwargs={"target": [0, 1]},
            grad=False,
        ),
    ]


def _loss_errors(fn: Callable[..., Any], ref: Callable[..., Any]) -> list[ErrorInput]:
    def label(lib: str, make: Callable[..., Any]) -> Any:
        return (fn if lib == "minitorch" else ref)(make(np.ones((2, 3))), target=[0, 3])

    def count(lib: str, make: Callable[..., Any]) -> Any:
        return (fn if lib == "minitorch" else ref)(make(np.ones((2, 3))), target=[0, 1, 2])

    return [
        ErrorInput("a label out of range", label, ValueError, r"3|range|class"),
        ErrorInput("more labels than rows", count, ValueError, r"3|2|labels|rows|batch"),
    ]


def _ce_ref(x: Any, target: list[int]) -> Any:
    return _tf().cross_entropy(x, _torch().tensor(target)).reshape(1)


def _nll_ref(x: Any, target: list[int]) -> Any:
    return _tf().nll_loss(x, _torch().tensor(target)).reshape(1)


def _linear(x: Any, w: Any, b: Any) -> Any:
    """``Linear`` built with numpy integer sizes, its parameters set to ``w`` and ``b``."""
    layer = Linear(np.int64(w.shape[0]), np.int64(w.shape[1]), backend=x.backend)
    layer.weight.value, layer.bias.value = w, b
    return layer(x)


def _linear_ref(x: Any, w: Any, b: Any) -> Any:
    return _tf().linear(x, w.T, b)


def _linear_samples() -> list[Sample]:
    rng = rng_for("linear")

    def v(*shape: int) -> Array:
        return sample_values(rng, shape, positive=False)

    return [
        Sample("general", (v(4, 3), v(3, 2), v(2))),
        Sample("empty", (v(0, 3), v(3, 2), v(2))),
        Sample("permuted", (v(4, 3), v(3, 2), v(2)), ("permuted", "permuted", "contiguous")),
    ]


def _linear_errors() -> list[ErrorInput]:
    def float_size(lib: str, make: Callable[..., Any]) -> Any:
        return Linear(2.5, 3) if lib == "minitorch" else _torch().nn.Linear(2.5, 3)

    def wrong_width(lib: str, make: Callable[..., Any]) -> Any:
        x, w, b = make(np.ones((2, 4))), make(np.ones((3, 2))), make(np.ones(2))
        return (_linear if lib == "minitorch" else _linear_ref)(x, w, b)

    return [
        ErrorInput("a float size", float_size, TypeError, r"in_size"),
        ErrorInput("an input of the wrong width", wrong_width, ValueError, r"3|4|shape"),
    ]


def _two_sgd_steps(x: Any, lr: float) -> Any:
    """Two optimizers over one parameter: ``x - lr * g - lr / 2 * g`` for ``g = 2 x``."""
    w = (x.detach() * 1.0).requires_grad_()
    p = Parameter(w)
    (w * w).sum().backward()
    SGD([p], lr=lr).step()
    SGD([p], lr=lr / 2).step()
    return p.value.detach()


def _two_sgd_steps_ref(x: Any, lr: float) -> Any:
    torch = _torch()
    w = x.detach().clone().requires_grad_()
    (w * w).sum().backward()
    torch.optim.SGD([w], lr=lr).step()
    torch.optim.SGD([w], lr=lr / 2).step()
    return w.detach()


def _sgd_errors() -> list[ErrorInput]:
    def negative(lib: str, make: Callable[..., Any]) -> Any:
        if lib == "minitorch":
            return SGD([Parameter(make(np.ones(2)))], lr=-0.1)
        return _torch().optim.SGD([make(np.ones(2)).requires_grad_()], lr=-0.1)

    return [ErrorInput("a negative learning rate", negative, ValueError, r"learning rate")]


class _Holder(Module):
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.w = Parameter(value)


def _mode_after_saving_over_a_private_file(lib: str, x: Any) -> float:
    """The mode of a ``chmod 600`` checkpoint after a second save over it."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.npz")
        for first in (True, False):
            if lib == "minitorch":
                save_checkpoint(_Holder(x), path)
            else:
                _torch().save({"w": x}, path)
            if first:
                os.chmod(path, 0o600)
        return float(stat.S_IMODE(os.stat(path).st_mode))


def _saved_mode(x: Any) -> Any:
    return x.zeros((1,)) + _mode_after_saving_over_a_private_file("minitorch", x)


def _saved_mode_ref(x: Any) -> Any:
    return _torch().tensor([_mode_after_saving_over_a_private_file("torch", x)])


def _save_errors() -> list[ErrorInput]:
    def directory(lib: str, make: Callable[..., Any]) -> Any:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "model.npz")
            os.mkdir(path)
            if lib == "minitorch":
                return save_checkpoint(_Holder(make(np.ones(2))), path)
            return _torch().save({"w": make(np.ones(2))}, path)

    return [ErrorInput("a directory as the path", directory, IsADirectoryError, r"directory")]


def _nn_ops() -> list[OpInfo]:
    whole = "`x.sum()`, `x[i, j]`"
    keep = "`x.sum(dim)`, `x.mean(dim)`"
    x1, w1 = (2, 3, 5), (4, 3, 2)
    x2, w2 = (2, 2, 4, 4), (3, 2, 2, 2)
    return [
        OpInfo(
            "conv1d",
            "fn.conv1d (padded on the right)",
            conv1d,
            _conv1d_ref,
            _conv_samples("conv1d", x1, w1),
            _conv_errors(conv1d, _conv1d_ref, x1, w1),
            tol=1e-9,
            risky=True,  # its kernels write the output: the empty batch in a child
        ),
        OpInfo(
            "conv2d",
            "fn.conv2d (padded bottom and right)",
            conv2d,
            _conv2d_ref,
            _conv_samples("conv2d", x2, w2),
            _conv_errors(conv2d, _conv2d_ref, x2, w2),
            tol=1e-9,
            risky=True,  # its kernels write the output: the empty batch in a child
        ),
        OpInfo(
            "avgpool2d",
            "fn.avg_pool2d",
            fn.avgpool2d,
            lambda x, kernel: _tf().avg_pool2d(x, kernel),
            _pool_samples("avgpool2d"),
            _pool_errors(fn.avgpool2d, lambda x, kernel: _tf().avg_pool2d(x, kernel)),
            risky=True,  # its kernels write the output: the empty batch in a child
        ),
        OpInfo(
            "maxpool2d",
            "fn.max_pool2d",
            fn.maxpool2d,
            lambda x, kernel: _tf().max_pool2d(x, kernel),
            _pool_samples("maxpool2d"),
            _pool_errors(fn.maxpool2d, lambda x, kernel: _tf().max_pool2d(x, kernel)),
            risky=True,  # its kernels write the output: the empty batch in a child
        ),
        OpInfo(
            "tile",
            "Tensor.unfold (windows last)",
            _tile,
            _tile_ref,
            [s for s in _pool_samples("tile") if s.kind != "special"],
            _pool_errors(_tile, _tile_ref),
        ),
        OpInfo(
            "softmax",
            "torch.softmax",
            fn.softmax,
            lambda x, dim: _torch().softmax(x, dim),
            _dim_samples("softmax"),
            _dim_errors(fn.softmax, lambda x, dim: _torch().softmax(x, dim)),
        ),
        OpInfo(
            "logsoftmax",
            "torch.log_softmax",
            fn.logsoftmax,
            lambda x, dim: _torch().log_softmax(x, dim),
            _dim_samples("logsoftmax"),
            _dim_errors(fn.logsoftmax, lambda x, dim: _torch().log_softmax(x, dim)),
        ),
        OpInfo(
            "max(x, dim)",
            "torch.amax(keepdim=True)",
            fn.max,
            lambda x, dim: _torch().amax(x, dim, keepdim=True),
            _dim_samples("max"),
            _dim_errors(fn.max, lambda x, dim: _torch().amax(x, dim, keepdim=True)),
            differs=keep,
        ),
        OpInfo(
            "argmax(x, dim)",
            "torch.argmax, one-hot",
            fn.argmax,
            _argmax_ref,
            [s for s in _dim_samples("argmax") if s.kind != "special"],
            _dim_errors(fn.argmax, _argmax_ref),
            differentiable=False,
        ),
        OpInfo(
            "dropout(x, 0.0)",
            "fn.dropout(p=0)",
            lambda x: fn.dropout(x, 0.0),
            lambda x: _tf().dropout(x, 0.0),
            unary_samples("dropout0"),
            [
                ErrorInput(
                    "rate 1.5",
                    lambda lib, make: (
                        fn.dropout(make(np.ones(2)), 1.5)
                        if lib == "minitorch"
                        else _tf().dropout(make(np.ones(2)), 1.5)
                    ),
                    ValueError,
                    r"1\.5|rate",
                )
            ],
        ),
        OpInfo(
            "dropout(x, 0.5, ignore=True)",
            "fn.dropout(training=False)",
            lambda x: fn.dropout(x, 0.5, ignore=True),
            lambda x: _tf().dropout(x, 0.5, training=False),
            unary_samples("dropout-eval"),
            [
                ErrorInput(
                    "rate -0.1",
                    lambda lib, make: (
                        fn.dropout(make(np.ones(2)), -0.1, ignore=True)
                        if lib == "minitorch"
                        else _tf().dropout(make(np.ones(2)), -0.1, training=False)
                    ),
                    ValueError,
                    r"0\.1|rate",
                )
            ],
        ),
        OpInfo(
            "cross_entropy",
            "fn.cross_entropy",
            cross_entropy,
            _ce_ref,
            _loss_samples("ce"),
            _loss_errors(cross_entropy, _ce_ref),
            differs=whole,
        ),
        OpInfo(
            "nll_loss",
            "fn.nll_loss",
            nll_loss,
            _nll_ref,
            _loss_samples("nll"),
            _loss_errors(nll_loss, _nll_ref),
            differs=whole,
        ),
        OpInfo(
            "Linear(n, m)",
            "torch.nn.Linear (weight transposed)",
            _linear,
            _linear_ref,
            _linear_samples(),
            _linear_errors(),
            tol=1e-9,
        ),
        OpInfo(
            "SGD(...).step(), two optimizers",
            "torch.optim.SGD",
            _two_sgd_steps,
            _two_sgd_steps_ref,
            [
                Sample(
                    "general", (sample_values(rng_for("sgd"), (3, 2), False),), kwargs={"lr": 0.1}
                ),
                Sample("one", (np.array([1.5]),), kwargs={"lr": 0.5}),
            ],
            _sgd_errors(),
            differentiable=False,
        ),
        OpInfo(
            "save_checkpoint over a chmod 600 file (its mode)",
            "torch.save",
            _saved_mode,
            _saved_mode_ref,
            [Sample("general", (sample_values(rng_for("save"), (2, 3), False),))],
            _save_errors(),
            differentiable=False,
        ),
    ]


NN_OPS: list[OpInfo] = _nn_ops()
"""mt-nn's entries of the op database."""


class NNOps(OpDatabaseSuite):
    ops = NN_OPS
    ops_module = f"{__file__}:NN_OPS"  # the risky samples' child process loads this file


class TestSimpleNNOps(NNOps):
    backend = SimpleBackend


class TestFastNNOps(NNOps):
    backend = FastBackend


class TestPlainFastNNOps(NNOps):
    backend = PlainFastBackend


# The simulator's threads show numpy's warnings about the special samples (see mt-cuda's).
@pytest.mark.filterwarnings(
    "ignore:(invalid value|overflow|divide by zero) encountered:RuntimeWarning"
)
@pytest.mark.skipif(CUDA is None, reason="mt-cuda, or a GPU / the simulator, is missing")
class TestCudaNNOps(NNOps):
    backend = CUDA  # type: ignore[assignment]
