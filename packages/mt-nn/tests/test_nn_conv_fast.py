"""The fast backend's convolution and average pooling run the Numba kernels of ``kernels/fast.py``.

The course's starter of mt-nn leaves ``kernels/fast.py`` out (``solution-only`` in course.toml):
there the fast backend runs the student's plain kernels of ``kernels/simple.py``.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.fast import FastBackend
from minitorch.nn import conv as conv_module

pytestmark = pytest.mark.task4_2


def test_fast_backend_gets_the_numba_kernels() -> None:
    assert conv_module.CONV_KERNELS["fast"] == "minitorch.nn.kernels.fast"
    assert conv_module.kernels_for(FastBackend).__name__ == "minitorch.nn.kernels.fast"


def _weight_grad_reference(
    g: np.ndarray, x: np.ndarray, kh: int, kw: int, reverse: bool
) -> np.ndarray:
    """``grad_w[o, c, i, j] = sum g[b, o, y, x] * in[b, c, y +- i, x +- j]`` with numpy."""
    height, width = x.shape[2:]
    # Zeros before the input (anchored at the end) or after it; tap (i, j) then reads the
    # window that starts ``i`` rows and ``j`` columns from the far or the near corner.
    before = (kh - 1, kw - 1) if reverse else (0, 0)
    after = (0, 0) if reverse else (kh - 1, kw - 1)
    padded = np.pad(x, ((0, 0), (0, 0), (before[0], after[0]), (before[1], after[1])))
    out = np.empty((g.shape[1], x.shape[1], kh, kw))
    for i in range(kh):
        for j in range(kw):
            y0, x0 = (kh - 1 - i, kw - 1 - j) if reverse else (i, j)
            window = padded[:, :, y0 : y0 + height, x0 : x0 + width]
            out[:, :, i, j] = np.einsum("nohw,nchw->oc", g, window)
    return out


@pytest.mark.parametrize("reverse", [False, True], ids=["anchored-start", "anchored-end"])
@pytest.mark.parametrize(
    ("batch", "in_ch", "out_ch", "height", "width", "kh", "kw"),
    [
        (16, 4, 8, 28, 28, 3, 3),  # LeNet's second layer: whole blocks of channels
        (3, 2, 5, 7, 9, 2, 3),  # a block of four and one channel past it
        (2, 3, 9, 1, 50, 1, 5),  # a 1-D convolution, two blocks and one past
        (1, 1, 3, 4, 4, 4, 4),  # fewer channels than a block, the kernel as large as the input
        (5, 1, 4, 23, 31, 1, 1),  # a 1 x 1 kernel: one tap, and chunks that end mid-row
        (8, 1, 3, 28, 28, 3, 3),  # one channel pair: the gradient's positions split in parts
    ],
)
def test_the_kernels_cross_every_block_edge(
    batch, in_ch, out_ch, height, width, kh, kw, reverse, ref
) -> None:  # type: ignore[no-untyped-def]
    # The forward kernel computes blocks of ROWS channels by whole vectors of positions, in
    # chunks of CHUNK positions that cut rows; the weight gradient blocks ROWS channels by
    # two taps. Channel counts around a block, odd tap counts and outputs that end inside a
    # vector must still give the reference's values, and write nothing past the output.
    from minitorch.nn.kernels import fast

    rng = np.random.default_rng(batch * 1000 + out_ch)
    x = rng.standard_normal((batch, in_ch, height, width))
    w = rng.standard_normal((out_ch, in_ch, kh, kw))
    b = rng.standard_normal(out_ch)
    sizes = (batch, in_ch, height, width, out_ch, kh, kw)
    size = batch * out_ch * height * width
    out = np.full(size + 8, np.nan)  # a guard past the end
    strides = (in_ch * kh * kw, kh * kw, kw, 1)
    fast.conv_forward(out, x.ravel(), w.ravel(), strides, b, sizes, reverse)
    np.testing.assert_allclose(out[:size].reshape(batch, out_ch, height, width),
                               ref.conv(x, w, b, reverse), rtol=1e-12, atol=1e-12)  # fmt: skip
    assert np.isnan(out[size:]).all(), "wrote past the output"
    g = rng.standard_normal((batch, out_ch, height, width))
    gw = np.full(out_ch * in_ch * kh * kw + 8, np.nan)
    fast.conv_weight_grad(gw, g.ravel(), x.ravel(), sizes, reverse)
    expected = _weight_grad_reference(g, x, kh, kw, reverse)
    np.testing.assert_allclose(
        gw[: expected.size].reshape(expected.shape), expected, rtol=1e-12, atol=1e-11
    )
    assert np.isnan(gw[expected.size :]).all(), "wrote past the weight's gradient"


def test_average_pooling_runs_the_fast_modules_kernels_on_the_fast_backends_only() -> None:
    from minitorch.fast import PlainFastBackend
    from minitorch.tensor import SimpleBackend

    assert conv_module.pool_kernels_for(FastBackend).__name__ == "minitorch.nn.kernels.fast"
    assert conv_module.pool_kernels_for(PlainFastBackend).__name__ == "minitorch.nn.kernels.fast"
    assert conv_module.pool_kernels_for(SimpleBackend) is None  # simple.py has none


@st.composite
def _pool_inputs(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, int], bool]:
    """An input of up to 1100 windows (more than a task's ``_POOL_CHUNK``), with inf and NaN."""
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    shape = (draw(st.integers(0, 3)), draw(st.integers(1, 4)))
    shape += (kh * draw(st.integers(1, 11)), kw * draw(st.integers(1, 11)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 300, shape)  # sums overflow
    specials = draw(st.lists(st.sampled_from([np.inf, -np.inf, np.nan]), max_size=4))
    for value in specials:
        if x.size:
            x.flat[rng.integers(x.size)] = value
    return x, (kh, kw), draw(st.booleans())


@pytest.mark.task4_3
@given(case=_pool_inputs())
def test_fast_average_pooling_equals_torchs_bit_for_bit(torch_ref, case) -> None:  # type: ignore[no-untyped-def]
    # The kernels add each window's values row by row and divide, as PyTorch's CPU kernel
    # does: the same bits, inf and NaN in their own windows, overflowing sums inf. Window
    # counts cross the groups of four summed side by side and the tasks' chunks; a
    # permuted input is copied to a contiguous one first.
    from minitorch.tensor import from_numpy

    x, kernel, permuted = case
    torch = torch_ref.torch
    t = from_numpy(np.ascontiguousarray(x.transpose(0, 1, 3, 2)), FastBackend)
    t = t.permute(0, 1, 3, 2) if permuted else from_numpy(x, FastBackend)
    t.requires_grad_(True)
    out = nn.avgpool2d(t, kernel)
    tx = torch.from_numpy(x).requires_grad_(True)
    expected = torch.nn.functional.avg_pool2d(tx, kernel)
    g = np.random.default_rng(x.size).standard_normal(tuple(expected.shape))
    g.flat[: min(2, g.size)] = np.inf  # the gradient's infinities stay in their windows too
    out.backward(from_numpy(g, FastBackend))
    expected.backward(torch.from_numpy(g))
    np.testing.assert_array_equal(out.to_numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(t.grad.to_numpy(), tx.grad.numpy())


@pytest.mark.task4_3
def test_fast_pooling_kernels_write_nothing_past_their_outputs() -> None:
    from minitorch.nn.kernels import fast

    rng = np.random.default_rng(5)
    sizes = (7, 12, 15, 4, 3)  # 7 * 3 * 5 = 105 windows: a group of four and one past
    x = rng.standard_normal(7 * 12 * 15)
    out = np.full(105 + 8, np.nan)
    fast.avgpool_forward(out, x, sizes)
    expected = x.reshape(7, 3, 4, 5, 3).sum(axis=(2, 4)) / 12
    np.testing.assert_allclose(out[:105], expected.ravel(), rtol=1e-12, atol=1e-15)
    assert np.isnan(out[105:]).all(), "wrote past the output"
    grad = np.full(x.size + 8, np.nan)
    fast.avgpool_backward(grad, out, sizes)
    spread = np.repeat(np.repeat(out[:105].reshape(7, 3, 5), 4, axis=1), 3, axis=2) / 12
    np.testing.assert_array_equal(grad[: x.size], spread.ravel())
    assert np.isnan(grad[x.size :]).all(), "wrote past the input's gradient"


@pytest.mark.task4_3
def test_avgpool2d_runs_the_kernels_function_where_a_backend_has_kernels() -> None:
    # The course's grader runs a forward pass in its own copy of the code and sends the
    # context's saved values across its channel (a module object saved there once made
    # task 4.5 ungradable): the kernels' Function keeps plain values. Backends without
    # kernels (simple; a starter's fast backend) run the course's Avgpool2dFun.
    from minitorch.tensor import SimpleBackend, from_numpy

    x = np.random.default_rng(6).standard_normal((2, 3, 8, 12))
    out = nn.avgpool2d(from_numpy(x, FastBackend).requires_grad_(True), (4, 3))
    assert out.history.last_fn is conv_module.AvgpoolKernelFun
    assert all(isinstance(v, (int, tuple)) for v in out.history.ctx.saved_values)
    assert out.grad_fn.name() == "AvgPool2DBackward0"
    simple = nn.avgpool2d(from_numpy(x, SimpleBackend).requires_grad_(True), (4, 3))
    assert simple.history.last_fn is nn.functions.Avgpool2dFun
    with pytest.raises(LookupError, match="no pooling kernels"):
        conv_module.AvgpoolKernelFun.apply(from_numpy(x, SimpleBackend), 4, 3)
