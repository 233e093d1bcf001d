"""Train a small network of Tensors on one of the course's toy datasets.

The same classifier as ``train_scalar.py`` (two hidden ReLU layers and a sigmoid output,
full-batch gradient descent on the mean binary cross-entropy), written with whole-batch
tensors as the course's module 2 does. A linear layer is a broadcast multiply and a sum,
not ``@``, so the simple backend runs it on ``map``/``zip``/``reduce``::

    (x.view(B, in, 1) * w.view(1, in, out)).sum(1).view(B, out) + b

``--backend`` picks the tensor backend by name through ``minitorch.tensor.backend``:
``simple`` (pure Python, the default) or ``fast`` once mt-fast is installed.

Run it with ``python examples/train_tensor.py --dataset xor``; ``--help`` lists the
options. ``main(argv)`` and ``train(...)`` can also be imported.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from example_support import EpochReport, non_negative_int, positive_float, positive_int

from minitorch.autodiff import SGD, Adam, Optimizer, no_grad
from minitorch.operators import Graph, Module, Parameter, datasets
from minitorch.tensor import Tensor, TensorBackend, rand, tensor
from minitorch.tensor import backend as find_backend

__all__ = [
    "DEFAULTS",
    "Linear",
    "Network",
    "accuracy",
    "bce_loss",
    "build_parser",
    "main",
    "train",
]

#: Defaults measured to reach >= 95% training accuracy on simple, diag, split and xor with
#: the simple backend and seed 0 (100, 100, 100 and 98%); 500 epochs leave split at 94%
#: with these initial weights. A numpy replica of the same model reaches >= 95% on all four
#: for 17 of the seeds 0-19.
DEFAULTS: dict[str, Any] = {
    "dataset": "simple",
    "points": 50,
    "hidden": 10,
    "lr": 0.5,
    "epochs": 750,
    "optimizer": "sgd",
    "seed": 0,
    "backend": "simple",
}


def _uniform(shape: tuple[int, ...], backend: TensorBackend, rng: np.random.Generator) -> Tensor:
    """A constant tensor of values uniform in ``[-1, 1)`` (the course's initialisation)."""
    return (rand(shape, backend=backend, seed=rng) - 0.5) * 2.0


class Linear(Module):
    """A fully connected layer ``y = x w + b`` on a batch ``x`` of shape ``(B, in_size)``.

    The product is a broadcast multiply of ``(B, in, 1)`` by ``(1, in, out)`` summed over
    ``in``, so it needs only the backend's ``zip`` and ``reduce``. ``weight`` has shape
    ``(in_size, out_size)`` and ``bias`` ``(out_size,)``, both uniform in ``[-1, 1)``.

    Args:
        in_size: number of inputs.
        out_size: number of outputs.
        backend: where the parameters live.
        rng: the random generator for the initial values.
    """

    def __init__(
        self, in_size: int, out_size: int, backend: TensorBackend, rng: np.random.Generator
    ) -> None:
        super().__init__()
        self.in_size = in_size
        self.out_size = out_size
        self.weight = Parameter(_uniform((in_size, out_size), backend, rng))
        self.bias = Parameter(_uniform((out_size,), backend, rng))

    def forward(self, x: Tensor) -> Tensor:
        """Return the ``(B, out_size)`` outputs for a contiguous ``(B, in_size)`` batch."""
        if x.dims != 2 or x.shape[1] != self.in_size:
            raise ValueError(f"Linear expects a batch of shape (B, {self.in_size}), got {x.shape}")
        batch = x.shape[0]
        weight: Tensor = self.weight.value
        bias: Tensor = self.bias.value
        prod = x.view(batch, self.in_size, 1) * weight.view(1, self.in_size, self.out_size)
        return prod.sum(1).view(batch, self.out_size) + bias


class Network(Module):
    """Two hidden ReLU layers of width ``hidden`` and one sigmoid output.

    ``forward(x)`` returns ``P(y = 1 | x)`` of shape ``(B, 1)``; ``logit(x)`` the value
    before the sigmoid, which the loss uses.
    """

    def __init__(self, hidden: int, backend: TensorBackend, rng: np.random.Generator) -> None:
        super().__init__()
        self.layer1 = Linear(2, hidden, backend, rng)
        self.layer2 = Linear(hidden, hidden, backend, rng)
        self.layer3 = Linear(hidden, 1, backend, rng)

    def logit(self, x: Tensor) -> Tensor:
        """Return the ``(B, 1)`` outputs before the sigmoid for a ``(B, 2)`` batch."""
        h = self.layer1.forward(x).relu()
        h = self.layer2.forward(h).relu()
        return self.layer3.forward(h)

    def forward(self, x: Tensor) -> Tensor:
        """Return ``P(y = 1 | x)`` for each point of a ``(B, 2)`` batch."""
        return self.logit(x).sigmoid()


def bce_loss(logits: Tensor, sign: Tensor) -> Tensor:
    """Mean binary cross-entropy, ``-log(sigmoid(s * z))`` with ``s = 2y - 1``.

    ``sigmoid(-z) = 1 - sigmoid(z)``, so this is ``-log(p)`` for label 1 and
    ``-log(1 - p)`` for label 0, and stays finite when ``p`` rounds to 1.0.

    Args:
        logits: the ``(B, 1)`` outputs before the sigmoid.
        sign: a constant ``(B, 1)`` tensor, +1 for label 1 and -1 for label 0.
    """
    return -(logits * sign).sigmoid().log().mean()


def _make_optimizer(name: str, model: Module, lr: float) -> Optimizer:
    if name == "sgd":
        return SGD(model.parameters(), lr=lr)
    if name == "adam":
        return Adam(model.parameters(), lr=lr)
    raise ValueError(f"unknown optimizer {name!r}: choose 'sgd' or 'adam'")


def _correct(logits: Tensor, labels: np.ndarray) -> int:
    return int(np.sum((logits.to_numpy()[:, 0] > 0.0) == (labels == 1)))


def accuracy(model: Network, data: Graph, backend: TensorBackend) -> float:
    """Return the fraction of points of ``data`` that ``model`` labels correctly."""
    if not data.N:
        return 0.0
    with no_grad():
        logits = model.logit(tensor(data.X, backend=backend))
    return _correct(logits, np.asarray(data.y)) / data.N


def train(
    dataset: str = DEFAULTS["dataset"],
    *,
    points: int = DEFAULTS["points"],
    hidden: int = DEFAULTS["hidden"],
    lr: float = DEFAULTS["lr"],
    epochs: int = DEFAULTS["epochs"],
    optimizer: str = DEFAULTS["optimizer"],
    seed: int | None = DEFAULTS["seed"],
    backend: str | TensorBackend = DEFAULTS["backend"],
    log_every: int = 0,
    log: Callable[[str], None] | None = None,
    progress: bool = False,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Train a ``Network`` on a toy dataset with full-batch gradient descent.

    For a given seed the data are the same points ``train_scalar.train`` uses.

    Args:
        dataset: a name in ``minitorch.operators.datasets``.
        points: number of points to generate.
        hidden: width of both hidden layers.
        lr: learning rate.
        epochs: number of full passes (one optimizer step each).
        optimizer: ``"sgd"`` or ``"adam"``.
        seed: seeds one local ``random.Random`` that draws the data's seed and the seed of
            a local numpy generator for the initial weights (``None`` for fresh ones); the
            global random states are never touched.
        backend: a backend name for ``minitorch.tensor.backend``, or a backend.
        log_every: call ``log`` every this many epochs and on the last (0: never).
        log: where the per-epoch lines go (default ``print``).
        progress: show a tqdm progress bar over the epochs.
        on_epoch: called after each epoch with ``{"epoch", "loss", "accuracy", "model",
            "data"}`` (for live plots); an exception it raises stops training.

    Returns:
        A dict with ``dataset, points, hidden, lr, epochs, optimizer, seed, backend`` (its
        name), the per-epoch ``losses`` and ``accuracies`` (measured in each epoch's
        forward pass, before its update), ``final_loss``, ``final_accuracy`` (of the
        trained model), ``seconds`` and ``seconds_per_epoch``, and the trained ``model``.

    Raises:
        ValueError: for an unknown dataset or optimizer, or a non-positive size or rate.
        LookupError: for a backend name that no installed package provides.
    """
    if dataset not in datasets:
        raise ValueError(f"unknown dataset {dataset!r}: choose one of {', '.join(datasets)}")
    for name, value in (("points", points), ("hidden", hidden), ("epochs", epochs)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if not lr > 0.0:
        raise ValueError(f"lr must be positive, got {lr!r}")
    be = find_backend(backend) if isinstance(backend, str) else backend

    rng = random.Random(seed)
    data = datasets[dataset](points, seed=rng.randrange(2**32))
    model = Network(hidden, be, np.random.default_rng(rng.randrange(2**32)))
    opt = _make_optimizer(optimizer, model, lr)
    x = tensor(data.X, backend=be)
    labels = np.asarray(data.y)
    sign = tensor([[2.0 * y - 1.0] for y in data.y], backend=be)

    losses: list[float] = []
    accuracies: list[float] = []
    report = EpochReport(
        epochs,
        desc=f"{dataset} ({be.name})",
        progress=progress,
        log=log,
        log_every=log_every,
        on_epoch=on_epoch,
    )
    start = time.perf_counter()
    with report:
        for epoch in report:
            opt.zero_grad()
            logits = model.logit(x)
            loss = bce_loss(logits, sign)
            loss.backward()
            opt.step()

            loss_value = loss.item()
            correct = _correct(logits, labels)
            losses.append(loss_value)
            accuracies.append(correct / data.N)
            report.report(epoch, loss_value, correct, data.N, model=model, data=data)
    seconds = time.perf_counter() - start

    with no_grad():
        final_loss = bce_loss(model.logit(x), sign).item()
    return {
        "dataset": dataset,
        "points": data.N,
        "hidden": hidden,
        "lr": lr,
        "epochs": epochs,
        "optimizer": optimizer,
        "seed": seed,
        "backend": be.name,
        "losses": losses,
        "accuracies": accuracies,
        "final_loss": final_loss,
        "final_accuracy": accuracy(model, data, be),
        "seconds": seconds,
        "seconds_per_epoch": seconds / epochs,
        "model": model,
    }


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of this script."""
    p = argparse.ArgumentParser(
        prog="train_tensor",
        description="Train a 2-hidden-layer network of Tensors on a MiniTorch toy dataset.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--dataset", choices=list(datasets), default=DEFAULTS["dataset"])
    p.add_argument(
        "--points",
        "-n",
        type=positive_int,
        default=DEFAULTS["points"],
        help="number of training points",
    )
    p.add_argument(
        "--hidden",
        type=positive_int,
        default=DEFAULTS["hidden"],
        help="width of each hidden layer",
    )
    p.add_argument("--lr", type=positive_float, default=DEFAULTS["lr"], help="learning rate")
    p.add_argument("--epochs", type=positive_int, default=DEFAULTS["epochs"])
    p.add_argument("--optimizer", choices=["sgd", "adam"], default=DEFAULTS["optimizer"])
    p.add_argument(
        "--seed",
        type=int,
        default=DEFAULTS["seed"],
        help="seed for the data and the initial weights",
    )
    p.add_argument(
        "--backend",
        default=DEFAULTS["backend"],
        help="tensor backend by name: simple, or fast with mt-fast installed",
    )
    p.add_argument(
        "--log-every",
        type=non_negative_int,
        default=None,
        help="print loss and accuracy every K epochs and on the last "
        "(default: about 10 lines per run; 0 prints only the summary)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Parse ``argv`` (default ``sys.argv[1:]``), train, print a summary; return the result.

    Raises:
        SystemExit: with status 2 for invalid arguments, including a backend that is not
            installed (argparse prints why and what to install).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        be = find_backend(args.backend)
    except LookupError as exc:
        parser.error(f"argument --backend: {exc}")
    except (ImportError, TypeError) as exc:
        parser.error(f"argument --backend: backend {args.backend!r} failed to load: {exc}")
    log_every = args.log_every if args.log_every is not None else max(1, args.epochs // 10)
    print(
        f"training on {args.dataset} ({args.points} points): hidden={args.hidden} "
        f"lr={args.lr} epochs={args.epochs} optimizer={args.optimizer} seed={args.seed} "
        f"backend={be.name}"
    )
    result = train(
        args.dataset,
        points=args.points,
        hidden=args.hidden,
        lr=args.lr,
        epochs=args.epochs,
        optimizer=args.optimizer,
        seed=args.seed,
        backend=be,
        log_every=log_every,
        progress=not args.no_progress,
    )
    print(
        f"done: dataset={result['dataset']} backend={result['backend']} "
        f"final accuracy {result['final_accuracy']:.1%} "
        f"final loss {result['final_loss']:.4f}  "
        f"{result['seconds_per_epoch']:.4f} s/epoch ({result['seconds']:.1f} s total)"
    )
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
