"""Task 4.4: max, argmax, softmax, logsoftmax and dropout."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.fast import FastBackend
from minitorch.tensor import from_numpy, grad_check, tensor

pytestmark = pytest.mark.task4_4


@st.composite
def array_and_dim(draw: st.DrawFn) -> tuple[np.ndarray, int]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.standard_normal(shape) * 5, draw(st.integers(-len(shape), len(shape) - 1))


@given(case=array_and_dim())
def test_max_forward(case) -> None:
    x, dim = case
    t = from_numpy(x, FastBackend)
    np.testing.assert_array_equal(nn.max(t, dim).to_numpy(), x.max(axis=dim, keepdims=True))
    assert nn.max(t).to_numpy().tolist() == [x.max()]


def test_max_gradient(backend) -> None:
    x = from_numpy(np.random.default_rng(0).standard_normal((3, 4)), backend)
    grad_check(lambda a: nn.max(a, 1), x, samples=None)
    grad_check(lambda a: nn.max(a, 0), x, samples=None)
    grad_check(lambda a: nn.max(a), x, samples=None)


def test_max_ties_split_the_gradient_like_torch_amax(torch_ref) -> None:
    torch = torch_ref.torch
    x = np.array([[1.0, 5.0, 5.0], [2.0, 2.0, 2.0]])
    t = from_numpy(x, FastBackend).requires_grad_(True)
    nn.max(t, 1).sum().backward()
    tx = torch.from_numpy(x).requires_grad_(True)
    torch.amax(tx, 1, keepdim=True).sum().backward()
    np.testing.assert_allclose(t.grad.to_numpy(), tx.grad.numpy())
    np.testing.assert_allclose(t.grad.to_numpy(), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])


def test_max_ties_without_torch() -> None:
    t = tensor([[4.0, 4.0], [1.0, 0.0]], backend=FastBackend).requires_grad_(True)
    nn.max(t).sum().backward()
    assert t.grad.to_numpy().tolist() == [[0.5, 0.5], [0.0, 0.0]]


@given(case=array_and_dim())
def test_argmax_is_one_hot_at_the_first_maximum(case) -> None:
    x, dim = case
    x = np.round(x)  # make ties likely
    out = nn.argmax(from_numpy(x, FastBackend), dim).to_numpy()
    expected = np.zeros_like(x)
    np.put_along_axis(expected, np.expand_dims(x.argmax(axis=dim), dim), 1.0, axis=dim)
    np.testing.assert_array_equal(out, expected)


def test_argmax_has_no_history() -> None:
    t = tensor([[1.0, 3.0, 2.0]], backend=FastBackend).requires_grad_(True)
    out = nn.argmax(t, 1)
    assert out.to_numpy().tolist() == [[0.0, 1.0, 0.0]]
    assert out.is_constant()


def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


@given(case=array_and_dim())
def test_softmax_and_logsoftmax(case) -> None:
    x, dim = case
    t = from_numpy(x, FastBackend)
    s = nn.softmax(t, dim).to_numpy()
    np.testing.assert_allclose(s, _softmax(x, dim), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s.sum(axis=dim), 1.0)
    np.testing.assert_allclose(
        nn.logsoftmax(t, dim).to_numpy(), np.log(_softmax(x, dim)), atol=1e-10
    )


@pytest.mark.parametrize("big", [1e4, -1e4, 1e300])
def test_softmax_is_stable_for_large_inputs(big) -> None:
    t = tensor([[big, 0.0, -big], [big, big, big]], backend=FastBackend)
    s = nn.softmax(t, 1).to_numpy()
    ls = nn.logsoftmax(t, 1).to_numpy()
    assert np.isfinite(s).all()
    assert np.isfinite(ls).all()
    np.testing.assert_allclose(s.sum(axis=1), 1.0)
    np.testing.assert_allclose(s[1], 1 / 3)
    assert ls[1].tolist() == pytest.approx([-np.log(3)] * 3)


@pytest.mark.parametrize("fn", [nn.softmax, nn.logsoftmax])
def test_softmax_gradients(backend, fn) -> None:
    x = from_numpy(np.random.default_rng(1).standard_normal((3, 4)) * 3, backend)
    grad_check(
        lambda a: fn(a, 1) * from_numpy(np.arange(12.0).reshape(3, 4), backend), x, samples=None
    )
    grad_check(
        lambda a: fn(a, 0) * from_numpy(np.arange(12.0).reshape(3, 4), backend), x, samples=None
    )


def test_softmax_matches_torch(torch_ref) -> None:
    torch = torch_ref.torch
    x = np.random.default_rng(2).standard_normal((4, 5)) * 10
    g = np.random.default_rng(3).standard_normal((4, 5))
    for ours, theirs in ((nn.softmax, torch.softmax), (nn.logsoftmax, torch.log_softmax)):
        tx = torch.from_numpy(x).requires_grad_(True)
        theirs(tx, 1).backward(torch.from_numpy(g))
        t = from_numpy(x, FastBackend).requires_grad_(True)
        out = ours(t, 1)
        out.backward(from_numpy(g, FastBackend))
        np.testing.assert_allclose(
            out.to_numpy(), theirs(torch.from_numpy(x), 1).numpy(), atol=1e-12
        )
        np.testing.assert_allclose(t.grad.to_numpy(), tx.grad.numpy(), atol=1e-12)


def test_dim_errors() -> None:
    t = tensor([[1.0, 2.0]], backend=FastBackend)
    for fn in (nn.softmax, nn.logsoftmax, nn.argmax, nn.max):
        with pytest.raises(IndexError, match="out of range"):  # IndexingError, as torch
            fn(t, 2)
        with pytest.raises(TypeError):
            fn([1.0, 2.0], 0)  # type: ignore[arg-type]


def test_max_and_argmax_over_an_empty_dim_raise_naming_it() -> None:
    # As PyTorch: "argmax(): Expected reduction dim 1 to have non-zero size" (an IndexError).
    t = from_numpy(np.zeros((2, 0)), FastBackend)
    for fn in (nn.argmax, nn.max):
        for dim in (1, -1):
            expected = rf"^{fn.__name__}\(\): Expected reduction dim 1 to have non-zero size"
            with pytest.raises(IndexError, match=expected):
                fn(t, dim)
    with pytest.raises(IndexError, match=r"^max\(\): the tensor of shape \(2, 0\) has no elements"):
        nn.max(t)
    # Over a dim of non-zero size the result is empty, as torch.amax / argmax give.
    assert nn.max(t, 0).shape == (1, 0)
    assert nn.argmax(t, 0).shape == (2, 0)


def test_max_and_argmax_over_an_empty_dim_match_torchs_message(torch_ref) -> None:
    torch = torch_ref.torch
    t, theirs = from_numpy(np.zeros((3, 0)), FastBackend), torch.zeros(3, 0)
    for ours, name in ((nn.argmax, "argmax"), (nn.max, "max")):
        with pytest.raises(IndexError) as expected:
            getattr(torch, name)(theirs, 1)
        with pytest.raises(IndexError) as got:
            ours(t, 1)
        assert str(got.value).startswith(str(expected.value).rstrip("."))


def test_dropout_rate_zero_and_ignore_return_the_input() -> None:
    t = from_numpy(np.random.default_rng(0).random((5, 5)), FastBackend)
    assert nn.dropout(t, 0.0) is t
    assert nn.dropout(t, 0.7, ignore=True) is t
    assert nn.dropout(t, 1.0, ignore=True) is t


def test_dropout_rate_one_drops_everything() -> None:
    t = from_numpy(np.random.default_rng(0).random((4, 4)), FastBackend).requires_grad_(True)
    out = nn.dropout(t, 1.0)
    assert np.all(out.to_numpy() == 0.0)
    out.sum().backward()
    assert np.all(t.grad.to_numpy() == 0.0)


def test_dropout_keeps_the_expected_value() -> None:
    t = from_numpy(np.ones((200, 100)), FastBackend)
    out = nn.dropout(t, 0.25, seed=0).to_numpy()
    kept = out != 0.0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(out[kept], 1 / 0.75)  # inverted dropout, as PyTorch
    assert abs(out.mean() - 1.0) < 0.02


def test_dropout_gradient_uses_the_same_mask() -> None:
    t = from_numpy(np.ones((10, 10)), FastBackend).requires_grad_(True)
    out = nn.dropout(t, 0.5, seed=np.random.default_rng(1))
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.to_numpy(), out.to_numpy())


def test_dropout_is_reproducible_and_leaves_the_global_rng_alone() -> None:
    state = np.random.get_state()[1].copy()
    t = from_numpy(np.ones((8, 8)), FastBackend)
    a = nn.dropout(t, 0.5, seed=3).to_numpy()
    b = nn.dropout(t, 0.5, seed=3).to_numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


@pytest.mark.parametrize("rate", [-0.1, 1.5, float("nan")])
def test_dropout_bad_rate_raises(rate) -> None:
    with pytest.raises(ValueError, match="rate must be in"):
        nn.dropout(tensor([1.0]), rate)


@pytest.mark.parametrize("rate", ["a", "0.5", None, [0.5], True, 0.5j])
@pytest.mark.parametrize("ignore", [False, True])
def test_dropout_non_numeric_rate_is_a_type_error_naming_rate(rate, ignore) -> None:
    # Regression: dropout(x, 'a') said "could not convert string to float"
    t = from_numpy(np.ones((2, 2)), FastBackend)
    with pytest.raises(
        TypeError, match=rf"^dropout rate must be a real number, got {type(rate).__name__}"
    ):
        nn.dropout(t, rate, ignore=ignore)


NAN_ROWS = [[1.0, np.nan, 3.0], [4.0, 6.0, 6.0]]


def check_max_and_argmax_with_a_nan(be) -> np.ndarray:  # type: ignore[no-untyped-def]
    """nn.argmax and nn.max of ``NAN_ROWS`` on ``be``; returns the gradient of ``max``."""
    x = tensor(NAN_ROWS, backend=be)
    assert nn.argmax(x, 1).to_numpy().tolist() == [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]], be
    t = tensor(NAN_ROWS, backend=be).requires_grad_(True)
    top = nn.max(t, 1)
    assert np.isnan(top.to_numpy()[0, 0])
    assert top.to_numpy()[1, 0] == 6.0
    top.sum().backward()
    grad = t.grad.to_numpy()
    assert np.isnan(grad[0]).all(), be
    assert grad[1].tolist() == [0.0, 0.5, 0.5], be
    return grad


def test_argmax_and_max_with_a_nan_follow_pytorch(backend) -> None:
    """A NaN is the maximum: ``argmax`` marks it (it marked nothing), as ``torch.argmax``.

    ``nn.max`` keeps ``torch.amax``'s rule: the maximum is NaN and so is its gradient.
    """
    grad = check_max_and_argmax_with_a_nan(backend)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(NAN_ROWS, dtype=torch.float64, requires_grad=True)
    assert torch.argmax(tx, 1).tolist() == [1, 1]
    torch.amax(tx, 1, keepdim=True).sum().backward()
    np.testing.assert_array_equal(grad, tx.grad.numpy())


INFINITE_ROWS = np.array(
    [
        [np.inf, 1.0, 2.0],
        [-np.inf, 1.0, 2.0],
        [-np.inf, -np.inf, -np.inf],
        [np.nan, 1.0, 2.0],
        [0.5, 1.0, 2.0],
        [np.inf, -np.inf, 0.0],
    ]
)
"""Rows with infinities and a NaN, beside a finite row (as PyTorch, each row on its own)."""


@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_family_and_max_with_infinities_match_torch(torch_ref, backend, dim) -> None:
    """An inf or NaN changes only the softmax of its own row (or column), as PyTorch's."""
    torch = torch_ref.torch
    g = np.random.default_rng(5).standard_normal(INFINITE_ROWS.shape)
    cases = (
        (lambda t: nn.softmax(t, dim), lambda t: torch.softmax(t, dim)),
        (lambda t: nn.logsoftmax(t, dim), lambda t: torch.log_softmax(t, dim)),
    )
    for ours, theirs in cases:
        tx = torch.from_numpy(INFINITE_ROWS.copy()).requires_grad_(True)
        expected = theirs(tx)
        expected.backward(torch.from_numpy(g))
        mx = from_numpy(INFINITE_ROWS.copy(), backend).requires_grad_(True)
        out = ours(mx)
        out.backward(from_numpy(g, backend))
        np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), atol=1e-12)
    top = nn.max(from_numpy(INFINITE_ROWS, backend), dim).to_numpy()
    theirs = torch.amax(torch.from_numpy(INFINITE_ROWS), dim, keepdim=True).numpy()
    np.testing.assert_array_equal(top, theirs)
