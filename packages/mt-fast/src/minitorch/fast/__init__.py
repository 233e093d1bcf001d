"""MiniTorch module 3: ``FastOps``, a parallel CPU backend built with Numba.

``FastBackend`` runs every tensor operation of mt-tensor through parallel kernels; use it
with ``tensor(..., backend=FastBackend)`` or ``minitorch.tensor.backend("fast")``.
"""

from .__about__ import __version__
from .fast_ops import FastBackend, FastOps

__all__ = ["FastBackend", "FastOps", "__version__"]
