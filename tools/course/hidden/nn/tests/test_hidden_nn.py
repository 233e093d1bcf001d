"""Hidden tests of module 4 (kept in this repository only; the course tool grades with them)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.tensor import SimpleBackend, from_numpy, grad_check

seeds = st.integers(0, 2**16)


def _conv1d_reference(x, w):
    """out[b, o, t] = sum_{c, k} x[b, c, t + k] * w[o, c, k], zero past the right edge."""
    batch, _, width = x.shape
    out_ch, _, k = w.shape
    padded = np.concatenate([x, np.zeros((batch, x.shape[1], k - 1))], axis=2)
    out = np.zeros((batch, out_ch, width))
    for t in range(width):
        out[:, :, t] = np.einsum("bck,ock->bo", padded[:, :, t : t + k], w)
    return out


@pytest.mark.task4_1
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 7), seeds)
def test_conv1d_matches_a_direct_reference(batch, in_ch, out_ch, width, seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, width + 1))
    x = rng.standard_normal((batch, in_ch, width))
    w = rng.standard_normal((out_ch, in_ch, k))
    out = nn.conv1d(from_numpy(x), from_numpy(w))
    np.testing.assert_allclose(out.to_numpy(), _conv1d_reference(x, w), atol=1e-10)


@pytest.mark.task4_1
def test_conv2d_gradients_match_central_differences():
    rng = np.random.default_rng(7)
    x = from_numpy(rng.standard_normal((1, 2, 4, 3)))
    w = from_numpy(rng.standard_normal((2, 2, 2, 2)))
    grad_check(nn.conv2d, x, w)


@pytest.mark.task4_3
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), seeds)
def test_pooling_matches_numpy_windows(kh, kw, rows, cols, seed):
    x = np.random.default_rng(seed).standard_normal((2, 2, kh * rows, kw * cols))
    windows = x.reshape(2, 2, rows, kh, cols, kw)
    avg = nn.avgpool2d(from_numpy(x), (kh, kw)).to_numpy()
    mx = nn.maxpool2d(from_numpy(x), (kh, kw)).to_numpy()
    np.testing.assert_allclose(avg, windows.mean(axis=(3, 5)), atol=1e-12)
    np.testing.assert_allclose(mx, windows.max(axis=(3, 5)), atol=1e-12)


@pytest.mark.task4_3
def test_avgpool_gradient_matches_central_differences():
    x = from_numpy(np.random.default_rng(3).standard_normal((1, 1, 4, 4)))
    grad_check(lambda t: nn.avgpool2d(t, (2, 2)), x)


@pytest.mark.task4_4
@given(st.integers(0, 1), seeds)
def test_softmax_logsoftmax_and_max_match_numpy(dim, seed):
    x = np.random.default_rng(seed).uniform(-5, 5, size=(3, 4))
    t = from_numpy(x)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    soft = e / e.sum(axis=dim, keepdims=True)
    np.testing.assert_allclose(nn.softmax(t, dim).to_numpy(), soft, atol=1e-10)
    np.testing.assert_allclose(nn.logsoftmax(t, dim).to_numpy(), np.log(soft), atol=1e-10)
    np.testing.assert_allclose(
        nn.max(t, dim).to_numpy().reshape(-1), x.max(axis=dim).reshape(-1), atol=0
    )


@pytest.mark.task4_4
def test_softmax_gradient_matches_central_differences():
    x = from_numpy(np.random.default_rng(5).standard_normal((2, 3)))
    grad_check(lambda t: nn.softmax(t, 1) * from_numpy(np.arange(6.0).reshape(2, 3)), x)


def _shifted_window(x, di, dj):
    """``x[b, c, y + di, x + dj]`` at ``[b, c, y, x]``, zero where that is outside ``x``."""
    _, _, height, width = x.shape
    pad_h, pad_w = abs(di), abs(dj)
    padded = np.pad(x, ((0, 0), (0, 0), (pad_h, pad_h), (pad_w, pad_w)))
    return padded[:, :, pad_h + di : pad_h + di + height, pad_w + dj : pad_w + dj + width]


def _conv2d_reference(x, w, bias, reverse):
    """The course's 2-D convolution: anchored top left (bottom right if ``reverse``)."""
    step = -1 if reverse else 1
    out = np.zeros((x.shape[0], w.shape[0], *x.shape[2:])) + bias[None, :, None, None]
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            window = _shifted_window(x, step * i, step * j)
            out += np.einsum("bchw,oc->bohw", window, w[:, :, i, j])
    return out


def _conv2d_weight_grad_reference(grad, x, kernel, reverse):
    """``grad_w[o, c, i, j] = sum_{b, y, x} grad[b, o, y, x] * x[b, c, y +- i, x +- j]``."""
    step = -1 if reverse else 1
    out = np.zeros((grad.shape[1], x.shape[1], *kernel))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            window = _shifted_window(x, step * i, step * j)
            out[:, :, i, j] = np.einsum("bohw,bchw->oc", grad, window)
    return out


@pytest.mark.task4_1
@pytest.mark.parametrize("reverse", [False, True])
def test_conv2d_values_on_a_non_square_batch_with_bias(reverse):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 2, 4, 5))
    w = rng.standard_normal((3, 2, 2, 3))
    bias = rng.standard_normal(3)
    out = nn.conv2d(
        from_numpy(x, SimpleBackend),
        from_numpy(w, SimpleBackend),
        from_numpy(bias, SimpleBackend),
        reverse=reverse,
    )
    np.testing.assert_allclose(out.to_numpy(), _conv2d_reference(x, w, bias, reverse), atol=1e-10)


@pytest.mark.task4_1
@pytest.mark.parametrize("reverse", [False, True])
def test_conv2d_weight_gradient_sums_over_the_batch_and_each_output_channel(reverse):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 2, 4, 5))
    w = rng.standard_normal((3, 2, 2, 3))
    grad = rng.standard_normal((2, 3, 4, 5))
    mw = from_numpy(w, SimpleBackend).requires_grad_(True)
    out = nn.conv2d(from_numpy(x, SimpleBackend), mw, reverse=reverse)
    out.backward(from_numpy(grad, SimpleBackend))
    expected = _conv2d_weight_grad_reference(grad, x, w.shape[2:], reverse)
    np.testing.assert_allclose(mw.grad.to_numpy(), expected, atol=1e-10)


@pytest.mark.task4_3
@pytest.mark.parametrize(("shape", "kernel"), [((2, 3, 6, 4), (2, 2)), ((1, 2, 6, 6), (3, 2))])
def test_avgpool_gradient_when_the_output_is_not_square(shape, kernel):
    kh, kw = kernel
    rng = np.random.default_rng(13)
    x = from_numpy(rng.standard_normal(shape), SimpleBackend).requires_grad_(True)
    out = nn.avgpool2d(x, kernel)
    grad = rng.standard_normal(out.shape)
    out.backward(from_numpy(grad, SimpleBackend))
    expected = np.repeat(np.repeat(grad, kh, axis=2), kw, axis=3) / (kh * kw)
    np.testing.assert_allclose(x.grad.to_numpy(), expected, atol=1e-12)


@pytest.mark.task4_3
@pytest.mark.parametrize(
    ("shape", "pooled"),
    [((0, 2, 4, 6), (0, 2, 2, 2)), ((1, 2, 4, 0), (1, 2, 2, 0))],
    ids=["empty-batch", "zero-width"],
)
def test_avgpool_of_an_empty_input_and_its_gradient(shape, pooled):
    x = from_numpy(np.zeros(shape), SimpleBackend).requires_grad_(True)
    out = nn.avgpool2d(x, (2, 3))
    assert out.shape == pooled
    out.backward(from_numpy(np.zeros(pooled), SimpleBackend))
    assert x.grad.shape == shape


@pytest.mark.task4_3
def test_maxpool_gradient_splits_among_ties_per_batch_and_channel():
    rng = np.random.default_rng(14)
    kh, kw = 2, 3
    x = rng.integers(0, 3, size=(2, 3, 4, 9)).astype(float)  # few values: many tied maxima
    mx = from_numpy(x, SimpleBackend).requires_grad_(True)
    out = nn.maxpool2d(mx, (kh, kw))
    grad = rng.standard_normal(out.shape)
    out.backward(from_numpy(grad, SimpleBackend))
    windows = x.reshape(2, 3, 2, kh, 3, kw)
    mask = windows == windows.max(axis=(3, 5), keepdims=True)
    share = grad[:, :, :, None, :, None] / mask.sum(axis=(3, 5), keepdims=True)
    np.testing.assert_allclose(mx.grad.to_numpy(), (mask * share).reshape(x.shape), atol=1e-12)


@pytest.mark.task4_4
@pytest.mark.parametrize("dim", [0, 1])
def test_max_over_a_dim_shares_the_gradient_among_tied_maxima(dim):
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, 2.0], [2.0, 3.0, 3.0, 0.0]])
    mx = from_numpy(x, SimpleBackend).requires_grad_(True)
    out = nn.max(mx, dim)
    grad = np.arange(1.0, out.size + 1).reshape(out.shape)
    out.backward(from_numpy(grad, SimpleBackend))
    mask = x == x.max(axis=dim, keepdims=True)
    expected = mask * grad / mask.sum(axis=dim, keepdims=True)
    np.testing.assert_allclose(mx.grad.to_numpy(), expected, atol=1e-12)
