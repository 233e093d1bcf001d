"""Task 4.3: tile, average and max pooling."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.fast import FastBackend
from minitorch.tensor import Tensor, from_numpy, grad_check

pytestmark = pytest.mark.task4_3


@st.composite
def pool_case(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, int]]:
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    nh, nw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    batch, channel = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.standard_normal((batch, channel, nh * kh, nw * kw)), (kh, kw)


def _windows(x: np.ndarray, kh: int, kw: int) -> np.ndarray:
    b, c, h, w = x.shape
    return x.reshape(b, c, h // kh, kh, w // kw, kw).transpose(0, 1, 2, 4, 3, 5)


@given(case=pool_case())
def test_tile(case) -> None:
    x, (kh, kw) = case
    tiled, nh, nw = nn.tile(from_numpy(x, FastBackend), (kh, kw))
    assert (nh, nw) == (x.shape[2] // kh, x.shape[3] // kw)
    expected = _windows(x, kh, kw).reshape(*x.shape[:2], nh, nw, kh * kw)
    np.testing.assert_array_equal(tiled.to_numpy(), expected)


def test_tile_is_a_view_when_the_layout_allows() -> None:
    x = from_numpy(np.arange(2 * 3 * 4 * 6, dtype=float).reshape(2, 3, 4, 6), FastBackend)
    rows, _, _ = nn.tile(x, (1, 3))  # windows along a row are contiguous already
    assert rows.tuple()[0] is x.tuple()[0]
    whole, _, _ = nn.tile(x, (2, 6))  # a window is whole rows
    assert whole.tuple()[0] is x.tuple()[0]
    blocks, _, _ = nn.tile(x, (2, 3))  # 2 x 3 blocks interleave: one copy
    assert blocks.tuple()[0] is not x.tuple()[0]


def test_tile_gradient(backend) -> None:
    x = from_numpy(np.random.default_rng(0).standard_normal((1, 2, 4, 4)), backend)
    grad_check(lambda a: nn.tile(a, (2, 2))[0], x)


@given(case=pool_case())
def test_avgpool2d_matches_reference(case) -> None:
    x, (kh, kw) = case
    out = nn.avgpool2d(from_numpy(x, FastBackend), (kh, kw))
    np.testing.assert_allclose(out.to_numpy(), _windows(x, kh, kw).mean(axis=(4, 5)), atol=1e-12)


@given(case=pool_case())
def test_maxpool2d_matches_reference(case) -> None:
    x, (kh, kw) = case
    out = nn.maxpool2d(from_numpy(x, FastBackend), (kh, kw))
    np.testing.assert_array_equal(out.to_numpy(), _windows(x, kh, kw).max(axis=(4, 5)))


@pytest.mark.parametrize("pool", [nn.avgpool2d, nn.maxpool2d])
def test_pool_gradients(backend, pool) -> None:
    x = from_numpy(np.random.default_rng(1).standard_normal((2, 2, 4, 6)), backend)
    grad_check(lambda a: pool(a, (2, 3)), x, samples=10)


def test_avgpool2d_does_not_copy_a_contiguous_input() -> None:
    x = from_numpy(np.ones((2, 3, 8, 8)), FastBackend).requires_grad_(True)
    out = nn.avgpool2d(x, (4, 4))
    assert out.shape == (2, 3, 2, 2)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.to_numpy(), np.full((2, 3, 8, 8), 1 / 16))


def test_avgpool2d_keeps_no_tensor_alive_after_its_graph(backend) -> None:
    # Regression: an averaging matrix was kept in a process-wide lru_cache, holding backend
    # tensors (GPU memory on CudaBackend) for the life of the process. avgpool2d saves
    # only shapes now: after the backward pass and the graph, no tensor it made is left.
    def tensors() -> int:
        gc.collect()
        # type(), not isinstance(): isinstance would dereference dead weak proxies (torch's).
        return sum(1 for o in gc.get_objects() if issubclass(type(o), Tensor))

    before = tensors()
    x = from_numpy(np.ones((1, 1, 6, 10)), backend).requires_grad_(True)
    out = nn.avgpool2d(x, (3, 5))
    out.sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.to_numpy(), np.full((1, 1, 6, 10), 1 / 15))
    del out, x
    assert tensors() == before


INF, NAN = np.inf, np.nan
NON_FINITE = np.array(
    [
        [
            [
                [INF, 1.0, 2.0, 3.0, 1.0, 1.0],
                [1.0, 1.0, 2.0, 3.0, 1.0, -INF],
                [1.0, 2.0, NAN, 4.0, INF, 0.0],
                [0.0, 1.0, 2.0, 3.0, 5.0, -INF],
            ]
        ]
    ]
)
"""Windows of 2 x 2 holding inf, -inf, NaN and inf with -inf, beside finite ones."""


def test_avgpool2d_keeps_an_infinity_in_its_own_window(backend) -> None:
    """One window's inf or NaN never reaches another window, forward or backward.

    (The pool was a product with a 0/1 averaging matrix: ``inf * 0`` made every other
    window of the band of rows NaN, ``[[inf, 1, 2, 3], [1, 1, 2, 3]]`` gave
    ``[inf, nan]`` where PyTorch gives ``[inf, 2.5]``.)
    """
    x = from_numpy(np.array([[[[INF, 1.0, 2.0, 3.0], [1.0, 1.0, 2.0, 3.0]]]]), backend)
    assert nn.avgpool2d(x, (2, 2)).to_numpy().tolist() == [[[[INF, 2.5]]]]
    band = from_numpy(np.array([[[[INF, 1.0, 2.0, 3.0]]]]), backend)
    assert nn.avgpool2d(band, (1, 2)).to_numpy().tolist() == [[[[INF, 2.5]]]]
    t = from_numpy(NON_FINITE.copy(), backend).requires_grad_(True)
    out = nn.avgpool2d(t, (2, 2))
    with np.errstate(invalid="ignore"):  # inf - inf in a window's sum: NaN there
        expected = _windows(NON_FINITE, 2, 2).mean(axis=(4, 5))
    np.testing.assert_array_equal(out.to_numpy(), expected)
    g = np.arange(1.0, 7.0).reshape(1, 1, 2, 3)
    g[0, 0, 1, 2] = NAN  # an upstream NaN stays in its window too
    out.backward(from_numpy(g, backend))
    share = np.repeat(np.repeat(g / 4, 2, axis=2), 2, axis=3)
    np.testing.assert_array_equal(t.grad.to_numpy(), share)


@pytest.mark.parametrize("kernel", [(2, 2), (1, 2), (2, 3)])
def test_pools_with_infinities_and_nan_match_torch(torch_ref, backend, kernel) -> None:
    torch = torch_ref.torch
    g = np.random.default_rng(4).standard_normal((1, 1, 4 // kernel[0], 6 // kernel[1]))
    for ours, theirs in (
        (nn.avgpool2d, torch.nn.functional.avg_pool2d),
        (nn.maxpool2d, torch.nn.functional.max_pool2d),
    ):
        # No ties in a window (max_pool2d gives a tie's gradient to one element).
        x = NON_FINITE + np.arange(NON_FINITE.size).reshape(NON_FINITE.shape) / 64
        tx = torch.from_numpy(x).requires_grad_(True)
        expected = theirs(tx, kernel)
        expected.backward(torch.from_numpy(g))
        mx = from_numpy(x, backend).requires_grad_(True)
        out = ours(mx, kernel)
        out.backward(from_numpy(g, backend))
        np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), atol=1e-12)


def test_maxpool2d_ties_share_the_gradient() -> None:
    x = from_numpy(np.array([[[[1.0, 3.0], [3.0, 0.0]]]]), FastBackend).requires_grad_(True)
    nn.maxpool2d(x, (2, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.to_numpy(), [[[[0.0, 0.5], [0.5, 0.0]]]])


@pytest.mark.parametrize("kernel", [(2, 2), (4, 2), (1, 3)])
def test_pools_match_torch(torch_ref, kernel) -> None:
    torch = torch_ref.torch
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 6))  # no ties
    g = np.random.default_rng(3).standard_normal((2, 3, 8 // kernel[0], 6 // kernel[1]))
    for ours, theirs in (
        (nn.avgpool2d, torch.nn.functional.avg_pool2d),
        (nn.maxpool2d, torch.nn.functional.max_pool2d),
    ):
        tx = torch.from_numpy(x).requires_grad_(True)
        expected = theirs(tx, kernel)
        expected.backward(torch.from_numpy(g))
        mx = from_numpy(x, FastBackend).requires_grad_(True)
        out = ours(mx, kernel)
        out.backward(from_numpy(g, FastBackend))
        np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("fn", [nn.avgpool2d, nn.maxpool2d, lambda x, k: nn.tile(x, k)])
def test_pool_errors(fn) -> None:
    x = from_numpy(np.ones((1, 1, 6, 6)), FastBackend)
    with pytest.raises(ValueError, match="must divide"):
        fn(x, (4, 4))
    # Regression: a (0, 2) kernel said "must divide"; it has a zero size
    for zero in ((0, 2), (2, 0), (0, 0), (-1, 2)):
        with pytest.raises(ValueError, match=r"kernel \(-?\d, -?\d\) has a zero or negative size"):
            fn(x, zero)
    for not_int in ((2.5, 2), (2, "2"), (True, 2), (2.0, 2.0)):
        with pytest.raises(TypeError, match="kernel must be a pair of ints"):
            fn(x, not_int)
    with pytest.raises(ValueError, match="pair of ints"):
        fn(x, (2,))
    with pytest.raises(ValueError, match=r"\(batch, channel, height, width\)"):
        fn(from_numpy(np.ones((6, 6)), FastBackend), (2, 2))


def test_maxpool2d_gives_a_nans_window_gradient_to_the_nan(backend) -> None:
    """As ``max_pool2d``: the NaN is the window's maximum (the window's gradient was NaN)."""
    x = np.array([[[[1.0, np.nan, 0.0, 2.0], [3.0, 4.0, 5.0, 1.0]]]])
    t = from_numpy(x.copy(), backend).requires_grad_(True)
    out = nn.maxpool2d(t, (2, 2))
    assert np.isnan(out.to_numpy()[0, 0, 0, 0])
    assert out.to_numpy()[0, 0, 0, 1] == 5.0
    out.sum().backward()
    expected = [[[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]]]
    assert t.grad.to_numpy().tolist() == expected
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(tx, 2).sum().backward()
    assert tx.grad.tolist() == expected


def test_avgpool2d_of_values_whose_sum_overflows_matches_torch(torch_ref, backend) -> None:
    # The product's finiteness check adds the means up first: finite means near the
    # largest double overflow that sum to inf, and must still be pooled (and their
    # gradient spread) as PyTorch does, not as if the input held an infinity. (A window's
    # own sum stays finite here: PyTorch adds before it divides.)
    torch = torch_ref.torch
    x = np.full((2, 3, 4, 4), 4e307) * (1.0 + np.arange(96).reshape(2, 3, 4, 4) / 1000)
    g = np.full((2, 3, 2, 2), 1.7e308)
    tx = torch.from_numpy(x).requires_grad_(True)
    expected = torch.nn.functional.avg_pool2d(tx, (2, 2))
    expected.backward(torch.from_numpy(g))
    mx = from_numpy(x, backend).requires_grad_(True)
    out = nn.avgpool2d(mx, (2, 2))
    out.backward(from_numpy(g, backend))
    assert np.isfinite(out.to_numpy()).all()
    np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=1e-15)
