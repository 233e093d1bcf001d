"""Readers for the datasets of the course's training applications: MNIST, SST-2 and GloVe.

Each reader takes a data folder (``data_dir``, or the ``MINITORCH_DATA`` environment
variable) laid out as the files come from their public homes::

    mnist/train-images-idx3-ubyte.gz   mnist/train-labels-idx1-ubyte.gz
    mnist/t10k-images-idx3-ubyte.gz    mnist/t10k-labels-idx1-ubyte.gz
    sst2/train.tsv  sst2/dev.tsv       (GLUE's SST-2.zip unpacks to SST-2/, also accepted)
    glove/glove.6B.50d.txt             (or any GloVe text file, gzipped or not)

MNIST files may also be uncompressed (without ``.gz``) or directly in ``data_dir``. A
missing file raises ``MissingDataError`` naming the file and where to get it; a corrupt
one (wrong magic number, truncated, counts that disagree) raises ``CorruptDataError``
naming the file and what is wrong with it.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar, cast

import numpy as np
import numpy.typing as npt

from ._errors import CorruptDataError, DatasetError, DownloadError, MissingDataError
from .download import Remote, extract, fetch, folder_lock, sources

__all__ = [
    "DATA_ENV",
    "MNIST",
    "SST2",
    "CorruptDataError",
    "DatasetError",
    "DownloadError",
    "GloVe",
    "MissingDataError",
    "data_dir",
    "read_idx",
]

DATA_ENV = "MINITORCH_DATA"
"""Environment variable naming the default data folder."""

_MNIST_HOMES = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)
MNIST_HOME = "the MNIST database (a mirror such as https://ossci-datasets.s3.amazonaws.com/mnist/)"
SST2_HOME = "GLUE's SST-2.zip (https://dl.fbaipublicfiles.com/glue/data/SST-2.zip)"
GLOVE_HOME = "Stanford NLP's glove.6B.zip (https://nlp.stanford.edu/data/glove.6B.zip)"

_IDX_TYPES: dict[int, str] = {
    0x08: "u1",
    0x09: "i1",
    0x0B: ">i2",
    0x0C: ">i4",
    0x0D: ">f4",
    0x0E: ">f8",
}


def data_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """Return ``path``, else ``$MINITORCH_DATA``, else ``./data``."""
    if path is not None:
        return Path(path)
    return Path(os.environ.get(DATA_ENV) or "data")


def _find(folder: Path, candidates: Sequence[str], what: str, home: str, reader: str) -> Path:
    for name in candidates:
        if (folder / name).is_file():
            return folder / name
    looked = ", ".join(str(folder / c) for c in candidates)
    raise MissingDataError(
        f"{what}: file not found (looked for {looked}). Download it from {home} into "
        f"{(folder / candidates[0]).parent} (minitorch.nn.{reader}.download({str(folder)!r}) "
        f"does that), or point --data-dir / ${DATA_ENV} at a folder that has it."
    )


def _open(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")


# What reading a damaged file can raise: gzip's BadGzipFile (an OSError) for a bad header
# or CRC, EOFError for a truncated stream, zlib.error for a damaged deflate stream.
_READ_ERRORS = (OSError, EOFError, zlib.error)


def _unreadable(path: Path, error: Exception) -> CorruptDataError:
    return CorruptDataError(
        f"{path}: cannot be read ({type(error).__name__}: {error}); the file is damaged or "
        "incomplete: delete it and download it again"
    )


def _read_bytes(path: Path) -> bytes:
    try:
        with _open(path) as f:
            return f.read()
    except _READ_ERRORS as e:
        raise _unreadable(path, e) from e


# ------------------------------------------------------------------------------------ IDX


def read_idx(path: str | os.PathLike[str], magic: int | None = None) -> npt.NDArray[np.number[Any]]:
    """Read an IDX file (the MNIST format), gzipped or not, into a numpy array.

    The header is two zero bytes, a type byte (``0x08`` for unsigned bytes), the number of
    dimensions, and one big-endian 32-bit size per dimension; the data follow.

    Args:
        path: the file.
        magic: the expected magic number (the first four bytes as a big-endian int:
            2051 for images, 2049 for labels), or None to accept any valid one.

    Raises:
        MissingDataError: if the file does not exist.
        CorruptDataError: for a wrong magic number, a truncated file or extra bytes.
    """
    p = Path(path)
    if not p.is_file():
        raise MissingDataError(f"{p}: file not found")
    raw = _read_bytes(p)
    if len(raw) < 4:
        raise CorruptDataError(f"{p}: {len(raw)} bytes is too short for an IDX header")
    found = int.from_bytes(raw[:4], "big")
    if magic is not None and found != magic:
        raise CorruptDataError(
            f"{p}: magic number {found} (0x{found:08x}), expected {magic} (0x{magic:08x}); "
            "this is not the expected IDX file"
        )
    kind, dims = raw[2], raw[3]
    if raw[:2] != b"\0\0" or kind not in _IDX_TYPES:
        raise CorruptDataError(f"{p}: magic number 0x{found:08x} is not an IDX header")
    header = 4 + 4 * dims
    if len(raw) < header:
        raise CorruptDataError(f"{p}: truncated header ({len(raw)} bytes, needs {header})")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims))
    dtype = np.dtype(_IDX_TYPES[kind])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header != expected:
        state = "truncated" if len(raw) - header < expected else "longer than its header says"
        raise CorruptDataError(
            f"{p}: {state}: the header gives shape {shape} ({expected} bytes of data), the "
            f"file holds {len(raw) - header}; download it again"
        )
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)


@dataclass(frozen=True)
class MNIST:
    """MNIST digits: ``images`` ``(n, 28, 28)`` uint8 and ``labels`` ``(n,)`` in 0-9.

    Load with ``MNIST.load(data_dir, "train")`` (60,000 images) or ``"test"`` (10,000).
    """

    images: npt.NDArray[np.uint8]
    labels: npt.NDArray[np.uint8]

    FILES: ClassVar[dict[str, tuple[str, str]]] = {
        "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
        "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
    }

    # The original gzipped files (SHA-256 and size as published for the standard MNIST
    # distribution), and the SHA-256 of their gunzipped content, also accepted.
    REMOTES: ClassVar[tuple[Remote, ...]] = tuple(
        Remote(
            f"{stem}.gz",
            tuple(f"{home}{stem}.gz" for home in _MNIST_HOMES),
            sha256,
            size,
            content,
        )
        for stem, sha256, size, content in (
            (
                "train-images-idx3-ubyte",
                "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
                9_912_422,
                "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
            ),
            (
                "train-labels-idx1-ubyte",
                "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
                28_881,
                "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
            ),
            (
                "t10k-images-idx3-ubyte",
                "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                1_648_877,
                "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
            ),
            (
                "t10k-labels-idx1-ubyte",
                "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
                4_542,
                "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
            ),
        )
    )

    def __len__(self) -> int:
        return len(self.labels)

    @classmethod
    def download(
        cls,
        directory: str | os.PathLike[str] | None = None,
        *,
        mirror: str | None = None,
        progress: bool = True,
    ) -> Path:
        """Fetch the four MNIST files into ``directory/mnist/`` (11 MB); return ``directory``.

        Files already there that match their SHA-256 are kept. See ``minitorch.nn.download``
        for what is guaranteed (verified, atomic, resumable).

        Args:
            directory: the data folder (default ``$MINITORCH_DATA``, else ``./data``).
            mirror: base URL serving ``<mirror>/mnist/<file>`` (default
                ``$MINITORCH_MIRROR``, else the public mirrors).
            progress: show a progress bar (or one line per file) on stderr.

        Raises:
            DownloadError: if a file cannot be fetched or does not match its checksum.
        """
        root = data_dir(directory)
        for remote in cls.REMOTES:
            fetch(
                sources(remote, "mnist", mirror),
                root / "mnist" / remote.name,
                remote,
                progress=progress,
            )
        return root

    @classmethod
    def load(cls, folder: str | os.PathLike[str] | None = None, split: str = "train") -> MNIST:
        """Read one split from ``folder/mnist/`` (or ``folder/``), checking the files.

        Raises:
            ValueError: for a split other than ``train`` or ``test``.
            MissingDataError: if a file is missing (the message says where to get it).
            CorruptDataError: for a wrong magic number, truncation, images that are not
                28 x 28, labels outside 0-9, or image and label counts that differ.
        """
        if split not in cls.FILES:
            raise ValueError(f"MNIST split must be 'train' or 'test', got {split!r}")
        root = data_dir(folder)
        paths = []
        for stem in cls.FILES[split]:
            names = [f"mnist/{stem}.gz", f"mnist/{stem}", f"{stem}.gz", stem]
            paths.append(_find(root, names, f"MNIST {split} {stem}", MNIST_HOME, "MNIST"))
        images = read_idx(paths[0], magic=2051)
        labels = read_idx(paths[1], magic=2049)
        if images.ndim != 3 or images.shape[1:] != (28, 28):
            raise CorruptDataError(f"{paths[0]}: images of shape {images.shape[1:]}, not 28 x 28")
        if len(images) != len(labels):
            raise CorruptDataError(
                f"{paths[0]} holds {len(images)} images but {paths[1]} holds {len(labels)} "
                "labels; the files are from different downloads or damaged"
            )
        if len(images) == 0:
            raise CorruptDataError(
                f"{paths[0]}: a valid IDX file that holds no images; an MNIST split has "
                "thousands: delete the files and download them again"
            )
        top = int(np.max(labels)) if labels.size else 0
        if top > 9:
            raise CorruptDataError(f"{paths[1]}: label {top} is not a digit")
        return cls(images.astype(np.uint8, copy=False), labels.astype(np.uint8, copy=False))


# ---------------------------------------------------------------------------------- SST-2


@dataclass(frozen=True)
class SST2:
    """SST-2 sentences (lists of lower-case tokens) and labels (1 positive, 0 negative).

    Load with ``SST2.load(data_dir, "train")`` (67,349 phrases) or ``"dev"`` (872 sentences).
    """

    sentences: list[list[str]]
    labels: npt.NDArray[np.int64]

    # GLUE's SST-2.zip (SHA-256 and size as published for it).
    REMOTE: ClassVar[Remote] = Remote(
        "SST-2.zip",
        ("https://dl.fbaipublicfiles.com/glue/data/SST-2.zip",),
        "d67e16fb55739c1b32cdce9877596db1c127dc322d93c082281f64057c16deaa",
        7_439_277,
    )

    def __len__(self) -> int:
        return len(self.labels)

    @classmethod
    def download(
        cls,
        directory: str | os.PathLike[str] | None = None,
        *,
        mirror: str | None = None,
        progress: bool = True,
    ) -> Path:
        """Fetch GLUE's SST-2.zip (7 MB), unpack ``train.tsv``, ``dev.tsv`` into ``sst2/``.

        Nothing is fetched if both files are already there; the archive is deleted once
        unpacked. Returns ``directory``, ready for ``SST2.load``.

        Args:
            directory: the data folder (default ``$MINITORCH_DATA``, else ``./data``).
            mirror: base URL serving ``<mirror>/sst2/SST-2.zip`` (default
                ``$MINITORCH_MIRROR``, else GLUE's home).
            progress: show a progress bar (or one line per file) on stderr.

        Raises:
            DownloadError: if the archive cannot be fetched, does not match its checksum
                or is damaged.
        """
        root = data_dir(directory)
        folder = root / "sst2"
        wanted = {f"SST-2/{split}.tsv": folder / f"{split}.tsv" for split in ("train", "dev")}
        if all(dest.is_file() for dest in wanted.values()):
            return root
        folder.mkdir(parents=True, exist_ok=True)
        with folder_lock(folder):  # fetch, extract and remove the archive in one turn
            if all(dest.is_file() for dest in wanted.values()):
                return root  # another process did it while this one waited
            archive = fetch(
                sources(cls.REMOTE, "sst2", mirror),
                folder / cls.REMOTE.name,
                cls.REMOTE,
                progress=progress,
            )
            extract(archive, wanted)
            archive.unlink()
        return root

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> SST2:
        """Read a GLUE SST-2 TSV file: a ``sentence<TAB>label`` header, then one row a line.

        Raises:
            MissingDataError: if the file does not exist.
            CorruptDataError: for a wrong header, a row without exactly one tab, or a
                label other than 0 or 1 (the message gives the line number).
        """
        p = Path(path)
        if not p.is_file():
            raise MissingDataError(f"{p}: file not found; download {SST2_HOME}")
        try:
            text = _read_bytes(p).decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptDataError(
                f"{p}: not UTF-8 text ({e}); delete it and download it again"
            ) from e
        # Rows end in "\n" (or "\r\n"); str.splitlines() would also split a sentence at
        # \x0c, \x1c-\x1e, \x85, U+2028 or U+2029, which are valid inside a row.
        lines = [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n")]
        if lines[0].split("\t") != ["sentence", "label"]:
            first = lines[0][:60] or "(empty file)"
            raise CorruptDataError(f"{p}: header is {first!r}, expected 'sentence<TAB>label'")
        sentences, labels = [], []
        for number, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2 or parts[1].strip() not in ("0", "1"):
                raise CorruptDataError(
                    f"{p}, line {number}: expected 'sentence<TAB>0 or 1', got {line[:60]!r}"
                )
            sentences.append(parts[0].split())
            labels.append(int(parts[1]))
        if not sentences:
            raise CorruptDataError(
                f"{p}: a header and no sentences; delete it and download it again"
            )
        return cls(sentences, np.array(labels, dtype=np.int64))

    @classmethod
    def load(cls, folder: str | os.PathLike[str] | None = None, split: str = "train") -> SST2:
        """Read ``folder/sst2/{split}.tsv`` (or ``folder/SST-2/``, as GLUE's zip unpacks).

        Raises:
            ValueError: for a split other than ``train`` or ``dev``.
            MissingDataError, CorruptDataError: as ``read``.
        """
        if split not in ("train", "dev"):
            raise ValueError(f"SST-2 split must be 'train' or 'dev', got {split!r}")
        root = data_dir(folder)
        names = [f"sst2/{split}.tsv", f"SST-2/{split}.tsv", f"{split}.tsv"]
        return cls.read(_find(root, names, f"SST-2 {split}", SST2_HOME, "SST2"))


# ---------------------------------------------------------------------------------- GloVe


def _is_vec_header(parts: list[str]) -> bool:
    """Whether a first line is fastText's ``.vec`` header: two integers, count and dim."""
    return len(parts) == 2 and all(part.isdigit() for part in parts)


def _first_non_number(tokens: list[str]) -> tuple[int, str]:
    """The 1-based position and text of the first token that is not a float."""
    for k, token in enumerate(tokens, start=1):
        try:
            float(token)
        except ValueError:
            return k, token
    return 0, ""  # not reached: numpy refused one of them


@dataclass(frozen=True)
class GloVe:
    """Word vectors: ``vectors[index[word]]`` is the embedding of ``word``."""

    index: dict[str, int]
    vectors: npt.NDArray[np.float64]

    # Stanford NLP's glove.6B.zip (SHA-256 and size as published for it): 400,000 words
    # in 50, 100, 200 and 300 dimensions, one text file each.
    REMOTE: ClassVar[Remote] = Remote(
        "glove.6B.zip",
        ("https://nlp.stanford.edu/data/glove.6B.zip",),
        "617afb2fe6cbd085c235baf7a465b96f4112bd7f7ccb2b2cbd649fed9cbcf2fb",
        862_182_613,
    )
    DIMS: ClassVar[tuple[int, ...]] = (50, 100, 200, 300)

    @classmethod
    def download(
        cls,
        directory: str | os.PathLike[str] | None = None,
        *,
        dim: int = 50,
        mirror: str | None = None,
        progress: bool = True,
    ) -> Path:
        """Fetch glove.6B.zip (822 MB), unpack ``glove.6B.{dim}d.txt`` into ``glove/``.

        Nothing is fetched if the text file is already there. The archive is deleted once
        unpacked (fetch it again for another ``dim``); an interrupted transfer resumes
        where it stopped on the next call. The 50-d file is 171 MB of text for 400,000
        words: ``GloVe.load(..., vocab=words)`` keeps only the words you need.
        Returns ``directory``, ready for ``GloVe.load``.

        Args:
            directory: the data folder (default ``$MINITORCH_DATA``, else ``./data``).
            dim: 50, 100, 200 or 300.
            mirror: base URL serving ``<mirror>/glove/glove.6B.zip`` (default
                ``$MINITORCH_MIRROR``, else Stanford NLP's home).
            progress: show a progress bar (or one line per file) on stderr.

        Raises:
            ValueError: for another ``dim``.
            DownloadError: if the archive cannot be fetched, does not match its checksum
                or is damaged.
        """
        if dim not in cls.DIMS:
            raise ValueError(f"GloVe 6B vectors come in {cls.DIMS} dimensions, not {dim!r}")
        root = data_dir(directory)
        name = f"glove.6B.{dim}d.txt"
        dest = root / "glove" / name
        if dest.is_file():
            return root
        dest.parent.mkdir(parents=True, exist_ok=True)
        with folder_lock(dest.parent):  # fetch, extract and remove the archive in one turn
            if dest.is_file():
                return root  # another process did it while this one waited
            archive = fetch(
                sources(cls.REMOTE, "glove", mirror),
                root / "glove" / cls.REMOTE.name,
                cls.REMOTE,
                progress=progress,
            )
            extract(archive, {name: dest})
            archive.unlink()
        return root

    @property
    def dim(self) -> int:
        """Length of each vector."""
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, word: object) -> bool:
        return word in self.index

    def embed(self, words: Iterable[str]) -> npt.NDArray[np.float64]:
        """Return ``(len(words), dim)`` vectors, zeros for unknown words."""
        words = list(words)
        out = np.zeros((len(words), self.dim))
        for k, w in enumerate(words):
            i = self.index.get(w)
            if i is not None:
                out[k] = self.vectors[i]
        return out

    @classmethod
    def read(cls, path: str | os.PathLike[str], vocab: Iterable[str] | None = None) -> GloVe:
        """Read GloVe's text format, ``word v1 ... vd`` per line (gzipped or not).

        Args:
            path: the file.
            vocab: keep only these words (saves memory with the full 400,000-word files).

        Trailing whitespace on a line is ignored, and so is a fastText ``.vec`` header
        (a first line of two integers, the word count and the dimension).

        Raises:
            MissingDataError: if the file does not exist.
            CorruptDataError: for a line with a different number of values than the first,
                a value that is not a number (naming the line, the word and the token), or
                no vectors at all.
        """
        p = Path(path)
        if not p.is_file():
            raise MissingDataError(f"{p}: file not found; download {GLOVE_HOME}")
        keep = set(vocab) if vocab is not None else None
        index: dict[str, int] = {}
        rows: list[npt.NDArray[np.float64]] = []
        dim = None
        try:
            with _open(p) as f:
                for number, raw in enumerate(f, start=1):
                    # Trailing blanks (fastText's .vec files end each line with one) are not
                    # values; the word may hold any character but a space.
                    parts = raw.decode("utf-8").rstrip().split(" ")
                    if number == 1 and _is_vec_header(parts):
                        continue  # .vec's "count dim" first line
                    if len(parts) < 2:
                        if not raw.strip():
                            continue
                        raise CorruptDataError(f"{p}, line {number}: no vector after the word")
                    if dim is None:
                        dim = len(parts) - 1
                    elif len(parts) - 1 != dim:
                        raise CorruptDataError(
                            f"{p}, line {number}: {len(parts) - 1} values, expected {dim} "
                            "like the first line (a truncated or mixed file?)"
                        )
                    word = parts[0]
                    if (keep is not None and word not in keep) or word in index:
                        continue
                    try:
                        row = np.array(parts[1:], dtype=np.float64)
                    except ValueError:
                        k, token = _first_non_number(parts[1:])
                        raise CorruptDataError(
                            f"{p}, line {number}: value {k} of {word!r} is not a number: {token!r}"
                        ) from None
                    if not np.isfinite(row).all():
                        bad = parts[1 + int(np.argmin(np.isfinite(row)))]
                        raise CorruptDataError(
                            f"{p}, line {number}: a value of {word!r} is not finite ({bad!r})"
                        )
                    rows.append(row)
                    index[word] = len(rows) - 1
        except UnicodeDecodeError as e:
            raise CorruptDataError(
                f"{p}: not UTF-8 text ({e}); delete it and download it again"
            ) from e
        except _READ_ERRORS as e:
            raise _unreadable(p, e) from e
        if dim is None:
            raise CorruptDataError(f"{p}: no vectors in the file")
        vectors = np.stack(rows) if rows else np.zeros((0, dim))
        return cls(index, vectors)

    @classmethod
    def load(
        cls,
        folder: str | os.PathLike[str] | None = None,
        dim: int = 50,
        vocab: Iterable[str] | None = None,
    ) -> GloVe:
        """Read ``folder/glove/glove.6B.{dim}d.txt`` (or ``glove50_sst2.txt``, gzipped or not).

        ``glove50_sst2.txt`` is the 50-d file restricted to the words of SST-2, for
        machines where the full file is too large.

        Raises:
            MissingDataError, CorruptDataError: as ``read``.
        """
        root = data_dir(folder)
        stems = [f"glove.6B.{dim}d.txt"] + (["glove50_sst2.txt"] if dim == 50 else [])
        names = [f"{d}{s}{z}" for s in stems for d in ("glove/", "") for z in (".gz", "")]
        return cls.read(_find(root, names, f"GloVe {dim}-d vectors", GLOVE_HOME, "GloVe"), vocab)
