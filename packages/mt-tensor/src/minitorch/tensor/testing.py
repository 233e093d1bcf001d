"""Hypothesis strategies for tensors and the shared backend test suite.

Every backend (``SimpleBackend`` here, ``FastBackend`` in mt-fast, ``CudaBackend`` in
mt-cuda) runs the same tests by subclassing ``BackendSuite`` in its own test directory::

    from minitorch.fast import FastBackend
    from minitorch.tensor.testing import BackendSuite

    class TestFastBackend(BackendSuite):
        backend = FastBackend

The suite uses only the public ``Tensor`` API and the backend's named operations
(``backend.add_reduce``, ``backend.max_reduce``, ``backend.matrix_multiply`` ...), and
checks forward values against plain floats or numpy and gradients against central
differences. This module needs pytest and hypothesis (the ``test`` extra of mt-tensor), so
the package root does not import it.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from math import prod
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from minitorch.operators import MathTestVariable

from .autograd import grad_check
from .backends.protocol import TensorBackend
from .backends.simple import SimpleBackend, SimpleOps
from .creation import from_numpy, ones, rand, zeros
from .functions import RPow
from .tensor import Tensor
from .tensor_data import IndexingError, TensorData, broadcasts_to
from .torch_compat import MaxResult

__all__ = [
    "ARITHMETIC",
    "COMPARISONS",
    "POW_SPECIALS",
    "ZERO_SIZE_MATMULS",
    "BackendSuite",
    "assert_close",
    "assert_same_floats",
    "bounds_checked",
    "broadcastable_shapes",
    "non_broadcastable_shapes",
    "pow_reference",
    "shaped_pairs",
    "shapes",
    "shapes_broadcasting_to",
    "small_floats",
    "tensors",
]

Array = npt.NDArray[np.float64]

_IN_PLACE_FORMS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any] | None]] = {
    "+=": (operator.add, operator.iadd),
    "-=": (operator.sub, operator.isub),
    "*=": (operator.mul, operator.imul),
    "/=": (operator.truediv, operator.itruediv),
    "add_": (operator.add, None),
    "sub_": (operator.sub, None),
    "mul_": (operator.mul, None),
    "div_": (operator.truediv, None),
}
"""In-place forms: the operation out of place, and the augmented assignment (None: a method)."""

small_floats = st.floats(min_value=-100, max_value=100, allow_nan=False, allow_infinity=False)
"""Floats in ``[-100, 100]``: the domain on which every catalogue function is well defined."""


def shapes(
    max_dims: int = 4, max_size: int = 4, min_dims: int = 1
) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes of ``min_dims..max_dims`` dimensions, each of size ``1..max_size``."""
    return st.lists(st.integers(1, max_size), min_size=min_dims, max_size=max_dims).map(tuple)


@st.composite
def shapes_broadcasting_to(
    draw: st.DrawFn, target: tuple[int, ...], min_dims: int = 0
) -> tuple[int, ...]:
    """A shape that broadcasts to ``target``: trailing dimensions of it, some sizes 1.

    At least ``min_dims`` of them: with 0, ``()`` is one.
    """
    k = draw(st.integers(min(min_dims, len(target)), len(target)))
    tail = target[len(target) - k :]
    return tuple(1 if s == 1 else draw(st.sampled_from((s, 1))) for s in tail)


@st.composite
def broadcastable_shapes(
    draw: st.DrawFn, max_dims: int = 4, max_size: int = 4
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two *different* shapes that broadcast together, e.g. ``(3, 1, 4)`` and ``(2, 4)``.

    Both are drawn from a common target shape: each keeps some trailing dimensions of it
    and replaces some sizes by 1.
    """
    target = draw(shapes(max_dims, max_size))
    a, b = draw(shapes_broadcasting_to(target, 1)), draw(shapes_broadcasting_to(target, 1))
    assume(a != b)
    return a, b


@st.composite
def non_broadcastable_shapes(
    draw: st.DrawFn, max_dims: int = 4, max_size: int = 4
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that do *not* broadcast, e.g. ``(2, 3)`` and ``(4, 1, 2)``.

    Aligned on the right, one dimension has two different sizes, both above 1.
    """
    max_size = max(max_size, 3)
    a = list(draw(shapes(max_dims, max_size)))
    b = list(draw(shapes(max_dims, max_size)))
    i = draw(st.integers(1, min(len(a), len(b))), label="clashing dim from the right")
    x, y = draw(st.lists(st.integers(2, max_size), min_size=2, max_size=2, unique=True))
    a[-i], b[-i] = x, y
    return tuple(a), tuple(b)


def _array(values: Sequence[float], shape: Sequence[int]) -> Array:
    return np.array(values, dtype=np.float64).reshape(tuple(shape))


@st.composite
def tensors(
    draw: st.DrawFn,
    backend: TensorBackend = SimpleBackend,
    shape: Sequence[int] | None = None,
    *,
    max_dims: int = 4,
    max_size: int = 4,
    elements: st.SearchStrategy[float] = small_floats,
    permuted: bool | None = False,
) -> Tensor:
    """A constant tensor on ``backend`` with drawn values (and a drawn shape if none is given).

    Args:
        draw: supplied by ``st.composite``; call ``tensors(backend, ...)`` without it.
        backend: where the tensor lives.
        shape: the shape of the result; drawn with ``shapes(max_dims, max_size)`` if None.
        max_dims: the most dimensions a drawn shape has.
        max_size: the largest size of a dimension of a drawn shape.
        elements: the values.
        permuted: True for a permuted view of a contiguous tensor (non-contiguous whenever
            the shape has two dimensions of size > 1), False for a contiguous tensor, None
            to let hypothesis choose.
    """
    shape = tuple(shape) if shape is not None else draw(shapes(max_dims, max_size))
    values = draw(st.lists(elements, min_size=prod(shape), max_size=prod(shape)))
    if permuted is None:
        permuted = draw(st.booleans())
    if not permuted:
        return from_numpy(_array(values, shape), backend=backend)
    order = draw(st.permutations(range(len(shape))))
    out = _permuted_view(values, shape, order, backend)
    if out.is_contiguous() and sum(s > 1 for s in shape) >= 2:
        # The drawn order kept the non-trivial dimensions in place; reversing cannot.
        out = _permuted_view(values, shape, order[::-1], backend)
    return out


def _permuted_view(
    values: Sequence[float], shape: tuple[int, ...], order: Sequence[int], backend: TensorBackend
) -> Tensor:
    """``base.permute(*order)`` of shape ``shape``, where ``base`` is contiguous."""
    base_shape = [0] * len(shape)
    for i, o in enumerate(order):
        base_shape[o] = shape[i]
    return from_numpy(_array(values, base_shape), backend=backend).permute(*order)


@st.composite
def shaped_pairs(
    draw: st.DrawFn,
    backend: TensorBackend = SimpleBackend,
    *,
    max_dims: int = 4,
    max_size: int = 4,
    elements: st.SearchStrategy[float] = small_floats,
    permuted: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """Two tensors of different shapes that broadcast together (see ``broadcastable_shapes``)."""
    shape_a, shape_b = draw(broadcastable_shapes(max_dims, max_size))
    a = draw(tensors(backend, shape_a, elements=elements, permuted=permuted))
    b = draw(tensors(backend, shape_b, elements=elements, permuted=permuted))
    return a, b


ARITHMETIC: tuple[Callable[[Any, Any], Any], ...] = (
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
)
"""The elementwise arithmetic operators every error-contract test runs."""
COMPARISONS: tuple[Callable[[Any, Any], Any], ...] = (operator.lt, operator.gt, operator.eq)
"""The elementwise comparison operators."""


def assert_close(got: Tensor | Array, expected: npt.ArrayLike, tol: float = 1e-6) -> None:
    """Assert same shape and values within ``tol`` (relative and absolute)."""
    g = got.to_numpy() if isinstance(got, Tensor) else np.asarray(got)
    e = np.asarray(expected, dtype=np.float64)
    assert g.shape == e.shape, f"shape {g.shape}, expected {e.shape}"
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def _smooth(ref: Callable[..., float], *xs: float, h: float = 1e-4) -> bool:
    """True unless ``ref`` has a kink or a jump within ``h`` of the point, in any argument.

    Compares the one-sided slopes; a central-difference check is meaningless where they
    differ (relu at its kink, a comparison at its threshold).
    """
    for i in range(len(xs)):

        def f(t: float, i: int = i) -> float:
            args = list(xs)
            args[i] = t
            return float(ref(*args))

        x = xs[i]
        left = (f(x) - f(x - h)) / h
        right = (f(x + h) - f(x)) / h
        if abs(left - right) > 1e-2 * (1.0 + abs(left) + abs(right)):
            return False
    return True


def _smooth_everywhere(ref: Callable[..., float], *arrays: Array) -> bool:
    """``_smooth`` at every (broadcast) element of ``arrays``."""
    flat = [a.ravel() for a in np.broadcast_arrays(*arrays)]
    return all(_smooth(ref, *(float(a[k]) for a in flat)) for k in range(flat[0].size))


def _apply_reference(ref: Callable[..., float], *arrays: Array) -> Array:
    """Apply a float reference elementwise (arrays broadcast)."""
    out: Array = np.vectorize(lambda *v: float(ref(*v)), otypes=[np.float64])(*arrays)
    return out


ONE_ARG, TWO_ARG, REDUCE = MathTestVariable.pairs()
_ids = operator.itemgetter(0)
_FULL_REDUCTIONS = {"mean_full_red"}
"""Catalogue reductions over every element (result shape ``(1,)``); the rest reduce dim 0."""

# Composite expressions over a broadcast pair, each with its numpy twin.
COMPOSITES: list[tuple[str, Callable[[Any, Any], Any], Callable[[Array, Array], Array]]] = [
    ("poly", lambda a, b: a * a - b * 3.0 + 1.0, lambda a, b: a * a - b * 3.0 + 1.0),
    (
        "sigmoid_gate",
        lambda a, b: (a * 0.1).sigmoid() * b,
        lambda a, b: b / (1.0 + np.exp(-0.1 * a)),
    ),
    ("ratio", lambda a, b: a / (b * b + 1.0), lambda a, b: a / (b * b + 1.0)),
    (
        "log_exp",
        lambda a, b: ((a / 50.0).exp() + (b + 101.0).log()) * 2.0,
        lambda a, b: (np.exp(a / 50.0) + np.log(b + 101.0)) * 2.0,
    ),
    (
        "relu_sum0",
        lambda a, b: (a - b).relu().sum(0),
        lambda a, b: np.maximum(a - b, 0.0).sum(0, keepdims=True),
    ),
    (
        "mean_square",
        lambda a, b: ((a - b) * (a - b)).mean(),
        lambda a, b: np.array([np.mean((a - b) ** 2)]),
    ),
]


ZERO_SIZE_MATMULS: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = (
    ((0, 2, 3), (3, 4)),  # a batch of 0 against a matrix (a batch of 1)
    ((1, 3, 4), (0, 4, 5)),  # a batch of 1 against a batch of 0
    ((2, 0, 1, 3), (1, 3, 4)),  # a 0 inside the batch
    ((0, 1, 2, 2), (3, 2, 2)),  # a batch of 0 broadcast against one of 3
    ((2, 0), (0, 3)),  # inner dimension 0: a matrix of zeros
    ((4, 2, 0), (4, 0, 3)),  # batched, inner dimension 0
    ((1, 2, 0), (5, 0, 3)),  # inner dimension 0 and a broadcast batch: zeros (5, 2, 3)
    ((0, 3), (3, 2)),  # no rows
    ((2, 3), (3, 0)),  # no columns
    ((3, 0, 2), (2, 0)),  # neither
)
"""Matrix products with a zero size somewhere (their shapes are np.matmul's and PyTorch's)."""


def _check_fits(what: str, storage: Any, shape: Sequence[int], strides: Sequence[int]) -> None:
    """Fail if a ``(shape, strides)`` layout reaches past the end of ``storage``."""
    dims, steps = [int(d) for d in shape], [int(s) for s in strides]
    if 0 in dims:
        return
    last = sum((d - 1) * s for d, s in zip(dims, steps, strict=True))
    assert last < storage.size, (
        f"matmul kernel: the {what} of shape {tuple(dims)} reaches position {last} of a "
        f"storage of {storage.size}"
    )


def bounds_checked(backend: TensorBackend) -> TensorBackend:
    """``backend`` with a matmul kernel that checks its three layouts before it runs.

    A compiled kernel given a layout larger than its storage writes past it (the fast
    backend corrupts the heap and the interpreter aborts): here the test fails instead.
    The rest of the backend (prologue, other kernels) is ``backend``'s.
    """
    base = backend.ops

    class BoundsChecked(base):  # type: ignore[valid-type,misc]
        @staticmethod
        def matmul_kernel(*args: Any) -> None:
            for what, i in (("output", 0), ("a", 3), ("b", 6)):
                _check_fits(what, args[i], args[i + 1], args[i + 2])
            base.matmul_kernel(*args)

    return TensorBackend(BoundsChecked, f"{backend.name} (bounds-checked matmul)")


POW_SPECIALS: tuple[float, ...] = (
    *(0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1.5, -1.5, 0.25, 4.0),
    *(np.inf, -np.inf, np.nan, 1e-310, 1e300, -1e300, 2.0**60),
)
"""Bases and exponents where IEEE's ``pow`` has a rule of its own."""


def pow_reference(x: npt.ArrayLike, p: float) -> Array:
    """``x ** p`` as ``torch.pow``: C's ``pow`` (``np.power``), the square root for ``±0.5``.

    PyTorch (and numpy for 0.5) take ``x ** 0.5`` as ``sqrt(x)`` and ``x ** -0.5`` as
    ``1 / sqrt(x)``: they differ from C's ``pow`` at ``-inf`` and ``-0`` only.
    """
    a = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        if p == 0.5:
            return np.sqrt(a)
        if p == -0.5:
            return 1.0 / np.sqrt(a)
        return np.power(a, p)


def assert_same_floats(
    got: Tensor | Array, expected: npt.ArrayLike, rtol: float = 1e-15, signed_zeros: bool = True
) -> None:
    """Assert the same shape, NaN, infinities and zeros (and their signs), values within ``rtol``.

    ``signed_zeros=False`` lets ``-0`` stand for ``0`` (gradients: PyTorch's masks give
    ``+0`` where a product gives ``-0``).
    """
    g = got.to_numpy() if isinstance(got, Tensor) else np.asarray(got)
    e = np.asarray(expected, dtype=np.float64)
    assert g.shape == e.shape, f"shape {g.shape}, expected {e.shape}"
    np.testing.assert_array_equal(np.isnan(g), np.isnan(e), err_msg=f"NaN: {g} vs {e}")
    exact = ~np.isfinite(e) | (e == 0)
    np.testing.assert_array_equal(g[exact], e[exact], err_msg=f"{g} vs {e}")
    zeros = ~np.isnan(e) & (e == 0)
    if signed_zeros:
        np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(e[zeros]), err_msg="-0")
    np.testing.assert_allclose(g[~exact], e[~exact], rtol=rtol, atol=0)


def _whole_max(t: Tensor) -> Tensor:
    """``t.max()``, the maximum of every element (a Tensor, not a ``MaxResult``)."""
    top = t.max()
    assert isinstance(top, Tensor)
    return top


class BackendSuite:
    """Backend tests, inherited by a ``Test*`` subclass per backend.

    Not named ``Test*``, so pytest collects it only through subclasses. Each test carries
    its course marker (``task2_3`` forward, ``task2_4`` gradients), so ``pytest -m task2_4``
    selects the gradient tests of every backend. A slow backend limits the search::

        class TestCudaBackend(BackendSuite):
            backend = CudaBackend
            max_dims, max_size, max_examples = 3, 3, 3

    Class attributes a subclass may set:
        backend: the ``TensorBackend`` under test (required).
        max_dims, max_size: bounds of drawn shapes for forward tests.
        grad_max_dims, grad_max_size: bounds for gradient checks (each costs many calls).
        max_examples: at most this many hypothesis examples per test (slow backends such as
            the CUDA simulator); None keeps the active hypothesis profile's number.
        error_max_examples: at most this many examples per error-contract test
            (``test_error_*``): they check messages, so a few dozen bad inputs suffice.
    """

    backend: ClassVar[TensorBackend]
    max_dims: ClassVar[int] = 4
    max_size: ClassVar[int] = 4
    grad_max_dims: ClassVar[int] = 3
    grad_max_size: ClassVar[int] = 3
    max_examples: ClassVar[int | None] = None
    error_max_examples: ClassVar[int] = 20

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give each subclass its own copy of every property test.

        Hypothesis refuses to run one ``@given`` method from two classes in a session
        (``HealthCheck.differing_executors``), which is exactly what two backends' suites
        in one pytest run would do; the copy also carries the subclass's ``max_examples``.
        """
        super().__init_subclass__(**kwargs)
        for name in dir(cls):
            test = getattr(cls, name)
            inner = getattr(getattr(test, "hypothesis", None), "inner_test", None)
            if not name.startswith("test") or inner is None:
                continue
            # Every property test of the suite takes exactly one strategy, ``data``.
            copy = given(data=st.data())(inner)
            limit = settings().max_examples
            if cls.max_examples is not None:
                limit = min(cls.max_examples, limit)
            if name.startswith("test_error_"):
                limit = min(cls.error_max_examples, limit)
            if limit != settings().max_examples:
                copy = settings(max_examples=limit)(copy)
            copy.pytestmark = list(getattr(test, "pytestmark", []))  # type: ignore[attr-defined]
            setattr(cls, name, copy)

    # ------------------------------------------------------------------ drawing inputs
    def draw_tensor(
        self,
        data: st.DataObject,
        shape: Sequence[int] | None = None,
        *,
        grad: bool = False,
        permuted: bool | None = None,
        elements: st.SearchStrategy[float] = small_floats,
        label: str = "tensor",
    ) -> Tensor:
        """Draw a tensor on the suite's backend (contiguous or permuted unless told)."""
        dims, size = self._bounds(grad)
        return data.draw(
            tensors(
                self.backend,
                shape,
                max_dims=dims,
                max_size=size,
                elements=elements,
                permuted=permuted,
            ),
            label=label,
        )

    def draw_pair(self, data: st.DataObject, *, grad: bool = False) -> tuple[Tensor, Tensor]:
        """Draw two tensors of different, broadcast-compatible shapes."""
        dims, size = self._bounds(grad)
        return data.draw(
            shaped_pairs(self.backend, max_dims=dims, max_size=size), label="broadcast pair"
        )

    def draw_size(self, data: st.DataObject, label: str) -> int:
        """Draw one dimension size."""
        return data.draw(st.integers(1, self.max_size), label=label)

    def _bounds(self, grad: bool) -> tuple[int, int]:
        if grad:
            return min(self.grad_max_dims, self.max_dims), min(self.grad_max_size, self.max_size)
        return self.max_dims, self.max_size

    def const(self, array: npt.ArrayLike) -> Tensor:
        """A constant tensor on the suite's backend."""
        return from_numpy(np.array(array, dtype=np.float64), backend=self.backend)

    # ------------------------------------------------------------------ catalogue, forward
    @pytest.mark.task2_3
    @pytest.mark.parametrize(("name", "ref", "fn"), ONE_ARG, ids=[_ids(c) for c in ONE_ARG])
    @given(data=st.data())
    def test_one_arg_forward(self, name: str, ref: Any, fn: Any, data: st.DataObject) -> None:
        """Every one-argument function matches its float reference elementwise."""
        a = self.draw_tensor(data)
        out = fn(a)
        assert out.backend is self.backend
        assert_close(out, _apply_reference(ref, a.to_numpy()))

    @pytest.mark.task2_3
    @pytest.mark.parametrize(("name", "ref", "fn"), TWO_ARG, ids=[_ids(c) for c in TWO_ARG])
    @given(data=st.data())
    def test_two_arg_forward(self, name: str, ref: Any, fn: Any, data: st.DataObject) -> None:
        """Every two-argument function matches its float reference on same-shape inputs."""
        a = self.draw_tensor(data, label="a")
        b = self.draw_tensor(data, a.shape, label="b")
        assert_close(fn(a, b), _apply_reference(ref, a.to_numpy(), b.to_numpy()))

    @pytest.mark.task2_3
    @pytest.mark.parametrize(("name", "ref", "fn"), TWO_ARG, ids=[_ids(c) for c in TWO_ARG])
    @given(data=st.data())
    def test_two_arg_broadcast_forward(
        self, name: str, ref: Any, fn: Any, data: st.DataObject
    ) -> None:
        """Two-argument functions broadcast like numpy, in both argument orders."""
        a, b = self.draw_pair(data)
        x, y = a.to_numpy(), b.to_numpy()
        assert_close(fn(a, b), _apply_reference(ref, x, y))
        assert_close(fn(b, a), _apply_reference(ref, y, x))

    @pytest.mark.task2_3
    @pytest.mark.parametrize(("name", "ref", "fn"), REDUCE, ids=[_ids(c) for c in REDUCE])
    @given(data=st.data())
    def test_reduce_forward(self, name: str, ref: Any, fn: Any, data: st.DataObject) -> None:
        """Reductions match the float reference over dim 0 (kept, size 1) or everything."""
        a = self.draw_tensor(data)
        x = a.to_numpy()
        if name in _FULL_REDUCTIONS:
            expected = np.array([ref(list(x.ravel()))])
        else:
            expected = np.expand_dims(np.apply_along_axis(lambda v: ref(list(v)), 0, x), 0)
        assert_close(fn(a), expected)

    # ------------------------------------------------------------------ catalogue, backward
    @pytest.mark.task2_4
    @pytest.mark.parametrize(("name", "ref", "fn"), ONE_ARG, ids=[_ids(c) for c in ONE_ARG])
    @given(data=st.data())
    def test_one_arg_backward(self, name: str, ref: Any, fn: Any, data: st.DataObject) -> None:
        """Backprop through every one-argument function agrees with central differences."""
        a = self.draw_tensor(data, grad=True)
        assume(_smooth_everywhere(ref, a.to_numpy()))
        grad_check(fn, a)

    @pytest.mark.task2_4
    @pytest.mark.parametrize(("name", "ref", "fn"), TWO_ARG, ids=[_ids(c) for c in TWO_ARG])
    @given(data=st.data())
    def test_two_arg_backward(self, name: str, ref: Any, fn: Any, data: st.DataObject) -> None:
        """Two-argument gradients (comparisons: zero) agree with central differences."""
        a = self.draw_tensor(data, grad=True, label="a")
        b = self.draw_tensor(data, a.shape, grad=True, label="b")
        assume(_smooth_everywhere(ref, a.to_numpy(), b.to_numpy()))
        grad_check(fn, a, b)

    @pytest.mark.task2_4
    @pytest.mark.parametrize(("name", "ref", "fn"), TWO_ARG, ids=[_ids(c) for c in TWO_ARG])
    @given(data=st.data())
    def test_two_arg_broadcast_backward(
        self, name: str, ref: Any, fn: Any, data: st.DataObject
    ) -> None:
        """Gradients of broadcast inputs are summed back to each input's own shape."""
        a, b = self.draw_pair(data, grad=True)
        assume(_smooth_everywhere(ref, a.to_numpy(), b.to_numpy()))
        grad_check(fn, a, b)

    @pytest.mark.task2_4
    @pytest.mark.parametrize(("name", "ref", "fn"), REDUCE, ids=[_ids(c) for c in REDUCE])
    @given(data=st.data())
    def test_reduce_backward(self, name: str, ref: Any, fn: Any, data: st.DataObject) -> None:
        """Reduction gradients agree with central differences."""
        grad_check(fn, self.draw_tensor(data, grad=True))

    # ------------------------------------------------------------------ reductions
    @pytest.mark.task2_3
    @given(data=st.data())
    def test_reduce_every_dim(self, data: st.DataObject) -> None:
        """sum, mean and the backend's add/mul/max reductions over each dim match numpy."""
        a = self.draw_tensor(data)
        x = a.to_numpy()
        b = self.backend
        for d in range(a.dims):
            assert_close(a.sum(d), x.sum(d, keepdims=True))
            assert_close(a.sum(d - a.dims), x.sum(d, keepdims=True))
            assert_close(a.mean(d), x.mean(d, keepdims=True))
            assert_close(b.add_reduce(a, d), x.sum(d, keepdims=True))
            assert_close(b.mul_reduce(a, d), x.prod(d, keepdims=True))
            assert_close(b.max_reduce(a, d), x.max(d, keepdims=True))
        assert_close(a.sum(), np.array([x.sum()]))
        assert_close(a.mean(), np.array([x.mean()]))

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_all_every_dim(self, data: st.DataObject) -> None:
        """``all`` over each dim and overall matches numpy (inputs contain zeros)."""
        a = self.draw_tensor(data, elements=st.sampled_from((0.0, 1.0, -2.5)))
        x = a.to_numpy()
        for d in range(a.dims):
            assert_close(a.all(d), np.all(x != 0, axis=d, keepdims=True).astype(np.float64))
        assert_close(a.all(), np.array([float(np.all(x != 0))]))

    @pytest.mark.task2_4
    @given(data=st.data())
    def test_reduce_dim_backward(self, data: st.DataObject) -> None:
        """Gradients of sum(d) and mean(d), weighted so each output entry counts differently."""
        a = self.draw_tensor(data, grad=True)
        d = data.draw(st.integers(0, a.dims - 1), label="dim")
        reduced = tuple(1 if i == d else s for i, s in enumerate(a.shape))
        w = self.draw_tensor(data, reduced, grad=True, label="weights")
        grad_check(lambda x: x.sum(d) * w, a)
        grad_check(lambda x: x.mean(d) * w, a)

    # ------------------------------------------------------------------ views
    @pytest.mark.task2_3
    @given(data=st.data())
    def test_permute(self, data: st.DataObject) -> None:
        """Permute matches numpy.transpose, twice over, and shares the input's values."""
        a = self.draw_tensor(data)
        o1 = data.draw(st.permutations(range(a.dims)), label="order")
        o2 = data.draw(st.permutations(range(a.dims)), label="second order")
        x = a.to_numpy()
        p = a.permute(*o1)
        assert_close(p, np.transpose(x, o1))
        assert_close(p.permute(*o2), np.transpose(np.transpose(x, o1), o2))
        assert_close(p.contiguous(), np.transpose(x, o1))

    @pytest.mark.task2_4
    @given(data=st.data())
    def test_permute_backward(self, data: st.DataObject) -> None:
        """The gradient of a permute is the weights permuted back."""
        a = self.draw_tensor(data, grad=True)
        order = data.draw(st.permutations(range(a.dims)), label="order")
        w = self.draw_tensor(data, tuple(a.shape[o] for o in order), grad=True, label="weights")
        grad_check(lambda x: x.permute(*order) * w, a, samples=None)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_view_and_contiguous(self, data: st.DataObject) -> None:
        """View reshapes in row-major order; contiguous copies a permuted tensor in order."""
        a = self.draw_tensor(data)
        x = a.to_numpy()
        c = a.contiguous()
        assert c.is_contiguous()
        assert_close(c, x)
        rows = data.draw(st.sampled_from([r for r in range(1, a.size + 1) if a.size % r == 0]))
        assert_close(c.view(rows, a.size // rows), x.reshape(rows, a.size // rows))
        assert_close(c.view(-1), x.reshape(-1))
        assert_close(c.view(a.size).view(*a.shape), x)

    @pytest.mark.task2_4
    @given(data=st.data())
    def test_view_contiguous_backward(self, data: st.DataObject) -> None:
        """Gradients flow back through contiguous() and view() to a (permuted) input."""
        a = self.draw_tensor(data, grad=True, permuted=True)
        w = self.draw_tensor(data, (a.size,), grad=True, label="weights")
        grad_check(lambda x: x.contiguous().view(x.size) * w, a, samples=None)

    # ------------------------------------------------------------------ matrix multiply
    def _check_matmul(self, a: Tensor, b: Tensor) -> None:
        expected = a.to_numpy() @ b.to_numpy()
        assert_close(a @ b, expected)
        assert_close(self.backend.matrix_multiply(a, b), expected)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_matmul_2d(self, data: st.DataObject) -> None:
        """(m, n) @ (n, p) matches numpy."""
        m, n, p = (self.draw_size(data, s) for s in "mnp")
        self._check_matmul(self.draw_tensor(data, (m, n)), self.draw_tensor(data, (n, p)))

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_matmul_batched(self, data: st.DataObject) -> None:
        """(B, m, n) @ (B, n, p) and a batch against a plain matrix match numpy."""
        batch, m, n, p = (self.draw_size(data, s) for s in "Bmnp")
        a = self.draw_tensor(data, (batch, m, n))
        self._check_matmul(a, self.draw_tensor(data, (batch, n, p)))
        self._check_matmul(a, self.draw_tensor(data, (n, p)))
        self._check_matmul(self.draw_tensor(data, (m, n)), self.draw_tensor(data, (batch, n, p)))

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_matmul_broadcast_batch(self, data: st.DataObject) -> None:
        """Batch dimensions broadcast: (B1, 1, m, n) @ (B2, n, p) -> (B1, B2, m, p)."""
        b1, b2, m, n, p = (self.draw_size(data, s) for s in ("B1", "B2", "m", "n", "p"))
        a = self.draw_tensor(data, (b1, 1, m, n))
        b = self.draw_tensor(data, (b2, n, p))
        self._check_matmul(a, b)
        assert (a @ b).shape == (b1, b2, m, p)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_matmul_edges(self, data: st.DataObject) -> None:
        """Row times column, column times row (outer product), and 1 x 1 matrices."""
        n = self.draw_size(data, "n")
        row = self.draw_tensor(data, (1, n), label="row")
        col = self.draw_tensor(data, (n, 1), label="col")
        self._check_matmul(row, col)
        self._check_matmul(col, row)
        self._check_matmul(self.draw_tensor(data, (1, 1)), row)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_matmul_non_contiguous(self, data: st.DataObject) -> None:
        """Transposed (strided) operands, 2-D and batched, match numpy."""
        batch, m, n, p = (self.draw_size(data, s) for s in "Bmnp")
        a_t = self.draw_tensor(data, (n, m), permuted=False).permute(1, 0)
        b_t = self.draw_tensor(data, (p, n), permuted=False).permute(1, 0)
        self._check_matmul(a_t, b_t)
        a3 = self.draw_tensor(data, (batch, n, m), permuted=False).permute(0, 2, 1)
        b3 = self.draw_tensor(data, (n, batch, p), permuted=False).permute(1, 0, 2)
        self._check_matmul(a3, b3)
        self._check_matmul(a3, b_t)

    @pytest.mark.task2_4
    @given(data=st.data())
    def test_matmul_backward(self, data: st.DataObject) -> None:
        """Matmul gradients (2-D, batched, broadcast batch), checked by central differences."""
        batch, m, n, p = (data.draw(st.integers(1, self.grad_max_size), label=s) for s in "Bmnp")
        cases = [
            ((m, n), (n, p)),
            ((batch, m, n), (batch, n, p)),
            ((batch, 1, m, n), (2, n, p)),
            ((m, n), (batch, n, p)),
        ]
        for shape_a, shape_b in cases:
            a = self.draw_tensor(data, shape_a, grad=True, label="a")
            b = self.draw_tensor(data, shape_b, grad=True, label="b")
            out_shape = (*np.broadcast_shapes(shape_a[:-2], shape_b[:-2]), m, p)
            w = self.draw_tensor(data, out_shape, grad=True, label="weights")
            grad_check(lambda x, y, w=w: (x @ y) * w, a, b)

    @pytest.mark.task2_3
    def test_matmul_mismatched_inner_dims(self) -> None:
        """Mismatched inner dimensions raise IndexingError naming both shapes."""
        a = self.const(np.ones((2, 3)))
        b = self.const(np.ones((4, 2)))
        with pytest.raises(IndexingError, match=r"\(2, 3\).*\(4, 2\)"):
            a @ b
        with pytest.raises(IndexingError, match=r"\(2, 3\).*\(4, 2\)"):
            self.backend.matrix_multiply(a, b)
        c = self.const(np.ones((2, 2, 3)))
        d = self.const(np.ones((3, 3, 2)))
        with pytest.raises(IndexingError, match=r"\(2, 2, 3\).*\(3, 3, 2\)"):
            c @ d

    @pytest.mark.task2_3
    def test_matmul_of_zero_sizes_as_pytorch(self) -> None:
        """A zero size anywhere gives PyTorch's (numpy's) shape; inner dimension 0, zeros.

        (``(0, 2, 3) @ (3, 4)`` ran the kernel on a batch of ``max(0, 1) = 1`` matrices
        past a 0-element output, not on the broadcast batch of 0: the fast backend
        corrupted the heap, the others raised IndexError.) The kernel here checks its
        layouts first (``bounds_checked``), so a regression fails the test, not the run.
        """
        checked = bounds_checked(self.backend)
        rng = np.random.default_rng(0)
        for shape_a, shape_b in ZERO_SIZE_MATMULS:
            x, y = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
            a, b = from_numpy(x, backend=checked), from_numpy(y, backend=checked)
            expected = np.matmul(x, y)
            assert_close(a @ b, expected, tol=1e-12)
            assert_close(checked.matrix_multiply(a, b), expected, tol=1e-12)
        torch = pytest.importorskip("torch", reason="PyTorch is the reference of the shapes")
        for shape_a, shape_b in ZERO_SIZE_MATMULS:
            theirs = torch.zeros(shape_a) @ torch.zeros(shape_b)
            assert np.matmul(np.zeros(shape_a), np.zeros(shape_b)).shape == tuple(theirs.shape)

    @pytest.mark.task2_4
    def test_matmul_of_zero_sizes_backward_as_pytorch(self) -> None:
        """The gradients of a product with a zero size: their inputs' shapes, PyTorch's values.

        An empty batch sums nothing back: a batch-of-1 operand gets zeros.
        """
        checked = bounds_checked(self.backend)
        rng = np.random.default_rng(1)
        torch = pytest.importorskip("torch", reason="PyTorch is the reference of the gradients")
        for shape_a, shape_b in ZERO_SIZE_MATMULS:
            x, y = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
            w = rng.standard_normal(np.matmul(x, y).shape)
            a = from_numpy(x, backend=checked).requires_grad_()
            b = from_numpy(y, backend=checked).requires_grad_()
            ((a @ b) * from_numpy(w, backend=checked)).sum().backward()
            tx = torch.tensor(x, requires_grad=True)
            ty = torch.tensor(y, requires_grad=True)
            ((tx @ ty) * torch.tensor(w)).sum().backward()
            for ours, theirs in ((a, tx), (b, ty)):
                assert ours.grad is not None
                assert_close(ours.grad, theirs.grad.numpy(), tol=1e-12)

    # ------------------------------------------------------------------ output contract
    @pytest.mark.task2_3
    def test_kernels_write_every_output_element(self) -> None:
        """Outputs come from ``storage_empty``: a kernel that skips an element leaks garbage.

        Runs every primitive on a copy of the backend whose empty storage is all NaN.
        """
        base = self.backend.ops

        class Poisoned(base):  # type: ignore[valid-type,misc]
            @staticmethod
            def storage_empty(size: int) -> Any:
                return base.storage_from_numpy(np.full(size, np.nan))

        poisoned = TensorBackend(Poisoned, f"{self.backend.name} (NaN-filled outputs)")
        rng = np.random.default_rng(0)
        x, y, w = rng.standard_normal((3, 4, 5)), rng.standard_normal((4, 1)), rng.random((5, 2))
        t = from_numpy(x, backend=poisoned)
        permuted = from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)), backend=poisoned)
        permuted = permuted.permute(1, 2, 0)
        for a in (t, permuted):
            assert_close(-a, -x)
            assert_close(a.sigmoid(), 1 / (1 + np.exp(-x)))
            assert_close(a + from_numpy(y, backend=poisoned), x + y)
            for dim in range(3):
                assert_close(a.sum(dim), x.sum(dim, keepdims=True))
            assert_close(a @ from_numpy(w, backend=poisoned), x @ w)
            assert_close(
                from_numpy(w.T, backend=poisoned) @ a.permute(0, 2, 1), w.T @ x.transpose(0, 2, 1)
            )
        empty = from_numpy(np.ones((3, 0)), backend=poisoned)
        assert_close(empty.sum(1), np.zeros((3, 1)))
        assert_close(empty @ from_numpy(np.ones((0, 2)), backend=poisoned), np.zeros((3, 2)))

    # ------------------------------------------------------------------ composites
    @pytest.mark.task2_3
    @pytest.mark.parametrize(("name", "fn", "np_fn"), COMPOSITES, ids=[_ids(c) for c in COMPOSITES])
    @given(data=st.data())
    def test_composite_forward(self, name: str, fn: Any, np_fn: Any, data: st.DataObject) -> None:
        """Composite expressions over broadcast pairs match the same expression in numpy."""
        a, b = self.draw_pair(data)
        assert_close(fn(a, b), np_fn(a.to_numpy(), b.to_numpy()))

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_linear_layer_forward(self, data: st.DataObject) -> None:
        """``relu(x @ w + bias).sum(1)``: a linear layer, as numpy computes it."""
        n, k, m = (self.draw_size(data, s) for s in "nkm")
        x = self.draw_tensor(data, (n, k), label="x")
        w = self.draw_tensor(data, (k, m), label="w")
        bias = self.draw_tensor(data, (m,), label="bias")
        expected = np.maximum(x.to_numpy() @ w.to_numpy() + bias.to_numpy(), 0).sum(
            1, keepdims=True
        )
        assert_close((x @ w + bias).relu().sum(1), expected)

    # ------------------------------------------------------------------ backends that mix
    @pytest.mark.task2_3
    def test_backends_on_one_device_mix(self) -> None:
        """Tensors of two backends in the same memory combine; the first operand's wins.

        Host backends (simple, fast, fast-plain) all keep numpy storage, so an operation
        between them runs on the first operand's backend, and a leaf's gradient lands on the
        leaf's own backend. A backend on another device raises ValueError naming both.
        """
        # Another backend in the same memory: the simple one, or for the simple backend (and
        # a device backend) a variant of this backend's own ops class.
        other = SimpleBackend
        if self.backend is SimpleBackend or self.backend.cuda:
            variant = type("OtherOps", (self.backend.ops,), {"name": "other"})
            other = TensorBackend(variant)
        x, y = np.arange(1.0, 5.0).reshape(2, 2), np.arange(2.0, 6.0).reshape(2, 2)
        ops: list[tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = [
            (operator.add, operator.add),
            (operator.sub, operator.sub),
            (operator.mul, operator.mul),
            (operator.truediv, operator.truediv),
            (operator.matmul, operator.matmul),
            (operator.lt, lambda p, q: (p < q) * 1.0),
            (operator.eq, lambda p, q: (p == q) * 1.0),
        ]
        a = self.const(x)
        b = from_numpy(y, backend=other)
        for op, ref in ops:
            if not self.backend.cuda:
                assert op(a, b).backend is a.backend
                assert op(b, a).backend is b.backend
            assert_close(op(a, b), ref(x, y))
            assert_close(op(b, a), ref(y, x))
        leaf = from_numpy(x.copy(), backend=self.backend).requires_grad_(True)
        (b * leaf).sum().backward()
        assert leaf.grad is not None
        assert leaf.grad.backend is leaf.backend
        assert_close(leaf.grad, y)

        device = type(
            "ElsewhereOps", (SimpleOps,), {"cuda": not self.backend.cuda, "name": "elsewhere"}
        )
        elsewhere = TensorBackend(device)
        c = Tensor.make([1.0, 2.0, 3.0, 4.0], (2, 2), backend=elsewhere)
        for op, _ in ops:
            with pytest.raises(ValueError, match=r"different devices.*move one with \.to"):
                op(a, c)
            with pytest.raises(ValueError, match=r"different devices.*move one with \.to"):
                op(c, a)
        moved = b.to(self.backend)
        assert moved.backend == self.backend
        assert_close(a + moved, x + y)

    # ------------------------------------------------------------------ the error contract
    # Bad inputs drawn by hypothesis: each must raise the documented exception with a
    # message naming the problem, before any kernel runs, and leave its inputs unchanged.

    @pytest.mark.task2_2
    @given(data=st.data())
    def test_error_shapes_that_do_not_broadcast(self, data: st.DataObject) -> None:
        """Elementwise ops on shapes that do not broadcast raise IndexingError naming both."""
        shape_a, shape_b = data.draw(
            non_broadcastable_shapes(self.max_dims, self.max_size), label="shapes"
        )
        a = self.draw_tensor(data, shape_a, label="a")
        b = self.draw_tensor(data, shape_b, label="b")
        before = a.to_numpy().copy()
        ops: list[Callable[[Tensor, Tensor], Any]] = [
            *ARITHMETIC,
            *COMPARISONS,
            self.backend.add_zip,
            self.backend.mul_zip,
        ]
        for op in ops:
            with pytest.raises(IndexingError) as err:
                op(a, b)
            assert str(shape_a) in str(err.value), err.value
            assert str(shape_b) in str(err.value), err.value
        np.testing.assert_array_equal(a.to_numpy(), before)

    @pytest.mark.task2_3  # through Tensor (draw_tensor permutes): task 2.3's code
    @given(data=st.data())
    def test_error_bad_indices(self, data: st.DataObject) -> None:
        """Too-long or out-of-range indices raise IndexingError naming the shape."""
        t = self.draw_tensor(data, label="t")
        shape = t.shape
        if data.draw(st.booleans(), label="too long"):
            # A shorter index is a view (t[0] of a matrix is its first row), as in PyTorch.
            n = data.draw(st.integers(len(shape) + 1, len(shape) + 2))
            index = tuple(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
        else:
            d = data.draw(st.integers(0, len(shape) - 1), label="bad dim")
            bad = data.draw(
                st.one_of(
                    st.integers(shape[d], shape[d] + 3), st.integers(-shape[d] - 3, -shape[d] - 1)
                ),
                label="bad entry",
            )
            index = tuple(bad if i == d else 0 for i in range(len(shape)))
        before = t.to_numpy().copy()
        with pytest.raises(IndexingError, match=re.escape(str(shape))):
            t[index]
        with pytest.raises(IndexingError, match=re.escape(str(shape))):
            t[index] = 1.0
        np.testing.assert_array_equal(t.to_numpy(), before)
        assert t.version == 0

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_error_invalid_dims(self, data: st.DataObject) -> None:
        """A dim out of range or not an int raises IndexingError mentioning the dim."""
        t = self.draw_tensor(data, label="t")
        d = t.dims
        dim: Any = data.draw(
            st.one_of(
                st.integers(d, d + 3),
                st.integers(-d - 3, -d - 1),
                st.sampled_from([0.0, 1.5, "0", True, (0,)]),
            ),
            label="dim",
        )
        calls: list[Callable[[], Any]] = [
            lambda: t.sum(dim),
            lambda: t.mean(dim),
            lambda: t.all(dim),
            lambda: self.backend.add_reduce(t, dim),
            lambda: self.backend.max_reduce(t, dim),
        ]
        for call in calls:
            with pytest.raises(IndexingError, match="dim"):
                call()

    @pytest.mark.task2_3  # through Tensor (draw_tensor permutes): task 2.3's code
    @given(data=st.data())
    def test_error_invalid_permute_orders(self, data: st.DataObject) -> None:
        """An order that is not a permutation of the dims raises IndexingError naming it."""
        t = self.draw_tensor(data, label="t")
        d = t.dims
        order: tuple[Any, ...] = tuple(
            data.draw(
                st.one_of(
                    st.lists(st.integers(-1, d + 1), min_size=0, max_size=d + 2),
                    st.permutations(range(d + 1)),
                    st.lists(st.sampled_from([None, 0.0, "0"]), min_size=d, max_size=d),
                ).filter(
                    lambda o: (
                        list(o) != list(range(d))
                        and sorted(map(str, o)) != [str(i) for i in range(d)]
                    )
                ),
                label="order",
            )
        )
        with pytest.raises(IndexingError, match="not a permutation"):
            t.permute(*order)

    @pytest.mark.task2_3  # through Tensor (draw_tensor permutes): task 2.3's code
    @given(data=st.data())
    def test_error_view_to_a_wrong_size(self, data: st.DataObject) -> None:
        """``view`` to another size: IndexingError naming both shapes.

        ``view`` of a non-contiguous tensor raises RuntimeError.
        """
        t = self.draw_tensor(data, permuted=False, label="t")
        new = tuple(data.draw(shapes(self.max_dims, self.max_size + 1), label="new shape"))
        assume(prod(new) != t.size)
        with pytest.raises(IndexingError) as err:
            t.view(*new)
        assert str(t.shape) in str(err.value), err.value
        assert str(new) in str(err.value), err.value
        p = self.draw_tensor(data, permuted=True, label="permuted")
        if not p.is_contiguous():
            with pytest.raises(RuntimeError, match="contiguous"):
                p.view(p.size)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_error_matmul_shape_mismatch(self, data: st.DataObject) -> None:
        """``@`` with different inner dims or clashing batches: IndexingError naming both."""
        m, n, k, p = (self.draw_size(data, s) for s in "mnkp")
        k = k if k != n else n + 1
        batch = tuple(data.draw(shapes(2, self.max_size, min_dims=0), label="batch"))
        cases = [((m, n), (k, p)), ((*batch, m, n), (k, p)), ((m, n), (*batch, k, p))]
        b1, b2 = data.draw(
            st.lists(st.integers(2, 4), min_size=2, max_size=2, unique=True), label="batches"
        )
        cases.append(((b1, m, n), (b2, n, p)))
        for shape_a, shape_b in cases:
            a = self.draw_tensor(data, shape_a, label="a")
            b = self.draw_tensor(data, shape_b, label="b")
            for op in (operator.matmul, self.backend.matrix_multiply):
                with pytest.raises(IndexingError) as err:
                    op(a, b)
                assert str(shape_a) in str(err.value), err.value
                assert str(shape_b) in str(err.value), err.value

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_error_wrong_dtypes(self, data: st.DataObject) -> None:
        """Non-numeric operands, complex or text arrays, non-int sizes: TypeError.

        The message names what was given.
        """
        t = self.draw_tensor(data, label="t")
        other = data.draw(
            st.sampled_from(["a", None, 1j, [1.0], np.array([1.0 + 1j])]), label="operand"
        )
        ops: list[Callable[[Any, Any], Any]] = [*ARITHMETIC, operator.matmul]
        for op in ops:
            with pytest.raises(TypeError):
                op(t, other)
        bad = data.draw(
            st.sampled_from(
                [np.array([1.0 + 2j]), np.array(["1.0"]), np.array([None], dtype=object)]
            ),
            label="array",
        )
        with pytest.raises(TypeError, match="dtype"):
            from_numpy(bad, backend=self.backend)
        size: Any = data.draw(st.sampled_from([2.5, True, "2", None]), label="size")
        with pytest.raises(TypeError, match="int"):
            t.zeros((size, 2))
        with pytest.raises(TypeError, match="int"):
            t.view(size)

    @pytest.mark.task2_4
    @given(data=st.data())
    def test_error_backward_gradient_of_the_wrong_shape(self, data: st.DataObject) -> None:
        """``backward(g)`` with ``g`` not broadcasting *to* the output: IndexingError.

        The message names both shapes, and no gradient is accumulated.
        """
        x = self.draw_tensor(data, grad=True, permuted=False, label="x").requires_grad_()
        y = x * 2.0
        extra = data.draw(st.integers(2, 3), label="extra leading size")
        if data.draw(st.booleans(), label="larger"):
            g_shape = (extra, *y.shape)
        else:
            g_shape = data.draw(
                non_broadcastable_shapes(self.grad_max_dims, self.grad_max_size), label="pair"
            )[0]
            assume(not broadcasts_to(g_shape, y.shape))
        g = self.draw_tensor(data, g_shape, label="g")
        with pytest.raises(IndexingError) as err:
            y.backward(g)
        assert str(g_shape) in str(err.value), err.value
        assert str(y.shape) in str(err.value), err.value
        assert x.grad is None

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_error_map_into_an_output_it_does_not_broadcast_to(self, data: st.DataObject) -> None:
        """``map(fn)(a, out)`` needs ``a`` to broadcast to ``out``: else IndexingError.

        The message names both shapes, and ``out`` is left as it was.
        """
        out = self.draw_tensor(data, permuted=False, label="out")
        extra = data.draw(st.integers(2, 3), label="extra leading size")
        a = self.draw_tensor(data, (extra, *out.shape), label="a")
        before = out.to_numpy().copy()
        with pytest.raises(IndexingError) as err:
            self.backend.neg_map(a, out)
        assert str(a.shape) in str(err.value), err.value
        assert str(out.shape) in str(err.value), err.value
        np.testing.assert_array_equal(out.to_numpy(), before)

    def _draw_broadcasting_to(
        self, data: st.DataObject, shape: tuple[int, ...], label: str
    ) -> Tensor:
        """A tensor whose shape broadcasts to ``shape`` (``shapes_broadcasting_to``)."""
        own = data.draw(shapes_broadcasting_to(shape), label=f"{label}'s shape")
        return self.draw_tensor(data, own, label=label)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_zip_into_writes_the_callers_tensor(self, data: st.DataObject) -> None:
        """``zip(fn)(a, b, out)`` writes ``fn`` of the broadcast pair into ``out``'s storage.

        ``out`` may be contiguous or strided, and ``a`` may be ``out`` itself (``x += y``).
        The version moves once; a pair that does not broadcast to ``out`` raises an
        IndexingError naming the shapes and leaves ``out`` (and its version) as they were.
        """
        out = self.draw_tensor(data, label="out")
        itself = data.draw(st.booleans(), label="a is out")
        a = out if itself else self._draw_broadcasting_to(data, out.shape, "a")
        b = self._draw_broadcasting_to(data, out.shape, "b")
        expected = np.broadcast_to(a.to_numpy() + b.to_numpy(), out.shape).copy()
        storage, before = out.tensor_data.storage, out.version
        assert self.backend.add_zip(a, b, out) is out
        np.testing.assert_array_equal(out.to_numpy(), expected)
        assert out.tensor_data.storage is storage
        assert out.version == before + 1
        extra = data.draw(st.integers(2, 3), label="extra leading size")
        wide = self.draw_tensor(data, (extra, *out.shape), label="wide")
        with pytest.raises(IndexingError) as err:
            self.backend.mul_zip(out, wide, out)
        assert str(wide.shape) in str(err.value), err.value
        assert str(out.shape) in str(err.value), err.value
        np.testing.assert_array_equal(out.to_numpy(), expected)
        assert out.version == before + 1

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_in_place_arithmetic_equals_the_operation_out_of_place(
        self, data: st.DataObject
    ) -> None:
        """``t += y``, ``t.sub_(y, alpha=a)`` and the others: ``t op a * y``, bit for bit.

        Into ``t``'s own storage (a zip straight into a contiguous ``t``; a copy of the
        result into a strided one), its version moved once, for an operand of ``t``'s
        shape, one that broadcasts to it, a number, or ``t`` itself and its transpose
        (which overlap ``t``: they must be read before ``t`` is written).
        """
        t = self.draw_tensor(data, label="t")
        kind = data.draw(
            st.sampled_from(["tensor", "number", "itself", "transpose"]), label="operand"
        )
        other: Any
        if kind == "tensor":
            other = self._draw_broadcasting_to(data, t.shape, "other")
        elif kind == "number":
            other = data.draw(small_floats, label="number")
        elif kind == "itself":
            other = t
        else:
            side = data.draw(st.integers(1, 3), label="side")
            t = self.draw_tensor(data, (side, side), label="square t")
            other = t.permute(1, 0)
        form = data.draw(st.sampled_from(list(_IN_PLACE_FORMS)), label="form")
        alpha = 1.0
        if form in ("add_", "sub_"):
            alpha = data.draw(st.sampled_from([1.0, 2.0, -0.5, 0.1]), label="alpha")
        compute, write = _IN_PLACE_FORMS[form]
        expected = compute(t, other * alpha if alpha != 1.0 else other).to_numpy()
        storage, before = t.tensor_data.storage, t.version
        if write is not None:
            result = write(t, other)
        elif form in ("add_", "sub_"):
            result = getattr(t, form)(other, alpha=alpha)
        else:
            result = getattr(t, form)(other)
        assert result is t
        np.testing.assert_array_equal(t.to_numpy(), expected)
        assert t.tensor_data.storage is storage
        assert t.version == before + 1

    @pytest.mark.task2_3
    def test_in_place_arithmetic_where_elements_share_memory_reads_the_old_values(self) -> None:
        """A view whose rows overlap (shape (3, 2), strides (1, 1)): ``t += 1`` is ``old + 1``.

        Each element is computed from the values before the write; a zip straight into
        ``t`` would add to a location two elements share twice.
        """
        t = Tensor(TensorData(np.arange(1.0, 5.0), (3, 2), (1, 1)), backend=self.backend)
        old = t.to_numpy().copy()  # (a view of the storage on a host backend)
        t += 1.0
        np.testing.assert_array_equal(t.to_numpy(), old + 1.0)
        t.mul_(t.detach().contiguous())  # an operand of the old values, in its own buffer
        np.testing.assert_array_equal(t.to_numpy(), (old + 1.0) ** 2)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_error_numpy_operands_on_either_side(self, data: st.DataObject) -> None:
        """A numpy array operand raises the same TypeError on either side of an operator.

        ``array + t`` must not turn ``t`` into an array and drop its graph (PyTorch takes no
        ndarray operands either); a numpy scalar is a number and gives a Tensor with history.
        """
        t = self.draw_tensor(data, grad=True, label="t").requires_grad_()
        arr = data.draw(
            st.sampled_from(["same shape", "0-d", "1-element"]).map(
                lambda kind: {
                    "same shape": np.ones(t.shape),
                    "0-d": np.array(2.0),
                    "1-element": np.array([2.0]),
                }[kind]
            ),
            label="array",
        )
        before = t.to_numpy().copy()
        ops: list[Callable[[Any, Any], Any]] = [*ARITHMETIC, operator.matmul, *COMPARISONS]
        for op in ops:
            for left, right in ((t, arr), (arr, t)):
                with pytest.raises(TypeError, match="ndarray") as err:
                    op(left, right)
                assert "\n" not in str(err.value), err.value
        np.testing.assert_array_equal(t.to_numpy(), before)
        assert t.grad is None
        x = data.draw(small_floats.filter(lambda v: v != 0.0), label="numpy scalar")
        for op, ref in ((operator.add, np.add), (operator.mul, np.multiply)):
            for out, expected in (
                (op(np.float64(x), t), ref(x, before)),
                (op(t, np.float64(x)), ref(before, x)),
            ):
                assert isinstance(out, Tensor)
                assert out.history is not None
                assert_close(out, expected)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_zero_dim_tensors(self, data: st.DataObject) -> None:
        """0-d tensors (shape ``()``) as PyTorch: reductions over dim 0 or -1, others refused.

        ``from_numpy`` of a 0-d array gives one; ``sum/mean/max(dim)`` keep shape ``()`` and
        pass the gradient back; any other dim raises IndexingError saying the tensor is 0-d.
        """
        x = data.draw(small_floats, label="value")
        z = from_numpy(np.array(x), backend=self.backend).requires_grad_()
        assert z.shape == ()
        assert z.item() == x
        assert self.backend.ops.is_storage(z.tuple()[0])
        dim = data.draw(st.sampled_from([0, -1]), label="dim")
        top = z.max(dim)
        assert isinstance(top, MaxResult)
        assert top.indices.shape == ()
        for name, got in (("sum", z.sum(dim)), ("mean", z.mean(dim)), ("max", top.values)):
            assert got.shape == (), name
            assert got.item() == x, name
        z.sum(dim).backward()
        assert z.grad is not None
        assert z.grad.shape == ()
        assert z.grad.item() == 1.0
        w = self.draw_tensor(data, label="w")
        assert_close(z.detach() * w, x * w.to_numpy())
        assert (w + z.detach()).shape == w.shape
        bad: Any = data.draw(
            st.one_of(st.integers(1, 4), st.integers(-4, -2), st.sampled_from([0.0, "0", True])),
            label="bad dim",
        )
        calls: list[Callable[[], Any]] = [
            lambda: z.sum(bad),
            lambda: z.mean(bad),
            lambda: z.all(bad),
            lambda: z.max(bad),
            lambda: z.size(bad),
        ]
        for call in calls:
            with pytest.raises(IndexingError, match="dim") as err:
                call()
            assert "0-d" in str(err.value) or "int" in str(err.value), err.value
        with pytest.raises(IndexingError, match="0-d"):
            z.size(0)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_error_non_numeric_values(self, data: st.DataObject) -> None:
        """A value that is not a number: TypeError naming its type, nothing written.

        Covers ``t[i, j] = v``, ``t[i] = v`` (a view), ``backward(v)`` and ``@ v``.
        """
        t = self.draw_tensor(data, permuted=False, label="t")
        value: Any = data.draw(
            st.sampled_from(["x", "1.0", None, b"1", 1j, [1.0], {"a": 1.0}, object()]),
            label="value",
        )
        kind = type(value).__name__
        before = t.to_numpy().copy()
        element = (0,) * t.dims
        with pytest.raises(TypeError, match=f"value.*{kind}"):
            t[element] = value
        with pytest.raises(TypeError, match=f"value.*{kind}"):
            t[0] = value
        np.testing.assert_array_equal(t.to_numpy(), before)
        assert t.version == 0
        x = self.draw_tensor(data, grad=True, label="x").requires_grad_()
        if value is not None:  # backward(None) is backward(): no gradient given
            with pytest.raises(TypeError, match=f"grad_output.*{kind}"):
                (x * 2.0).backward(value)
            assert x.grad is None
        number = data.draw(st.sampled_from([2.0, 3, np.float64(1.5)]), label="number")
        for op in (operator.matmul, lambda a, b: operator.matmul(b, a)):
            with pytest.raises(TypeError, match=type(number).__name__):
                op(t, number)

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_error_absurd_shapes(self, data: st.DataObject) -> None:
        """More elements than memory can address: ValueError naming the shape and the count.

        Raised before anything is allocated, by ``zeros``, ``ones``, ``rand`` and the
        tensor's ``zeros`` alike.
        """
        shape = tuple(
            data.draw(
                st.lists(st.integers(2, 2**64), min_size=1, max_size=4).filter(
                    lambda s: prod(s) >= 2**60
                ),
                label="shape",
            )
        )
        t = self.draw_tensor(data, label="t")
        calls: list[Callable[[], Any]] = [
            lambda: zeros(shape, backend=self.backend),
            lambda: ones(shape, backend=self.backend),
            lambda: rand(shape, backend=self.backend),
            lambda: t.zeros(shape),
        ]
        for call in calls:
            with pytest.raises(ValueError, match="elements") as err:
                call()
            assert str(shape) in str(err.value), err.value
            assert str(prod(shape)) in str(err.value), err.value
        seed: Any = data.draw(st.sampled_from(["x", 1.5, [1], b"1"]), label="seed")
        with pytest.raises(TypeError, match="seed"):
            rand((2,), backend=self.backend, seed=seed)

    # ------------------------------------------------------------------ backends by what they are
    @pytest.mark.task2_3
    def test_backend_rebuilt_from_its_ops_is_the_same_backend(self) -> None:
        """``TensorBackend(ops)`` equals the named backend: same hash, tensors combine."""
        again = TensorBackend(self.backend.ops)
        assert again == self.backend
        assert hash(again) == hash(self.backend)
        assert len({again, self.backend}) == 1
        a = self.const(np.ones((2, 2)))
        b = from_numpy(np.full((2, 2), 3.0), backend=again)
        assert_close(a + b, np.full((2, 2), 4.0))
        assert_close(b * a, np.full((2, 2), 3.0))
        assert b.to(self.backend) is b
        assert self.backend != TensorBackend(type("OtherOps", (self.backend.ops,), {}))

    # ------------------------------------------------------------------ IEEE and PyTorch edges
    @pytest.mark.task2_3
    # A simulated GPU divides numpy scalars, which warn where IEEE division overflows.
    @pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
    def test_division_by_subnormals_and_by_zero_as_pytorch(self) -> None:
        """``a / b`` divides: ``a * (1 / b)`` overflowed for a subnormal ``b``.

        ``2e-309 / 1e-309`` is 2 (it was inf), ``0 / 5e-324`` is 0 (it was NaN).
        """
        a = self.const([2e-309, 0.0, 1.0, -1.0, 0.0, 6.0, 1e308])
        b = self.const([1e-309, 5e-324, 0.0, 0.0, 0.0, -3.0, 1e-308])
        expected = [2e-309 / 1e-309, 0.0, np.inf, -np.inf, np.nan, -2.0, np.inf]
        got = (a / b).to_numpy()
        np.testing.assert_array_equal(got, expected)
        assert abs(got[0] - 2.0) < 1e-10
        np.testing.assert_array_equal((1.0 / b).to_numpy()[:2], [1.0 / 1e-309, np.inf])
        np.testing.assert_array_equal((a / 2.0).to_numpy(), a.to_numpy() / 2.0)
        torch = pytest.importorskip("torch")
        theirs = torch.tensor(a.to_numpy()) / torch.tensor(b.to_numpy())
        np.testing.assert_array_equal(got, theirs.numpy())

    @pytest.mark.task2_3
    @given(data=st.data())
    def test_reciprocal_forward(self, data: st.DataObject) -> None:
        """``t.reciprocal()`` (the course's ``Inv``) is ``1 / t`` elementwise."""
        t = self.draw_tensor(data, elements=small_floats.filter(lambda v: abs(v) > 1e-3))
        out = t.reciprocal()
        assert out.shape == t.shape
        assert_close(out, 1.0 / t.to_numpy())

    @pytest.mark.task2_4
    @given(data=st.data())
    def test_reciprocal_backward(self, data: st.DataObject) -> None:
        """The gradient of ``t.reciprocal()``, ``-g / t**2``, by central differences."""
        t = self.draw_tensor(data, grad=True, elements=st.floats(0.5, 100.0))
        grad_check(lambda x: x.reciprocal(), t)

    @pytest.mark.task2_4
    def test_division_gradient_by_central_differences(self) -> None:
        """The gradients of ``a / b``: ``g / b`` and ``-g * (a / b) / b`` (PyTorch's)."""
        a = self.const([[1.5, -2.0, 0.25], [3.0, 1.0, -0.5]])
        b = self.const([[2.0], [-4.0]])
        grad_check(lambda x, y: x / y, a, b, samples=None)
        grad_check(lambda y: 3.0 / y, b, samples=None)

    @pytest.mark.task2_3
    def test_zero_dim_with_a_number_or_another_zero_dim_stays_zero_dim(self) -> None:
        """As PyTorch: a Python number is 0-d, so ``zeros(()) + 1`` has shape ``()``.

        (A number became shape ``(1,)``, so every operator gave ``(1,)``.)
        """
        z = from_numpy(np.array(2.0), backend=self.backend)
        results = {
            "+": z + 1,
            "radd": 1 + z,
            "*": z * 3,
            "/": z / 4,
            "rdiv": 4 / z,
            "-": z - 1,
            "rsub": 1 - z,
            "<": z < 3,
            ">": z > 3,
            "==": z == 2,
            "**": z**2,
            "0-d + 0-d": z + z,
        }
        for name, got in results.items():
            assert got.shape == (), name
        assert [results[k].item() for k in ("+", "*", "/", "rdiv", "-", "rsub", "<", ">")] == [
            3.0, 6.0, 0.5, 2.0, 1.0, -1.0, 1.0, 0.0,
        ]  # fmt: skip
        assert (z + self.const([1.0])).shape == (1,)
        w = self.const([[1.0, 2.0]])
        assert (w + 1).shape == (1, 2)
        g = z.detach().requires_grad_()
        (g * 3 + 1).backward()
        assert g.grad is not None
        assert g.grad.shape == ()
        assert g.grad.item() == 3.0
        torch = pytest.importorskip("torch")
        tz = torch.tensor(2.0, dtype=torch.float64)
        assert (tz + 1).shape == (tz < 3).shape == (1 - tz).shape == torch.Size([])

    @pytest.mark.task2_3
    def test_power_of_minus_infinity_as_ieee(self) -> None:
        """``(-inf) ** p`` for a ``p`` that is not an integer is ``inf ** p``, as IEEE pow.

        (It was NaN: the power was ``exp(p * log(a))`` and ``log(-inf)`` is NaN.)
        """
        x = self.const([-np.inf, -4.0, 4.0, np.inf, 0.0])
        expected = {
            1.5: [np.inf, np.nan, 8.0, np.inf, 0.0],
            2.5: [np.inf, np.nan, 32.0, np.inf, 0.0],
            -1.5: [0.0, np.nan, 0.125, 0.0, np.inf],
            3.0: [-np.inf, -64.0, 64.0, np.inf, 0.0],
        }
        for p, want in expected.items():
            np.testing.assert_allclose((x**p).to_numpy(), want, rtol=1e-12, err_msg=str(p))
        torch = pytest.importorskip("torch")
        for p in expected:
            theirs = torch.tensor(x.to_numpy()) ** p
            np.testing.assert_allclose((x**p).to_numpy(), theirs.numpy(), rtol=1e-12)

    # A simulated GPU computes on numpy scalars, which warn at inf * 0 and 1 / 0.
    @pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
    @pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
    @pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
    @pytest.mark.task2_3
    @given(data=st.data())
    def test_power_follows_ieee_pow(self, data: st.DataObject) -> None:
        """``t ** p`` is C's ``pow`` as ``torch.pow`` computes it (``pow_reference``).

        IEEE's special values included: ``x ** 0 == 1`` and ``1 ** p == 1`` even for NaN,
        ``(-1) ** ±inf == 1``, ``|x| < 1`` to ``inf`` is 0, ``±0`` to a negative power is
        ``±inf``, a negative base to a non-integer power NaN. (``[-2, -1, -0.5, 1] ** inf``
        was all NaN, and so was ``t ** nan`` at 1: the power was ``exp(p * log(t))``.)
        """
        specials = st.sampled_from(POW_SPECIALS)
        values = st.lists(specials | st.floats(-10, 10), min_size=1, max_size=6)
        x = data.draw(values, label="x")
        p = data.draw(specials | st.floats(-6, 6) | st.integers(-6, 6).map(float), label="p")
        assert_same_floats(self.const(x) ** p, pow_reference(x, p))

    # A simulated GPU computes on numpy scalars, which warn at inf * 0 and 1 / 0.
    @pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
    @pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
    @pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
    @pytest.mark.task2_4
    def test_power_gradient_at_ieee_special_values_as_pytorch(self) -> None:
        """``g * (p * x ** (p - 1))``, 0 for ``p == 0`` even at NaN: ``torch.pow``'s backward."""
        x = [-np.inf, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, np.inf, np.nan]
        exponents = (0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5, 1.5, -1.5, np.inf, -np.inf, np.nan)
        torch = pytest.importorskip("torch", reason="PyTorch is the reference of the gradients")
        for p in exponents:
            t = self.const(x).requires_grad_()
            out = t**p
            out.sum().backward()
            tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            theirs = tx**p
            theirs.sum().backward()
            assert_same_floats(out, theirs.detach().numpy())
            assert t.grad is not None
            assert_same_floats(t.grad, tx.grad.numpy(), rtol=1e-14, signed_zeros=False)

    # A simulated GPU computes on numpy scalars, which warn at inf * 0 and 1 / 0.
    @pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
    @pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
    @pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
    @pytest.mark.task2_4
    def test_a_number_to_a_tensor_power_as_pytorch(self) -> None:
        """``RPow.apply(t, base)``, ``torch.pow(base, t)``: values and the exponent's gradient.

        ``1 ** t`` is 1 for every ``t``, NaN included (with gradient 0); a negative base is
        NaN at a non-integer ``t``; at base 0 the gradient is 0 where ``t >= 0`` and
        ``-inf`` below, PyTorch's mask.
        """
        y = [-np.inf, -3.0, -1.5, -0.0, 0.0, 1.5, 3.0, np.inf, np.nan]
        bases = (1.0, 2.0, 0.5, -1.0, -2.0, 0.0, -0.0)
        for base in bases:
            with np.errstate(all="ignore"):
                expected = np.power(base, np.array(y))
            assert_same_floats(RPow.apply(self.const(y), base), expected)
        torch = pytest.importorskip("torch", reason="PyTorch is the reference of the gradients")
        for base in bases:
            t = self.const(y).requires_grad_()
            out = RPow.apply(t, base)
            out.sum().backward()
            ty = torch.tensor(y, dtype=torch.float64, requires_grad=True)
            theirs = torch.pow(base, ty)
            theirs.sum().backward()
            assert_same_floats(out, theirs.detach().numpy())
            assert t.grad is not None
            assert_same_floats(t.grad, ty.grad.numpy(), rtol=1e-14, signed_zeros=False)

    @pytest.mark.task2_4
    def test_max_with_a_nan_takes_the_nan_as_pytorch(self) -> None:
        """A NaN is the maximum: its index, ``argmax``'s one-hot, and the gradient go to it.

        (``max(1)`` of ``[[1, nan, 3]]`` gave index 3, out of range, and a zero gradient;
        ``max()`` gave an all-NaN gradient.)
        """
        rows = [[1.0, np.nan, 3.0], [4.0, 6.0, 6.0]]
        x = self.const(rows).requires_grad_()
        result = x.max(1)
        assert isinstance(result, MaxResult)
        values, indices = result
        assert np.isnan(values.to_numpy()[0])
        assert values.to_numpy()[1] == 6.0
        assert indices.tolist() == [1.0, 1.0]
        values.sum().backward()
        assert x.grad is not None
        assert x.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]
        y = self.const([rows[0]]).requires_grad_()
        _whole_max(y).backward()
        assert y.grad is not None
        assert y.grad.tolist() == [[0.0, 1.0, 0.0]]
        two = self.const([[1.0, np.nan, 3.0, np.nan]]).requires_grad_()
        _whole_max(two).backward()
        assert two.grad is not None
        assert two.grad.tolist() == [[0.0, 0.5, 0.0, 0.5]]  # shared, as ties
        torch = pytest.importorskip("torch")
        tx = torch.tensor(rows, requires_grad=True, dtype=torch.float64)
        tv, ti = tx.max(1)
        tv.sum().backward()
        assert ti.tolist() == [1, 1]
        assert x.grad.tolist() == tx.grad.tolist()
        for ours, data in ((y, [rows[0]]), (two, [[1.0, np.nan, 3.0, np.nan]])):
            ty = torch.tensor(data, requires_grad=True, dtype=torch.float64)
            ty.max().backward()
            assert ours.grad is not None
            assert ours.grad.tolist() == ty.grad.tolist()

    @pytest.mark.task2_4
    def test_a_list_index_selects_rows_with_their_gradient(self) -> None:
        """``t[[i, j]]`` selects rows of the first dimension, as PyTorch and NumPy.

        (A list was read as a tuple: ``x[[0, 1]]`` of a (2, 3, 4) tensor was ``x[0, 1]``.)
        """
        values = np.arange(24.0).reshape(2, 3, 4)
        x = self.const(values)
        for key in ([0, 1], [1], [-1, 0, 0], [], ([1, 0], 2), ([0], slice(1, None))):
            got = x[key]
            np.testing.assert_array_equal(got.to_numpy(), values[key], err_msg=str(key))
        grad_check(lambda t: t[[1, 1, 0]] * t[[0, 1, 1]], x, samples=None)
        leaf = x.detach().requires_grad_()
        (leaf[[1, 1, 0]] * 2).sum().backward()
        assert leaf.grad is not None
        assert leaf.grad.to_numpy()[:, 0, 0].tolist() == [2.0, 4.0]
        with pytest.raises(IndexingError, match="out of range for dimension 0"):
            x[[2]]
        with pytest.raises(IndexingError, match="holds ints"):
            x[[True, False]]
        with pytest.raises(IndexingError, match="first entry only"):
            x[:, [0, 1]]
        target = self.const(np.zeros((3, 2)))
        target[[0, 2]] = self.const([1.0, 2.0])
        target[[1]] = 7.0
        assert target.tolist() == [[1.0, 2.0], [7.0, 7.0], [1.0, 2.0]]
        torch = pytest.importorskip("torch")
        tx = torch.tensor(values, requires_grad=True)
        (tx[[1, 1, 0]] * 2).sum().backward()
        np.testing.assert_array_equal(leaf.grad.to_numpy(), tx.grad.numpy())
        for key in ([0, 1], [1], [-1, 0, 0], ([1, 0], 2)):
            np.testing.assert_array_equal(x[key].to_numpy(), tx.detach()[key].numpy())

    @pytest.mark.task2_3
    def test_tensors_deepcopy_and_pickle_on_this_backend(self) -> None:
        """Copies and pickles keep the backend (by name) and compute on it like the original."""
        import copy
        import pickle

        x = self.const([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        for original in (x.requires_grad_(), x.detach().permute(1, 0)):  # a leaf, a layout
            for twin in (copy.deepcopy(original), pickle.loads(pickle.dumps(original))):
                assert twin.backend is self.backend
                assert self.backend.ops.is_storage(twin.tuple()[0])
                assert twin.shape == original.shape
                assert twin.requires_grad == original.requires_grad
                assert_close(twin * 2 + 1, original.detach().to_numpy() * 2 + 1)
        with pytest.raises(RuntimeError, match="Only Tensors created explicitly"):
            copy.deepcopy(x * 2)
