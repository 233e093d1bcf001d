"""Indexing a Tensor: ``t[key]`` and ``t[key] = value``, planned once per key.

A key is parsed into a *plan*, one entry per dimension: an int (that dimension is indexed
away) or ``(start, length, step)`` (a slice). A plan is a view: an offset into the same
storage with new shape and strides, so ``t[0]``, ``t[:, 1]`` and ``t[::2]`` copy nothing,
and gradients flow through them (``Index``). One int per dimension reads one element (a
float, as in the course). A list of ints first selects rows of the first dimension, as
PyTorch's and NumPy's advanced indexing (``IndexRows``: a copy); ints before the list
index first (``t[0, [2, 1]]`` is ``t[0][[2, 1]]``). NumPy integers and integer arrays are
ints and lists (``t[np.array([1, 0])]``, as PyTorch takes them).

``t[key] = value`` reads ``value`` before it writes: a value that shares memory with
``t`` (``x[1:] = x[:-1]``) is copied first, so the result is NumPy's.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from minitorch.autodiff import is_grad_enabled

from .autograd import engine
from .backends.protocol import expand
from .functions import Index, IndexRows, _row
from .inplace import check_writable, may_alias
from .tensor_data import IndexingError, TensorData, broadcasts_to

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = ["get_item", "index_plan", "index_rows", "normalize_key", "set_item", "view_of"]

Plan: TypeAlias = "list[builtins.tuple[int, int, int] | int]"
Rows: TypeAlias = "builtins.tuple[builtins.tuple[int, ...], builtins.tuple[Any, ...]]"


def normalize_key(key: Any) -> Any:
    """``key`` with NumPy's integers as ints and 1-D integer arrays as lists (per entry).

    Raises:
        IndexingError: for an array of another kind (booleans, floats) or of 2 or more
            dimensions, naming what is supported.
    """
    if isinstance(key, tuple):
        return tuple(_normalize_entry(k, key) for k in key)
    return _normalize_entry(key, key)


def _normalize_entry(k: Any, key: Any) -> Any:
    if isinstance(k, np.ndarray):
        if k.dtype.kind not in "iu":
            raise IndexingError(
                f"tensor index {key!r}: an index array must hold integers, got dtype "
                f"{k.dtype} (boolean masks are not supported; use the indices of the True "
                "entries, np.flatnonzero(mask))"
            )
        if k.ndim > 1:
            raise IndexingError(
                f"tensor index {key!r}: an index array must be 0-d or 1-D, got shape {k.shape}"
            )
        return int(k) if k.ndim == 0 else [int(i) for i in k]
    if isinstance(k, np.integer):
        return int(k)
    return k


def _split_leading_ints(key: Any) -> builtins.tuple[Any, Any] | None:
    """``(ints, rest)`` for a tuple key of ints followed by a list (``t[0, [2, 1]]``), else None."""
    if not isinstance(key, tuple):
        return None
    for at, k in enumerate(key):
        if isinstance(k, list):
            return (key[:at], key[at:]) if at else None
        if not _is_int(k):
            return None
    return None


def get_item(t: Tensor, key: Any) -> Any:
    """``t[key]``: a float for one int per dimension, else a tensor (see ``Tensor.__getitem__``)."""
    key = normalize_key(key)
    split = _split_leading_ints(key)
    if split is not None:
        first, rest = split
        if len(first) >= t.dims:
            raise IndexingError(
                f"index {key!r} has too many entries for a tensor of shape {t.shape}"
            )
        return get_item(get_item(t, first), rest)
    rows = index_rows(key, t.shape)
    if rows is not None:
        picked = IndexRows.apply(t, rows[0])
        further = (slice(None), *rows[1])  # the rest of the key, on every row
        return picked[further] if rows[1] else picked
    plan = index_plan(key, t.shape)
    if plan is None:
        return t.tensor_data.get(_index_key(key))
    return Index.apply(t, lambda td: view_of(td, plan))


def set_item(t: Tensor, key: Any, val: Tensor | float) -> None:
    """``t[key] = val``, in place (see ``Tensor.__setitem__``); ``val`` is a number or Tensor.

    Raises:
        RuntimeError: outside ``no_grad()`` when ``t`` requires grad or was made by a
            recorded operation, or when ``val`` requires grad (MiniTorch cannot record
            the write); on an expanded ``t``.
    """
    key = normalize_key(key)
    op = "tensor[...] = value"
    engine.check_in_place(t, op)
    check_writable(t, op)
    if isinstance(val, type(t)):
        if val.history is not None and is_grad_enabled():
            raise RuntimeError(
                f"tensor[{key!r}] = value with a value that requires grad outside no_grad(): "
                "MiniTorch cannot record the write in the graph (PyTorch records CopySlices); "
                "use value.detach(), or build the tensor out of place"
            )
        val = val.detach().to(t.backend)
        if may_alias(t, val):
            val = t.backend.id_map(val)  # read a copy: the write would overwrite the source
    split = _split_leading_ints(key)
    if split is not None:
        first, rest = split
        plan = index_plan(first, t.shape)
        if plan is None or len(first) >= t.dims:
            raise IndexingError(
                f"index {key!r} has too many entries for a tensor of shape {t.shape}"
            )
        part = type(t)._constant(view_of(t.tensor_data, plan), t.backend)
        set_item(part, rest, val)
        return
    rows = index_rows(key, t.shape)
    if rows is not None:
        _set_rows(t, key, rows, t._ensure_tensor(val))
        return
    plan = index_plan(key, t.shape)
    if plan is None:
        t.tensor_data.set(_index_key(key), float(val))
        return
    part = type(t)._constant(view_of(t.tensor_data, plan), t.backend)
    t.backend.id_map(t._ensure_tensor(val), part)


def _set_rows(t: Tensor, key: Any, rows: Rows, val: Tensor) -> None:
    """``t[[i, j]] = val``: each listed row written with its row of ``val`` (broadcast)."""
    picked, rest = rows
    if rest:
        raise IndexingError(
            f"tensor[{key!r}] = value: after a list of rows no further index is "
            "supported here; write t[[i, j]] = value"
        )
    shape = (len(picked), *t.shape[1:])
    if val.shape != shape:
        if not broadcasts_to(val.shape, shape):
            raise IndexingError(
                f"tensor[{key!r}] = value: a value of shape {val.shape} does not "
                f"broadcast to the {len(picked)} rows' shape {shape}"
            )
        val = expand(val.to(t.backend), shape)
    for k, i in enumerate(picked):
        t.backend.id_map(_row(val, k), _row(t, i))  # views: no graph, no copy


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def index_rows(key: Any, shape: builtins.tuple[int, ...]) -> Rows | None:
    """Parse ``t[[i, j], ...]``: the rows the list selects and the rest of the key.

    None when the key holds no list (a basic index, ``index_plan``'s). The entries are
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
        if not _is_int(k):
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


def index_plan(key: Any, shape: builtins.tuple[int, ...]) -> Plan | None:
    """Parse ``t[key]``: None for one int per dimension (an element), else a plan per dim.

    Each plan entry is an int (that dimension is indexed away) or ``(start, length, step)``.

    Raises:
        TypeError: for ``None`` (newaxis).
        IndexingError: for more entries than dimensions, two ``...``, an entry out of
            range or of another kind than int, slice and ``...``.
        ValueError: for a slice step that is not positive.
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
    plan: Plan = []
    for d, (k, n) in enumerate(zip(entries, shape, strict=True)):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step <= 0:
                raise ValueError(f"tensor index {key!r}: slice step must be positive")
            plan.append((start, len(range(start, stop, step)), step))
        elif _is_int(k):
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


def view_of(td: TensorData, plan: Plan) -> TensorData:
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
    return TensorData(storage, tuple(shape), tuple(strides), version_counter=td.version_counter)


def _index_key(key: Any) -> builtins.tuple[int, ...]:
    """The index tuple of an element index ``t[i]`` / ``t[i, j]`` (``index_plan`` gave None)."""
    return tuple(key) if isinstance(key, tuple) else (key,)
