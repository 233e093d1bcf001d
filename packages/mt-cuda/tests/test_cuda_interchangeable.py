"""``TensorBackend(CudaOps)`` is ``CudaBackend``; host data given to it is copied to the device."""

from __future__ import annotations

import numpy as np
import pytest

from minitorch.cuda import CudaBackend, CudaOps, mm_practice, sum_practice
from minitorch.tensor import Tensor, TensorBackend, TensorData, from_numpy
from minitorch.tensor.testing import assert_close


@pytest.mark.task3_3
def test_practice_kernels_accept_a_rebuilt_cuda_backend() -> None:
    course = TensorBackend(CudaOps)
    assert course == CudaBackend
    a = from_numpy(np.arange(40.0), backend=course)
    assert_close(sum_practice(a).sum(), np.array([780.0]))
    m = from_numpy(np.arange(6.0).reshape(2, 3), backend=course)
    n = from_numpy(np.arange(6.0).reshape(3, 2), backend=CudaBackend)
    assert_close(mm_practice(m, n), np.arange(6.0).reshape(2, 3) @ np.arange(6.0).reshape(3, 2))
    assert_close(m @ n, np.arange(6.0).reshape(2, 3) @ np.arange(6.0).reshape(3, 2))


@pytest.mark.task3_3
def test_host_storage_given_to_the_cuda_backend_is_copied_to_the_device() -> None:
    host = np.arange(6.0)
    made = Tensor.make(host, (2, 3), backend=CudaBackend)
    assert CudaOps.is_storage(made.tensor_data.storage)
    assert_close(made, host.reshape(2, 3))
    # Shape and strides are kept: a transposed view of host data stays transposed.
    view = Tensor(TensorData(host, (3, 2), (1, 3)), backend=CudaBackend)
    assert_close(view, host.reshape(2, 3).T)
    assert_close(view + 1.0, host.reshape(2, 3).T + 1.0)
