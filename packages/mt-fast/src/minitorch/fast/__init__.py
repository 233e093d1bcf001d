"""MiniTorch module 3: ``FastOps``, a parallel CPU backend built with Numba.

``FastBackend`` runs every tensor operation of mt-tensor through parallel kernels; use it
with ``tensor(..., backend=FastBackend)`` or ``minitorch.tensor.backend("fast")``.

Layers above that write kernels of their own (mt-nn) use ``cache_kernels_of`` so their
cached kernels are invalidated by changes to the code they compile in, and ``run_kernel``
to launch them with the same small-work policy as the backend's kernels.
"""

from .__about__ import __version__
from ._cache import install as cache_kernels_of
from .fast_ops import FastBackend, FastOps
from .kernels import run as run_kernel

__all__ = ["FastBackend", "FastOps", "__version__", "cache_kernels_of", "run_kernel"]
