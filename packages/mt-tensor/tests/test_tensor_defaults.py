"""One default backend, and PyTorch's varargs shapes."""

from __future__ import annotations

import numpy as np
import pytest

from minitorch.tensor import (
    IndexingError,
    SimpleBackend,
    SimpleOps,
    Tensor,
    TensorBackend,
    TensorData,
    default_backend,
    from_numpy,
    get_default_backend,
    ones,
    rand,
    set_default_backend,
    tensor,
    zeros,
)

pytestmark = pytest.mark.task2_3

# A backend that is not SimpleBackend but runs on the host: a distinct ops class.
Other = TensorBackend(type("OtherOps", (SimpleOps,), {}), "other")


def test_the_default_is_the_simple_backend() -> None:
    assert get_default_backend() is SimpleBackend
    for t in (tensor([1.0]), zeros(2), ones(2), rand(2), from_numpy(np.ones(2))):
        assert t.backend is SimpleBackend
    assert Tensor(TensorData([1.0], (1,))).backend is SimpleBackend


def test_the_context_manager_sets_and_restores_the_default() -> None:
    with default_backend(Other) as b:
        assert b is Other
        assert get_default_backend() is Other
        made = [tensor([1.0, 2.0]), zeros(2, 2), ones((3,)), rand(2, seed=0)]
        made += [from_numpy(np.ones(2)), Tensor.make([1.0], (1,))]
        assert all(t.backend is Other for t in made)
        # An explicit backend still wins.
        assert zeros(2, backend=SimpleBackend).backend is SimpleBackend
    assert get_default_backend() is SimpleBackend


def test_the_context_manager_restores_after_an_exception() -> None:
    with pytest.raises(KeyError), default_backend(Other):
        raise KeyError("boom")
    assert get_default_backend() is SimpleBackend


def test_the_setter_takes_a_backend_or_a_name() -> None:
    try:
        set_default_backend(Other)
        assert zeros(1).backend is Other
        set_default_backend("simple")
        assert zeros(1).backend is SimpleBackend
    finally:
        set_default_backend(SimpleBackend)


def test_a_bad_default_is_rejected_and_changes_nothing() -> None:
    with pytest.raises(TypeError, match="TensorBackend or a name"):
        set_default_backend(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="TensorBackend or a name"):
        set_default_backend(None)  # type: ignore[arg-type]
    with pytest.raises(LookupError, match="not installed"):
        set_default_backend("no-such-backend")
    assert get_default_backend() is SimpleBackend


def test_host_backends_mix_on_the_first_operands_backend() -> None:
    with default_backend(Other):
        a = ones(2)
    b = ones(2)
    assert (a + b).backend is Other
    assert (b + a).backend is SimpleBackend
    np.testing.assert_array_equal((a + b).to_numpy(), [2.0, 2.0])


def test_to_takes_a_name() -> None:
    a = ones(2, backend=Other)
    moved = a.to("simple")
    assert moved.backend is SimpleBackend
    np.testing.assert_array_equal(moved.to_numpy(), [1.0, 1.0])


@pytest.mark.parametrize("make", [zeros, ones, rand])
def test_varargs_and_tuple_shapes_agree(make) -> None:
    assert make(2, 3).shape == (2, 3)
    assert make((2, 3)).shape == (2, 3)
    assert make([2, 3]).shape == (2, 3)
    assert make(4).shape == (4,)
    # The course's positional backend.
    assert make((2, 3), Other).backend is Other
    assert make(2, 3, Other).shape == (2, 3)


def test_varargs_values_and_seeds() -> None:
    np.testing.assert_array_equal(zeros(2, 2).to_numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(ones(2, 2).to_numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(rand(2, 2, seed=3).to_numpy(), rand((2, 2), seed=3).to_numpy())


def test_bad_varargs_shapes_raise() -> None:
    with pytest.raises(TypeError, match="needs a shape"):
        zeros()
    with pytest.raises(TypeError, match="given twice"):
        zeros((2,), Other, backend=Other)
    with pytest.raises(TypeError, match="must be an int"):
        ones(2, 2.5)
    with pytest.raises(IndexingError, match="negative"):
        rand(2, -1)


def test_varargs_shapes_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for make, ref in ((zeros, torch.zeros), (ones, torch.ones)):
        np.testing.assert_array_equal(make(2, 3).to_numpy(), ref(2, 3).numpy())
        np.testing.assert_array_equal(make((2, 3)).to_numpy(), ref((2, 3)).numpy())
    assert tuple(rand(2, 3).shape) == tuple(torch.rand(2, 3).shape)
