"""``Tensor``: an n-dimensional array on a backend that records how it was computed.

The operations are ``Function``s (``functions.py``); a Tensor method applies one. Gradients
of broadcast inputs are summed back to each input's shape in ``chain_rule``, once, for every
function.
"""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Iterable, Sequence
from math import prod
from typing import Any, NamedTuple, TypeAlias

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import GraphNode, backpropagate

from .functions import (
    EQ,
    GT,
    LT,
    Abs,
    Add,
    All,
    Copy,
    Exp,
    History,
    Index,
    Inv,
    IsClose,
    Log,
    MatMul,
    Max,
    Mean,
    Mul,
    Neg,
    Permute,
    Pow,
    ReLU,
    Sigmoid,
    Sqrt,
    Sum,
    View,
    _const,
    max_mask,
)
from .tensor_data import (
    IndexingError,
    Shape,
    Storage,
    Strides,
    TensorData,
    UserShape,
    broadcasts_to,
    check_dim,
    check_reduction_dim,
    check_shape,
    shape_broadcast,
)
from .tensor_ops import (
    SimpleBackend,
    TensorBackend,
    check_same_device,
    expand,
    get_default_backend,
    resolve_backend,
)

__all__ = ["History", "MaxResult", "Size", "Tensor", "TensorLike"]

TensorLike: TypeAlias = "float | int | Tensor"


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


class MaxResult(NamedTuple):
    """What ``t.max(dim)`` returns, as ``torch.return_types.max``: values and indices."""

    values: Tensor
    indices: Tensor


class Tensor(GraphNode):
    """An n-dimensional array of float64 on a backend, with reverse-mode autodiff.

    Create tensors with ``minitorch.tensor.tensor``, ``zeros``, ``ones``, ``rand`` or
    ``from_numpy`` rather than this constructor.

    Attributes:
        backend: the ``TensorBackend`` whose kernels compute on this tensor.
        history: how the tensor was made (None for a constant).
        grad: the accumulated gradient of a leaf after ``backward()``.
        name: a label for graph drawings: the one given, else a unique id string (the
            course's default).
    """

    __slots__ = ("_name", "_tensor", "backend", "grad", "history")

    # numpy operands: ``array + t`` must not turn ``t`` into an array (dropping its graph).
    # With ufuncs disabled numpy returns NotImplemented, Python calls ``t.__radd__``, and
    # both orders raise the same TypeError (as PyTorch, which takes no ndarray operands).
    __array_ufunc__ = None

    def __init__(
        self,
        v: TensorData,
        back: History | None = None,
        name: str | None = None,
        backend: TensorBackend | None = None,
    ) -> None:
        self._tensor = v
        self.history = back
        self.backend = backend if backend is not None else get_default_backend()
        self.grad: Tensor | None = None
        self._name = name
        ops = self.backend.ops
        if not ops.is_storage(v.storage):
            if not isinstance(v.storage, np.ndarray):
                raise TypeError(
                    f"storage of type {type(v.storage).__name__} does not belong to backend "
                    f"{self.backend.name}; move tensors with .to(backend)"
                )
            # Host data for a device backend: copy it over (shape and strides kept).
            storage = ops.storage_from_numpy(v.storage)
            self._tensor = TensorData(storage, v.shape, v.strides)

    # ------------------------------------------------------------------ construction
    @classmethod
    def _constant(cls, td: TensorData, backend: TensorBackend) -> Tensor:
        """A constant tensor over ``td``, whose storage ``backend``'s kernels wrote.

        What ``__init__`` does without its checks, for the outputs of tensor operations.
        """
        t = object.__new__(cls)
        t._tensor = td
        t.history = None
        t.backend = backend
        t.grad = None
        t._name = None
        return t

    @staticmethod
    def make(
        storage: Storage | Sequence[float],
        shape: UserShape,
        strides: UserShape | None = None,
        backend: TensorBackend | None = None,
    ) -> Tensor:
        """Make a constant tensor from a storage buffer (or a flat list), shape and strides."""
        backend = backend if backend is not None else get_default_backend()
        if isinstance(storage, (list, tuple)):
            storage = backend.ops.storage_from_numpy(np.asarray(storage, dtype=np.float64))
        # Host storage for a device backend is copied to the device by the constructor.
        return Tensor(TensorData(storage, shape, strides), backend=backend)

    def zeros(self, shape: UserShape | None = None) -> Tensor:
        """Return a constant zero tensor on this tensor's backend (default: same shape)."""
        shape = self.shape if shape is None else check_shape(shape)
        size = prod(shape)
        return Tensor(TensorData(self.backend.ops.storage_zeros(size), shape), backend=self.backend)

    def tuple(self) -> builtins.tuple[Storage, Shape, Strides]:
        """Return ``(storage, shape, strides)`` for kernels."""
        return self._tensor.tuple()

    def _ensure_tensor(self, b: TensorLike | numbers.Real) -> Tensor:
        if isinstance(b, Tensor):
            if b.backend is not self.backend:
                check_same_device("Tensor", self.backend, b.backend)
            return b
        if type(b) is float or type(b) is int or isinstance(b, numbers.Real):
            return _const(self, float(b))
        raise TypeError(f"cannot combine a Tensor with {type(b).__name__}")

    def to(self, backend: TensorBackend | str) -> Tensor:
        """Return a copy of this tensor's values on ``backend`` (self if already there).

        ``backend`` is a TensorBackend or a registered name (``"fast"``, ``"cuda"``). The
        copy is a constant: history does not cross backends.
        """
        backend = resolve_backend(backend)
        if backend == self.backend:
            return self
        host = np.ascontiguousarray(self.to_numpy()).reshape(-1)
        storage = backend.ops.storage_from_numpy(host.copy())
        return Tensor(TensorData(storage, self.shape), backend=backend)

    # ------------------------------------------------------------------ properties
    @property
    def tensor_data(self) -> TensorData:
        """The ``TensorData`` (storage, shape, strides) this tensor views."""
        return self._tensor

    @property
    def shape(self) -> builtins.tuple[int, ...]:
        """The size of each dimension."""
        return self._tensor.shape

    @property
    def version(self) -> int:
        """How many in-place writes this tensor's storage has seen (shared with its views)."""
        counter = self._tensor._version  # made on the first in-place write or view
        return 0 if counter is None else counter.value

    @property
    def size(self) -> NumelSize:
        """The number of elements (an int, as in the course), callable as in PyTorch.

        ``t.size == t.numel()``; ``t.size()`` is the shape as a ``Size`` tuple and
        ``t.size(d)`` the size of dimension ``d``, as ``torch.Tensor.size``.
        """
        return NumelSize(self._tensor.shape)

    def numel(self) -> int:
        """The number of elements."""
        return self._tensor.size

    @property
    def dims(self) -> int:
        """The number of dimensions."""
        return self._tensor.dims

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Make this tensor a leaf that accumulates a gradient (or a constant); return self."""
        if requires_grad:
            if self.history is None:
                self.history = History()
        else:
            if self.history is not None and self.history.last_fn is not None:
                raise RuntimeError(
                    "requires_grad_(False) on a non-leaf tensor; use .detach() instead"
                )
            self.history = None
        return self

    def detach(self) -> Tensor:
        """Return a constant tensor sharing this tensor's storage (and version counter)."""
        return Tensor._constant(self._tensor, self.backend)  # storage already on the backend

    # ------------------------------------------------------------------ the Variable protocol
    # unique_id, is_leaf, is_constant, parents and requires_grad come from GraphNode.
    def chain_rule(self, d_output: Tensor) -> Iterable[builtins.tuple[Tensor, Tensor]]:
        """Return ``(input, gradient)`` for each non-constant input, summed to its shape.

        Raises:
            RuntimeError: if a tensor the function saved was written in place since.
        """
        if self.history is not None:
            self.history.check_saved_versions()
        return [
            (x, g if g._tensor.shape == x._tensor.shape else x._reduce_to_shape(g))
            for x, g in self._input_derivatives(d_output)
            if x.history is not None  # a constant's gradient would be summed for nothing
        ]

    def accumulate_derivative(self, x: Tensor) -> None:
        """Add ``x`` to this leaf's ``grad``."""
        if not self.is_leaf():
            raise RuntimeError("only leaf tensors accumulate a gradient")
        if x.shape != self.shape:
            x = self._reduce_to_shape(x)
        if x.backend is not self.backend:  # from an operation on another host backend
            x = Tensor(x._tensor, backend=self.backend)
        self.grad = x if self.grad is None else self.backend.add_zip(self.grad, x)

    def _reduce_to_shape(self, grad: Tensor) -> Tensor:
        """Sum a gradient of a broadcast shape back to this tensor's shape."""
        if grad.shape == self.shape:
            return grad
        shape_broadcast(self.shape, grad.shape)  # raises if they are unrelated
        extra = grad.dims - self.dims
        if extra < 0:
            if grad.numel() != self.numel():
                raise RuntimeError(f"gradient of shape {grad.shape} does not fit {self.shape}")
            return grad.contiguous().view(*self.shape)
        out = grad
        for dim in range(grad.dims):
            own = self.shape[dim - extra] if dim >= extra else 1
            if own == 1 and grad.shape[dim] != 1:
                out = self.backend.add_reduce(out, dim)
        if out.numel() != self.numel():
            raise RuntimeError(f"gradient of shape {grad.shape} does not fit {self.shape}")
        return out.contiguous().view(*self.shape) if out.shape != self.shape else out

    def backward(self, grad_output: Tensor | float | None = None) -> None:
        """Backpropagate from this tensor, accumulating into the leaves' ``grad``.

        Args:
            grad_output: the gradient of the final result with respect to this tensor;
                may be omitted only for a one-element tensor (it is then 1).

        Raises:
            TypeError: if ``grad_output`` is neither a Tensor nor a real number.
            RuntimeError: on a constant tensor, or on a tensor of more than one element
                without ``grad_output``.
            IndexingError: naming both shapes, if ``grad_output`` neither has this tensor's
                shape nor broadcasts to it.
        """
        if self.is_constant():
            raise RuntimeError(
                "backward() on a tensor that does not require grad (no history): create "
                "inputs with requires_grad=True"
            )
        if grad_output is not None and not isinstance(grad_output, (Tensor, numbers.Real)):
            raise TypeError(
                "backward(): grad_output must be a Tensor or a real number, got "
                f"{type(grad_output).__name__} {_short(grad_output)}"
            )
        if grad_output is None:
            if self.numel() != 1:
                raise RuntimeError(
                    f"backward() on a tensor of shape {self.shape} needs a gradient argument;"
                    " gradients can be created implicitly only for one-element outputs"
                )
            grad = _const(self, 1.0, self.shape)
        else:
            grad = self._ensure_tensor(grad_output)
            if grad.shape != self.shape:
                if not broadcasts_to(grad.shape, self.shape):
                    raise IndexingError(
                        f"backward(): the gradient of shape {grad.shape} does not match the "
                        f"output's shape {self.shape} (it must equal it or broadcast to it)"
                    )
                grad = expand(grad, self.shape)
        backpropagate(self, grad)

    def zero_grad_(self) -> None:
        """Forget the accumulated gradient."""
        self.grad = None

    # ------------------------------------------------------------------ operators
    def __add__(self, b: TensorLike) -> Tensor:
        return Add.apply(self, self._ensure_tensor(b))

    def __radd__(self, b: TensorLike) -> Tensor:
        return Add.apply(self._ensure_tensor(b), self)

    def __sub__(self, b: TensorLike) -> Tensor:
        return Add.apply(self, Neg.apply(self._ensure_tensor(b)))

    def __rsub__(self, b: TensorLike) -> Tensor:
        return Add.apply(self._ensure_tensor(b), Neg.apply(self))

    def __mul__(self, b: TensorLike) -> Tensor:
        return Mul.apply(self, self._ensure_tensor(b))

    def __rmul__(self, b: TensorLike) -> Tensor:
        return Mul.apply(self._ensure_tensor(b), self)

    def __truediv__(self, b: TensorLike) -> Tensor:
        return Mul.apply(self, Inv.apply(self._ensure_tensor(b)))

    def __rtruediv__(self, b: TensorLike) -> Tensor:
        return Mul.apply(self._ensure_tensor(b), Inv.apply(self))

    def __matmul__(self, b: Tensor) -> Tensor:
        if not isinstance(b, Tensor):
            raise TypeError(_matmul_operand(b, "right"))
        return MatMul.apply(self, self._ensure_tensor(b))

    def __rmatmul__(self, b: object) -> Tensor:
        raise TypeError(_matmul_operand(b, "left"))

    def __neg__(self) -> Tensor:
        return Neg.apply(self)

    def __lt__(self, b: TensorLike) -> Tensor:
        return LT.apply(self, self._ensure_tensor(b))

    def __gt__(self, b: TensorLike) -> Tensor:
        return GT.apply(self, self._ensure_tensor(b))

    def __eq__(self, b: object) -> Tensor:  # type: ignore[override]
        if isinstance(b, np.ndarray):  # not False by identity: refused like t + array
            self._ensure_tensor(b)  # type: ignore[arg-type]
        if not isinstance(b, (Tensor, numbers.Real)):
            return NotImplemented
        return EQ.apply(self, self._ensure_tensor(b))

    # __eq__ is elementwise, so hash by identity.
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; use .all()"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return self.item()

    def __len__(self) -> int:
        if self.dims == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # ------------------------------------------------------------------ math
    def sigmoid(self) -> Tensor:
        """Elementwise logistic sigmoid."""
        return Sigmoid.apply(self)

    def relu(self) -> Tensor:
        """Elementwise rectified linear unit."""
        return ReLU.apply(self)

    def log(self) -> Tensor:
        """Elementwise natural log (``-inf`` at 0, NaN below, as PyTorch)."""
        return Log.apply(self)

    def exp(self) -> Tensor:
        """Elementwise exponential."""
        return Exp.apply(self)

    def sqrt(self) -> Tensor:
        """Elementwise square root (NaN below 0)."""
        return Sqrt.apply(self)

    def abs(self) -> Tensor:
        """Elementwise ``|x|``; its gradient is ``sign(x)`` (0 at 0, as PyTorch)."""
        return Abs.apply(self)

    def __abs__(self) -> Tensor:
        return Abs.apply(self)

    def __pow__(self, p: TensorLike) -> Tensor:
        if isinstance(p, Tensor):
            raise TypeError(
                "tensor ** tensor is not supported; for a positive base use (y * x.log()).exp()"
            )
        if not isinstance(p, numbers.Real):
            return NotImplemented
        return Pow.apply(self, float(p))

    def __rpow__(self, base: TensorLike) -> Tensor:
        if not isinstance(base, numbers.Real):
            return NotImplemented
        if not base > 0:
            raise ValueError(f"{base} ** tensor needs a positive base (it is exp(t * log(base)))")
        return (self * float(np.log(float(base)))).exp()

    def max(self, dim: int | None = None, keepdim: bool = False) -> Tensor | MaxResult:
        """The maximum, as PyTorch: ``t.max()`` a tensor, ``t.max(dim)`` ``(values, indices)``.

        ``t.max()`` has shape ``(1,)`` (like ``sum()``); its gradient is shared equally by
        the maximal elements, as PyTorch's. ``t.max(dim)`` drops ``dim`` unless ``keepdim``;
        ``indices`` (floats) gives the first maximal position, which receives the gradient.
        """
        if dim is None:
            check_reduction_dim("max", None, self.shape)
            return Max.apply(self.contiguous().view(self.numel()), 0, True)
        if self.dims == 0:
            values = Max.apply(_scalar_as_vector(self, dim), 0).view()
            return MaxResult(values, self.zeros(()))
        d = check_reduction_dim("max", dim, self.shape)
        values = Max.apply(self, d)
        indices = max_mask(self.detach(), d, values.detach())[1]
        if not keepdim:
            shape = self.shape[:d] + self.shape[d + 1 :]
            values, indices = values.view(*shape), indices.view(*shape)
        return MaxResult(values, indices)

    def sum(self, dim: int | None = None) -> Tensor:
        """Sum over ``dim`` (kept with size 1), or over everything (shape ``(1,)``)."""
        if dim is not None and self.dims == 0:
            return Sum.apply(_scalar_as_vector(self, dim), 0).view()
        return Sum.apply(self, None if dim is None else check_dim(dim, self.shape))

    def mean(self, dim: int | None = None) -> Tensor:
        """Mean over ``dim`` (kept with size 1), or over everything (shape ``(1,)``)."""
        if dim is not None and self.dims == 0:
            return Mean.apply(_scalar_as_vector(self, dim), 0).view()
        return Mean.apply(self, None if dim is None else check_dim(dim, self.shape))

    def all(self, dim: int | None = None) -> Tensor:
        """1.0 where every element over ``dim`` (or everything) is non-zero, else 0.0."""
        if dim is not None and self.dims == 0:
            return All.apply(_scalar_as_vector(self, dim), 0).view()
        return All.apply(self, None if dim is None else check_dim(dim, self.shape))

    def is_close(self, b: TensorLike) -> Tensor:
        """1.0 where ``|self - b| < 1e-2``, elementwise."""
        return IsClose.apply(self, self._ensure_tensor(b))

    def permute(self, *order: int) -> Tensor:
        """Return a view with dimensions reordered (``t.permute(1, 0)`` transposes)."""
        if len(order) == 1 and isinstance(order[0], (tuple, list)):
            order = tuple(order[0])
        return Permute.apply(self, tuple(order))

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The transpose of a 2-D tensor."""
        if self.dims != 2:
            raise IndexingError(f".T needs a 2-D tensor, got shape {self.shape}")
        return self.permute(1, 0)

    def view(self, *shape: int) -> Tensor:
        """Return a view with a new shape (one entry may be -1); needs a contiguous tensor.

        Raises:
            RuntimeError: if the tensor is not contiguous (call ``.contiguous()`` first).
            IndexingError: if the new shape has a different number of elements.
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return View.apply(self, _resolve_shape(shape, self.shape))

    def reshape(self, *shape: int) -> Tensor:
        """Return a tensor of a new shape: a view when contiguous, else a copy (as PyTorch)."""
        return self.contiguous().view(*shape)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Return a view with dimensions ``dim0`` and ``dim1`` swapped."""
        order = list(range(self.dims))
        a, b = check_dim(dim0, self.shape), check_dim(dim1, self.shape)
        order[a], order[b] = order[b], order[a]
        return self.permute(*order)

    def contiguous(self) -> Tensor:
        """Return this tensor if contiguous, else a contiguous copy."""
        if self._tensor.is_contiguous():
            return self
        return Copy.apply(self)

    def is_contiguous(self) -> bool:
        """True if the storage is laid out row-major for the shape."""
        return self._tensor.is_contiguous()

    def zero_(self) -> Tensor:
        """Fill with zeros in place (a constant's values only); return self."""
        fresh = self.zeros(self.shape)
        self.backend.id_map(fresh, self)  # an in-place write: map bumps the version
        return self

    # ------------------------------------------------------------------ reading values
    def item(self) -> float:
        """Return the single value of a one-element tensor.

        Raises:
            RuntimeError: if the tensor has more than one element.
        """
        if self.numel() != 1:
            raise RuntimeError(f"item() needs a one-element tensor, got shape {self.shape}")
        return float(self._tensor.storage[self._tensor.index((0,) * self.dims)])

    def __getitem__(self, key: Any) -> Any:
        """Index: one int per dimension gives a float (course), anything else a view.

        ``t[i, j]`` is a float, as in the course; a shorter index or one with slices
        (``t[0]``, ``t[:, 1]``, ``t[0:4:2]``, ``t[..., 0]``) is a view sharing storage, as in
        PyTorch, and gradients flow through it.

        Raises:
            IndexingError: for an index out of range, too many entries, or not an int.
            ValueError: for a slice step that is not positive (as PyTorch).
            TypeError: for ``None`` (newaxis) or another kind of index.
        """
        plan = _index_plan(key, self.shape)
        if plan is None:
            return self._tensor.get(_index_key(key))
        return Index.apply(self, lambda td: _view_of(td, plan))

    def __setitem__(self, key: Any, val: TensorLike) -> None:
        """Write in place: ``t[i, j] = v`` one element, ``t[0] = v`` / ``t[:, 1] = v`` a view.

        A view is filled with a number or with a tensor that broadcasts to it.

        Raises:
            TypeError: for a value that is neither a real number nor a Tensor.
        """
        if not isinstance(val, (Tensor, numbers.Real)):
            raise TypeError(
                f"tensor[{key!r}] = value: the value must be a real number or a Tensor, got "
                f"{type(val).__name__} {_short(val)}"
            )
        plan = _index_plan(key, self.shape)
        if plan is None:
            self._tensor.set(_index_key(key), float(val))
            return
        part = Tensor(_view_of(self._tensor, plan), backend=self.backend)
        self.backend.id_map(self._ensure_tensor(val), part)

    def tolist(self) -> Any:
        """The values as nested Python lists of floats (as ``torch.Tensor.tolist``)."""
        return self.to_numpy().tolist()

    def numpy(self) -> npt.NDArray[np.float64]:
        """The values as a numpy array (shares host storage, as ``torch.Tensor.numpy``)."""
        return self.to_numpy()

    def to_numpy(self) -> npt.NDArray[np.float64]:
        """Return the values as a numpy array: a view (no copy) for host storage."""
        storage = self._tensor.storage
        if isinstance(storage, np.ndarray):
            return self._tensor.to_numpy()
        host = self.backend.ops.storage_to_numpy(storage)
        view = TensorData(host, self.shape, self._tensor.strides).to_numpy()
        copy: npt.NDArray[np.float64] = view.copy()  # numpy's stubs type .copy() as Any
        return copy

    def __array__(
        self, dtype: npt.DTypeLike | None = None, copy: bool | None = None
    ) -> npt.NDArray[Any]:
        """The values for ``np.array(t)`` / ``np.asarray(t)`` (numpy's array protocol).

        Host storage is shared unless ``copy=True`` or a ``dtype`` conversion needs a copy;
        ``copy=False`` raises ValueError when a copy cannot be avoided (device storage).
        """
        device = not isinstance(self._tensor.storage, np.ndarray)
        if copy is False and (device or (dtype is not None and np.dtype(dtype) != np.float64)):
            raise ValueError("np.array(tensor, copy=False): the values must be copied here")
        values = self.to_numpy()
        if dtype is not None:
            values = values.astype(dtype, copy=False)
        return values.copy() if copy else values

    def __repr__(self) -> str:
        body = self._tensor.to_string(self.to_numpy())
        extra = ""
        if self.backend != SimpleBackend:
            extra += f", backend={self.backend.name}"
        if self.requires_grad:
            extra += ", requires_grad=True" if self.is_leaf() else ""
            if self.history is not None and self.history.last_fn is not None:
                extra += f", grad_fn={self.history.last_fn.__name__}"
        return f"tensor({body}{extra})"


def _short(value: object) -> str:
    """``repr(value)`` cut to one short line, for error messages."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _matmul_operand(b: object, side: str) -> str:
    """The message for ``@`` with an operand that is not a Tensor (TypeError, as PyTorch)."""
    hint = "; to scale a tensor use *" if isinstance(b, numbers.Real) else ""
    return (
        f"@ (matmul) needs two Tensors, got {type(b).__name__} {_short(b)} as the {side} "
        f"operand{hint}"
    )


def _scalar_as_vector(t: Tensor, dim: Any) -> Tensor:
    """A 0-d tensor as shape ``(1,)``, to reduce over ``dim``: 0 or -1, as PyTorch allows.

    Raises:
        IndexingError: if ``dim`` is not an int, or not 0 or -1.
    """
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, (bool, np.bool_)):
        raise IndexingError(f"dim must be an int, got {dim!r} ({type(dim).__name__})")
    if dim not in (0, -1):
        raise IndexingError(
            f"dim {dim} is out of range for a 0-d tensor (expected a dim in [-1, 0])"
        )
    return t.view(1)


_Plan: TypeAlias = "list[builtins.tuple[int, int, int] | int]"


def _index_plan(key: Any, shape: builtins.tuple[int, ...]) -> _Plan | None:
    """Parse ``t[key]``: None for one int per dimension (an element), else a plan per dim.

    Each plan entry is an int (that dimension is indexed away) or ``(start, length, step)``.
    """
    entries = list(key) if isinstance(key, (tuple, list)) else [key]
    if any(k is None for k in entries):
        raise TypeError(f"tensor index {key!r}: None (newaxis) is not supported; use view")
    if sum(k is Ellipsis for k in entries) > 1:
        raise IndexingError(f"tensor index {key!r}: at most one ... is allowed")
    plain = [k for k in entries if k is not Ellipsis]
    if len(plain) > len(shape):
        raise IndexingError(f"index {key!r} has {len(plain)} entries for a tensor of shape {shape}")
    if len(plain) == len(entries) == len(shape) and not any(isinstance(k, slice) for k in plain):
        return None  # an element: TensorData checks the entries
    if Ellipsis in entries:
        at = entries.index(Ellipsis)
        entries[at : at + 1] = [slice(None)] * (len(shape) - len(plain))
    entries += [slice(None)] * (len(shape) - len(entries))
    plan: _Plan = []
    for d, (k, n) in enumerate(zip(entries, shape, strict=True)):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step <= 0:
                raise ValueError(f"tensor index {key!r}: slice step must be positive")
            plan.append((start, len(range(start, stop, step)), step))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            i = int(k) + n if k < 0 else int(k)
            if not 0 <= i < n:
                raise IndexingError(
                    f"index {key!r} is out of range for shape {shape} (dimension {d})"
                )
            plan.append(i)
        else:
            raise IndexingError(
                f"index entries must be ints, slices or ..., got {k!r} in {key!r} "
                f"(tensor of shape {shape})"
            )
    return plan


def _view_of(td: TensorData, plan: _Plan) -> TensorData:
    """The part of ``td`` that ``plan`` selects, sharing its storage and version counter."""
    offset = 0
    shape: list[int] = []
    strides: list[int] = []
    for entry, stride in zip(plan, td.strides, strict=True):
        if isinstance(entry, int):
            offset += entry * stride
        else:
            start, length, step = entry
            offset += start * stride if length else 0
            shape.append(length)
            strides.append(stride * step)
    storage = td.storage[offset:] if offset else td.storage
    return TensorData(storage, tuple(shape), tuple(strides), version=td.version)


def _index_key(key: Any) -> tuple[int, ...]:
    """The index tuple of an element index ``t[i]`` / ``t[i, j]`` (``_index_plan`` gave None)."""
    return tuple(key) if isinstance(key, (tuple, list)) else (key,)


def _resolve_shape(shape: tuple[Any, ...], old: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``view`` asks for, with its one ``-1`` (if any) inferred.

    Raises:
        TypeError: for a size that is not an int.
        IndexingError: for a size below -1, two -1s, or a different number of elements.
    """
    for s in shape:
        if not isinstance(s, (int, np.integer)) or isinstance(s, (bool, np.bool_)):
            raise TypeError(
                f"view{shape!r}: every size must be an int, got {s!r} ({type(s).__name__})"
            )
    shape = tuple(int(s) for s in shape)
    size = prod(old)
    if any(s < -1 for s in shape):
        raise IndexingError(
            f"view{shape}: sizes must be non-negative, or -1 for the one size to infer"
        )
    if shape.count(-1) > 1:
        raise IndexingError(f"view shape {shape} has more than one -1")
    if -1 in shape:
        rest = prod(s for s in shape if s != -1)
        if rest == 0 or size % rest:
            raise IndexingError(f"cannot view a tensor of shape {old} as {shape}")
        shape = tuple(size // rest if s == -1 else s for s in shape)
    if prod(shape) != size:
        raise IndexingError(
            f"cannot view a tensor of shape {old} ({size} elements) as {shape} "
            f"({prod(shape)} elements)"
        )
    return check_shape(shape)
