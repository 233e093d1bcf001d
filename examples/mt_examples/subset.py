"""The fixed subset of the real data that task 4.5's networks are graded on.

A subset is the first ``n`` items of each real file, written in the same format, so the
readers of ``minitorch.nn`` (and the training scripts' ``--data-dir``) load it like the full
data: ``GRADED`` says how many of each. ``python -m mt_examples.graded task4_5`` makes it
from the data that the MNIST and sentiment training scripts fetch with their download
option, and trains on it as grading does. Only the standard library is used, and the
output is the same bytes on every run (gzip without a timestamp).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["GRADED", "SUBSETS", "DataError", "make_subset", "source_dir"]

#: How many items of each file task 4.5 is graded on: the first ones of each.
GRADED: dict[str, int] = {
    "mnist-train": 2000,
    "mnist-test": 1000,
    "sst2-train": 4000,
    "sst2-dev": 872,
}

#: What each count of ``GRADED`` takes: (folder, file stem).
SUBSETS: dict[str, tuple[str, str]] = {
    "mnist-train": ("mnist", "train-{}-ubyte"),
    "mnist-test": ("mnist", "t10k-{}-ubyte"),
    "sst2-train": ("sst2", "train.tsv"),
    "sst2-dev": ("sst2", "dev.tsv"),
}


class DataError(ValueError):
    """The real data to make a subset from is missing or not what it should be."""


def source_dir(explicit: Path | None = None) -> Path | None:
    """The folder of real data: ``explicit``, else ``$MINITORCH_DATA``, else None."""
    if explicit is not None:
        return explicit
    env = os.environ.get("MINITORCH_DATA")
    return Path(env) if env else None


def _find(source: Path, names: list[str]) -> Path:
    for name in names:
        if (source / name).is_file():
            return source / name
    raise DataError(
        f"{source}: none of {', '.join(names)} found; fetch the data with the training "
        "scripts' --download, or point --data-dir (or MINITORCH_DATA) at the folder it "
        "fills (mnist/, sst2/, glove/)"
    )


def _read(path: Path) -> bytes:
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as f:
            return f.read()
    return path.read_bytes()


def _write_gz(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(data)


def _idx_head(raw: bytes, n: int, where: Path) -> bytes:
    """The first ``n`` items of an IDX file (its header's first size becomes ``n``)."""
    if len(raw) < 8 or raw[:2] != b"\0\0":
        raise DataError(f"{where}: not an IDX file")
    dims = raw[3]
    sizes = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    if sizes[0] < n:
        raise DataError(f"{where}: holds {sizes[0]} items, fewer than the {n} asked for")
    item = 1
    for s in sizes[1:]:
        item *= s
    header = 4 + 4 * dims
    return raw[:4] + n.to_bytes(4, "big") + raw[8:header] + raw[header : header + n * item]


def _mnist(source: Path, out: Path, split: str, n: int) -> None:
    stem = SUBSETS[f"mnist-{split}"][1]
    for kind in ("images-idx3", "labels-idx1"):
        name = stem.format(kind)
        path = _find(source, [f"mnist/{name}.gz", f"mnist/{name}"])
        _write_gz(out / "mnist" / f"{name}.gz", _idx_head(_read(path), n, path))


def _sst2(source: Path, out: Path, split: str, n: int) -> set[str]:
    """Write the first ``n`` sentences of a split; return their words."""
    path = _find(source, [f"sst2/{split}.tsv", f"SST-2/{split}.tsv"])
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if len(lines) - 1 < n:
        raise DataError(f"{path}: holds {len(lines) - 1} sentences, fewer than {n}")
    head = lines[: n + 1]
    (out / "sst2").mkdir(parents=True, exist_ok=True)
    (out / "sst2" / f"{split}.tsv").write_text("".join(head), encoding="utf-8")
    return {w for line in head[1:] for w in line.split("\t")[0].split()}


def _glove(source: Path, out: Path, words: set[str]) -> None:
    """Write the 50-d vectors of ``words`` (as ``glove/glove50_sst2.txt.gz``)."""
    names = ["glove.6B.50d.txt", "glove50_sst2.txt"]
    path = _find(source, [f"glove/{n}{z}" for n in names for z in (".gz", "")])
    text = _read(path).decode("utf-8")
    kept = [line for line in text.splitlines(keepends=True) if line.split(" ", 1)[0] in words]
    _write_gz(out / "glove" / "glove50_sst2.txt.gz", "".join(kept).encode("utf-8"))


def make_subset(source: Path, out: Path, counts: Mapping[str, int]) -> Path:
    """Write the subsets ``counts`` names (``mnist-train = 2000``...) from ``source`` into ``out``.

    With SST-2, the GloVe vectors of the subset's words come too.

    Raises:
        DataError: for an unknown count name, or real data that is missing or too small.
    """
    unknown = sorted(set(counts) - set(SUBSETS))
    if unknown:
        raise DataError(f"unknown training-data entries {unknown}; known: {sorted(SUBSETS)}")
    words: set[str] = set()
    for key, n in counts.items():
        dataset, split = key.split("-")
        if dataset == "mnist":
            _mnist(source, out, split, n)
        else:
            words |= _sst2(source, out, split, n)
    if words:
        _glove(source, out, words)
    return out
