"""The backend protocol: what a backend supplies, and what every backend shares.

A backend supplies four primitives as *kernels* over ``(storage, shape, strides)``
triples: ``map``, ``zip``, ``reduce`` and ``matrix_multiply``. ``TensorOps`` wraps the
kernels with everything that does not depend on the backend (output shapes, broadcasting,
allocation, the matmul batch prologue), so each backend writes only its loops.
``TensorBackend`` then builds every named operation a Tensor needs from those primitives,
once. The reference backend is ``simple.py``; ``registry.py`` finds the others by name.

Tensors are used through their public methods only (and ``_tensor``/``_constant``, the
data and the unchecked constructor of their outputs): nothing here imports ``Tensor``.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from minitorch import operators

from ..tensor_data import (
    IndexingError,
    Storage,
    TensorData,
    broadcasts_to,
    check_dim,
    shape_broadcast,
)

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "MapKernel",
    "MapProto",
    "ReduceKernel",
    "TensorBackend",
    "TensorOps",
    "ZipKernel",
    "ZipProto",
    "check_same_device",
    "expand",
    "map_into",
    "matmul_shape",
    "on_backend",
    "zip_into",
]

MapKernel = Callable[..., None]
"""``kernel(out, out_shape, out_strides, in, in_shape, in_strides)``."""
ZipKernel = Callable[..., None]
"""``kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)``."""
ReduceKernel = Callable[..., None]
"""``kernel(out, out_shape, out_strides, a, a_shape, a_strides, dim, start)``."""


class MapProto(Protocol):
    """A mapped operation: ``f(a, out=None) -> Tensor``."""

    def __call__(self, a: Tensor, out: Tensor | None = ..., /) -> Tensor:
        """Apply elementwise, writing into ``out`` if given (``a`` broadcasts to it)."""
        ...


class ZipProto(Protocol):
    """A zipped operation: ``f(a, b, out=None) -> Tensor``."""

    def __call__(self, a: Tensor, b: Tensor, out: Tensor | None = ..., /) -> Tensor:
        """Apply to broadcast pairs, writing into ``out`` if given (both broadcast to it)."""
        ...


def matmul_shape(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Return the shape of ``a @ b`` for tensors of at least 2 dimensions.

    The last two dimensions multiply as matrices; the leading (batch) dimensions broadcast.

    Raises:
        IndexingError: naming both shapes, if the inner dimensions differ or the batch
            dimensions do not broadcast.
    """
    if len(a_shape) == 2 and len(b_shape) == 2 and a_shape[1] == b_shape[0]:
        return (a_shape[0], b_shape[1])  # the common case: no batch
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise IndexingError(f"matmul needs at least 2-D tensors, got {a_shape} @ {b_shape}")
    if a_shape[-1] != b_shape[-2]:
        raise IndexingError(
            f"matmul shapes {a_shape} @ {b_shape}: inner dimensions {a_shape[-1]} and "
            f"{b_shape[-2]} differ"
        )
    try:
        batch = shape_broadcast(a_shape[:-2], b_shape[:-2])
    except IndexingError:
        raise IndexingError(
            f"matmul shapes {a_shape} @ {b_shape}: batch dimensions do not broadcast"
        ) from None
    return (*batch, a_shape[-2], b_shape[-1])


class TensorOps:
    """The backend protocol. Subclasses provide the kernel factories; this class does the rest.

    A backend overrides ``map_kernel``, ``zip_kernel``, ``reduce_kernel`` and
    ``matmul_kernel``, and for storage that does not live in host memory the five
    storage methods. ``cuda`` is True for GPU backends.

    Kernels write every element of their output: it is allocated with ``storage_empty``,
    so an element a kernel skips would hold whatever the memory held before.
    """

    cuda: bool = False
    name: str = ""
    """The backend's short name (``simple``, ``fast``, ``cuda``): its name in messages, and
    the key by which higher layers (mt-nn's convolutions) find kernels for it. Subclasses
    inherit it, so a variant of a backend finds that backend's kernels."""

    # Storage: where a backend keeps its buffers. The default is host (numpy) memory.
    @staticmethod
    def storage_zeros(size: int) -> Storage:
        """Allocate a zeroed flat buffer of ``size`` floats."""
        return np.zeros(size, dtype=np.float64)

    @staticmethod
    def storage_empty(size: int) -> Storage:
        """Allocate a flat buffer of ``size`` floats that the caller overwrites entirely.

        For kernel outputs: skipping the zero fill saves a pass over memory. A backend that
        keeps its own storage but predates this hook gets its ``storage_zeros`` (see
        ``__init_subclass__``).
        """
        return np.empty(size)  # numpy's default dtype is float64

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give a backend with its own ``storage_zeros`` but no ``storage_empty`` the former.

        Decided once per class, not on every allocation.
        """
        super().__init_subclass__(**kwargs)
        own_zeros = cls.storage_zeros is not TensorOps.storage_zeros
        if own_zeros and cls.storage_empty is TensorOps.storage_empty:
            cls.storage_empty = staticmethod(cls.storage_zeros)  # type: ignore[method-assign]

    @staticmethod
    def storage_from_numpy(array: npt.NDArray[np.float64]) -> Storage:
        """Adopt (host) or copy (device) a flat float64 numpy array as storage."""
        return array

    @staticmethod
    def storage_to_numpy(storage: Storage) -> npt.NDArray[np.float64]:
        """Return the storage as a host numpy array (no copy for host storage)."""
        return np.asarray(storage)

    @staticmethod
    def is_storage(storage: Storage) -> bool:
        """True if ``storage`` is a buffer this backend's kernels can read."""
        return isinstance(storage, np.ndarray)

    # Kernel factories: the only thing a backend must write.
    @staticmethod
    def map_kernel(fn: Callable[[float], float]) -> MapKernel:
        """Return a kernel applying ``fn`` elementwise (input broadcasts to the output)."""
        raise NotImplementedError

    @staticmethod
    def zip_kernel(fn: Callable[[float, float], float]) -> ZipKernel:
        """Return a kernel applying ``fn`` to broadcast pairs."""
        raise NotImplementedError

    @staticmethod
    def reduce_kernel(fn: Callable[[float, float], float]) -> ReduceKernel:
        """Return a kernel folding ``fn`` over one dimension, starting from ``start``."""
        raise NotImplementedError

    @staticmethod
    def matmul_kernel(*args: Any) -> None:
        """Batched matmul kernel over 3-D ``(storage, shape, strides)`` triples.

        ``out[n, i, j] = sum_k a[n_a, i, k] * b[n_b, k, j]`` where a batch size of 1 in
        ``a`` or ``b`` broadcasts.
        """
        raise NotImplementedError

    # The primitives, built on the kernels.
    @classmethod
    def map(cls, fn: Callable[[float], float]) -> MapProto:
        """Lift ``fn`` to tensors: ``map(fn)(a, out=None)``."""
        kernel = cls.map_kernel(fn)

        def apply(a: Tensor, out: Tensor | None = None) -> Tensor:
            if out is not None:
                return map_into(kernel, a, out)
            out = _output(a, a.shape)
            kernel(*out.tuple(), *a.tuple())
            return out

        return apply

    @classmethod
    def zip(cls, fn: Callable[[float, float], float]) -> ZipProto:
        """Lift a two-argument ``fn`` to broadcast pairs: ``zip(fn)(a, b, out=None)``."""
        kernel = cls.zip_kernel(fn)
        # numpy's own allocator when the backend keeps the default (one Python call less).
        empty = np.empty if cls.storage_empty is TensorOps.storage_empty else cls.storage_empty

        def apply(a: Tensor, b: Tensor, out: Tensor | None = None) -> Tensor:
            if out is not None:
                return zip_into(kernel, a, b, out)
            # ``_output`` written out, on every binary operation's path. Speed: about 15%
            # of a one-element ``a + b`` (MiniTorch's tensor benchmark).
            ta, tb = a._tensor, b._tensor
            shape = ta.shape
            if shape == tb.shape:
                size = ta.size
            else:
                shape = shape_broadcast(shape, tb.shape)
                size = prod(shape)
            td = TensorData._fresh(empty(size), shape, size)
            kernel(*td.tuple(), *ta.tuple(), *tb.tuple())
            return type(a)._constant(td, a.backend)

        return apply

    @classmethod
    def reduce(
        cls, fn: Callable[[float, float], float], start: float = 0.0
    ) -> Callable[[Tensor, int], Tensor]:
        """Lift ``fn`` to a fold over one dimension: ``reduce(fn, start)(a, dim)``.

        The reduced dimension is kept with size 1.
        """
        kernel = cls.reduce_kernel(fn)

        def apply(a: Tensor, dim: int) -> Tensor:
            dim = check_dim(dim, a.shape)
            out_shape = list(a.shape)
            out_shape[dim] = 1
            out = _output(a, tuple(out_shape))
            kernel(*out.tuple(), *a.tuple(), dim, float(start))
            return out

        return apply

    @classmethod
    def matrix_multiply(cls, a: Tensor, b: Tensor) -> Tensor:
        """Batched matrix product with broadcast batch dimensions (``a @ b``)."""
        ta, tb = a._tensor, b._tensor
        out_shape = matmul_shape(ta.shape, tb.shape)
        batch = out_shape[:-2]
        a3, b3 = _as_batch3(a, batch), _as_batch3(b, batch)
        out = _output(a, out_shape)
        # The kernel sees the output as (batch, rows, cols): a row-major view of it. Its
        # batch is the broadcast batch's size, which is 0 when any batch dim is 0, not the
        # larger operand batch: ``max(0, 1)`` made a kernel write one matrix past an empty
        # output (a heap corruption on the fast backend).
        n = prod(batch)
        assert a3.shape[0] in (1, n), (a3.shape, n)
        assert b3.shape[0] in (1, n), (b3.shape, n)
        out3 = TensorData._fresh(out._tensor.storage, (n, *out_shape[-2:]), out._tensor.size)
        cls.matmul_kernel(*out3.tuple(), *a3.tuple(), *b3.tuple())
        return out


def map_into(kernel: MapKernel, a: Tensor, out: Tensor) -> Tensor:
    """Run a map ``kernel`` from ``a`` into the caller's tensor ``out`` (an in-place write).

    Raises:
        IndexingError: naming both shapes, if ``a`` does not broadcast to ``out``.
    """
    if a.shape != out.shape and not broadcasts_to(a.shape, out.shape):
        raise IndexingError(
            f"map: input of shape {a.shape} does not broadcast to the output's shape {out.shape}"
        )
    out.tensor_data.version_counter.bump()
    kernel(*out.tuple(), *a.tuple())
    return out


def zip_into(kernel: ZipKernel, a: Tensor, b: Tensor, out: Tensor) -> Tensor:
    """Run a zip ``kernel`` of ``a`` and ``b`` into the caller's tensor ``out`` (in place).

    ``out`` may be ``a`` or ``b`` itself (``x += y`` is ``add(x, y, out=x)``): each element
    is read before it is written. Another operand that shares memory with ``out`` would
    read values already overwritten: copy it first (as ``Tensor.add_`` and the other
    in-place operations do).

    Raises:
        IndexingError: naming the three shapes, if ``a`` or ``b`` does not broadcast to
            ``out``'s shape.
    """
    shape = out.shape
    for x in (a, b):
        if x.shape != shape and not broadcasts_to(x.shape, shape):
            raise IndexingError(
                f"zip: inputs of shapes {a.shape} and {b.shape} do not both broadcast to "
                f"the output's shape {shape}"
            )
    out.tensor_data.version_counter.bump()
    kernel(*out.tuple(), *a.tuple(), *b.tuple())
    return out


def _output(like: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A new tensor on ``like``'s backend for a kernel to fill (uninitialised storage)."""
    backend = like.backend
    size = prod(shape)
    td = TensorData._fresh(backend.ops.storage_empty(size), shape, size)
    return type(like)._constant(td, backend)


def on_backend(td: TensorData, backend: TensorBackend) -> TensorData:
    """``td`` with its storage where ``backend`` keeps it: host data copied to a device.

    Raises:
        TypeError: for storage that is neither the backend's nor host (numpy) memory.
    """
    if backend.ops.is_storage(td.storage):
        return td
    if not isinstance(td.storage, np.ndarray):
        raise TypeError(
            f"storage of type {type(td.storage).__name__} does not belong to backend "
            f"{backend.name}; move tensors with .to(backend)"
        )
    return TensorData(backend.ops.storage_from_numpy(td.storage), td.shape, td.strides)


def _like(t: Tensor, td: TensorData) -> Tensor:
    """A constant tensor (of ``t``'s class) over ``td``, a view of ``t``'s storage."""
    return type(t)._constant(td, t.backend)


def _const(like: Tensor, value: float, shape: tuple[int, ...] = (1,)) -> Tensor:
    """A one-element constant on ``like``'s backend (it broadcasts against anything).

    ``shape`` is any shape of one element: ``(1,)``, ``()``, ``(1, 1)``...
    """
    backend = like.backend
    storage = backend.ops.storage_from_numpy(np.full(1, float(value)))
    return type(like)._constant(TensorData._fresh(storage, shape, 1), backend)


def expand(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A contiguous constant copy of ``t`` broadcast to ``shape`` (one ``id_map``)."""
    return t.backend.id_map(t, _output(t, shape))  # id_map writes every element


def _as_batch3(t: Tensor, batch: tuple[int, ...]) -> TensorData:
    """View ``t`` as ``(n, rows, cols)`` for the matmul kernel, copying only when needed.

    A tensor without a batch (or with a batch of ones) becomes ``n = 1`` with no copy, even
    when transposed; a batch equal to ``batch`` is flattened; anything else is broadcast
    to ``batch`` first.
    """
    td = t._tensor
    shape = td.shape
    rows, cols = shape[-2:]
    own = shape[:-2]
    if prod(own) == 1:
        return TensorData._view(td.storage, (1, rows, cols), (0, *td.strides[-2:]), td._version)
    if len(own) == 1 and len(batch) == 1:
        return td
    full = (1,) * (len(batch) - len(own)) + own
    shape = (*batch, rows, cols)
    src = t.contiguous() if full == batch else expand(t, shape)
    return TensorData(src.tensor_data.storage, (prod(batch), rows, cols))


class TensorBackend:
    """Every named tensor operation, built once from a backend's primitives.

    One backend per ``TensorOps`` class: ``TensorBackend(FastOps)`` (the course's spelling)
    returns the very object ``FastBackend`` is, with its kernels, its name and its compiled
    code, so the two are interchangeable everywhere.

    Args:
        ops: the backend's ``TensorOps`` subclass.
        name: a short name used in messages (default: ``ops.name``, else the class name).
    """

    _made: ClassVar[dict[type[TensorOps], TensorBackend]] = {}

    def __new__(cls, ops: type[TensorOps], name: str | None = None) -> TensorBackend:
        """Return the backend already made for ``ops`` (unless renamed), else a new one."""
        made = TensorBackend._made.get(ops) if cls is TensorBackend else None
        if made is not None and (name is None or name == made.name):
            return made
        return super().__new__(cls)

    def __init__(self, ops: type[TensorOps], name: str | None = None) -> None:
        if self.__dict__.get("ops") is ops:
            return  # the backend of ``ops`` made earlier (see ``__new__``)
        self.ops = ops
        self.name = name or ops.name or ops.__name__
        self.cuda = ops.cuda
        # Maps.
        self.neg_map = ops.map(operators.neg)
        self.sigmoid_map = ops.map(operators.sigmoid)
        self.relu_map = ops.map(operators.relu)
        self.log_map = ops.map(operators.log)
        self.exp_map = ops.map(operators.exp)
        self.id_map = ops.map(operators.id)
        self.inv_map = ops.map(operators.inv)
        self.sqrt_map = ops.map(operators.sqrt)
        # Zips.
        self.add_zip = ops.zip(operators.add)
        self.mul_zip = ops.zip(operators.mul)
        self.div_zip = ops.zip(operators.div)
        self.pow_zip = ops.zip(operators.pow)
        self.lt_zip = ops.zip(operators.lt)
        self.eq_zip = ops.zip(operators.eq)
        self.is_close_zip = ops.zip(operators.is_close)
        self.relu_back_zip = ops.zip(operators.relu_back)
        self.log_back_zip = ops.zip(operators.log_back)
        self.inv_back_zip = ops.zip(operators.inv_back)
        self.sigmoid_back_zip = ops.zip(operators.sigmoid_back)
        # Reductions.
        self.add_reduce = ops.reduce(operators.add, 0.0)
        self.mul_reduce = ops.reduce(operators.mul, 1.0)
        self.max_reduce = ops.reduce(operators.max, -float("inf"))
        self.matrix_multiply = ops.matrix_multiply
        if type(self) is TensorBackend:
            TensorBackend._made.setdefault(ops, self)

    def __eq__(self, other: object) -> bool:
        """Backends are equal when they run the same ``TensorOps`` class.

        ``TensorBackend(FastOps)`` and ``FastBackend`` are interchangeable: tensors on
        either combine, and either may be passed wherever a backend is expected.
        """
        if not isinstance(other, TensorBackend):
            return NotImplemented
        return self.ops is other.ops

    def __hash__(self) -> int:
        return hash(self.ops)

    def __repr__(self) -> str:
        return f"TensorBackend({self.name})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle a backend by name: ``backend(name)`` finds it again in the loading process.

        A backend that is not registered under its name travels as its ``TensorOps`` class
        (``TensorBackend(ops, name)``; the class must be importable). Its kernels are
        never pickled: they are rebuilt, or found, where it is loaded.
        """
        from .registry import backend  # the registry imports this module: look it up here

        try:
            if backend(self.name) is self:
                return (backend, (self.name,))
        except (LookupError, TypeError, ImportError):
            pass
        return (TensorBackend, (self.ops, self.name))

    def __copy__(self) -> TensorBackend:
        """A backend is shared, never copied (its kernels are compiled once)."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> TensorBackend:
        """A backend is shared, never copied, also by ``copy.deepcopy`` of a model."""
        return self


def check_same_device(what: str, a: TensorBackend, b: TensorBackend) -> None:
    """Check that tensors on backends ``a`` and ``b`` can be combined by operation ``what``.

    Backends that keep their storage in the same memory interoperate (``simple``, ``fast``
    and ``fast-plain`` all use host memory): the result is computed on, and lives on, the
    first tensor operand's backend. Host and GPU tensors do not mix, as in PyTorch.

    Raises:
        ValueError: if one backend keeps its tensors on the GPU and the other in host memory.
    """
    if a.cuda != b.cuda:

        def where(x: TensorBackend) -> str:
            return f"{x.name} (GPU memory)" if x.cuda else f"{x.name} (host memory)"

        raise ValueError(
            f"{what}: operands live on different devices, {where(a)} and {where(b)}; "
            "move one with .to(backend)"
        )
