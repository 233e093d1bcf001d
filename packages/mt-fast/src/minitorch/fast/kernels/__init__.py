"""The fast backend's kernel modules: one per role, each of one shape, ``KernelModule``.

- ``plain``: the course's kernels (tasks 3.1 and 3.2), one ``prange`` loop nest per
  primitive; what a student writes and ``PlainFastOps`` runs;
- ``tuned``: the same results with fast paths, each kernel compiled twice (parallel for
  large work, serial for small); what the released ``FastOps`` runs. A course starter
  leaves it out, and there ``FastOps`` runs ``plain``.

``FastOps`` imports the module its ``kernels`` names on the first call of an operation, so
importing this package (which holds only the protocol) imports no Numba.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["KernelModule"]


class KernelModule(Protocol):
    """What a kernel module offers ``FastOps`` and the diagnostics: the factories and tables.

    Every kernel takes ``(storage, shape, strides)`` triples, as the backend protocol of
    mt-tensor defines them, and writes every element of its output.
    """

    KERNELS: dict[str, Any]
    """Every kernel built so far, by name (``map[neg]``, ``matmul``): the one small work
    runs (a serial twin, where the module compiles one)."""

    PARALLEL: dict[str, Any]
    """The parallel kernel of each name, for Numba's parallel diagnostics (the same object
    as in ``KERNELS`` where a kernel has no serial twin)."""

    def make_map(self, fn: Callable[[float], float]) -> Callable[..., None]:
        """``kernel(out, out_shape, out_strides, in, in_shape, in_strides)``: ``fn`` mapped."""
        ...

    def make_zip(self, fn: Callable[[float, float], float]) -> Callable[..., None]:
        """``kernel(out, ..., a, ..., b, ...)``: ``fn`` of broadcast pairs."""
        ...

    def make_reduce(self, fn: Callable[[float, float], float]) -> Callable[..., None]:
        """``kernel(out, ..., a, ..., dim, start)``: ``fn`` folded over ``dim`` from ``start``."""
        ...

    def matmul(
        self,
        out: Any,
        out_shape: Any,
        out_strides: Any,
        a: Any,
        a_shape: Any,
        a_strides: Any,
        b: Any,
        b_shape: Any,
        b_strides: Any,
    ) -> None:
        """The batched matrix product over 3-D triples (a batch of 1 broadcasts)."""
        ...

    def run(self, kernel: Any, work: int, *args: Any) -> None:
        """Launch ``kernel(*args)``: on one thread (or its serial twin) for small ``work``."""
        ...
