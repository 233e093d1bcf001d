"""What the benchmarks share: the optional PyTorch import, rows, timing, cases and options.

Every benchmark is a script (``python examples/bench_<name>.py``) that measures and prints;
none asserts anything about speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mt_examples.support import HelpFormatter, positive_int

#: The elementwise rows of the backend benchmarks: ``(row name, backend method, NumPy
#: function, torch function name, inputs)``.
ELEMENTWISE: list[tuple[str, str, Callable[..., Any], str, int]] = [
    ("map neg", "neg_map", np.negative, "neg", 1),
    ("map sigmoid", "sigmoid_map", lambda x: 1.0 / (1.0 + np.exp(-x)), "sigmoid", 1),
    ("zip add", "add_zip", np.add, "add", 2),
    ("zip mul", "mul_zip", np.multiply, "mul", 2),
]


def import_torch(*, threads: int | None = None, cuda: bool = False) -> Any:
    """Return the ``torch`` module, or None if it is not installed (or, with ``cuda``, has no GPU).

    ``threads`` sets its CPU thread count.
    """
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    if cuda and not torch.cuda.is_available():
        return None
    if threads is not None:
        torch.set_num_threads(threads)
    return torch


@dataclass
class Row:
    """One line of a benchmark table: seconds per call of each side and the work done.

    ``flops`` or ``nbytes`` turn times into GFLOP/s or GB/s; ``*_median`` are filled by the
    benchmarks that report medians too; ``note`` says what went wrong, if anything.
    """

    name: str
    ours: float | None
    torch: float | None = None
    numpy: float | None = None
    flops: float | None = None
    nbytes: float | None = None
    note: str = ""
    ours_median: float | None = None
    torch_median: float | None = None
    numpy_median: float | None = None
    target: str = ""

    def cell(self, seconds: float | None) -> str:
        """Format a time of this row: GFLOP/s or GB/s when the work is known, else ms."""
        if seconds is None:
            return "-"
        if self.flops:
            return f"{self.flops / seconds / 1e9:.1f} GFLOP/s"
        if self.nbytes:
            return f"{self.nbytes / seconds / 1e9:.1f} GB/s"
        return f"{seconds * 1e3:.3f} ms"

    def ratio(self, theirs: float | None) -> str:
        """Format ``ours / theirs`` (lower is better for us), or ``-``."""
        return f"{self.ours / theirs:.2f}x" if self.ours and theirs else "-"


def parser(doc: str, repeat: int) -> argparse.ArgumentParser:
    """The options every backend benchmark takes: ``--repeat``, ``--quick``, ``--no-torch``."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0], formatter_class=HelpFormatter)
    p.add_argument("--repeat", type=positive_int, default=repeat, help="timed repeats per row")
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    return p


def load_line() -> str:
    """``load average L on N CPUs``: how busy the machine was, for a benchmark's header."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"load average {load:.1f} on {os.cpu_count()} CPUs"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Render a Markdown table; every column but the first and a ``note`` right-aligned."""
    align = ["---" if h in (header[0], "note") else "---:" for h in header]
    lines = [header, align, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def best_time(fn: Callable[[], Any], repeat: int, sync: Callable[[], None] | None = None) -> float:
    """Return the best wall time of ``repeat`` calls of ``fn``, after one warm-up call.

    ``sync`` is called after each call, inside the timing, to wait for work that ``fn`` only
    queues (a GPU's kernels).
    """

    def call() -> None:
        fn()
        if sync is not None:
            sync()

    return min(step_times([call], repeat, warmup=1)[0])


def step_times(fns: Sequence[Callable[[], Any]], repeat: int, warmup: int = 3) -> list[list[float]]:
    """Time ``repeat`` calls of each of ``fns``; return one list of seconds per fn.

    The calls alternate, so that a busy machine slows them alike, after ``warmup`` untimed
    rounds.
    """
    for _ in range(warmup):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return times


def microseconds_per_call(seconds: Sequence[float], calls: int) -> dict[str, float]:
    """Return ``{"best": us, "median": us}`` per call, for rounds of ``calls`` calls each."""
    per_call = [s / calls * 1e6 for s in seconds]
    return {"best": min(per_call), "median": statistics.median(per_call)}
