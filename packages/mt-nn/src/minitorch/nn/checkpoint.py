"""Saving and loading a model's parameters as a ``.npz`` file.

``save_checkpoint`` writes to a temporary file in the same folder, flushes it to disk and
renames it over the target in one step (``os.replace``), so an interrupted save leaves
either the old checkpoint or the new one, never a broken file. A new file gets the mode a
plain ``open`` would give it (0666 less the umask: 0644 under the usual umask 022, as
``np.savez`` and ``torch.save``), not ``tempfile.mkstemp``'s private 0600; a file saved
over keeps its own mode (a checkpoint made private with ``chmod 600`` stays private, as
``np.savez`` and ``torch.save``, which write into the existing file, keep it).

A save that is killed (SIGKILL, power loss) cannot remove its temporary file. Those files
are named ``.<checkpoint name>.<pid>.<random>.tmp``, and each save of a checkpoint removes
the stale ones of that checkpoint: a temporary file is stale when the process that wrote
it (the pid in its name) is no longer running and the file has not been written to for a
minute (the minute protects a writer on another machine sharing the folder, whose pid
means nothing here), or when it has not been written to for a day, whatever its pid.

``load_checkpoint`` reads and checks everything (the file, the metadata, every parameter's
name, shape and dtype) before it changes anything, so a bad file leaves the model as it was.
"""

from __future__ import annotations

import glob
import json
import os
import secrets
import stat
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from minitorch.operators import Module
from minitorch.tensor import Tensor, from_numpy

__all__ = ["CheckpointError", "load_checkpoint", "save_checkpoint"]

_META = "__metadata__"
_STALE_DEAD = 60.0
"""Seconds without a write after which a dead writer's temporary file is removed."""
_STALE_ANY = 24 * 3600.0
"""Seconds without a write after which any temporary file of the checkpoint is removed."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be read, or that does not fit the model."""


def _tensors(model: Module) -> dict[str, Tensor]:
    out = {}
    for name, p in model.named_parameters():
        if not isinstance(p.value, Tensor):
            raise TypeError(f"parameter {name} holds a {type(p.value).__name__}, not a Tensor")
        out[name] = p.value
    return out


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (True when that cannot be told)."""
    if os.name != "posix":
        return True  # os.kill(pid, 0) would terminate the process on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # exists but belongs to another user, or not a pid at all
    return True


def _remove_stale_temporaries(target: Path) -> None:
    """Remove the temporary files of earlier saves of ``target`` that were killed."""
    prefix = f".{target.name}."
    now = time.time()
    for path in target.parent.glob(f"{glob.escape(prefix)}*.tmp"):
        pid_text = path.name[len(prefix) :].split(".", 1)[0]
        try:
            idle = now - path.stat().st_mtime
        except OSError:
            continue  # already gone (its writer renamed it)
        dead = pid_text.isdigit() and not _running(int(pid_text))
        if (dead and idle > _STALE_DEAD) or idle > _STALE_ANY:
            path.unlink(missing_ok=True)


class _UnstorableError(TypeError):
    """A value ``json`` cannot store (the message is its type)."""


def _refuse(value: object) -> None:
    kind = type(value)
    package = kind.__module__.split(".")[0]
    raise _UnstorableError(
        kind.__qualname__ if package == "builtins" else f"{package}.{kind.__qualname__}"
    )


def _metadata_json(metadata: dict[str, Any]) -> str:
    """``metadata`` as JSON; a value JSON cannot store is named by its key and type."""
    for key, value in metadata.items():
        try:
            json.dumps(value, default=_refuse)
        except _UnstorableError as e:
            problem = f"a {e} cannot be stored as JSON"
        except (TypeError, ValueError) as e:
            problem = f"JSON cannot store it ({e})"
        else:
            continue
        raise TypeError(
            f"checkpoint metadata {key}={_short_repr(value)}: {problem}; store numbers, "
            "strings, bools, None, and lists or dicts of them (float(x), x.tolist())"
        )
    return json.dumps(metadata)


def _short_repr(value: object, limit: int = 60) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def save_checkpoint(model: Module, path: str | os.PathLike[str], **metadata: Any) -> Path:
    """Write every parameter of ``model`` (by dotted name) and ``metadata`` to ``path``.

    Args:
        model: the model.
        path: the ``.npz`` file to write (replaced atomically if it exists).
        **metadata: JSON-serialisable values stored alongside (epoch, accuracy, ...).

    Returns:
        The path written.

    Raises:
        ValueError: if ``path`` does not end in ``.npz``.
        IsADirectoryError: if ``path`` is a directory.
        NotADirectoryError: if a folder on ``path`` is a file.
        TypeError: naming the key, if a metadata value cannot be stored as JSON.
    """
    target = Path(path)
    if target.suffix != ".npz":
        raise ValueError(f"checkpoint path must end in .npz, got {target}")
    if target.is_dir():
        raise IsADirectoryError(f"cannot save checkpoint {target}: it is a directory")
    for folder in target.parents:  # the nearest existing one must be a folder
        if folder.exists():
            if not folder.is_dir():
                raise NotADirectoryError(
                    f"cannot save checkpoint {target}: {folder} is a file, not a directory"
                )
            break
    arrays = {name: np.ascontiguousarray(t.to_numpy()) for name, t in _tensors(model).items()}
    if _META in arrays:
        raise ValueError(f"a parameter may not be named {_META}")
    arrays[_META] = np.array(_metadata_json(metadata))
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(target)
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp = _create_temporary(target)
    try:
        if mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode)  # before any byte is written: never readable more widely
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _create_temporary(target: Path) -> tuple[int, str]:
    """Create ``.<name>.<pid>.<random>.tmp`` beside ``target``; return its fd and path.

    Created as ``open`` creates a file (mode 0666, less the process's umask), unlike
    ``tempfile.mkstemp`` (0600 whatever the umask); ``O_EXCL`` makes the name this
    save's own, as mkstemp does.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), str(tmp)
        except FileExistsError:
            continue  # the same random name twice: draw another


# What reading a damaged .npz can raise: zipfile's and numpy's own errors, and the ones
# they let through for damaged headers (an unsupported zip version or compression method,
# a bad deflate stream, a header numpy cannot parse, a shape too large to allocate).
_READ_ERRORS = (
    OSError,
    EOFError,
    ValueError,
    KeyError,
    TypeError,
    SyntaxError,
    NotImplementedError,
    MemoryError,
    OverflowError,
    zipfile.BadZipFile,
    zlib.error,
)


def _read(source: Path) -> dict[str, npt.NDArray[Any]]:
    """Every array in the ``.npz`` file ``source``, read and CRC-checked."""
    if not zipfile.is_zipfile(source):
        raise CheckpointError(
            f"{source} is not a readable .npz checkpoint (not a zip archive: a .npy file "
            "or another format renamed?)"
        )
    try:
        with np.load(source, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except _READ_ERRORS as e:
        raise CheckpointError(
            f"{source} is not a readable .npz checkpoint ({type(e).__name__}: {e}); it is "
            "damaged: save it again or use another copy"
        ) from e


def _metadata(source: Path, raw: npt.NDArray[Any] | None) -> dict[str, Any]:
    if raw is None:
        raise CheckpointError(
            f"checkpoint {source} has no {_META} entry: it was not written by "
            "save_checkpoint, or it is damaged"
        )
    problem = None
    if raw.shape != () or raw.dtype.kind != "U":
        problem = f"a {raw.dtype} array of shape {raw.shape}, not a string"
    else:
        try:
            meta = json.loads(str(raw))
        except ValueError as e:
            problem = f"not JSON ({e})"
        else:
            if isinstance(meta, dict):
                return meta
            problem = f"JSON {type(meta).__name__}, not an object"
    raise CheckpointError(f"checkpoint {source}: its metadata is {problem}")


def _dtype_problem(name: str, array: npt.NDArray[Any]) -> str | None:
    kind = array.dtype.kind
    if kind in "iuf":
        return None
    what = {"c": "complex", "b": "bool", "U": "str", "S": "bytes"}.get(kind, str(array.dtype))
    return f"{name} holds {what} values ({array.dtype}), not real numbers"


def load_checkpoint(model: Module, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load parameters saved by ``save_checkpoint`` into ``model``; return the metadata.

    Each parameter gets a new tensor on the backend of its current value. Integer arrays
    are converted to float64; any other dtype (complex, bool, strings) is refused.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        IsADirectoryError: if ``path`` is a directory.
        CheckpointError: if the file is not a readable checkpoint (not a zip archive,
            damaged, metadata that is not a JSON object), or its parameter names, shapes
            or dtypes differ from the model's (the message lists the differences); the
            model is then left unchanged.
    """
    source = Path(path)
    if source.is_dir():
        raise IsADirectoryError(f"checkpoint {source} is a directory, not a .npz file")
    if not source.is_file():
        raise FileNotFoundError(f"checkpoint {source} does not exist")
    arrays = _read(source)
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
        dtype_problem = _dtype_problem(name, arrays[name])
        if dtype_problem:
            problems.append(dtype_problem)
    if problems:
        raise CheckpointError(
            f"checkpoint {source} does not match {type(model).__name__}: " + "; ".join(problems)
        )
    metadata = _metadata(source, meta_raw)
    # Every check passed: build every new tensor, then assign them all.
    new = {
        name: from_numpy(arrays[name].astype(np.float64), backend=t.backend)
        for name, t in tensors.items()
    }
    for name, p in model.named_parameters():
        p.update(new[name])
    return metadata
