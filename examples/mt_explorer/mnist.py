"""MNIST for the explorer: sample images, a checkpoint's predictions, the first layer's maps.

The images come from mt-nn's reader, the network is ``train_mnist.Network`` and its weights
a checkpoint that script wrote (``MINITORCH_CHECKPOINT``, else the newest ``runs/**/*.npz``
whose path mentions ``mnist``). Whatever is missing is a ``MnistError`` that says what to do.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from minitorch.operators import Module

#: A checkpoint to show, if set.
CHECKPOINT_ENV = "MINITORCH_CHECKPOINT"
#: Where ``find_checkpoint`` looks for the newest checkpoint.
RUNS_DIR = Path(__file__).resolve().parents[2] / "runs"


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


def predict(model: Module, images: np.ndarray) -> np.ndarray:
    """Return the model's predicted digit for each image."""
    from minitorch.tensor import no_grad
    from mt_examples.train_mnist import to_tensor

    with no_grad():
        scores = model(to_tensor(images, model.conv1.weight.value.backend)).to_numpy()
    return np.asarray(scores.argmax(axis=1))


def feature_maps(model: Module, image: np.ndarray) -> np.ndarray:
    """Return the first convolution's output (``conv1``, before its ReLU) for one image."""
    from minitorch.tensor import no_grad
    from mt_examples.train_mnist import to_tensor

    conv = model.conv1
    with no_grad():
        return np.asarray(conv(to_tensor(image[None], conv.weight.value.backend)).to_numpy()[0])
