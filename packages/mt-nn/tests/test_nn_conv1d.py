"""Task 4.1: 1-D convolution, forward and backward, against direct references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.fast import FastBackend
from minitorch.tensor import SimpleBackend, from_numpy, grad_check, tensor

HOST = pytest.mark.parametrize("host", [SimpleBackend, FastBackend], ids=["simple", "fast"])

pytestmark = pytest.mark.task4_1


@st.composite
def conv1d_case(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, bool]:
    batch = draw(st.integers(1, 3))
    in_ch = draw(st.integers(1, 3))
    out_ch = draw(st.integers(1, 3))
    width = draw(st.integers(1, 9))
    k = draw(st.integers(1, width))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    bias = rng.standard_normal(out_ch) if draw(st.booleans()) else None
    x = rng.standard_normal((batch, in_ch, width))
    w = rng.standard_normal((out_ch, in_ch, k))
    return x, w, bias, draw(st.booleans())


@HOST
@given(case=conv1d_case())
def test_conv1d_matches_direct_reference(host, case, ref) -> None:
    x, w, b, reverse = case
    bias = None if b is None else from_numpy(b, host)
    out = nn.conv1d(from_numpy(x, host), from_numpy(w, host), bias, reverse)
    assert out.backend is host
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x, w, b, reverse), atol=1e-10)


def test_conv1d_course_example() -> None:
    # The course's test: kernel anchored at the left, zero past the right edge.
    t = tensor([0, 1, 2, 3]).view(1, 1, 4)
    w = tensor([[1, 2, 3]]).view(1, 1, 3)
    out = nn.conv1d(t, w)
    assert out.to_numpy().tolist() == [[[0 * 1 + 1 * 2 + 2 * 3, 1 + 2 * 2 + 3 * 3, 2 + 3 * 2, 3]]]
    rev = nn.conv1d(t, w, reverse=True)  # anchored at the right: in[x - k]
    assert rev.to_numpy().tolist() == [[[0, 1, 2 + 2, 3 + 2 * 2 + 3 * 1]]]


@pytest.mark.parametrize("reverse", [False, True])
def test_conv1d_gradients(backend, reverse) -> None:
    rng = np.random.default_rng(1)
    x = from_numpy(rng.standard_normal((2, 3, 6)), backend)
    w = from_numpy(rng.standard_normal((4, 3, 3)), backend)
    b = from_numpy(rng.standard_normal(4), backend)
    grad_check(lambda a, k, c: nn.conv1d(a, k, c, reverse), x, w, b, samples=8)


@given(case=conv1d_case())
def test_conv1d_gradients_property(case) -> None:
    x, w, b, reverse = case
    args = [from_numpy(x, FastBackend), from_numpy(w, FastBackend)]
    if b is None:
        grad_check(lambda a, k: nn.conv1d(a, k, None, reverse), *args, samples=3)
    else:
        grad_check(
            lambda a, k, c: nn.conv1d(a, k, c, reverse),
            *args,
            from_numpy(b, FastBackend),
            samples=3,
        )


@HOST
def test_conv1d_strided_views(host, ref) -> None:
    # A transposed input and a permuted weight (views, not contiguous) give the same answer.
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 3, 5)), rng.standard_normal((4, 3, 2))
    xt = from_numpy(np.ascontiguousarray(x.transpose(2, 1, 0)), host).permute(2, 1, 0)
    wt = from_numpy(np.ascontiguousarray(w.transpose(1, 0, 2)), host).permute(1, 0, 2)
    assert not xt.is_contiguous()
    assert not wt.is_contiguous()
    np.testing.assert_allclose(nn.conv1d(xt, wt).to_numpy(), ref.conv(x, w), atol=1e-12)


@HOST
@pytest.mark.parametrize("reverse", [False, True])
def test_conv1d_matches_torch(torch_ref, host, reverse) -> None:
    torch = torch_ref.torch
    rng = np.random.default_rng(4)
    x, w, b = (
        rng.standard_normal((3, 4, 11)),
        rng.standard_normal((5, 4, 3)),
        rng.standard_normal(5),
    )
    tx = torch.from_numpy(x).requires_grad_(True)
    tw = torch.from_numpy(w).requires_grad_(True)
    tb = torch.from_numpy(b).requires_grad_(True)
    F = torch.nn.functional
    if reverse:
        expected = F.conv1d(F.pad(tx, (2, 0)), tw.flip(-1), tb)
    else:
        expected = F.conv1d(F.pad(tx, (0, 2)), tw, tb)
    g = rng.standard_normal(expected.shape)
    expected.backward(torch.from_numpy(g))
    mx, mw, mb = (from_numpy(a, host).requires_grad_(True) for a in (x, w, b))
    out = nn.conv1d(mx, mw, mb, reverse)
    out.backward(from_numpy(g, host))
    np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(mw.grad.to_numpy(), tw.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(mb.grad.to_numpy(), tb.grad.numpy(), atol=1e-10)


def test_conv1d_fun_apply_directly() -> None:
    x, w = tensor([[[1.0, 2.0, 3.0]]]), tensor([[[1.0, -1.0]]])
    assert nn.Conv1dFun.apply(x, w, None, False).to_numpy().tolist() == [[[-1.0, -1.0, 3.0]]]


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "match"),
    [
        ((2, 3, 5), (4, 2, 3), "3 channels but the weight expects 2"),
        ((2, 3), (4, 3, 3), "input of shape"),
        ((2, 3, 5, 5), (4, 3, 3), "input of shape"),
        ((2, 3, 5), (4, 3), "weight of shape"),
        ((2, 3, 5), (4, 3, 6), "does not fit"),
        ((2, 3, 5), (4, 3, 0), r"kernel \(0,\) has a zero size"),  # once said "does not fit"
    ],
)
def test_conv1d_bad_shapes_raise(x_shape, w_shape, match) -> None:
    x, w = from_numpy(np.ones(x_shape), FastBackend), from_numpy(np.ones(w_shape), FastBackend)
    with pytest.raises(ValueError, match=match):
        nn.conv1d(x, w)


def test_conv1d_bad_bias_and_types_raise() -> None:
    x, w = from_numpy(np.ones((1, 2, 4)), FastBackend), from_numpy(np.ones((3, 2, 2)), FastBackend)
    with pytest.raises(ValueError, match="bias must be a tensor of 3 values"):
        nn.conv1d(x, w, from_numpy(np.ones(2), FastBackend))
    with pytest.raises(TypeError):
        nn.conv1d(np.ones((1, 2, 4)), w)  # type: ignore[arg-type]


def test_conv1d_mixes_host_backends_on_the_inputs_backend() -> None:
    # Both live in host memory: the input's backend runs the kernels, as for any operation.
    x = from_numpy(np.ones((1, 2, 4)), FastBackend)
    w = from_numpy(np.ones((3, 2, 2)), SimpleBackend)
    out = nn.conv1d(x, w)
    assert out.backend is FastBackend
    expected = nn.conv1d(from_numpy(np.ones((1, 2, 4)), SimpleBackend), w)
    np.testing.assert_allclose(out.to_numpy(), expected.to_numpy())
