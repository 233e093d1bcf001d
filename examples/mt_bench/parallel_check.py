"""The calls of the course's ``project/parallel_check.py``, against ``minitorch.fast_ops``.

The course's program builds each of its four kernels from ``minitorch.fast_ops``
(``tensor_map``, ``tensor_zip`` and ``tensor_reduce`` of ``njit``-compiled operators, and
``tensor_matrix_multiply``), runs it once on tensors of zeros, passing each tensor as
``*t.tuple()`` (storage, shape, strides), and prints Numba's parallel diagnostics at level 3.
This script makes the same calls, so its output is what the course's program prints here.

    python -m mt_bench.parallel_check          # hatch run course-parallel-check

Each kernel compiles in this process (no disk cache: a cached kernel has no report), a few
seconds each. ``hatch run parallel-check`` reports the backends' own kernels instead.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from numba import njit

import minitorch
import minitorch.fast_ops


def main(argv: Sequence[str] | None = None) -> None:
    """Build, run and report each of the course's kernels as its parallel_check.py does."""
    parser = argparse.ArgumentParser(
        prog="python -m mt_bench.parallel_check", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--level", type=int, default=3, choices=[1, 2, 3, 4],
                        help="Numba's diagnostics level (the course uses 3)")  # fmt: skip
    level = parser.parse_args(argv).level
    ops, fast_ops, zeros = minitorch.operators, minitorch.fast_ops, minitorch.zeros

    print("MAP")
    tmap = fast_ops.tensor_map(njit()(ops.id))
    out, a = zeros((10,)), zeros((10,))
    tmap(*out.tuple(), *a.tuple())
    print(tmap.parallel_diagnostics(level=level))

    print("ZIP")
    tzip = fast_ops.tensor_zip(njit()(ops.eq))
    out, a, b = zeros((10,)), zeros((10,)), zeros((10,))
    tzip(*out.tuple(), *a.tuple(), *b.tuple())
    print(tzip.parallel_diagnostics(level=level))

    print("REDUCE")
    treduce = fast_ops.tensor_reduce(njit()(ops.add))
    out, a = zeros((1,)), zeros((10,))
    treduce(*out.tuple(), *a.tuple(), 0)
    print(treduce.parallel_diagnostics(level=level))

    print("MATRIX MULTIPLY")
    tmm = fast_ops.tensor_matrix_multiply
    out, a, b = zeros((1, 10, 10)), zeros((1, 10, 20)), zeros((1, 20, 10))
    tmm(*out.tuple(), *a.tuple(), *b.tuple())
    print(tmm.parallel_diagnostics(level=level))


if __name__ == "__main__":
    main()
