"""Strided storage: how an n-dimensional index maps to a position in a flat buffer.

The index helpers (``index_to_position``, ``to_index``, ``broadcast_index``) take and fill
integer arrays and use only loops over them, so Numba compiles them unchanged for the CPU
(mt-fast) and GPU (mt-cuda) kernels: those layers import these functions, they do not
rewrite them.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Iterable, Iterator, Sequence
from math import prod
from typing import Any, TypeAlias, overload

import numpy as np
import numpy.typing as npt

__all__ = [
    "MAX_DIMS",
    "Index",
    "IndexingError",
    "Shape",
    "Storage",
    "Strides",
    "TensorData",
    "UserIndex",
    "UserShape",
    "UserStrides",
    "VersionCounter",
    "broadcast_index",
    "broadcasts_to",
    "check_dim",
    "check_reduction_dim",
    "check_scalar_dim",
    "check_shape",
    "index_to_position",
    "is_contiguous_layout",
    "shape_broadcast",
    "short_repr",
    "strides_from_shape",
    "to_index",
    "view_shape",
]

MAX_DIMS = 32
"""The largest number of dimensions a tensor may have (kernels size index buffers by it)."""

_MAX_NUMEL = np.iinfo(np.intp).max // 8
"""The most float64 elements a numpy array's byte count can hold (2**60 - 1 on 64 bits)."""


class IndexingError(IndexError):
    """An index, shape or stride that does not fit the tensor it is used with."""


def short_repr(value: object) -> str:
    """``repr(value)`` cut to one short line, for error messages."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


Storage: TypeAlias = Any
"""A flat float64 buffer: a numpy array on the CPU, a device array on the GPU."""
Index: TypeAlias = npt.NDArray[np.int64]
Shape: TypeAlias = npt.NDArray[np.int64]
Strides: TypeAlias = npt.NDArray[np.int64]
UserIndex: TypeAlias = Sequence[int]
UserShape: TypeAlias = Sequence[int]
UserStrides: TypeAlias = Sequence[int]


def index_to_position(index: Index, strides: Strides) -> int:
    """Return the position in storage of the element at ``index``, given ``strides``."""
    # BEGIN SOLUTION task2_1
    position = 0
    for i in range(len(index)):
        position += index[i] * strides[i]
    return position
    # END SOLUTION


def to_index(ordinal: int, shape: Shape, out_index: Index) -> None:
    """Write into ``out_index`` the index of the ``ordinal``-th element in row-major order.

    The inverse of ``index_to_position`` for contiguous strides; works for any shape.
    """
    # BEGIN SOLUTION task2_1
    cur = ordinal
    for i in range(len(shape) - 1, -1, -1):
        out_index[i] = cur % shape[i]
        cur = cur // shape[i]
    # END SOLUTION


def broadcast_index(big_index: Index, big_shape: Shape, shape: Shape, out_index: Index) -> None:
    """Map an index of the broadcast shape ``big_shape`` to an index of ``shape``.

    Dimensions are aligned on the right; where ``shape`` has size 1 the index is 0.
    """
    # BEGIN SOLUTION task2_2
    offset = len(big_shape) - len(shape)
    for i in range(len(shape)):
        if shape[i] > 1:
            out_index[i] = big_index[i + offset]
        else:
            out_index[i] = 0
    # END SOLUTION


def is_contiguous_layout(shape: UserShape | Shape, strides: UserStrides | Strides) -> bool:
    """True if ``strides`` are row-major for ``shape`` (size-1 dimensions may have any stride).

    Plain loops over two integer sequences, so Numba compiles it unchanged: mt-fast and
    mt-cuda wrap this function (``register_jitable`` / ``cuda.jit``) rather than rewrite it.
    """
    expected = 1
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] != 1 and strides[i] != expected:
            return False
        expected *= shape[i]
    return True


def check_dim(dim: Any, shape: UserShape) -> int:
    """Return ``dim`` as a non-negative dimension of ``shape`` (negative counts from the end).

    The one dim validator: every function that takes a ``dim`` uses it.

    Raises:
        IndexingError: if ``dim`` is not an int (bools are not dims), or is out of range.
    """
    dims = len(shape)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, (bool, np.bool_)):
        raise IndexingError(f"dim must be an int, got {dim!r} ({type(dim).__name__})")
    if dims == 0:
        raise IndexingError(f"dim {dim} is out of range: a 0-d tensor (shape ()) has no dims")
    if not -dims <= dim < dims:
        raise IndexingError(
            f"dim {dim} is out of range for a tensor of shape {tuple(shape)} "
            f"(expected a dim in [{-dims}, {dims - 1}])"
        )
    return int(dim) % dims


@overload
def check_reduction_dim(name: str, dim: None, shape: UserShape) -> None: ...
@overload
def check_reduction_dim(name: str, dim: int, shape: UserShape) -> int: ...
def check_reduction_dim(name: str, dim: Any, shape: UserShape) -> int | None:
    """``check_dim`` for a reduction that has no value over no elements (``max``, ``argmax``).

    ``dim=None`` means every element. Returns the dim (non-negative), or None for None.

    Raises:
        IndexingError: as ``check_dim``, or naming ``name`` if the elements reduced over are
            none: ``argmax(): Expected reduction dim 1 to have non-zero size``, as PyTorch.
    """
    if dim is None:
        if prod(shape) == 0:
            raise IndexingError(
                f"{name}(): the tensor of shape {tuple(shape)} has no elements, so no maximum "
                "(give a dim of non-zero size)"
            )
        return None
    d = check_dim(dim, shape)
    if shape[d] == 0:
        raise IndexingError(
            f"{name}(): Expected reduction dim {d} to have non-zero size (shape {tuple(shape)})"
        )
    return d


def shape_broadcast(shape1: UserShape, shape2: UserShape) -> tuple[int, ...]:
    """Return the shape both shapes broadcast to (NumPy/PyTorch rules).

    Raises:
        IndexingError: naming both shapes, if they do not broadcast.
    """
    # BEGIN SOLUTION task2_2
    n = max(len(shape1), len(shape2))
    a = (1,) * (n - len(shape1)) + tuple(shape1)
    b = (1,) * (n - len(shape2)) + tuple(shape2)
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise IndexingError(
                f"shapes {tuple(shape1)} and {tuple(shape2)} do not broadcast "
                f"(size {x} vs {y} in dimension {len(out)})"
            )
    return tuple(out)
    # END SOLUTION


def broadcasts_to(shape: UserShape, target: UserShape) -> bool:
    """True if ``shape`` broadcasts to exactly ``target`` (not to something larger)."""
    try:
        return shape_broadcast(shape, target) == tuple(target)
    except IndexingError:
        return False


def strides_from_shape(shape: UserShape) -> tuple[int, ...]:
    """Return the row-major (contiguous) strides of ``shape``."""
    strides = []
    offset = 1
    for s in reversed(shape):
        strides.append(offset)
        offset *= s
    return tuple(reversed(strides))


def _is_int(x: Any) -> bool:
    """True for a Python or numpy integer that is not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def check_shape(shape: Any) -> tuple[int, ...]:
    """Return ``shape`` as a tuple of ints (a single int is a 1-D shape), after checking it.

    The one shape validator: ``zeros ones rand``, ``TensorData`` and ``view`` use it.

    Raises:
        TypeError: if ``shape`` is not an int or a sequence of ints (floats and bools are
            not sizes; numpy integers are).
        IndexingError: for a negative size, or more than ``MAX_DIMS`` dimensions.
        ValueError: for more elements than a float64 array can address (2**60 - 1).
    """
    if type(shape) is tuple and len(shape) <= MAX_DIMS:
        for s in shape:
            if type(s) is not int or s < 0:
                break
        else:
            if prod(shape) <= _MAX_NUMEL:
                return shape  # already a valid shape: the common case, kept cheap
    if _is_int(shape):
        shape = (shape,)
    try:
        entries = tuple(shape)
    except TypeError:
        raise TypeError(
            f"a shape is an int or a sequence of ints, got {type(shape).__name__}: {shape!r}"
        ) from None
    for s in entries:
        if not _is_int(s):
            raise TypeError(
                f"shape {entries!r}: every size must be an int, got {s!r} ({type(s).__name__})"
            )
    out = tuple(int(s) for s in entries)
    negative = [s for s in out if s < 0]
    if negative:
        raise IndexingError(f"shape {out} has a negative size ({negative[0]})")
    if len(out) > MAX_DIMS:
        raise IndexingError(f"shape {out} has {len(out)} dimensions; at most {MAX_DIMS}")
    count = prod(out)
    if count > _MAX_NUMEL:
        raise ValueError(
            f"shape {out} has {count} elements, more than the {_MAX_NUMEL} (2**60 - 1) a "
            "float64 tensor can address"
        )
    return out


def view_shape(shape: tuple[Any, ...], old: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``view`` asks for, of a tensor of shape ``old``, with its ``-1`` inferred.

    Raises:
        TypeError: for a size that is not an int.
        IndexingError: for a size below -1, two -1s, or a different number of elements.
    """
    for s in shape:
        if not _is_int(s):
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


def check_scalar_dim(dim: Any) -> int:
    """Check a ``dim`` given to a reduction of a 0-d tensor: 0 or -1, as PyTorch allows.

    The reduction then runs over the tensor viewed as shape ``(1,)``, whose dim 0 this
    returns.

    Raises:
        IndexingError: if ``dim`` is not an int, or not 0 or -1.
    """
    if not _is_int(dim):
        raise IndexingError(f"dim must be an int, got {dim!r} ({type(dim).__name__})")
    if dim not in (0, -1):
        raise IndexingError(
            f"dim {dim} is out of range for a 0-d tensor (expected a dim in [-1, 0])"
        )
    return 0


_FLOAT64 = np.dtype(np.float64)

_row_major_strides = functools.lru_cache(maxsize=1024)(strides_from_shape)
"""``strides_from_shape``, remembered per shape (its result depends on the shape alone)."""


def _read_only(values: tuple[int, ...]) -> npt.NDArray[np.int64]:
    """An int64 array of ``values`` that cannot be written: it is shared (see below)."""
    array = np.array(values, np.int64)
    array.flags.writeable = False
    return array


@functools.lru_cache(maxsize=1024)
def _row_major_arrays(shape: tuple[int, ...]) -> builtins.tuple[Shape, Strides]:
    """The kernels' shape and row-major stride arrays for ``shape``.

    Shared by every row-major TensorData of that shape, so read-only: a kernel that wrote
    into its ``out_shape`` would change every tensor of that shape made afterwards.
    """
    return _read_only(shape), _read_only(_row_major_strides(shape))


@functools.lru_cache(maxsize=4096)
def _layout_arrays(
    shape: tuple[int, ...], strides: tuple[int, ...]
) -> builtins.tuple[Shape, Strides]:
    """The kernels' shape and stride arrays of a layout, shared by every TensorData with it.

    Kernels only read them; views of a few layouts (a transposed weight, a batch of one)
    recur on every training step.
    """
    if strides == _row_major_strides(shape):
        return _row_major_arrays(shape)
    return _read_only(shape), _read_only(strides)


_ROW_MAJOR: dict[tuple[int, ...], Any] = {}
"""A shape's row-major strides and the kernels' arrays, read with a plain ``dict.get`` on
every kernel output; cleared when it reaches ``_ROW_MAJOR_MAX`` shapes. Speed: against the
two cached calls, about 5% of a one-element ``a + b`` (MiniTorch's tensor benchmark)."""
_ROW_MAJOR_MAX = 1024


class VersionCounter:
    """How many in-place writes a storage has seen; shared by every view of it.

    A ``Function`` that saves a tensor for backward records its version, and backward
    refuses to run if it changed (PyTorch's check for in-place writes).
    """

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def bump(self) -> None:
        """Record one in-place write."""
        self.value += 1


class TensorData:
    """A flat storage viewed as an n-dimensional array through a shape and strides.

    Args:
        storage: the flat buffer (a numpy float64 array, or a backend's device array).
        shape: the size of each dimension.
        strides: how far to step in storage for each dimension (default: row-major).
        version_counter: the in-place write counter to share (a view passes its base's); a
            new one (made on first use) by default.

    Raises:
        IndexingError: if shape and strides disagree, a stride is negative, or the storage
            is too small.
    """

    __slots__ = (
        "_contiguous",
        "_kernel_args",
        "_storage",
        "_version",
        "dims",
        "shape",
        "size",
        "strides",
    )

    def __init__(
        self,
        storage: Storage,
        shape: UserShape,
        strides: UserStrides | None = None,
        *,
        version_counter: VersionCounter | None = None,
    ) -> None:
        self._version = version_counter  # made on first use: most data is never written in place
        if isinstance(storage, np.ndarray):
            if storage.dtype is not _FLOAT64 and storage.dtype != _FLOAT64:
                storage = storage.astype(np.float64)
            if storage.ndim != 1:
                raise IndexingError(f"storage must be 1-D, got {storage.ndim} dimensions")
        elif isinstance(storage, (list, tuple)):
            storage = np.array(storage, dtype=np.float64)
        self._storage = storage
        # Everything derived from shape and strides is computed here, once: a TensorData
        # never changes its shape or strides (views are new TensorData objects).
        shape_t = check_shape(shape)
        size = prod(shape_t)
        if strides is None:
            strides_t = _row_major_strides(shape_t)
            bad = size > len(storage)
        else:
            strides_t = tuple(int(s) for s in strides)
            if len(strides_t) != len(shape_t):
                raise IndexingError(f"strides {strides_t} do not match shape {shape_t}")
            negative = [d for d, st in enumerate(strides_t) if st < 0]
            if negative:
                raise IndexingError(
                    f"strides {strides_t} have a negative stride ({strides_t[negative[0]]} in "
                    f"dim {negative[0]}); strides must be >= 0, as in PyTorch"
                )
            last = sum((s - 1) * st for s, st in zip(shape_t, strides_t, strict=True))
            bad = size > 0 and last >= len(storage)
        if bad:
            raise IndexingError(
                f"storage of length {len(storage)} is too small for shape {shape_t} "
                f"with strides {strides_t}"
            )
        self.shape: tuple[int, ...] = shape_t
        self.strides: tuple[int, ...] = strides_t
        self.dims = len(shape_t)
        self.size = size
        self._contiguous = strides is None or is_contiguous_layout(shape_t, strides_t)
        # (storage, shape, strides) with the integer arrays kernels take, made on first use.
        self._kernel_args: builtins.tuple[Storage, Shape, Strides] | None = None

    @classmethod
    def _fresh(cls, storage: Storage, shape: builtins.tuple[int, ...], size: int) -> TensorData:
        """A row-major TensorData over a new buffer of ``size == prod(shape)`` elements.

        For kernel outputs, whose ``shape`` was derived from checked tensors: it skips the
        checks of ``__init__``. Speed: every operation's output is made here; the checks
        took about a third of a one-element ``a + b`` (MiniTorch's tensor benchmark).
        """
        td = object.__new__(cls)
        td._version = None
        td._storage = storage
        td.shape = shape
        layout = _ROW_MAJOR.get(shape)
        if layout is None:
            if len(_ROW_MAJOR) >= _ROW_MAJOR_MAX:
                _ROW_MAJOR.clear()
            layout = _ROW_MAJOR[shape] = (_row_major_strides(shape), _row_major_arrays(shape))
        td.strides, (shape_array, strides_array) = layout
        td._kernel_args = (storage, shape_array, strides_array)
        td.dims = len(shape)
        td.size = size
        td._contiguous = True
        return td

    @classmethod
    def _view(
        cls,
        storage: Storage,
        shape: builtins.tuple[int, ...],
        strides: builtins.tuple[int, ...],
        version_counter: VersionCounter | None,
    ) -> TensorData:
        """A view over ``storage`` whose layout a kernel wrapper derived from checked data.

        It skips the checks of ``__init__``: for the batch views of ``matrix_multiply`` and
        the transposes of its backward. Speed: about 5-10% of the tensor benchmark's MLP step.
        """
        td = object.__new__(cls)
        td._version = version_counter
        td._storage = storage
        td.shape = shape
        td.strides = strides
        td.dims = len(shape)
        td.size = prod(shape)
        td._contiguous = is_contiguous_layout(shape, strides)
        td._kernel_args = None
        return td

    @property
    def version(self) -> int:
        """How many in-place writes the storage has seen (with every view of it): an int."""
        counter = self._version
        return 0 if counter is None else counter.value

    @property
    def version_counter(self) -> VersionCounter:
        """The storage's in-place write counter, shared with every view of it (``bump()``)."""
        if self._version is None:
            self._version = VersionCounter()
        return self._version

    @property
    def storage(self) -> Storage:
        """The flat buffer (shared with every view of it)."""
        return self._storage

    def tuple(self) -> builtins.tuple[Storage, Shape, Strides]:
        """Return ``(storage, shape, strides)`` as kernels take them."""
        args = self._kernel_args
        if args is None:
            args = self._kernel_args = (self._storage, *_layout_arrays(self.shape, self.strides))
        return args

    def is_contiguous(self) -> bool:
        """True if the strides are row-major for the shape (size-1 dimensions ignored)."""
        return self._contiguous

    @staticmethod
    def shape_broadcast(shape_a: UserShape, shape_b: UserShape) -> builtins.tuple[int, ...]:
        """See ``shape_broadcast``."""
        return shape_broadcast(shape_a, shape_b)

    def _position(self, index: int | UserIndex, negative: bool = True) -> int:
        idx = (index,) if isinstance(index, (int, np.integer)) else tuple(index)
        if len(idx) != self.dims:
            raise IndexingError(
                f"index {idx} has {len(idx)} entries for a tensor of shape {self.shape}"
            )
        pos = 0
        for d, (i, s) in enumerate(zip(idx, self.shape, strict=True)):
            if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
                raise IndexingError(f"index entries must be ints, got {i!r} in {idx}")
            if i < 0:
                if not negative:
                    raise IndexingError(
                        f"index {idx} has a negative entry in dimension {d}: TensorData "
                        "indices run from 0 (Tensor indexing, t[-1], counts from the end)"
                    )
                i += s
            if not 0 <= i < s:
                raise IndexingError(
                    f"index {idx} is out of range for shape {self.shape} (dimension {d})"
                )
            pos += int(i) * self.strides[d]
        return pos

    def index(self, index: int | UserIndex) -> int:
        """Return the storage position of a user index, each entry in ``[0, size)``.

        As in the course, negative entries are refused here; ``get``/``set`` and Tensor
        indexing (``t[-1, 0]``) count them from the end, as PyTorch does.

        Raises:
            IndexingError: for the wrong number of entries, or an entry out of range.
        """
        return self._position(index, negative=False)

    def get(self, key: int | UserIndex) -> float:
        """Return the value at an index (negative entries count from the end)."""
        return float(self._storage[self._position(key)])

    def set(self, key: int | UserIndex, val: float) -> None:
        """Write the value at an index (negative entries count from the end; bumps ``version``)."""
        self._storage[self._position(key)] = val
        self.version_counter.bump()

    def indices(self) -> Iterator[builtins.tuple[int, ...]]:
        """Iterate over every index in row-major order."""
        index = np.zeros(self.dims, dtype=np.int64)
        for i in range(self.size):
            to_index(i, self.tuple()[1], index)
            yield tuple(int(x) for x in index)

    def sample(self, rng: np.random.Generator | None = None) -> builtins.tuple[int, ...]:
        """Return a uniformly random valid index."""
        rng = rng if rng is not None else np.random.default_rng()
        return tuple(int(rng.integers(0, s)) for s in self.shape)

    def permute(self, *order: int) -> TensorData:
        """Return a view with dimensions reordered: new dimension ``i`` is old ``order[i]``.

        ``order`` may also be given as one tuple or list.

        Raises:
            IndexingError: if ``order`` is not a permutation of ``range(dims)`` (of ints:
                not bools or floats), naming the order and ``range(dims)`` as a tuple.
        """
        # BEGIN SOLUTION task2_1
        if len(order) == 1 and isinstance(order[0], (tuple, list)):
            order = tuple(order[0])
        valid = all(
            isinstance(o, (int, np.integer)) and not isinstance(o, (bool, np.bool_)) for o in order
        )
        if not valid or sorted(order) != list(range(self.dims)):
            raise IndexingError(
                f"permute order {tuple(order)} is not a permutation of {tuple(range(self.dims))}"
                + ("" if valid else ": every entry must be an int")
            )
        return TensorData(
            self._storage,
            tuple(self.shape[o] for o in order),
            tuple(self.strides[o] for o in order),
            version_counter=self.version_counter,
        )
        # END SOLUTION

    def view(self, shape: UserShape) -> TensorData:
        """Return the same contiguous storage seen with a new shape (same number of elements).

        Raises:
            IndexingError: if this data is not contiguous or the sizes differ.
        """
        if not self.is_contiguous():
            raise IndexingError(f"cannot view non-contiguous data {self!r}")
        out = TensorData(self._storage, shape, version_counter=self.version_counter)
        if out.size != self.size:
            raise IndexingError(f"cannot view data of shape {self.shape} as {out.shape}")
        return out

    def to_numpy(self) -> npt.NDArray[np.float64]:
        """Return a numpy view (no copy) of host storage with this shape and strides."""
        storage = self._storage
        if not isinstance(storage, np.ndarray):
            raise TypeError("TensorData.to_numpy needs host storage; use the backend to copy")
        itemsize = storage.itemsize
        return np.lib.stride_tricks.as_strided(
            storage, self.shape, tuple(s * itemsize for s in self.strides), writeable=True
        )

    def to_string(self, values: npt.NDArray[np.float64] | None = None) -> str:
        """Format the values like PyTorch: ``[[1.0000, 2.0000], [3.0000, 4.0000]]``.

        Args:
            values: the values as a host numpy array (defaults to this data's own view).
        """
        arr = self.to_numpy() if values is None else values
        return np.array2string(
            arr,
            separator=", ",
            precision=4,
            floatmode="fixed",
            prefix="tensor(",
            threshold=1000,
            edgeitems=3,
        )

    def __repr__(self) -> str:
        return f"TensorData(shape={self.shape}, strides={self.strides})"


def _flatten(ls: Any) -> tuple[list[float], tuple[int, ...]]:
    """Return the values of a nested list in row-major order and its shape."""
    if isinstance(ls, (int, float, np.integer, np.floating)) and not isinstance(ls, bool):
        try:
            return [float(ls)], ()
        except OverflowError:  # only a Python int can be this large
            magnitude = math.log10(abs(ls))
            digits = f"{10 ** (magnitude % 1):.3f}e+{int(magnitude)}"
            raise OverflowError(
                f"tensor(): the int {'-' if ls < 0 else ''}{digits} ({int(magnitude) + 1} "
                f"digits) is too large for float64, whose largest value is {np.finfo(float).max}"
            ) from None
    if isinstance(ls, bool):
        return [float(ls)], ()
    if not isinstance(ls, (list, tuple)):
        raise TypeError(
            f"tensor() takes numbers or nested lists of numbers, got {type(ls).__name__}"
        )
    if len(ls) == 0:
        return [], (0,)
    parts = [_flatten(x) for x in ls]
    shape = parts[0][1]
    for p in parts:
        if p[1] != shape:
            raise ValueError(f"ragged nested list: sub-shapes {shape} and {p[1]} differ")
    flat = [v for vals, _ in parts for v in vals]
    return flat, (len(ls), *shape)


def flatten_nested(ls: Iterable[Any]) -> tuple[list[float], tuple[int, ...]]:
    """Return the values of a nested list of numbers and its shape.

    Raises:
        ValueError: for a ragged list.
        TypeError: for an element that is not a number or a list.
    """
    return _flatten(ls)
