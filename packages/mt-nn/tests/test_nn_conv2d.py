"""Task 4.2: 2-D convolution, forward and backward, against direct references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.fast import FastBackend
from minitorch.tensor import SimpleBackend, from_numpy, grad_check, tensor

HOST = pytest.mark.parametrize("host", [SimpleBackend, FastBackend], ids=["simple", "fast"])

pytestmark = pytest.mark.task4_2


@st.composite
def conv2d_case(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, bool]:
    batch = draw(st.integers(1, 2))
    in_ch = draw(st.integers(1, 3))
    out_ch = draw(st.integers(1, 3))
    height, width = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    kh, kw = draw(st.integers(1, height)), draw(st.integers(1, width))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    bias = rng.standard_normal(out_ch) if draw(st.booleans()) else None
    x = rng.standard_normal((batch, in_ch, height, width))
    w = rng.standard_normal((out_ch, in_ch, kh, kw))
    return x, w, bias, draw(st.booleans())


@HOST
@given(case=conv2d_case())
def test_conv2d_matches_direct_reference(host, case, ref) -> None:
    x, w, b, reverse = case
    bias = None if b is None else from_numpy(b, host)
    out = nn.conv2d(from_numpy(x, host), from_numpy(w, host), bias, reverse)
    assert out.backend is host
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x, w, b, reverse), atol=1e-10)


def test_conv2d_course_example() -> None:
    # Kernel anchored at the top left; zeros past the bottom and right edges.
    t = tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8]]).view(1, 1, 3, 3)
    w = tensor([[1, 0], [0, 1]]).view(1, 1, 2, 2)
    assert nn.conv2d(t, w).to_numpy()[0, 0].tolist() == [[4, 6, 2], [10, 12, 5], [6, 7, 8]]
    assert nn.conv2d(t, w, reverse=True).to_numpy()[0, 0].tolist() == [
        [0, 1, 2],
        [3, 4, 6],
        [6, 10, 12],
    ]


@pytest.mark.parametrize("reverse", [False, True])
def test_conv2d_gradients(backend, reverse) -> None:
    rng = np.random.default_rng(1)
    x = from_numpy(rng.standard_normal((2, 2, 5, 4)), backend)
    w = from_numpy(rng.standard_normal((3, 2, 2, 3)), backend)
    b = from_numpy(rng.standard_normal(3), backend)
    grad_check(lambda a, k, c: nn.conv2d(a, k, c, reverse), x, w, b, samples=8)


@given(case=conv2d_case())
def test_conv2d_gradients_property(case) -> None:
    x, w, b, reverse = case
    args = [from_numpy(x, FastBackend), from_numpy(w, FastBackend)]
    if b is None:
        grad_check(lambda a, k: nn.conv2d(a, k, None, reverse), *args, samples=3)
    else:
        grad_check(
            lambda a, k, c: nn.conv2d(a, k, c, reverse),
            *args,
            from_numpy(b, FastBackend),
            samples=3,
        )


def test_conv2d_constant_input_gets_no_gradient_but_weight_does() -> None:
    rng = np.random.default_rng(2)
    x = from_numpy(rng.standard_normal((2, 1, 5, 5)), FastBackend)  # a constant (images)
    w = from_numpy(rng.standard_normal((2, 1, 3, 3)), FastBackend).requires_grad_(True)
    out = nn.conv2d(x, w)
    history = out.history
    assert history is not None
    assert history.last_fn is not None
    assert history.ctx is not None
    grads = history.last_fn.backward(history.ctx, from_numpy(np.ones(out.shape), FastBackend))
    assert grads[0] is None  # not computed: nobody reads a constant's gradient
    out.sum().backward()
    assert x.grad is None
    # Tap (0, 0) meets every input value once: its gradient is the sum of the input.
    assert w.grad.to_numpy()[0, 0, 0, 0] == pytest.approx(x.to_numpy().sum(), rel=1e-12)


def test_conv2d_batch_larger_than_one_chunk(ref) -> None:
    # Enough rows that the forward kernel splits the batch into several parallel chunks.
    rng = np.random.default_rng(4)
    x, w, b = (
        rng.standard_normal((40, 2, 9, 70)),
        rng.standard_normal((3, 2, 3, 3)),
        rng.standard_normal(3),
    )
    fx, fw, fb = (from_numpy(a, FastBackend) for a in (x, w, b))
    out = nn.conv2d(fx, fw, fb).to_numpy()
    np.testing.assert_allclose(out[:2], ref.conv(x[:2], w, b), atol=1e-10)
    np.testing.assert_allclose(out[-2:], ref.conv(x[-2:], w, b), atol=1e-10)


@HOST
@pytest.mark.parametrize("reverse", [False, True])
def test_conv2d_matches_torch(torch_ref, host, reverse) -> None:
    torch = torch_ref.torch
    rng = np.random.default_rng(5)
    x, w, b = (
        rng.standard_normal((3, 2, 9, 8)),
        rng.standard_normal((4, 2, 3, 2)),
        rng.standard_normal(4),
    )
    tx, tw, tb = (torch.from_numpy(a).requires_grad_(True) for a in (x, w, b))
    F = torch.nn.functional
    if reverse:
        expected = F.conv2d(F.pad(tx, (1, 0, 2, 0)), tw.flip(-1, -2), tb)
    else:
        expected = F.conv2d(F.pad(tx, (0, 1, 0, 2)), tw, tb)
    g = rng.standard_normal(expected.shape)
    expected.backward(torch.from_numpy(g))
    mx, mw, mb = (from_numpy(a, host).requires_grad_(True) for a in (x, w, b))
    out = nn.conv2d(mx, mw, mb, reverse)
    out.backward(from_numpy(g, host))
    np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(mw.grad.to_numpy(), tw.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(mb.grad.to_numpy(), tb.grad.numpy(), atol=1e-10)


@given(case=conv2d_case())
def test_conv2d_matches_torch_property(torch_ref, case) -> None:
    x, w, b, reverse = case
    bias = None if b is None else from_numpy(b, FastBackend)
    out = nn.conv2d(from_numpy(x, FastBackend), from_numpy(w, FastBackend), bias, reverse)
    expected = torch_ref.conv(x, w, b, reverse).numpy()
    np.testing.assert_allclose(out.to_numpy(), expected, atol=1e-10)


def test_conv2d_fun_apply_directly() -> None:
    x, w = tensor([[[[1.0, 2.0], [3.0, 4.0]]]]), tensor([[[[1.0]]]])
    assert nn.Conv2dFun.apply(x, w, None, False).to_numpy().tolist() == [[[[1.0, 2.0], [3.0, 4.0]]]]


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "match"),
    [
        ((2, 3, 5, 5), (4, 2, 3, 3), "3 channels but the weight expects 2"),
        ((2, 3, 5), (4, 3, 3, 3), "input of shape"),
        ((2, 3, 5, 5), (4, 3, 3), "weight of shape"),
        ((2, 3, 5, 5), (4, 3, 6, 3), "does not fit"),
        ((2, 3, 5, 2), (4, 3, 3, 3), "does not fit"),
        # Regression: a (0, 0) kernel said "does not fit"; it has a zero size
        ((2, 3, 5, 5), (4, 3, 0, 0), r"kernel \(0, 0\) has a zero size"),
        ((2, 3, 5, 5), (4, 3, 0, 2), r"kernel \(0, 2\) has a zero size"),
        ((2, 3, 5, 5), (4, 3, 2, 0), r"kernel \(2, 0\) has a zero size"),
    ],
)
def test_conv2d_bad_shapes_raise(x_shape, w_shape, match) -> None:
    x, w = from_numpy(np.ones(x_shape), FastBackend), from_numpy(np.ones(w_shape), FastBackend)
    with pytest.raises(ValueError, match=match):
        nn.conv2d(x, w)
