"""MiniTorch module 3: ``FastOps``, a parallel CPU backend built with Numba.

``FastBackend`` runs every tensor operation of mt-tensor through parallel kernels; use it
with ``tensor(..., backend=FastBackend)`` or ``minitorch.tensor.backend("fast")``. It runs
the kernel module ``FastOps.kernels`` names: the released package's tuned kernels, or in a
course starter, which leaves the tuned module out, the course's plain kernels (``plain``,
one ``prange`` loop nest per primitive), which ``PlainFastBackend`` always runs.
Importing this package does not import Numba: the kernels are built (or loaded from the
cache) on the first call of each operation.

Layers above that write kernels of their own (mt-nn) use ``cache_kernels_of`` so their
cached kernels are invalidated by changes to the code they compile in, and ``run_kernel``
to launch them with the same small-work and thread-safety policy as the backend's kernels;
``shifted_micro_kernel`` is the matrix product's register-blocked micro-kernel reading B
as shifted runs of one buffer (a direct convolution's inner loop), and
``micro_kernel_shape`` the block it takes on this CPU. They import Numba when first
looked up.

The course's kernel factories ``tensor_map``, ``tensor_zip``, ``tensor_reduce`` and its
kernel ``tensor_matrix_multiply`` (``minitorch.fast_ops.tensor_map``, ..., as the course's
``parallel_check.py`` calls them; see ``minitorch.fast.course``) import Numba when first
looked up, too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .__about__ import __version__
from .fast_ops import FastBackend, FastOps, PlainFastBackend, PlainFastOps

if TYPE_CHECKING:
    from ._cache import install as cache_kernels_of
    from .course import tensor_map, tensor_matrix_multiply, tensor_reduce, tensor_zip
    from .microkernel import shape as micro_kernel_shape
    from .microkernel import shifted_micro_kernel
    from .runtime import run as run_kernel

__all__ = [
    "FastBackend",
    "FastOps",
    "PlainFastBackend",
    "PlainFastOps",
    "__version__",
    "cache_kernels_of",
    "micro_kernel_shape",
    "run_kernel",
    "shifted_micro_kernel",
    "tensor_map",
    "tensor_matrix_multiply",
    "tensor_reduce",
    "tensor_zip",
]


def __getattr__(name: str) -> Any:
    """Import the Numba-side helpers on first use (PEP 562)."""
    if name == "cache_kernels_of":
        from ._cache import install

        return install
    if name in ("micro_kernel_shape", "shifted_micro_kernel"):
        from . import microkernel

        return (
            microkernel.shape if name == "micro_kernel_shape" else microkernel.shifted_micro_kernel
        )
    if name == "run_kernel":
        from .runtime import run

        return run
    if name in ("tensor_map", "tensor_zip", "tensor_reduce", "tensor_matrix_multiply"):
        from . import course

        return getattr(course, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
