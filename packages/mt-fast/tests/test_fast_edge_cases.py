"""Edge cases of the fast kernels that the property suite does not draw.

Every case is compared with ``SimpleBackend``, the reference backend.
"""

from __future__ import annotations

import numpy as np
import pytest

from minitorch.fast import FastBackend, PlainFastBackend
from minitorch.tensor import SimpleBackend, Tensor, TensorBackend, zeros

BOTH = pytest.mark.parametrize("be", [FastBackend, PlainFastBackend], ids=["tuned", "plain"])

EMPTY_REDUCTIONS = [((0, 3), 0), ((2, 0, 3), 1), ((3, 0), 1), ((0, 3), 1), ((4, 0), 0)]


def _reduce(backend: TensorBackend, shape: tuple[int, ...], dim: int, how: str) -> Tensor:
    t = zeros(shape, backend=backend)
    if how == "max":
        return backend.max_reduce(t, dim)
    if how == "prod":
        return backend.mul_reduce(t, dim)
    return getattr(t, how)(dim)  # type: ignore[no-any-return]


@pytest.mark.task3_1
@BOTH
@pytest.mark.parametrize(("shape", "dim"), EMPTY_REDUCTIONS)
@pytest.mark.parametrize("how", ["sum", "mean", "max", "prod"])
def test_reduce_over_a_zero_length_dimension(
    shape: tuple[int, ...], dim: int, how: str, be: TensorBackend
) -> None:
    expected = _reduce(SimpleBackend, shape, dim, how)
    got = _reduce(be, shape, dim, how)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.to_numpy(), expected.to_numpy())


@pytest.mark.task3_1
def test_reduce_over_a_zero_length_dimension_gives_start_values() -> None:
    # The values themselves, so the test does not only compare two backends.
    np.testing.assert_array_equal(zeros((0, 3), backend=FastBackend).sum(0).to_numpy(), [[0.0] * 3])
    got = FastBackend.max_reduce(zeros((2, 0, 3), backend=FastBackend), 1).to_numpy()
    np.testing.assert_array_equal(got, np.full((2, 1, 3), -np.inf))


@pytest.mark.task3_1
@BOTH
@pytest.mark.parametrize(("shape", "dim"), EMPTY_REDUCTIONS)
@pytest.mark.parametrize("how", ["sum", "mean"])
def test_backward_through_a_reduction_over_a_zero_length_dimension(
    shape: tuple[int, ...], dim: int, how: str, be: TensorBackend
) -> None:
    grads = []
    for backend in (SimpleBackend, be):
        t = zeros(shape, backend=backend).requires_grad_()
        getattr(t, how)(dim).sum().backward()
        assert t.grad is not None
        assert t.grad.shape == shape
        grads.append(t.grad.to_numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
