"""In-place writes, as PyTorch's: ``fill_``, ``zero_``, ``copy_``, ``uniform_``, ``normal_``.

Each writes through the backend's ``id_map`` into the tensor's own storage (so the storage's
version counter moves, and a ``backward`` through a saved copy of it refuses to run), after
the engine's check that the graph need not record the write (``check_in_place``).
``Tensor``'s methods of the same names call these.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import is_grad_enabled

from .autograd import engine
from .backends.protocol import _const
from .seeds import Seed, seeded_rng
from .tensor_data import TensorData, short_repr

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = ["copy_", "fill_", "normal_", "uniform_", "zero_"]


def _write(t: Tensor, op: str, src: Tensor) -> Tensor:
    """Write ``src`` (broadcast to ``t``'s shape) into ``t`` in place; return ``t``."""
    engine.check_in_place(t, op)
    t.backend.id_map(src, t)  # an in-place write: map bumps the version
    return t


def fill_(t: Tensor, value: float | Tensor) -> Tensor:
    """Fill ``t`` with a number or a one-element tensor, in place; return ``t``.

    Raises:
        TypeError: if ``value`` is neither a real number nor a one-element tensor.
        RuntimeError: outside ``no_grad()`` on a tensor that requires grad, or with a
            ``value`` that requires grad (the fill would not be recorded, and its gradient
            silently lost).
    """
    if isinstance(value, type(t)):
        if value.numel() != 1:
            raise TypeError(
                f"fill_ takes a number or a one-element tensor, got shape {value.shape}"
            )
        if value.history is not None and is_grad_enabled():
            engine.check_in_place(t, "fill_")  # raises if t requires grad
            raise RuntimeError(
                "fill_ with a tensor that requires grad outside no_grad(): MiniTorch "
                "cannot record the fill in the graph (PyTorch records FillBackward); use "
                "value.detach(), or an out-of-place operation such as "
                "zeros(shape) + value"
            )
        value = value.item()
    if not isinstance(value, numbers.Real):
        raise TypeError(f"fill_ takes a real number, got {type(value).__name__}")
    return _write(t, "fill_", _const(t, float(value), (1,) * t.dims))


def zero_(t: Tensor) -> Tensor:
    """Fill ``t`` with zeros in place; return ``t`` (the errors of ``fill_``)."""
    return _write(t, "zero_", _const(t, 0.0, (1,) * t.dims))


def copy_(t: Tensor, src: Tensor) -> Tensor:
    """Copy ``src``'s values into ``t`` in place (broadcast, from any backend); return ``t``.

    Raises:
        TypeError: if ``src`` is not a Tensor.
        IndexingError: if ``src``'s shape does not broadcast to ``t``'s.
        RuntimeError: outside ``no_grad()`` on a tensor that requires grad, or from one that
            does (the copy would not be recorded).
    """
    if not isinstance(src, type(t)):
        raise TypeError(f"copy_ takes a Tensor, got {type(src).__name__} {short_repr(src)}")
    if src.history is not None and is_grad_enabled():
        engine.check_in_place(t, "copy_")  # raises if t requires grad
        raise RuntimeError(
            "copy_ from a tensor that requires grad outside no_grad(): MiniTorch cannot "
            "record the copy in the graph; use src.detach() or an out-of-place operation"
        )
    src = src.to(t.backend)
    mine, theirs = t.tensor_data.storage, src.tensor_data.storage
    if isinstance(mine, np.ndarray) and np.may_share_memory(mine, theirs):
        src = t.backend.id_map(src)  # overlapping views: read a copy
    return _write(t, "copy_", src)


def uniform_(t: Tensor, a: float, b: float, seed: Seed) -> Tensor:
    """Fill ``t`` in place with values drawn uniformly from ``[a, b)``; return ``t``."""
    engine.check_in_place(t, "uniform_")  # before any value is drawn
    rng = seeded_rng(seed, "uniform_()")
    return _from_numpy(t, "uniform_", rng.uniform(float(a), float(b), t.numel()))


def normal_(t: Tensor, mean: float, std: float, seed: Seed) -> Tensor:
    """Fill ``t`` in place with values drawn from a normal distribution; return ``t``.

    Raises:
        ValueError: if ``std`` is negative.
    """
    if not std >= 0:
        raise ValueError(f"normal_ expects std >= 0.0, got std={std}")
    engine.check_in_place(t, "normal_")  # before any value is drawn
    rng = seeded_rng(seed, "normal_()")
    return _from_numpy(t, "normal_", rng.normal(float(mean), float(std), t.numel()))


def _from_numpy(t: Tensor, op: str, values: npt.NDArray[np.float64]) -> Tensor:
    src = type(t)(TensorData(values, t.shape), backend=t.backend)  # to the device, if t's is
    return _write(t, op, src)
