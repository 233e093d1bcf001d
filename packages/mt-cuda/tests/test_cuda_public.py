"""mt-cuda's public building blocks for kernels of other layers (mt-nn's convolutions).

Device storage, the launch configuration and the shared-memory block reduction, imported
from the package root only, as another layer would use them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda, types

import minitorch.cuda as mc
from minitorch.operators import add, max, mul

pytestmark = pytest.mark.task3_3


def test_every_public_name_is_importable_from_the_root() -> None:
    missing = [name for name in mc.__all__ if not hasattr(mc, name)]
    assert missing == []
    assert len(set(mc.__all__)) == len(mc.__all__)


# ---------------------------------------------------------------------------------------
# Device storage


def test_to_device_and_back_round_trips() -> None:
    host = np.arange(12.0).reshape(3, 4)
    storage = mc.to_device(host)
    assert mc.is_device_array(storage)
    assert storage.shape == (12,)  # flattened, row-major
    back = mc.to_host(storage)
    assert isinstance(back, np.ndarray)
    np.testing.assert_array_equal(back, host.reshape(-1))
    back[0] = 99.0  # a new host array, not a view of the device's
    assert mc.to_host(storage)[0] == 0.0


def test_to_device_of_one_value_and_of_ints() -> None:
    np.testing.assert_array_equal(mc.to_host(mc.to_device([2.5])), [2.5])
    ints = mc.to_device(np.array([1, 2, 3]))
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(mc.to_host(ints), [1.0, 2.0, 3.0])


def test_device_zeros_and_empty() -> None:
    np.testing.assert_array_equal(mc.to_host(mc.device_zeros(5)), np.zeros(5))
    assert mc.to_host(mc.device_zeros(0)).shape == (0,)
    empty = mc.device_empty(7)
    assert mc.is_device_array(empty)
    assert empty.shape == (7,)


def test_is_device_array_rejects_host_and_other_arrays() -> None:
    assert not mc.is_device_array(np.zeros(3))
    assert not mc.is_device_array([0.0, 1.0])
    assert not mc.is_device_array(cuda.to_device(np.zeros((2, 2))))  # not flat
    assert not mc.is_device_array(cuda.to_device(np.zeros(3, np.float32)))  # not float64


def test_require_device_passes_where_kernels_run() -> None:
    assert mc.is_available()
    mc.require_device()  # raises only without a GPU and without the simulator


# ---------------------------------------------------------------------------------------
# Launch configuration


def test_elementwise_launch_covers_every_element() -> None:
    t = mc.THREADS_PER_BLOCK
    assert mc.elementwise_launch(1) == (1, 1)
    assert mc.elementwise_launch(5) == (1, 5)
    assert mc.elementwise_launch(t) == (1, t)
    assert mc.elementwise_launch(t + 1) == (2, t)


@given(st.integers(1, 10**7))
def test_elementwise_launch_property(n: int) -> None:
    blocks, threads = mc.elementwise_launch(n)
    assert 1 <= threads <= mc.THREADS_PER_BLOCK
    assert blocks * threads >= n > (blocks - 1) * threads  # no block without work


@given(st.integers(0, 10**6))
def test_reduction_threads_is_a_power_of_two_covering_n(n: int) -> None:
    threads = mc.reduction_threads(n)
    assert threads & (threads - 1) == 0
    assert 1 <= threads <= mc.THREADS_PER_BLOCK
    assert threads >= n or threads == mc.THREADS_PER_BLOCK
    assert threads == 1 or threads // 2 < n  # the smallest such power


# ---------------------------------------------------------------------------------------
# Block reduction

_BLOCK = mc.THREADS_PER_BLOCK


def _folding_kernel(fn):  # type: ignore[no-untyped-def]
    """Block ``r`` folds row ``r`` of ``a`` (one value per thread); every thread reports."""
    fold = mc.block_reduce(fn)

    @cuda.jit
    def kernel(out, a, cols, start):  # type: ignore[no-untyped-def]
        cache = cuda.shared.array(_BLOCK, types.float64)
        tid = cuda.threadIdx.x
        row = cuda.blockIdx.x
        value = a[row * cols + tid] if tid < cols else start
        out[row * cuda.blockDim.x + tid] = fold(cache, value)

    return kernel


def _fold_rows(fn, start: float, a: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    rows, cols = a.shape
    threads = mc.reduction_threads(cols)
    out = mc.device_empty(rows * threads)
    _folding_kernel(fn)[rows, threads](out, mc.to_device(a), cols, start)
    return mc.to_host(out).reshape(rows, threads)


@pytest.mark.parametrize("cols", [1, 2, 3, 8, 13])
@pytest.mark.parametrize(
    ("fn", "start", "reference"),
    [(add, 0.0, np.sum), (mul, 1.0, np.prod), (max, -np.inf, np.max)],
    ids=["add", "mul", "max"],
)
def test_block_reduce_folds_the_block(cols, fn, start, reference) -> None:
    a = np.random.default_rng(cols).uniform(0.5, 1.5, size=(3, cols))
    got = _fold_rows(fn, start, a)
    expected = reference(a, axis=1)
    # Every thread of the block gets the folded value.
    np.testing.assert_allclose(got, np.repeat(expected[:, None], got.shape[1], 1), rtol=1e-12)


@settings(max_examples=5, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40))
def test_block_reduce_sum_property(values: list[float]) -> None:
    got = _fold_rows(add, 0.0, np.array([values]))
    np.testing.assert_allclose(got[0, 0], np.sum(values), rtol=1e-9, atol=1e-6)


def test_block_reduce_full_block() -> None:
    a = np.arange(2.0 * _BLOCK).reshape(2, _BLOCK)
    got = _fold_rows(add, 0.0, a)
    np.testing.assert_array_equal(got[:, 0], a.sum(axis=1))


def test_block_reduce_is_built_once_per_function() -> None:
    assert mc.block_reduce(add) is mc.block_reduce(add)
    assert mc.block_reduce(add) is not mc.block_reduce(max)
