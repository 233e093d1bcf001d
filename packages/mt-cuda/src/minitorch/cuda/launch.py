"""Launch configuration: how many blocks and threads each kernel runs with, in one place.

Every launch size comes from these functions. Blocks are never larger than the work
needs, so a tiny tensor runs one small block: on a GPU that costs nothing, and on the
CUDA simulator, which runs every CUDA thread as a Python thread, it is what keeps tests
fast. The shared-memory buffers of the kernels are sized by ``THREADS_PER_BLOCK`` and
``TILE`` at compile time; the functions below never ask for more.
"""

from __future__ import annotations

__all__ = [
    "MAX_GRID_Z",
    "PRACTICE_BLOCK",
    "THREADS_PER_BLOCK",
    "TILE",
    "elementwise_launch",
    "practice_mm",
    "practice_sum",
    "reduction_threads",
    "tiles",
]

THREADS_PER_BLOCK = 256
"""Threads in a full block of the elementwise and reduce kernels (a multiple of the warp)."""

TILE = 16
"""Side of the square output tile of the matmul kernel (``TILE * TILE`` threads a block)."""

MAX_GRID_Z = 65535
"""CUDA's limit on the third grid dimension; the matmul kernel loops over larger batches."""


def elementwise_launch(size: int) -> tuple[int, int]:
    """Return ``(blocks, threads)`` for one thread per element of ``size`` elements.

    ``threads`` is ``THREADS_PER_BLOCK`` (fewer for a smaller ``size``) and ``blocks *
    threads >= size``: the kernel skips threads whose ordinal ``cuda.grid(1)`` is past the end.
    """
    threads = max(1, min(THREADS_PER_BLOCK, size))
    return (size + threads - 1) // threads, threads


def reduction_threads(n: int) -> int:
    """Return the threads of a reduce block folding ``n`` values: a power of two.

    The tree reduction (``block_reduce``) halves the active threads each step, so the block
    size must be a power of two; it is the smallest one covering ``n``, at most
    ``THREADS_PER_BLOCK`` (each thread then folds several values first).
    """
    threads = 1
    while threads < n and threads < THREADS_PER_BLOCK:
        threads *= 2
    return threads


def tiles(batch: int, rows: int, cols: int) -> tuple[tuple[int, int, int], tuple[int, int]]:
    """Return ``(grid, block)`` for the matmul kernel over a ``(batch, rows, cols)`` output.

    The block is a ``t x t`` square of threads, one per output element of a tile, with
    ``t = TILE`` unless the whole matrix fits a smaller square. The grid has one
    block per tile (x: column tiles, y: row tiles) and per batch entry (z, capped at
    ``MAX_GRID_Z``; the kernel strides over the rest).
    """
    t = max(1, min(TILE, max(rows, cols)))
    grid = ((cols + t - 1) // t, (rows + t - 1) // t, max(1, min(batch, MAX_GRID_Z)))
    return grid, (t, t)


PRACTICE_BLOCK = 32
"""Block size of the practice kernels: ``sum_practice`` sums 32 values a block, and
``mm_practice`` multiplies matrices of at most 32 x 32 in one block."""


def practice_sum(size: int) -> tuple[int, int]:
    """Return ``(blocks, threads)`` for ``sum_practice``: one block per 32 values."""
    return max(1, (size + PRACTICE_BLOCK - 1) // PRACTICE_BLOCK), PRACTICE_BLOCK


def practice_mm(*sizes: int) -> tuple[int, tuple[int, int]]:
    """Return ``(blocks, threads)`` for ``mm_practice``: one square block covering every size."""
    side = max(1, *sizes)
    return 1, (side, side)
