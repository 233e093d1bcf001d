"""The op database (minitorch.tensor.opdb) on the tuned and the plain kernels, against PyTorch."""

from minitorch.fast import FastBackend, PlainFastBackend
from minitorch.tensor.opdb import OpDatabaseSuite


class TestFastOps(OpDatabaseSuite):
    backend = FastBackend


class TestPlainFastOps(OpDatabaseSuite):
    backend = PlainFastBackend
