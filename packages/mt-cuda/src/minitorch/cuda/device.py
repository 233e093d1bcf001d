"""Device storage: whether a GPU is there, allocating on it, and moving data to and from it.

A tensor on ``CudaBackend`` keeps its flat float64 storage in GPU memory (a Numba device
array) from one operation to the next. Data crosses between host and device only through
``_to_device`` and ``_to_host`` below, and only when a user asks for it: creating a tensor
from host values, ``to_numpy``/``item``/printing, or ``.to(backend)``. Zeroed buffers and
one-element constants (the ``2.0`` of ``x * 2.0``) are written on the device by a fill
kernel whose value travels in the launch parameters, so they copy nothing.

Nothing here touches CUDA when the module is imported: ``import minitorch.cuda`` works on
any machine, and only using the backend without a GPU (and without the simulator) fails.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import cuda

from . import _simulator, launch

__all__ = [
    "DeviceArray",
    "device_empty",
    "device_full",
    "device_zeros",
    "is_available",
    "is_device_array",
    "require_device",
    "simulator_enabled",
    "to_device",
    "to_host",
]

DeviceArray = Any
"""A 1-D float64 Numba device array (``FakeCUDAArray`` on the simulator)."""

_available: bool | None = None


def simulator_enabled() -> bool:
    """True if Numba's CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1`` when numba loaded)."""
    try:
        from numba.cuda.core import config  # numba-cuda's own configuration
    except ImportError:  # pragma: no cover - older numba-cuda reads numba's configuration
        from numba.core import config
    return bool(config.ENABLE_CUDASIM)


if simulator_enabled():
    _simulator.install()  # its shared arrays are shared by the whole block, always


def is_available() -> bool:
    """True if CudaBackend can run here: a CUDA GPU was found, or the simulator is on."""
    global _available
    if _available is None:
        try:
            _available = bool(cuda.is_available())
        except Exception:  # a broken driver install counts as no GPU
            _available = False
    return _available


def _reason() -> str:
    try:
        error = cuda.cuda_error()
    except Exception as e:  # pragma: no cover - depends on the driver install
        error = e
    text = " ".join(str(error).split()) if error else ""
    return f" ({text})" if text else ""


def require_device() -> None:
    """Raise a RuntimeError that says what to do if CudaBackend cannot run here."""
    if is_available():
        return
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    hidden = f"; CUDA_VISIBLE_DEVICES={visible!r} hides devices" if visible is not None else ""
    raise RuntimeError(
        f"CudaBackend needs a CUDA GPU, and no CUDA GPU was found{_reason()}{hidden}. To run "
        "it without a GPU on Numba's CUDA simulator (slow; for tests and learning), set "
        "NUMBA_ENABLE_CUDASIM=1 in the environment before Python starts."
    )


# ---------------------------------------------------------------------------------------
# The only two functions that copy data between host and device.


def _to_device(host: npt.NDArray[np.float64]) -> DeviceArray:
    """Copy a contiguous host array into a new device array (host to device)."""
    return cuda.to_device(host)


def _to_host(storage: DeviceArray) -> npt.NDArray[np.float64]:
    """Copy a device array into a new host array (device to host)."""
    host: npt.NDArray[np.float64] = storage.copy_to_host()
    return host


# ---------------------------------------------------------------------------------------
# Storage.


@cuda.jit
def _fill(out, value):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = value


def device_full(size: int, value: float) -> DeviceArray:
    """Allocate ``size`` floats on the device, each set to ``value`` by a kernel (no copy)."""
    require_device()
    out = cuda.device_array(size, dtype=np.float64)
    if size > 0:
        blocks, threads = launch.elementwise_launch(size)
        _fill[blocks, threads](out, float(value))
    return out


def device_empty(size: int) -> DeviceArray:
    """Allocate ``size`` uninitialised floats on the device (for a kernel to overwrite)."""
    require_device()
    return cuda.device_array(size, dtype=np.float64)


def device_zeros(size: int) -> DeviceArray:
    """Allocate ``size`` zeroed floats on the device (written by a kernel, no copy)."""
    return device_full(size, 0.0)


def to_device(array: npt.ArrayLike) -> DeviceArray:
    """Copy host values to a new flat device array.

    A one-element array (a scalar constant) is written by the fill kernel instead: the
    value goes to the GPU inside the kernel's launch parameters, with no memory copy.
    """
    require_device()
    flat = np.ascontiguousarray(array, dtype=np.float64).reshape(-1)
    if flat.size <= 1:
        return device_full(flat.size, float(flat[0]) if flat.size else 0.0)
    return _to_device(flat)


def to_host(storage: DeviceArray) -> npt.NDArray[np.float64]:
    """Copy a device array to a new host numpy array."""
    require_device()
    return _to_host(storage)


def is_device_array(storage: Any) -> bool:
    """True for a flat float64 device array (not for a host numpy array)."""
    return (
        bool(getattr(storage, "__cuda_ndarray__", False))
        and not isinstance(storage, np.ndarray)
        and storage.ndim == 1
        and storage.dtype == np.float64
    )
