"""Benchmark the parallel CPU backend against NumPy (and PyTorch CPU when installed).

Every row is measured in this one run on the same data: the best of ``--repeat`` timings
after a warm-up call (which also compiles or loads the kernel). Ratios are MiniTorch's
time over NumPy's (lower is better; 1.0 is parity). Matmul rows report GFLOP/s.

    hatch run bench:fast            # the full table
    hatch run bench:fast --quick    # smaller sizes, for a smoke test
    hatch run bench:fast --only matmul --repeat 15   # one section
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minitorch.fast import FastBackend
from minitorch.tensor import Tensor, from_numpy
from mt_examples.bench import Row, best_time, import_torch
from mt_examples.support import HelpFormatter

Case = tuple[str, Callable[[], Any], Callable[[], Any], Callable[[], Any] | None]
"""``(name, ours, numpy, torch or None)``: the same operation in each library."""


def elementwise_cases(
    a: Tensor, b: Tensor, xa: np.ndarray, xb: np.ndarray, ta: Any, tb: Any, torch: Any
) -> list[Case]:
    """Map (neg, sigmoid) and zip (add, mul) on one pair of inputs."""
    f = FastBackend
    return [
        (
            "map neg",
            lambda: f.neg_map(a),
            lambda: np.negative(xa),
            (lambda: torch.neg(ta)) if torch else None,
        ),
        (
            "map sigmoid",
            lambda: f.sigmoid_map(a),
            lambda: 1.0 / (1.0 + np.exp(-xa)),
            (lambda: torch.sigmoid(ta)) if torch else None,
        ),
        (
            "zip add",
            lambda: f.add_zip(a, b),
            lambda: np.add(xa, xb),
            (lambda: torch.add(ta, tb)) if torch else None,
        ),
        (
            "zip mul",
            lambda: f.mul_zip(a, b),
            lambda: np.multiply(xa, xb),
            (lambda: torch.mul(ta, tb)) if torch else None,
        ),
    ]


def elementwise_rows(sizes: Sequence[int], repeat: int, torch: Any) -> list[Row]:
    """Map (neg, sigmoid) and zip (add, mul), contiguous and permuted."""
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        side = round(n**0.5)
        for layout in ("contiguous", "permuted"):
            if layout == "contiguous":
                xa, xb = rng.random(n), rng.random(n)
                a, b = from_numpy(xa, FastBackend), from_numpy(xb, FastBackend)
            else:
                xa, xb = rng.random((side, side)).T, rng.random((side, side)).T
                a = from_numpy(xa.T.copy(), FastBackend).permute(1, 0)
                b = from_numpy(xb.T.copy(), FastBackend).permute(1, 0)
            ta = tb = None
            if torch is not None:
                ta, tb = (
                    torch.from_numpy(np.ascontiguousarray(xa)),
                    torch.from_numpy(np.ascontiguousarray(xb)),
                )
                if layout == "permuted":
                    ta, tb = ta.T.contiguous().T, tb.T.contiguous().T
            for name, ours, ref, tref in elementwise_cases(a, b, xa, xb, ta, tb, torch):
                rows.append(
                    Row(
                        f"{name} {n:.0e} {layout}",
                        best_time(ours, repeat),
                        numpy=best_time(ref, repeat),
                        torch=best_time(tref, repeat) if tref else None,
                    )
                )
    return rows


def sum_row(x: np.ndarray, dim: int, repeat: int, torch: Any) -> Row:
    """Sum a matrix over one dimension, keeping it."""
    a = from_numpy(x, FastBackend)
    tx = torch.from_numpy(x) if torch is not None else None
    return Row(
        f"sum dim {dim} {x.shape[0]}x{x.shape[1]}",
        best_time(lambda: FastBackend.add_reduce(a, dim), repeat),
        numpy=best_time(lambda: x.sum(axis=dim, keepdims=True), repeat),
        torch=best_time(lambda: tx.sum(dim, keepdim=True), repeat) if tx is not None else None,
    )


def reduce_rows(sides: Sequence[int], repeat: int, torch: Any) -> list[Row]:
    """Sum over each dimension of a square matrix."""
    rng = np.random.default_rng(1)
    rows = []
    for side in sides:
        x = rng.random((side, side))
        rows.extend(sum_row(x, dim, repeat, torch) for dim in (0, 1))
    return rows


def matmul_row(x: np.ndarray, y: np.ndarray, repeat: int, torch: Any) -> Row:
    """Multiply two square matrices; the row reports GFLOP/s."""
    n = x.shape[0]
    a, b = from_numpy(x, FastBackend), from_numpy(y, FastBackend)
    tx, ty = (torch.from_numpy(x), torch.from_numpy(y)) if torch is not None else (None, None)
    reps = max(1, repeat if n <= 512 else repeat // 2)
    return Row(
        f"matmul {n}x{n}",
        best_time(lambda: a @ b, reps),
        numpy=best_time(lambda: x @ y, reps),
        torch=best_time(lambda: tx @ ty, reps) if tx is not None else None,
        flops=2.0 * n**3,
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
    """One forward+backward+SGD step of the example MLP (2 -> hidden -> hidden -> 1)."""
    from minitorch.autodiff import SGD
    from minitorch.operators import Module, Parameter
    from minitorch.tensor import rand

    class Linear(Module):
        def __init__(self, n_in: int, n_out: int, seed: int) -> None:
            super().__init__()
            self.weight = Parameter(rand((n_in, n_out), FastBackend, seed=seed) - 0.5)
            self.bias = Parameter(rand((n_out,), FastBackend, seed=seed + 1) - 0.5)

        def forward(self, x: Tensor) -> Tensor:
            return x @ self.weight.value + self.bias.value

    class Network(Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer1 = Linear(2, hidden, 0)
            self.layer2 = Linear(hidden, hidden, 2)
            self.layer3 = Linear(hidden, 1, 4)

        def forward(self, x: Tensor) -> Tensor:
            h = self.layer1(x).relu()
            h = self.layer2(h).relu()
            return self.layer3(h).sigmoid()

    rng = np.random.default_rng(3)
    xs = rng.random((batch, 2))
    ys = (xs[:, :1] < 0.5).astype(np.float64)
    model = Network()
    optim = SGD(model.parameters(), lr=0.1)
    x, y = from_numpy(xs, FastBackend), from_numpy(ys, FastBackend)

    def ours() -> None:
        optim.zero_grad()
        p = model(x)
        loss = -(y * p.log() + (1.0 - y) * (1.0 - p).log()).mean()
        loss.backward()
        optim.step()

    torch_time = None
    if torch is not None:
        tmodel = torch.nn.Sequential(
            torch.nn.Linear(2, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, 1),
            torch.nn.Sigmoid(),
        ).double()
        topt = torch.optim.SGD(tmodel.parameters(), lr=0.1)
        tx, ty = torch.from_numpy(xs), torch.from_numpy(ys)

        def theirs() -> None:
            topt.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy(tmodel(tx), ty)
            loss.backward()
            topt.step()

        torch_time = best_time(theirs, repeat)
    return Row(f"MLP step b={batch} h={hidden}", best_time(ours, repeat), torch=torch_time)


def format_table(rows: Sequence[Row]) -> str:
    """Render the rows as a Markdown table."""
    lines = [
        "| operation | MiniTorch fast | NumPy | fast / NumPy | PyTorch CPU | fast / PyTorch |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r.name} | {r.cell(r.ours)} | {r.cell(r.numpy)} | {r.ratio(r.numpy)} | "
        f"{r.cell(r.torch)} | {r.ratio(r.torch)} |"
        for r in rows
    ]
    return "\n".join(lines)


SECTIONS = ("elementwise", "sum", "matmul", "mlp")
"""The table's sections, in order (``--only`` picks some)."""


def main(argv: Sequence[str] | None = None) -> str:
    """Run the benchmark and print the table; return it."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=HelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7, help="timed repeats per row")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    parser.add_argument(
        "--only",
        choices=SECTIONS,
        action="append",
        help="measure only this section (repeatable; default: all)",
    )
    args = parser.parse_args(argv)
    only = set(args.only or SECTIONS)
    torch = None if args.no_torch else import_torch(threads=2)
    if args.quick:
        sizes, sides, mats = [10_000], [100], [32, 64]
    else:
        sizes, sides, mats = [1_000_000, 10_000_000], [1000, 4096], [64, 256, 512, 1024]
    rows = []
    if "elementwise" in only:
        rows += elementwise_rows(sizes, args.repeat, torch)
    if "sum" in only:
        rows += reduce_rows(sides, args.repeat, torch)
    if "matmul" in only:
        rows += matmul_rows(mats, args.repeat, torch)
    if "mlp" in only:
        rows.append(mlp_step_row(args.repeat, torch))
    table = format_table(rows)
    print(table)
    if torch is None:
        print("\n(PyTorch is not installed: its columns are empty.)")
    return table
