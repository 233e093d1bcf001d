"""The op database: every public Tensor operation beside its PyTorch counterpart.

Each ``OpInfo`` names an operation of the Tensor API, its PyTorch counterpart, the sample
inputs users really pass (``SAMPLE_KINDS``: empty and 0-d tensors, one element, broadcast
pairs, permuted, strided, offset and expanded views, operands that alias each other, and
IEEE's special values), the inputs that must raise, whether it is differentiable, and its
tolerance. ``OpDatabaseSuite`` runs the whole table on one backend, against PyTorch::

    from minitorch.fast import FastBackend
    from minitorch.tensor.opdb import OpDatabaseSuite

    class TestFastOps(OpDatabaseSuite):
        backend = FastBackend

For every entry and sample it compares with PyTorch the result's shape and values
(NaN-aware), each input's gradient (the backward of a random weighting of the output),
and, for in-place operations, that the written tensor is the one returned, that its
storage's version moved and that a view of it sees the write. For every error input both
libraries must raise, MiniTorch with the class and a message the entry names.

Where MiniTorch deliberately differs from PyTorch (a course choice), the entry says so in
``differs`` and its reference applies the difference (``sum()`` has shape ``(1,)``, a
comparison gives floats); docs/pytorch.md lists every such difference. Samples that once
crashed the interpreter (``risky``) run in a child process under glibc's heap checks.

This module needs pytest, hypothesis and, for the comparisons, PyTorch (the test
environment installs PyTorch's CPU build); the package root does not import it.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import os
import re
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .backends.protocol import TensorBackend
from .creation import from_numpy
from .tensor import Tensor
from .tensor_data import IndexingError, TensorData

__all__ = [
    "DIFFERENCES",
    "OPS",
    "SAMPLE_KINDS",
    "ErrorInput",
    "OpDatabaseSuite",
    "OpInfo",
    "Sample",
    "cases",
    "coverage",
    "drawn_cases",
    "drawn_values",
    "rng_for",
    "sample_values",
    "error_cases",
    "run_risky",
]

Array = npt.NDArray[np.float64]

SAMPLE_KINDS = (
    "general",
    "0-d",
    "one",
    "empty",
    "broadcast",
    "permuted",
    "strided",
    "offset",
    "expanded",
    "alias",
    "special",
)
"""Every kind of sample input; each entry draws the kinds that apply to it."""

SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e-310, 1e308, -1e308, 1e-300, 1.0, -1.0,
     0.5, -0.5, 2.0, -2.5],
)  # fmt: skip
"""IEEE's special values: signed zeros, infinities, NaN, subnormals, huge and tiny numbers."""

LAYOUTS = ("contiguous", "permuted", "strided", "offset", "expanded")

DIFFERENCES: dict[str, str] = {
    "`x.sum(dim)`, `x.mean(dim)`": "a reduction over dim keeps it with size 1",
    "`x.sum()`, `x[i, j]`": (
        "a whole reduction has shape (1,); an element (and iterating a 1-D tensor) gives floats"
    ),
    "comparisons": "comparisons give 1.0 and 0.0 as float64, not booleans",
    "`x.T`": "x.T of a tensor that is not 2-D raises",
    "`x[key] = value` from an overlapping view": "the value is read into a copy first (NumPy's)",
    "in-place operations in a recorded graph": "refused outside no_grad(); PyTorch records them",
    "`x.add_(y, alpha=a)`": "x + a * y rounds twice (PyTorch fuses it)",
}
"""Every deliberate difference from PyTorch an entry may declare: the first cell of its row in
docs/pytorch.md's table "Different, and why", and what differs (a test checks the table)."""


@dataclass(frozen=True)
class Sample:
    """One input of an operation: the arrays, how each becomes a tensor, and extra arguments.

    Attributes:
        kind: one of ``SAMPLE_KINDS``.
        arrays: the values of each tensor argument.
        layouts: per argument, one of ``LAYOUTS`` (a view of that kind with these values).
        kwargs: non-tensor arguments passed to the operation and its reference.
        grad: whether gradients are compared (False where PyTorch's own are undefined).
        alias: the second tensor argument is the first one itself (``x + x``, ``x[:] = x``).
    """

    kind: str
    arrays: tuple[Array, ...]
    layouts: tuple[str, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    grad: bool = True
    alias: bool = False

    def label(self) -> str:
        """A short id for test reports: the kind and the shapes."""
        shapes = "x".join(str(list(a.shape)).replace(" ", "") for a in self.arrays)
        extra = ",".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.kind}:{shapes}" + (f":{extra}" if extra else "")


@dataclass(frozen=True)
class ErrorInput:
    """An input that must raise in MiniTorch and in PyTorch.

    Attributes:
        what: what is wrong with it (the test's id).
        call: ``call(lib, make)`` runs the bad call in ``lib`` ("minitorch" or "torch");
            ``make(array, requires_grad=False)`` makes a tensor of that library.
        error: the exception class (or classes) MiniTorch raises.
        match: a regular expression MiniTorch's message must match (it names the problem).
        torch_raises: False where PyTorch accepts the input and MiniTorch deliberately
            refuses it (the entry's ``differs`` says why).
    """

    what: str
    call: Callable[[str, Callable[..., Any]], Any]
    error: type[BaseException] | tuple[type[BaseException], ...]
    match: str
    torch_raises: bool = True


@dataclass(frozen=True)
class OpInfo:
    """One operation of the public API and everything the runner needs to check it.

    Attributes:
        name: the operation as users write it (``"x + y"``, ``"sum(dim)"``).
        torch: its PyTorch counterpart.
        op: the MiniTorch call, ``op(*tensors, **sample.kwargs)``.
        ref: the PyTorch call, with the same arguments as torch tensors.
        samples: the sample inputs (a list of ``Sample``).
        errors: the inputs that must raise (a list of ``ErrorInput``).
        differentiable: whether gradients flow to the tensor arguments.
        tol: the relative and absolute tolerance of values and gradients.
        inplace: the operation writes into its first argument and returns it.
        risky: its samples once crashed the interpreter: they also run in a child process
            under glibc's heap checks.
        differs: a deliberate difference from PyTorch, applied by ``ref`` (docs/pytorch.md).
    """

    name: str
    torch: str
    op: Callable[..., Any]
    ref: Callable[..., Any]
    samples: list[Sample]
    errors: list[ErrorInput]
    differentiable: bool = True
    tol: float = 1e-9
    inplace: bool = False
    risky: bool = False
    differs: str = ""


# ---------------------------------------------------------------------- making inputs
def rng_for(name: str) -> np.random.Generator:
    """A generator seeded by ``name``: an entry's samples are the same in every run."""
    return np.random.default_rng(sum(name.encode()) + 7 * len(name))


def sample_values(rng: np.random.Generator, shape: tuple[int, ...], positive: bool) -> Array:
    """Uniform values in (-3, 3), 0.2 away from 0 (the kinks of relu and abs), or in (0.5, 3)."""
    x = rng.uniform(0.5, 3.0, shape) if positive else rng.uniform(-3.0, 3.0, shape)
    if not positive:
        x = np.where(np.abs(x) < 0.2, x + np.sign(x + 1e-9) * 0.5, x)  # away from kinks at 0
    return np.asarray(x, dtype=np.float64)


def unary_samples(name: str, *, positive: bool = False, min_dims: int = 0) -> list[Sample]:
    """Samples of every kind for an operation of one tensor (``positive`` keeps values > 0)."""
    rng = rng_for(name)

    def v(*shape: int) -> Array:
        return sample_values(rng, shape, positive)

    out = [
        Sample("general", (v(2, 3),)),
        Sample("general", (v(2, 3, 4),)),
        Sample("0-d", (v(),)),
        Sample("one", (v(1),)),
        Sample("one", (v(1, 1),)),
        Sample("empty", (v(0),)),
        Sample("empty", (v(2, 0),)),
        Sample("empty", (v(0, 3),)),
        Sample("permuted", (v(3, 4),), ("permuted",)),
        Sample("permuted", (v(2, 3, 4),), ("permuted",)),
        Sample("strided", (v(3, 4),), ("strided",)),
        Sample("offset", (v(3, 4),), ("offset",)),
        Sample("expanded", (np.broadcast_to(v(1, 4), (3, 4)).copy(),), ("expanded",), grad=False),
    ]
    special = SPECIAL[SPECIAL > 0] if positive else SPECIAL
    out.append(Sample("special", (special.copy(),), grad=False))
    return [s for s in out if min(a.ndim for a in s.arrays) >= min_dims]


def binary_samples(name: str, *, positive_right: bool = False) -> list[Sample]:
    """Samples of every kind for an elementwise operation of two tensors."""
    rng = rng_for(name)

    def v(*shape: int, positive: bool = False) -> Array:
        return sample_values(rng, shape, positive)

    def pair(a: tuple[int, ...], b: tuple[int, ...], kind: str, **kw: Any) -> Sample:
        return Sample(kind, (v(*a), v(*b, positive=positive_right)), **kw)

    row = SPECIAL.reshape(-1, 1)
    col = SPECIAL.reshape(1, -1)
    if positive_right:
        col = col[:, col[0] != 0]
    return [
        pair((2, 3), (2, 3), "general"),
        pair((), (), "0-d"),
        pair((), (2, 3), "0-d"),
        pair((1,), (1,), "one"),
        pair((0,), (0,), "empty"),
        pair((0, 3), (3,), "empty"),
        pair((0, 3), (1, 3), "empty"),
        pair((2, 0), (1,), "empty"),
        pair((2, 3), (3,), "broadcast"),
        pair((2, 1), (1, 3), "broadcast"),
        pair((4, 1, 3), (2, 1), "broadcast"),
        pair((3, 4), (3, 4), "permuted", layouts=("permuted", "contiguous")),
        pair((3, 4), (4,), "strided", layouts=("strided", "strided")),
        pair((3, 4), (3, 4), "offset", layouts=("offset", "permuted")),
        pair((3, 4), (3, 4), "expanded", layouts=("contiguous", "expanded"), grad=False),
        pair((3, 4), (3, 4), "alias", alias=True),
        Sample("special", (row.copy(), col.copy()), grad=False),
    ]


def _fix_expanded(arrays: tuple[Array, ...], layouts: tuple[str, ...]) -> tuple[Array, ...]:
    """Arrays whose expanded arguments repeat their first row (as an expand of it would)."""
    out = []
    for a, lay in zip(arrays, layouts, strict=False):
        out.append(np.broadcast_to(a[:1], a.shape).copy() if lay == "expanded" else a)
    return tuple(out) + arrays[len(out) :]


def make_minitorch(
    array: Array, layout: str, backend: TensorBackend, requires_grad: bool
) -> tuple[Tensor, Tensor]:
    """A MiniTorch tensor with ``array``'s values in ``layout``: ``(leaf, the view of it)``."""
    a = np.asarray(array, dtype=np.float64)
    if layout == "permuted" and a.ndim >= 2:
        order = tuple(reversed(range(a.ndim)))
        leaf = from_numpy(a.transpose(order).copy(), backend=backend)
        leaf.requires_grad_(requires_grad)
        return leaf, leaf.permute(*order)
    if layout == "strided" and a.ndim >= 1:
        big = np.zeros((*a.shape[:-1], 2 * a.shape[-1]))
        big[..., ::2] = a
        leaf = from_numpy(big, backend=backend).requires_grad_(requires_grad)
        return leaf, leaf[..., ::2]
    if layout == "offset" and a.ndim >= 1:
        big = np.zeros((a.shape[0] + 1, *a.shape[1:]))
        big[1:] = a
        leaf = from_numpy(big, backend=backend).requires_grad_(requires_grad)
        return leaf, leaf[1:]
    if layout == "expanded" and a.ndim >= 1 and a.shape[0] > 1:
        row = from_numpy(np.ascontiguousarray(a[:1]), backend=backend)
        td = row.tensor_data
        strides = (0, *td.strides[1:])
        view = Tensor(TensorData(td.storage, a.shape, strides), backend=backend)
        return view, view
    leaf = from_numpy(a.copy(), backend=backend).requires_grad_(requires_grad)
    return leaf, leaf


def make_torch(array: Array, layout: str, requires_grad: bool) -> tuple[Any, Any]:
    """The PyTorch tensor of ``make_minitorch``'s: ``(leaf, the view of it)``."""
    import torch

    a = np.asarray(array, dtype=np.float64)
    if layout == "permuted" and a.ndim >= 2:
        order = tuple(reversed(range(a.ndim)))
        leaf = torch.tensor(a.transpose(order).copy(), requires_grad=requires_grad)
        return leaf, leaf.permute(*order)
    if layout == "strided" and a.ndim >= 1:
        big = np.zeros((*a.shape[:-1], 2 * a.shape[-1]))
        big[..., ::2] = a
        leaf = torch.tensor(big, requires_grad=requires_grad)
        return leaf, leaf[..., ::2]
    if layout == "offset" and a.ndim >= 1:
        big = np.zeros((a.shape[0] + 1, *a.shape[1:]))
        big[1:] = a
        leaf = torch.tensor(big, requires_grad=requires_grad)
        return leaf, leaf[1:]
    if layout == "expanded" and a.ndim >= 1 and a.shape[0] > 1:
        view = torch.tensor(a[:1].copy()).expand(*a.shape)
        return view, view
    leaf = torch.tensor(a.copy(), requires_grad=requires_grad)
    return leaf, leaf


# ---------------------------------------------------------------------- the table


def _backward_without_grad_output(
    op: Callable[..., Any], ref: Callable[..., Any], n: int
) -> ErrorInput:
    """``op(x).backward()`` on several elements: both refuse an implicit gradient."""

    def call(lib: str, make: Callable[..., Any]) -> Any:
        xs = [make(np.ones((2, 3)) * (i + 2), requires_grad=True) for i in range(n)]
        return (op if lib == "minitorch" else ref)(*xs).backward()

    return ErrorInput("backward() of several elements", call, RuntimeError, r"shape|scalar|element")


def _wrong_grad_output(op: Callable[..., Any], ref: Callable[..., Any]) -> ErrorInput:
    """``op(x).backward(g)`` with ``g`` of a shape that does not fit: both refuse it."""

    def call(lib: str, make: Callable[..., Any]) -> Any:
        out = (op if lib == "minitorch" else ref)(make(np.ones((2, 3)), requires_grad=True))
        return out.backward(make(np.ones((4, 5))))

    return ErrorInput("backward(g) of a wrong shape", call, IndexingError, r"\(4, 5\)")


def _not_broadcastable(op: Callable[..., Any], ref: Callable[..., Any]) -> ErrorInput:
    def call(lib: str, make: Callable[..., Any]) -> Any:
        a, b = make(np.ones((2, 3))), make(np.ones((4,)))
        return (op if lib == "minitorch" else ref)(a, b)

    return ErrorInput("shapes (2, 3) and (4,)", call, IndexingError, r"\(2, 3\).*\(4,\)|broadcast")


def _bad_dim(op: Callable[..., Any], ref: Callable[..., Any]) -> ErrorInput:
    def call(lib: str, make: Callable[..., Any]) -> Any:
        return (op if lib == "minitorch" else ref)(make(np.ones((2, 3))), dim=5)

    return ErrorInput("dim 5 of a 2-d tensor", call, IndexingError, r"dim|dimension")


def _elementwise(
    name: str, torch_name: str, op: Callable[..., Any], ref: Callable[..., Any], **kw: Any
) -> OpInfo:
    positive = kw.pop("positive", False)
    samples = unary_samples(name, positive=positive)
    differentiable = kw.pop("differentiable", True)
    return OpInfo(
        name,
        torch_name,
        op,
        ref,
        samples,
        [_backward_without_grad_output(op, ref, 1)],
        differentiable=differentiable,
        **kw,
    )


def _binary(
    name: str, torch_name: str, op: Callable[..., Any], ref: Callable[..., Any], **kw: Any
) -> OpInfo:
    positive_right = kw.pop("positive_right", False)
    return OpInfo(
        name,
        torch_name,
        op,
        ref,
        binary_samples(name, positive_right=positive_right),
        [_not_broadcastable(op, ref), _backward_without_grad_output(op, ref, 2)],
        **kw,
    )


def _reduction(
    name: str, torch_name: str, op: Callable[..., Any], ref: Callable[..., Any], **kw: Any
) -> OpInfo:
    base = [s for s in unary_samples(name) if s.kind != "special"]
    nonempty = kw.pop("nonempty", False)
    if nonempty:  # max over an empty dimension raises: an error input
        base = [s for s in base if s.kind != "empty"]
    samples: list[Sample] = []
    for s in base:
        nd = s.arrays[0].ndim
        if kw.get("whole"):
            samples.append(s)
            continue
        for d in sorted({0, nd - 1, -1} if nd else {0}):
            samples.append(Sample(s.kind, s.arrays, s.layouts, {"dim": d}, s.grad, s.alias))
    samples.append(
        Sample("special", (SPECIAL.copy(),), (), {} if kw.get("whole") else {"dim": 0}, grad=False)
    )
    kw.pop("whole", None)
    errors = [_bad_dim(op, ref)] if "dim" in name else [_wrong_grad_output(op, ref)]
    if nonempty:

        def empty(lib: str, make: Callable[..., Any]) -> Any:
            return (op if lib == "minitorch" else ref)(make(np.ones((2, 0))), dim=1)

        errors.append(
            ErrorInput("a reduction over an empty dim", empty, IndexingError, r"non-zero size")
        )
    return OpInfo(name, torch_name, op, ref, samples, errors, **kw)


def _sum_ref(x: Any, dim: int | None = None) -> Any:
    import torch

    if dim is None:
        return torch.sum(x).reshape(1)
    if x.dim() == 0:
        return torch.sum(x)
    return torch.sum(x, dim, keepdim=True)


def _mean_ref(x: Any, dim: int | None = None) -> Any:
    import torch

    if dim is None:
        return torch.mean(x).reshape(1)
    if x.dim() == 0:
        return torch.mean(x)
    return torch.mean(x, dim, keepdim=True)


def _max_ref(x: Any) -> Any:
    import torch

    return torch.max(x).reshape(1)


def _matmul_samples() -> list[Sample]:
    rng = rng_for("matmul")

    def v(*shape: int) -> Array:
        return sample_values(rng, shape, False)

    def pair(a: tuple[int, ...], b: tuple[int, ...], kind: str, **kw: Any) -> Sample:
        return Sample(kind, (v(*a), v(*b)), **kw)

    return [
        pair((2, 3), (3, 4), "general"),
        pair((2, 2, 3), (2, 3, 4), "general"),
        pair((1, 1), (1, 1), "one"),
        pair((2, 0), (0, 3), "empty"),
        pair((0, 3), (3, 4), "empty"),
        pair((2, 3), (3, 0), "empty"),
        pair((0, 2, 3), (3, 4), "empty"),
        pair((1, 3, 4), (0, 4, 5), "empty"),
        pair((2, 0, 1, 3), (1, 3, 4), "empty"),
        pair((0, 2, 3), (1, 3, 4), "empty"),
        pair((2, 1, 2, 3), (3, 3, 4), "broadcast"),
        pair((2, 2, 3), (3, 4), "broadcast"),
        pair((3, 4), (4, 3), "permuted", layouts=("permuted", "permuted")),
        pair((3, 4), (4, 2), "strided", layouts=("strided", "offset")),
        pair((3, 3), (3, 3), "alias", alias=True),
        pair((3, 4), (4, 3), "expanded", layouts=("expanded", "contiguous"), grad=False),
        Sample(
            "special",
            (SPECIAL.reshape(4, 4).copy(), SPECIAL[::-1].reshape(4, 4).copy()),
            grad=False,
        ),
    ]


def _matmul_errors() -> list[ErrorInput]:
    def inner(lib: str, make: Callable[..., Any]) -> Any:
        return make(np.ones((2, 3))) @ make(np.ones((4, 2)))

    def batch(lib: str, make: Callable[..., Any]) -> Any:
        return make(np.ones((2, 2, 3))) @ make(np.ones((3, 3, 2)))

    return [
        ErrorInput("inner sizes 3 and 4", inner, IndexingError, r"3.*4|shape"),
        ErrorInput("batches 2 and 3", batch, IndexingError, r"2.*3|broadcast|batch"),
    ]


def _inplace(
    name: str,
    torch_name: str,
    op: Callable[..., Any],
    ref: Callable[..., Any],
    shape_error: tuple[type[BaseException], str] = (RuntimeError, r"shape \[3\].*\[2, 3\]"),
    special: bool = True,
    differs: str = "in-place operations in a recorded graph",
) -> OpInfo:
    """An in-place arithmetic operation: values, version, aliasing and its errors."""
    samples = [s for s in binary_samples(name) if s.kind not in ("0-d",)]
    # The written tensor keeps its shape: the right side broadcasts to the left's.
    samples = [
        s for s in samples if np.broadcast_shapes(*(a.shape for a in s.arrays)) == s.arrays[0].shape
    ]
    samples = [Sample(s.kind, s.arrays, s.layouts, s.kwargs, False, s.alias) for s in samples]
    samples = [s for s in samples if special or s.kind != "special"]
    if special:
        samples.append(Sample("special", (SPECIAL.copy(), SPECIAL[::-1].copy()), grad=False))

    def wrong_shape(lib: str, make: Callable[..., Any]) -> Any:
        return (op if lib == "minitorch" else ref)(make(np.ones(3)), make(np.ones((2, 3))))

    def leaf_error(lib: str, make: Callable[..., Any]) -> Any:
        return (op if lib == "minitorch" else ref)(
            make(np.ones(3), requires_grad=True), make(np.ones(3))
        )

    def expanded_error(lib: str, make: Callable[..., Any]) -> Any:
        if lib == "minitorch":
            row = make(np.ones((1, 3)))
            td = row.tensor_data
            x = Tensor(TensorData(td.storage, (2, 3), (0, 1)), backend=row.backend)
        else:
            x = make(np.ones((1, 3))).expand(2, 3)
        return (op if lib == "minitorch" else ref)(x, make(np.arange(6.0).reshape(2, 3)))

    def recorded_error(lib: str, make: Callable[..., Any]) -> Any:
        made = make(np.ones(3), requires_grad=True) * 2.0  # made by a recorded operation
        return (op if lib == "minitorch" else ref)(made, make(np.ones(3)))

    errors = [
        ErrorInput("a result of a broadcast shape", wrong_shape, *shape_error),
        ErrorInput(
            "a tensor made by a recorded operation",
            recorded_error,
            RuntimeError,
            r"records a gradient|cannot record",
            torch_raises=False,
        ),
        ErrorInput("a leaf that requires grad", leaf_error, RuntimeError, r"leaf Variable"),
        ErrorInput("an expanded tensor", expanded_error, RuntimeError, r"single memory location"),
    ]
    return OpInfo(
        name,
        torch_name,
        op,
        ref,
        samples,
        errors,
        differentiable=False,
        inplace=True,
        differs=differs,
    )


def _iadd(x: Any, y: Any) -> Any:
    x += y
    return x


def _isub(x: Any, y: Any) -> Any:
    x -= y
    return x


def _imul(x: Any, y: Any) -> Any:
    x *= y
    return x


def _idiv(x: Any, y: Any) -> Any:
    x /= y
    return x


def _index_samples(keys: Sequence[Any]) -> list[Sample]:
    rng = rng_for("index")
    out = []
    for key in keys:
        for layout in ("contiguous", "permuted", "offset"):
            a = sample_values(rng, (4, 3, 2), False)
            out.append(
                Sample(
                    "general" if layout == "contiguous" else layout, (a,), (layout,), {"key": key}
                )
            )
    out.append(
        Sample("special", (SPECIAL.reshape(4, 2, 2).copy(),), (), {"key": (0, [1, 0])}, grad=False)
    )
    return out


INDEX_KEYS: tuple[Any, ...] = (
    1,
    -1,
    slice(1, None),
    slice(None, None, 2),
    (Ellipsis, 0),
    (slice(None), 1),
    (1, slice(None), 0),
    [2, 0, 2],
    np.array([1, 0]),
    (0, [2, 0]),
    (np.int64(1), np.array([0, 2])),
    ([3, 1], slice(None), 1),
)
"""Every supported key form: int, negative int, slices, ``...``, lists, NumPy arrays, mixed."""


def _getitem(x: Any, key: Any) -> Any:
    return x[key]


def _getitem_ref(x: Any, key: Any) -> Any:
    if isinstance(key, np.ndarray):
        key = key.tolist()
    elif isinstance(key, tuple):
        key = tuple(k.tolist() if isinstance(k, np.ndarray) else k for k in key)
    return x[key]


def _index_errors() -> list[ErrorInput]:
    def out_of_range(lib: str, make: Callable[..., Any]) -> Any:
        return make(np.ones((2, 3)))[5]

    def list_out_of_range(lib: str, make: Callable[..., Any]) -> Any:
        return make(np.ones((2, 3)))[[0, 2]]

    def too_many(lib: str, make: Callable[..., Any]) -> Any:
        return make(np.ones((2, 3)))[0, 0, 0]

    return [
        ErrorInput("index 5 of size 2", out_of_range, IndexingError, r"out of range"),
        ErrorInput("list index 2 of size 2", list_out_of_range, IndexingError, r"out of range"),
        ErrorInput("three indices for two dims", too_many, IndexingError, r"3 entries|too many"),
    ]


def _setitem(x: Any, y: Any, key: Any) -> Any:
    x[key] = y
    return x


def _setitem_ref(x: Any, y: Any, key: Any) -> Any:
    import torch

    key = _torch_key(key)
    with torch.no_grad():
        x[key] = y.clone()  # PyTorch refuses some overlaps: NumPy's answer reads a copy
    return x


def _torch_key(key: Any) -> Any:
    if isinstance(key, np.ndarray):
        return key.tolist()
    if isinstance(key, tuple):
        return tuple(k.tolist() if isinstance(k, np.ndarray) else k for k in key)
    return key


def _setitem_samples() -> list[Sample]:
    rng = rng_for("setitem")
    out = []
    cases: list[tuple[Any, tuple[int, ...]]] = [
        (1, (3,)),
        (slice(1, None), (3, 3)),
        (slice(None, None, 2), (3,)),
        ((Ellipsis, 0), (4,)),
        ([2, 0], (2, 3)),
        (np.array([3, 1]), (3,)),
        ((0, [2, 0]), (2,)),
    ]
    for key, vshape in cases:
        for layout in ("contiguous", "permuted"):
            out.append(
                Sample(
                    "general" if layout == "contiguous" else layout,
                    (sample_values(rng, (4, 3), False), sample_values(rng, vshape, False)),
                    (layout, "contiguous"),
                    {"key": key},
                    grad=False,
                )
            )
    return out


def _overlap_setitem(x: Any, key: Any, src: Any) -> Any:
    x[key] = x[src] if not isinstance(src, str) else x.T
    return x


def _overlap_setitem_ref(x: Any, key: Any, src: Any) -> Any:
    import torch

    with torch.no_grad():
        value = (x[_torch_key(src)] if not isinstance(src, str) else x.T).clone()
        x[_torch_key(key)] = value
    return x


def _overlap_samples() -> list[Sample]:
    rng = rng_for("overlap")
    cases: list[tuple[Any, Any, tuple[int, ...]]] = [
        (slice(1, None), slice(None, -1), (5,)),
        (slice(None, -1), slice(1, None), (5,)),
        ([1, 2], slice(0, 2), (4,)),
        (slice(None), "T", (3, 3)),
        ((Ellipsis, slice(1, None)), (Ellipsis, slice(None, -1)), (2, 4)),
    ]
    return [
        Sample(
            "alias",
            (sample_values(rng, shape, False),),
            ("contiguous",),
            {"key": k, "src": s},
            grad=False,
        )
        for k, s, shape in cases
    ]


def _to_other(x: Any) -> Any:
    """``x.to(other).to(x's) * x``: a round trip through another backend, in a graph with ``x``."""
    from .backends.registry import resolve_backend
    from .backends.simple import SimpleBackend

    if x.backend == SimpleBackend:
        try:
            other = resolve_backend("fast")
        except (ImportError, ValueError, KeyError):
            pytest.skip("the simple backend's other backend (fast) is not installed")
    else:
        other = SimpleBackend
    return x.to(other).to(x.backend) * x


def _to_ref(x: Any) -> Any:
    return x.to("cpu").to(x.device) * x


def _ne(x: Any, y: Any) -> Any:
    return x != y


def _ref_cmp(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda x, y: fn(x, y).double()


def _iter_errors() -> list[ErrorInput]:
    def zero_d(lib: str, make: Callable[..., Any]) -> Any:
        return list(make(np.array(3.0)))

    return [ErrorInput("iteration over a 0-d tensor", zero_d, TypeError, r"0-d")]


def _requires_grad_errors() -> list[ErrorInput]:
    def string(lib: str, make: Callable[..., Any]) -> Any:
        return make(np.ones(2)).requires_grad_("False")

    def number(lib: str, make: Callable[..., Any]) -> Any:
        t = make(np.ones(2))
        t.requires_grad = 1
        return t

    return [
        ErrorInput("requires_grad_('False')", string, TypeError, r"bool"),
        ErrorInput("requires_grad = 1", number, TypeError, r"bool"),
    ]


def _ops() -> list[OpInfo]:
    cmp_differs = "comparisons"
    red_differs = "`x.sum(dim)`, `x.mean(dim)`"
    whole_differs = "`x.sum()`, `x[i, j]`"
    ops = [
        _elementwise("-x", "torch.neg", operator.neg, operator.neg),
        _elementwise("x.sigmoid()", "torch.sigmoid", lambda x: x.sigmoid(), lambda x: x.sigmoid()),
        _elementwise("x.relu()", "torch.relu", lambda x: x.relu(), lambda x: x.relu()),
        _elementwise("x.log()", "torch.log", lambda x: x.log(), lambda x: x.log(), positive=True),
        _elementwise("x.exp()", "torch.exp", lambda x: x.exp(), lambda x: x.exp()),
        _elementwise(
            "x.reciprocal()", "torch.reciprocal", lambda x: x.reciprocal(), lambda x: x.reciprocal()
        ),
        _elementwise(
            "x.sqrt()", "torch.sqrt", lambda x: x.sqrt(), lambda x: x.sqrt(), positive=True
        ),
        _elementwise("x.abs()", "torch.abs", lambda x: x.abs(), lambda x: x.abs()),
        _elementwise("abs(x)", "torch.abs", abs, abs),
        _elementwise("x ** 2", "torch.pow", lambda x: x**2, lambda x: x**2),
        _elementwise("x ** 3", "torch.pow", lambda x: x**3, lambda x: x**3),
        _elementwise("x ** 0", "torch.pow", lambda x: x**0, lambda x: x**0),
        _elementwise("x ** 0.5", "torch.pow", lambda x: x**0.5, lambda x: x**0.5, positive=True),
        _elementwise("x ** -1", "torch.pow", lambda x: x**-1, lambda x: x**-1),
        _elementwise(
            "x ** inf",
            "torch.pow",
            lambda x: x ** float("inf"),
            lambda x: x ** float("inf"),
            differentiable=False,
        ),
        _elementwise(
            "x ** nan",
            "torch.pow",
            lambda x: x ** float("nan"),
            lambda x: x ** float("nan"),
            differentiable=False,
        ),
        _elementwise("2 ** x", "torch.pow", lambda x: 2**x, lambda x: 2**x),
        _elementwise("x + 1.5", "torch.add", lambda x: x + 1.5, lambda x: x + 1.5),
        _elementwise("1.5 + x", "torch.add", lambda x: 1.5 + x, lambda x: 1.5 + x),
        _elementwise("1.5 - x", "torch.sub", lambda x: 1.5 - x, lambda x: 1.5 - x),
        _elementwise("x * 2", "torch.mul", lambda x: x * 2, lambda x: x * 2),
        _elementwise("3 / x", "torch.div", lambda x: 3 / x, lambda x: 3 / x),
        _elementwise("x / 4", "torch.div", lambda x: x / 4, lambda x: x / 4),
        _elementwise(
            "x < 0.5",
            "torch.lt",
            lambda x: x < 0.5,
            lambda x: (x < 0.5).double(),
            differentiable=False,
            differs=cmp_differs,
        ),
        _elementwise(
            "x > 0.5",
            "torch.gt",
            lambda x: x > 0.5,
            lambda x: (x > 0.5).double(),
            differentiable=False,
            differs=cmp_differs,
        ),
        _elementwise(
            "x == 0.5",
            "torch.eq",
            lambda x: x == 0.5,
            lambda x: (x == 0.5).double(),
            differentiable=False,
            differs=cmp_differs,
        ),
        _elementwise(
            "x != 0.5",
            "torch.ne",
            lambda x: x != 0.5,
            lambda x: (x != 0.5).double(),
            differentiable=False,
            differs=cmp_differs,
        ),
        _elementwise(
            "x.contiguous()",
            "Tensor.contiguous",
            lambda x: x.contiguous(),
            lambda x: x.contiguous(),
        ),
        _elementwise(
            "x.reshape(-1)", "Tensor.reshape", lambda x: x.reshape(-1), lambda x: x.reshape(-1)
        ),
        _elementwise("x.to(other backend)", "Tensor.to(device)", _to_other, _to_ref),
        _binary("x + y", "torch.add", operator.add, operator.add),
        _binary("x - y", "torch.sub", operator.sub, operator.sub),
        _binary("x * y", "torch.mul", operator.mul, operator.mul),
        _binary("x / y", "torch.div", operator.truediv, operator.truediv),
        _binary(
            "x < y",
            "torch.lt",
            operator.lt,
            _ref_cmp(operator.lt),
            differentiable=False,
            differs=cmp_differs,
        ),
        _binary(
            "x > y",
            "torch.gt",
            operator.gt,
            _ref_cmp(operator.gt),
            differentiable=False,
            differs=cmp_differs,
        ),
        _binary(
            "x == y",
            "torch.eq",
            operator.eq,
            _ref_cmp(operator.eq),
            differentiable=False,
            differs=cmp_differs,
        ),
        _binary(
            "x != y", "torch.ne", _ne, _ref_cmp(_ne), differentiable=False, differs=cmp_differs
        ),
        _reduction(
            "sum()", "torch.sum", lambda x: x.sum(), _sum_ref, whole=True, differs=whole_differs
        ),
        _reduction(
            "sum(dim)", "torch.sum", lambda x, dim: x.sum(dim), _sum_ref, differs=red_differs
        ),
        _reduction(
            "mean()", "torch.mean", lambda x: x.mean(), _mean_ref, whole=True, differs=whole_differs
        ),
        _reduction(
            "mean(dim)", "torch.mean", lambda x, dim: x.mean(dim), _mean_ref, differs=red_differs
        ),
        _reduction(
            "max(dim).values",
            "torch.max(dim)",
            lambda x, dim: x.max(dim).values,
            lambda x, dim: x.max(dim).values if x.dim() else x,
            nonempty=True,
        ),
        OpInfo(
            "x @ y",
            "torch.matmul",
            operator.matmul,
            operator.matmul,
            _matmul_samples(),
            _matmul_errors(),
            risky=True,
            tol=1e-9,
        ),
        OpInfo(
            "x.permute(reversed)",
            "Tensor.permute",
            lambda x: x.permute(*reversed(range(x.dims))),
            lambda x: x.permute(tuple(reversed(range(x.dim())))),
            unary_samples("permute"),
            [
                ErrorInput(
                    "order (0, 0)",
                    lambda lib, make: make(np.ones((2, 3))).permute(0, 0),
                    IndexingError,
                    r"permut|order",
                )
            ],
        ),
        OpInfo(
            "x.transpose(0, -1)",
            "Tensor.transpose",
            lambda x: x.transpose(0, -1),
            lambda x: x.transpose(0, -1),
            unary_samples("transpose", min_dims=1),
            [
                ErrorInput(
                    "dim 3 of a 2-d tensor",
                    lambda lib, make: make(np.ones((2, 3))).transpose(0, 3),
                    IndexingError,
                    r"dim",
                )
            ],
        ),
        OpInfo(
            "x.T",
            "Tensor.T",
            lambda x: x.T,
            lambda x: x.T,
            [s for s in unary_samples("T") if s.arrays[0].ndim == 2],
            [
                ErrorInput(
                    ".T of a 3-d tensor",
                    lambda lib, make: make(np.ones((2, 3, 4))).T,
                    IndexingError,
                    r"2-D",
                    torch_raises=False,
                )
            ],
            differs="`x.T`",
        ),
        OpInfo(
            "x.view(-1)",
            "Tensor.view",
            lambda x: x.contiguous().view(-1),
            lambda x: x.contiguous().view(-1),
            unary_samples("view"),
            [
                ErrorInput(
                    "a view of 6 elements as 4",
                    lambda lib, make: make(np.ones((2, 3))).view(4),
                    IndexingError,
                    r"6|4|size",
                ),
                ErrorInput(
                    "a view of a permuted tensor",
                    lambda lib, make: make(np.ones((2, 3))).permute(1, 0).view(6),
                    RuntimeError,
                    r"contiguous",
                ),
            ],
        ),
        OpInfo(
            "x[key]",
            "Tensor.__getitem__",
            _getitem,
            _getitem_ref,
            _index_samples(INDEX_KEYS),
            _index_errors(),
        ),
        OpInfo(
            "x[key] = y",
            "Tensor.__setitem__",
            _setitem,
            _setitem_ref,
            _setitem_samples(),
            _index_errors(),
            differentiable=False,
            inplace=True,
        ),
        OpInfo(
            "x[key] = x[other] (overlapping)",
            "Tensor.__setitem__",
            _overlap_setitem,
            _overlap_setitem_ref,
            _overlap_samples(),
            _index_errors(),
            differentiable=False,
            inplace=True,
            differs="`x[key] = value` from an overlapping view",
        ),
        _inplace("x += y", "Tensor.__iadd__", _iadd, _iadd),
        _inplace("x -= y", "Tensor.__isub__", _isub, _isub),
        _inplace("x *= y", "Tensor.__imul__", _imul, _imul),
        _inplace("x /= y", "Tensor.__itruediv__", _idiv, _idiv),
        # PyTorch fuses x + alpha * y (one rounding: 1e308 + 2 * -1e308 is -1e308, not -inf):
        # the special values run with alpha=1.
        _inplace(
            "x.add_(y, alpha=2)",
            "Tensor.add_",
            lambda x, y: x.add_(y, alpha=2.0),
            lambda x, y: x.add_(y, alpha=2.0),
            special=False,
            differs="`x.add_(y, alpha=a)`",
        ),
        _inplace("x.add_(y)", "Tensor.add_", lambda x, y: x.add_(y), lambda x, y: x.add_(y)),
        _inplace("x.sub_(y)", "Tensor.sub_", lambda x, y: x.sub_(y), lambda x, y: x.sub_(y)),
        _inplace("x.mul_(y)", "Tensor.mul_", lambda x, y: x.mul_(y), lambda x, y: x.mul_(y)),
        _inplace("x.div_(y)", "Tensor.div_", lambda x, y: x.div_(y), lambda x, y: x.div_(y)),
        _inplace(
            "x.copy_(y)",
            "Tensor.copy_",
            lambda x, y: x.copy_(y),
            lambda x, y: x.copy_(y),
            shape_error=(IndexingError, r"\(2, 3\).*\(3,\)"),
        ),
        OpInfo(
            "list(x)",
            "Tensor.__iter__",
            lambda x: np.array([float(v) for v in x]),
            lambda x: np.array([float(v) for v in x]),
            [s for s in unary_samples("iter", min_dims=1) if s.arrays[0].ndim == 1],
            _iter_errors(),
            differentiable=False,
            differs=whole_differs,
        ),
        OpInfo(
            "x.requires_grad_(flag)",
            "Tensor.requires_grad_",
            lambda x: x.detach().requires_grad_(True),
            lambda x: x.detach().requires_grad_(True),
            [Sample("general", (np.ones(2),)), Sample("0-d", (np.array(2.0),))],
            _requires_grad_errors(),
            differentiable=False,
        ),
    ]
    return ops


OPS: list[OpInfo] = _ops()
"""The database: one entry per public operation of the Tensor API."""


# ---------------------------------------------------------------------- the runner
_COVERED: Counter[tuple[str, str, str]] = Counter()


def coverage() -> str:
    """How many entries, backends and sample kinds the runs of this process covered ("" if none)."""
    if not _COVERED:
        return ""
    entries = {e for e, _, _ in _COVERED}
    backends = sorted({b for _, b, _ in _COVERED})
    kinds = {k for _, _, k in _COVERED}
    errors = sum(n for (e, b, k), n in _COVERED.items() if k == "error")
    drawn = sum(n for (e, b, k), n in _COVERED.items() if k == "drawn")
    samples = sum(_COVERED.values()) - errors - drawn
    return (
        f"op database: {len(entries)} entries x {len(backends)} backends ({', '.join(backends)}) "
        f"x {len(kinds - {'error', 'drawn'})} sample kinds: {samples} samples, {drawn} drawn "
        f"by hypothesis, and {errors} error inputs checked against PyTorch"
    )


def _close(got: Any, expected: Any, tol: float, what: str) -> None:
    g = np.asarray(got, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert g.shape == e.shape, f"{what}: shape {g.shape}, PyTorch's {e.shape}"
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def _to_np(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, Tensor):
        return x.to_numpy()
    if isinstance(x, float):
        return np.float64(x)
    return x.detach().numpy()


def check_sample(entry: OpInfo, sample: Sample, backend: TensorBackend) -> None:
    """Run one sample on ``backend`` and on PyTorch; assert they agree (values, grads, writes).

    numpy's warnings about inf and NaN are off while it runs: the special samples make
    them on purpose (``inf * 0`` in a kernel run as Python), and the values are compared.
    """
    with np.errstate(all="ignore"):
        _check_sample(entry, sample, backend)


def _check_sample(entry: OpInfo, sample: Sample, backend: TensorBackend) -> None:
    import torch

    layouts = sample.layouts + ("contiguous",) * (len(sample.arrays) - len(sample.layouts))
    arrays = _fix_expanded(sample.arrays, layouts)
    grad = entry.differentiable and sample.grad
    if sample.alias:
        arrays, layouts = arrays[:1], layouts[:1]
    mine = [
        make_minitorch(a, lay, backend, grad and lay != "expanded")
        for a, lay in zip(arrays, layouts, strict=True)
    ]
    theirs = [
        make_torch(a, lay, grad and lay != "expanded")
        for a, lay in zip(arrays, layouts, strict=True)
    ]
    m_args = [v for _, v in mine]
    t_args = [v for _, v in theirs]
    if sample.alias and len(sample.arrays) > 1:
        m_args, t_args = m_args * 2, t_args * 2
    version = m_args[0].version if entry.inplace else 0
    got = entry.op(*m_args, **sample.kwargs)
    with torch.no_grad() if entry.inplace else _Nothing():
        expected = entry.ref(*t_args, **sample.kwargs)
    what = f"{entry.name} on {sample.label()} ({backend.name})"
    _close(_to_np(got), _to_np(expected), entry.tol, what)
    if entry.inplace:
        assert got is m_args[0], f"{what}: an in-place operation returns the tensor it wrote"
        assert m_args[0].version > version, f"{what}: the version counter did not move"
        leaf, _ = mine[0]
        tleaf, _ = theirs[0]
        _close(leaf.to_numpy(), tleaf.detach().numpy(), entry.tol, f"{what}: the written storage")
    if grad and isinstance(got, Tensor) and got.requires_grad and got.numel() > 0:
        w = np.random.default_rng(3).uniform(0.5, 1.5, got.shape)
        (got * from_numpy(w, backend=got.backend)).sum().backward()
        (expected * torch.tensor(w)).sum().backward()
        for i, ((leaf, _), (tleaf, _)) in enumerate(zip(mine, theirs, strict=True)):
            if not tleaf.requires_grad:
                continue
            tg = tleaf.grad
            mg = leaf.grad
            if tg is None:
                assert mg is None or np.all(mg.to_numpy() == 0), (
                    f"{what}: a gradient PyTorch has not"
                )
                continue
            assert mg is not None, f"{what}: no gradient for argument {i}"
            _close(
                mg.to_numpy(), tg.numpy(), max(entry.tol, 1e-9), f"{what}: gradient of argument {i}"
            )


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def check_error(entry: OpInfo, error: ErrorInput, backend: TensorBackend) -> None:
    """Run one error input on ``backend`` and on PyTorch: both raise, MiniTorch as it says."""
    import torch

    def make_m(a: Any, requires_grad: bool = False) -> Tensor:
        return from_numpy(np.asarray(a, dtype=np.float64).copy(), backend=backend).requires_grad_(
            requires_grad
        )

    def make_t(a: Any, requires_grad: bool = False) -> Any:
        return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)

    if error.torch_raises:
        with pytest.raises(Exception):  # noqa: B017, PT011 - any PyTorch error: its classes differ
            error.call("torch", make_t)
    else:
        assert entry.differs in DIFFERENCES, f"{entry.name}: MiniTorch alone refuses {error.what}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            error.call("torch", make_t)
    with pytest.raises(error.error) as info:
        error.call("minitorch", make_m)
    assert re.search(error.match, str(info.value)), f"{entry.name}, {error.what}: {info.value}"


def cases(ops: Sequence[OpInfo]) -> list[Any]:
    """``(entry, sample)`` pytest parameters of every sample of ``ops``."""
    return [pytest.param(e, s, id=f"{e.name}|{s.label()}") for e in ops for s in e.samples]


def error_cases(ops: Sequence[OpInfo]) -> list[Any]:
    """``(entry, error)`` pytest parameters of every error input of ``ops``."""
    return [pytest.param(e, x, id=f"{e.name}|{x.what}") for e in ops for x in e.errors]


def _drawable(sample: Sample) -> bool:
    """A ``general`` sample of float values whose values may be drawn anew (no aliasing)."""
    return (
        sample.kind == "general"
        and not sample.alias
        and all(
            a.dtype.kind == "f" and a.size > 0 and not np.all(a == np.round(a))
            for a in sample.arrays
        )
    )


def drawn_cases(ops: Sequence[OpInfo]) -> list[Any]:
    """``(entry, sample)`` parameters: each entry's first ``general`` sample whose values vary."""
    out = []
    for e in ops:
        base = next((s for s in e.samples if _drawable(s)), None)
        if base is not None:
            out.append(pytest.param(e, base, id=f"{e.name}|drawn:{base.label()}"))
    return out


def drawn_values(sample: Sample) -> st.SearchStrategy[Sample]:
    """``sample`` with new values drawn by hypothesis, of the same shapes, layouts and sign.

    An array of positive values gets values in [0.5, 3] (the domain of log, sqrt, a
    base of ``**``), another values in [-3, -0.2] or [0.2, 3], away from the kinks at 0;
    the values of one array are distinct, so a maximum has no tie (whose gradient is
    each library's convention).
    """
    parts = []
    for a in sample.arrays:
        if np.all(a > 0):
            elements: st.SearchStrategy[float] = st.floats(0.5, 3.0)
        else:
            elements = st.one_of(st.floats(-3.0, -0.2), st.floats(0.2, 3.0))
        parts.append(hnp.arrays(np.float64, a.shape, elements=elements, unique=True))
    return st.tuples(*parts).map(lambda arrays: dataclasses.replace(sample, arrays=arrays))


class OpDatabaseSuite:
    """An op database on one backend, inherited by a ``Test*`` subclass per backend.

    Class attributes a subclass may set:
        backend: the ``TensorBackend`` under test (required).
        ops: the table (default ``OPS``, the Tensor API; mt-nn's tests pass their own).
        ops_module: ``"module:name"`` of ``ops`` (or ``"file.py:name"``, a test module's), for
            the child process of the risky samples.
        kinds: the sample kinds to run (default: every kind).
    """

    backend: ClassVar[TensorBackend]
    ops: ClassVar[Sequence[OpInfo]] = OPS
    ops_module: ClassVar[str] = "minitorch.tensor.opdb:OPS"
    kinds: ClassVar[tuple[str, ...]] = SAMPLE_KINDS

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize the tests over this suite's table (pytest calls it per test)."""
        if "sample" in metafunc.fixturenames:
            metafunc.parametrize(("entry", "sample"), cases(self.ops))
        if "error" in metafunc.fixturenames:
            metafunc.parametrize(("entry", "error"), error_cases(self.ops))
        if "base" in metafunc.fixturenames:
            metafunc.parametrize(("entry", "base"), drawn_cases(self.ops))

    @pytest.mark.task2_3
    def test_sample_against_pytorch(self, entry: OpInfo, sample: Sample) -> None:
        """Values, gradients and in-place writes agree with PyTorch's."""
        pytest.importorskip("torch", reason="the op database compares with PyTorch")
        if sample.kind not in self.kinds:
            pytest.skip(f"{self.backend.name} runs the kinds {self.kinds}")
        check_sample(entry, sample, self.backend)
        _COVERED[(entry.name, self.backend.name, sample.kind)] += 1

    @pytest.mark.task2_3
    def test_drawn_values_against_pytorch(self, entry: OpInfo, base: Sample) -> None:
        """The entry's general sample with values drawn by hypothesis.

        A fifth of the profile's examples: 5 in ``ci``, 10 in ``dev``, 100 in ``deep``.
        """
        pytest.importorskip("torch", reason="the op database compares with PyTorch")
        examples = max(1, settings().max_examples // 5)

        @settings(max_examples=examples)
        @given(drawn_values(base))
        def check(sample: Sample) -> None:
            check_sample(entry, sample, self.backend)

        check()
        _COVERED[(entry.name, self.backend.name, "drawn")] += examples

    @pytest.mark.task2_3
    def test_error_input_raises_as_pytorch(self, entry: OpInfo, error: ErrorInput) -> None:
        """Both libraries raise; MiniTorch's class and message name the problem."""
        pytest.importorskip("torch", reason="the op database compares with PyTorch")
        check_error(entry, error, self.backend)
        _COVERED[(entry.name, self.backend.name, "error")] += 1

    @pytest.mark.task2_3
    def test_risky_samples_in_a_child_under_heap_checks(self) -> None:
        """The samples that once corrupted the heap, in a child process under MALLOC_CHECK_=3."""
        pytest.importorskip("torch", reason="the op database compares with PyTorch")
        if not any(e.risky for e in self.ops):
            pytest.skip("no entry of this table is risky")
        proc = run_risky_child(self.backend, self.ops_module)
        assert proc.returncode == 0, (
            f"the child exited {proc.returncode} (a negative status is a signal: a crash)\n"
            + proc.stdout[-3000:]
            + proc.stderr[-3000:]
        )
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        assert report["failed"] == [], report["failed"]
        assert report["ran"] > 0


MALLOC_DEBUG = "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"


def run_risky_child(
    backend: TensorBackend, ops_module: str = "minitorch.tensor.opdb:OPS"
) -> subprocess.CompletedProcess[str]:
    """Run ``run_risky`` for ``backend`` in a child process under glibc's heap checks."""
    env = dict(os.environ, MALLOC_CHECK_="3", MALLOC_PERTURB_="165")
    if os.path.exists(MALLOC_DEBUG):  # glibc 2.34+ checks only with its debug library
        env["LD_PRELOAD"] = MALLOC_DEBUG
    code = (
        "import sys\n"
        "from minitorch.tensor.opdb import run_risky\n"
        f"sys.exit(run_risky({_spec_of(backend)!r}, {ops_module!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900
    )


def _spec_of(backend: TensorBackend) -> str:
    """``"module:name"`` of the module-level object ``backend`` (a child process imports it)."""
    for module_name, module in sorted(sys.modules.items()):
        if not module_name.startswith("minitorch.") or module is None:
            continue
        for attr, value in vars(module).items():
            if value is backend and not attr.startswith("_"):
                return f"{module_name}:{attr}"
    raise LookupError(f"backend {backend.name!r} is not a module-level object of minitorch")


def _load(spec: str) -> Any:
    """The object ``"module:name"`` or ``"path/to/file.py:name"`` names (a test module's table)."""
    import importlib
    import importlib.util

    module_name, attr = spec.rsplit(":", 1)
    if module_name.endswith(".py"):
        file_spec = importlib.util.spec_from_file_location("_opdb_table", module_name)
        if file_spec is None or file_spec.loader is None:
            raise ImportError(f"cannot load the table {spec!r}")
        module = importlib.util.module_from_spec(file_spec)
        file_spec.loader.exec_module(module)
        return getattr(module, attr)
    return getattr(importlib.import_module(module_name), attr)


def run_risky(spec: str, ops_spec: str = "minitorch.tensor.opdb:OPS") -> int:
    """Run every risky entry's samples on the backend ``spec`` names; print a JSON line.

    Args:
        spec: ``"module:name"`` of a ``TensorBackend`` (``"minitorch.fast:FastBackend"``).
        ops_spec: ``"module:name"`` of the table.
    """
    backend = _load(spec)
    backend_name = backend.name
    failed, ran = [], 0
    for e in _load(ops_spec):
        if not e.risky:
            continue
        for s in e.samples:
            ran += 1
            try:
                check_sample(e, s, backend)
            except Exception as err:
                failed.append(f"{e.name} {s.label()}: {type(err).__name__}: {str(err)[:300]}")
    print(json.dumps({"backend": backend_name, "ran": ran, "failed": failed}))
    return 0
