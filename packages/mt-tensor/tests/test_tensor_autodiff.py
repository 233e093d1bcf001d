"""Tensor autodiff: backward() rules and errors, accumulation, detach / requires_grad_ /
no_grad, and gradients checked against hand-computed numbers."""

import numpy as np
import pytest

from minitorch.tensor import (
    Function,
    IndexingError,
    Tensor,
    grad_central_difference,
    grad_check,
    no_grad,
    ones,
    tensor,
    zeros,
)

pytestmark = pytest.mark.task2_4


def grad_of(t: Tensor) -> np.ndarray:
    assert t.grad is not None
    assert t.grad.shape == t.shape
    return t.grad.to_numpy()


# --------------------------------------------------------------- comparisons


@pytest.mark.parametrize(
    "compare",
    [lambda a, b: a < b, lambda a, b: a > b, lambda a, b: a == b, lambda a, b: a.is_close(b)],
    ids=["lt", "gt", "eq", "is_close"],
)
def test_every_comparison_gives_zero_gradients_of_each_inputs_shape(compare):
    # One rule (LT.backward's) for every comparison, with each input's own shape: here a
    # (2, 3) and a (3,) that broadcast.
    a = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = tensor([2.0, 2.0, 7.0], requires_grad=True)
    (compare(a, b) * 3.0).sum().backward()
    np.testing.assert_array_equal(grad_of(a), np.zeros((2, 3)))
    np.testing.assert_array_equal(grad_of(b), np.zeros(3))


# --------------------------------------------------------------- backward() entry


def test_backward_on_non_scalar_needs_a_gradient():
    x = tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError, match=r"\(3,\).*gradient"):
        y.backward()
    y.backward(tensor([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(grad_of(x), [2.0, 40.0, 600.0])  # 2 x * g


def test_backward_with_a_number_broadcasts_it():
    x = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x * 3.0).backward(0.5)
    np.testing.assert_allclose(grad_of(x), np.full((2, 2), 1.5))


def test_backward_of_one_element_defaults_to_one():
    x = tensor([[2.0]], requires_grad=True)
    (x * x * x).backward()
    np.testing.assert_allclose(grad_of(x), [[12.0]])  # 3 x^2


def test_backward_on_a_constant_raises():
    c = tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="requires_grad"):
        c.sum().backward()
    with pytest.raises(RuntimeError, match="requires_grad"):
        tensor([1.0]).backward()


# --------------------------------------------------------------- leaves and accumulation


def test_gradients_accumulate_until_zero_grad():
    x = tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(grad_of(x), [2.0, 4.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(grad_of(x), [4.0, 8.0])
    x.zero_grad_()
    assert x.grad is None
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(grad_of(x), [3.0, 3.0])


def test_a_leaf_used_twice_gets_both_contributions():
    x = tensor([2.0, -1.0], requires_grad=True)
    y = tensor([5.0, 7.0], requires_grad=True)
    (x * y + x * x + x).sum().backward()
    np.testing.assert_allclose(grad_of(x), [5.0 + 4.0 + 1.0, 7.0 - 2.0 + 1.0])  # y + 2x + 1
    np.testing.assert_allclose(grad_of(y), [2.0, -1.0])  # x


def test_only_leaves_keep_gradients():
    x = tensor([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    (h * h).sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert h.grad is None
    np.testing.assert_allclose(grad_of(x), [8.0, 16.0])  # 8 x


def test_deep_graph_backward_is_iterative():
    x = tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y + 1.0
    y.backward()
    np.testing.assert_allclose(grad_of(x), [1.0])
    assert y.item() == 3001.0


def test_detach_has_no_history_and_shares_storage():
    x = tensor([1.0, 2.0], requires_grad=True)
    d = (x * 2.0).detach()
    assert d.history is None
    assert d.is_constant()
    assert not d.requires_grad
    assert not (d * 3.0).requires_grad
    xd = x.detach()
    assert np.shares_memory(xd.to_numpy(), x.to_numpy())
    with pytest.raises(RuntimeError):
        (xd * 3.0).sum().backward()
    assert x.grad is None


def test_requires_grad_():
    x = tensor([1.0, 2.0])
    assert not x.requires_grad
    assert x.requires_grad_() is x
    assert x.is_leaf()
    assert x.requires_grad
    assert x.requires_grad_(False) is x
    assert x.is_constant()
    assert not x.requires_grad
    assert (x * 2.0).history is None
    y = tensor([1.0], requires_grad=True) * 2.0
    with pytest.raises(RuntimeError, match="detach"):
        y.requires_grad_(False)


def test_no_grad_records_no_history():
    x = tensor([1.0, 2.0], requires_grad=True)
    with no_grad():
        y = x * x + 1.0
        with no_grad():
            pass
        z = x.sum()
    assert y.history is None
    assert not y.requires_grad
    assert z.history is None
    np.testing.assert_allclose(y.to_numpy(), [2.0, 5.0])
    w = x * x
    assert w.requires_grad
    assert not w.is_leaf()
    w.sum().backward()
    np.testing.assert_allclose(grad_of(x), [2.0, 4.0])


# --------------------------------------------------------------- hand-computed gradients


def test_broadcast_add_and_mul_gradients_are_summed_to_each_shape():
    a = tensor([[1.0], [2.0]], requires_grad=True)  # (2, 1)
    b = tensor([10.0, 20.0, 30.0], requires_grad=True)  # (3,)
    (a + b).sum().backward()
    np.testing.assert_allclose(grad_of(a), [[3.0], [3.0]])  # each a_i is used 3 times
    np.testing.assert_allclose(grad_of(b), [2.0, 2.0, 2.0])  # each b_j is used 2 times
    a.zero_grad_()
    b.zero_grad_()
    g = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (a * b).backward(g)
    # d/da_i = sum_j g_ij b_j ; d/db_j = sum_i g_ij a_i
    np.testing.assert_allclose(grad_of(a), [[140.0], [320.0]])
    np.testing.assert_allclose(grad_of(b), [9.0, 12.0, 15.0])


def test_gradient_of_a_broadcast_number():
    x = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    s = tensor([2.0], requires_grad=True)  # (1,) broadcast over (2, 2)
    (x * s).sum().backward()
    np.testing.assert_allclose(grad_of(s), [10.0])  # sum of x
    np.testing.assert_allclose(grad_of(x), np.full((2, 2), 2.0))


def test_sum_mean_permute_view_gradients_by_hand():
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    (x.sum(1) * tensor([[1.0], [10.0]])).sum().backward()
    np.testing.assert_allclose(grad_of(x), [[1, 1, 1], [10, 10, 10]])
    x.zero_grad_()
    x.mean().backward()
    np.testing.assert_allclose(grad_of(x), np.full((2, 3), 1.0 / 6.0))
    x.zero_grad_()
    w = tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])  # (3, 2)
    (x.permute(1, 0) * w).sum().backward()
    np.testing.assert_allclose(grad_of(x), [[1, 3, 5], [2, 4, 6]])  # w transposed back
    x.zero_grad_()
    (x.view(3, 2) * w).sum().backward()
    np.testing.assert_allclose(grad_of(x), [[1, 2, 3], [4, 5, 6]])  # w in row-major order


def test_matmul_gradient_by_hand():
    a = tensor([[1.0, 2.0]], requires_grad=True)  # (1, 2)
    b = tensor([[3.0], [4.0]], requires_grad=True)  # (2, 1)
    out = a @ b
    assert out.item() == 11.0
    out.backward()
    np.testing.assert_allclose(grad_of(a), [[3.0, 4.0]])  # b^T
    np.testing.assert_allclose(grad_of(b), [[1.0], [2.0]])  # a^T


def test_elementwise_gradients_by_hand():
    x = tensor([0.0, 1.0, 4.0], requires_grad=True)
    (x.exp() + (x + 1.0).log() + x.sigmoid() + (x - 0.5).relu()).sum().backward()
    s = 1.0 / (1.0 + np.exp(-np.array([0.0, 1.0, 4.0])))
    expected = np.exp([0.0, 1.0, 4.0]) + 1.0 / np.array([1.0, 2.0, 5.0]) + s * (1 - s)
    expected += [0.0, 1.0, 1.0]
    np.testing.assert_allclose(grad_of(x), expected)
    y = tensor([4.0, 0.25], requires_grad=True)
    (y.sqrt() + 1.0 / y).sum().backward()
    np.testing.assert_allclose(grad_of(y), [0.25 - 1 / 16, 1.0 - 16.0])  # 1/(2 sqrt y) - 1/y^2


def test_comparisons_and_all_have_zero_gradients():
    x = tensor([1.0, 3.0], requires_grad=True)
    ((x < 2.0) + (x > 2.0) + (x == 3.0) + x.is_close(1.0) + x.all()).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [0.0, 0.0])


# --------------------------------------------------------------- the checkers themselves


def test_grad_central_difference_by_hand():
    x = tensor([[1.0, 2.0], [3.0, 4.0]])
    assert grad_central_difference(lambda t: t * t * t, x, ind=(1, 0)) == pytest.approx(
        27.0, rel=1e-6
    )
    y = tensor([5.0, 6.0])
    assert grad_central_difference(lambda a, b: a * b, y, y * 2.0, arg=1, ind=(1,)) == (
        pytest.approx(6.0, rel=1e-6)
    )


class WrongSquare(Function):
    """x^2 with a backward that forgets the factor 2."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.backend.mul_zip(a, a)

    @staticmethod
    def backward(ctx, grad_output):
        (a,) = ctx.saved_values
        return a.backend.mul_zip(grad_output, a)


def test_grad_check_catches_a_wrong_backward():
    x = tensor([1.0, -2.0, 3.0])
    grad_check(lambda t: t * t, x)
    with pytest.raises(AssertionError, match="gradient check failed"):
        grad_check(WrongSquare.apply, x)


def test_grad_check_skips_points_without_a_derivative():
    # At a jump (a + 1.2 < b exactly at a + 1.2 == b) or a kink (relu at 0) the central
    # difference measures the jump; there is no derivative to compare backprop with.
    a, b = tensor([0.0, 1.0]), tensor([1.2, 5.0])
    grad_check(lambda x, y: x + 1.2 < y, a, b, samples=None)
    grad_check(lambda x, y: x + 1.2 > y, a, b, samples=None)
    grad_check(lambda x: x.relu(), tensor([0.0, 2.0]), samples=None)
    # ... while a wrong backward where the function is smooth is still caught.
    with pytest.raises(AssertionError, match="gradient check failed"):
        grad_check(WrongSquare.apply, tensor([0.0, 1.0]), samples=None)


def test_inv_backward_of_tiny_values_is_minus_inf():
    """Regression: the simple backend raised ZeroDivisionError."""
    x = tensor([1e-200, -1e-200, 2.0], requires_grad=True)
    (1.0 / x).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.to_numpy(), [-np.inf, -np.inf, -0.25])


@pytest.mark.parametrize(
    ("out_shape", "grad_shape"), [((2,), (3, 2)), ((5,), (2, 5)), ((2,), (3,)), ((2, 1), (2, 3))]
)
def test_backward_rejects_a_gradient_that_does_not_broadcast_to_the_output(out_shape, grad_shape):
    """Regression: a larger broadcast-compatible gradient was accepted."""
    x = zeros(out_shape, requires_grad=True)
    y = x * 1.0
    with pytest.raises(IndexingError) as err:
        y.backward(ones(grad_shape))
    assert str(grad_shape) in str(err.value)
    assert str(out_shape) in str(err.value)
    assert x.grad is None


def test_backward_broadcasts_a_smaller_gradient_to_the_output():
    x = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x * 1.0).backward(tensor([1.0, 2.0]))
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.to_numpy(), [[1.0, 2.0], [1.0, 2.0]])


def test_writing_into_a_saved_leaf_is_caught_at_backward():
    """Regression: ``x[0] = 10`` after use gave [20, 6] instead of an error.

    Outside ``no_grad`` the write itself raises (as PyTorch); under it, backward does.
    """
    x = tensor([2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 10.0
    with no_grad():
        x[0] = 10.0
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*MulBackward0"):
        y.backward()


def test_writing_into_a_saved_intermediate_is_caught_at_backward():
    """Regression: the same on an intermediate gave [4, 200]."""
    x = tensor([2.0, 3.0], requires_grad=True)
    h = x * 1.0
    y = (h * h).sum()
    with pytest.raises(RuntimeError, match=r"grad_fn=MulBackward0.*no_grad"):
        h[1] = 10.0  # the graph cannot record it
    with no_grad():
        h[1] = 10.0
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation"):
        y.backward()


def test_in_place_writes_through_views_and_zero_bump_the_shared_version():
    x = tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.version == 0
    x.detach()[0, 0] = 5.0
    x.permute(1, 0)[0, 1] = 6.0
    x.view(4)[3] = 7.0
    assert x.version == 3
    x.zero_()
    assert x.version == 4
    x.exp()  # reading is not a write
    assert x.version == 4


def test_writes_before_use_or_into_unsaved_tensors_are_fine():
    x = tensor([2.0, 3.0], requires_grad=True)
    with no_grad():
        x[0] = 1.0  # before the graph uses it
    y = (x + x).sum()  # Add saves nothing
    with no_grad():
        x[1] = 7.0
    y.backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.to_numpy(), [2.0, 2.0])
