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


@pytest.mark.task3_4
@pytest.mark.parametrize("one", ["a", "b"])
def test_the_matmul_kernel_broadcasts_a_batch_of_one_whatever_its_batch_stride(one):
    # The kernel's contract: an operand with a batch of 1 is used for every batch entry.
    # ``a @ b`` hands it over with a batch stride of 0; a caller of the kernel may hand a
    # contiguous (1, n, m) operand, whose batch stride is n * m.
    batch, n, m, p = 3, 2, 3, 2
    a_np = RNG.standard_normal((1 if one == "a" else batch, n, m))
    b_np = RNG.standard_normal((1 if one == "b" else batch, m, p))
    a, b = _cuda(a_np), _cuda(b_np)
    out = _cuda(np.zeros((batch, n, p)))
    CudaBackend.ops.matmul_kernel(*out.tuple(), *a.tuple(), *b.tuple())
    np.testing.assert_allclose(out.to_numpy(), a_np @ b_np, rtol=1e-9, atol=1e-12)


@pytest.mark.task3_4
def test_matmul_propagates_inf_like_numpy_across_partial_tiles():
    # An inner dimension that the tiles do not divide: the last tile is padded with zeros,
    # and a padding slot must not keep the previous tile's value (inf * 0 is nan).
    a_np = RNG.standard_normal((2, 17))
    b_np = RNG.standard_normal((17, 2))
    a_np[0, 15] = np.inf
    b_np[15, 1] = np.inf
    got = (_cuda(a_np) @ _cuda(b_np)).to_numpy()
    np.testing.assert_allclose(got, a_np @ b_np, rtol=1e-9)
