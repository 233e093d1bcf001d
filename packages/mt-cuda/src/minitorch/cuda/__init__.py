"""MiniTorch module 3: ``CudaOps``, a GPU tensor backend written with Numba CUDA kernels.

Tensors on ``CudaBackend`` keep their storage on the GPU between operations; values cross
to the host only when read (``to_numpy``, ``item``, printing) or moved (``t.to(backend)``).
Without a GPU, set ``NUMBA_ENABLE_CUDASIM=1`` to run the same kernels on Numba's CUDA
simulator. ``sum_practice`` and ``mm_practice`` are the course's warm-up exercises.
"""

from .__about__ import __version__
from .cuda_ops import CudaBackend, CudaOps
from .device import is_available
from .practice import mm_practice, sum_practice

__all__ = ["CudaBackend", "CudaOps", "__version__", "is_available", "mm_practice", "sum_practice"]
