"""Benchmark the per-operation overhead of MiniTorch tensors, next to PyTorch.

On one-element float64 tensors the arithmetic is nothing, so the time is all overhead:
argument checks, allocation, the backend's kernel dispatch, and recording history. Each case
is timed with ``timeit`` (``--repeat`` rounds of ``--number`` calls, garbage collector paused):

- ``a + b``: two constants; ``a + b (grad)``: the same, recording history;
- ``fwd+bwd``: ``((a * b + a).sigmoid().log()).sum()``, then ``backward()``;
- ``mlp step``: one SGD step of a 2-layer MLP (``Linear(2, 64)``, ReLU, ``Linear(64, 1)``,
  ``train_tensor``'s loss) on 32 points, beside the same network with the same weights in
  PyTorch; its rounds are ``--number // 50`` calls.

The table gives the best and the median microseconds per call of each ``--backend`` and of
PyTorch on the CPU, then each backend's best time as a multiple of PyTorch's; with
``--backend fast``, ``bench_nn.py``'s MNIST rows follow. ``--help`` lists the options.
"""

from __future__ import annotations

import argparse
import time
import timeit
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from minitorch.autodiff import SGD
from minitorch.operators import Parameter
from minitorch.tensor import TensorBackend, from_numpy, tensor
from mt_bench.common import import_torch, load_line, microseconds_per_call
from mt_examples.support import HelpFormatter, backend_from_args, positive_int
from mt_examples.train_tensor import bce_loss

#: The benchmarked cases, in table order.
CASES = ("a + b", "a + b (grad)", "fwd+bwd", "9 ops", "mlp step")

#: The goals of the fast backend: its best time as a multiple of PyTorch's, at most.
TARGETS = {"a + b": 2.0, "fwd+bwd": 1.2, "mlp step": 2.0}

#: The MLP of the ``mlp step`` case: batch, inputs, hidden units; and SGD's learning rate.
MLP_BATCH, MLP_IN, MLP_HIDDEN, MLP_LR = 32, 2, 64, 0.05

#: A round of ``mlp step`` makes ``number // MLP_CALLS`` calls (at least one).
MLP_CALLS = 50

#: The clocks ``--timer`` can choose.
TIMERS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}

Stats = dict[str, float]


def mlp_data() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Return the MLP case's batch ``x``, its ``sign`` (+1 / -1 labels) and initial weights.

    The weights are ``[w1 (in, hidden), b1 (hidden,), w2 (hidden, 1), b2 (1,)]``.
    """
    rng = np.random.default_rng(0)
    x = rng.standard_normal((MLP_BATCH, MLP_IN))
    sign = np.where(x[:, :1] * x[:, 1:] > 0, 1.0, -1.0)  # an xor-like labelling
    shapes = [(MLP_IN, MLP_HIDDEN), (MLP_HIDDEN,), (MLP_HIDDEN, 1), (1,)]
    weights = [rng.uniform(-0.5, 0.5, shape) for shape in shapes]
    return x, sign, weights


def _cases(
    number: Callable[..., Any],
    array: Callable[[np.ndarray], Any],
    param: Callable[[np.ndarray], Any],
    value: Callable[[Any], Any],
    sgd: Callable[[list[Any]], Any],
) -> dict[str, Callable[[], Any]]:
    """The cases, written once for both libraries (their tensors share these methods).

    ``number([v], requires_grad=...)`` makes a 1-element tensor, ``array`` a constant from a
    NumPy array, ``param`` a trainable leaf, ``value(param)`` its tensor, ``sgd`` the optimizer.
    """
    a, b = number([0.3]), number([0.6])
    ga, gb = number([0.3], requires_grad=True), number([0.6], requires_grad=True)

    def fwd_bwd() -> None:
        ga.grad = gb.grad = None
        ((ga * gb + ga).sigmoid().log()).sum().backward()

    ca = number([0.3, -1.2], requires_grad=True)
    cb = number([0.6, 0.4], requires_grad=True)

    def nine_ops() -> None:
        # mul, add, sigmoid, log, sub, exp, mul, add, div, then the sum: on 2 elements.
        ca.grad = cb.grad = None
        ((ca * cb + ca).sigmoid().log() * (cb - ca).exp() / (ca + 2.0)).sum().backward()

    x_np, sign_np, weights = mlp_data()
    x, sign = array(x_np), array(sign_np)
    params = [param(w.copy()) for w in weights]
    opt = sgd(params)

    def mlp_step() -> Any:
        w1, b1, w2, b2 = (value(p) for p in params)
        opt.zero_grad()
        loss = bce_loss((x @ w1 + b1).relu() @ w2 + b2, sign)
        loss.backward()
        opt.step()
        return loss

    return {
        "a + b": lambda: a + b,
        "a + b (grad)": lambda: ga + gb,
        "fwd+bwd": fwd_bwd,
        "9 ops": nine_ops,
        "mlp step": mlp_step,
    }


def minitorch_cases(be: TensorBackend) -> dict[str, Callable[[], Any]]:
    """Return the benchmark's zero-argument callables on MiniTorch backend ``be``."""
    return _cases(
        partial(tensor, backend=be),
        partial(from_numpy, backend=be),
        lambda x: Parameter(from_numpy(x, be)),
        lambda p: p.value,
        lambda ps: SGD(ps, lr=MLP_LR),
    )


def torch_cases(torch: Any) -> dict[str, Callable[[], Any]]:
    """Return the same callables written with PyTorch (float64 on the CPU)."""
    return _cases(
        partial(torch.tensor, dtype=torch.float64),
        torch.from_numpy,
        lambda x: torch.from_numpy(x).requires_grad_(),
        lambda p: p,
        lambda ps: torch.optim.SGD(ps, lr=MLP_LR),
    )


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


def time_in_turns(
    fns: Sequence[Callable[[], Any]], number: int, repeat: int, timer: str = "wall"
) -> list[Stats]:
    """Time ``repeat`` rounds of ``number`` calls of each of ``fns``, taking turns by round.

    Round 1 of every function, then round 2 of every function, and so on: a busy spell of
    a shared machine (seconds long on a VM) then falls on both sides of a ratio, where
    timing one side's rounds before the other's lets it land on one side only.

    Returns:
        ``{"best": us, "median": us}`` per call for each of ``fns``, in their order.
    """
    if number < 1 or repeat < 1:
        raise ValueError(f"number and repeat must be at least 1, got {number} and {repeat}")
    if timer not in TIMERS:
        raise ValueError(f"unknown timer {timer!r}: choose one of {', '.join(TIMERS)}")
    for fn in fns:
        fn()  # warm up (first-call imports, caches)
    timers = [timeit.Timer(fn, timer=TIMERS[timer]) for fn in fns]
    rounds: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for timed, seconds in zip(timers, rounds, strict=True):
            seconds.append(timed.timeit(number))
    return [microseconds_per_call(seconds, number) for seconds in rounds]


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
    calls = {case: number for case in CASES}
    calls["mlp step"] = max(1, number // MLP_CALLS)
    return {
        column: {case: time_call(fns[case], calls[case], repeat, timer) for case in CASES}
        for column, fns in columns.items()
    }


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of this script."""
    p = argparse.ArgumentParser(
        prog="python -m mt_bench.tensor",
        description="Microseconds per operation on 1-element tensors, MiniTorch vs PyTorch.",
        formatter_class=HelpFormatter,
    )
    add = p.add_argument
    add("--backend", nargs="+", default=["simple"], metavar="NAME",
        help="MiniTorch backends to time (simple, fast with mt-fast installed)")  # fmt: skip
    add("--number", type=positive_int, default=1000, help="calls per timed round")
    add("--repeat", type=positive_int, default=5, help="timed rounds")
    add("--timer", choices=list(TIMERS), default="wall",
        help="wall-clock time, or this process's CPU time")  # fmt: skip
    add("--no-torch", action="store_true",
        help="skip the PyTorch column even if torch is importable")  # fmt: skip
    add("--nn-batch", type=positive_int, nargs="+", default=[16, 64], metavar="N",
        help="batch sizes of the MNIST-step rows (bench_nn.py), "
        "run with --backend fast")  # fmt: skip
    add("--nn-repeat", type=positive_int, default=40, help="MNIST steps per side")
    add("--no-nn", action="store_true", help="skip the MNIST-step rows")
    add("--profile", choices=CASES, metavar="CASE",
        help="instead of timing, run --number calls of CASE on the first backend under "
        "cProfile and print the 25 functions with the most time of their own")  # fmt: skip
    return p


def profile(fn: Callable[[], Any], number: int, top: int = 25) -> str:
    """Run ``number`` calls of ``fn`` (after one warm-up call) under cProfile.

    Returns:
        cProfile's table of the ``top`` functions by time spent in themselves (tottime).
    """
    import cProfile
    import io
    import pstats

    fn()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(number):
        fn()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


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
    if "torch" in results:
        lines.append("best time / PyTorch's best time:")
        for c in columns[:-1]:
            ratios = "  ".join(
                f"{case} {results[c][case]['best'] / results['torch'][case]['best']:.2f}x"
                for case in CASES
            )
            lines.append(f"  {c}: {ratios}")
        goals = "  ".join(f"{case} <= {goal:.1f}x" for case, goal in TARGETS.items())
        lines.append(f"  targets of minitorch:fast: {goals}")
    return lines


def _nn_rows(batches: Sequence[int], repeat: int, torch: Any) -> None:
    """Print ``bench_nn.py``'s rows: one MNIST training step per batch size, every core."""
    import numba

    from mt_bench import nn as bench_nn

    print(f"MNIST training step (bench_nn.py), float64, {repeat} steps each, alternating:")
    dtype = torch.float64 if torch is not None else None
    bench_nn.run(batches, [numba.config.NUMBA_NUM_THREADS], repeat, torch, dtype)


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, Stats]]:
    """Parse ``argv``, run the benchmark, print one table and return the figures.

    Raises:
        SystemExit: with status 2 for invalid arguments, including a backend that is not
            installed (argparse prints why and what to install).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    backends = [backend_from_args(parser, name) for name in dict.fromkeys(args.backend)]
    if args.profile is not None:
        print(f"cProfile of {args.number} calls of {args.profile!r} on {backends[0].name}:")
        print(profile(minitorch_cases(backends[0])[args.profile], args.number))
        return {}
    results = run(
        backends,
        number=args.number,
        repeat=args.repeat,
        with_torch=not args.no_torch,
        timer=args.timer,
    )
    print(
        f"1-element float64 tensors, {args.repeat} rounds of {args.number} calls (mlp step: "
        f"{max(1, args.number // MLP_CALLS)}), {args.timer} microseconds per call; {load_line()}"
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
    if "fast" in {be.name for be in backends} and not args.no_nn:
        _nn_rows(args.nn_batch, args.nn_repeat, None if args.no_torch else import_torch())
    return results


if __name__ == "__main__":
    main()
