"""``Tensor``: an n-dimensional array on a backend that records how it was computed.

The operations are ``Function``s (``functions.py``); a Tensor method applies one. Gradients
of broadcast inputs are summed back to each input's shape in ``chain_rule``, once, for every
function.
"""

from __future__ import annotations

import builtins
import copy
import numbers
import warnings
from collections.abc import Callable, Iterable, Sequence
from math import prod
from typing import Any, NamedTuple, TypeAlias

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import GraphNode, is_grad_enabled
from minitorch.operators import Parameter

from .autograd import History, Node, RemovableHandle, engine
from .autograd.errors import NON_LEAF_GRAD
from .autograd.graph import grad_fn_of, node_name
from .functions import (
    EQ,
    GT,
    LT,
    Abs,
    Add,
    All,
    Copy,
    Div,
    Exp,
    Index,
    IndexRows,
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
    _row,
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
    short_repr,
)
from .tensor_ops import (
    SimpleBackend,
    TensorBackend,
    _const,
    check_same_device,
    expand,
    get_default_backend,
    resolve_backend,
)

__all__ = ["CallableBool", "History", "MaxResult", "Size", "Tensor", "TensorLike"]

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


class CallableBool(int):
    """``t.is_leaf``: a truth value (PyTorch's property) that is also callable (the course's).

    ``if t.is_leaf:`` and ``t.is_leaf()`` give the same answer; it compares equal to
    ``True``/``False`` and prints as them, but ``t.is_leaf is True`` is False (it is not
    the ``bool`` singleton). The two values are made once.
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
        history: how the tensor was made (None for a constant); ``grad_fn`` shows it as
            PyTorch's graph of nodes.
        name: a label for graph drawings: the one given, else a unique id string (the
            course's default).
    """

    __slots__ = ("__weakref__", "_grad", "_name", "_tensor", "backend", "history")

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
        self._grad: Tensor | None = None
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
        t._grad = None
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
            return _const(self, float(b), ())  # a number is 0-d: (0-d) + 1 stays 0-d
        if isinstance(b, Parameter):  # a Module's parameter stands for its value
            return self._ensure_tensor(b.value)
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

    # ------------------------------------------------------------------ autograd, as PyTorch
    @property
    def requires_grad(self) -> bool:
        """True if gradients flow to or through this tensor (it has a history).

        Setting it is ``requires_grad_(flag)``: only a leaf's flag can change.
        """
        return self.history is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Make this tensor a leaf that accumulates a gradient (or a constant); return self.

        Raises:
            RuntimeError: ``requires_grad_(False)`` on a non-leaf, with PyTorch's message.
        """
        h = self.history
        if h is not None and h.last_fn is not None:
            if requires_grad:
                return self  # it already requires grad, through its inputs
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach()."
            )
        if requires_grad:
            if h is None:
                self.history = History()
        else:
            self.history = None
        return self

    @property
    def is_leaf(self) -> CallableBool:
        """True unless an operation that records a gradient made this tensor (PyTorch's rule).

        Constants and tensors made by the user (``requires_grad`` or not) are leaves.
        Works as PyTorch's property (``if t.is_leaf:``) and as the course's method
        (``t.is_leaf()``): a ``CallableBool``.
        """
        h = self.history
        return _TRUE if h is None or h.last_fn is None else _FALSE

    @property
    def grad_fn(self) -> Node | None:
        """The backward node of the operation that made this tensor; None for a leaf.

        Its ``name()`` is PyTorch's (``MulBackward0``), its ``next_functions`` lead to the
        nodes of the inputs (an ``AccumulateGrad`` for a leaf that requires grad, None for
        a constant) and its ``saved_tensors`` are what the operation saved for backward.
        """
        h = self.history
        if h is None or h.last_fn is None:
            return None
        return grad_fn_of(h)

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by ``backward()``: leaves, and non-leaves that retain it.

        Reading it on a non-leaf that did not call ``retain_grad()`` gives None with
        PyTorch's UserWarning.
        """
        g = self._grad
        if g is None:
            h = self.history
            if h is not None and h.last_fn is not None and not h.retains_grad:
                warnings.warn(NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: {value.shape} for a tensor "
                    f"of shape {self.shape}"
                )
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf whose ``grad`` is kept by ``backward()`` (``retain_grad()``)."""
        h = self.history
        return h is not None and h.last_fn is not None and h.retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``grad`` during ``backward()`` (a leaf: no-op).

        Raises:
            RuntimeError: on a tensor that does not require grad.
        """
        engine.retain_grad(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` each time this tensor's gradient is computed.

        A hook that returns a tensor replaces the gradient (for the rest of the backward
        pass, and in ``grad``); one that returns None leaves it. Hooks run in the order
        registered, before the gradient of a leaf is accumulated.

        Returns:
            a handle whose ``remove()`` unregisters the hook.

        Raises:
            RuntimeError: on a tensor that does not require grad (as PyTorch).
            TypeError: if ``hook`` is not callable.
        """
        return engine.register_hook(self, hook)

    def detach(self) -> Tensor:
        """Return a constant tensor sharing this tensor's storage (and version counter)."""
        return Tensor._constant(self._tensor, self.backend)  # storage already on the backend

    @property
    def data(self) -> Tensor:
        """This tensor's values as a constant sharing its storage (``detach()``).

        Assigning a tensor (same backend) makes this tensor view that tensor's values.
        """
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._tensor = value.to(self.backend)._tensor

    # ------------------------------------------------------------------ the Variable protocol
    # unique_id, is_constant and parents come from GraphNode; the engine does the rest.
    def chain_rule(self, d_output: Tensor) -> Iterable[builtins.tuple[Tensor, Tensor]]:
        """Return ``(input, gradient)`` for each input that needs one, summed to its shape."""
        return engine.chain_rule(self, d_output)

    def accumulate_derivative(self, x: Tensor) -> None:
        """Add ``x`` to this leaf's ``grad`` (after the leaf's hooks, if any)."""
        engine.accumulate_derivative(self, x)

    def backward(
        self, grad_output: Tensor | float | None = None, retain_graph: bool | None = None
    ) -> None:
        """Backpropagate from this tensor, accumulating into the leaves' ``grad``.

        As in PyTorch, the values the graph's functions saved are freed on the way, so a
        second ``backward()`` through them raises, unless this one keeps them; and the
        pass runs under ``no_grad()``, so what hooks compute (``g * w``) records no graph
        and every ``grad`` is a constant.

        Args:
            grad_output: the gradient of the final result with respect to this tensor;
                may be omitted only for a one-element tensor (it is then 1).
            retain_graph: keep the saved values, for another backward pass.

        Raises:
            TypeError: if ``grad_output`` is neither a Tensor nor a real number.
            RuntimeError: on a constant tensor, or on a tensor of more than one element
                without ``grad_output``; through a graph already freed ("Trying to
                backward through the graph a second time"); through a tensor saved for
                backward and modified in place since.
            IndexingError: naming both shapes, if ``grad_output`` neither has this tensor's
                shape nor broadcasts to it.
        """
        engine.backward(self, grad_output, retain_graph)

    def zero_grad_(self) -> None:
        """Forget the accumulated gradient."""
        self._grad = None

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
        return Div.apply(self, self._ensure_tensor(b))

    def __rtruediv__(self, b: TensorLike) -> Tensor:
        return Div.apply(self._ensure_tensor(b), self)

    def __matmul__(self, b: Tensor | Parameter) -> Tensor:
        if isinstance(b, Parameter):  # a Module's parameter stands for its value
            b = b.value
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
        return self._number("float")

    def __int__(self) -> int:
        """``int(t)``: the one value truncated toward zero (``int(tensor([3.7])) == 3``)."""
        return int(self._number("int"))

    def _number(self, kind: str) -> float:
        """The value of a one-element tensor for ``float()`` / ``int()``.

        Raises:
            ValueError: for a tensor of another number of elements (PyTorch's message).
        """
        if self.numel() != 1:
            raise ValueError(
                f"only one element tensors can be converted to Python scalars ({kind}() of "
                f"a tensor of shape {self.shape})"
            )
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

    def reciprocal(self) -> Tensor:
        """Elementwise ``1 / x`` (the course's ``Inv``; ``a / b`` divides directly)."""
        return Inv.apply(self)

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

    # ------------------------------------------------------------------ in-place writes
    def _write(self, op: str, src: Tensor) -> Tensor:
        """Write ``src`` (broadcast to this shape) into this tensor in place; return self."""
        engine.check_in_place(self, op)
        self.backend.id_map(src, self)  # an in-place write: map bumps the version
        return self

    def fill_(self, value: float | Tensor) -> Tensor:
        """Fill with ``value`` in place (a number or a one-element tensor); return self.

        Raises:
            TypeError: if ``value`` is neither a real number nor a one-element tensor.
            RuntimeError: outside ``no_grad()`` on a tensor that requires grad, or with a
                ``value`` that requires grad (as ``copy_``: the fill would not be recorded,
                and its gradient silently lost).
        """
        if isinstance(value, Tensor):
            if value.numel() != 1:
                raise TypeError(
                    f"fill_ takes a number or a one-element tensor, got shape {value.shape}"
                )
            if value.history is not None and is_grad_enabled():
                engine.check_in_place(self, "fill_")  # raises if self requires grad
                raise RuntimeError(
                    "fill_ with a tensor that requires grad outside no_grad(): MiniTorch "
                    "cannot record the fill in the graph (PyTorch records FillBackward); use "
                    "value.detach(), or an out-of-place operation such as "
                    "zeros(shape) + value"
                )
            value = value.item()
        if not isinstance(value, numbers.Real):
            raise TypeError(f"fill_ takes a real number, got {type(value).__name__}")
        return self._write("fill_", _const(self, float(value), (1,) * self.dims))

    def zero_(self) -> Tensor:
        """Fill with zeros in place; return self (see ``fill_``)."""
        return self._write("zero_", _const(self, 0.0, (1,) * self.dims))

    def copy_(self, src: Tensor) -> Tensor:
        """Copy ``src``'s values (broadcast to this shape, from any backend) in place.

        Raises:
            TypeError: if ``src`` is not a Tensor.
            IndexingError: if ``src``'s shape does not broadcast to this one.
            RuntimeError: outside ``no_grad()`` on a tensor that requires grad, or from one
                that does (the copy would not be recorded).
        """
        if not isinstance(src, Tensor):
            raise TypeError(f"copy_ takes a Tensor, got {type(src).__name__} {short_repr(src)}")
        if src.history is not None and is_grad_enabled():
            engine.check_in_place(self, "copy_")  # raises if self requires grad
            raise RuntimeError(
                "copy_ from a tensor that requires grad outside no_grad(): MiniTorch cannot "
                "record the copy in the graph; use src.detach() or an out-of-place operation"
            )
        src = src.to(self.backend)
        mine, theirs = self._tensor.storage, src._tensor.storage
        if isinstance(mine, np.ndarray) and np.may_share_memory(mine, theirs):
            src = self.backend.id_map(src)  # overlapping views: read a copy
        return self._write("copy_", src)

    def uniform_(
        self, a: float = 0.0, b: float = 1.0, *, seed: int | np.random.Generator | None = None
    ) -> Tensor:
        """Fill in place with values drawn uniformly from ``[a, b)``; return self.

        ``seed`` is an int or a ``numpy.random.Generator`` (as for ``rand``); the global
        random state is never touched.
        """
        rng = _rng(seed)
        return self._from_numpy_("uniform_", rng.uniform(float(a), float(b), self.numel()))

    def normal_(
        self,
        mean: float = 0.0,
        std: float = 1.0,
        *,
        seed: int | np.random.Generator | None = None,
    ) -> Tensor:
        """Fill in place with values drawn from a normal distribution; return self.

        Raises:
            ValueError: if ``std`` is negative.
        """
        if not std >= 0:
            raise ValueError(f"normal_ expects std >= 0.0, got std={std}")
        rng = _rng(seed)
        return self._from_numpy_("normal_", rng.normal(float(mean), float(std), self.numel()))

    def _from_numpy_(self, op: str, values: npt.NDArray[np.float64]) -> Tensor:
        engine.check_in_place(self, op)  # before the values are drawn and moved
        src = Tensor(TensorData(values, self.shape), backend=self.backend)
        return self._write(op, src)

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
        """Index: one int per dimension gives a float (course), anything else a tensor.

        ``t[i, j]`` is a float, as in the course; a shorter index or one with slices
        (``t[0]``, ``t[:, 1]``, ``t[0:4:2]``, ``t[..., 0]``) is a view sharing storage, as in
        PyTorch, and gradients flow through it. A list of ints selects rows of the first
        dimension, as in PyTorch and NumPy: ``t[[0, 2, 0]]`` has shape ``(3, *t.shape[1:])``
        (a copy; gradients flow back to the rows), and ``t[[0, 1], 2:]`` indexes the rows
        further.

        Raises:
            IndexingError: for an index out of range, too many entries, not an int, or a
                list anywhere but first.
            ValueError: for a slice step that is not positive (as PyTorch).
            TypeError: for ``None`` (newaxis) or another kind of index.
        """
        rows = _index_rows(key, self.shape)
        if rows is not None:
            picked = IndexRows.apply(self, rows[0])
            further = (slice(None), *rows[1])  # the rest of the key, on every row
            return picked[further] if rows[1] else picked
        plan = _index_plan(key, self.shape)
        if plan is None:
            return self._tensor.get(_index_key(key))
        return Index.apply(self, lambda td: _view_of(td, plan))

    def __setitem__(self, key: Any, val: TensorLike) -> None:
        """Write in place: ``t[i, j] = v`` one element, ``t[0] = v`` / ``t[:, 1] = v`` a view.

        A view is filled with a number or with a tensor that broadcasts to it; so are the
        rows ``t[[0, 2]] = v`` of a list of ints (``v`` broadcast to ``(2, *t.shape[1:])``;
        a row listed twice gets the last of its values).

        Raises:
            TypeError: for a value that is neither a real number nor a Tensor.
            IndexingError: for an index that does not fit, or a value that does not
                broadcast to the rows a list selects.
        """
        if not isinstance(val, (Tensor, numbers.Real)):
            raise TypeError(
                f"tensor[{key!r}] = value: the value must be a real number or a Tensor, got "
                f"{type(val).__name__} {short_repr(val)}"
            )
        rows = _index_rows(key, self.shape)
        engine.check_in_place(self, "tensor[...] = value")
        if rows is not None:
            self._set_rows(key, rows, self._ensure_tensor(val))
            return
        plan = _index_plan(key, self.shape)
        if plan is None:
            self._tensor.set(_index_key(key), float(val))
            return
        part = Tensor(_view_of(self._tensor, plan), backend=self.backend)
        self.backend.id_map(self._ensure_tensor(val), part)

    def _set_rows(
        self,
        key: Any,
        rows: builtins.tuple[builtins.tuple[int, ...], builtins.tuple[Any, ...]],
        val: Tensor,
    ) -> None:
        """``t[[i, j]] = val``: each listed row written with its row of ``val`` (broadcast)."""
        picked, rest = rows
        if rest:
            raise IndexingError(
                f"tensor[{key!r}] = value: after a list of rows no further index is "
                "supported here; write t[[i, j]] = value"
            )
        shape = (len(picked), *self.shape[1:])
        if val.shape != shape:
            if not broadcasts_to(val.shape, shape):
                raise IndexingError(
                    f"tensor[{key!r}] = value: a value of shape {val.shape} does not "
                    f"broadcast to the {len(picked)} rows' shape {shape}"
                )
            val = expand(val.to(self.backend), shape)
        for k, i in enumerate(picked):
            self.backend.id_map(_row(val, k), _row(self, i))  # views: no graph, no copy

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

    # ------------------------------------------------------------------ copy and pickle
    def __reduce_ex__(self, protocol: Any) -> builtins.tuple[Any, ...]:
        """Pickle (and ``copy.copy``) as PyTorch: values, shape, backend and requires_grad.

        The backend travels by name (``TensorBackend.__reduce__``); device storage is
        pickled as host values and goes back to the device when loaded. As in PyTorch the
        gradient is not pickled, and a non-leaf loads as a leaf that requires grad (its
        graph stays behind). ``copy.copy`` shares the storage of a host tensor.
        """
        td = self._tensor
        storage = td.storage
        if not isinstance(storage, np.ndarray):
            storage = self.backend.ops.storage_to_numpy(storage)
        strides = builtins.tuple(int(s) for s in td.strides)
        args = (storage, self.shape, strides, self.backend, self.requires_grad, self._name)
        return (_rebuild_tensor, args)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """``copy.deepcopy``: new storage, ``requires_grad`` and ``grad`` kept, as PyTorch.

        Raises:
            RuntimeError: for a tensor made by a recorded operation (a non-leaf), with
                PyTorch's message: a copy cannot take the graph along.
        """
        h = self.history
        if h is not None and h.last_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                f"deepcopy protocol at the moment (this one has grad_fn="
                f"{node_name(h.last_fn)}); deepcopy t.detach() for its values"
            )
        td = self._tensor
        ops = self.backend.ops
        if isinstance(td.storage, np.ndarray):
            storage = copy.deepcopy(td.storage, memo)
        else:
            storage = ops.storage_from_numpy(ops.storage_to_numpy(td.storage).copy())
        out = Tensor._constant(TensorData(storage, self.shape, td.strides), self.backend)
        memo[id(self)] = out
        out._name = self._name
        if h is not None:
            out.history = History()
        if self._grad is not None:
            out._grad = copy.deepcopy(self._grad, memo)
        return out

    def __repr__(self) -> str:
        body = self._tensor.to_string(self.to_numpy())
        extra = ""
        if self.backend != SimpleBackend:
            extra += f", backend={self.backend.name}"
        h = self.history
        if h is not None:
            if h.last_fn is None:
                extra += ", requires_grad=True"
            else:
                extra += f", grad_fn=<{node_name(h.last_fn)}>"
        return f"tensor({body}{extra})"


def _rebuild_tensor(
    storage: Storage,
    shape: builtins.tuple[int, ...],
    strides: builtins.tuple[int, ...],
    backend: TensorBackend,
    requires_grad: bool,
    name: str | None,
) -> Tensor:
    """A tensor from what ``Tensor.__reduce_ex__`` pickled (host storage goes to the device)."""
    t = Tensor(TensorData(storage, shape, strides), name=name, backend=backend)
    return t.requires_grad_() if requires_grad else t


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A generator for ``seed`` (an int, a Generator, or None for fresh entropy).

    Raises:
        TypeError: for a seed of another type.
        ValueError: for a negative int.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (
        not isinstance(seed, (int, np.integer)) or isinstance(seed, (bool, np.bool_))
    ):
        raise TypeError(
            f"seed must be an int, a numpy.random.Generator or None, got {type(seed).__name__}"
        )
    if seed is not None and seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return np.random.default_rng(seed)


def _matmul_operand(b: object, side: str) -> str:
    """The message for ``@`` with an operand that is not a Tensor (TypeError, as PyTorch)."""
    hint = "; to scale a tensor use *" if isinstance(b, numbers.Real) else ""
    return (
        f"@ (matmul) needs two Tensors, got {type(b).__name__} {short_repr(b)} as the {side} "
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


def _index_rows(
    key: Any, shape: builtins.tuple[int, ...]
) -> builtins.tuple[builtins.tuple[int, ...], builtins.tuple[Any, ...]] | None:
    """Parse ``t[[i, j], ...]``: the rows the list selects and the rest of the key.

    None when the key holds no list (a basic index, ``_index_plan``'s). The entries are
    checked and made non-negative here, once.

    Raises:
        IndexingError: for a list that is not first, a nested list, an entry that is not an
            int (bools included), an entry out of range, or a 0-d tensor.
    """
    first: list[Any] | None
    rest: builtins.tuple[Any, ...]
    if isinstance(key, list):
        first, rest = key, ()
    elif isinstance(key, tuple) and key and isinstance(key[0], list):
        first, rest = key[0], key[1:]
    else:
        first, rest = None, key if isinstance(key, tuple) else ()
    if any(isinstance(k, list) for k in rest):
        raise IndexingError(
            f"tensor index {key!r}: a list of ints is supported as the first entry only "
            "(it selects rows of the first dimension)"
        )
    if first is None:
        return None
    if not shape:
        raise IndexingError(f"tensor index {key!r}: a 0-d tensor has no rows to select")
    n = shape[0]
    rows = []
    for k in first:
        if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
            raise IndexingError(
                f"tensor index {key!r}: a list index holds ints (rows of the first "
                f"dimension), got {k!r} ({type(k).__name__})"
            )
        i = int(k) + n if k < 0 else int(k)
        if not 0 <= i < n:
            raise IndexingError(
                f"tensor index {key!r}: index {int(k)} is out of range for dimension 0 of "
                f"size {n} (shape {shape})"
            )
        rows.append(i)
    return tuple(rows), rest


def _index_plan(key: Any, shape: builtins.tuple[int, ...]) -> _Plan | None:
    """Parse ``t[key]``: None for one int per dimension (an element), else a plan per dim.

    Each plan entry is an int (that dimension is indexed away) or ``(start, length, step)``.
    """
    entries = list(key) if isinstance(key, tuple) else [key]
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
    return tuple(key) if isinstance(key, tuple) else (key,)


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
