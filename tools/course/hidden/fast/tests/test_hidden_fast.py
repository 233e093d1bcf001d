"""Hidden tests of module 3, CPU (kept in this repository only; the course tool grades with them).

They run on ``PlainFastBackend``: the kernels the student writes (``plain.py``).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch.fast import PlainFastBackend
from minitorch.tensor import from_numpy

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


def _fold_ten(acc, x):
    return 10.0 * acc + x


@pytest.mark.task3_1
def test_reduce_folds_from_the_start_value_in_order():
    # ``fn(acc, x)``, left to right: a fold that is not commutative tells the order apart.
    a = _plain(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    fold = PlainFastBackend.ops.reduce(_fold_ten, 0.0)
    np.testing.assert_array_equal(fold(a, 1).to_numpy(), [[123.0], [456.0]])
    np.testing.assert_array_equal(fold(a.permute(1, 0), 1).to_numpy(), [[14.0], [25.0], [36.0]])
