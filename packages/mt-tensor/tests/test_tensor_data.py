"""TensorData: strided indexing, iteration, permuted views, printing and index errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch.tensor import (
    IndexingError,
    TensorData,
    check_dim,
    index_to_position,
    is_contiguous_layout,
    strides_from_shape,
    tensor,
    to_index,
)
from minitorch.tensor.testing import shapes

pytestmark = pytest.mark.task2_1


def data_of(shape):
    size = int(np.prod(shape))
    return TensorData(np.arange(size, dtype=np.float64), shape)


@st.composite
def permuted_data(draw):
    td = data_of(draw(shapes()))
    order = draw(st.permutations(range(td.dims)))
    return td, tuple(order)


# --------------------------------------------------------------- positions and indices


def test_strides_from_shape_examples():
    assert strides_from_shape((2, 3, 4)) == (12, 4, 1)
    assert strides_from_shape((5,)) == (1,)
    assert strides_from_shape((3, 1, 2)) == (2, 2, 1)


def test_index_to_position_examples():
    assert index_to_position(np.array([1, 2]), np.array([3, 1])) == 5
    # Transposed strides of a (2, 3) tensor: index (2, 1) of the (3, 2) view.
    assert index_to_position(np.array([2, 1]), np.array([1, 3])) == 5
    out = np.zeros(3, dtype=np.int64)
    to_index(17, np.array([2, 3, 4]), out)
    assert tuple(out) == (1, 1, 1)


@given(shapes())
def test_to_index_and_index_to_position_round_trip(shape):
    shape_arr = np.array(shape)
    strides = np.array(strides_from_shape(shape))
    td = data_of(shape)
    index = np.zeros(len(shape), dtype=np.int64)
    for ordinal in range(td.size):
        to_index(ordinal, shape_arr, index)
        assert all(0 <= i < s for i, s in zip(index, shape, strict=True))
        assert index_to_position(index, strides) == ordinal
        assert td.index(tuple(int(i) for i in index)) == ordinal


@given(shapes())
def test_indices_cover_every_position_once(shape):
    td = data_of(shape)
    indices = list(td.indices())
    assert len(indices) == td.size == len(set(indices))
    assert sorted(td.index(i) for i in indices) == list(range(td.size))
    # Row-major order: the positions of contiguous data come out in storage order.
    assert [td.index(i) for i in indices] == list(range(td.size))


@given(permuted_data())
def test_indices_of_a_permuted_view_still_cover_storage_once(case):
    td, order = case
    p = td.permute(*order)
    positions = [p.index(i) for i in p.indices()]
    assert sorted(positions) == list(range(td.size))


@given(shapes(), st.integers(0, 2**32 - 1))
def test_sample_returns_valid_indices(shape, seed):
    td = data_of(shape)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        idx = td.sample(rng)
        assert len(idx) == td.dims
        assert all(isinstance(i, int) and 0 <= i < s for i, s in zip(idx, shape, strict=True))
        td.index(idx)
    assert td.sample(np.random.default_rng(seed)) == td.sample(np.random.default_rng(seed))


def test_sample_reaches_every_index():
    td = data_of((2, 3))
    rng = np.random.default_rng(0)
    assert {td.sample(rng) for _ in range(200)} == set(td.indices())


def test_get_and_set():
    td = data_of((2, 3))
    assert td.get((1, 2)) == 5.0
    td.set((0, 1), 42.0)
    assert td.get((0, 1)) == 42.0
    assert td.storage[1] == 42.0
    assert td.get((-1, -1)) == 5.0


# --------------------------------------------------------------- permute and contiguity


@given(permuted_data())
def test_permute_is_a_view(case):
    td, order = case
    p = td.permute(*order)
    assert p.storage is td.storage
    assert p.shape == tuple(td.shape[o] for o in order)
    assert p.strides == tuple(td.strides[o] for o in order)
    np.testing.assert_array_equal(p.to_numpy(), np.transpose(td.to_numpy(), order))
    # Writing through the view changes the original.
    idx = tuple(s - 1 for s in p.shape)
    p.set(idx, -7.0)
    assert td.get(tuple(idx[order.index(d)] for d in range(td.dims))) == -7.0


@given(permuted_data(), st.data())
def test_permute_of_permute(case, data):
    td, order = case
    inverse = tuple(int(i) for i in np.argsort(order))
    back = td.permute(*order).permute(*inverse)
    assert back.shape == td.shape
    assert back.strides == td.strides
    assert back.is_contiguous()
    second = data.draw(st.permutations(range(td.dims)))
    twice = td.permute(*order).permute(*second)
    np.testing.assert_array_equal(
        twice.to_numpy(), np.transpose(np.transpose(td.to_numpy(), order), second)
    )


def test_permute_takes_a_tuple_too():
    td = data_of((2, 3, 4))
    assert td.permute((2, 0, 1)).shape == td.permute(2, 0, 1).shape == (4, 2, 3)


def test_is_contiguous():
    td = data_of((2, 3))
    assert td.is_contiguous()
    assert not td.permute(1, 0).is_contiguous()
    assert td.permute(1, 0).permute(1, 0).is_contiguous()
    # Moving a size-1 dimension does not change the layout.
    assert data_of((1, 3)).permute(1, 0).is_contiguous()
    assert data_of((3, 1, 2)).permute(1, 0, 2).is_contiguous()
    assert not data_of((3, 1, 2)).permute(2, 1, 0).is_contiguous()
    assert TensorData(np.zeros(6), (2, 3), (1, 2)).is_contiguous() is False


# --------------------------------------------------------------- printing


def test_to_string_2d_like_pytorch():
    t = tensor([[1.5, 2.0], [3.25, -4.0]])
    # torch.tensor([[1.5, 2.0], [3.25, -4.0]]) prints exactly this.
    assert repr(t) == "tensor([[ 1.5000,  2.0000],\n        [ 3.2500, -4.0000]])"
    td = TensorData(np.array([1.5, 2.0, 3.25, -4.0]), (2, 2))
    assert td.to_string() == "[[ 1.5000,  2.0000],\n        [ 3.2500, -4.0000]]"


def test_to_string_1d_like_pytorch():
    t = tensor([1.0, 2.5, 3.0])
    assert repr(t) == "tensor([1.0000, 2.5000, 3.0000])"
    assert TensorData(np.array([0.125, -1.0]), (2,)).to_string() == "[ 0.1250, -1.0000]"


def test_to_string_of_a_permuted_view_shows_the_view():
    td = TensorData(np.array([1.5, 2.5, 3.5, 4.5]), (2, 2)).permute(1, 0)
    assert td.to_string() == "[[1.5000, 3.5000],\n        [2.5000, 4.5000]]"


# --------------------------------------------------------------- errors


@pytest.mark.parametrize("index", [(0,), (0, 0, 0), ()])
def test_index_of_wrong_length_raises(index):
    with pytest.raises(IndexingError, match=r"\(2, 2\)"):
        data_of((2, 2)).index(index)


@pytest.mark.parametrize("index", [(2, 0), (0, 2), (0, 99)])
def test_index_out_of_range_raises(index):
    with pytest.raises(IndexingError, match="out of range"):
        data_of((2, 2)).index(index)


@pytest.mark.parametrize("index", [(-1, 0), (0, -2), (-3, 0)])
def test_index_refuses_negative_entries_as_the_course_does(index):
    with pytest.raises(IndexingError, match=r"negative entry in dimension \d"):
        data_of((2, 2)).index(index)


def test_get_set_and_tensor_indexing_count_negative_entries_from_the_end():
    td = data_of((2, 3))
    td.set((-1, -1), 7.0)
    assert td.get((1, 2)) == 7.0
    assert td.get((-1, -1)) == 7.0
    with pytest.raises(IndexingError, match="out of range"):
        td.get((-3, 0))


@pytest.mark.parametrize("index", [(0.5, 0), ("0", 0), (0, None), (True, 0)])
def test_non_int_index_raises(index):
    with pytest.raises(IndexingError, match="ints"):
        data_of((2, 2)).index(index)


@pytest.mark.parametrize("order", [(0, 0, 1), (0, 1), (0, 1, 3), (2, 1, 0, 3), (-1, 0, 1)])
def test_invalid_permute_order_raises(order):
    with pytest.raises(IndexingError, match="permutation"):
        data_of((2, 3, 4)).permute(*order)


def test_storage_too_small_raises():
    with pytest.raises(IndexingError, match="too small"):
        TensorData(np.zeros(3), (2, 2))
    with pytest.raises(IndexingError, match="too small"):
        TensorData(np.zeros(6), (2, 3), (4, 1))
    TensorData(np.zeros(6), (2, 3), (1, 2))  # fits exactly


def test_bad_shapes_and_strides_raise():
    with pytest.raises(IndexingError, match="strides"):
        TensorData(np.zeros(6), (2, 3), (3,))
    with pytest.raises(IndexingError, match="negative"):
        TensorData(np.zeros(6), (-2, 3))
    with pytest.raises(IndexingError, match="1-D"):
        TensorData(np.zeros((2, 3)), (2, 3))


@given(permuted_data())
def test_is_contiguous_layout_matches_numpy(case):
    td, order = case
    view = td.permute(*order)
    arr = view.to_numpy()
    expected = arr.flags.c_contiguous or arr.size <= 1
    assert is_contiguous_layout(view.shape, view.strides) == expected
    assert is_contiguous_layout(np.array(view.shape), np.array(view.strides)) == expected
    assert view.is_contiguous() == expected


@given(shapes(), st.data())
def test_check_dim_accepts_every_valid_dim(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    assert check_dim(dim, shape) == dim % len(shape)
    assert check_dim(np.int64(dim), shape) == dim % len(shape)


@pytest.mark.parametrize("dim", [2, -3, 100, 1.0, True, None, "0"])
def test_check_dim_rejects_with_one_exception_type(dim):
    with pytest.raises(IndexingError, match=r"dim"):
        check_dim(dim, (2, 3))


@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    data=st.data(),
)
def test_negative_stride_is_named(shape, data):
    # Regression: TensorData([1., 2.], (2,), (-1,)) blamed the storage length
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    stride = data.draw(st.integers(-5, -1), label="stride")
    strides = list(strides_from_shape(tuple(shape)))
    strides[dim] = stride
    storage = np.zeros(100)
    with pytest.raises(IndexingError, match=rf"negative stride \({stride} in dim {dim}\)"):
        TensorData(storage, tuple(shape), tuple(strides))


def test_negative_stride_on_an_empty_shape_is_refused_too():
    with pytest.raises(IndexingError, match="negative stride"):
        TensorData(np.zeros(1), (0, 2), (-1, 1))


@pytest.mark.parametrize("strides", [None, (1, 2)])
def test_the_layout_arrays_kernels_get_are_read_only(strides):
    # Shared by every TensorData of the layout: a kernel writing into its ``out_shape``
    # would change the shape of every tensor made afterwards.
    td = TensorData(np.zeros(6), (2, 3), strides if strides is None else (1, 2))
    storage, shape, layout = td.tuple()
    assert shape.tolist() == [2, 3]
    for array in (shape, layout):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 7
    again = TensorData(np.zeros(6), (2, 3), strides if strides is None else (1, 2))
    assert again.tuple()[1].tolist() == [2, 3]
    assert storage.flags.writeable  # the data itself is written by kernels


def test_version_is_an_int_and_views_share_the_counter_behind_it():
    # TensorData.version is the count, as Tensor.version is; the shared object that
    # counts is version_counter, which a permuted view keeps.
    td = data_of((2, 3))
    assert td.version == 0
    assert isinstance(td.version, int)
    view = td.permute(1, 0)
    assert view.version_counter is td.version_counter
    view.set((2, 1), 7.0)
    assert (td.version, view.version) == (1, 1)
    assert td.get((1, 2)) == 7.0
    assert tensor([1.0]).tensor_data.version == 0
