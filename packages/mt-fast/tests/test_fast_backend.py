"""The shared backend suite of mt-tensor, run on FastBackend."""

from minitorch.fast import FastBackend
from minitorch.tensor.testing import BackendSuite


class TestFastBackend(BackendSuite):
    backend = FastBackend
