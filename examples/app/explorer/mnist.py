"""MNIST for the explorer: sample images, a checkpoint's predictions, the first layer.

The images come from the standard IDX files (``t10k-images-idx3-ubyte.gz`` and
``t10k-labels-idx1-ubyte.gz``) in ``<data dir>/mnist/`` or ``<data dir>/``, where the data
dir is the page's input, else ``MINITORCH_DATA``.

The model side needs mt-nn and a trained checkpoint, and reuses the MNIST example rather
than defining a network here: ``examples/train_mnist.py`` must provide
``load_checkpoint(path) -> Module``, a model whose ``forward`` takes a ``(B, 1, 28, 28)``
tensor and returns ``(B, 10)`` class scores. The first layer is the model's first
sub-module with a 4-D parameter (a ``Conv2d``'s ``(out, in, kh, kw)`` weight).
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from minitorch.operators import Module

from .examples import EXAMPLES_DIR, load_example

__all__ = [
    "CHECKPOINT_ENV",
    "DATA_ENV",
    "FirstLayer",
    "MnistError",
    "find_checkpoint",
    "find_mnist_dir",
    "first_layer",
    "load_model",
    "model_problem",
    "predict",
    "read_idx",
    "sample_images",
]

#: Where the examples look for data (as ``--data-dir``).
DATA_ENV = "MINITORCH_DATA"
#: A checkpoint to show, if set.
CHECKPOINT_ENV = "MINITORCH_CHECKPOINT"
IMAGES = "t10k-images-idx3-ubyte.gz"
LABELS = "t10k-labels-idx1-ubyte.gz"
#: Where ``find_checkpoint`` looks for the newest checkpoint.
RUNS_DIR = EXAMPLES_DIR.parent / "runs"
_IDX_MAGIC = {2049: 1, 2051: 3}  # labels: 1 dimension; images: 3


class MnistError(Exception):
    """MNIST data, model or checkpoint that the page cannot use, with what to do."""


def find_mnist_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Return the folder holding the MNIST test files.

    Args:
        data_dir: a data folder (``<dir>/mnist/`` or ``<dir>/`` itself is searched);
            default ``$MINITORCH_DATA``.

    Raises:
        MnistError: if no folder is given or the files are not there.
    """
    root = data_dir or os.environ.get(DATA_ENV)
    if not root:
        raise MnistError(
            f"no data folder: set {DATA_ENV}=/path/to/data (with mnist/{IMAGES}) "
            "or type the folder above"
        )
    for folder in (Path(root) / "mnist", Path(root)):
        if (folder / IMAGES).is_file() and (folder / LABELS).is_file():
            return folder
    raise MnistError(
        f"MNIST test files not found in {root} or {root}/mnist: need {IMAGES}, {LABELS}"
    )


def read_idx(path: Path) -> np.ndarray:
    """Read a gzip'd IDX file of unsigned bytes (MNIST images or labels).

    Raises:
        MnistError: if the file is not a valid IDX file of the expected size.
    """
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError) as exc:
        raise MnistError(f"{path} is not a readable gzip file ({exc}); fetch it again") from None
    magic = int.from_bytes(raw[:4], "big") if len(raw) >= 4 else -1
    if magic not in _IDX_MAGIC:
        raise MnistError(f"{path} is not an MNIST IDX file (magic number {magic})")
    dims = _IDX_MAGIC[magic]
    header = 4 + 4 * dims
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims))
    expected = header + int(np.prod(shape))
    if len(raw) != expected:
        raise MnistError(
            f"{path} is corrupt: {len(raw)} bytes for shape {shape} (expected {expected})"
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape)


def sample_images(folder: Path, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Return ``count`` random test images (floats in [0, 1], ``(count, 28, 28)``) and labels.

    Raises:
        MnistError: for corrupt files or images and labels of different lengths.
    """
    images = read_idx(folder / IMAGES)
    labels = read_idx(folder / LABELS)
    if len(images) != len(labels):
        raise MnistError(f"{len(images)} images but {len(labels)} labels in {folder}")
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(images), size=min(count, len(images)), replace=False)
    return images[pick].astype(np.float64) / 255.0, labels[pick].astype(np.int64)


def model_problem() -> str | None:
    """Return why predictions cannot be shown (mt-nn or the MNIST example missing), or None."""
    if importlib.util.find_spec("minitorch.nn") is None:
        return "mt-nn is not installed (pip install -e packages/mt-nn)"
    import minitorch.nn as nn

    if not hasattr(nn, "conv2d"):
        return "this mt-nn has no conv2d yet"
    if not (EXAMPLES_DIR / "train_mnist.py").is_file():
        return "examples/train_mnist.py (the MNIST example that makes checkpoints) is missing"
    if not hasattr(load_example("train_mnist"), "load_checkpoint"):
        return "examples/train_mnist.py has no load_checkpoint(path)"
    return None


def find_checkpoint(explicit: str | None = None) -> Path | None:
    """Return the checkpoint to show, or None if there is none.

    That is ``explicit``, else ``$MINITORCH_CHECKPOINT``, else the newest file under
    ``runs/`` with ``mnist`` in its path.
    """
    chosen = explicit or os.environ.get(CHECKPOINT_ENV)
    if chosen:
        return Path(chosen)
    if not RUNS_DIR.is_dir():
        return None
    found = [p for p in RUNS_DIR.rglob("*") if p.is_file() and "mnist" in str(p).lower()]
    found = [p for p in found if p.suffix in (".npz", ".pkl", ".pt", ".json", ".ckpt")]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def load_model(path: Path) -> Module:
    """Load a checkpoint with the MNIST example's ``load_checkpoint``.

    Raises:
        MnistError: if the file is missing or does not match the model (the example's
            message is kept).
    """
    if not path.is_file():
        raise MnistError(f"checkpoint {path} does not exist")
    try:
        model = load_example("train_mnist").load_checkpoint(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise MnistError(f"cannot load checkpoint {path}: {exc}") from None
    if not isinstance(model, Module):
        raise MnistError(f"load_checkpoint({path}) returned {type(model).__name__}, not a Module")
    return model


def _to_tensor(images: np.ndarray, like: Any) -> Any:
    """Images ``(B, 28, 28)`` as a ``(B, 1, 28, 28)`` tensor on the backend of ``like``."""
    from minitorch.tensor import tensor

    return tensor(images[:, None, :, :].tolist(), backend=like.backend)


def predict(model: Module, images: np.ndarray) -> np.ndarray:
    """Return the model's predicted digit for each image."""
    from minitorch.tensor import no_grad

    model.eval()
    weight = model.parameters()[0].value
    with no_grad():
        scores = model.forward(_to_tensor(images, weight)).to_numpy()
    return scores.reshape(len(images), -1).argmax(axis=1)


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
        """Return this layer's output for one ``(28, 28)`` image, ``(out, h, w)``."""
        from minitorch.tensor import no_grad

        weight = self.module.parameters()[0].value
        with no_grad():
            out = self.module.forward(_to_tensor(image[None], weight)).to_numpy()
        return out[0]


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
                return FirstLayer(name, module, value.to_numpy())
    raise MnistError("the model has no convolution layer (no 4-D weight) to show")
