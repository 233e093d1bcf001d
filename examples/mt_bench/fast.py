"""Benchmark the parallel CPU backend against NumPy (and PyTorch CPU when installed).

Every row is measured in this one run on the same data: the best of ``--repeat`` timings
after a warm-up call (which also compiles or loads the kernel). Ratios are MiniTorch's
time over NumPy's (lower is better; 1.0 is parity). Matmul rows report GFLOP/s and
compare medians (the timings of a matmul spread widely on a shared machine). The
``target`` column is the speed goal of the row, where it has one (``sum``/``max`` at most
NumPy's time; matmul at least 90% of NumPy's GFLOP/s in the median). A matmul row also gives
MiniTorch's best GFLOP/s as a share of the machine's float64 peak (cores x FMA units x
doubles per vector x 2 x clock; the header says where each number comes from), and the
header names the CPU, its vector ISA and NumPy's BLAS, so that figures from different
machines are never mixed.

    hatch run bench:fast            # the full table
    hatch run bench:fast --quick    # smaller sizes, for a smoke test
    hatch run bench:fast --only matmul --repeat 15   # one section
    hatch run bench:fast --only matmul --fma-units 1 # the peak of a CPU with one FMA unit
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from minitorch.fast import FastBackend
from minitorch.tensor import from_numpy
from mt_bench import common as bench
from mt_bench.common import (
    ELEMENTWISE,
    FMA_UNITS,
    Peak,
    Row,
    best_time,
    blas_info,
    cpu_model,
    import_torch,
    load_line,
    machine_peak,
    markdown_table,
    step_times,
    vector_unit,
)


def elementwise_rows(sizes: Sequence[int], repeat: int, torch: Any) -> list[Row]:
    """Map (neg, sigmoid) and zip (add, mul), contiguous and permuted."""
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        side = round(n**0.5)
        for layout in ("contiguous", "permuted"):
            if layout == "contiguous":
                xs = [rng.random(n), rng.random(n)]
                ours = [from_numpy(x, FastBackend) for x in xs]
            else:
                xs = [rng.random((side, side)).T, rng.random((side, side)).T]
                ours = [from_numpy(x.T.copy(), FastBackend).permute(1, 0) for x in xs]
            theirs = []
            if torch is not None:
                theirs = [torch.from_numpy(np.ascontiguousarray(x)) for x in xs]
                if layout == "permuted":
                    theirs = [t.T.contiguous().T for t in theirs]
            for name, method, np_fn, torch_fn, k in ELEMENTWISE:
                tref = partial(getattr(torch, torch_fn), *theirs[:k]) if torch else None
                rows.append(
                    Row(
                        f"{name} {n:.0e} {layout}",
                        best_time(partial(getattr(FastBackend, method), *ours[:k]), repeat),
                        numpy=best_time(partial(np_fn, *xs[:k]), repeat),
                        torch=best_time(tref, repeat) if tref else None,
                    )
                )
    return rows


#: The goals the table prints beside its rows (ratios of this one run, never asserted).
REDUCE_TARGET = "<= 1.00x NumPy"
MATMUL_TARGET = ">= 90% of NumPy (median)"


def reduce_row(x: np.ndarray, op: str, dim: int, repeat: int, torch: Any) -> Row:
    """Reduce a matrix over one dimension with ``op`` (``sum`` or ``max``), keeping it."""
    a = from_numpy(x, FastBackend)
    ours = {"sum": FastBackend.add_reduce, "max": FastBackend.max_reduce}[op]
    tx = torch.from_numpy(x) if torch is not None else None
    if tx is not None:
        theirs = (
            (lambda: tx.sum(dim, keepdim=True))
            if op == "sum"
            else (lambda: tx.amax(dim, keepdim=True))
        )
    np_fn = {"sum": np.sum, "max": np.max}[op]
    return Row(
        f"{op} dim {dim} {x.shape[0]}x{x.shape[1]}",
        best_time(lambda: ours(a, dim), repeat),
        numpy=best_time(lambda: np_fn(x, axis=dim, keepdims=True), repeat),
        torch=best_time(theirs, repeat) if tx is not None else None,
        target=REDUCE_TARGET,
    )


def reduce_rows(sides: Sequence[int], repeat: int, torch: Any) -> list[Row]:
    """Sum and max over each dimension of a square matrix."""
    rng = np.random.default_rng(1)
    rows = []
    for side in sides:
        x = rng.random((side, side))
        rows.extend(
            reduce_row(x, op, dim, repeat, torch) for op in ("sum", "max") for dim in (0, 1)
        )
    return rows


def matmul_row(x: np.ndarray, y: np.ndarray, repeat: int, torch: Any) -> Row:
    """Multiply two square matrices; the row reports GFLOP/s, best and median."""
    n = x.shape[0]
    a, b = from_numpy(x, FastBackend), from_numpy(y, FastBackend)
    tx, ty = (torch.from_numpy(x), torch.from_numpy(y)) if torch is not None else (None, None)
    # One side after the other, not alternating: each library's thread pool keeps spinning
    # for a while after a call, and on 2 cores would steal the next call's cores.
    fns = [lambda: a @ b, lambda: x @ y] + ([lambda: tx @ ty] if tx is not None else [])
    times = [step_times([fn], repeat, warmup=2)[0] for fn in fns]
    ours, numpy_, *theirs = ([min(t), statistics.median(t)] for t in times)
    return Row(
        f"matmul {n}x{n}",
        ours[0],
        numpy=numpy_[0],
        torch=theirs[0][0] if theirs else None,
        flops=2.0 * n**3,
        ours_median=ours[1],
        numpy_median=numpy_[1],
        torch_median=theirs[0][1] if theirs else None,
        target=MATMUL_TARGET if n >= 1024 else "",
    )


def matmul_rows(sizes: Sequence[int], repeat: int, torch: Any) -> list[Row]:
    """Square float64 matmul, reported in GFLOP/s."""
    rng = np.random.default_rng(2)
    rows = []
    for n in sizes:
        x, y = rng.random((n, n)), rng.random((n, n))
        rows.append(matmul_row(x, y, repeat, torch))
    return rows


def mlp_step_row(repeat: int, torch: Any, batch: int = 50, hidden: int = 100) -> Row:
    """One forward+backward+SGD step of an MLP (2 -> hidden -> hidden -> 1, ReLU, sigmoid)."""
    from minitorch.autodiff import SGD
    from minitorch.operators import Parameter
    from minitorch.tensor import rand

    def param(shape: tuple[int, ...], seed: int) -> Parameter:
        return Parameter(rand(shape, FastBackend, seed=seed) - 0.5)

    sizes = [(2, hidden), (hidden, hidden), (hidden, 1)]
    layers = [(param((n, m), 2 * k), param((m,), 2 * k + 1)) for k, (n, m) in enumerate(sizes)]
    optim = SGD([p for layer in layers for p in layer], lr=0.1)
    rng = np.random.default_rng(3)
    xs = rng.random((batch, 2))
    ys = (xs[:, :1] < 0.5).astype(np.float64)
    x, y = from_numpy(xs, FastBackend), from_numpy(ys, FastBackend)

    def ours() -> None:
        optim.zero_grad()
        h = x
        for w, b in layers[:-1]:
            h = (h @ w.value + b.value).relu()
        w, b = layers[-1]
        p = (h @ w.value + b.value).sigmoid()
        loss = -(y * p.log() + (1.0 - y) * (1.0 - p).log()).mean()
        loss.backward()
        optim.step()

    torch_time = None
    if torch is not None:
        nn = torch.nn
        tmodel = nn.Sequential(
            nn.Linear(2, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 1),
            nn.Sigmoid(),
        ).double()
        topt = torch.optim.SGD(tmodel.parameters(), lr=0.1)
        tx, ty = torch.from_numpy(xs), torch.from_numpy(ys)

        def theirs() -> None:
            topt.zero_grad()
            nn.functional.binary_cross_entropy(tmodel(tx), ty).backward()
            topt.step()

        torch_time = best_time(theirs, repeat)
    return Row(f"MLP step b={batch} h={hidden}", best_time(ours, repeat), torch=torch_time)


def format_table(rows: Sequence[Row], peak: Peak | None = None) -> str:
    """Render the rows as a Markdown table (matmul rows: best, then median, GFLOP/s).

    With ``peak``, a matmul row's ``of peak`` cell is MiniTorch's best GFLOP/s as a share
    of it.
    """
    header = [
        "operation",
        "MiniTorch fast",
        "NumPy",
        "fast / NumPy",
        "PyTorch CPU",
        "fast / PyTorch",
        "of peak",
        "target",
    ]

    def of_peak(r: Row) -> str:
        if peak is None or not r.flops or not r.ours:
            return ""
        return peak.share(r.flops / r.ours / 1e9).removesuffix(" of peak")

    def cells(r: Row, best: float | None, median: float | None) -> str:
        return r.cell(best) if median is None else f"{r.cell(best)}, {r.cell(median)}"

    def ratio(r: Row, theirs: float | None, their_median: float | None) -> str:
        if r.ours_median is None or their_median is None:
            return r.ratio(theirs)
        # GFLOP/s rows: ours as a share of theirs, median against median.
        return f"{their_median / r.ours_median:.0%} (median)"

    return markdown_table(
        header,
        [
            [
                r.name,
                cells(r, r.ours, r.ours_median),
                cells(r, r.numpy, r.numpy_median),
                ratio(r, r.numpy, r.numpy_median),
                cells(r, r.torch, r.torch_median),
                ratio(r, r.torch, r.torch_median),
                of_peak(r),
                r.target,
            ]
            for r in rows
        ],
    )


def _kernel_line() -> str:
    """``; MiniTorch matmul: <block>``: the register block mt-fast chose (tuned kernels only)."""
    try:
        from minitorch.fast import microkernel
    except ImportError:  # a course starter: the plain kernels only
        return ""
    return f"; MiniTorch matmul micro-kernel: {microkernel.shape()}"


SECTIONS = ("elementwise", "reduce", "matmul", "mlp")
"""The table's sections, in order (``--only`` picks some)."""


def main(argv: Sequence[str] | None = None) -> str:
    """Run the benchmark and print the table; return it."""
    parser = bench.parser(__doc__ or "", repeat=7, prog="mt_bench.fast")
    parser.add_argument(
        "--only",
        choices=SECTIONS,
        action="append",
        help="measure only this section (repeatable; default: all)",
    )
    parser.add_argument(
        "--fma-units",
        type=int,
        choices=(1, 2),
        default=FMA_UNITS,
        help="FMA units per core, for the peak (Zen 1 and some Xeons have one)",
    )
    args = parser.parse_args(argv)
    only = set(args.only or SECTIONS)
    torch = None if args.no_torch else import_torch(threads=2)
    if args.quick:
        sizes, sides, mats = [10_000], [100], [32, 64]
    else:
        sizes, sides = [1_000_000, 10_000_000], [1000, 4096]
        mats = [64, 256, 512, 1024, 2048, 4096]
    rows = []
    if "elementwise" in only:
        rows += elementwise_rows(sizes, args.repeat, torch)
    if "reduce" in only:
        rows += reduce_rows(sides, args.repeat, torch)
    if "matmul" in only:
        rows += matmul_rows(mats, args.repeat, torch)
    if "mlp" in only:
        rows.append(mlp_step_row(args.repeat, torch))
    peak = machine_peak(args.fma_units)
    table = format_table(rows, peak)
    print(f"bench_fast, {args.repeat} timings per row; {load_line()}")
    print(f"CPU: {cpu_model()}; {vector_unit()}; {peak}")
    print(f"NumPy {np.__version__}, BLAS: {blas_info()}{_kernel_line()}")
    print(table)
    if torch is None:
        print("\n(PyTorch is not installed: its columns are empty.)")
    return table


if __name__ == "__main__":
    main()
