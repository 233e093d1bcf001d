"""The op database (minitorch.tensor.opdb) on CudaBackend (Numba's CUDA simulator in CI)."""

from minitorch.cuda import CudaBackend
from minitorch.tensor.opdb import OpDatabaseSuite


class TestCudaOps(OpDatabaseSuite):
    backend = CudaBackend
