"""The shared backend suite (minitorch.tensor.testing.BackendSuite) on the simple backend,
and the mechanics that let later backends reuse it."""

import numpy as np
import pytest

from minitorch.tensor import SimpleBackend, SimpleOps, TensorBackend
from minitorch.tensor.testing import BackendSuite


class TestSimpleBackend(BackendSuite):
    backend = SimpleBackend


@pytest.mark.task2_3
def test_a_subclass_gets_its_own_tests_with_its_limits():
    shapes_seen = []

    class SlowBackendSuite(BackendSuite):
        backend = TensorBackend(SimpleOps, "slow")
        max_examples = 2
        max_dims = 2
        max_size = 2

        def draw_tensor(self, data, *args, **kwargs):
            t = super().draw_tensor(data, *args, **kwargs)
            shapes_seen.append(t.shape)
            return t

    test = SlowBackendSuite.test_permute
    assert test is not TestSimpleBackend.test_permute
    assert test is not BackendSuite.test_permute
    assert "task2_3" in [m.name for m in test.pytestmark]
    assert "task2_4" in [m.name for m in SlowBackendSuite.test_permute_backward.pytestmark]
    SlowBackendSuite().test_permute()
    assert 1 <= len(shapes_seen) <= 2
    assert all(len(s) <= 2 and max(s) <= 2 for s in shapes_seen)


@pytest.mark.task2_3
def test_storage_empty_is_a_host_buffer_of_the_size_asked() -> None:
    # Kernel outputs are allocated with it; the suite's NaN-poisoned backend checks that
    # every kernel then writes all of its output.
    buffer = SimpleOps.storage_empty(5)
    assert isinstance(buffer, np.ndarray)
    assert buffer.shape == (5,)
    assert buffer.dtype == np.float64


@pytest.mark.task2_3
def test_storage_empty_falls_back_to_a_backends_own_zeros() -> None:
    # A device backend written before the hook existed must not get host buffers.
    class Device(SimpleOps):
        @staticmethod
        def storage_zeros(size: int) -> list[float]:
            return [0.0] * size

    assert Device.storage_empty(3) == [0.0, 0.0, 0.0]
