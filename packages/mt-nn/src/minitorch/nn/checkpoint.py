"""Saving and loading a model's parameters as a ``.npz`` file.

``save_checkpoint`` writes to a temporary file in the same folder, flushes it to disk and
renames it over the target in one step (``os.replace``), so an interrupted save leaves
either the old checkpoint or the new one, never a broken file. ``load_checkpoint`` checks
that the file holds exactly the model's parameters, with their shapes, before it changes
anything.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from minitorch.operators import Module
from minitorch.tensor import Tensor, from_numpy

__all__ = ["CheckpointError", "load_checkpoint", "save_checkpoint"]

_META = "__metadata__"


class CheckpointError(ValueError):
    """A checkpoint that cannot be read, or that does not fit the model."""


def _tensors(model: Module) -> dict[str, Tensor]:
    out = {}
    for name, p in model.named_parameters():
        if not isinstance(p.value, Tensor):
            raise TypeError(f"parameter {name} holds a {type(p.value).__name__}, not a Tensor")
        out[name] = p.value
    return out


def save_checkpoint(model: Module, path: str | os.PathLike[str], **metadata: Any) -> Path:
    """Write every parameter of ``model`` (by dotted name) and ``metadata`` to ``path``.

    Args:
        model: the model.
        path: the ``.npz`` file to write (replaced atomically if it exists).
        **metadata: JSON-serialisable values stored alongside (epoch, accuracy, ...).

    Returns:
        The path written.
    """
    target = Path(path)
    if target.suffix != ".npz":
        raise ValueError(f"checkpoint path must end in .npz, got {target}")
    arrays = {name: np.ascontiguousarray(t.to_numpy()) for name, t in _tensors(model).items()}
    if _META in arrays:
        raise ValueError(f"a parameter may not be named {_META}")
    arrays[_META] = np.array(json.dumps(metadata))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load_checkpoint(model: Module, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load parameters saved by ``save_checkpoint`` into ``model``; return the metadata.

    Each parameter gets a new tensor on the backend of its current value.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        CheckpointError: if the file is not a checkpoint, or its parameter names or shapes
            differ from the model's (the message lists the differences); the model is then
            left unchanged.
    """
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"checkpoint {source} does not exist")
    try:
        with np.load(source, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise CheckpointError(f"{source} is not a readable .npz checkpoint ({e})") from e
    meta_raw = arrays.pop(_META, None)
    tensors = _tensors(model)
    problems = []
    missing = sorted(set(tensors) - set(arrays))
    extra = sorted(set(arrays) - set(tensors))
    if missing:
        problems.append(f"missing parameters {missing}")
    if extra:
        problems.append(f"unexpected parameters {extra}")
    for name in sorted(set(tensors) & set(arrays)):
        if tuple(arrays[name].shape) != tensors[name].shape:
            problems.append(
                f"{name} has shape {tuple(arrays[name].shape)} in the file but "
                f"{tensors[name].shape} in the model"
            )
    if problems:
        raise CheckpointError(
            f"checkpoint {source} does not match {type(model).__name__}: " + "; ".join(problems)
        )
    for name, p in model.named_parameters():
        p.update(from_numpy(arrays[name].astype(np.float64), backend=p.value.backend))
    return json.loads(str(meta_raw)) if meta_raw is not None else {}
