"""Writes into a tensor, as PyTorch's: in-place arithmetic, assignment from overlapping views,
and the small contracts around them (0-d iteration, ``!=``, NumPy index arrays, bool flags).

The op database (test_tensor_opdb.py) compares every form with PyTorch on every backend;
these are the cases that were wrong, named, with the reason beside each.
"""

import numpy as np
import pytest

from minitorch.operators import Module, Parameter
from minitorch.tensor import from_numpy, no_grad, tensor

pytestmark = pytest.mark.task2_3


def test_augmented_assignment_writes_into_a_view_and_its_base() -> None:
    """``v += 10`` on ``x[0:2]`` changes ``x`` (it used to rebind ``v`` to a new tensor)."""
    x = tensor([1.0, 2.0, 3.0])
    v = x[0:2]
    before = x.version
    v += 10
    assert x.tolist() == [11.0, 12.0, 3.0]
    assert v.tolist() == [11.0, 12.0]
    assert x.version > before
    w = tensor([11.0])
    same = w
    w -= 2
    w *= 4
    w /= 3
    assert w is same
    assert w.tolist() == [12.0]


class Affine(Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(tensor([1.0, 2.0]))


def test_the_manual_sgd_step_of_every_tutorial_updates_the_parameter_in_place() -> None:
    """``with no_grad(): w -= lr * w.grad`` keeps ``w`` a leaf, and the model sees the step."""
    model = Affine()
    w = model.w.value
    (w * w).sum().backward()
    with no_grad():
        w -= 0.1 * w.grad
    assert w is model.w.value
    np.testing.assert_allclose(model.w.value.to_numpy(), [0.8, 1.6])
    assert w.requires_grad
    assert w.is_leaf
    w.grad = None
    (w * w).sum().backward()  # the next backward works on the updated leaf
    np.testing.assert_allclose(w.grad.to_numpy(), [1.6, 3.2])


def test_in_place_on_a_leaf_that_requires_grad_outside_no_grad_raises_as_pytorch() -> None:
    w = tensor([1.0, 2.0]).requires_grad_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w += 1
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.mul_(2)
    assert w.tolist() == [1.0, 2.0]


def test_an_in_place_write_after_a_save_makes_the_backward_refuse() -> None:
    """The version counter: ``y = x * x`` saved ``x``; a write to ``x`` breaks ``y``'s backward."""
    leaf = tensor([1.0, 2.0]).requires_grad_()
    x = leaf * 1.0
    y = (x * x).sum()
    with no_grad():
        x += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_in_place_with_an_operand_that_requires_grad_refuses_rather_than_lose_its_gradient() -> (
    None
):
    x = tensor([1.0, 2.0])
    g = tensor([1.0, 1.0]).requires_grad_()
    with pytest.raises(RuntimeError, match="cannot record"):
        x += g
    with pytest.raises(RuntimeError, match="cannot record"):
        x[0:1] = g[0:1]
    assert x.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    ("write", "expected"),
    [
        # NumPy's answers: the value is read before anything is written.
        (lambda x: x.__setitem__(slice(1, None), x[:-1]), [0.0, 0.0, 1.0, 2.0, 3.0]),
        (lambda x: x.__setitem__(slice(None, -1), x[1:]), [1.0, 2.0, 3.0, 4.0, 4.0]),
        (lambda x: x.__setitem__([1, 2], x[0:2]), [0.0, 0.0, 1.0, 3.0, 4.0]),
        (lambda x: x.__setitem__(slice(None), x.view(5)), [0.0, 1.0, 2.0, 3.0, 4.0]),
    ],
    ids=["shift right", "shift left", "rows from a slice", "itself"],
)
def test_assignment_from_an_overlapping_view_reads_a_copy_first(write, expected) -> None:
    x = tensor([0.0, 1.0, 2.0, 3.0, 4.0])
    write(x)
    assert x.tolist() == expected


def test_assignment_of_a_transpose_into_its_own_tensor() -> None:
    x = from_numpy(np.arange(9.0).reshape(3, 3).copy())
    x[:] = x.T
    assert x.tolist() == np.arange(9.0).reshape(3, 3).T.tolist()


def test_iterating_a_0d_tensor_raises_as_pytorch() -> None:
    z = tensor([3.0]).view()
    assert z.shape == ()
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(z)
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        sum(z)
    assert list(tensor([1.0, 2.0])) == [1.0, 2.0]


def test_not_equal_is_elementwise_on_either_side() -> None:
    a, b = tensor([1.0, 2.0, float("nan")]), tensor([1.0, 3.0, float("nan")])
    assert (a != b).tolist() == [0.0, 1.0, 1.0]
    assert (a != 2.0).tolist() == [1.0, 0.0, 1.0]
    assert (np.float64(2) != a).tolist() == [1.0, 0.0, 1.0]
    one = tensor([1.0]) != tensor([1.0])
    assert one.tolist() == [0.0]  # a tensor, not a Python bool


def test_numpy_integer_arrays_and_integers_index_as_lists_and_ints() -> None:
    x = from_numpy(np.arange(6.0).reshape(2, 3).copy())
    assert x[np.array([1, 0])].tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    assert x[0, np.array([2, 1])].tolist() == [2.0, 1.0]
    assert x[np.int64(1), [0, 2]].tolist() == [3.0, 5.0]
    assert x[np.int64(1)].tolist() == [3.0, 4.0, 5.0]
    x[0, [2, 0]] = tensor([9.0, 8.0])
    assert x[0].tolist() == [8.0, 1.0, 9.0]
    with pytest.raises(IndexError, match="must hold integers"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="0-d or 1-D"):
        x[np.zeros((1, 1), dtype=np.int64)]


@pytest.mark.parametrize("flag", ["False", 1, 0.0, None])
def test_requires_grad_takes_only_a_bool(flag) -> None:
    x = tensor([1.0])
    with pytest.raises(TypeError, match="bool"):
        x.requires_grad_(flag)
    with pytest.raises(TypeError, match="bool"):
        x.requires_grad = flag
    assert not x.requires_grad
    assert x.requires_grad_(np.bool_(True)).requires_grad


def test_an_expanded_tensor_refuses_an_in_place_write() -> None:
    from minitorch.tensor import Tensor
    from minitorch.tensor.tensor_data import TensorData

    row = tensor([1.0, 2.0])
    td = row.tensor_data
    wide = Tensor(TensorData(td.storage, (3, 2), (0, 1)))
    with pytest.raises(RuntimeError, match="single memory location"):
        wide += tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    assert row.tolist() == [1.0, 2.0]
