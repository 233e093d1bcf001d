"""The Tensor API: creation, numpy interop, indexing, view errors, special values, finding
backends by name, and import hygiene."""

import math
import subprocess
import sys
import textwrap
from importlib import metadata

import numpy as np
import pytest

from minitorch.tensor import (
    IndexingError,
    SimpleBackend,
    SimpleOps,
    Tensor,
    TensorBackend,
    available_backends,
    backend,
    from_numpy,
    map_into,
    ones,
    rand,
    tensor,
    zeros,
)
from minitorch.tensor.backends import registry

pytestmark = pytest.mark.task2_3


# --------------------------------------------------------------- creation


def test_tensor_from_nested_lists():
    t = tensor([[1, 2, 3], [4, 5, 6]])
    assert isinstance(t, Tensor)
    assert t.shape == (2, 3)
    assert t.size == 6
    assert t.dims == 2
    assert t.backend is SimpleBackend
    np.testing.assert_array_equal(t.to_numpy(), [[1, 2, 3], [4, 5, 6]])
    assert t.to_numpy().dtype == np.float64
    t3 = tensor([[[1.5], [2.5]], [[3.5], [4.5]]])
    assert t3.shape == (2, 2, 1)
    assert t3[1, 0, 0] == 3.5


def test_tensor_from_a_number_has_shape_one():
    t = tensor(2.5)
    assert t.shape == (1,)
    assert t.item() == 2.5


@pytest.mark.parametrize("ragged", [[[1, 2], [3]], [[1, 2], 3], [[[1], [2]], [[3, 4], [5]]]])
def test_ragged_list_raises_value_error(ragged):
    with pytest.raises(ValueError, match="ragged"):
        tensor(ragged)


def test_non_number_raises_type_error():
    with pytest.raises(TypeError):
        tensor([[1.0, "x"]])


def test_an_int_too_large_for_float64_is_named():
    with pytest.raises(
        OverflowError,
        match=r"^tensor\(\): the int 1\.000e\+400 \(401 digits\) is too large for float64",
    ):
        tensor([1.0, 10**400])
    # Shortened, even past Python's limit on converting ints to strings (4300 digits).
    with pytest.raises(OverflowError, match=r"the int -3\.000e\+5000 \(5001 digits\)"):
        tensor([[-3 * 10**5000]])
    assert tensor([2**1023]).item() == 2.0**1023  # large but representable


def test_an_allocation_too_large_names_the_shape_and_its_bytes():
    # 800 TB: beyond any machine's memory and the 128 TiB a process can address.
    shape = (10**6, 10**6, 100)
    message = r"\(1000000, 1000000, 100\) needs 800,000,000,000,000 bytes"
    for make in (zeros, ones, rand):
        with pytest.raises(
            MemoryError, match=rf"^{make.__name__}\(\): a tensor of shape {message}"
        ):
            make(shape)
    with pytest.raises(MemoryError, match=message):
        zeros(*shape)


def test_zeros_and_ones():
    z = zeros((2, 3))
    o = ones(4)
    assert z.shape == (2, 3)
    assert o.shape == (4,)
    np.testing.assert_array_equal(z.to_numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(o.to_numpy(), np.ones(4))
    assert not z.requires_grad
    assert ones((2,), requires_grad=True).is_leaf()


def test_rand_is_uniform_in_unit_interval_and_seeded_rand_reproduces():
    a = rand((3, 4), seed=7)
    b = rand((3, 4), seed=7)
    c = rand((3, 4), seed=8)
    assert a.shape == (3, 4)
    x = a.to_numpy()
    assert ((x >= 0.0) & (x < 1.0)).all()
    np.testing.assert_array_equal(x, b.to_numpy())
    assert not np.array_equal(x, c.to_numpy())
    gen = np.random.default_rng(3)
    np.testing.assert_array_equal(rand(5, seed=gen).to_numpy(), np.random.default_rng(3).random(5))


def test_rand_does_not_touch_global_random_state():
    np.random.seed(1234)
    before = np.random.get_state()[1].copy()
    rand((4, 4))
    rand((4, 4), seed=5)
    after = np.random.get_state()[1]
    np.testing.assert_array_equal(before, after)
    np.random.seed(1234)
    expected = np.random.random()
    np.random.seed(1234)
    rand((3,))
    assert np.random.random() == expected


# --------------------------------------------------------------- numpy interop


def test_from_numpy_shares_contiguous_float64_memory():
    arr = np.arange(6.0).reshape(2, 3)
    t = from_numpy(arr)
    assert t.shape == (2, 3)
    arr[0, 1] = 42.0
    assert t[0, 1] == 42.0
    t[1, 2] = -1.0
    assert arr[1, 2] == -1.0
    assert np.shares_memory(t.to_numpy(), arr)


def test_from_numpy_converts_other_arrays():
    ints = np.array([[1, 2], [3, 4]])
    t = from_numpy(ints)
    np.testing.assert_array_equal(t.to_numpy(), ints)
    assert t.to_numpy().dtype == np.float64
    base = np.arange(6.0).reshape(2, 3)
    tt = from_numpy(base.T)  # not C-contiguous: copied in row-major order
    assert tt.shape == (3, 2)
    np.testing.assert_array_equal(tt.to_numpy(), base.T)


@pytest.mark.parametrize("value", [np.array(3.5), np.float64(3.5), np.array(2, dtype=np.int32)])
def test_from_numpy_of_a_0d_array_is_0d_as_pytorch(value):
    # Regression: a 0-d array gave shape (1,) while zeros(()) gives (); torch.from_numpy gives ()
    t = from_numpy(value, requires_grad=True)
    assert t.shape == ()
    assert t.dims == 0
    assert t.size() == ()
    assert t.item() == float(value)
    (t * 2.0).backward()
    assert t.grad is not None
    assert t.grad.shape == ()
    assert t.grad.item() == 2.0


def test_to_numpy_is_a_view_of_host_storage():
    t = tensor([[1.0, 2.0], [3.0, 4.0]])
    n = t.to_numpy()
    assert n.shape == (2, 2)
    n[0, 0] = 7.0
    assert t[0, 0] == 7.0
    assert np.shares_memory(n, t.to_numpy())


def test_to_numpy_of_a_permuted_tensor():
    t = tensor([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])  # (1, 2, 3)
    x = t.to_numpy().copy()
    p = t.permute(2, 0, 1)
    assert p.shape == (3, 1, 2)
    np.testing.assert_array_equal(p.to_numpy(), np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(t.permute(0, 2, 1).to_numpy()[0], x[0].T)


# --------------------------------------------------------------- reading values


def test_item():
    assert tensor([3.5]).item() == 3.5
    assert tensor([[[-2.0]]]).item() == -2.0
    assert float(tensor([1.25])) == 1.25
    assert tensor([[1.0, 2.0]]).sum().item() == 3.0


def test_int_and_float_of_a_one_element_tensor_as_pytorch():
    """``int(t)`` truncates toward zero as PyTorch's (it raised TypeError); ``float(t)`` too.

    A tensor of any other number of elements raises PyTorch's ValueError.
    """
    assert int(tensor([3.7])) == 3
    assert int(tensor([[-3.7]])) == -3
    assert isinstance(int(tensor([2.0])), int)
    assert float(tensor([[2.5]])) == 2.5
    for many in (tensor([1.0, 2.0]), zeros((0,))):
        for convert in (int, float):
            with pytest.raises(ValueError, match="only one element tensors can be converted"):
                convert(many)
    torch = pytest.importorskip("torch")
    assert int(torch.tensor([3.7])) == 3
    assert int(torch.tensor([[-3.7]])) == -3
    with pytest.raises(ValueError, match="only one element tensors can be converted"):
        int(torch.tensor([1.0, 2.0]))


def test_item_of_many_elements_raises():
    with pytest.raises(RuntimeError, match=r"one-element.*\(2,\)"):
        tensor([1.0, 2.0]).item()


def test_indexing():
    t = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t[0, 0] == 1.0
    assert t[1, 2] == 6.0
    assert t[(0, 1)] == 2.0
    assert t[-1, -1] == 6.0
    assert t.T[2, 1] == 6.0
    assert tensor([7.0, 8.0])[1] == 8.0
    t[0, 2] = 30.0
    assert t.to_numpy()[0, 2] == 30.0


# (0,) is no longer an error: a partial index is a view (the first row), as in PyTorch.
@pytest.mark.parametrize("index", [(2, 0), (0, 3), (-3, 0), (2,), (0, 0, 0)])
def test_bad_index_raises_indexing_error(index):
    t = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(IndexingError, match=r"\(2, 3\)"):
        t[index]


# --------------------------------------------------------------- view


def test_view():
    t = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    v = t.view(3, 2)
    assert v.shape == (3, 2)
    np.testing.assert_array_equal(v.to_numpy(), [[1, 2], [3, 4], [5, 6]])
    assert np.shares_memory(v.to_numpy(), t.to_numpy())
    assert t.view(6).shape == (6,)
    assert t.view((1, 6)).shape == (1, 6)


def test_view_with_minus_one():
    t = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.view(-1).shape == (6,)
    assert t.view(3, -1).shape == (3, 2)
    assert t.view(-1, 1, 2).shape == (3, 1, 2)
    np.testing.assert_array_equal(t.view(-1).to_numpy(), [1, 2, 3, 4, 5, 6])


def test_view_of_a_non_contiguous_tensor_raises():
    t = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).permute(1, 0)
    with pytest.raises(RuntimeError, match="contiguous"):
        t.view(6)
    np.testing.assert_array_equal(t.contiguous().view(6).to_numpy(), [1, 4, 2, 5, 3, 6])


@pytest.mark.parametrize("shape", [(4,), (2, 2), (7, -1), (4, -1), (2, 3, 2)])
def test_view_to_a_different_size_raises(shape):
    t = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(IndexingError, match=r"\(2, 3\)"):
        t.view(*shape)


def test_view_with_two_minus_ones_raises():
    with pytest.raises(IndexingError, match="more than one -1"):
        tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).view(-1, -1)


# --------------------------------------------------------------- special values


def test_log_of_negative_is_nan_and_log_of_zero_is_minus_inf():
    out = tensor([-1.0, 0.0, 1.0, math.e]).log().to_numpy()
    assert math.isnan(out[0])
    assert out[1] == -math.inf
    assert out[2] == 0.0
    assert out[3] == pytest.approx(1.0)


def test_sqrt_of_negative_is_nan():
    out = tensor([-4.0, 0.0, 9.0]).sqrt().to_numpy()
    assert math.isnan(out[0])
    assert list(out[1:]) == [0.0, 3.0]


def test_scalar_operands_on_either_side():
    t = tensor([1.0, 2.0])
    np.testing.assert_array_equal((1.0 - t).to_numpy(), [0.0, -1.0])
    np.testing.assert_array_equal((6.0 / t).to_numpy(), [6.0, 3.0])
    np.testing.assert_array_equal((2 * t + 1).to_numpy(), [3.0, 5.0])
    np.testing.assert_array_equal((t < 1.5).to_numpy(), [1.0, 0.0])
    np.testing.assert_array_equal((t == 2.0).to_numpy(), [0.0, 1.0])
    with pytest.raises(TypeError):
        t + "1"


def test_truth_value_of_many_elements_raises():
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(tensor([1.0, 2.0]))
    assert bool(tensor([1.0]))


# --------------------------------------------------------------- finding backends


class FakeEntryPoints:
    def __init__(self, **registered):
        self.registered = registered

    def entry_points(self, group):
        assert group == registry.ENTRY_POINT_GROUP
        return [metadata.EntryPoint(n, v, group) for n, v in self.registered.items()]


def test_one_backend_per_ops_class():
    # The course writes TensorBackend(SimpleOps): the same object, kernels and name.
    assert TensorBackend(SimpleOps) is SimpleBackend
    assert TensorBackend(SimpleOps, "simple") is SimpleBackend
    assert SimpleBackend.name == "simple"
    renamed = TensorBackend(SimpleOps, "renamed")
    assert renamed is not SimpleBackend
    assert renamed == SimpleBackend
    assert hash(renamed) == hash(SimpleBackend)
    assert renamed.name == "renamed"
    unnamed = type("UnnamedOps", (SimpleOps,), {"name": ""})
    assert TensorBackend(unnamed).name == "UnnamedOps"
    assert TensorBackend(unnamed) is TensorBackend(unnamed)


def test_tensor_name_defaults_to_a_unique_id_string():
    # The course's graph drawings label nodes by name; an unnamed tensor has its id.
    a, b = ones(2), ones(2)
    assert isinstance(a.name, str)
    assert a.name == str(a.unique_id) != b.name
    named = Tensor(a._tensor, name="weights")
    assert named.name == "weights"
    named.name = None
    assert named.name == str(named.unique_id)


def test_backend_simple_is_the_simple_backend():
    assert backend("simple") is SimpleBackend
    assert available_backends()["simple"] == "minitorch.tensor:SimpleBackend"


@pytest.mark.parametrize(("name", "package"), [("fast", "mt-fast"), ("cuda", "mt-cuda")])
def test_missing_backend_says_what_to_install(monkeypatch, name, package):
    monkeypatch.setattr(registry, "metadata", FakeEntryPoints())
    assert available_backends() == {"simple": "minitorch.tensor:SimpleBackend"}
    with pytest.raises(LookupError, match=package):
        backend(name)


def test_unknown_backend_lists_known_ones(monkeypatch):
    monkeypatch.setattr(registry, "metadata", FakeEntryPoints())
    with pytest.raises(LookupError, match="simple"):
        backend("tpu")


def test_backend_is_found_through_its_entry_point(monkeypatch):
    monkeypatch.setattr(
        registry, "metadata", FakeEntryPoints(fast="minitorch.tensor:SimpleBackend")
    )
    assert available_backends()["fast"] == "minitorch.tensor:SimpleBackend"
    assert backend("fast") is SimpleBackend


def test_entry_point_that_is_not_a_backend_raises(monkeypatch):
    monkeypatch.setattr(registry, "metadata", FakeEntryPoints(bad="minitorch.tensor:tensor"))
    with pytest.raises(TypeError, match="not a TensorBackend"):
        backend("bad")


def test_importing_minitorch_tensor_does_not_import_numba():
    code = textwrap.dedent(
        """
        import sys
        import minitorch.tensor
        t = minitorch.tensor.tensor([[1.0, 2.0]], backend=minitorch.tensor.backend("simple"))
        assert t[0, 1] == 2.0
        assert "numba" not in sys.modules, "numba was imported"
        assert "minitorch.tensor.testing" not in sys.modules
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("a_shape", "out_shape"), [((2, 5), (5,)), ((3,), (2,)), ((2, 3), (1, 3))])
def test_map_into_out_needs_the_input_to_broadcast_to_out(a_shape, out_shape):
    """Regression: map checked only that the shapes broadcast together."""
    with pytest.raises(IndexingError) as err:
        SimpleBackend.id_map(ones(a_shape), zeros(out_shape))
    assert str(a_shape) in str(err.value)
    assert str(out_shape) in str(err.value)


def test_map_into_writes_the_callers_tensor_and_bumps_its_version():
    # The root name a backend of another package calls from its own ``map``.
    from minitorch.operators import neg

    out = zeros((2, 3))
    before = out.version
    assert map_into(SimpleOps.map_kernel(neg), tensor([1.0, -2.0, 3.0]), out) is out
    np.testing.assert_array_equal(out.to_numpy(), [[-1.0, 2.0, -3.0]] * 2)
    assert out.version == before + 1


@pytest.mark.parametrize("order", [(None, 0), (0.0, 1), (True, 0), ("1", "0")])
def test_permute_with_non_int_entries_names_the_order(order):
    """Regression: ``permute(None, 0)`` raised sorted()'s TypeError."""
    with pytest.raises(IndexingError, match=r"not a permutation of \(0, 1\).*int"):
        zeros((2, 3)).permute(*order)


def test_np_array_of_a_tensor_gives_its_values():
    """Regression: ``np.array(tensor)`` returned an empty array."""
    t = tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.array(t), [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(t.permute(1, 0)), [[1.0, 3.0], [2.0, 4.0]])
    assert np.array(t, dtype=np.float32).dtype == np.float32
    copied = np.array(t, copy=True)
    copied[0, 0] = 9.0
    assert t[0, 0] == 1.0
    shared = np.asarray(t)
    shared[0, 0] = 9.0  # np.asarray shares host memory, as with torch tensors
    assert t[0, 0] == 9.0


SHAPE_MAKERS = [zeros, ones, rand]


@pytest.mark.parametrize("make", SHAPE_MAKERS)
@pytest.mark.parametrize("shape", [(2.9, 3), (True, 2), (2, False), 3.0, "3", (None,), ((2,),)])
def test_non_integer_shapes_are_a_type_error(make, shape):
    """Regression: floats were truncated, bools taken as sizes."""
    with pytest.raises(TypeError, match=r"int"):
        make(shape)


@pytest.mark.parametrize("make", SHAPE_MAKERS)
def test_numpy_integer_sizes_are_accepted(make):
    assert make((np.int64(2), np.int32(3))).shape == (2, 3)
    assert make(np.int64(4)).shape == (4,)
    assert make(np.array([2, 1])).shape == (2, 1)


@pytest.mark.parametrize("shape", [-5, (-1, 3), (2, -2)])
def test_negative_sizes_raise_the_same_error_for_ints_and_tuples(shape):
    """Regression: ``zeros(-5)`` gave numpy's ValueError."""
    with pytest.raises(IndexingError, match=r"negative size \(-\d\)"):
        zeros(shape)


@pytest.mark.parametrize("shape", [(3.9, 2), (True, 6), (6.0,), ("6",)])
def test_view_with_non_integer_sizes_is_a_type_error(shape):
    """Regression: ``view(3.9, 2)`` viewed as (3, 2)."""
    with pytest.raises(TypeError, match=r"int"):
        zeros((2, 3)).view(*shape)


@pytest.mark.parametrize("shape", [(-2, -3), (-2, 3), (6, -3)])
def test_view_with_sizes_below_minus_one_says_so(shape):
    """Regression: the message said (-2, -3) had 6 elements."""
    with pytest.raises(IndexingError, match=r"non-negative, or -1"):
        zeros((2, 3)).view(*shape)


def test_view_accepts_numpy_integer_sizes():
    assert zeros((2, 3)).view(np.int64(3), np.int64(2)).shape == (3, 2)


@pytest.mark.parametrize("key", [None, (None, 0), (0, None)])
def test_newaxis_says_it_is_not_supported(key):
    """``t[None]`` is a clear TypeError (slices and ``...`` are views)."""
    t = zeros((2, 3))
    with pytest.raises(TypeError, match="None \\(newaxis\\) is not supported"):
        t[key]
    with pytest.raises(TypeError, match="None \\(newaxis\\) is not supported"):
        t[key] = 1.0


@pytest.mark.parametrize("key", [(0.0, 1), ("a", 0), (True, 0)])
def test_non_integer_index_entries_are_an_indexing_error(key):
    with pytest.raises(IndexingError, match="ints"):
        zeros((2, 3))[key]


def test_function_apply_without_a_tensor_argument_says_so():
    """Regression: ``Function.apply`` with no tensor raised IndexError."""
    from minitorch.tensor import Neg

    with pytest.raises(TypeError, match=r"Neg.apply needs at least one Tensor"):
        Neg.apply(3.0)


@pytest.mark.parametrize(
    ("array", "kind"),
    [
        (np.array([1 + 2j, 3.0]), "complex"),
        (np.array(["1.0", "2.0"]), "<U"),
        (np.array([1.0, None], dtype=object), "object"),
    ],
)
def test_from_numpy_rejects_non_real_dtypes(array, kind):
    """Regression: complex input lost its imaginary part with a warning."""
    with pytest.raises(TypeError, match=kind):
        from_numpy(array)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8, np.float32, np.float64])
def test_from_numpy_converts_real_dtypes(dtype):
    t = from_numpy(np.array([0, 1, 1], dtype=dtype))
    np.testing.assert_array_equal(t.to_numpy(), [0.0, 1.0, 1.0])


def test_repr_shows_requires_grad_and_grad_fn():
    x = tensor([0.5], requires_grad=True)
    assert repr(x) == "tensor([0.5000], requires_grad=True)"
    assert repr(x * 2.0) == "tensor([1.0000], grad_fn=<MulBackward0>)"
