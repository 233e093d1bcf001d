"""The shared backend suite of mt-tensor on CudaBackend.

On the CUDA simulator every CUDA thread is a Python thread, so the suite runs with small
shapes and few examples per test; partial blocks, partial tiles and reductions larger
than a block are covered by test_cuda_kernels.py.
"""

from minitorch.cuda import CudaBackend
from minitorch.tensor.testing import BackendSuite


class TestCudaBackend(BackendSuite):
    backend = CudaBackend
    max_dims = 3
    max_size = 3
    grad_max_dims = 2
    grad_max_size = 3
    max_examples = 3
