"""MiniTorch module 3: ``CudaOps``, a GPU tensor backend written with Numba CUDA kernels.

Tensors on ``CudaBackend`` keep their storage on the GPU between operations; values cross
to the host only when read (``to_numpy``, ``item``, printing) or moved (``t.to(backend)``).
Without a GPU, set ``NUMBA_ENABLE_CUDASIM=1`` to run the same kernels on Numba's CUDA
simulator. ``sum_practice`` and ``mm_practice`` are the course's warm-up exercises.

For layers that write CUDA kernels of their own (mt-nn's convolutions), the building blocks
of mt-cuda's kernels are public too: device storage (``to_device``, ``to_host``,
``device_empty``, ``device_zeros``, ``is_device_array``, ``require_device``), the launch
configuration (``THREADS_PER_BLOCK``, ``elementwise_launch``, ``reduction_threads``) and the
shared-memory block reduction (``block_reduce``).
"""

from .__about__ import __version__
from .cuda_ops import CudaBackend, CudaOps
from .device import (
    DeviceArray,
    device_empty,
    device_zeros,
    is_available,
    is_device_array,
    require_device,
    simulator_enabled,
    to_device,
    to_host,
)
from .kernels import block_reduce
from .launch import THREADS_PER_BLOCK, elementwise_launch, reduction_threads
from .practice import mm_practice, sum_practice

__all__ = [
    "THREADS_PER_BLOCK",
    "CudaBackend",
    "CudaOps",
    "DeviceArray",
    "__version__",
    "block_reduce",
    "device_empty",
    "device_zeros",
    "elementwise_launch",
    "is_available",
    "is_device_array",
    "mm_practice",
    "reduction_threads",
    "require_device",
    "simulator_enabled",
    "sum_practice",
    "to_device",
    "to_host",
]
