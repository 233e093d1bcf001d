"""One fix for Numba's CUDA simulator: a block's shared arrays are shared by all its threads.

The simulator (``NUMBA_ENABLE_CUDASIM=1``) runs each CUDA thread as a Python thread, and
makes a ``cuda.shared.array`` the first time a thread of the launch reaches its line:
numba-cuda's ``FakeCUDAShared.array`` looks the line up in a dict and, when nothing is
there, creates the array and stores it. Two threads that both look before either stores
get two arrays, and from then on each writes its own "shared" memory: a kernel that is
right on a GPU returns wrong numbers, now and then. With the interpreter's default switch
interval (5 ms) a thread is rarely interrupted in that window; with a short one, or a
trace function in every thread (the course's tests and grader have both), it happens
about once in a few hundred launches. ``install`` makes the look-up and the store one
step, under a lock.

It replaces a method of the simulator, numba-cuda's private API: ``install`` checks that
the class still has the shape it replaces, and where it does not, warns and changes
nothing.
"""

from __future__ import annotations

import sys
import threading
import warnings
from typing import Any

__all__ = ["install", "installed"]

_LOCK = threading.Lock()
_original: Any = None


def _array(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
    """``FakeCUDAShared.array`` with the look-up and the store of an allocation in one step."""
    if alignment is not None or shape == 0:  # refused, or the dynamic buffer: no look-up
        return _original(self, shape, dtype, alignment)
    caller = sys._getframe(1)  # the kernel's line names the array, as in the original
    key = (caller.f_code.co_filename, caller.f_lineno)
    with _LOCK:
        found = self._allocations.get(key)
        if found is None:
            from numba.cuda.simulator import kernelapi

            if isinstance(dtype, kernelapi.types.Type):
                dtype = kernelapi.numpy_support.as_dtype(dtype)
            found = self._allocations[key] = kernelapi.np.empty(shape, dtype)
    return found


def _problems(kernelapi: Any) -> list[str]:
    """What differs from the simulator this fix was written for (numba-cuda 0.30)."""
    shared = getattr(kernelapi, "FakeCUDAShared", None)
    if not isinstance(shared, type) or not callable(getattr(shared, "array", None)):
        return ["kernelapi.FakeCUDAShared.array is missing"]
    problems = [
        f"kernelapi.{name} is missing"
        for name in ("types", "numpy_support", "np")
        if getattr(kernelapi, name, None) is None
    ]
    try:
        if not isinstance(shared(0)._allocations, dict):
            problems.append("FakeCUDAShared()._allocations is not a dict")
    except Exception as e:  # a changed constructor
        problems.append(f"FakeCUDAShared(0) failed: {e!r}")
    return problems


def installed() -> bool:
    """True once ``install`` has replaced the simulator's shared-array allocation."""
    return _original is not None


def install() -> None:
    """Make the simulator's shared arrays one per block and line, whatever the thread timing.

    Call it with the simulator on (numba imported with ``NUMBA_ENABLE_CUDASIM=1``); it does
    nothing the second time. Where the simulator's class is not as expected, it warns.
    """
    global _original
    if _original is not None:
        return
    from numba.cuda.simulator import kernelapi

    problems = _problems(kernelapi)
    if problems:
        warnings.warn(
            "minitorch.cuda cannot make the CUDA simulator's shared arrays thread-safe "
            f"({'; '.join(problems)}): a kernel may now and then see a shared array of its "
            "own on the simulator",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    _original = kernelapi.FakeCUDAShared.array
    kernelapi.FakeCUDAShared.array = _array
