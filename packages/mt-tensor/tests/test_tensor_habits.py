"""PyTorch habits: each checked against hand-computed values, and against
PyTorch itself where it is installed (the ``torch`` tests skip otherwise)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitorch.operators import Parameter
from minitorch.tensor import (
    IndexingError,
    MaxResult,
    Size,
    Tensor,
    check_reduction_dim,
    from_numpy,
    grad_check,
    rand,
    seeded_rng,
    tensor,
    zeros,
)
from minitorch.tensor.testing import assert_close

M = np.array([[1.0, 5.0, 5.0, -2.0], [-3.0, 0.0, 3.0, 3.0], [2.0, -1.0, 4.0, 0.5]])
"""A 3 x 4 matrix with ties (5, 5 and 3, 3) and a zero, used throughout."""


def leaf(x: np.ndarray = M) -> Tensor:
    return from_numpy(x.copy(), requires_grad=True)


def torch_leaf(x: np.ndarray = M):  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


# ---------------------------------------------------------------------------------- size
@pytest.mark.task2_1
def test_size_is_the_element_count_and_callable_like_pytorch() -> None:
    t = leaf()
    assert t.size == 12
    assert t.numel() == 12  # the course's int
    assert t.size * 2 == 24
    assert list(range(t.size))[-1] == 11
    assert t.size() == (3, 4)
    assert isinstance(t.size(), Size)
    assert t.size().numel() == 12
    assert t.size(0) == 3
    assert t.size(1) == 4
    assert t.size(-1) == 4
    with pytest.raises(IndexingError, match="out of range"):
        t.size(2)


@pytest.mark.task2_1
def test_size_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = leaf(), torch.tensor(M)
    assert ours.size() == theirs.size()
    assert [ours.size(d) for d in (0, 1, -1)] == [theirs.size(d) for d in (0, 1, -1)]
    assert ours.numel() == theirs.numel()


# ------------------------------------------------------------------------ reshape, transpose
@pytest.mark.task2_3
def test_reshape_is_a_view_when_contiguous_and_a_copy_otherwise() -> None:
    t = from_numpy(M.copy())
    r = t.reshape(4, 3)
    assert r.shape == (4, 3)
    r[0, 0] = 100.0
    assert t[0, 0] == 100.0  # shares storage
    tt = t.permute(1, 0)
    c = tt.reshape(12)
    assert_close(c, np.array(t.to_numpy()).T.reshape(12))
    c[0] = -7.0
    assert t[0, 0] == 100.0  # a copy
    assert_close(t.reshape(-1, 6), t.to_numpy().reshape(2, 6))
    grad_check(lambda x: x.permute(1, 0).reshape(2, 6), leaf())


@pytest.mark.task2_3
def test_transpose_swaps_two_dims() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    t = from_numpy(x)
    assert_close(t.transpose(0, 2), x.transpose(2, 1, 0))
    assert_close(t.transpose(-1, 1), x.transpose(0, 2, 1))
    assert not t.transpose(0, 1).is_contiguous()
    grad_check(lambda a: a.transpose(0, 1) * 2.0, from_numpy(x))
    with pytest.raises(IndexingError):
        t.transpose(0, 3)


@pytest.mark.task2_3
def test_reshape_transpose_tolist_numpy_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.arange(24.0).reshape(2, 3, 4)
    ours, theirs = from_numpy(x), torch.tensor(x)
    assert ours.transpose(0, 2).tolist() == theirs.transpose(0, 2).tolist()
    assert (
        ours.transpose(1, 2).reshape(6, 4).tolist() == theirs.transpose(1, 2).reshape(6, 4).tolist()
    )
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.task2_3
def test_tolist_and_numpy() -> None:
    t = tensor([[1, 2], [3, 4]])
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert t.permute(1, 0).tolist() == [[1.0, 3.0], [2.0, 4.0]]
    arr = t.numpy()
    arr[0, 0] = 9.0  # host storage is shared, as torch's numpy()
    assert t[0, 0] == 9.0


# ---------------------------------------------------------------------------------- abs
@pytest.mark.task2_4
def test_abs_and_its_gradient_sign_with_zero_at_zero() -> None:
    x = leaf(np.array([-2.0, 0.0, 3.0]))
    y = abs(x)
    assert y.tolist() == [2.0, 0.0, 3.0]
    assert x.abs().tolist() == [2.0, 0.0, 3.0]
    y.sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [-1.0, 0.0, 1.0]
    grad_check(lambda a: a.abs(), leaf(np.array([-1.5, 0.7, 2.0])))


@pytest.mark.task2_4
def test_abs_matches_torch() -> None:
    ours, theirs = leaf(), torch_leaf()
    (ours.abs() * ours).sum().backward()
    (theirs.abs() * theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.to_numpy(), theirs.grad.numpy())


# ---------------------------------------------------------------------------------- max
@pytest.mark.task2_4
def test_max_over_a_dim_returns_values_and_first_indices() -> None:
    t = leaf()
    out = t.max(1)
    assert isinstance(out, MaxResult)
    values, indices = out
    assert values.tolist() == [5.0, 3.0, 4.0]
    assert values.shape == (3,)
    assert indices.tolist() == [1.0, 2.0, 2.0]  # the first of tied maxima
    assert out.values is values
    assert out.indices is indices
    kept = t.max(0, keepdim=True)
    assert kept.values.shape == (1, 4)
    assert kept.values.tolist() == [[2.0, 5.0, 5.0, 3.0]]
    assert kept.indices.tolist() == [[2.0, 0.0, 0.0, 1.0]]
    values.sum().backward()
    expected = np.zeros_like(M)
    expected[0, 1] = expected[1, 2] = expected[2, 2] = 1.0
    assert t.grad is not None
    np.testing.assert_array_equal(t.grad.to_numpy(), expected)


@pytest.mark.task2_4
def test_max_of_everything_shares_the_gradient_among_ties() -> None:
    t = leaf(np.array([[1.0, 5.0], [5.0, 2.0]]))
    m = t.max()
    assert m.shape == (1,)
    assert m.item() == 5.0
    m.backward()
    assert t.grad is not None
    assert t.grad.tolist() == [[0.0, 0.5], [0.5, 0.0]]


@pytest.mark.task2_4
@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=6, max_size=6), st.integers(0, 1))
def test_max_gradient_by_central_differences(values: list[int], dim: int) -> None:
    # Distinct values (no ties): the maximum is differentiable there.
    x = np.array(values, dtype=np.float64).reshape(2, 3) + np.arange(6).reshape(2, 3) * 0.1
    grad_check(lambda a: a.max(dim).values, from_numpy(x), samples=None)


@pytest.mark.task2_4
def test_max_matches_torch_including_ties() -> None:
    torch = pytest.importorskip("torch")
    for dim in (0, 1, -1):
        ours, theirs = leaf(), torch_leaf()
        o, r = ours.max(dim), theirs.max(dim)
        np.testing.assert_array_equal(o.values.to_numpy(), r.values.detach().numpy())
        np.testing.assert_array_equal(o.indices.to_numpy(), r.indices.numpy())
        weights = np.arange(1.0, 1.0 + r.values.numel()).reshape(tuple(r.values.shape))
        (o.values * from_numpy(weights)).sum().backward()
        (r.values * torch.tensor(weights)).sum().backward()
        np.testing.assert_array_equal(ours.grad.to_numpy(), theirs.grad.numpy())
    ours, theirs = leaf(), torch_leaf()
    ours.max().backward()
    theirs.max().backward()
    np.testing.assert_allclose(ours.grad.to_numpy(), theirs.grad.numpy())


def test_max_over_an_empty_dim_raises_naming_it() -> None:
    # As PyTorch's "max(): Expected reduction dim 1 to have non-zero size" (an IndexError).
    t = tensor([[], []])
    assert t.shape == (2, 0)
    for dim in (1, -1):
        with pytest.raises(IndexingError, match=r"^max\(\): Expected reduction dim 1 to have"):
            t.max(dim)
    with pytest.raises(IndexingError, match=r"^max\(\): the tensor of shape \(2, 0\) has no"):
        t.max()


def test_check_reduction_dim() -> None:
    assert check_reduction_dim("argmax", -1, (2, 3)) == 1
    assert check_reduction_dim("argmax", None, (2, 3)) is None
    with pytest.raises(IndexingError, match=r"^argmax\(\): Expected reduction dim 0 to have"):
        check_reduction_dim("argmax", 0, (0, 3))
    with pytest.raises(IndexingError, match="out of range"):  # check_dim's checks come first
        check_reduction_dim("argmax", 2, (2, 3))


# ---------------------------------------------------------------------------------- sum
@pytest.mark.task2_3
def test_sum_of_everything_is_one_element_as_in_the_course() -> None:
    # PyTorch returns a 0-dim tensor; here (as in the course) shape (1,): item(), float(),
    # backward() and arithmetic behave the same.
    t = leaf()
    s = t.sum()
    assert s.shape == (1,)
    assert s.item() == pytest.approx(M.sum())
    assert float(s) == pytest.approx(M.sum())
    s.backward()
    assert t.grad is not None
    assert t.grad.tolist() == np.ones_like(M).tolist()


@pytest.mark.task2_3
def test_sum_matches_torch() -> None:
    ours, theirs = leaf(), torch_leaf()
    assert ours.sum().item() == pytest.approx(theirs.sum().item())
    assert ours.sum().numel() == theirs.sum().numel() == 1
    assert ours.sum(1).tolist() == theirs.sum(1, keepdim=True).tolist()


# ---------------------------------------------------------------------------------- **
@pytest.mark.task2_4
def test_pow_values_by_hand() -> None:
    x = tensor([-2.0, 0.0, 3.0])
    assert (x**2).tolist() == [4.0, 0.0, 9.0]
    assert (x**3).tolist() == [-8.0, 0.0, 27.0]
    assert (x**0).tolist() == [1.0, 1.0, 1.0]
    assert (x**-1).tolist() == [-0.5, math.inf, 1 / 3]
    half = (x**0.5).tolist()
    assert math.isnan(half[0])
    assert half[1:] == [0.0, math.sqrt(3.0)]
    assert (x**1.5).tolist()[1:] == pytest.approx([0.0, 3.0**1.5])
    assert (2**x).tolist() == pytest.approx([0.25, 1.0, 8.0])
    assert ((-2) ** x).tolist() == [0.25, 1.0, -8.0]  # torch.pow(-2, x): C's pow
    assert math.isnan(((-2) ** tensor([0.5])).item())
    with pytest.raises(TypeError, match="tensor \\*\\* tensor"):
        x**x


@pytest.mark.task2_4
@pytest.mark.parametrize("p", [2, 3, -1, 0.5, 1.5, -2.5, 0])
def test_pow_gradient_by_central_differences(p: float) -> None:
    grad_check(lambda a: a**p, from_numpy(np.array([[0.5, 1.3], [2.0, 3.1]])), samples=None)
    grad_check(lambda a: p**a if p > 0 else a * 1.0, from_numpy(np.array([0.5, -1.0])))


@pytest.mark.task2_4
def test_pow_gradient_at_a_negative_base_with_an_integer_exponent() -> None:
    x = leaf(np.array([-2.0, -0.5]))
    (x**3).sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [12.0, 0.75]


@pytest.mark.task2_4
def test_pow_matches_torch() -> None:
    for p in (2, 3, -1, 0.5, 0, 2.5):
        ours, theirs = leaf(), torch_leaf()
        a, b = ours**p, theirs**p
        np.testing.assert_allclose(a.to_numpy(), b.detach().numpy(), equal_nan=True)
        a.sum().backward()
        b.sum().backward()
        np.testing.assert_allclose(ours.grad.to_numpy(), theirs.grad.numpy(), equal_nan=True)
    ours, theirs = leaf(), torch_leaf()
    (3.0**ours).sum().backward()
    (3.0**theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.to_numpy(), theirs.grad.numpy())


# ---------------------------------------------------------------------------------- indexing
@pytest.mark.task2_1
def test_a_full_integer_index_is_a_float_and_a_partial_one_a_view() -> None:
    t = from_numpy(M.copy())
    assert t[1, 2] == 3.0
    assert isinstance(t[1, 2], float)
    row = t[1]
    assert isinstance(row, Tensor)
    assert row.shape == (4,)
    assert row.tolist() == [-3.0, 0.0, 3.0, 3.0]
    row[0] = 42.0  # a view: writes show in the tensor
    assert t[1, 0] == 42.0
    assert t[-1].tolist() == M[-1].tolist()
    assert tensor([1.0, 2.0])[1] == 2.0  # 1-D: a float, as in the course


@pytest.mark.task2_1
def test_slices_and_steps_are_views() -> None:
    x = np.arange(24.0).reshape(4, 6)
    t = from_numpy(x.copy())
    for key in [
        (slice(0, 2),),
        (slice(None), 1),
        (slice(1, None, 2), slice(None, None, 3)),
        (Ellipsis, 2),
        (2, Ellipsis),
        (slice(-3, -1), slice(4, 100)),
        (slice(3, 1),),
    ]:
        assert_close(t[key], x[key])
    part = t[:, 1]
    assert part.shape == (4,)
    t[0, 1] = -5.0
    assert part[0] == -5.0
    with pytest.raises(ValueError, match="step must be positive"):
        t[::-1]
    with pytest.raises(IndexingError, match=r"\(4, 6\)"):
        t[4]
    with pytest.raises(IndexingError, match="3 entries"):
        t[0, 0, 0]


@pytest.mark.task2_3
def test_writing_into_views() -> None:
    t = from_numpy(np.zeros((3, 3)))
    t[1] = 4.0
    t[:, 0] = tensor([7.0, 8.0, 9.0])
    assert t.tolist() == [[7.0, 0.0, 0.0], [8.0, 4.0, 4.0], [9.0, 0.0, 0.0]]
    with pytest.raises(IndexingError):
        t[0] = tensor([1.0, 2.0])


@pytest.mark.task2_4
def test_gradients_flow_through_indexing() -> None:
    t = leaf()
    (t[1] * 2.0).sum().backward()
    expected = np.zeros_like(M)
    expected[1] = 2.0
    assert t.grad is not None
    np.testing.assert_array_equal(t.grad.to_numpy(), expected)
    for key in [(slice(None), 1), (slice(0, 3, 2), slice(1, None)), (Ellipsis, slice(None, 2))]:
        grad_check(lambda a, key=key: a[key] * a[key], leaf(), samples=None)


@pytest.mark.task2_4
def test_indexing_matches_torch() -> None:
    keys = [0, -1, (slice(None), 1), (slice(0, 2),), (slice(None, None, 2), slice(1, 4, 2))]
    keys += [(Ellipsis, 3), (1, slice(None))]
    for key in keys:
        ours, theirs = leaf(), torch_leaf()
        a, b = ours[key], theirs[key]
        np.testing.assert_array_equal(a.to_numpy(), b.detach().numpy())
        (a * a).sum().backward()
        (b * b).sum().backward()
        np.testing.assert_array_equal(ours.grad.to_numpy(), theirs.grad.numpy())


# ---------------------------------------------------------------------------------- Parameter
@pytest.mark.task2_5
def test_parameter_of_an_expression_is_a_leaf_that_trains() -> None:
    p = Parameter(rand(3, 2, seed=0) * 2 - 1)
    assert p.value.is_leaf()
    assert p.value.requires_grad
    x = tensor([[1.0, 2.0, 3.0]])
    (x @ p.value).sum().backward()
    assert p.value.grad is not None
    assert p.value.grad.tolist() == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]


@pytest.mark.task2_5
def test_a_parameter_is_an_operand_of_the_tensor_operators_on_either_side() -> None:
    """``p * 2``, ``2 * p``, ``x @ p``, ``p @ y``, ``x - p``: a parameter stands for its tensor.

    (``Parameter(tensor([1., 2.])) * 2`` and ``x @ p`` raised TypeError.) The gradient
    reaches the parameter's tensor, as torch.nn.Parameter's.
    """
    w = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]])
    x = np.array([[1.0, 2.0, 3.0]])
    p = Parameter(from_numpy(w.copy()))
    xs = from_numpy(x)
    out = (xs @ p) * 2 + (p @ tensor([[1.0], [1.0]])).sum() - p.sum() / p.sum() + 1 / (2 * p).sum()
    expected = (x @ w) * 2 + (w @ [[1.0], [1.0]]).sum() - 1.0 + 1.0 / (2 * w).sum()
    np.testing.assert_allclose(out.to_numpy(), expected)
    assert (p * 2).tolist() == (2 * p).tolist() == (w * 2).tolist()
    assert (-p).tolist() == (-w).tolist()
    assert (xs @ p).tolist() == (x @ w).tolist()
    ((xs @ p) * p).sum().backward()  # p on both sides of a product
    grad = p.grad
    assert grad is not None
    torch = pytest.importorskip("torch")
    tp = torch.nn.Parameter(torch.tensor(w))
    ((torch.tensor(x) @ tp) * tp).sum().backward()
    np.testing.assert_allclose(grad.to_numpy(), tp.grad.numpy())


@pytest.mark.task2_5
def test_parameter_matches_torch_nn_parameter() -> None:
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Parameter(torch.tensor(M) * 2 - 1)
    ours = Parameter(from_numpy(M) * 2 - 1)
    assert ours.value.is_leaf() == theirs.is_leaf
    assert ours.value.requires_grad == theirs.requires_grad
    np.testing.assert_array_equal(ours.value.to_numpy(), theirs.detach().numpy())


# --------------------------------------------------------------------------------- seeds


def test_one_seed_rule_for_rand_and_the_random_fills() -> None:
    rng = np.random.default_rng(5)
    assert seeded_rng(rng, "x") is rng
    assert seeded_rng(3, "x").random() == np.random.default_rng(3).random()
    assert seeded_rng(np.int64(3), "x").random() == np.random.default_rng(3).random()
    assert isinstance(seeded_rng(None, "x"), np.random.Generator)
    np.testing.assert_array_equal(rand(4, seed=9).to_numpy(), np.random.default_rng(9).random(4))
    for seed, error in (("1", TypeError), (True, TypeError), (1.5, TypeError), (-1, ValueError)):
        with pytest.raises(error, match=r"^rand\(\): seed must be"):
            rand(2, seed=seed)
        with pytest.raises(error, match=r"^uniform_\(\): seed must be"):
            zeros(2).uniform_(seed=seed)
        with pytest.raises(error, match=r"^normal_\(\): seed must be"):
            zeros(2).normal_(seed=seed)
