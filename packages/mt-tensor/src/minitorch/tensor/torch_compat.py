"""What makes a Tensor answer as PyTorch's does: small types, and copying and pickling.

``t.size`` is the course's element count and PyTorch's method at once (``NumelSize``),
``t.size()`` a ``Size``, ``t.is_leaf`` PyTorch's property and the course's method at once
(``CallableBool``), and ``t.max(dim)`` the named tuple ``MaxResult``, as
``torch.return_types.max``. ``copy.deepcopy`` and ``pickle`` of a tensor follow PyTorch's
rules (``deepcopy_tensor``, ``reduce_tensor``).
"""

from __future__ import annotations

import builtins
import copy
import numbers
from collections.abc import Iterator
from math import prod
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import Context

from .autograd import Function, History
from .autograd.graph import node_name
from .functions import Max, max_mask
from .tensor_data import (
    Storage,
    TensorData,
    check_dim,
    check_reduction_dim,
    check_scalar_dim,
    short_repr,
)

if TYPE_CHECKING:
    from .backends.protocol import TensorBackend
    from .tensor import Tensor

__all__ = [
    "CallableBool",
    "MaxResult",
    "NumelSize",
    "Size",
    "ToCopy",
    "as_number",
    "callable_bool",
    "copy_to",
    "deepcopy_tensor",
    "iterate",
    "matmul_operand",
    "max_of",
    "rebuild_tensor",
    "reduce_tensor",
    "to_backend",
    "to_array",
]


def to_backend(t: Tensor, backend: TensorBackend) -> Tensor:
    """``t.to(backend)``: ``t`` itself if it is there, else a differentiable copy (``ToCopy``)."""
    return t if backend == t.backend else ToCopy.apply(t, backend)


def iterate(t: Tensor) -> Iterator[Any]:
    """``iter(t)``: ``t[0]``, ``t[1]``, ... over the first dimension (as ``t[i]`` reads them).

    Raises:
        TypeError: for a 0-d tensor (PyTorch's "iteration over a 0-d tensor").
    """
    if t.dims == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (t[i] for i in range(t.shape[0]))


def copy_to(t: Tensor, backend: TensorBackend) -> Tensor:
    """A constant, contiguous copy of ``t``'s values in ``backend``'s storage (no graph)."""
    host = np.ascontiguousarray(t.to_numpy()).reshape(-1)
    storage = backend.ops.storage_from_numpy(host.copy())
    return type(t)(TensorData(storage, t.shape), backend=backend)


class ToCopy(Function):
    """``t.to(backend)``: a copy on another backend whose gradient is copied back.

    As PyTorch's ``.to(device)`` (``ToCopyBackward0``): a mixed graph keeps every path.
    """

    grad_fn_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, backend: TensorBackend) -> Tensor:
        """Copy ``a`` to ``backend``, remembering where it came from."""
        ctx.save_for_backward(a.backend)
        return copy_to(a, backend)

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient, copied to the input's backend."""
        (source,) = ctx.saved_values
        return copy_to(grad_output, source)


class Size(builtins.tuple[int, ...]):
    """The shape returned by ``t.size()``: a tuple of ints, like ``torch.Size``."""

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        return prod(self)

    def __repr__(self) -> str:
        return f"minitorch.Size({list(self)})"


class NumelSize(int):
    """``t.size``: the number of elements (the course's ``t.size``), and callable as PyTorch's.

    It is an ``int`` equal to ``t.numel()``, so ``t.size * 2`` and ``range(t.size)`` work as
    in the course; calling it gives PyTorch's results: ``t.size()`` is the shape (a
    ``Size``), ``t.size(d)`` the size of dimension ``d`` (negative counts from the end).
    """

    _shape: builtins.tuple[int, ...]

    def __new__(cls, shape: builtins.tuple[int, ...]) -> NumelSize:
        """The element count of ``shape``, remembering the shape."""
        out = super().__new__(cls, prod(shape))
        out._shape = shape
        return out

    def __call__(self, dim: int | None = None) -> Size | int:
        """``t.size()``: the shape; ``t.size(d)``: the size of dimension ``d``."""
        if dim is None:
            return Size(self._shape)
        return self._shape[check_dim(dim, self._shape)]


class CallableBool(int):
    """``t.is_leaf``: a truth value (PyTorch's property) that is also callable (the course's).

    ``if t.is_leaf:`` and ``t.is_leaf()`` give the same answer; it compares equal to
    ``True``/``False`` and prints as them, but ``t.is_leaf is True`` is False (it is not
    the ``bool`` singleton). The two values are made once (``callable_bool``).
    """

    __slots__ = ()

    def __call__(self) -> bool:
        """The value as a plain ``bool``."""
        return self is _TRUE

    def __repr__(self) -> str:
        return "True" if self is _TRUE else "False"

    __str__ = __repr__


_TRUE = CallableBool(1)
_FALSE = CallableBool(0)


def callable_bool(flag: bool) -> CallableBool:
    """The ``CallableBool`` of ``flag`` (one of the two made once)."""
    return _TRUE if flag else _FALSE


class MaxResult(NamedTuple):
    """What ``t.max(dim)`` returns, as ``torch.return_types.max``: values and indices."""

    values: Tensor
    indices: Tensor


def max_of(t: Tensor, dim: int | None, keepdim: bool) -> Tensor | MaxResult:
    """``t.max()`` and ``t.max(dim, keepdim)``, as PyTorch's.

    ``t.max()`` has shape ``(1,)`` (like ``sum()``); its gradient is shared equally by the
    maximal elements, as PyTorch's. ``t.max(dim)`` is ``MaxResult(values, indices)`` with
    ``dim`` dropped unless ``keepdim``; ``indices`` (floats) gives the first maximal
    position, which receives the gradient. A NaN is the maximum, as in PyTorch.

    Raises:
        IndexingError: for a bad ``dim``, or a maximum over no elements (PyTorch's message).
    """
    if dim is None:
        check_reduction_dim("max", None, t.shape)
        return Max.apply(t.contiguous().view(t.numel()), 0, True)
    if t.dims == 0:
        values = Max.apply(t.view(1), check_scalar_dim(dim)).view()
        return MaxResult(values, t.zeros(()))
    d = check_reduction_dim("max", dim, t.shape)
    values = Max.apply(t, d)
    indices = max_mask(t.detach(), d, values.detach())[1]
    if not keepdim:
        shape = t.shape[:d] + t.shape[d + 1 :]
        values, indices = values.view(*shape), indices.view(*shape)
    return MaxResult(values, indices)


def reduce_tensor(t: Tensor) -> builtins.tuple[Any, ...]:
    """``t.__reduce_ex__``: rebuilt by ``rebuild_tensor`` from host values (see the method)."""
    td = t.tensor_data
    storage = td.storage
    if not isinstance(storage, np.ndarray):
        storage = t.backend.ops.storage_to_numpy(storage)
    strides = builtins.tuple(int(s) for s in td.strides)
    args = (type(t), storage, t.shape, strides, t.backend, t.requires_grad, t._name)
    return (rebuild_tensor, args)


def rebuild_tensor(
    cls: type[Tensor],
    storage: Storage,
    shape: builtins.tuple[int, ...],
    strides: builtins.tuple[int, ...],
    backend: TensorBackend,
    requires_grad: bool,
    name: str | None,
) -> Tensor:
    """A tensor from what ``reduce_tensor`` pickled (host storage goes to the device)."""
    t = cls(TensorData(storage, shape, strides), name=name, backend=backend)
    return t.requires_grad_() if requires_grad else t


def deepcopy_tensor(t: Tensor, memo: dict[int, Any]) -> Tensor:
    """``t.__deepcopy__``: new storage, ``requires_grad`` and ``grad`` kept (see the method).

    Raises:
        RuntimeError: for a non-leaf, with PyTorch's message.
    """
    h = t.history
    if h is not None and h.last_fn is not None:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the "
            f"deepcopy protocol at the moment (this one has grad_fn="
            f"{node_name(h.last_fn)}); deepcopy t.detach() for its values"
        )
    td = t.tensor_data
    ops = t.backend.ops
    if isinstance(td.storage, np.ndarray):
        storage = copy.deepcopy(td.storage, memo)
    else:
        storage = ops.storage_from_numpy(ops.storage_to_numpy(td.storage).copy())
    out = type(t)._constant(TensorData(storage, t.shape, td.strides), t.backend)
    memo[id(t)] = out
    out._name = t._name
    if h is not None:
        out.history = History()
    if t._grad is not None:
        out._grad = copy.deepcopy(t._grad, memo)
    return out


def to_array(t: Tensor, dtype: npt.DTypeLike | None, copy_values: bool | None) -> npt.NDArray[Any]:
    """``t.__array__``: ``np.array(t)`` shares host storage unless a copy is asked or needed.

    Raises:
        ValueError: for ``copy=False`` when a copy cannot be avoided (device storage, or
            another dtype).
    """
    device = not isinstance(t.tensor_data.storage, np.ndarray)
    if copy_values is False and (device or (dtype is not None and np.dtype(dtype) != np.float64)):
        raise ValueError("np.array(tensor, copy=False): the values must be copied here")
    values = t.to_numpy()
    if dtype is not None:
        values = values.astype(dtype, copy=False)
    return values.copy() if copy_values else values


def as_number(t: Tensor, kind: str) -> float:
    """The value of a one-element tensor, for ``float(t)`` and ``int(t)`` (``kind``).

    Raises:
        ValueError: for a tensor of another number of elements (PyTorch's message).
    """
    if t.numel() != 1:
        raise ValueError(
            f"only one element tensors can be converted to Python scalars ({kind}() of "
            f"a tensor of shape {t.shape})"
        )
    return t.item()


def matmul_operand(b: object, side: str) -> str:
    """The message for ``@`` with an operand that is not a Tensor (a TypeError, as PyTorch)."""
    hint = "; to scale a tensor use *" if isinstance(b, numbers.Real) else ""
    return (
        f"@ (matmul) needs two Tensors, got {type(b).__name__} {short_repr(b)} as the {side} "
        f"operand{hint}"
    )
