"""``Tensor``: an n-dimensional array on a backend that records how it was computed.

The course's ``Tensor``: data, operators and math, each operation a ``Function`` of
``functions.py``. The rest is one module away and the methods call it, as in PyTorch:
``autograd/`` (the graph and ``backward``), ``indexing.py`` (``t[key]``), ``inplace.py``
(``fill_``, ``copy_``, ...) and ``torch_compat.py`` (PyTorch's types, ``max(dim)``, copy
and pickle).
"""

from __future__ import annotations

import builtins
import numbers
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from math import prod
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import GraphNode
from minitorch.operators import Parameter

from . import indexing, inplace, torch_compat
from .autograd import History, Node, RemovableHandle, engine
from .autograd.graph import grad_fn_of, node_name
from .backends.protocol import TensorBackend, _const, check_same_device, on_backend
from .backends.registry import get_default_backend, resolve_backend
from .backends.simple import SimpleBackend
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
    Inv,
    IsClose,
    Log,
    MatMul,
    Mean,
    Mul,
    Neg,
    Permute,
    Pow,
    ReLU,
    RPow,
    Sigmoid,
    Sqrt,
    Sum,
    View,
)
from .tensor_data import (
    IndexingError,
    Shape,
    Storage,
    Strides,
    TensorData,
    UserShape,
    check_dim,
    check_scalar_dim,
    check_shape,
    short_repr,
    view_shape,
)
from .torch_compat import CallableBool, MaxResult, NumelSize, callable_bool

__all__ = ["Tensor", "TensorLike"]

TensorLike: TypeAlias = "float | int | Tensor"


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

    # ``array + t`` must not make ``t`` an array (dropping its graph): without ufuncs numpy
    # gives way to ``t.__radd__``, which refuses ndarrays on either side (as PyTorch).
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
        if not self.backend.ops.is_storage(v.storage):
            self._tensor = on_backend(v, self.backend)  # host data for a device: copied

    # ------------------------------------------------------------------ construction
    @classmethod
    def _constant(cls, td: TensorData, backend: TensorBackend) -> Tensor:
        """A constant over ``td``, whose storage ``backend``'s kernels wrote (no checks).

        Speed: every operation's output is made here; ``__init__`` costs about 10% more of
        a one-element ``a + b`` (MiniTorch's tensor benchmark). No five-way tuple assignment:
        it builds and unpacks a tuple (60 ns more, CPython 3.11).
        """
        t = object.__new__(cls)
        t._tensor, t.backend = td, backend
        t.history = t._grad = t._name = None
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
        storage = self.backend.ops.storage_zeros(prod(shape))
        return Tensor(TensorData(storage, shape), backend=self.backend)

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
        """A differentiable copy on ``backend`` (a backend or a name), or self if already there."""
        return torch_compat.to_backend(self, resolve_backend(backend))

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
    def size(self) -> NumelSize:
        """The number of elements (the course's); ``t.size()`` is the shape, as PyTorch's."""
        return NumelSize(self._tensor.shape)

    def numel(self) -> int:
        """The number of elements."""
        return self._tensor.size

    @property
    def dims(self) -> int:
        """The number of dimensions."""
        return self._tensor.dims

    @property
    def version(self) -> int:
        """How many in-place writes this tensor's storage has seen (shared with its views)."""
        return self._tensor.version

    # ------------------------------------------------------------------ autograd (autograd/)
    @property
    def requires_grad(self) -> bool:
        """True if gradients flow to or through this tensor; setting it is ``requires_grad_``."""
        return self.history is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        engine.requires_grad_(self, flag, "requires_grad")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Make this tensor a leaf that accumulates a gradient (or, False, a constant); return self.

        Raises:
            TypeError: if ``requires_grad`` is not a bool (``'False'`` would be true).
            RuntimeError: ``requires_grad_(False)`` on a non-leaf, with PyTorch's message.
        """
        return engine.requires_grad_(self, requires_grad)

    @property
    def is_leaf(self) -> CallableBool:
        """True unless a recorded operation made this tensor; callable too, as the course's."""
        h = self.history
        return callable_bool(h is None or h.last_fn is None)

    @property
    def grad_fn(self) -> Node | None:
        """The node of the operation that made this tensor (``MulBackward0``); None for a leaf."""
        h = self.history
        return None if h is None or h.last_fn is None else grad_fn_of(h)

    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward()`` accumulated (unretained, a non-leaf's is None: a warning)."""
        return engine.grad_of(self)

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        engine.set_grad(self, value)

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf whose ``grad`` is kept by ``backward()`` (``retain_grad()``)."""
        h = self.history
        return h is not None and h.last_fn is not None and h.retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``grad`` (RuntimeError without ``requires_grad``)."""
        engine.retain_grad(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` on each gradient of this tensor; a tensor it returns replaces it.

        Returns a handle whose ``remove()`` unregisters the hook (errors: ``engine.py``).
        """
        return engine.register_hook(self, hook)

    def detach(self) -> Tensor:
        """Return a constant tensor sharing this tensor's storage (and version counter)."""
        return Tensor._constant(self._tensor, self.backend)  # storage already on the backend

    @property
    def data(self) -> Tensor:
        """The values as a constant sharing storage; assigning a tensor makes this view it."""
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._tensor = value.to(self.backend)._tensor

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
        """Backpropagate from this tensor (under ``no_grad()``) into the leaves' ``grad``.

        ``grad_output`` (the result's gradient) may be left out for one element (it is 1);
        ``retain_graph`` keeps what the functions saved, for another backward pass.

        Raises:
            TypeError: if ``grad_output`` is neither a Tensor nor a real number.
            RuntimeError: on a constant or, without ``grad_output``, several elements;
                through a freed graph, or a saved tensor written in place since.
            IndexingError: naming both shapes, if ``grad_output`` does not broadcast.
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
            raise TypeError(torch_compat.matmul_operand(b, "right"))
        return MatMul.apply(self, self._ensure_tensor(b))

    def __rmatmul__(self, b: object) -> Tensor:
        raise TypeError(torch_compat.matmul_operand(b, "left"))

    def __neg__(self) -> Tensor:
        return Neg.apply(self)

    # In place (inplace.py): into the storage, seen by every view (w -= lr * w.grad).
    __iadd__ = inplace.operator_("+=", operator.add)
    __isub__ = inplace.operator_("-=", operator.sub)
    __imul__ = inplace.operator_("*=", operator.mul)
    __itruediv__ = inplace.operator_("/=", operator.truediv)
    add_ = inplace.operator_("add_", operator.add, alpha=True)
    sub_ = inplace.operator_("sub_", operator.sub, alpha=True)
    mul_ = inplace.operator_("mul_", operator.mul)
    div_ = inplace.operator_("div_", operator.truediv)

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

    def __ne__(self, b: object) -> Tensor:  # type: ignore[override]
        """Elementwise ``!=``: 1.0 where the values differ (NaN differs from everything)."""
        return NotImplemented if (eq := self.__eq__(b)) is NotImplemented else 1.0 - eq

    # __eq__ is elementwise, so hash by identity.
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; use .all()"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return torch_compat.as_number(self, "float")

    def __int__(self) -> int:
        """``int(t)``: the one value truncated toward zero (``int(tensor([3.7])) == 3``)."""
        return int(torch_compat.as_number(self, "int"))

    def __len__(self) -> int:
        if self.dims == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        """``t[0]``, ``t[1]``, ...; a TypeError for a 0-d tensor, as PyTorch's."""
        return torch_compat.iterate(self)

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
        return RPow.apply(self, float(base))  # torch.pow(base, t): C's pow, any base

    def max(self, dim: int | None = None, keepdim: bool = False) -> Tensor | MaxResult:
        """The maximum, as PyTorch: ``t.max()`` a tensor, ``t.max(dim)`` ``(values, indices)``.

        ``t.max()`` has shape ``(1,)``; ``t.max(dim)`` drops ``dim`` unless ``keepdim``.
        """
        return torch_compat.max_of(self, dim, keepdim)

    def sum(self, dim: int | None = None) -> Tensor:
        """Sum over ``dim`` (kept with size 1), or over everything (shape ``(1,)``)."""
        if dim is not None and self.dims == 0:
            return Sum.apply(self.view(1), check_scalar_dim(dim)).view()
        return Sum.apply(self, None if dim is None else check_dim(dim, self.shape))

    def mean(self, dim: int | None = None) -> Tensor:
        """Mean over ``dim`` (kept with size 1), or over everything (shape ``(1,)``)."""
        if dim is not None and self.dims == 0:
            return Mean.apply(self.view(1), check_scalar_dim(dim)).view()
        return Mean.apply(self, None if dim is None else check_dim(dim, self.shape))

    def all(self, dim: int | None = None) -> Tensor:
        """1.0 where every element over ``dim`` (or everything) is non-zero, else 0.0."""
        if dim is not None and self.dims == 0:
            return All.apply(self.view(1), check_scalar_dim(dim)).view()
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
        return View.apply(self, view_shape(shape, self.shape))

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
        return self if self._tensor.is_contiguous() else Copy.apply(self)

    def is_contiguous(self) -> bool:
        """True if the storage is laid out row-major for the shape."""
        return self._tensor.is_contiguous()

    # ------------------------------------------------------------------ in place (inplace.py)
    def fill_(self, value: float | Tensor) -> Tensor:
        """Fill with a number or a one-element tensor in place (errors: ``inplace.py``)."""
        return inplace.fill_(self, value)

    def zero_(self) -> Tensor:
        """Fill with zeros in place; return self (see ``fill_``)."""
        return inplace.zero_(self)

    def copy_(self, src: Tensor) -> Tensor:
        """Copy ``src``'s values (broadcast, any backend) in place (errors: ``inplace.py``)."""
        return inplace.copy_(self, src)

    def uniform_(
        self, a: float = 0.0, b: float = 1.0, *, seed: int | np.random.Generator | None = None
    ) -> Tensor:
        """Fill in place with values drawn uniformly from ``[a, b)`` (``seed`` as ``rand``)."""
        return inplace.uniform_(self, a, b, seed)

    def normal_(
        self, mean: float = 0.0, std: float = 1.0, *, seed: int | np.random.Generator | None = None
    ) -> Tensor:
        """Fill in place with normal values (``seed`` as ``rand``); ValueError for ``std < 0``."""
        return inplace.normal_(self, mean, std, seed)

    # ------------------------------------------------------------------ reading values
    def item(self) -> float:
        """Return the single value of a one-element tensor (RuntimeError for another size)."""
        if self.numel() != 1:
            raise RuntimeError(f"item() needs a one-element tensor, got shape {self.shape}")
        return float(self._tensor.storage[self._tensor.index((0,) * self.dims)])

    def __getitem__(self, key: Any) -> Any:
        """``t[i, j]`` (one int per dimension) is a float, as in the course; else a tensor.

        ``t[0]``, ``t[:, 1]``, ``t[0:4:2]``, ``t[..., 0]`` are views that gradients flow
        through; ``t[[0, 2, 0]]`` copies rows of the first dimension. An IndexingError for
        an index that does not fit, a ValueError for a step below 1, a TypeError for None.
        """
        return indexing.get_item(self, key)

    def __setitem__(self, key: Any, val: TensorLike) -> None:
        """Write a number, or a tensor broadcast to the part ``key`` selects, in place."""
        if not isinstance(val, (Tensor, numbers.Real)):
            raise TypeError(
                f"tensor[{key!r}] = value: the value must be a real number or a Tensor, got "
                f"{type(val).__name__} {short_repr(val)}"
            )
        indexing.set_item(self, key, val)

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
        """``np.array(t)``: shares host storage unless a copy is asked or needed (``dtype``)."""
        return torch_compat.to_array(self, dtype, copy)

    # ------------------------------------------------------------------ copy and pickle
    def __reduce_ex__(self, protocol: Any) -> builtins.tuple[Any, ...]:
        """Pickle as PyTorch: values, shape, backend (by name), requires_grad; no grad or graph."""
        return torch_compat.reduce_tensor(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """``copy.deepcopy`` as PyTorch: new storage, ``requires_grad`` and ``grad`` kept.

        Raises:
            RuntimeError: for a non-leaf (a copy cannot take the graph along).
        """
        return torch_compat.deepcopy_tensor(self, memo)

    def __repr__(self) -> str:
        body = self._tensor.to_string(self.to_numpy())
        extra = "" if self.backend == SimpleBackend else f", backend={self.backend.name}"
        h = self.history
        if h is not None:
            fn = h.last_fn
            extra += ", requires_grad=True" if fn is None else f", grad_fn=<{node_name(fn)}>"
        return f"tensor({body}{extra})"
