"""Train the course's convolutional network on MNIST (course module 4).

The network: conv 1->4 (3x3), ReLU, conv 4->8 (3x3), ReLU, average pool 4x4, linear
392->64, ReLU, dropout, linear 64->10, log-softmax; trained with Adam on the negative
log-likelihood. Each epoch shows a progress bar, then the loss and accuracy on the held-out
images (``--val-size N`` of a seeded shuffle of the training set; by default the test set,
never trained on); at the end the test accuracy, a PNG of the curves and a checkpoint
(``.npz``, written atomically after every epoch).

    python train_mnist.py --download                 # fetch (11 MB) and train
    python train_mnist.py --train-size 5000 --epochs 2

(from the folder that holds ``mt_examples/``).

``main(argv)`` and ``train(MnistConfig(...))`` can also be imported.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    NNConfig,
    hint_missing,
    make_optimizer,
    nn_fit,
    nn_parser,
    nn_run,
    non_negative_int,
    positive_int,
)


@dataclass(frozen=True)
class MnistConfig(NNConfig):
    """What ``train`` trains: ``NNConfig`` with this script's defaults and options.

    Attributes:
        optimizer: ``adam`` or ``sgd`` (with momentum 0.9).
        val_size: training images held out for the per-epoch figures (0: use the test set).
        out_dir: where the plot and (by default) the checkpoint go.
    """

    epochs: int = 4
    lr: float = 2e-3
    optimizer: str = "adam"
    val_size: int = 0
    out_dir: str = "runs/mnist"


DEFAULTS = MnistConfig()


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


def to_tensor(images: npt.NDArray[np.uint8], backend: TensorBackend) -> Tensor:
    """Return ``B`` images of 28 x 28 values in 0-255 as a ``(B, 1, 28, 28)`` tensor in [0, 1]."""
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
            out = model(to_tensor(images[start : start + batch_size], backend))
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
    config: MnistConfig = DEFAULTS,
    *,
    checkpoint: str | os.PathLike[str] | None = None,
    resume: str | os.PathLike[str] | None = None,
    plot: bool = True,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train ``Network`` on MNIST; return the history, test figures, timings and model.

    Args:
        config: what to train.
        checkpoint: the checkpoint path (default ``config.out_dir/mnist.npz``).
        resume: a checkpoint to start from.
        plot: write ``config.out_dir/mnist_curves.png``.
        progress: show a progress bar per epoch.
        log: where the per-epoch lines go.

    Raises:
        DatasetError: if the MNIST files are missing or corrupt.
        CheckpointError: if ``resume`` does not fit the network.
        FileNotFoundError: if ``resume`` does not exist.
        ValueError: for a ``val_size`` too large, an ``out_dir`` that is a file, or a
            ``checkpoint`` path not ending in ``.npz`` (all checked before training).
        DivergedError: if the loss becomes NaN or infinite.
    """
    c = config
    out = Path(c.out_dir)
    ckpt = Path(checkpoint) if checkpoint is not None else out / "mnist.npz"
    for folder in {out, ckpt.parent}:  # before a whole epoch is spent, not after
        taken = next((p for p in (folder, *folder.parents) if p.exists()), folder)
        if not taken.is_dir():
            raise ValueError(f"cannot write into {folder}: {taken} is a file, not a folder")
    if ckpt.suffix != ".npz":  # save_checkpoint's rule, checked before a whole epoch is spent
        raise ValueError(f"checkpoint path must end in .npz, got {ckpt}")
    if resume is not None and not Path(resume).is_file():
        raise FileNotFoundError(f"the checkpoint to resume from, {resume}, does not exist")
    be = find_backend(c.backend) if isinstance(c.backend, str) else c.backend
    train_set = MNIST.load(c.data_dir, "train")
    test_set = MNIST.load(c.data_dir, "test")
    rng = np.random.default_rng(c.seed)
    order = rng.permutation(len(train_set))
    if not 0 <= c.val_size < len(order):
        raise ValueError(f"val_size must be in [0, {len(order)}), got {c.val_size}")
    held = order[len(order) - c.val_size :] if c.val_size else np.array([], dtype=np.int64)
    fit = order[: len(order) - c.val_size]
    if c.train_size is not None:
        fit = fit[: c.train_size]
    x_fit, y_fit = train_set.images[fit], train_set.labels[fit]
    if c.val_size:
        x_held, y_held, held_name = train_set.images[held], train_set.labels[held], "held-out"
    else:
        x_held, y_held, held_name = test_set.images, test_set.labels, "test"

    model = Network(be, seed=None if c.seed is None else c.seed + 1, rate=c.dropout)
    if resume is not None:
        load_checkpoint(model, resume)
        log(f"resumed from {resume}")
    opt = make_optimizer(c.optimizer, model.parameters(), c.lr, momentum=0.9)

    def measure(epoch: int) -> tuple[dict[str, float], str]:
        loss, acc = evaluate(model, x_held, y_held, be)
        save_checkpoint(model, ckpt, epoch=epoch, held_out=held_name, held_out_accuracy=acc)
        words = f"{held_name} loss {loss:.4f} acc {acc:.4f}"
        return {"held_out_loss": loss, "held_out_accuracy": acc}, words

    fitted = nn_fit(
        model, opt, lambda i: (to_tensor(x_fit[i], be), y_fit[i]), len(y_fit), measure,
        epochs=c.epochs, batch_size=c.batch_size, rng=rng, progress=progress, log=log,
    )  # fmt: skip
    test_loss, test_acc = evaluate(model, test_set.images, test_set.labels, be)
    curves = out / "mnist_curves.png"
    return {
        **fitted,
        "backend": be.name,
        "held_out": held_name,
        "train_images": len(y_fit),
        "test_loss": test_loss,
        "test_accuracy": test_acc,
        "test_images": len(test_set),
        "checkpoint": ckpt if c.epochs else None,
        "plot": plot_curves(fitted["history"], curves, held_name) if plot and c.epochs else None,
    }


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of this script."""
    description = "Train the course's conv network on MNIST with MiniTorch."
    p = nn_parser("train_mnist", description, DEFAULTS)
    add = p.add_argument
    add("--optimizer", choices=["adam", "sgd"], default=DEFAULTS.optimizer,
        help="adam, or sgd with momentum 0.9")  # fmt: skip
    add("--val-size", type=non_negative_int, default=DEFAULTS.val_size,
        help="training images held out for per-epoch figures (0: use the test set)")  # fmt: skip
    add("--train-size", type=positive_int, help="train on at most this many images (default: all)")
    add("--out-dir", default=DEFAULTS.out_dir, help="where the plot and checkpoint go")
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
    errors = (DatasetError, CheckpointError, FileNotFoundError, ValueError)
    result = nn_run(
        parser, args, "MNIST", train, DEFAULTS, [MNIST], errors,
        checkpoint=args.checkpoint, resume=args.resume, plot=not args.no_plot,
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
