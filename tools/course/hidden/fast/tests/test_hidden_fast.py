"""Hidden tests of module 3, CPU (kept in this repository only; the course tool grades with them).

They run on ``PlainFastBackend``: the kernels the student writes (``kernels/plain.py``).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch.fast import PlainFastBackend
from minitorch.tensor import TensorData, from_numpy

seeds = st.integers(0, 2**16)


def _plain(array):
    return from_numpy(np.ascontiguousarray(array), PlainFastBackend)


@pytest.mark.task3_1
@given(seeds)
def test_map_zip_and_reduce_on_permuted_and_broadcast_inputs(seed):
    rng = np.random.default_rng(seed)
    a_np = rng.standard_normal((3, 4, 5))
    b_np = rng.standard_normal((4, 1))
    a = _plain(a_np).permute(2, 0, 1)  # a non-contiguous view of shape (5, 3, 4)
    b = _plain(b_np).permute(1, 0)  # (1, 4)
    a_t = np.transpose(a_np, (2, 0, 1))
    np.testing.assert_allclose((-a).to_numpy(), -a_t)
    np.testing.assert_allclose((a * b).to_numpy(), a_t * b_np.T, rtol=1e-12)
    for dim in range(3):
        np.testing.assert_allclose(
            a.sum(dim).to_numpy(), a_t.sum(axis=dim, keepdims=True), rtol=1e-9, atol=1e-12
        )


@pytest.mark.task3_2
@given(st.integers(1, 3), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), seeds)
def test_batched_matmul_with_broadcast_batch_matches_numpy(batch, n, m, p, seed):
    rng = np.random.default_rng(seed)
    a_np = rng.standard_normal((batch, n, m))
    b_np = rng.standard_normal((m, p))
    got = (_plain(a_np) @ _plain(b_np)).to_numpy()
    np.testing.assert_allclose(got, a_np @ b_np, rtol=1e-9, atol=1e-12)
    # A transposed (non-contiguous) right operand.
    bt = _plain(np.ascontiguousarray(b_np.T)).permute(1, 0)
    np.testing.assert_allclose((_plain(a_np) @ bt).to_numpy(), a_np @ b_np, rtol=1e-9, atol=1e-12)


@pytest.mark.task3_2
@given(st.integers(2, 3), st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), seeds)
def test_the_matmul_kernel_broadcasts_a_batch_of_one_whatever_its_batch_stride(
    batch, n, m, p, seed
):
    # The kernel's contract (``_matmul``'s docstring): an operand with a batch of 1 is used
    # for every batch entry. ``a @ b`` hands it over with a batch stride of 0; a caller of
    # the kernel may hand a contiguous (1, n, m) operand, whose batch stride is n * m.
    rng = np.random.default_rng(seed)
    a = TensorData(rng.standard_normal(n * m), (1, n, m))
    b = TensorData(rng.standard_normal(batch * m * p), (batch, m, p))
    out = TensorData(np.zeros(batch * n * p), (batch, n, p))
    PlainFastBackend.ops.matmul_kernel(*out.tuple(), *a.tuple(), *b.tuple())
    a_np = a.storage.reshape(1, n, m)
    b_np = b.storage.reshape(batch, m, p)
    got = out.storage.reshape(batch, n, p)
    np.testing.assert_allclose(got, a_np @ b_np, rtol=1e-9, atol=1e-12)
    # And the other way round: b has the batch of one.
    b1 = TensorData(rng.standard_normal(m * p), (1, m, p))
    a2 = TensorData(rng.standard_normal(batch * n * m), (batch, n, m))
    PlainFastBackend.ops.matmul_kernel(*out.tuple(), *a2.tuple(), *b1.tuple())
    want = a2.storage.reshape(batch, n, m) @ b1.storage.reshape(1, m, p)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def _fold_ten(acc, x):
    return 10.0 * acc + x


@pytest.mark.task3_1
def test_reduce_folds_from_the_start_value_in_order():
    # ``fn(acc, x)``, left to right: a fold that is not commutative tells the order apart.
    a = _plain(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    fold = PlainFastBackend.ops.reduce(_fold_ten, 0.0)
    np.testing.assert_array_equal(fold(a, 1).to_numpy(), [[123.0], [456.0]])
    np.testing.assert_array_equal(fold(a.permute(1, 0), 1).to_numpy(), [[14.0], [25.0], [36.0]])
