"""``memory.keep_freed_memory``: freed buffers stay with the process for the next step.

Each case runs in a fresh Python (the setting is process-wide) and counts the page faults
of a loop that allocates and frees the same buffers, as a training step does.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

from minitorch.fast import memory

pytestmark = pytest.mark.task3_1


def _glibc() -> bool:
    try:
        ctypes.CDLL(None).gnu_get_libc_version  # noqa: B018
    except (OSError, AttributeError):
        return False
    return sys.platform.startswith("linux")


GLIBC = pytest.mark.skipif(not _glibc(), reason="the setting is glibc's mallopt")

# Three 8 MiB buffers written and freed ten times: freeing them leaves 24 MiB at the top
# of the heap, over glibc's default trim threshold, so by default every round writes some
# fresh pages (measured: about 1,050 faults a round of 6,144 pages); kept, only the first.
_STEPS = """
import resource, sys
import numpy as np
from minitorch.fast import memory
kept = memory.keep_freed_memory()
faults = []
for _ in range(10):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    buffers = [np.ones(1 << 20) for _ in range(3)]
    del buffers
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(kept, sum(faults[1:]) // 9)
"""


def _faults_per_round(**env: str) -> tuple[bool, int]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_"))}
    environ.update(env)
    done = subprocess.run(
        [sys.executable, "-c", _STEPS], env=environ, capture_output=True, text=True, check=True
    )
    kept, faults = done.stdout.split()
    return kept == "True", int(faults)


@GLIBC
def test_kept_memory_is_reused_without_page_faults() -> None:
    kept, faults = _faults_per_round()
    assert kept
    pages = 3 * (8 << 20) // 4096
    assert faults < pages // 20, f"{faults} page faults per round of {pages} pages"


@GLIBC
def test_the_system_setting_leaves_malloc_alone() -> None:
    kept, faults = _faults_per_round(MINITORCH_MALLOC="system")
    assert not kept
    # glibc's defaults give the freed top of the heap back: the loop faults again each round
    # (which is what keeping the memory saves).
    assert faults >= 3 * (8 << 20) // 4096 // 20


def test_the_users_own_malloc_settings_are_left_alone() -> None:
    for name in ("MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES", "MALLOC_ARENA_MAX"):
        assert memory.keep_freed_memory({name: "1"}) is False
    assert memory.keep_freed_memory({"MINITORCH_MALLOC": "system"}) is False
