"""Benchmark the per-operation overhead of MiniTorch tensors, next to PyTorch.

On one-element float64 tensors the arithmetic is nothing, so the time is all overhead:
argument checks, allocation, the backend's kernel dispatch, and recording history. Three
cases, each timed with ``timeit`` (``--repeat`` rounds of ``--number`` calls, garbage
collector paused):

- ``a + b``: two constants, no history;
- ``a + b (grad)``: ``a`` and ``b`` require gradients, so the result records history;
- ``fwd+bwd``: ``((a * b + a).sigmoid().log()).sum()`` then ``backward()`` (gradients
  cleared before each call).

The table gives the best and the median microseconds per call for each MiniTorch backend
asked for (``--backend simple fast ...``) and, when ``torch`` is importable, for PyTorch
on the CPU in the same run. ``--timer cpu`` counts this process's CPU time instead of
wall-clock time, which is steadier on a machine shared with other work.

Run it with ``python examples/bench_tensor.py --backend simple``. This is a benchmark, not
a test: it asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

from minitorch.tensor import TensorBackend, tensor
from minitorch.tensor import backend as find_backend
from mt_examples.bench import import_torch, microseconds_per_call
from mt_examples.support import HelpFormatter, positive_int

__all__ = [
    "CASES",
    "TIMERS",
    "build_parser",
    "main",
    "minitorch_cases",
    "run",
    "time_call",
    "torch_cases",
]

#: The benchmarked cases, in table order.
CASES = ("a + b", "a + b (grad)", "fwd+bwd")

#: The clocks ``--timer`` can choose.
TIMERS: dict[str, Callable[[], float]] = {
    "wall": time.perf_counter,
    "cpu": time.process_time,
}

Stats = dict[str, float]


def minitorch_cases(be: TensorBackend) -> dict[str, Callable[[], Any]]:
    """Return the benchmark's zero-argument callables on MiniTorch backend ``be``."""
    a, b = tensor([0.3], backend=be), tensor([0.6], backend=be)
    ga = tensor([0.3], backend=be, requires_grad=True)
    gb = tensor([0.6], backend=be, requires_grad=True)

    def fwd_bwd() -> None:
        ga.grad = gb.grad = None
        ((ga * gb + ga).sigmoid().log()).sum().backward()

    return {"a + b": lambda: a + b, "a + b (grad)": lambda: ga + gb, "fwd+bwd": fwd_bwd}


def torch_cases(torch: Any) -> dict[str, Callable[[], Any]]:
    """Return the same callables written with PyTorch (float64 on the CPU)."""
    a = torch.tensor([0.3], dtype=torch.float64)
    b = torch.tensor([0.6], dtype=torch.float64)
    ga = torch.tensor([0.3], dtype=torch.float64, requires_grad=True)
    gb = torch.tensor([0.6], dtype=torch.float64, requires_grad=True)

    def fwd_bwd() -> None:
        ga.grad = gb.grad = None
        ((ga * gb + ga).sigmoid().log()).sum().backward()

    return {"a + b": lambda: a + b, "a + b (grad)": lambda: ga + gb, "fwd+bwd": fwd_bwd}


def time_call(fn: Callable[[], Any], number: int, repeat: int, timer: str = "wall") -> Stats:
    """Time ``repeat`` rounds of ``number`` calls of ``fn`` with the clock ``TIMERS[timer]``.

    Returns:
        ``{"best": us, "median": us}``, microseconds per call.
    """
    if number < 1 or repeat < 1:
        raise ValueError(f"number and repeat must be at least 1, got {number} and {repeat}")
    fn()  # warm up (first-call imports, caches)
    if timer not in TIMERS:
        raise ValueError(f"unknown timer {timer!r}: choose one of {', '.join(TIMERS)}")
    rounds = timeit.Timer(fn, timer=TIMERS[timer]).repeat(repeat=repeat, number=number)
    return microseconds_per_call(rounds, number)


def run(
    backends: Sequence[TensorBackend],
    *,
    number: int = 1000,
    repeat: int = 5,
    with_torch: bool = True,
    timer: str = "wall",
) -> dict[str, dict[str, Stats]]:
    """Time every case on each backend, and on PyTorch if asked for and importable.

    Returns:
        ``{column: {case: {"best": us, "median": us}}}``; the columns are
        ``minitorch:<backend name>`` and, when measured, ``torch``.
    """
    columns: dict[str, dict[str, Callable[[], Any]]] = {
        f"minitorch:{be.name}": minitorch_cases(be) for be in backends
    }
    torch = import_torch() if with_torch else None
    if torch is not None:
        columns["torch"] = torch_cases(torch)
    return {
        column: {case: time_call(fns[case], number, repeat, timer) for case in CASES}
        for column, fns in columns.items()
    }


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of this script."""
    p = argparse.ArgumentParser(
        prog="bench_tensor",
        description="Microseconds per operation on 1-element tensors, MiniTorch vs PyTorch.",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--backend",
        nargs="+",
        default=["simple"],
        metavar="NAME",
        help="MiniTorch backends to time (simple, fast with mt-fast installed)",
    )
    p.add_argument("--number", type=positive_int, default=1000, help="calls per timed round")
    p.add_argument("--repeat", type=positive_int, default=5, help="timed rounds")
    p.add_argument(
        "--timer",
        choices=list(TIMERS),
        default="wall",
        help="wall-clock time, or this process's CPU time",
    )
    p.add_argument(
        "--no-torch",
        action="store_true",
        help="skip the PyTorch column even if torch is importable",
    )
    return p


def _format_table(results: dict[str, dict[str, Stats]]) -> list[str]:
    columns = list(results)
    width = max(20, *(len(c) + 2 for c in columns))
    half = width // 2
    lines = [
        f"{'us per call':<14}" + "".join(f"{c:>{width}}" for c in columns),
        f"{'':<14}" + "".join(f"{'best':>{half}}{'median':>{width - half}}" for _ in columns),
    ]
    for case in CASES:
        cells = "".join(
            f"{results[c][case]['best']:>{half}.2f}{results[c][case]['median']:>{width - half}.2f}"
            for c in columns
        )
        lines.append(f"{case:<14}{cells}")
    return lines


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, Stats]]:
    """Parse ``argv``, run the benchmark, print one table and return the figures.

    Raises:
        SystemExit: with status 2 for invalid arguments, including a backend that is not
            installed (argparse prints why and what to install).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    backends = []
    for name in dict.fromkeys(args.backend):
        try:
            backends.append(find_backend(name))
        except LookupError as exc:
            parser.error(f"argument --backend: {exc}")
        except (ImportError, TypeError) as exc:
            parser.error(f"argument --backend: backend {name!r} failed to load: {exc}")
    results = run(
        backends,
        number=args.number,
        repeat=args.repeat,
        with_torch=not args.no_torch,
        timer=args.timer,
    )
    print(
        f"1-element float64 tensors, {args.repeat} rounds of {args.number} calls "
        f"({args.timer} microseconds per call)"
    )
    for line in _format_table(results):
        print(line)
    if args.no_torch:
        print("PyTorch column skipped (--no-torch).")
    elif "torch" not in results:
        print("PyTorch column skipped: torch is not importable (pip install torch to compare).")
    else:
        import torch

        print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads.")
    return results
