"""Losses: negative log-likelihood and cross-entropy over class labels."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import Context
from minitorch.tensor import Function, Tensor, from_numpy

from .functions import logsoftmax

__all__ = ["NLLLossFun", "cross_entropy", "nll_loss", "one_hot"]


def one_hot(labels: Sequence[int] | npt.ArrayLike, classes: int) -> npt.NDArray[np.float64]:
    """Return a ``(len(labels), classes)`` float array with a 1 at each label.

    Raises:
        TypeError: if ``classes`` is not an int.
        ValueError: for a label that is not an int in ``[0, classes)``, or ``classes`` < 1.
    """
    if not isinstance(classes, (int, np.integer)) or isinstance(classes, (bool, np.bool_)):
        raise TypeError(
            f"one_hot: classes must be an int, got {type(classes).__name__} {classes!r}"
        )
    if classes < 1:
        raise ValueError(f"one_hot: classes must be at least 1, got {classes}")
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"labels must be a 1-D sequence of class indices, got shape {arr.shape}")
    if arr.size and (
        not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= classes
    ):
        raise ValueError(f"labels must be ints in [0, {classes}), got {arr[:10].tolist()}...")
    out = np.zeros((arr.size, classes), dtype=np.float64)
    out[np.arange(arr.size), arr.astype(np.int64)] = 1.0
    return out


class NLLLossFun(Function):
    """``-mean_b sum_k target[b, k] * log_probs[b, k]`` for a constant ``target``.

    A term whose target is 0 counts 0, whatever its log-probability (``-inf`` included).
    """

    grad_fn_name = "NllLossBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx: Context, log_probs: Tensor, target: npt.NDArray[np.float64]) -> Tensor:
        """The mean negative log-likelihood, shape ``(1,)``."""
        f = log_probs.backend
        t = from_numpy(target, backend=f)
        scale = Tensor.make([-1.0 / log_probs.shape[0]], (1,), backend=f)
        ctx.save_for_backward(t, scale)
        # A class the target gives no weight adds nothing, even where its log-probability
        # is -inf (a probability that underflowed): PyTorch picks the target's entry, while
        # the product 0 * -inf would make the whole loss NaN. A (batch, classes) sum, on
        # the host (the classes are few).
        lp = log_probs.to_numpy()
        terms = np.where(target != 0.0, target * lp, 0.0)
        return Tensor.make([float(terms.sum()) * scale.item()], (1,), backend=f)

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """``-target * grad / batch``."""
        t, scale = ctx.saved_values
        f = t.backend
        grad: Tensor = f.mul_zip(t, f.mul_zip(grad_output, scale))
        return grad


def nll_loss(log_probs: Tensor, target: Sequence[int] | npt.ArrayLike | Tensor) -> Tensor:
    """Mean negative log-likelihood of the targets (as ``torch.nn.functional.nll_loss``).

    Args:
        log_probs: ``(batch, classes)`` log-probabilities (e.g. from ``logsoftmax``).
        target: ``batch`` class indices, or a ``(batch, classes)`` tensor or array of target
            probabilities (one-hot rows), treated as a constant.

    Returns:
        A ``(1,)`` tensor.

    Raises:
        ValueError: if the shapes do not match or a label is out of range.
    """
    if log_probs.dims != 2:
        raise ValueError(
            f"nll_loss expects (batch, classes) log-probabilities, got {log_probs.shape}"
        )
    batch, classes = log_probs.shape
    if isinstance(target, Tensor):
        dense = np.ascontiguousarray(target.to_numpy(), dtype=np.float64)
    else:
        arr = np.asarray(target)
        dense = one_hot(arr, classes) if arr.ndim == 1 else np.asarray(arr, dtype=np.float64)
    if dense.shape != (batch, classes):
        raise ValueError(
            f"nll_loss: target of shape {dense.shape} does not match log-probabilities of "
            f"shape {log_probs.shape}"
        )
    if batch == 0:
        raise ValueError("nll_loss of an empty batch")
    return NLLLossFun.apply(log_probs, np.ascontiguousarray(dense))


def cross_entropy(logits: Tensor, target: Sequence[int] | npt.ArrayLike | Tensor) -> Tensor:
    """``nll_loss(logsoftmax(logits, 1), target)``, as ``torch.nn.functional.cross_entropy``."""
    return nll_loss(logsoftmax(logits, 1), target)
