"""Hidden tests of module 4 (kept in this repository only; the course tool grades with them)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.tensor import from_numpy, grad_check

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
