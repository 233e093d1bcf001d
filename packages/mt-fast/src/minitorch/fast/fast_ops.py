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
from math import prod
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from minitorch.tensor import (
    TensorBackend,
    TensorData,
    TensorOps,
    map_into,
    shape_broadcast,
    zip_into,
)

from .kernels import KernelModule

if TYPE_CHECKING:
    from minitorch.tensor import Tensor

__all__ = ["FastBackend", "FastOps", "PlainFastBackend", "PlainFastOps"]


@functools.cache
def _kernel_module(name: str) -> KernelModule:
    return cast(KernelModule, importlib.import_module(f"{__package__}.kernels.{name}"))


class _Operation:
    """One operation's kernels (``ops``' ``factory(fn)``), built with Numba on first use.

    Calling it launches the kernel on any work and layout: work below ``runtime.GRAIN``
    runs a ``Kernel``'s serial twin directly, since on a 1-element tensor the launch is
    most of an operation's time; ``work_arg`` is the argument whose length is the work
    (see ``runtime.run``). FastOps' ``map`` and ``zip`` call ``same`` themselves for small
    work whose operands share one layout, and ``direct`` once it is known (see
    ``runtime.direct``).
    """

    __slots__ = (
        "direct",
        "factory",
        "fn",
        "launch",
        "ops",
        "runtime",
        "same",
        "serial",
        "work_arg",
    )

    def __init__(self, ops: type[FastOps], factory: str, fn: Any, work_arg: int) -> None:
        self.ops, self.factory, self.fn, self.work_arg = ops, factory, fn, work_arg
        self.launch: Callable[..., None] | None = None
        self.serial: Callable[..., None] | None = None
        self.same: Callable[..., None] | None = None
        self.direct: Callable[..., None] | None = None
        self.runtime: Any = None

    def build(self) -> None:
        """Build the kernels (importing Numba with the kernel module)."""
        module = self.ops.kernel_module()
        kernel = getattr(module, self.factory)(self.fn)
        self.serial = getattr(kernel, "serial", None)
        self.same = getattr(kernel, "same", None)
        self.runtime = importlib.import_module(f"{__package__}.runtime")
        self.launch = functools.partial(module.run, kernel)

    def __call__(self, *args: Any) -> None:
        """Launch the kernel on ``args`` (a kernel's full argument list)."""
        if self.launch is None:
            self.build()
        work = len(args[self.work_arg])
        if self.serial is None or work >= self.runtime.GRAIN:  # read each time: it may be tuned
            self.launch(work, *args)  # type: ignore[misc]
            return
        # Operands of one layout share its (cached) shape and stride arrays: an identity
        # test, then half the arguments for Numba to dispatch (``runtime.Kernel.same``).
        if self.same is not None and args[1] is args[4] and args[2] is args[5]:
            if len(args) == 6:
                self.same(args[0], args[3], args[1], args[2])
                return
            if args[1] is args[7] and args[2] is args[8]:
                self.same(args[0], args[3], args[6], args[1], args[2])
                return
        self.serial(*args)

    def small(self, *args: Any) -> None:
        """Run ``same`` on ``(out, in..., shape, strides)``, and learn its ``direct`` form."""
        assert self.same is not None
        self.same(*args)
        if self.direct is None:
            self.direct = self.runtime.direct(self.same, args)


def _small_same(op: _Operation, size: int) -> bool:
    """True if ``op`` has a same-layout kernel and ``size`` is small work for it."""
    if op.launch is None:
        op.build()
    return op.same is not None and size < op.runtime.GRAIN


_UNIT = (8,)
"""The strides of a 1-D contiguous float64 array: storage ``direct`` may be given."""


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
        return _Operation(cls, "make_map", fn, 0)

    @classmethod
    def zip_kernel(cls, fn: Callable[[float, float], float]) -> Callable[..., None]:
        """See ``TensorOps.zip_kernel``."""
        return _Operation(cls, "make_zip", fn, 0)

    @classmethod
    def reduce_kernel(cls, fn: Callable[[float, float], float]) -> Callable[..., None]:
        """See ``TensorOps.reduce_kernel``."""
        return _Operation(cls, "make_reduce", fn, 3)

    @classmethod
    def map(cls, fn: Callable[[float], float]) -> Callable[..., Tensor]:
        """See ``TensorOps.map``; small work of one layout skips the generic launcher."""
        op = _Operation(cls, "make_map", fn, 0)

        def apply(a: Tensor, out: Tensor | None = None) -> Tensor:
            if out is not None:  # into the caller's tensor, as ``TensorOps.map`` does
                return map_into(op, a, out)
            ta = a._tensor
            shape, size = ta.shape, ta.size
            td = TensorData._fresh(np.empty(size), shape, size)
            o, x = td._kernel_args, ta._kernel_args or ta.tuple()
            s, st = o[1], o[2]  # type: ignore[index]
            if x[1] is s and x[2] is st:
                direct = op.direct  # known once ``small`` ran: the kernel is built
                if direct is not None and size < op.runtime.GRAIN and x[0].strides == _UNIT:
                    direct(o[0], x[0], s, st)  # type: ignore[index]
                    return type(a)._constant(td, a.backend)
                if _small_same(op, size):
                    op.small(o[0], x[0], s, st)  # type: ignore[index]
                    return type(a)._constant(td, a.backend)
            op(*o, *x)  # type: ignore[misc]
            return type(a)._constant(td, a.backend)

        return apply

    @classmethod
    def zip(cls, fn: Callable[[float, float], float]) -> Callable[..., Tensor]:
        """See ``TensorOps.zip``; small work of one layout skips the generic launcher.

        Speed: the generic launcher's argument tuples and Numba's dispatch were about a
        third of a one-element ``a + b`` (MiniTorch's tensor benchmark). The output's shape
        and allocation are ``TensorOps.zip``'s, written out here as there: on this path a
        shared helper would be one Python call more per binary operation.
        """
        op = _Operation(cls, "make_zip", fn, 0)

        def apply(a: Tensor, b: Tensor, out: Tensor | None = None) -> Tensor:
            if out is not None:  # into the caller's tensor, as ``TensorOps.zip`` does
                return zip_into(op, a, b, out)
            ta, tb = a._tensor, b._tensor
            shape = ta.shape
            if shape == tb.shape:
                size = ta.size
            else:
                shape = shape_broadcast(shape, tb.shape)
                size = prod(shape)
            td = TensorData._fresh(np.empty(size), shape, size)
            o = td._kernel_args
            x, y = ta._kernel_args or ta.tuple(), tb._kernel_args or tb.tuple()
            s, st = o[1], o[2]  # type: ignore[index]
            if x[1] is s and y[1] is s and x[2] is st and y[2] is st:
                direct = op.direct  # known once ``small`` ran: the kernel is built
                if (
                    direct is not None
                    and size < op.runtime.GRAIN
                    and x[0].strides == _UNIT
                    and y[0].strides == _UNIT
                ):
                    direct(o[0], x[0], y[0], s, st)  # type: ignore[index]
                    return type(a)._constant(td, a.backend)
                if _small_same(op, size):
                    op.small(o[0], x[0], y[0], s, st)  # type: ignore[index]
                    return type(a)._constant(td, a.backend)
            op(*o, *x, *y)  # type: ignore[misc]
            return type(a)._constant(td, a.backend)

        return apply

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
