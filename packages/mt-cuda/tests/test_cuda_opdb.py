"""The op database (minitorch.tensor.opdb) on CudaBackend (Numba's CUDA simulator in CI)."""

import pytest

from minitorch.cuda import CudaBackend
from minitorch.tensor.opdb import OpDatabaseSuite

# The simulator runs each CUDA thread as a Python thread, where numpy's warnings about the
# special samples' inf and NaN (which the runner turns off in its own thread) still show.
SIMULATOR_WARNINGS = "ignore:(invalid value|overflow|divide by zero) encountered:RuntimeWarning"


@pytest.mark.filterwarnings(SIMULATOR_WARNINGS)
class TestCudaOps(OpDatabaseSuite):
    backend = CudaBackend
