"""Hidden tests of module 2 (kept in this repository only; the course tool grades with them)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch.tensor import (
    IndexingError,
    SimpleOps,
    TensorData,
    broadcast_index,
    from_numpy,
    grad_check,
    index_to_position,
    shape_broadcast,
    strides_from_shape,
    to_index,
)
from minitorch.tensor.testing import broadcastable_shapes, shapes

seeds = st.integers(0, 2**16)


def _array(shape, seed, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


@pytest.mark.task2_1
@given(shapes(), seeds)
def test_positions_agree_with_numpy_strides(shape, seed):
    strides = strides_from_shape(shape)
    arr = _array(shape, seed)
    flat = arr.reshape(-1)
    index = np.zeros(len(shape), dtype=np.int32)
    for ordinal in range(arr.size):
        to_index(ordinal, np.array(shape, dtype=np.int32), index)
        assert (
            flat[index_to_position(index, np.array(strides, dtype=np.int32))]
            == arr[tuple(int(i) for i in index)]
        )


@pytest.mark.task2_1
@given(shapes(min_dims=2), st.data())
def test_permuted_data_reads_like_numpy_transpose(shape, data):
    order = data.draw(st.permutations(range(len(shape))))
    arr = _array(shape, 0)
    td = TensorData(arr.reshape(-1).copy(), shape)
    view = td.permute(*order)
    expected = np.transpose(arr, order)
    assert tuple(view.shape) == expected.shape
    for idx in np.ndindex(*expected.shape):
        assert view.get(idx) == expected[idx]


@pytest.mark.task2_2
@given(broadcastable_shapes())
def test_shape_broadcast_and_broadcast_index_agree_with_numpy(pair):
    big, small = pair
    out = np.broadcast_shapes(big, small)
    assert tuple(shape_broadcast(big, small)) == out
    arr = _array(small, 1)
    wide = np.broadcast_to(arr, out)
    small_index = np.zeros(len(small), dtype=np.int32)
    for idx in np.ndindex(*out):
        broadcast_index(
            np.array(idx, dtype=np.int32),
            np.array(out, dtype=np.int32),
            np.array(small, dtype=np.int32),
            small_index,
        )
        assert arr[tuple(int(i) for i in small_index)] == wide[idx]


@pytest.mark.task2_3
@given(shapes(max_dims=3), seeds)
def test_expression_forward_matches_numpy(shape, seed):
    a_np, b_np = _array(shape, seed), _array(shape, seed + 1)
    a, b = from_numpy(a_np), from_numpy(b_np)
    got = (a * b + a.sigmoid() - b.relu() + (-a).exp()).to_numpy()
    want = a_np * b_np + 1 / (1 + np.exp(-a_np)) - np.maximum(b_np, 0) + np.exp(-a_np)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal((a < b).to_numpy(), (a_np < b_np).astype(float))
    for dim in range(len(shape)):
        np.testing.assert_allclose(
            a.sum(dim).to_numpy(), a_np.sum(axis=dim, keepdims=True), rtol=1e-9
        )


@pytest.mark.task2_4
@given(shapes(max_dims=3), seeds)
def test_gradient_of_an_expression_matches_central_differences(shape, seed):
    a = from_numpy(_array(shape, seed))
    b = from_numpy(_array(shape, seed + 1, low=0.5, high=2.0))
    grad_check(lambda x, y: (x * y).sigmoid() + y.log() - x.relu() * x.exp(), a, b)
    grad_check(lambda x: x.sum(0) * 2.0, a)


# The mistakes students make, each where the public tests' shapes could hide it: a square
# matrix hides a transpose, a node used once hides a lost accumulation, a contiguous
# layout hides a stride read from the wrong dimension.


@pytest.mark.task2_1
def test_index_to_position_uses_every_dimension_with_any_strides():
    assert index_to_position(np.array([1, 2, 3]), np.array([20, 5, 1])) == 33
    assert index_to_position(np.array([1, 2, 3]), np.array([1, 2, 6])) == 23
    assert index_to_position(np.array([4]), np.array([3])) == 12
    assert index_to_position(np.array([0, 0]), np.array([3, 1])) == 0


@pytest.mark.task2_1
def test_to_index_walks_the_last_dimension_fastest():
    out = np.zeros(3, dtype=np.int32)
    for ordinal, want in ((0, [0, 0, 0]), (17, [1, 1, 1]), (23, [1, 2, 3]), (4, [0, 1, 0])):
        to_index(ordinal, np.array([2, 3, 4]), out)
        assert list(out) == want


@pytest.mark.task2_1
def test_permute_of_three_dimensions_moves_shape_and_strides_together():
    td = TensorData(np.arange(24.0), (2, 3, 4))
    view = td.permute(1, 2, 0)
    assert tuple(view.shape) == (3, 4, 2)
    assert tuple(view.strides) == (4, 1, 12)
    assert view.get((2, 3, 1)) == 23.0
    assert td.permute((2, 0, 1)).get((3, 1, 2)) == 23.0
    with pytest.raises(IndexingError, match=r"is not a permutation of \(0, 1, 2\)"):
        td.permute(0, 0, 1)
    # Only ints: True == 1 and 1.0 == 1, yet neither is a dimension.
    flat = TensorData(np.arange(6.0), (2, 3))
    for order in ((True, False), (1.0, 0.0)):
        with pytest.raises(IndexingError):
            flat.permute(*order)
    assert tuple(flat.permute([1, 0]).shape) == (3, 2)


@pytest.mark.task2_2
def test_broadcast_index_lines_up_the_last_dimensions():
    small = np.zeros(2, dtype=np.int32)
    broadcast_index(np.array([1, 2, 3]), np.array([2, 3, 4]), np.array([3, 1]), small)
    assert list(small) == [2, 0]
    one = np.zeros(1, dtype=np.int32)
    broadcast_index(np.array([1, 2, 3]), np.array([2, 3, 4]), np.array([4]), one)
    assert list(one) == [3]
    same = np.zeros(2, dtype=np.int32)
    broadcast_index(np.array([1, 2]), np.array([2, 3]), np.array([2, 3]), same)
    assert list(same) == [1, 2]


@pytest.mark.task2_2
def test_shape_broadcast_pads_on_the_left_and_refuses_mismatches():
    assert tuple(shape_broadcast((2, 3, 1), (4,))) == (2, 3, 4)
    assert tuple(shape_broadcast((4,), (2, 3, 1))) == (2, 3, 4)
    assert tuple(shape_broadcast((1,), (5, 1))) == (5, 1)
    assert tuple(shape_broadcast((3, 1), (1, 1, 2))) == (1, 3, 2)
    assert tuple(shape_broadcast((2, 1), (2, 1))) == (2, 1)
    with pytest.raises(IndexingError, match=r"\(2, 3\).*\(4, 3\)"):
        shape_broadcast((2, 3), (4, 3))
    with pytest.raises(IndexingError):
        shape_broadcast((3,), (2,))


def _pair():
    a_np = _array((2, 3), 5)
    b_np = _array((3,), 6, low=0.5, high=2.0)
    return a_np, b_np, from_numpy(a_np), from_numpy(b_np)


@pytest.mark.task2_3
def test_each_operation_on_a_non_square_broadcast_pair():
    a_np, b_np, a, b = _pair()
    close = np.testing.assert_allclose
    close((a + b).to_numpy(), a_np + b_np)
    close((a * b).to_numpy(), a_np * b_np)
    close((a - b).to_numpy(), a_np - b_np)
    close((b + a).to_numpy(), a_np + b_np)
    close((-a).to_numpy(), -a_np)
    close(b.log().to_numpy(), np.log(b_np))
    close(a.exp().to_numpy(), np.exp(a_np))
    close(a.sigmoid().to_numpy(), 1 / (1 + np.exp(-a_np)))
    close(a.relu().to_numpy(), np.maximum(a_np, 0))
    close((a / b).to_numpy(), a_np / b_np)
    close(a.permute(1, 0).to_numpy(), a_np.T)
    close(a.permute(1, 0).contiguous().to_numpy(), a_np.T)
    close(a.sum(0).to_numpy(), a_np.sum(0, keepdims=True))
    close(a.sum(1).to_numpy(), a_np.sum(1, keepdims=True))
    close(a.sum().to_numpy(), np.array([a_np.sum()]))
    close((a < b).to_numpy(), (a_np < b_np).astype(float))
    close((a > b).to_numpy(), (a_np > b_np).astype(float))
    close((b > a).to_numpy(), (b_np > a_np).astype(float))
    close((a == a).to_numpy(), np.ones((2, 3)))
    close((a == b).to_numpy(), np.zeros((2, 3)))
    close(a.is_close(a + 1e-9).to_numpy(), np.ones((2, 3)))
    close(a.is_close(a + 1.0).to_numpy(), np.zeros((2, 3)))


@pytest.mark.task2_3
def test_all_and_sum_of_a_transposed_view():
    t_np = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]])
    t = from_numpy(t_np).permute(1, 0)
    np.testing.assert_array_equal(t.all().to_numpy(), [0.0])
    np.testing.assert_array_equal(t.all(0).to_numpy(), [[0.0, 1.0]])
    np.testing.assert_array_equal(t.all(1).to_numpy(), [[1.0], [0.0], [1.0]])
    np.testing.assert_array_equal(from_numpy(t_np + 1).all().to_numpy(), [1.0])
    np.testing.assert_array_equal(t.sum(0).to_numpy(), [[3.0, 12.0]])
    np.testing.assert_array_equal(t.sum(1).to_numpy(), [[4.0], [4.0], [7.0]])


def _leaf(arr):
    t = from_numpy(arr.copy())
    t.requires_grad_(True)
    return t


@pytest.mark.task2_4
def test_gradient_of_a_node_used_twice_accumulates():
    x_np = _array((2, 3), 7)
    x = _leaf(x_np)
    (x * x + x).sum().backward()
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * x_np + 1)
    y = _leaf(x_np)
    z = y.exp()
    (z * z).sum().backward()
    np.testing.assert_allclose(y.grad.to_numpy(), 2 * np.exp(2 * x_np))


@pytest.mark.task2_4
def test_gradients_of_a_broadcast_pair_and_a_three_dimensional_permute():
    a_np, b_np, _, _ = _pair()
    a, b = _leaf(a_np), _leaf(b_np)
    (a * b - b.log() + (a / b)).sum().backward()
    np.testing.assert_allclose(a.grad.to_numpy(), np.broadcast_to(b_np + 1 / b_np, (2, 3)))
    np.testing.assert_allclose(
        b.grad.to_numpy(), (a_np - 1 / b_np - a_np / b_np**2).sum(0), rtol=1e-9
    )
    y_np = _array((2, 3, 4), 8)
    w_np = _array((3, 4, 2), 9)
    y = _leaf(y_np)
    (y.permute(1, 2, 0) * from_numpy(w_np)).sum().backward()
    np.testing.assert_allclose(y.grad.to_numpy(), np.transpose(w_np, (2, 0, 1)))


@pytest.mark.task2_4
@given(seeds)
def test_each_function_gradient_against_central_differences(seed):
    a = from_numpy(_array((2, 3), seed))
    b = from_numpy(_array((3,), seed + 1, low=0.5, high=2.0))
    grad_check(lambda x: -x, a)
    grad_check(lambda x: x.sigmoid(), a)
    grad_check(lambda x: x.relu(), from_numpy(_array((2, 3), seed) + 0.01))
    grad_check(lambda x: x.exp(), a)
    grad_check(lambda x: x.log(), b)
    grad_check(lambda x: 1.0 / x, b)
    grad_check(lambda x, y: x * y, a, b)
    grad_check(lambda x, y: x + y, a, b)
    grad_check(lambda x: x.sum(1), a)
    grad_check(lambda x: x.sum(), a)
    grad_check(lambda x: x.permute(1, 0), a)


@pytest.mark.task2_4
def test_comparisons_have_zero_gradients_of_their_inputs_shapes():
    a_np, b_np, _, _ = _pair()
    a, b = _leaf(a_np), _leaf(b_np)
    ((a < b) * a + (b < a) * b).sum().backward()
    np.testing.assert_allclose(a.grad.to_numpy(), (a_np < b_np).astype(float))
    np.testing.assert_allclose(b.grad.to_numpy(), (b_np < a_np).astype(float).sum(0))


@pytest.mark.task2_3
def test_reduce_folds_from_the_start_value_in_order():
    # ``fn(acc, x)``, left to right, as functools.reduce: a fold that is not commutative.
    a = from_numpy(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    fold = SimpleOps.reduce(lambda acc, x: 10.0 * acc + x, 0.0)
    np.testing.assert_array_equal(fold(a, 1).to_numpy(), [[123.0], [456.0]])
    np.testing.assert_array_equal(fold(a, 0).to_numpy(), [[14.0, 25.0, 36.0]])
    minus = SimpleOps.reduce(lambda acc, x: acc - x, 100.0)
    np.testing.assert_array_equal(minus(a.permute(1, 0), 0).to_numpy(), [[94.0, 85.0]])


def _grad_of(fn, *arrays):
    leaves = [_leaf(arr) for arr in arrays]
    fn(*leaves).sum().backward()
    return [leaf.grad.to_numpy() for leaf in leaves]


@pytest.mark.task2_3
def test_each_forward_saves_what_its_backward_needs():
    # The course's backward (task 2.4) reads what the forward saved: the gradient shows it.
    a_np, b_np, _, _ = _pair()
    s = 1 / (1 + np.exp(-a_np))
    close = np.testing.assert_allclose
    close(_grad_of(lambda b: 1.0 / b, b_np)[0], -1 / b_np**2)
    close(_grad_of(lambda b: b.reciprocal(), b_np)[0], -1 / b_np**2)  # Inv (``/`` divides)
    close(_grad_of(lambda a: a.sigmoid(), a_np)[0], s * (1 - s))
    close(_grad_of(lambda a: a.relu(), a_np)[0], (a_np > 0).astype(float))
    close(_grad_of(lambda b: b.log(), b_np)[0], 1 / b_np)
    close(_grad_of(lambda a: a.exp(), a_np)[0], np.exp(a_np))
    close(_grad_of(lambda a: a.permute(1, 0), a_np)[0], np.ones((2, 3)))
    # The comparisons and all: zero gradients of each input's own shape.
    for fn in (
        lambda a, b: a < b,
        lambda a, b: a > b,
        lambda a, b: a == b,
        lambda a, b: a.is_close(b),
        lambda a, b: a.all() + b.all(),
    ):
        ga, gb = _grad_of(fn, a_np, b_np)
        assert ga.shape == (2, 3)
        assert gb.shape == (3,)
        assert not ga.any()
        assert not gb.any()


@pytest.mark.task2_3
def test_map_zip_and_reduce_of_empty_tensors():
    a = from_numpy(np.zeros((0, 3)))
    assert tuple(a.exp().shape) == (0, 3)
    assert tuple((a + a).shape) == (0, 3)
    assert tuple(a.sum(1).shape) == (0, 1)
    np.testing.assert_array_equal(a.sum(0).to_numpy(), np.zeros((1, 3)))


@pytest.mark.task2_1
def test_a_permuted_view_shares_its_base_storage_and_version_counter():
    # A view that kept a counter of its own would miss the base's in-place writes, and a
    # backward pass through it would use values changed after they were saved.
    td = TensorData(np.arange(6.0), (2, 3))
    view = td.permute(1, 0)
    assert view.storage is td.storage
    assert view.version_counter is td.version_counter
    td.version_counter.bump()
    assert view.version == td.version == 1


@pytest.mark.task2_3
def test_permute_and_view_follow_their_base_s_in_place_writes_as_pytorch():
    base = from_numpy(np.arange(6.0).reshape(2, 3))
    views = [base.permute(1, 0), base.view(3, 2)]
    before = [v.version for v in views]
    base[0, 0] = 10.0
    assert [v.version for v in views] == [b + 1 for b in before]
    assert views[0][0, 0] == views[1][0, 0] == 10.0
    # A view saved for the backward pass, then its base written in place: backward raises
    # (PyTorch: "one of the variables needed for gradient computation has been modified by
    # an inplace operation"), instead of a gradient computed from the new values.
    for make in (lambda t: t.permute(1, 0), lambda t: t.view(3, 2)):
        base = from_numpy(np.arange(6.0).reshape(2, 3))
        weight = from_numpy(np.ones((3, 2)))
        weight.requires_grad_(True)
        out = (weight * make(base)).sum()
        base[1, 1] = -1.0
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()
