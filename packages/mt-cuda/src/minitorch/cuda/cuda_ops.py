"""``CudaOps``: the backend protocol implemented with CUDA kernels on device storage."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from minitorch.tensor import TensorBackend, TensorOps

from . import device, kernels

__all__ = ["CudaBackend", "CudaOps"]


class CudaOps(TensorOps):
    """GPU backend: storage lives in device memory and every primitive is a CUDA kernel.

    Shapes, broadcasting, allocation and the matmul batch prologue are ``TensorOps``'s;
    this class supplies the storage hooks (device arrays) and the kernels.
    """

    cuda = True
    name = "cuda"

    @staticmethod
    def storage_zeros(size: int) -> device.DeviceArray:
        """Allocate ``size`` zeroed floats on the device (no host copy)."""
        return device.device_zeros(size)

    @staticmethod
    def storage_empty(size: int) -> device.DeviceArray:
        """Allocate ``size`` floats on the device for a kernel to fill (no fill kernel)."""
        return device.device_empty(size)

    @staticmethod
    def storage_from_numpy(array: npt.NDArray[np.float64]) -> device.DeviceArray:
        """Copy a flat host array to the device (a one-element constant is not copied)."""
        return device.to_device(array)

    @staticmethod
    def storage_to_numpy(storage: device.DeviceArray) -> npt.NDArray[np.float64]:
        """Copy device storage to a new host array."""
        return device.to_host(storage)

    @staticmethod
    def is_storage(storage: Any) -> bool:
        """True for a flat float64 device array; host numpy arrays are not CUDA storage."""
        return device.is_device_array(storage)

    @staticmethod
    def map_kernel(fn: Callable[[float], float]) -> Callable[..., None]:
        """See ``TensorOps.map_kernel``."""
        return _checked(kernels.make_map(fn))

    @staticmethod
    def zip_kernel(fn: Callable[[float, float], float]) -> Callable[..., None]:
        """See ``TensorOps.zip_kernel``."""
        return _checked(kernels.make_zip(fn))

    @staticmethod
    def reduce_kernel(fn: Callable[[float, float], float]) -> Callable[..., None]:
        """See ``TensorOps.reduce_kernel``."""
        return _checked(kernels.make_reduce(fn))

    @staticmethod
    def matmul_kernel(*args: Any) -> None:
        """See ``TensorOps.matmul_kernel``."""
        device.require_device()
        kernels.matmul(*args)


def _checked(launcher: Callable[..., None]) -> Callable[..., None]:
    def call(*args: Any) -> None:
        device.require_device()
        launcher(*args)

    return call


CudaBackend = TensorBackend(CudaOps, "cuda")
"""The CUDA backend (``backend("cuda")``); on Numba's simulator without a GPU."""
