"""Benchmark the CUDA backend on a GPU, beside PyTorch CUDA when it is installed.

Rows: float64 matmul in GFLOP/s (256 to 4096), map and zip in GB/s (1e7 and 1e8
elements), sums over each dimension of a matrix in GB/s, and one training step of the
MNIST network of ``train_mnist.py`` (with mt-nn). Each row is the best of ``--repeat`` timings
after a warm-up call (which also compiles the kernel); the GPU is synchronised before
every clock reading. GB/s counts the bytes an operation must read and write (8 per
float64 element), so it is comparable with the GPU's memory bandwidth.

It needs a real CUDA GPU: it refuses to run on Numba's CUDA simulator, whose timings
mean nothing.

    hatch run bench:cuda            # the full table
    hatch run bench:cuda --quick    # small sizes, a smoke test on a GPU
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from minitorch.cuda import CudaBackend, is_available
from minitorch.cuda.device import simulator_enabled
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
        for dim in (0, 1):
            rows.append(
                _measure(
                    f"sum dim {dim} {side}x{side}",
                    lambda a=a, d=dim: CudaBackend.add_reduce(a, d),
                    (lambda tx=tx, d=dim: tx.sum(d, keepdim=True)) if tx is not None else None,
                    repeat,
                    torch,
                    nbytes=8.0 * (side * side + side),
                )
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
            tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
            theirs = lambda tx=tx, ty=ty: tx @ ty  # noqa: E731
        reps = max(1, repeat if n <= 1024 else repeat // 3)
        rows.append(
            _measure(
                f"matmul {n}x{n}", lambda a=a, b=b: a @ b, theirs, reps, torch, flops=2.0 * n**3
            )
        )
    return rows


def mnist_step_row(repeat: int, torch: Any, batch: int = 16) -> Row:
    """One training step of ``train_mnist.Network`` and of ``bench_nn``'s PyTorch twin."""
    name = f"MNIST train step b={batch}"
    if importlib.util.find_spec("minitorch.nn") is None:
        return Row(name, None, note="needs mt-nn (not installed)")
    try:
        return _mnist_step(name, repeat, torch, batch)
    except Exception as e:  # e.g. out of GPU memory; say what failed
        return Row(name, None, note=f"mt-nn: {type(e).__name__}: {str(e)[:70]}")


def _mnist_step(name: str, repeat: int, torch: Any, batch: int) -> Row:
    from minitorch.autodiff import SGD
    from minitorch.nn import nll_loss
    from mt_examples.bench_nn import torch_network
    from mt_examples.train_mnist import Network

    rng = np.random.default_rng(4)
    xs = rng.random((batch, 1, 28, 28))
    labels = rng.integers(0, 10, size=batch)
    model = Network(CudaBackend, seed=0)
    optim = SGD(model.parameters(), lr=0.01)
    x = from_numpy(xs, CudaBackend)

    def ours() -> None:
        optim.zero_grad()
        nll_loss(model(x), labels).backward()
        optim.step()

    theirs = None
    if torch is not None:
        net = torch_network(torch, model, torch.float64).cuda()
        topt = torch.optim.SGD(net.parameters(), lr=0.01)
        tx, ty = torch.from_numpy(xs).cuda(), torch.from_numpy(labels).cuda()

        def theirs() -> None:
            topt.zero_grad()
            torch.nn.functional.nll_loss(net(tx), ty).backward()
            topt.step()

    return _measure(name, ours, theirs, repeat, torch)


def format_table(rows: Sequence[Row]) -> str:
    """Render the rows as a Markdown table."""
    header = ["operation", "MiniTorch CUDA", "PyTorch CUDA", "MiniTorch / PyTorch (time)", "note"]
    return markdown_table(
        header, [[r.name, r.cell(r.ours), r.cell(r.torch), r.ratio(r.torch), r.note] for r in rows]
    )


def build_rows(
    sizes: Sequence[int], sides: Sequence[int], mats: Sequence[int], repeat: int, torch: Any
) -> list[Row]:
    """Every row of the table."""
    return (
        matmul_rows(mats, repeat, torch)
        + elementwise_rows(sizes, repeat, torch)
        + reduce_rows(sides, repeat, torch)
        + [mnist_step_row(repeat, torch)]
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
    table = format_table(build_rows(sizes, sides, mats, args.repeat, torch))
    print(table)
    if torch is None:
        print("\n(PyTorch with CUDA is not installed: its column is empty.)")
    return table
