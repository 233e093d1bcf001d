"""Inspect the parallel kernels: Numba's parallel diagnostics and compile times.

    python -m minitorch.fast.diagnostics parallel [--level 1..4] [--kernel NAME] [--plain]
    python -m minitorch.fast.diagnostics compile-time [--plain]

``parallel`` compiles every kernel of ``FastBackend`` in a throw-away cache directory (so
Numba has the parfor report to show) and prints, for each kernel, which loops became
parallel. ``compile-time`` runs each backend operation once and reports how long the
first call took: a compile on an empty cache, a load from disk afterwards. ``--plain``
looks at the course's plain kernels (``PlainFastBackend``) instead of the tuned ones.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence


def _operation_of(kernel: str) -> str:
    """The backend operation that runs a kernel: ``map[neg]`` -> ``neg_map``."""
    if kernel.startswith("matmul"):
        return "matrix_multiply"
    kind, _, fn = kernel.rstrip("]").partition("[")
    return f"{fn}_{kind}"


def exercise_backend(only: str | None = None, plain: bool = False) -> dict[str, float]:
    """Call every operation of ``FastBackend`` once (or the one running kernel ``only``).

    ``plain`` uses ``PlainFastBackend``.

    Returns seconds per operation.
    """
    import numpy as np

    from minitorch.tensor import TensorBackend, from_numpy

    from . import FastBackend, PlainFastBackend

    backend: TensorBackend = PlainFastBackend if plain else FastBackend
    a = from_numpy(np.linspace(0.1, 1.0, 12).reshape(3, 4), backend)
    b = from_numpy(np.linspace(1.0, 2.0, 4), backend)
    timings: dict[str, float] = {}
    for name in sorted(vars(backend)):
        if only is not None and name != _operation_of(only):
            continue
        op = getattr(backend, name)
        t0 = time.perf_counter()
        if name.endswith("_map"):
            op(a)
        elif name.endswith("_zip"):
            op(a, b)
        elif name.endswith("_reduce"):
            op(a, 1)
        elif name == "matrix_multiply":
            op(a, a.permute(1, 0))  # both operands k-major already
            op(a.permute(1, 0), a)  # both packed first
        else:
            continue
        timings[name] = time.perf_counter() - t0
    return timings


def compile_time(plain: bool = False) -> float:
    """Print the first-call time of every operation and return the total."""
    timings = exercise_backend(plain=plain)
    for name, seconds in timings.items():
        print(f"{name:20s} {seconds:8.3f} s")
    total = sum(timings.values())
    print(f"{'total':20s} {total:8.3f} s  ({len(timings)} operations)")
    return total


def parallel(level: int, only: str | None, plain: bool = False) -> None:
    """Compile every kernel (or ``only``) and print Numba's parallel diagnostics.

    Run it where nothing is cached yet (``main`` uses a fresh process and cache directory):
    a kernel loaded from disk carries no parfor report.
    """
    from . import FastOps, PlainFastOps, runtime

    grain, runtime.GRAIN = runtime.GRAIN, 0  # every launch parallel, so each twin compiles
    try:
        exercise_backend(only, plain)
    finally:
        runtime.GRAIN = grain
    module = (PlainFastOps if plain else FastOps).kernel_module()
    for name, kernel in sorted(module.PARALLEL.items()):
        if only and only != name:
            continue
        print(f"\n=== {name} " + "=" * max(0, 70 - len(name)))
        kernel.parallel_diagnostics(level=level)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m minitorch.fast.diagnostics")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parallel", help="print Numba's parallel diagnostics for each kernel")
    p.add_argument("--level", type=int, default=1, choices=[1, 2, 3, 4])
    p.add_argument("--kernel", default=None, help="only this kernel, e.g. 'map[neg]'")
    c = sub.add_parser("compile-time", help="time the first call of every operation")
    for command in (p, c):
        command.add_argument("--plain", action="store_true", help="the course's plain kernels")
    args = parser.parse_args(argv)
    if args.command == "parallel":
        # A new process with an empty cache: kernels loaded from disk carry no parfor
        # report.
        env = {**os.environ, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="minitorch-diag-")}
        code = (
            "from minitorch.fast.diagnostics import parallel; "
            f"parallel({args.level}, {args.kernel!r}, {args.plain!r})"
        )
        raise SystemExit(subprocess.run([sys.executable, "-c", code], env=env).returncode)
    else:
        compile_time(args.plain)


if __name__ == "__main__":
    main()
