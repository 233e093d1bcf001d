"""MNIST for the explorer: sample images, a checkpoint's predictions, the first layer.

Everything is reused, nothing is redefined here: the images come from mt-nn's reader
(``minitorch.nn.MNIST.load``), the network is ``Network`` of ``examples/train_mnist.py``,
and its weights come from a checkpoint that script wrote, through
``minitorch.nn.load_checkpoint`` (which checks that the file fits the network).

The page needs mt-nn and the MNIST files (a data folder, or ``MINITORCH_DATA``); the
predictions and filters need a checkpoint too (``MINITORCH_CHECKPOINT``, else the newest
``runs/**/*.npz`` whose path mentions ``mnist``; ``train_mnist.py`` writes
``runs/mnist/mnist.npz``). Whatever is missing is reported as a ``MnistError`` that says
what to do.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from minitorch.operators import Module

__all__ = [
    "CHECKPOINT_ENV",
    "FirstLayer",
    "LoadedModel",
    "MnistError",
    "find_checkpoint",
    "first_layer",
    "load_model",
    "nn_problem",
    "predict",
    "sample_images",
]

#: A checkpoint to show, if set.
CHECKPOINT_ENV = "MINITORCH_CHECKPOINT"
#: Where ``find_checkpoint`` looks for the newest checkpoint.
RUNS_DIR = Path(__file__).resolve().parents[3] / "runs"


class MnistError(Exception):
    """MNIST data, a model or a checkpoint that the page cannot use, with what to do."""


def nn_problem() -> str | None:
    """Return why the page cannot work (mt-nn missing), or None."""
    if importlib.util.find_spec("minitorch.nn") is None:
        return "mt-nn is not installed (pip install -e packages/mt-nn)"
    return None


def sample_images(
    data_dir: str | None, count: int, seed: int
) -> tuple[np.ndarray, np.ndarray, Path]:
    """Return ``count`` random test images (uint8, ``(count, 28, 28)``), labels and folder.

    Args:
        data_dir: the data folder (``<dir>/mnist/...``); None for ``$MINITORCH_DATA``.
        count: how many images.
        seed: which ones (a seeded choice without repeats).

    Raises:
        MnistError: with mt-nn's message, if the files are missing or corrupt.
    """
    from minitorch.nn import MNIST, DatasetError
    from minitorch.nn.data import data_dir as resolve

    try:
        folder = resolve(data_dir)
        test = MNIST.load(folder, "test")
    except (DatasetError, ValueError, OSError) as exc:
        raise MnistError(str(exc)) from None
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(test), size=min(count, len(test)), replace=False)
    return test.images[pick], test.labels[pick].astype(np.int64), folder


def find_checkpoint(explicit: str | None = None) -> Path | None:
    """Return the checkpoint to show, or None if there is none.

    That is ``explicit``, else ``$MINITORCH_CHECKPOINT``, else the newest ``.npz`` file
    under ``runs/`` with ``mnist`` in its path.
    """
    chosen = explicit or os.environ.get(CHECKPOINT_ENV)
    if chosen:
        return Path(chosen)
    if not RUNS_DIR.is_dir():
        return None
    found = [p for p in RUNS_DIR.rglob("*.npz") if "mnist" in str(p.relative_to(RUNS_DIR))]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


@dataclass(frozen=True)
class LoadedModel:
    """A network with a checkpoint's weights.

    Attributes:
        model: ``train_mnist.Network`` in eval mode.
        path: the checkpoint.
        metadata: what ``train_mnist.py`` saved with it (epoch, held-out accuracy, ...).
    """

    model: Module
    path: Path
    metadata: dict[str, Any]


def load_model(path: Path) -> LoadedModel:
    """Build ``train_mnist.Network`` on the fast backend and load ``path`` into it.

    Raises:
        MnistError: if the file is missing, unreadable, or does not fit the network
            (mt-nn's message lists the differences).
    """
    from minitorch.nn import CheckpointError, load_checkpoint
    from minitorch.tensor import backend
    from mt_examples.train_mnist import Network

    model = Network(backend("fast"), seed=0)
    try:
        metadata = load_checkpoint(model, path)
    except (CheckpointError, FileNotFoundError) as exc:
        raise MnistError(str(exc)) from None
    model.eval()
    return LoadedModel(model, path, metadata)


def _batch(images: np.ndarray, like: Any) -> Any:
    """Images ``(B, 28, 28)`` in 0-255 as a ``(B, 1, 28, 28)`` tensor in [0, 1]."""
    from minitorch.tensor import from_numpy

    x = images.reshape(len(images), 1, 28, 28).astype(np.float64) / 255.0
    return from_numpy(x, backend=like.backend)


def predict(model: Module, images: np.ndarray) -> np.ndarray:
    """Return the model's predicted digit for each image."""
    from minitorch.tensor import no_grad

    like = model.parameters()[0].value
    with no_grad():
        scores = model(_batch(images, like)).to_numpy()
    return np.asarray(scores.argmax(axis=1))


@dataclass(frozen=True)
class FirstLayer:
    """The first convolution of a model.

    Attributes:
        name: its name in the model (``conv1``).
        module: the layer.
        filters: its weight as ``(out, in, kh, kw)``.
    """

    name: str
    module: Module
    filters: np.ndarray

    def feature_maps(self, image: np.ndarray) -> np.ndarray:
        """Return this layer's output (before any activation) for one image: ``(out, h, w)``."""
        from minitorch.tensor import no_grad

        like = self.module.parameters()[0].value
        with no_grad():
            out = self.module(_batch(image[None], like)).to_numpy()
        return np.asarray(out[0])


def first_layer(model: Module) -> FirstLayer:
    """Return the model's first layer with a 4-D parameter (its first convolution).

    Only modules without children count, so a container is never taken for a layer.

    Raises:
        MnistError: if the model has none.
    """
    for name, module in model.named_modules():
        if module is model or module.children():
            continue
        for _, param in module.named_parameters():
            value = param.value
            if getattr(value, "dims", 0) == 4:
                return FirstLayer(name, module, np.asarray(value.to_numpy()))
    raise MnistError("the model has no convolution layer (no 4-D weight) to show")
