"""``FastOps``: the backend protocol implemented with the parallel kernels.

Two kernel modules of one shape (``kernels.KernelModule``) implement it: ``kernels/plain.py``,
the course's kernels (one ``prange`` loop nest per primitive, what a student writes), and
``kernels/tuned.py``, the same results with fast paths.
``FastOps`` / ``FastBackend`` run the tuned kernels; ``PlainFastOps`` / ``PlainFastBackend``
run the plain ones. Both pass the same backend suite. (A course starter ships ``plain``
only: its ``FastOps.kernels`` is ``"plain"``.)

Nothing here imports Numba: each operation imports its kernel module (and with it Numba,
the index helpers' registration and the kernel cache) on its first call, and builds its
kernel then.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any, ClassVar, cast

from minitorch.tensor import TensorBackend, TensorOps

from .kernels import KernelModule

__all__ = ["FastBackend", "FastOps", "PlainFastBackend", "PlainFastOps"]


@functools.cache
def _kernel_module(name: str) -> KernelModule:
    return cast(KernelModule, importlib.import_module(f"{__package__}.kernels.{name}"))


def _deferred(ops: type[FastOps], factory: str, fn: Any, work_arg: int) -> Callable[..., None]:
    """A kernel launcher that builds ``ops``' kernel ``factory(fn)`` on its first call.

    ``work_arg`` is the argument whose length is the launch's work (see ``runtime.run``).
    Work below ``runtime.GRAIN`` calls a ``Kernel``'s serial twin directly: on a 1-element
    tensor the launch is most of an operation's time.
    """
    serial: Callable[..., None] | None = None
    same: Callable[..., None] | None = None
    launch: Callable[..., None] | None = None
    runtime: Any = None

    def call(*args: Any) -> None:
        nonlocal serial, same, launch, runtime
        if launch is None:
            module = ops.kernel_module()
            kernel = getattr(module, factory)(fn)
            launch = functools.partial(module.run, kernel)
            serial = getattr(kernel, "serial", None)
            same = getattr(kernel, "same", None)
            runtime = importlib.import_module(f"{__package__}.runtime")
        work = len(args[work_arg])
        if serial is None or work >= runtime.GRAIN:  # read each time: it may be tuned
            launch(work, *args)
            return
        # Operands of one layout share its (cached) shape and stride arrays: an identity
        # test, then half the arguments for Numba to dispatch (``runtime.Kernel.same``).
        if same is not None and args[1] is args[4] and args[2] is args[5]:
            if len(args) == 6:
                same(args[0], args[3], args[1], args[2])
                return
            if args[1] is args[7] and args[2] is args[8]:
                same(args[0], args[3], args[6], args[1], args[2])
                return
        serial(*args)

    return call


class FastOps(TensorOps):
    """Parallel CPU backend: Numba ``prange`` kernels over host (numpy) storage."""

    name = "fast"
    kernels: ClassVar[str] = "tuned"
    """The module of ``minitorch.fast.kernels`` whose kernels it runs (``tuned`` or ``plain``)."""

    @classmethod
    def kernel_module(cls) -> KernelModule:
        """The kernel module (imported, with Numba, on first use)."""
        return _kernel_module(cls.kernels)

    @classmethod
    def map_kernel(cls, fn: Callable[[float], float]) -> Callable[..., None]:
        """See ``TensorOps.map_kernel``."""
        return _deferred(cls, "make_map", fn, 0)

    @classmethod
    def zip_kernel(cls, fn: Callable[[float, float], float]) -> Callable[..., None]:
        """See ``TensorOps.zip_kernel``."""
        return _deferred(cls, "make_zip", fn, 0)

    @classmethod
    def reduce_kernel(cls, fn: Callable[[float, float], float]) -> Callable[..., None]:
        """See ``TensorOps.reduce_kernel``."""
        return _deferred(cls, "make_reduce", fn, 3)

    @classmethod
    def matmul_kernel(cls, *args: Any) -> None:
        """See ``TensorOps.matmul_kernel``."""
        cls.kernel_module().matmul(*args)


FastBackend = TensorBackend(FastOps, "fast")
"""The parallel CPU backend (``backend("fast")``)."""


class PlainFastOps(FastOps):
    """``FastOps`` on the course's plain kernels (``minitorch.fast.kernels.plain``)."""

    name = "fast-plain"
    kernels: ClassVar[str] = "plain"


PlainFastBackend = TensorBackend(PlainFastOps, "fast-plain")
"""The parallel CPU backend on the course's plain kernels."""
