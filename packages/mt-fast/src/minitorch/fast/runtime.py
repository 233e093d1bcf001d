"""What every kernel module needs from Numba, set up when the first kernel is built.

Importing ``minitorch.fast`` does not import Numba: ``FastOps`` imports a kernel module
(``plain`` or ``tuned``) on the first call of one of its operations, and each kernel module
imports this one first. Importing it

- lets kernels call mt-tensor's index helpers (``to_index``, ``broadcast_index``,
  ``index_to_position``, ``is_contiguous_layout``): Numba compiles them from mt-tensor's
  own source;
- starts Numba's thread pool, to learn which threading layer it chose (see ``run``);
- sets glibc's ``malloc`` to keep freed memory for the next step (``memory``; ``KEEPS_MEMORY``).

- listens for Numba's ``numba:compile`` event (its public event API), so that the first
  kernel this process really compiles (not one loaded from the disk cache) prints a
  one-line notice to stderr (``COMPILE_NOTICE``; ``MINITORCH_QUIET=1`` hides it).

It also holds what the kernel modules share: ``jit_scalar`` (an operator callable from a
kernel), ``Kernel`` (one kernel compiled twice: parallel, and serial for small work), the
launcher ``run`` and its small-work policy ``GRAIN``.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numba
from numba.core import event
from numba.extending import is_jitted, register_jitable

from minitorch.tensor import broadcast_index, index_to_position, is_contiguous_layout, to_index

from .memory import keep_freed_memory

__all__ = [
    "COMPILE_NOTICE",
    "GRAIN",
    "KEEPS_MEMORY",
    "SERIAL",
    "Kernel",
    "direct",
    "jit_scalar",
    "run",
    "twin",
]

KEEPS_MEMORY = keep_freed_memory()
"""True if ``malloc`` was set to keep freed memory (``memory.keep_freed_memory``)."""

for _helper in (
    index_to_position,
    to_index,
    broadcast_index,
    is_contiguous_layout,
):
    register_jitable(_helper)

_registered: set[Any] = set()

COMPILE_NOTICE = (
    "minitorch.fast: compiling kernels for first use (a first training step builds about 13, "
    "roughly 20-60 s on 2 cores; cached on disk afterwards; MINITORCH_QUIET=1 hides this)"
)
"""Printed to stderr once per process, when Numba starts compiling the first minitorch kernel.

Not printed when kernels load from Numba's disk cache. The figures are measured: see
"Compile time" in mt-fast's README.
"""


class _CompileNotice(event.Listener):  # type: ignore[misc]
    """Print ``COMPILE_NOTICE`` when Numba starts compiling a minitorch CPU kernel, once."""

    shown = False

    def on_start(self, ev: event.Event) -> None:
        dispatcher = ev.data["dispatcher"]
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        on_gpu = "cuda" in type(dispatcher).__module__  # the figures are the CPU kernels'
        if _CompileNotice.shown or on_gpu or not module.startswith("minitorch."):
            return
        _CompileNotice.shown = True
        if os.environ.get("MINITORCH_QUIET", "") not in ("", "0"):
            return
        print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, ev: event.Event) -> None:
        """Nothing to do when the compile ends."""


event.register("numba:compile", _CompileNotice())


def jit_scalar(fn: Callable[..., float]) -> Callable[..., float]:
    """Make a plain scalar function (e.g. ``operators.mul``) callable from kernels.

    ``register_jitable`` keeps ``fn`` itself as the closure value, so kernels built on it
    hit Numba's cache across processes (a closure over an ``njit`` dispatcher would not).
    An already compiled function (``njit(operators.mul)``, as the course passes) is
    callable from kernels as it is, and is returned unchanged.
    """
    if is_jitted(fn):
        return fn
    if fn not in _registered:
        register_jitable(fn)
        _registered.add(fn)
    return fn


GRAIN = 1 << 15
"""Work (elements touched) below which a kernel runs on one thread.

Waking the thread pool costs more than it saves, and far more on a busy machine. Numba
cannot cache a kernel that sets its own thread count, so the launcher decides: a ``Kernel``
runs its serial twin, any other kernel runs with Numba's thread count set to 1.
"""


class Kernel(NamedTuple):
    """One kernel source compiled twice (see ``twin``): for large work and for small work.

    Launching a parallel kernel costs microseconds even on one thread (Numba's parallel
    scheduler still runs); the serial twin costs what a plain function call does, which is
    what a 1-element tensor operation needs. Both compute the same result the same way.
    """

    parallel: Callable[..., None]
    serial: Callable[..., None]
    same: Callable[..., None] | None = None
    """Optional, for small work whose operands all share the output's layout (the same
    shape and strides): a serial kernel given each storage once and the layout once
    (``out, in..., shape, strides``), which Numba dispatches in about half the time of
    the full argument list (see ``make_map`` and ``make_zip`` in ``kernels.tuned``)."""

    def __call__(self, *args: Any) -> None:
        """Run the parallel twin (``run`` chooses a twin by the work instead)."""
        self.parallel(*args)


def twin(build: Callable[[Any], Callable[..., None]]) -> Kernel:
    """Return ``Kernel(build(numba.prange), build(range))``.

    ``build(loop)`` compiles one kernel whose parallel loops are ``for i in loop(n)``, with
    ``njit(parallel=loop is numba.prange, ...)``. ``loop`` is a closure value of the kernel,
    so the two twins also have different keys in Numba's on-disk cache. Numba compiles each
    twin on its first call only.
    """
    return Kernel(build(numba.prange), build(range))


def direct(dispatcher: Any, args: tuple[Any, ...]) -> Callable[..., None] | None:
    """The compiled entry point that ``dispatcher(*args)`` just ran, or None.

    For a ``Kernel.same`` kernel, whose arguments are 1-D arrays: float64 storages, the
    first written, then the int64 shape and strides. The entry point unboxes its
    arguments without Numba's type dispatch (about 0.3 us of a one-element ``a + b`` on
    2-5 arrays), so it is only returned when every argument is a 1-D C-contiguous array
    of those dtypes, and its callers pass it only storages whose strides are ``(8,)``
    (1-D, contiguous float64) with the shared shape and stride arrays: arrays of another
    type would not be checked by it. None when Numba keeps no such overload (or no
    longer exposes it: the dispatcher then stays in use).
    """
    types = numba.core.types
    try:
        sig = tuple(numba.typeof(a) for a in args)
        entry = dispatcher.overloads[sig].entry_point
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    dtypes = [types.float64] * (len(args) - 2) + [types.int64] * 2
    for i, (t, dtype) in enumerate(zip(sig, dtypes, strict=True)):
        if not (isinstance(t, types.Array) and t.ndim == 1 and t.layout == "C"):
            return None
        if t.dtype != dtype or (i == 0 and not t.mutable):
            return None
    return entry  # type: ignore[no-any-return]


# Numba's ``workqueue`` threading layer (used when neither TBB nor OpenMP loads, or when
# ``NUMBA_THREADING_LAYER=workqueue``) aborts the process when two Python threads launch
# parallel kernels at once; under it, launches take turns. ``get_num_threads`` starts the
# thread pool, after which ``threading_layer`` names the layer Numba chose.
numba.get_num_threads()
SERIAL = numba.threading_layer() == "workqueue"
"""True when kernel launches are serialised (Numba's workqueue layer is not thread-safe)."""
_LAUNCH_LOCK = threading.Lock()


def _launch(kernel: Callable[..., None], work: int, *args: Any) -> None:
    if work >= GRAIN:
        kernel(*args)
        return
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        kernel(*args)
    finally:
        numba.set_num_threads(threads)


def run(kernel: Kernel | Callable[..., None], work: int, *args: Any) -> None:
    """Call ``kernel(*args)``, on one thread when ``work`` is below ``GRAIN``.

    A ``Kernel`` below ``GRAIN`` runs its serial twin directly (no thread pool involved);
    otherwise its parallel one. Safe from several Python threads: under Numba's workqueue
    layer, parallel launches take turns.
    """
    if isinstance(kernel, Kernel):
        if work < GRAIN:
            kernel.serial(*args)
            return
        kernel = kernel.parallel
    if SERIAL:
        with _LAUNCH_LOCK:
            _launch(kernel, work, *args)
    else:
        _launch(kernel, work, *args)
