"""The fast backend's convolution runs the Numba kernels of ``kernels/fast.py``.

The course's starter of mt-nn leaves ``kernels/fast.py`` out (``solution-only`` in course.toml):
there the fast backend runs the student's plain kernels of ``kernels/simple.py``.
"""

import numpy as np
import pytest

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
