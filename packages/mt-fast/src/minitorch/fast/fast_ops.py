"""``FastOps``: the backend protocol implemented with the parallel kernels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minitorch.tensor import TensorBackend, TensorOps

from . import kernels

__all__ = ["FastBackend", "FastOps"]


class FastOps(TensorOps):
    """Parallel CPU backend: Numba ``prange`` kernels over host (numpy) storage."""

    @staticmethod
    def map_kernel(fn: Callable[[float], float]) -> Callable[..., None]:
        """See ``TensorOps.map_kernel``."""
        kernel = kernels.make_map(fn)

        def call(*args: Any) -> None:
            kernels.run(kernel, len(args[0]), *args)

        return call

    @staticmethod
    def zip_kernel(fn: Callable[[float, float], float]) -> Callable[..., None]:
        """See ``TensorOps.zip_kernel``."""
        kernel = kernels.make_zip(fn)

        def call(*args: Any) -> None:
            kernels.run(kernel, len(args[0]), *args)

        return call

    @staticmethod
    def reduce_kernel(fn: Callable[[float, float], float]) -> Callable[..., None]:
        """See ``TensorOps.reduce_kernel``."""
        kernel = kernels.make_reduce(fn)

        def call(*args: Any) -> None:
            kernels.run(kernel, len(args[3]), *args)

        return call

    @staticmethod
    def matmul_kernel(*args: Any) -> None:
        """See ``TensorOps.matmul_kernel``."""
        kernels.matmul(*args)


FastBackend = TensorBackend(FastOps, "fast")
"""The parallel CPU backend (``backend("fast")``)."""
