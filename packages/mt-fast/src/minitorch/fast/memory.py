"""Freed memory kept by the process for the next training step, not handed back each time.

A training step allocates and frees the same buffers every step: each operation's output,
the padded planes of a convolution, the packed panels of a matrix product. With its
defaults glibc's ``malloc`` gives much of that memory back to the kernel when it is freed:
blocks above its mmap threshold (128 KiB at first) are mapped and unmapped one by one, and
a free that leaves more than its trim threshold at the top of the heap shrinks the heap.
The next step then writes fresh pages, and each 4 KiB page costs a page fault and a
zeroed page. Measured on 2 cores (AMD EPYC, Zen 4), a LeNet step at batch 16 ran
4.5-6.1 ms with glibc's defaults and 3.5-3.7 ms with the settings below; its
convolutions 1.6-2.3 -> 1.15 ms (the two largest take 0.48 ms called in a loop, where
their memory stays mapped).

So ``keep_freed_memory`` sets glibc's ``mallopt`` as a caching allocator behaves: blocks
up to ``MMAP_THRESHOLD`` come from the heap, and up to ``TRIM_THRESHOLD`` of free memory
at its top is kept. A process's peak stays about the same (fragmentation aside); what it
keeps after the peak is at most that much. It leaves ``malloc`` alone where the user
chose its settings (``MALLOC_*_`` environment variables or ``GLIBC_TUNABLES``), with
``MINITORCH_MALLOC=system``, and on any C library other than glibc.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Mapping

__all__ = ["MMAP_THRESHOLD", "TOP_PAD", "TRIM_THRESHOLD", "keep_freed_memory"]

MMAP_THRESHOLD = 32 << 20
"""Bytes: larger blocks are still mapped on their own (glibc's largest allowed value)."""

TRIM_THRESHOLD = 256 << 20
"""Bytes of free memory kept at the top of a heap before it is given back."""

TOP_PAD = 16 << 20
"""Bytes a heap grows by beyond each request (address space only until it is written)."""

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3  # <malloc.h>

_USER_SETTINGS = (
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_ARENA_MAX",
    "GLIBC_TUNABLES",
)


def keep_freed_memory(env: Mapping[str, str] = os.environ) -> bool:
    """Set glibc's ``malloc`` to keep freed memory for reuse; True if it now does.

    Args:
        env: the environment to read the user's choices from.

    Returns:
        False (and nothing changed) off Linux, with a C library other than glibc, or
        where ``MINITORCH_MALLOC=system`` or the user's own ``malloc`` settings are set;
        False too if glibc refuses a setting (those before it stay set).
    """
    if not sys.platform.startswith("linux") or env.get("MINITORCH_MALLOC", "") == "system":
        return False
    if any(name in env for name in _USER_SETTINGS):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 - glibc only (musl's mallopt does nothing)
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    settings = (
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        (_M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        (_M_TOP_PAD, TOP_PAD),
    )
    return all(mallopt(param, value) == 1 for param, value in settings)
