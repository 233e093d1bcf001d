"""Benchmark the CUDA backend on a GPU, beside PyTorch CUDA when it is installed.

Rows: float64 matmul in GFLOP/s (256 to 4096), map and zip in GB/s (1e7 and 1e8
elements), sums over each dimension of a matrix in GB/s, and one training step of the
MNIST network of mt-nn (once mt-nn exists). Each row is the best of ``--repeat`` timings
after a warm-up call (which also compiles the kernel); the GPU is synchronised before
every clock reading. GB/s counts the bytes an operation must read and write (8 per
float64 element), so it is comparable with the GPU's memory bandwidth.

It needs a real CUDA GPU: it refuses to run on Numba's CUDA simulator, whose timings
mean nothing.

    hatch run bench:cuda            # the full table
    hatch run bench:cuda --quick    # small sizes, a smoke test on a GPU
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minitorch.cuda import CudaBackend, is_available
from minitorch.cuda.device import simulator_enabled
from minitorch.tensor import Tensor, from_numpy
from mt_examples.bench import Row, best_time, import_torch
from mt_examples.support import HelpFormatter


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
        rows += _elementwise(n, rng.random(n), rng.random(n), repeat, torch)
    return rows


def _elementwise(n: int, xa: Any, xb: Any, repeat: int, torch: Any) -> list[Row]:
    f = CudaBackend
    a, b = from_numpy(xa, CudaBackend), from_numpy(xb, CudaBackend)
    ta = tb = None
    if torch is not None:
        ta, tb = torch.from_numpy(xa).cuda(), torch.from_numpy(xb).cuda()
    cases = [
        ("map neg", lambda: f.neg_map(a), lambda: torch.neg(ta), 2),
        ("map sigmoid", lambda: f.sigmoid_map(a), lambda: torch.sigmoid(ta), 2),
        ("zip add", lambda: f.add_zip(a, b), lambda: torch.add(ta, tb), 3),
        ("zip mul", lambda: f.mul_zip(a, b), lambda: torch.mul(ta, tb), 3),
    ]
    return [
        _measure(
            f"{name} {n:.0e}",
            ours,
            theirs if torch is not None else None,
            repeat,
            torch,
            nbytes=8.0 * passes * n,
        )
        for name, ours, theirs, passes in cases
    ]


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
    """One forward+backward+SGD step of the course's MNIST network, on random images."""
    name = f"MNIST train step b={batch}"
    if importlib.util.find_spec("minitorch.nn") is None:
        return Row(name, None, note="needs mt-nn (not installed)")
    try:
        return _mnist_step(name, repeat, torch, batch)
    except Exception as e:  # mt-nn's API is not settled yet; say what failed
        return Row(name, None, note=f"mt-nn: {type(e).__name__}: {str(e)[:70]}")


def _mnist_step(name: str, repeat: int, torch: Any, batch: int) -> Row:
    from minitorch import nn  # type: ignore[attr-defined]
    from minitorch.autodiff import SGD
    from minitorch.operators import Module

    class Network(Module):
        """conv 3x3 (4) -> conv 3x3 (8) -> avgpool 4x4 -> linear 392->64 -> linear 64->10."""

        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 3, backend=CudaBackend)
            self.conv2 = nn.Conv2d(4, 8, 3, 3, backend=CudaBackend)
            self.linear1 = nn.Linear(392, 64, backend=CudaBackend)
            self.linear2 = nn.Linear(64, 10, backend=CudaBackend)

        def forward(self, x: Tensor) -> Tensor:
            h = self.conv2(self.conv1(x).relu()).relu()
            h = nn.avgpool2d(h, (4, 4)).view(x.shape[0], 392)
            h = nn.dropout(self.linear1(h).relu(), 0.25, not self.training)
            return nn.logsoftmax(self.linear2(h), dim=1)

    rng = np.random.default_rng(4)
    xs = rng.random((batch, 1, 28, 28))
    labels = rng.integers(0, 10, size=batch)
    ys = np.eye(10)[labels]
    model = Network()
    optim = SGD(model.parameters(), lr=0.01)
    x, y = from_numpy(xs, CudaBackend), from_numpy(ys, CudaBackend)

    def ours() -> None:
        optim.zero_grad()
        loss = -(model(x) * y).sum() / float(batch)
        loss.backward()
        optim.step()

    theirs = None
    if torch is not None:
        tnn = torch.nn
        tmodel = tnn.Sequential(
            tnn.Conv2d(1, 4, 3, padding=1), tnn.ReLU(), tnn.Conv2d(4, 8, 3, padding=1),
            tnn.ReLU(), tnn.AvgPool2d(4), tnn.Flatten(), tnn.Linear(392, 64), tnn.ReLU(),
            tnn.Dropout(0.25), tnn.Linear(64, 10), tnn.LogSoftmax(dim=1),
        ).double().cuda()  # fmt: skip
        topt = torch.optim.SGD(tmodel.parameters(), lr=0.01)
        tx = torch.from_numpy(xs).cuda()
        tlabels = torch.from_numpy(labels).cuda()

        def theirs() -> None:
            topt.zero_grad()
            loss = torch.nn.functional.nll_loss(tmodel(tx), tlabels)
            loss.backward()
            topt.step()

    return _measure(name, ours, theirs, repeat, torch)


def format_table(rows: Sequence[Row]) -> str:
    """Render the rows as a Markdown table."""
    lines = [
        "| operation | MiniTorch CUDA | PyTorch CUDA | MiniTorch / PyTorch (time) | note |",
        "| --- | ---: | ---: | ---: | --- |",
    ]

    for r in rows:
        lines.append(
            f"| {r.name} | {r.cell(r.ours)} | {r.cell(r.torch)} | {r.ratio(r.torch)} | {r.note} |"
        )
    return "\n".join(lines)


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
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=HelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed repeats per row")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    args = parser.parse_args(argv)
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
