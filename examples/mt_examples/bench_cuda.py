"""Benchmark the CUDA backend on a GPU, beside PyTorch CUDA when it is installed.

Rows: float64 matmul in GFLOP/s, map and zip in GB/s, sums over each dimension of a matrix
in GB/s (the bytes an operation must read and write, comparable with the GPU's memory
bandwidth), and one training step of ``train_mnist.Network`` (with mt-nn). Each row is the
best of ``--repeat`` timings after a warm-up call (which also compiles the kernel), the GPU
synchronised before every clock reading. It refuses to run on Numba's CUDA simulator,
whose timings mean nothing.

    hatch run bench:cuda            # the full table
    hatch run bench:cuda --quick    # small sizes, a smoke test on a GPU
"""

from __future__ import annotations

import importlib.util
import operator
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from minitorch.cuda import CudaBackend, is_available, simulator_enabled
from minitorch.tensor import from_numpy
from mt_examples import bench
from mt_examples.bench import ELEMENTWISE, Row, best_time, import_torch, markdown_table


def check_gpu() -> None:
    """Exit with a clear message unless a real CUDA GPU is there."""
    if simulator_enabled():
        sys.exit(
            "bench_cuda: NUMBA_ENABLE_CUDASIM=1 is set; the CUDA simulator runs every GPU "
            "thread as a Python thread, so its timings mean nothing. Unset it and run on a "
            "machine with an NVIDIA GPU."
        )
    if not is_available():
        sys.exit(
            "bench_cuda: no CUDA GPU was found. This benchmark measures GPU kernels and "
            "needs an NVIDIA GPU with its driver (and `pip install mt-cuda[cu12]` or "
            "`[cu13]` for the CUDA toolkit libraries)."
        )


def synchronize() -> None:
    """Wait for every queued kernel (launches return before the GPU finishes)."""
    from numba import cuda

    cuda.synchronize()


def _measure(
    name: str,
    ours: Callable[[], Any],
    theirs: Callable[[], Any] | None,
    repeat: int,
    torch: Any,
    **work: float,
) -> Row:
    """Time both sides; an out-of-memory error becomes a note, not a crash."""
    row = Row(name, None, **work)
    try:
        row.ours = best_time(ours, repeat, synchronize)
    except Exception as e:  # e.g. CUDA_ERROR_OUT_OF_MEMORY at 1e8 on a small GPU
        row.note = f"MiniTorch: {type(e).__name__}: {str(e)[:60]}"
    if theirs is not None:
        try:
            row.torch = best_time(theirs, repeat, torch.cuda.synchronize)
        except Exception as e:
            row.note += f" PyTorch: {type(e).__name__}"
    return row


def elementwise_rows(sizes: Sequence[int], repeat: int, torch: Any) -> list[Row]:
    """Map (neg, sigmoid) and zip (add, mul) on contiguous vectors, in GB/s."""
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        xs = [rng.random(n), rng.random(n)]
        ours = [from_numpy(x, CudaBackend) for x in xs]
        theirs = [torch.from_numpy(x).cuda() for x in xs] if torch is not None else []
        for name, method, _, torch_fn, k in ELEMENTWISE:
            tref = partial(getattr(torch, torch_fn), *theirs[:k]) if torch else None
            ref = partial(getattr(CudaBackend, method), *ours[:k])
            rows.append(
                _measure(f"{name} {n:.0e}", ref, tref, repeat, torch, nbytes=8.0 * (k + 1) * n)
            )
    return rows


def reduce_rows(sides: Sequence[int], repeat: int, torch: Any) -> list[Row]:
    """Sum over each dimension of a square matrix, in GB/s."""
    rng = np.random.default_rng(1)
    rows = []
    for side in sides:
        x = rng.random((side, side))
        a = from_numpy(x, CudaBackend)
        tx = torch.from_numpy(x).cuda() if torch is not None else None
        for d in (0, 1):
            ours = partial(CudaBackend.add_reduce, a, d)
            theirs = partial(tx.sum, d, keepdim=True) if tx is not None else None
            work = 8.0 * (side * side + side)
            rows.append(
                _measure(f"sum dim {d} {side}x{side}", ours, theirs, repeat, torch, nbytes=work)
            )
    return rows


def matmul_rows(sizes: Sequence[int], repeat: int, torch: Any) -> list[Row]:
    """Square float64 matmul, in GFLOP/s."""
    rng = np.random.default_rng(2)
    rows = []
    for n in sizes:
        x, y = rng.random((n, n)), rng.random((n, n))
        a, b = from_numpy(x, CudaBackend), from_numpy(y, CudaBackend)
        theirs = None
        if torch is not None:
            theirs = partial(torch.matmul, torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda())
        reps = max(1, repeat if n <= 1024 else repeat // 3)
        ours = partial(operator.matmul, a, b)
        rows.append(_measure(f"matmul {n}x{n}", ours, theirs, reps, torch, flops=2.0 * n**3))
    return rows


def mnist_step_row(repeat: int, torch: Any, batch: int = 16) -> Row:
    """One training step of ``train_mnist.Network`` and of its PyTorch twin (``bench_nn``)."""
    name = f"MNIST train step b={batch}"
    if importlib.util.find_spec("minitorch.nn") is None:
        return Row(name, None, note="needs mt-nn (not installed)")
    try:
        return _mnist_step(name, repeat, torch, batch)
    except Exception as e:  # e.g. out of GPU memory; say what failed
        return Row(name, None, note=f"mt-nn: {type(e).__name__}: {str(e)[:70]}")


def _mnist_step(name: str, repeat: int, torch: Any, batch: int) -> Row:
    from mt_examples.bench_nn import mnist_steps

    dtype = torch.float64 if torch is not None else None
    ours, theirs = mnist_steps(CudaBackend, batch, torch, dtype, device="cuda")
    return _measure(name, ours, theirs, repeat, torch)


def format_table(rows: Sequence[Row]) -> str:
    """Render the rows as a Markdown table."""
    header = ["operation", "MiniTorch CUDA", "PyTorch CUDA", "MiniTorch / PyTorch (time)", "note"]
    return markdown_table(
        header, [[r.name, r.cell(r.ours), r.cell(r.torch), r.ratio(r.torch), r.note] for r in rows]
    )


def main(argv: Sequence[str] | None = None) -> str:
    """Run the benchmark on the GPU and print the table; return it."""
    args = bench.parser(__doc__ or "", repeat=5).parse_args(argv)
    check_gpu()
    torch = None if args.no_torch else import_torch(cuda=True)
    if args.quick:
        sizes, sides, mats = [1_000_000], [1024], [256, 512]
    else:
        sizes, sides, mats = [10_000_000, 100_000_000], [4096], [256, 512, 1024, 2048, 4096]
    from numba import cuda

    gpu = cuda.get_current_device()
    print(f"GPU: {gpu.name.decode() if isinstance(gpu.name, bytes) else gpu.name}, float64\n")
    rows = matmul_rows(mats, args.repeat, torch) + elementwise_rows(sizes, args.repeat, torch)
    rows += [*reduce_rows(sides, args.repeat, torch), mnist_step_row(args.repeat, torch)]
    table = format_table(rows)
    print(table)
    if torch is None:
        print("\n(PyTorch with CUDA is not installed: its column is empty.)")
    return table
