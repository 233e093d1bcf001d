"""The CUDA convolution kernels (tasks 4.1, 4.2), with tiny shapes for Numba's simulator.

They run when mt-cuda (the ``cuda`` extra) is installed and a GPU or the simulator is
available (``NUMBA_ENABLE_CUDASIM=1`` in the environment); otherwise they are skipped.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch.nn as nn
from minitorch.fast import FastBackend
from minitorch.tensor import from_numpy

cuda = pytest.importorskip("minitorch.cuda", reason="mt-cuda (the cuda extra) is not installed")
if not cuda.is_available():
    pytest.skip("no CUDA GPU and NUMBA_ENABLE_CUDASIM is not set", allow_module_level=True)

Cuda = cuda.CudaBackend


def run(fn, backend, *arrays):
    """Forward, then backward with a fixed upstream gradient; return output and grads."""
    leaves = [from_numpy(a, backend).requires_grad_(True) for a in arrays]
    out = fn(*leaves)
    g = np.linspace(-1.0, 1.0, out.size).reshape(out.shape)
    out.backward(from_numpy(g, backend))
    return [out.to_numpy()] + [t.grad.to_numpy() for t in leaves]


def check_against_cpu(fn, *arrays) -> None:
    on_gpu = run(fn, Cuda, *arrays)
    on_cpu = run(fn, FastBackend, *arrays)
    for got, expected in zip(on_gpu, on_cpu, strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-10)


@pytest.mark.task4_1
@pytest.mark.parametrize("reverse", [False, True])
def test_conv1d_cuda(reverse, ref) -> None:
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 2, 4)), rng.standard_normal((2, 2, 2)), rng.standard_normal(2)
    out = nn.conv1d(from_numpy(x, Cuda), from_numpy(w, Cuda), from_numpy(b, Cuda), reverse)
    assert out.backend is Cuda
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x, w, b, reverse), atol=1e-12)
    check_against_cpu(lambda a, k, c: nn.conv1d(a, k, c, reverse), x, w, b)


@pytest.mark.task4_2
@pytest.mark.parametrize("reverse", [False, True])
def test_conv2d_cuda(reverse, ref) -> None:
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 2, 3, 3)), rng.standard_normal((2, 2, 2, 2))
    out = nn.conv2d(from_numpy(x, Cuda), from_numpy(w, Cuda), None, reverse)
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x, w, None, reverse), atol=1e-12)
    check_against_cpu(lambda a, k: nn.conv2d(a, k, None, reverse), x, w)


@pytest.mark.task4_4
def test_pool_and_softmax_compose_on_cuda() -> None:
    x = np.random.default_rng(2).standard_normal((1, 1, 2, 4))
    check_against_cpu(lambda a: nn.logsoftmax(nn.avgpool2d(a, (2, 2)).view(1, 2), 1), x)


@pytest.mark.task4_4
def test_max_argmax_and_maxpool_with_a_nan_as_on_the_cpu() -> None:
    """A NaN is the maximum on the GPU too: argmax marks it, max_pool's gradient goes to it."""
    rows = np.array([[1.0, np.nan, 3.0], [4.0, 6.0, 6.0]])
    assert nn.argmax(from_numpy(rows, Cuda), 1).to_numpy().tolist() == [[0, 1, 0], [0, 1, 0]]
    x = np.array([[[[1.0, np.nan, 0.0, 2.0], [3.0, 4.0, 5.0, 1.0]]]])
    on_gpu, grad_gpu = run(lambda a: nn.maxpool2d(a, (2, 2)), Cuda, x)
    on_cpu, grad_cpu = run(lambda a: nn.maxpool2d(a, (2, 2)), FastBackend, x)
    np.testing.assert_array_equal(on_gpu, on_cpu)
    np.testing.assert_array_equal(grad_gpu, grad_cpu)
    assert grad_gpu[0, 0, 0].tolist() == [0.0, -1.0, 0.0, 0.0]  # the upstream -1 at the NaN


@pytest.mark.task4_3
# The simulator computes on numpy scalars, which warn at inf - inf.
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_pools_and_softmax_with_infinities_as_on_the_cpu() -> None:
    """An inf or NaN stays in its window (its row for softmax) on the GPU too."""
    x = np.array([[[[np.inf, 1.0, 2.0, 3.0], [1.0, 1.5, 2.5, 3.5]]]])
    x2 = np.array([[[[np.nan, 1.0, -np.inf, 3.0], [0.25, np.inf, 2.5, 3.5]]]])
    for a in (x, x2):
        check_against_cpu(lambda t: nn.avgpool2d(t, (2, 2)), a)
        check_against_cpu(lambda t: nn.avgpool2d(t, (1, 2)), a)
        check_against_cpu(lambda t: nn.maxpool2d(t, (2, 2)), a)
        check_against_cpu(lambda t: nn.softmax(t, 3), a)
        check_against_cpu(lambda t: nn.logsoftmax(t, 3), a)
    out = nn.avgpool2d(from_numpy(x, Cuda), (2, 2))
    assert out.to_numpy().tolist() == [[[[np.inf, 2.75]]]]
