"""The fast backend's convolution runs the Numba kernels of ``kernels/fast.py``.

The course's starter of mt-nn leaves ``kernels/fast.py`` out (``solution-only`` in course.toml):
there the fast backend runs the student's plain kernels of ``kernels/simple.py``.
"""

import pytest

from minitorch.fast import FastBackend
from minitorch.nn import conv as conv_module

pytestmark = pytest.mark.task4_2


def test_fast_backend_gets_the_numba_kernels() -> None:
    assert conv_module.CONV_KERNELS["fast"] == "minitorch.nn.kernels.fast"
    assert conv_module.kernels_for(FastBackend).__name__ == "minitorch.nn.kernels.fast"
