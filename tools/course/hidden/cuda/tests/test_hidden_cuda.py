"""Hidden tests of module 3, CUDA (kept in this repository only; the course tool grades with them).

Small shapes: they run on a GPU, or on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1).
"""

import numpy as np
import pytest

from minitorch.cuda import CudaBackend, mm_practice, sum_practice
from minitorch.tensor import from_numpy

RNG = np.random.default_rng(11)


def _cuda(array):
    return from_numpy(np.ascontiguousarray(array), backend=CudaBackend)


@pytest.mark.task3_3
def test_map_zip_reduce_on_a_permuted_broadcast_input():
    a_np = RNG.standard_normal((3, 5))
    b_np = RNG.standard_normal((5, 1))
    a = _cuda(a_np).permute(1, 0)  # (5, 3), non-contiguous
    b = _cuda(b_np)
    np.testing.assert_allclose((-a).to_numpy(), -a_np.T)
    np.testing.assert_allclose((a * b).to_numpy(), a_np.T * b_np, rtol=1e-12)
    np.testing.assert_allclose(a.sum(1).to_numpy(), a_np.T.sum(axis=1, keepdims=True), rtol=1e-9)


@pytest.mark.task3_3
def test_sum_practice_of_a_ragged_length():
    x = RNG.standard_normal(45)
    out = sum_practice(_cuda(x)).to_numpy()
    np.testing.assert_allclose(out, [x[:32].sum(), x[32:].sum()], rtol=1e-9)


@pytest.mark.task3_4
def test_matmul_and_mm_practice_match_numpy():
    a_np = RNG.standard_normal((2, 5, 3))
    b_np = RNG.standard_normal((3, 4))
    got = (_cuda(a_np) @ _cuda(b_np)).to_numpy()
    np.testing.assert_allclose(got, a_np @ b_np, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        mm_practice(_cuda(a_np[0]), _cuda(b_np)).to_numpy(), a_np[0] @ b_np, rtol=1e-9
    )
