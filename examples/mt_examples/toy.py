"""Training on the course's toy datasets: what ``train_scalar`` and ``train_tensor`` share.

Both train the same classifier (two hidden ReLU layers, a sigmoid output) by full-batch
gradient descent on the mean binary cross-entropy; they differ only in what a number is (a
``Scalar``, or one entry of a batch ``Tensor``). Each script builds its model and one
training step; ``fit`` runs the epochs, and ``main`` is the command line of both.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from minitorch.operators import Graph, Module, datasets
from mt_examples.support import (
    MAX_EPOCHS,
    DivergedError,
    HelpFormatter,
    backend_from_args,
    check_finite,
    exit_with,
    int_between,
    non_negative_int,
    positive_float,
    positive_int,
    progress_bar,
)

#: The default learning rate of each optimizer.
DEFAULT_LR = {"sgd": 0.5, "adam": 0.05}


@dataclass(frozen=True)
class ToyConfig:
    """What to train.

    Attributes:
        dataset: a name in ``minitorch.operators.datasets``.
        points: number of points to generate.
        hidden: width of both hidden layers.
        lr: learning rate (None: ``DEFAULT_LR[optimizer]``).
        epochs: full-batch steps.
        optimizer: ``"sgd"`` or ``"adam"``.
        seed: seeds one local ``random.Random`` for the data and the initial weights (None
            for fresh ones); the global random states are never touched.
        backend: ``"scalar"`` for ``train_scalar``, else a tensor backend's name.
    """

    dataset: str = "simple"
    points: int = 50
    hidden: int = 10
    lr: float | None = None
    epochs: int = 750
    optimizer: str = "sgd"
    seed: int | None = 0
    backend: str = "simple"

    def checked(self) -> ToyConfig:
        """Return this config with ``lr`` filled in.

        Raises:
            ValueError: naming the field, for an unknown dataset or optimizer or a size or
                rate that is not positive.
        """
        if self.dataset not in datasets:
            raise ValueError(
                f"unknown dataset {self.dataset!r}: choose one of {', '.join(datasets)}"
            )
        if self.optimizer not in DEFAULT_LR:
            raise ValueError(f"unknown optimizer {self.optimizer!r}: choose 'sgd' or 'adam'")
        for name in ("points", "hidden", "epochs"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        lr = DEFAULT_LR[self.optimizer] if self.lr is None else self.lr
        if not 0.0 < lr < float("inf"):
            raise ValueError(f"lr must be positive and finite, got {lr!r}")
        return replace(self, lr=lr)


@dataclass
class ToyResult:
    """A finished run of ``train_scalar.train`` or ``train_tensor.train``.

    The config (with its learning rate), the data, the trained model, the per-epoch
    ``losses`` and ``accuracies`` (of each epoch's forward pass, before its update), the
    trained model's ``final_loss`` and ``final_accuracy``, and the training time.
    """

    config: ToyConfig
    data: Graph
    model: Module
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)
    final_loss: float = float("nan")
    final_accuracy: float = 0.0
    seconds: float = 0.0

    @property
    def seconds_per_epoch(self) -> float:
        """Mean training time of one epoch."""
        return self.seconds / max(1, len(self.losses))


def make_data(config: ToyConfig) -> tuple[Graph, random.Random]:
    """Return the config's points and the random generator that goes on to the weights."""
    rng = random.Random(config.seed)
    return datasets[config.dataset](config.points, seed=rng.randrange(2**32)), rng


def fit(
    result: ToyResult,
    step: Callable[[], tuple[float, int]],
    final: Callable[[], tuple[float, float]],
    *,
    log_every: int = 0,
    log: Callable[[str], None] | None = None,
    progress: bool = False,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
) -> ToyResult:
    """Run ``result.config.epochs`` steps, filling in ``result``; return it.

    Args:
        result: the run so far (config, data, model).
        step: one epoch's update; returns the epoch's loss and number of correct points.
        final: returns the trained model's loss and accuracy.
        log_every: call ``log`` every this many epochs and on the last (0: never).
        log: where the per-epoch lines go (default ``print``, or the bar's ``write``).
        progress: show a progress bar (tqdm) over the epochs.
        on_epoch: called after each epoch with ``{"epoch", "loss", "accuracy", "model",
            "data"}`` (for live plots); an exception it raises stops training.

    Raises:
        DivergedError: if the loss becomes NaN or infinite.
    """
    cfg, n = result.config, result.data.N
    bar = progress_bar(cfg.epochs, f"{cfg.dataset} ({cfg.backend})", "epoch", progress)
    write = log or (bar.write if bar is not None else print)
    start = time.perf_counter()
    try:
        for epoch in range(1, cfg.epochs + 1):
            loss, correct = step()
            check_finite(loss, epoch)
            result.losses.append(loss)
            result.accuracies.append(correct / n)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.4f}", acc=f"{correct / n:.2f}", refresh=False)
            if log_every and (epoch % log_every == 0 or epoch == cfg.epochs):
                write(
                    f"epoch {epoch:>5}/{cfg.epochs}  loss {loss:.4f}  "
                    f"accuracy {correct}/{n} ({correct / n:.1%}) before its step"
                )
            if on_epoch is not None:
                info = {"epoch": epoch, "loss": loss, "accuracy": correct / n}
                on_epoch({**info, "model": result.model, "data": result.data})
    finally:
        if bar is not None:
            bar.close()
    result.seconds = time.perf_counter() - start
    result.final_loss, result.final_accuracy = final()
    return result


def build_parser(prog: str, description: str, defaults: ToyConfig) -> argparse.ArgumentParser:
    """Return the command line of a toy training script (``--backend`` unless ``scalar``)."""
    p = argparse.ArgumentParser(prog=prog, description=description, formatter_class=HelpFormatter)
    add = p.add_argument
    add("--dataset", type=str.lower, choices=list(datasets), default=defaults.dataset,
        help="toy dataset (any case: XOR is xor)")  # fmt: skip
    add("--points", "-n", type=positive_int, default=defaults.points,
        help="number of training points")  # fmt: skip
    add("--hidden", type=positive_int, default=defaults.hidden, help="width of each hidden layer")
    add("--lr", type=positive_float, help="learning rate (default: 0.5 for sgd, 0.05 for adam)")
    add("--epochs", type=int_between(1, MAX_EPOCHS), default=defaults.epochs,
        help="full-batch steps")  # fmt: skip
    add("--optimizer", choices=list(DEFAULT_LR), default=defaults.optimizer, help="optimizer")
    add("--seed", type=int, default=defaults.seed, help="seed for the data and initial weights")
    if defaults.backend != "scalar":
        add("--backend", default=defaults.backend,
            help="tensor backend by name: simple, or fast with mt-fast installed")  # fmt: skip
    add("--log-every", type=non_negative_int, metavar="K",
        help="print loss and accuracy every K epochs and on the last "
        "(default: about 10 lines per run; 0 prints only the summary)")  # fmt: skip
    add("--no-progress", action="store_true", help="hide the progress bar")
    return p


def main(
    argv: Sequence[str] | None,
    parser: argparse.ArgumentParser,
    train: Callable[..., ToyResult],
    defaults: ToyConfig,
) -> ToyResult:
    """Parse ``argv``, train with ``train``, print a summary; return the result.

    Raises:
        SystemExit: 2 for invalid arguments (including a backend that cannot run here), 1
            when the loss diverges.
    """
    args = parser.parse_args(argv)
    backend = getattr(args, "backend", defaults.backend)
    if backend != "scalar":
        backend = backend_from_args(parser, backend).name
    fields = ("dataset", "points", "hidden", "lr", "epochs", "optimizer", "seed")
    config = replace(defaults, backend=backend, **{k: getattr(args, k) for k in fields}).checked()
    print("training: " + " ".join(f"{k}={getattr(config, k)}" for k in (*fields, "backend")))
    log_every = args.log_every if args.log_every is not None else max(1, args.epochs // 10)
    try:
        result = train(config, log_every=log_every, progress=not args.no_progress)
    except DivergedError as exc:
        exit_with(parser.prog, exc)
    print(
        f"done: dataset={config.dataset} backend={config.backend} after the last step: "
        f"final accuracy {result.final_accuracy:.1%} final loss {result.final_loss:.4f}  "
        f"{result.seconds_per_epoch:.4f} s/epoch ({result.seconds:.1f} s total)"
    )
    return result
