"""The speed table of MiniTorch in one command: every workload beside its reference.

    hatch run bench:report            # the full table (a few minutes)
    hatch run bench:report --quick    # small sizes, few repeats: a smoke test, not figures

Each row is measured in this one run, MiniTorch's fast backend (float64) beside the
library a user would otherwise reach for, with the ratio of the two:

- ``matmul N x N`` (N = 256, 1024, 4096): against NumPy (its BLAS), in GFLOP/s, the best of
  ``--repeat`` timings after two warm-up calls, each side timed in turn (``bench_fast``'s
  rows); the ratio is ours as a share of NumPy's (higher is better), and MiniTorch's share
  of the machine's float64 peak is given beside its figure;
- ``a + b`` on one-element tensors, a small expression's forward and backward, an MLP
  training step (batch 32, 2-64-1): ``bench_tensor``'s cases against PyTorch on the CPU,
  microseconds per call (best round; the two sides' rounds taken in turns,
  ``bench_tensor.time_in_turns``); the ratio is ours over PyTorch's time (lower is better);
- a LeNet step (``train_mnist.Network``, batch 16): ``bench_nn``'s MNIST training step
  against the same network in PyTorch, milliseconds (best step), every core.

The header says what the figures were measured on: the date, the CPU model, its vector ISA
and float64 peak (of the nominal clock where the machine names no maximum: cores that boost
beat it), NumPy's BLAS and the kernel it runs (threadpoolctl; a warning line when that
kernel is narrower than the machine's vector ISA, and where an ``OPENBLAS_CORETYPE``
override chose it, the matmul rows again with NumPy measured without it), PyTorch's and
Numba's versions and threads, and the load average: figures from different machines, or
from a busy one, are never to be mixed. PyTorch's rows read "n/a (no torch)" when it is not
installed (or with ``--no-torch``). Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numba
import numpy as np

from mt_bench import fast as bench_fast
from mt_bench import nn as bench_nn
from mt_bench import tensor as bench_tensor
from mt_bench.common import (
    BLAS_OVERRIDES,
    FMA_UNITS,
    Peak,
    blas_below,
    blas_info,
    blas_kernel,
    cpu_model,
    import_torch,
    load_line,
    machine_peak,
    markdown_table,
    step_times,
    vector_unit,
)
from mt_examples.support import HelpFormatter, positive_int

#: The reference column when PyTorch is missing.
NO_TORCH = "n/a (no torch)"

#: The tensor cases of ``bench_tensor`` in the table, with the names the table gives them.
TENSOR_CASES = {
    "a + b": "a + b, 1 element",
    "fwd+bwd": "(a * b + a).sigmoid().log().sum() forward + backward, 1 element",
    "9 ops": "a 9-operation expression forward + backward, 2 elements",
    "mlp step": "MLP training step, batch 32, 2-64-1",
}


@dataclass
class Line:
    """One row of the report: a workload, both sides' figures and their ratio."""

    workload: str
    ours: str
    reference: str
    against: str
    ratio: str

    def cells(self) -> list[str]:
        """The row's cells in the table's column order."""
        return [self.workload, self.ours, self.reference, self.against, self.ratio]


def matmul_lines(sizes: Sequence[int], repeat: int, peak: Peak) -> list[Line]:
    """Square float64 products against NumPy (GFLOP/s, best timing; ratio: ours / NumPy's)."""
    rng = np.random.default_rng(2)
    lines = []
    for n in sizes:
        row = bench_fast.matmul_row(rng.random((n, n)), rng.random((n, n)), repeat, None)
        flops, ours_s, numpy_s = row.flops or 0.0, row.ours or 0.0, row.numpy or 0.0
        ours, theirs = flops / ours_s / 1e9, flops / numpy_s / 1e9  # both measured just now
        share = peak.share(ours)
        lines.append(
            Line(
                f"matmul {n}x{n} float64",
                f"{ours:.1f} GFLOP/s" + (f" ({share})" if share else ""),
                f"{theirs:.1f} GFLOP/s",
                "NumPy",
                f"{ours / theirs:.0%}",
            )
        )
    return lines


def numpy_gflops(sizes: Sequence[int], repeat: int) -> list[float]:
    """NumPy's best GFLOP/s on the report's matrices (the same seed and sizes)."""
    rng = np.random.default_rng(2)
    out = []
    for n in sizes:
        x, y = rng.random((n, n)), rng.random((n, n))
        best = min(step_times([lambda x=x, y=y: x @ y], repeat, warmup=2)[0])
        out.append(2.0 * n**3 / best / 1e9)
    return out


def blas_warning(kernel: str | None, isa: str, env: dict[str, str]) -> list[str]:
    """A warning line when NumPy's BLAS runs a kernel below the machine's vector ISA."""
    used = blas_below(kernel, isa)
    if used is None:
        return []
    set_ = [f"{k}={env[k]}" for k in BLAS_OVERRIDES if k in env]
    cause = f"set by {', '.join(set_)}" if set_ else "its build does not know this CPU"
    return [
        f"warning: NumPy's BLAS runs its {kernel} kernel ({used}), below this machine's "
        f"{isa} ({cause}): the matmul ratios flatter MiniTorch"
        + ("; the rows 'without the override' measure NumPy again without it" if set_ else "")
    ]


def unforced_lines(lines: list[Line], sizes: Sequence[int], repeat: int) -> list[Line]:
    """The matmul rows again, NumPy measured in a process without the BLAS override."""
    env = {k: v for k, v in os.environ.items() if k not in BLAS_OVERRIDES}
    code = (
        "import json, sys; from mt_bench.report import numpy_gflops; "
        "print(json.dumps(numpy_gflops(json.loads(sys.argv[1]), int(sys.argv[2]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(list(sizes)), str(repeat)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    out = []
    for line, theirs in zip(lines, json.loads(done.stdout.splitlines()[-1]), strict=True):
        ours = float(line.ours.split()[0])
        out.append(
            Line(
                f"{line.workload} (NumPy without the override)",
                line.ours,
                f"{theirs:.1f} GFLOP/s",
                "NumPy",
                f"{ours / theirs:.0%}",
            )
        )
    return out


def tensor_lines(number: int, repeat: int, torch: Any) -> list[Line]:
    """``bench_tensor``'s cases on the fast backend against PyTorch (µs; ratio: time over time)."""
    from minitorch.fast import FastBackend

    ours = bench_tensor.minitorch_cases(FastBackend)
    theirs = bench_tensor.torch_cases(torch) if torch is not None else None
    lines = []
    for case, workload in TENSOR_CASES.items():
        calls = max(1, number // bench_tensor.MLP_CALLS) if case == "mlp step" else number
        if theirs is None:
            mine = bench_tensor.time_call(ours[case], calls, repeat)["best"]
            lines.append(Line(workload, f"{mine:.2f} µs", NO_TORCH, "PyTorch CPU", "n/a"))
            continue
        # Round by round in turns: a busy spell of the machine falls on both sides.
        pair = bench_tensor.time_in_turns([ours[case], theirs[case]], calls, repeat)
        mine, ref = pair[0]["best"], pair[1]["best"]
        lines.append(
            Line(workload, f"{mine:.2f} µs", f"{ref:.2f} µs", "PyTorch CPU", f"{mine / ref:.2f}x")
        )
    return lines


def lenet_line(batch: int, repeat: int, torch: Any) -> Line:
    """``bench_nn``'s MNIST (LeNet-style) training step on every core against PyTorch (ms)."""
    threads = numba.config.NUMBA_NUM_THREADS
    dtype = torch.float64 if torch is not None else None
    row = bench_nn.bench_step(batch, threads, repeat, torch, dtype)
    assert row.ours is not None
    workload = f"LeNet step (train_mnist.Network), batch {batch}"
    if row.torch is None:
        return Line(workload, f"{row.ours * 1e3:.2f} ms", NO_TORCH, "PyTorch CPU", "n/a")
    return Line(
        workload,
        f"{row.ours * 1e3:.2f} ms",
        f"{row.torch * 1e3:.2f} ms",
        "PyTorch CPU",
        f"{row.ours / row.torch:.2f}x",
    )


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def header(torch: Any, peak: Peak) -> list[str]:
    """What the figures were measured on and with: one fact per line."""
    from minitorch.fast import microkernel

    numba.get_num_threads()  # start the thread pool, so that the threading layer is known
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    torch_line = (
        f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads"
        if torch is not None
        else "PyTorch: not installed (its rows read n/a)"
    )
    return [
        f"MiniTorch speed report, {now}; {load_line()}",
        f"CPU: {cpu_model()}; vector ISA: {vector_unit()}",
        f"peak: {peak}",
        f"NumPy {np.__version__}, BLAS: {blas_info()}",
        torch_line,
        f"MiniTorch: mt-fast {_version('mt-fast')} (matmul micro-kernel {microkernel.shape()}), "
        f"Numba {numba.__version__} ({numba.threading_layer()} threading layer, "
        f"{numba.get_num_threads()} threads)",
    ]


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``hatch run bench:report``."""
    p = argparse.ArgumentParser(
        prog="python -m mt_bench.report",
        description=(__doc__ or "").splitlines()[0],
        formatter_class=HelpFormatter,
    )
    add = p.add_argument
    add("--quick", action="store_true", help="small sizes and few repeats (a smoke test)")
    add("--repeat", type=positive_int, default=7, help="timings per matmul side (best is kept)")
    add("--no-torch", action="store_true", help="leave PyTorch out even if it is installed")
    add("--fma-units", type=int, choices=(1, 2), default=FMA_UNITS,
        help="FMA units per core, for the peak")  # fmt: skip
    return p


def main(argv: Sequence[str] | None = None) -> str:
    """Measure every workload, print the report and return it."""
    args = build_parser().parse_args(argv)
    torch = None if args.no_torch else import_torch()
    peak = machine_peak(args.fma_units)
    if args.quick:
        sizes, repeat, number, rounds, steps = [32, 64], 2, 20, 2, 2
    else:
        sizes, repeat, number, rounds, steps = [256, 1024, 4096], args.repeat, 1000, 5, 40
    lines = matmul_lines(sizes, repeat, peak)
    warnings = blas_warning(blas_kernel(), vector_unit().isa, dict(os.environ))
    if warnings and any(k in os.environ for k in BLAS_OVERRIDES):
        lines += unforced_lines(lines, sizes, repeat)
    lines += tensor_lines(number, rounds, torch)
    lines.append(lenet_line(16, steps, torch))
    table = markdown_table(
        ["workload", "MiniTorch fast", "reference", "against", "ratio"],
        [line.cells() for line in lines],
    )
    report = "\n".join(
        [
            *header(torch, peak),
            *warnings,
            "",
            table,
            "",
            "ratio: matmul rows give MiniTorch's GFLOP/s as a share of NumPy's (higher is "
            "better); the other rows MiniTorch's time over PyTorch's (lower is better).",
        ]
    )
    print(report)
    return report


if __name__ == "__main__":
    main()
