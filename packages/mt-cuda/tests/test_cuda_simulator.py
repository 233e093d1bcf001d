"""The simulator's shared arrays are one per block and line, whatever the thread timing."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from numba import cuda, types

from minitorch.cuda import _simulator, simulator_enabled

pytestmark = pytest.mark.skipif(
    not simulator_enabled(), reason="a fix of Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
)


class RacingLookup(dict):  # type: ignore[type-arg]
    """An allocation table that forces the race the fix is about, instead of hoping for it.

    A look-up that finds nothing waits until a second look-up has happened: so two threads
    both look up before either stores, every time, whatever the machine's load. Where a
    lock makes that impossible (the fix holds one from the look-up to the store), the wait
    ends after ``patience`` seconds and the thread goes on alone.
    """

    def __init__(self, patience: float) -> None:
        super().__init__()
        self.patience = patience
        self.lookups = 0
        self.changed = threading.Condition()

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key, default)
        with self.changed:
            self.lookups += 1
            self.changed.notify_all()
            if found is None:
                self.changed.wait_for(lambda: self.lookups >= 2, timeout=self.patience)
        return found


def allocate_from_four_threads(array: Any, patience: float) -> list[Any]:
    """What four threads get from the same line of a kernel, ``cuda.shared.array(8, float64)``."""
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    shared = FakeCUDAShared(0)
    shared._allocations = RacingLookup(patience)
    got: list[Any] = []
    start = threading.Barrier(4)

    def thread() -> None:
        start.wait()
        got.append(array(shared, 8, types.float64))  # one line: one shared array

    threads = [threading.Thread(target=thread) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def test_the_fix_is_installed_where_the_simulator_is_on() -> None:
    from numba.cuda.simulator import kernelapi

    assert _simulator.installed()
    assert kernelapi.FakeCUDAShared.array is _simulator._array
    assert _simulator._problems(kernelapi) == []


def test_threads_racing_to_a_shared_array_get_one_array() -> None:
    # The fix's lock keeps a second look-up out until the first thread stored: it waits
    # out its short patience alone, and every thread gets that one array.
    got = allocate_from_four_threads(_simulator._array, patience=0.2)
    assert len({id(a) for a in got}) == 1
    assert got[0].shape == (8,)
    assert got[0].dtype == np.float64


def test_the_simulators_own_allocation_gives_racing_threads_arrays_of_their_own() -> None:
    # What the fix is for: numba-cuda's method looks up and stores in two steps, so two
    # threads that both look up first (as RacingLookup makes them, always) store two arrays.
    got = allocate_from_four_threads(_simulator._original, patience=60.0)
    assert len({id(a) for a in got}) > 1


def test_two_shared_arrays_of_a_kernel_stay_apart_and_blocks_share_theirs() -> None:
    @cuda.jit
    def kernel(out):  # type: ignore[no-untyped-def]
        first = cuda.shared.array(4, types.float64)
        second = cuda.shared.array(4, types.float64)
        t = cuda.threadIdx.x
        first[t] = t
        second[t] = 10.0 * t
        cuda.syncthreads()
        out[cuda.blockIdx.x * 4 + t] = first[3 - t] + second[t]

    out = np.zeros(8)
    kernel[2, 4](out)
    np.testing.assert_array_equal(out, [3.0 - t + 10.0 * t for t in range(4)] * 2)
