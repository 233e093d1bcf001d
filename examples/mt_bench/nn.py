"""Benchmark one MNIST training step of the course's network: MiniTorch vs PyTorch CPU.

A step is what ``train_mnist.py`` does per batch: zero the gradients, forward, the negative
log-likelihood, backward and an SGD update. PyTorch runs the same network from the same
weights (the course's convolution is PyTorch's with the input padded on the right and
bottom only), checked to agree first, in float64 (``--dtype float32``: PyTorch's default).
Both sides are timed in this one run, alternating step by step so that a busy machine slows
them alike, with the same number of threads; each row gives the best and the median of
``--repeat`` steps and the ratio MiniTorch / PyTorch (lower is better).

    python -m mt_bench.nn                    # batch 16 and 64, 1 thread and all
    python -m mt_bench.nn --quick            # a smoke test
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from statistics import median
from typing import Any

import numba
import numpy as np

from minitorch.autodiff import SGD, no_grad
from minitorch.fast import FastBackend
from minitorch.nn import nll_loss
from minitorch.tensor import from_numpy
from mt_bench.common import Row, import_torch, load_line, step_times
from mt_examples.support import HelpFormatter, int_between, positive_int
from mt_examples.train_mnist import Network


def line(row: Row, batch: int, threads: int) -> str:
    """Format a row: best and median step time of each side (ms), and their ratios."""
    best, median = row.ours or 0.0, row.ours_median or 0.0
    text = f"{batch:>5} {threads:>7} {best * 1e3:>9.2f} {median * 1e3:>9.2f}"
    if not row.torch or not row.torch_median:
        return text + "         -         -        -        -"
    return text + (
        f" {row.torch * 1e3:>9.2f} {row.torch_median * 1e3:>9.2f} {best / row.torch:>8.2f}x "
        f"{median / row.torch_median:>7.2f}x"
    )


def torch_network(torch: Any, model: Network, dtype: Any) -> Any:
    """The same network in PyTorch, with ``model``'s weights."""
    fn = torch.nn.functional

    class TorchNet(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 4, 3)
            self.conv2 = torch.nn.Conv2d(4, 8, 3)
            self.linear1 = torch.nn.Linear(392, 64)
            self.linear2 = torch.nn.Linear(64, 10)

        def forward(self, x: Any) -> Any:
            # The course's convolution: output the input's size, zeros right and below.
            h = fn.relu(self.conv1(fn.pad(x, (0, 2, 0, 2))))
            h = fn.relu(self.conv2(fn.pad(h, (0, 2, 0, 2))))
            h = fn.avg_pool2d(h, 4).reshape(x.shape[0], 392)
            h = fn.dropout(fn.relu(self.linear1(h)), model.rate, self.training)
            return fn.log_softmax(self.linear2(h), 1)

    net = TorchNet().to(dtype)
    with torch.no_grad():
        for name in ("conv1", "conv2", "linear1", "linear2"):
            ours, theirs = getattr(model, name), getattr(net, name)
            w = ours.weight.value.to_numpy()
            theirs.weight.copy_(torch.from_numpy(w.T if name.startswith("linear") else w.copy()))
            theirs.bias.copy_(torch.from_numpy(ours.bias.value.to_numpy().copy()))
    return net


def _check_same_function(torch: Any, model: Network, net: Any, x: np.ndarray, tx: Any) -> None:
    model.eval()
    net.eval()
    with no_grad():
        ours = model(from_numpy(x, model.conv1.weight.value.backend)).to_numpy()
    with torch.no_grad():
        theirs = net(tx).double().cpu().numpy()
    model.train()
    net.train()
    tol = 1e-8 if tx.dtype == torch.float64 else 1e-3
    if not np.allclose(ours, theirs, atol=tol):
        raise RuntimeError(f"the two networks disagree (max diff {np.abs(ours - theirs).max()})")


def mnist_steps(
    backend: Any, batch: int, torch: Any, dtype: Any, device: str = "cpu"
) -> tuple[Callable[[], None], Callable[[], None] | None]:
    """Return one SGD step of ``train_mnist.Network`` on ``backend`` and of its PyTorch twin.

    The twin (None without ``torch``) runs on ``device`` in ``dtype``, from the same weights
    and batch; the two networks' outputs are checked to agree first.
    """
    rng = np.random.default_rng(0)
    x = rng.random((batch, 1, 28, 28))
    y = rng.integers(0, 10, batch)
    model = Network(backend, seed=0)
    opt = SGD(model.parameters(), lr=0.01)
    xt = from_numpy(x, backend)

    def ours() -> None:
        opt.zero_grad()
        nll_loss(model(xt), y).backward()
        opt.step()

    if torch is None:
        return ours, None
    net = torch_network(torch, model, dtype).to(device)
    tx, ty = torch.from_numpy(x).to(device, dtype), torch.from_numpy(y).to(device)
    _check_same_function(torch, model, net, x, tx)
    topt = torch.optim.SGD(net.parameters(), lr=0.01)

    def theirs() -> None:
        topt.zero_grad()
        torch.nn.functional.nll_loss(net(tx), ty).backward()
        topt.step()

    return ours, theirs


def bench_step(batch: int, threads: int, repeat: int, torch: Any, dtype: Any) -> Row:
    """Time ``repeat`` training steps of each network, alternating, after a warm-up."""
    numba.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    ours, theirs = mnist_steps(FastBackend, batch, torch, dtype)
    times = step_times([ours] if theirs is None else [ours, theirs], repeat)
    row = Row(f"batch {batch}, {threads} threads", min(times[0]), ours_median=median(times[0]))
    if theirs is not None:
        row.torch, row.torch_median = min(times[1]), median(times[1])
    return row


#: The goal of every row: MiniTorch's step time over PyTorch's, at most (never asserted).
TARGET = 1.0

#: The column heads of ``line``.
HEADER = (
    f"{'batch':>5} {'threads':>7} {'ours best':>9} {'median':>9} {'torch best':>9} "
    f"{'median':>9} {'ratio best':>8} {'median':>7}   (ms)"
)


def run(
    batches: Sequence[int], threads: Sequence[int], repeat: int, torch: Any, dtype: Any
) -> list[Row]:
    """Print ``HEADER`` and a line per thread count and batch size (``bench_step``)."""
    print(HEADER)
    rows = []
    for n in threads:
        for batch in batches:
            rows.append(bench_step(batch, n, repeat, torch, dtype))
            print(line(rows[-1], batch, n), flush=True)
    print(f"target: ratio <= {TARGET:.1f}x (a step no slower than PyTorch's)")
    return rows


def main(argv: Sequence[str] | None = None) -> list[Row]:
    """Run the benchmark and print the table."""
    cores = numba.config.NUMBA_NUM_THREADS
    p = argparse.ArgumentParser(
        prog="python -m mt_bench.nn",
        description=__doc__.split("\n\n")[0],
        formatter_class=HelpFormatter,
    )
    add = p.add_argument
    add("--batch", type=positive_int, nargs="+", default=[16, 64], help="batch sizes to run")
    add("--threads", type=int_between(1, cores), nargs="+", default=sorted({1, cores}),
        help=f"thread counts to run (at most {cores})")  # fmt: skip
    add("--repeat", type=positive_int, default=40, help="timed steps per side")
    add("--dtype", choices=["float64", "float32"], default="float64",
        help="PyTorch's type (MiniTorch always computes in float64)")  # fmt: skip
    add("--quick", action="store_true", help="few steps, batch 16 only")
    args = p.parse_args(argv)
    if args.quick:
        args.batch, args.repeat = [16], 3
    torch = import_torch()
    dtype = getattr(torch, args.dtype) if torch is not None else None
    print(
        f"MNIST training step, MiniTorch (FastBackend, float64) vs PyTorch "
        f"{torch.__version__ + ' CPU ' + args.dtype if torch else '(not installed)'}; "
        f"{args.repeat} steps each, alternating; {load_line()}"
    )
    return run(args.batch, args.threads, args.repeat, torch, dtype)


if __name__ == "__main__":
    main()
