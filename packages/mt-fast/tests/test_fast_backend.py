"""The shared backend suite of mt-tensor, run on the tuned and on the plain kernels."""

from minitorch.fast import FastBackend, PlainFastBackend
from minitorch.tensor.testing import BackendSuite


class TestFastBackend(BackendSuite):
    backend = FastBackend


class TestPlainFastBackend(BackendSuite):
    backend = PlainFastBackend
