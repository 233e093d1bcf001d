"""Broadcasting: shape_broadcast (examples, properties, numpy agreement) and broadcast_index."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch.tensor import IndexingError, broadcast_index, shape_broadcast, tensor
from minitorch.tensor.testing import broadcastable_shapes, shapes

pytestmark = pytest.mark.task2_2

# Shapes with dimensions of size 0..3 and up to 4 dims (and the 0-dim shape ()): two of
# them often do not broadcast, so the error path is exercised as much as the success path.
any_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=4).map(tuple)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((1,), (5, 5), (5, 5)),
        ((5, 5), (1,), (5, 5)),
        ((1, 5, 5), (5, 5), (1, 5, 5)),
        ((5, 1, 5, 1), (1, 5, 1, 5), (5, 5, 5, 5)),
        ((2, 5), (5,), (2, 5)),
        ((3, 1, 4), (2, 4), (3, 2, 4)),
        ((4,), (3, 4), (3, 4)),
        ((2, 1, 3, 4), (5, 1, 4), (2, 5, 3, 4)),
        ((), (2, 3), (2, 3)),
        ((7,), (7,), (7,)),
    ],
)
def test_shape_broadcast_examples(a, b, expected):
    assert shape_broadcast(a, b) == expected
    assert shape_broadcast(b, a) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [((5, 7, 5, 1), (1, 5, 1, 5)), ((5, 2), (5,)), ((2, 3), (3, 2)), ((4,), (3,))],
)
def test_shape_broadcast_failures_name_both_shapes(a, b):
    with pytest.raises(IndexingError) as info:
        shape_broadcast(a, b)
    assert str(a) in str(info.value)
    assert str(b) in str(info.value)


@given(any_shapes, any_shapes)
def test_shape_broadcast_agrees_with_numpy(a, b):
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(IndexingError) as info:
            shape_broadcast(a, b)
        assert str(a) in str(info.value)
        assert str(b) in str(info.value)
    else:
        assert shape_broadcast(a, b) == expected


@given(any_shapes, any_shapes)
def test_shape_broadcast_is_commutative(a, b):
    try:
        ab = shape_broadcast(a, b)
    except IndexingError:
        with pytest.raises(IndexingError):
            shape_broadcast(b, a)
    else:
        assert shape_broadcast(b, a) == ab


@given(shapes())
def test_shape_broadcast_with_itself_and_ones(a):
    assert shape_broadcast(a, a) == a
    assert shape_broadcast(a, (1,)) == a
    assert shape_broadcast((1,) * len(a), a) == a


@given(broadcastable_shapes())
def test_broadcastable_shapes_strategy_draws_different_compatible_shapes(pair):
    a, b = pair
    assert a != b
    assert shape_broadcast(a, b) == np.broadcast_shapes(a, b)


def test_broadcast_index_examples():
    out = np.zeros(2, dtype=np.int64)
    broadcast_index(np.array([1, 2, 3]), np.array([2, 3, 4]), np.array([3, 1]), out)
    assert tuple(out) == (2, 0)
    out = np.zeros(1, dtype=np.int64)
    broadcast_index(np.array([1, 3]), np.array([2, 4]), np.array([4]), out)
    assert tuple(out) == (3,)
    broadcast_index(np.array([1, 3]), np.array([2, 4]), np.array([1]), out)
    assert tuple(out) == (0,)


@given(broadcastable_shapes())
def test_broadcast_index_matches_numpy_broadcast_to(pair):
    small, other = pair
    big = shape_broadcast(small, other)
    values = np.arange(int(np.prod(small)), dtype=np.float64).reshape(small)
    expanded = np.broadcast_to(values, big)
    out = np.zeros(len(small), dtype=np.int64)
    for big_index in np.ndindex(*big):
        broadcast_index(np.array(big_index), np.array(big), np.array(small), out)
        assert all(0 <= i < s for i, s in zip(out, small, strict=True))
        assert values[tuple(out)] == expanded[big_index]


def test_tensor_broadcasting_example():
    a = tensor([[1.0], [2.0], [3.0]])  # (3, 1)
    b = tensor([10.0, 20.0])  # (2,)
    out = a + b
    assert out.shape == (3, 2)
    np.testing.assert_array_equal(out.to_numpy(), [[11, 21], [12, 22], [13, 23]])


def test_tensor_ops_on_shapes_that_do_not_broadcast_raise():
    a = tensor([[1.0, 2.0, 3.0]])  # (1, 3)
    b = tensor([1.0, 2.0])  # (2,)
    with pytest.raises(IndexingError, match=r"\(1, 3\).*\(2,\)"):
        a + b
    with pytest.raises(IndexingError, match=r"\(1, 3\).*\(2,\)"):
        a * b
