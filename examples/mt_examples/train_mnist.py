"""Train the course's convolutional network on MNIST (course module 4).

The network: conv 1->4 (3x3), ReLU, conv 4->8 (3x3), ReLU, average pool 4x4, linear
392->64, ReLU, dropout, linear 64->10, log-softmax; trained with Adam on the negative
log-likelihood. Each epoch shows a progress bar, then the loss and accuracy on a held-out
split and the time the epoch took; at the end the test accuracy, a PNG of the curves and a
checkpoint (``.npz``, written atomically after every epoch).

    python examples/train_mnist.py --download                 # fetch (11 MB) and train
    python examples/train_mnist.py --train-size 5000 --epochs 2

The data folder holds ``mnist/train-images-idx3-ubyte.gz`` etc. (``--data-dir``, else the
``MINITORCH_DATA`` environment variable, else ``./data``); ``--download`` fetches the files
that are missing, checked against their SHA-256 (``--mirror URL`` for another source).
With ``--val-size N`` the last N images of a seeded shuffle of the training set are held
out for the per-epoch figures; with the default ``--val-size 0`` the model trains on every
training image and the per-epoch figures are measured on the test set, which is never
trained on. ``--backend cuda`` runs on mt-cuda's
backend (a GPU, or the simulator, which is far too slow for this). ``main(argv)`` and
``train(...)`` can also be imported.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import no_grad
from minitorch.nn import (
    MNIST,
    CheckpointError,
    Conv2d,
    DatasetError,
    Linear,
    avgpool2d,
    dropout,
    load_checkpoint,
    logsoftmax,
    nll_loss,
    save_checkpoint,
)
from minitorch.operators import Module
from minitorch.tensor import Tensor, TensorBackend, from_numpy
from minitorch.tensor import backend as find_backend
from mt_examples.support import (
    backend_from_args,
    download_data,
    hint_missing,
    make_optimizer,
    nn_epoch,
    nn_parser,
    non_negative_int,
    positive_int,
    run_or_exit,
)

__all__ = ["DEFAULTS", "Network", "build_parser", "evaluate", "main", "train"]

DEFAULTS: dict[str, Any] = {
    "epochs": 4,
    "batch_size": 32,
    "lr": 2e-3,
    "optimizer": "adam",
    "dropout": 0.25,
    "val_size": 0,
    "train_size": None,
    "seed": 0,
    "backend": "fast",
    "out_dir": "runs/mnist",
}


class Network(Module):
    """The course's MNIST network (see the module docstring).

    Args:
        backend: where the parameters live.
        seed: seeds the initial weights and the dropout masks (a local generator).
        rate: the dropout rate.
    """

    def __init__(self, backend: TensorBackend, seed: int | None = 0, rate: float = 0.25) -> None:
        super().__init__()
        self.rng = np.random.default_rng(seed)
        self.rate = rate
        self.conv1 = Conv2d(1, 4, 3, backend, self.rng)
        self.conv2 = Conv2d(4, 8, 3, backend, self.rng)
        self.linear1 = Linear(392, 64, backend, self.rng)
        self.linear2 = Linear(64, 10, backend, self.rng)

    def forward(self, x: Tensor) -> Tensor:
        """Map ``(batch, 1, 28, 28)`` images to ``(batch, 10)`` log-probabilities."""
        # BEGIN SOLUTION task4_5
        batch = x.shape[0]
        h = self.conv1(x).relu()
        h = self.conv2(h).relu()
        h = avgpool2d(h, (4, 4)).view(batch, 392)
        h = self.linear1(h).relu()
        h = dropout(h, self.rate, ignore=not self.training, seed=self.rng)
        return logsoftmax(self.linear2(h), 1)
        # END SOLUTION


def _batch(images: npt.NDArray[np.uint8], backend: TensorBackend) -> Tensor:
    x = images.reshape(len(images), 1, 28, 28).astype(np.float64) * (1.0 / 255.0)
    return from_numpy(x, backend=backend)


def evaluate(
    model: Network,
    images: npt.NDArray[np.uint8],
    labels: npt.NDArray[np.uint8],
    backend: TensorBackend,
    batch_size: int = 500,
) -> tuple[float, float]:
    """Return the mean loss and the accuracy of ``model`` on a set (in eval mode)."""
    if len(labels) == 0:
        return float("nan"), float("nan")
    model.eval()
    total, correct = 0.0, 0
    with no_grad():
        for start in range(0, len(labels), batch_size):
            y = labels[start : start + batch_size]
            out = model(_batch(images[start : start + batch_size], backend))
            total += nll_loss(out, y).item() * len(y)
            correct += int(np.sum(np.argmax(out.to_numpy(), axis=1) == y))
    model.train()
    return total / len(labels), correct / len(labels)


def plot_curves(history: dict[str, list[float]], path: Path, held_out: str) -> Path | None:
    """Save the per-epoch loss and accuracy curves as a PNG (matplotlib, no display).

    Returns the path, or None (after a one-line hint) when matplotlib is not installed.
    """
    try:
        import matplotlib
    except ImportError:
        hint_missing("matplotlib", "no plot is written")
        return None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    epochs = range(1, len(history["train_loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, history["train_loss"], "o-", label="train (running mean)")
    ax_loss.plot(epochs, history["held_out_loss"], "o-", label=held_out)
    ax_loss.set(xlabel="epoch", ylabel="negative log-likelihood", title="loss")
    ax_loss.legend()
    ax_acc.plot(epochs, history["train_accuracy"], "o-", label="train (running)")
    ax_acc.plot(epochs, history["held_out_accuracy"], "o-", label=held_out)
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    ax_acc.legend()
    for ax in (ax_loss, ax_acc):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle("MiniTorch MNIST network")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def train(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    epochs: int = DEFAULTS["epochs"],
    batch_size: int = DEFAULTS["batch_size"],
    lr: float = DEFAULTS["lr"],
    optimizer: str = DEFAULTS["optimizer"],
    dropout: float = DEFAULTS["dropout"],
    val_size: int = DEFAULTS["val_size"],
    train_size: int | None = DEFAULTS["train_size"],
    seed: int | None = DEFAULTS["seed"],
    backend: str | TensorBackend = DEFAULTS["backend"],
    out_dir: str | os.PathLike[str] = DEFAULTS["out_dir"],
    checkpoint: str | os.PathLike[str] | None = None,
    resume: str | os.PathLike[str] | None = None,
    plot: bool = True,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train ``Network`` on MNIST; return the history, test figures, timings and model.

    Args:
        data_dir: the data folder (default ``$MINITORCH_DATA``, else ``./data``).
        epochs: passes over the training images.
        batch_size: images per step.
        lr: learning rate.
        optimizer: ``adam`` or ``sgd`` (with momentum 0.9).
        dropout: dropout rate.
        val_size: training images held out for the per-epoch figures (0: use the test set).
        train_size: train on at most this many images (None: all that are not held out).
        seed: seeds the shuffle, the initial weights and dropout.
        backend: a backend name (``fast``, ``cuda``, ``simple``) or a backend.
        out_dir: where the plot and (by default) the checkpoint go.
        checkpoint: the checkpoint path (default ``out_dir/mnist.npz``).
        resume: a checkpoint to start from.
        plot: write ``out_dir/mnist_curves.png``.
        progress: show a progress bar per epoch.
        log: where the per-epoch lines go.

    Raises:
        DatasetError: if the MNIST files are missing or corrupt.
        CheckpointError: if ``resume`` does not fit the network.
        ValueError: for a ``val_size`` too large, or an ``out_dir`` that is a file.
        DivergedError: if the loss becomes NaN or infinite.
    """
    out = Path(out_dir)
    ckpt = Path(checkpoint) if checkpoint is not None else out / "mnist.npz"
    for folder in {out, ckpt.parent}:  # before a whole epoch is spent, not after
        taken = next((p for p in (folder, *folder.parents) if p.exists()), folder)
        if not taken.is_dir():
            raise ValueError(f"cannot write into {folder}: {taken} is a file, not a folder")
    be = find_backend(backend) if isinstance(backend, str) else backend
    train_set = MNIST.load(data_dir, "train")
    test_set = MNIST.load(data_dir, "test")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(train_set))
    if not 0 <= val_size < len(order):
        raise ValueError(f"val_size must be in [0, {len(order)}), got {val_size}")
    held = order[len(order) - val_size :] if val_size else np.array([], dtype=np.int64)
    fit = order[: len(order) - val_size]
    if train_size is not None:
        fit = fit[:train_size]
    x_fit, y_fit = train_set.images[fit], train_set.labels[fit]
    if val_size:
        x_held, y_held, held_name = train_set.images[held], train_set.labels[held], "held-out"
    else:
        x_held, y_held, held_name = test_set.images, test_set.labels, "test"

    model = Network(be, seed=None if seed is None else seed + 1, rate=dropout)
    if resume is not None:
        load_checkpoint(model, resume)
        log(f"resumed from {resume}")
    opt = make_optimizer(optimizer, model.parameters(), lr, momentum=0.9)
    history: dict[str, list[float]] = {
        k: [] for k in ("train_loss", "train_accuracy", "held_out_loss", "held_out_accuracy")
    }
    epoch_seconds: list[float] = []
    steps = (len(y_fit) + batch_size - 1) // batch_size
    for epoch in range(1, epochs + 1):
        loss, acc, seconds = nn_epoch(
            model, opt, lambda i: (_batch(x_fit[i], be), y_fit[i]), len(y_fit), batch_size, rng,
            f"{epoch}/{epochs}", progress,
        )  # fmt: skip
        held_loss, held_acc = evaluate(model, x_held, y_held, be)
        epoch_seconds.append(seconds)
        history["train_loss"].append(loss)
        history["train_accuracy"].append(acc)
        history["held_out_loss"].append(held_loss)
        history["held_out_accuracy"].append(held_acc)
        save_checkpoint(model, ckpt, epoch=epoch, held_out=held_name, held_out_accuracy=held_acc)
        log(
            f"epoch {epoch}/{epochs}  train loss {loss:.4f} acc {acc:.4f}  "
            f"{held_name} loss {held_loss:.4f} acc {held_acc:.4f}  {seconds:.1f} s "
            f"({seconds / steps * 1000:.1f} ms/step)"
        )
    test_loss, test_acc = evaluate(model, test_set.images, test_set.labels, be)
    plot_path = (
        plot_curves(history, out / "mnist_curves.png", held_name) if plot and epochs else None
    )
    return {
        "history": history,
        "held_out": held_name,
        "train_images": len(y_fit),
        "test_loss": test_loss,
        "test_accuracy": test_acc,
        "test_images": len(test_set),
        "epoch_seconds": epoch_seconds,
        "seconds_per_epoch": float(np.mean(epoch_seconds)) if epoch_seconds else 0.0,
        "checkpoint": ckpt if epochs else None,
        "plot": plot_path,
        "backend": be.name,
        "model": model,
    }


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of this script."""
    description = "Train the course's conv network on MNIST with MiniTorch."
    p = nn_parser("train_mnist", description, DEFAULTS)
    add = p.add_argument
    add("--optimizer", choices=["adam", "sgd"], default=DEFAULTS["optimizer"],
        help="adam, or sgd with momentum 0.9")  # fmt: skip
    add("--val-size", type=non_negative_int, default=DEFAULTS["val_size"],
        help="training images held out for per-epoch figures (0: use the test set)")  # fmt: skip
    add("--train-size", type=positive_int, help="train on at most this many images (default: all)")
    add("--out-dir", default=DEFAULTS["out_dir"], help="where the plot and checkpoint go")
    add("--checkpoint", help="checkpoint path (default: OUT_DIR/mnist.npz)")
    add("--resume", help="start from this checkpoint")
    add("--no-plot", action="store_true", help="do not write the PNG")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Parse ``argv``, train, print a summary; return the result of ``train``.

    Raises:
        SystemExit: 2 for bad arguments, missing or corrupt data, a checkpoint that does not
            fit, or a backend that cannot run here; 1 when the loss diverges.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    be = backend_from_args(parser, args.backend, args.threads)
    download_data(parser, args, MNIST)
    options = {k: getattr(args, k) for k in DEFAULTS if k != "backend"}
    print("MNIST: " + " ".join(f"{k}={v}" for k, v in options.items()) + f" backend={be.name}")
    result = run_or_exit(
        parser,
        lambda: train(args.data_dir, backend=be, checkpoint=args.checkpoint, resume=args.resume,
                      plot=not args.no_plot, progress=not args.no_progress, **options),
        (DatasetError, CheckpointError, FileNotFoundError, ValueError),
    )  # fmt: skip
    print(
        f"done: {result['train_images']} training images, test accuracy "
        f"{result['test_accuracy']:.2%} (loss {result['test_loss']:.4f}) on "
        f"{result['test_images']} test images; {result['seconds_per_epoch']:.1f} s/epoch"
    )
    print(
        f"checkpoint: {result['checkpoint']}" + (f"  plot: {result['plot']}" * bool(result["plot"]))
    )
    return result
