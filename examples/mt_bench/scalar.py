"""Benchmark the Scalar autodiff engine: microseconds per operation, forward and backward.

Each of ``--repeat`` rounds builds a fresh graph of ``--ops`` Scalar operations
(``build_graph``) and backpropagates from its output; the table gives the best and the
median time per operation of ``forward`` (building the graph and its history),
``backward`` and ``forward (no_grad)`` (the same operations on constants). The garbage
collector is paused while a round is timed, as ``timeit`` does.

    hatch run bench:scalar            # or: python -m mt_bench.scalar --ops 10000
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from collections.abc import Sequence
from typing import Any

from minitorch.autodiff import Inv, Scalar
from mt_bench.common import microseconds_per_call
from mt_examples.support import HelpFormatter, positive_int

#: Operations added to the graph by each block of ``build_graph``.
OPS_PER_BLOCK = 8


def build_graph(n_ops: int, rng: random.Random, *, requires_grad: bool = True) -> Scalar:
    """Build a graph of ``n_ops`` Scalar operations and return its output.

    Each block of eight operations takes the previous output ``a`` and an earlier value
    ``b`` (chosen with ``rng``) from ``(0, 1)`` and computes
    ``relu(inv(exp(-log(sigmoid(a * b + a)))))``, which is again in ``(0, 1)``. A last
    partial block makes the count exact.

    Args:
        n_ops: number of operations (ScalarFunction applications), at least 1.
        rng: chooses the leaves' values and which earlier values each block reads.
        requires_grad: False builds the same values from constants, with no history.
    """
    if n_ops < 1:
        raise ValueError(f"n_ops must be at least 1, got {n_ops}")
    pool = [Scalar(rng.uniform(0.1, 0.9), requires_grad=requires_grad) for _ in range(16)]
    steps = (
        lambda t, a, b: t * b,
        lambda t, a, b: t + a,
        lambda t, a, b: t.sigmoid(),
        lambda t, a, b: t.log(),
        lambda t, a, b: -t,
        lambda t, a, b: t.exp(),
        lambda t, a, b: Inv.apply(t),
        lambda t, a, b: t.relu(),
    )
    done = 0
    t = pool[-1]  # replaced in the first block
    while done < n_ops:
        a = pool[-1]
        b = pool[rng.randrange(len(pool))]
        t = a
        for step in steps[: n_ops - done]:
            t = step(t, a, b)
            done += 1
        pool.append(t)
    return t


def _timed(fn: Any) -> tuple[float, Any]:
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        out = fn()
        return time.perf_counter() - start, out
    finally:
        if gc_was_enabled:
            gc.enable()


def run(n_ops: int = 10_000, repeat: int = 5, seed: int = 0) -> dict[str, dict[str, float]]:
    """Time ``repeat`` rounds of forward, backward and no-grad forward on ``n_ops`` ops.

    Returns:
        ``{phase: {"best": us_per_op, "median": us_per_op}}`` for the phases ``forward``,
        ``backward`` and ``forward (no_grad)``.
    """
    if n_ops < 1 or repeat < 1:
        raise ValueError(f"n_ops and repeat must be at least 1, got {n_ops} and {repeat}")
    times: dict[str, list[float]] = {"forward": [], "backward": [], "forward (no_grad)": []}
    for r in range(repeat):
        seconds, out = _timed(lambda r=r: build_graph(n_ops, random.Random(seed + r)))
        times["forward"].append(seconds)
        seconds, _ = _timed(out.backward)
        times["backward"].append(seconds)
        del out
        seconds, _ = _timed(
            lambda r=r: build_graph(n_ops, random.Random(seed + r), requires_grad=False)
        )
        times["forward (no_grad)"].append(seconds)
    return {phase: microseconds_per_call(ts, n_ops) for phase, ts in times.items()}


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of this script."""
    p = argparse.ArgumentParser(
        prog="python -m mt_bench.scalar",
        description="Microseconds per Scalar operation, forward and backward.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--ops", type=positive_int, default=10_000, help="operations in the graph")
    p.add_argument("--repeat", type=positive_int, default=5, help="timed rounds")
    p.add_argument("--seed", type=int, default=0, help="seed of the graph's shape and values")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
    """Parse ``argv``, run the benchmark, print a table and return the figures."""
    args = build_parser().parse_args(argv)
    results = run(args.ops, args.repeat, args.seed)
    print(f"Scalar graph of {args.ops} ops, {args.repeat} rounds (us per op)")
    print(f"{'phase':<20}{'best':>10}{'median':>10}")
    for phase, stats in results.items():
        print(f"{phase:<20}{stats['best']:>10.2f}{stats['median']:>10.2f}")
    return results


if __name__ == "__main__":
    main()
