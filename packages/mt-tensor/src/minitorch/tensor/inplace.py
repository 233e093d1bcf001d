"""In-place writes, as PyTorch's: ``fill_``, ``copy_``, ``add_``, ``+=`` and the others.

``fill_``, ``zero_``, ``copy_``, ``uniform_``, ``normal_`` and the arithmetic ones (``add_``,
``sub_``, ``mul_``, ``div_``, ``+=``, ``-=``, ``*=``, ``/=``).

Each writes through the backend's ``id_map`` into the tensor's own storage (so the storage's
version counter moves, and a ``backward`` through a saved copy of it refuses to run), after
the engine's check that the graph need not record the write (``check_in_place``).
``Tensor``'s methods of the same names call these. A write never reads what it has
already overwritten: a source that shares memory with the destination is copied first
(``may_alias``), and a destination whose elements share memory (an ``expand``-ed view) is
refused, as PyTorch refuses it.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import is_grad_enabled

from .autograd import engine
from .backends.protocol import _const
from .seeds import Seed, seeded_rng
from .tensor_data import TensorData, broadcasts_to, short_repr

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = [
    "arithmetic_",
    "operator_",
    "check_writable",
    "copy_",
    "fill_",
    "may_alias",
    "normal_",
    "uniform_",
    "zero_",
]


def _extent(storage: Any) -> tuple[int, int] | None:
    """The address range ``[start, end)`` of a storage buffer, or None if unknown."""
    if isinstance(storage, np.ndarray):
        start = storage.__array_interface__["data"][0]
    else:
        face = getattr(storage, "__cuda_array_interface__", None)
        if face is None:
            return None
        start = face["data"][0]
    return start, start + storage.size * storage.itemsize


def may_alias(a: Tensor, b: Tensor) -> bool:
    """True if the storages of ``a`` and ``b`` may share memory (a write to one reaches the other).

    Host storages are compared with NumPy's ``may_share_memory``; device storages by their
    address ranges (``__cuda_array_interface__``); unknown kinds by identity.
    """
    x, y = a.tensor_data.storage, b.tensor_data.storage
    if x is y:
        return True
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        return bool(np.may_share_memory(x, y))
    ex, ey = _extent(x), _extent(y)
    if ex is None or ey is None:
        return False
    return ex[0] < ey[1] and ey[0] < ex[1]


def check_writable(t: Tensor, op: str) -> None:
    """Refuse an in-place write to a tensor some of whose elements share one memory location.

    Raises:
        RuntimeError: for a dimension of size above 1 with stride 0 (an ``expand``-ed view),
            with PyTorch's message.
    """
    td = t.tensor_data
    if td.size and any(n > 1 and s == 0 for n, s in zip(td.shape, td.strides, strict=True)):
        raise RuntimeError(
            f"{op}: unsupported operation: more than one element of the written-to tensor "
            f"refers to a single memory location (shape {td.shape}, strides {td.strides}: "
            "an expanded view). Please clone() the tensor before performing the operation."
        )


def _write(t: Tensor, op: str, src: Tensor) -> Tensor:
    """Write ``src`` (broadcast to ``t``'s shape) into ``t`` in place; return ``t``."""
    engine.check_in_place(t, op)
    check_writable(t, op)
    t.backend.id_map(src, t)  # an in-place write: map bumps the version
    return t


def arithmetic_(
    t: Tensor,
    op: str,
    other: Tensor,
    compute: Callable[[Tensor, Tensor], Tensor],
    into: Callable[[Tensor, Tensor, Tensor], Any] | None = None,
) -> Tensor:
    """``t op= other`` in place: ``compute(t, other)``, written into ``t``'s storage; return ``t``.

    ``into(x, y, out)``, if given, writes what ``compute(x, y)`` returns straight into
    ``out`` (a zip with ``out=``). It is used when that is safe: ``t`` contiguous (no two
    elements share memory), ``other`` broadcasting to ``t``'s shape and sharing no memory
    with it. Otherwise the result is computed into a new buffer first and copied, so an
    ``other`` that overlaps ``t`` (``x += x.T``) reads the old values. Either way the
    storage's version counter moves (a graph that saved ``t`` refuses its backward), and
    every view of the storage sees the new values.

    Raises:
        RuntimeError: outside ``no_grad()`` on a leaf that requires grad (PyTorch's
            message), on a tensor a recorded operation made, or with an ``other`` that
            requires grad (the write would not be recorded, its gradient silently lost);
            if the result's broadcast shape is not ``t``'s; on an expanded view.
    """
    if other.history is not None and is_grad_enabled():
        engine.check_in_place(t, op)  # raises if t requires grad
        raise RuntimeError(
            f"{op} with an operand that requires grad outside no_grad(): MiniTorch cannot "
            "record an in-place operation in the graph; use an out-of-place operation "
            "(x = x + y) or other.detach()"
        )
    engine.check_in_place(t, op)
    check_writable(t, op)
    if (
        into is not None
        and t.is_contiguous()
        and (other.shape == t.shape or broadcasts_to(other.shape, t.shape))
        and not may_alias(t, other)
    ):
        into(t.detach(), other.detach(), t)  # one pass, no buffer: the version moves
        return t
    result = compute(t.detach(), other.detach())
    if result.shape != t.shape:
        raise RuntimeError(
            f"{op}: output with shape {list(t.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    t.backend.id_map(result, t)  # a new buffer into t's storage: the version moves
    return t


def operator_(
    op: str, compute: Callable[[Any, Any], Any], alpha: bool = False
) -> Callable[..., Tensor]:
    """The method ``Tensor.<op>``: ``t.<op>(b)`` is ``arithmetic_`` of ``compute(t, b)``.

    With ``alpha``, the method also takes ``alpha`` (``t.add_(b, alpha=2)``: ``t + 2 * b``).
    """
    into = _INTO.get(compute.__name__)

    def scaled(t: Tensor, b: Any, *, alpha: float = 1.0) -> Tensor:
        scale = float(alpha)
        return arithmetic_(
            t,
            op,
            t._ensure_tensor(b),
            lambda x, y: compute(x, y * scale),
            None if into is None else lambda x, y, out: into(x, y, out, scale),
        )

    def plain(t: Tensor, b: Any) -> Tensor:
        return arithmetic_(
            t,
            op,
            t._ensure_tensor(b),
            compute,
            None if into is None else lambda x, y, out: into(x, y, out, 1.0),
        )

    symbol = _SYMBOL[compute.__name__]
    method: Callable[..., Tensor] = scaled if alpha else plain
    what = f"``self {symbol} alpha * b``" if alpha else f"``self {symbol} b``"
    method.__name__ = method.__qualname__ = _DUNDER.get(op, op)
    method.__doc__ = f"``{op}``: {what} in place; return self (errors: ``inplace.arithmetic_``)."
    return method


def _scaled(y: Tensor, scale: float) -> Tensor:
    """``y * scale`` on ``y``'s backend (``y`` itself for 1: the same values)."""
    if scale == 1.0:
        return y
    return y.backend.mul_zip(y, _const(y, scale, ()))


def _add_into(x: Tensor, y: Tensor, out: Tensor, scale: float) -> Any:
    return x.backend.add_zip(x, _scaled(y, scale), out)


def _sub_into(x: Tensor, y: Tensor, out: Tensor, scale: float) -> Any:
    # x - s * y is x + (-s) * y, bit for bit: negation is exact and rounding symmetric.
    minus = y.backend.neg_map(y) if scale == 1.0 else _scaled(y, -scale)
    return x.backend.add_zip(x, minus, out)


def _mul_into(x: Tensor, y: Tensor, out: Tensor, scale: float) -> Any:
    return x.backend.mul_zip(x, _scaled(y, scale), out)


def _div_into(x: Tensor, y: Tensor, out: Tensor, scale: float) -> Any:
    return x.backend.div_zip(x, _scaled(y, scale), out)


_INTO: dict[str, Callable[[Tensor, Tensor, Tensor, float], Any]] = {
    "add": _add_into,
    "sub": _sub_into,
    "mul": _mul_into,
    "truediv": _div_into,
}
"""The zip that writes ``x op (scale * y)`` into ``out``, by the operator's name."""

_DUNDER = {"+=": "__iadd__", "-=": "__isub__", "*=": "__imul__", "/=": "__itruediv__"}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/"}


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
    src = src.detach().to(t.backend)
    if may_alias(t, src):
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
