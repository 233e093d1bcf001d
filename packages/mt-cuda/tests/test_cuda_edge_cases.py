"""Zero-size products and IEEE powers on CudaBackend (the shared suite draws more of them).

``(0, 2, 3) @ (3, 4)`` launched the matmul kernel on a batch of ``max(0, 1) = 1`` over a
0-element output (an IndexError on the simulator, a write past the buffer on a GPU); and
``x ** p`` was ``exp(p * log(x))``, NaN for ``1 ** nan`` and ``(-1) ** inf``.
"""

from __future__ import annotations

import numpy as np
import pytest

from minitorch.cuda import CudaBackend, kernels
from minitorch.tensor import from_numpy


@pytest.mark.task3_4
@pytest.mark.parametrize(
    ("shape_a", "shape_b", "shape"),
    [
        ((0, 2, 3), (3, 4), (0, 2, 4)),
        ((1, 3, 4), (0, 4, 5), (0, 3, 5)),
        ((2, 0, 1, 3), (1, 3, 4), (2, 0, 1, 4)),
        ((2, 0), (0, 3), (2, 3)),
    ],
)
def test_matmul_of_zero_sizes_as_pytorch(shape_a, shape_b, shape) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    a = from_numpy(x, backend=CudaBackend).requires_grad_()
    b = from_numpy(y, backend=CudaBackend).requires_grad_()
    out = a @ b
    assert out.shape == shape
    np.testing.assert_array_equal(out.to_numpy(), np.matmul(x, y))
    out.sum().backward()
    assert a.grad is not None
    assert b.grad is not None
    assert (a.grad.shape, b.grad.shape) == (shape_a, shape_b)


@pytest.mark.task3_3
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_pow_runs_its_own_zip_kernel_with_ieee_special_values() -> None:
    """``x ** p`` is one zip of ``operators.pow``, so test_cuda_ptx compiles it for a GPU."""
    x = from_numpy(np.array([-2.0, -1.0, -0.5, 1.0]), backend=CudaBackend)
    assert (x**np.inf).to_numpy().tolist() == [np.inf, 1.0, 0.0, 1.0]
    assert (from_numpy(np.array([1.0]), backend=CudaBackend) ** np.nan).to_numpy().tolist() == [1.0]
    assert "zip[pow]" in kernels.KERNELS
