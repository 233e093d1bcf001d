"""The op database (minitorch.tensor.opdb) on the simple backend, against PyTorch."""

from minitorch.tensor import SimpleBackend
from minitorch.tensor.opdb import OpDatabaseSuite


class TestSimpleOps(OpDatabaseSuite):
    backend = SimpleBackend
