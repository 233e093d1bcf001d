"""Task 4.5: the MNIST (IDX), SST-2 (TSV) and GloVe readers, on small files written here."""

from __future__ import annotations

import gzip
import re
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.nn.data import read_idx

pytestmark = pytest.mark.task4_5


def idx_bytes(array: np.ndarray, magic: int | None = None) -> bytes:
    """An IDX file: magic (0, 0, type 0x08, dims), big-endian sizes, then uint8 data."""
    head = magic if magic is not None else 0x0800 + array.ndim
    return (
        struct.pack(">I", head)
        + b"".join(struct.pack(">I", s) for s in array.shape)
        + (array.astype(np.uint8).tobytes())
    )


def write(path: Path, data: bytes, compress: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if compress:
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)
    return path


def make_mnist(root: Path, n_train: int = 12, n_test: int = 5, compress: bool = True) -> None:
    rng = np.random.default_rng(0)
    suffix = ".gz" if compress else ""
    for stem, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n, 28, 28))
        labels = rng.integers(0, 10, n)
        write(root / "mnist" / f"{stem}-images-idx3-ubyte{suffix}", idx_bytes(images), compress)
        write(root / "mnist" / f"{stem}-labels-idx1-ubyte{suffix}", idx_bytes(labels), compress)


@pytest.mark.parametrize("compress", [True, False])
def test_mnist_loads(tmp_path, compress) -> None:
    make_mnist(tmp_path, compress=compress)
    train = nn.MNIST.load(tmp_path, "train")
    test = nn.MNIST.load(tmp_path, "test")
    assert train.images.shape == (12, 28, 28)
    assert train.images.dtype == np.uint8
    assert len(train) == 12
    assert len(test) == 5
    assert train.labels.max() <= 9


def test_mnist_folder_from_the_environment(tmp_path, monkeypatch) -> None:
    make_mnist(tmp_path)
    monkeypatch.setenv("MINITORCH_DATA", str(tmp_path))
    assert len(nn.MNIST.load(split="test")) == 5


def test_mnist_missing_file_says_which_and_how_to_get_it(tmp_path) -> None:
    make_mnist(tmp_path)
    (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(nn.MissingDataError) as info:
        nn.MNIST.load(tmp_path, "test")
    message = str(info.value)
    assert "t10k-labels-idx1-ubyte" in message
    assert str(tmp_path) in message
    assert "Download" in message
    assert "MINITORCH_DATA" in message
    assert f"minitorch.nn.MNIST.download({str(tmp_path)!r})" in message
    assert isinstance(info.value, FileNotFoundError)


def test_mnist_wrong_magic(tmp_path) -> None:
    make_mnist(tmp_path)
    labels = np.zeros(12)
    write(tmp_path / "mnist" / "train-labels-idx1-ubyte.gz", idx_bytes(labels, magic=2051))
    with pytest.raises(nn.CorruptDataError, match=r"magic number 2051.*expected 2049"):
        nn.MNIST.load(tmp_path, "train")


def test_mnist_truncated(tmp_path) -> None:
    make_mnist(tmp_path)
    path = tmp_path / "mnist" / "train-images-idx3-ubyte.gz"
    data = gzip.decompress(path.read_bytes())
    write(path, data[:-100])
    with pytest.raises(nn.CorruptDataError, match="truncated"):
        nn.MNIST.load(tmp_path, "train")


def test_mnist_truncated_gzip_stream(tmp_path) -> None:
    make_mnist(tmp_path)
    path = tmp_path / "mnist" / "train-images-idx3-ubyte.gz"
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(nn.CorruptDataError, match="cannot be read"):
        nn.MNIST.load(tmp_path, "train")


def test_mnist_count_mismatch(tmp_path) -> None:
    make_mnist(tmp_path)
    write(tmp_path / "mnist" / "train-labels-idx1-ubyte.gz", idx_bytes(np.zeros(11)))
    with pytest.raises(nn.CorruptDataError, match=r"12 images but .* 11 labels"):
        nn.MNIST.load(tmp_path, "train")


def test_mnist_label_that_is_not_a_digit(tmp_path) -> None:
    make_mnist(tmp_path)
    labels = np.arange(12) % 10
    labels[7] = 12
    write(tmp_path / "mnist" / "train-labels-idx1-ubyte.gz", idx_bytes(labels))
    with pytest.raises(nn.CorruptDataError, match=r"train-labels.*: label 12 is not a digit"):
        nn.MNIST.load(tmp_path, "train")


def test_mnist_bad_split(tmp_path) -> None:
    with pytest.raises(ValueError, match="'train' or 'test'"):
        nn.MNIST.load(tmp_path, "validation")


def test_read_idx_extra_bytes_and_bad_header(tmp_path) -> None:
    path = write(tmp_path / "x.idx", idx_bytes(np.zeros((2, 3))) + b"\0", compress=False)
    with pytest.raises(nn.CorruptDataError, match="longer than its header"):
        read_idx(path)
    write(path, b"\1\2\3\4\5\6\7\10", compress=False)
    with pytest.raises(nn.CorruptDataError, match="not an IDX header"):
        read_idx(path)
    np.testing.assert_array_equal(
        read_idx(write(path, idx_bytes(np.arange(6).reshape(2, 3)), compress=False)),
        np.arange(6).reshape(2, 3),
    )


def write_sst2(root: Path, split: str, rows: list[str], header: str = "sentence\tlabel") -> Path:
    path = root / "sst2" / f"{split}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_sst2_reads(tmp_path) -> None:
    write_sst2(tmp_path, "dev", ["a fine film .\t1", "dull and long\t0", ""])
    data = nn.SST2.load(tmp_path, "dev")
    assert data.sentences == [["a", "fine", "film", "."], ["dull", "and", "long"]]
    assert data.labels.tolist() == [1, 0]
    assert len(data) == 2


def test_sst2_glue_folder_name(tmp_path) -> None:
    path = tmp_path / "SST-2" / "train.tsv"
    path.parent.mkdir()
    path.write_text("sentence\tlabel\ngood\t1\n", encoding="utf-8")
    assert nn.SST2.load(tmp_path, "train").labels.tolist() == [1]


@pytest.mark.parametrize(
    ("rows", "header", "match"),
    [
        (["good\t1"], "text\tlabel", "header"),
        (["good\t1", "bad\t2"], "sentence\tlabel", "line 3"),
        (["no tab here"], "sentence\tlabel", "line 2"),
    ],
)
def test_sst2_corrupt(tmp_path, rows, header, match) -> None:
    write_sst2(tmp_path, "dev", rows, header)
    with pytest.raises(nn.CorruptDataError, match=match):
        nn.SST2.load(tmp_path, "dev")


def test_sst2_missing(tmp_path) -> None:
    with pytest.raises(nn.MissingDataError, match=r"sst2/dev\.tsv.*SST-2\.zip"):
        nn.SST2.load(tmp_path, "dev")


def write_glove(root: Path, lines: list[str], compress: bool = True) -> Path:
    name = "glove/glove.6B.50d.txt" + (".gz" if compress else "")
    return write(root / name, ("\n".join(lines) + "\n").encode(), compress)


def glove_line(word: str, value: float, dim: int = 50) -> str:
    return " ".join([word] + [f"{value + k / 100:.2f}" for k in range(dim)])


@pytest.mark.parametrize("compress", [True, False])
def test_glove_reads_and_filters(tmp_path, compress) -> None:
    write_glove(
        tmp_path, [glove_line("the", 0.1), glove_line("film", -1.0), glove_line("x", 2)], compress
    )
    glove = nn.GloVe.load(tmp_path)
    assert len(glove) == 3
    assert glove.dim == 50
    assert "film" in glove
    np.testing.assert_allclose(glove.vectors[glove.index["film"]][:2], [-1.0, -0.99])
    only = nn.GloVe.load(tmp_path, vocab={"film", "missing"})
    assert list(only.index) == ["film"]
    emb = only.embed(["film", "unknown"])
    assert emb.shape == (2, 50)
    assert not emb[1].any()


def test_glove_corrupt(tmp_path) -> None:
    write_glove(tmp_path, [glove_line("the", 0.1), glove_line("film", 0.2, dim=49)])
    with pytest.raises(nn.CorruptDataError, match="line 2: 49 values, expected 50"):
        nn.GloVe.load(tmp_path)
    write_glove(tmp_path, [glove_line("the", 0.1), "film " + "abc " * 49 + "abc"])
    with pytest.raises(nn.CorruptDataError, match="not a number"):
        nn.GloVe.load(tmp_path)
    write_glove(tmp_path, [])
    with pytest.raises(nn.CorruptDataError, match="no vectors"):
        nn.GloVe.load(tmp_path)


def test_glove_missing(tmp_path) -> None:
    with pytest.raises(nn.MissingDataError, match=r"glove\.6B\.50d\.txt.*glove\.6B\.zip"):
        nn.GloVe.load(tmp_path)


# ------------------------------------------------------------------- corrupt gzip streams


def xor_bytes(path: Path, start: int = 40, stop: int = 44) -> None:
    data = bytearray(path.read_bytes())
    for k in range(start, stop):
        data[k] ^= 0xFF
    path.write_bytes(bytes(data))


def test_mnist_corrupt_gzip_names_the_file_and_what_to_do(tmp_path) -> None:
    """Regression: XOR-ed bytes in a .gz gave a raw zlib.error."""
    make_mnist(tmp_path, n_train=200)
    path = tmp_path / "mnist" / "train-images-idx3-ubyte.gz"
    xor_bytes(path)
    with pytest.raises(nn.CorruptDataError) as info:
        nn.MNIST.load(tmp_path, "train")
    message = str(info.value)
    assert str(path) in message
    assert "delete" in message
    assert "download" in message


def test_glove_corrupt_gzip_names_the_file_and_what_to_do(tmp_path) -> None:
    """Regression: the same for the GloVe reader."""
    path = write_glove(tmp_path, [glove_line(f"w{k}", k / 7) for k in range(300)])
    xor_bytes(path)
    with pytest.raises(nn.CorruptDataError) as info:
        nn.GloVe.load(tmp_path)
    assert str(path) in str(info.value)
    assert "delete" in str(info.value)


def load_error(load: Callable[[], object]) -> nn.DatasetError | None:
    """The DatasetError ``load()`` raises, or None; any other exception propagates."""
    try:
        load()
    except nn.DatasetError as e:
        return e
    return None


@settings(max_examples=60, deadline=None)
@given(offset=st.integers(0, 10_000), mask=st.integers(1, 255))
def test_any_damaged_byte_gives_a_dataset_error(tmp_path_factory, offset, mask) -> None:
    """A byte changed anywhere in the gzipped files: a clean load or a CorruptDataError."""
    root = tmp_path_factory.mktemp("mnist")
    make_mnist(root, n_train=20)
    path = root / "mnist" / "train-images-idx3-ubyte.gz"
    glove = write_glove(root, [glove_line(f"w{k}", k / 7) for k in range(20)])
    for damaged, load in (
        (path, lambda: nn.MNIST.load(root, "train")),
        (glove, lambda: nn.GloVe.load(root)),
    ):
        data = bytearray(damaged.read_bytes())
        data[offset % len(data)] ^= mask
        damaged.write_bytes(bytes(data))
        error = load_error(load)
        if error is not None:
            assert isinstance(error, nn.CorruptDataError)
            assert str(damaged) in str(error)


# ------------------------------------------------------------------ empty or garbage data


def test_mnist_split_with_no_images(tmp_path) -> None:
    """Regression: a valid 0-image split loaded (then nan% accuracy)."""
    make_mnist(tmp_path, n_test=0)
    with pytest.raises(nn.CorruptDataError, match="no images"):
        nn.MNIST.load(tmp_path, "test")


def test_sst2_header_only(tmp_path) -> None:
    """Regression: a header-only SST-2 file loaded as 0 sentences."""
    write_sst2(tmp_path, "train", [])
    with pytest.raises(nn.CorruptDataError, match="no sentences"):
        nn.SST2.load(tmp_path, "train")


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "NaN", "1e999"])
def test_glove_non_finite_values(tmp_path, bad) -> None:
    """Regression: nan/inf GloVe values were accepted."""
    line = glove_line("film", 0.2).split(" ")
    line[7] = bad
    write_glove(tmp_path, [glove_line("the", 0.1), " ".join(line)])
    with pytest.raises(nn.CorruptDataError, match=r"line 2: .*'film'.*not finite"):
        nn.GloVe.load(tmp_path)


# ------------------------------------------------------------------- SST-2 line splitting


@pytest.mark.parametrize("odd", ["\x0c", "\u2028", "\x1c", "\x85", "\v"])
def test_sst2_rows_split_on_newline_only(tmp_path, odd) -> None:
    """Regression: splitlines() broke rows holding \\x0c or U+2028."""
    write_sst2(tmp_path, "dev", [f"a fine{odd}film .\t1", "dull\t0"])
    data = nn.SST2.load(tmp_path, "dev")
    assert data.labels.tolist() == [1, 0]
    assert data.sentences[1] == ["dull"]


def test_sst2_windows_line_endings(tmp_path) -> None:
    path = tmp_path / "sst2" / "dev.tsv"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"sentence\tlabel\r\na fine film . \t1\r\ndull\t0\r\n")
    data = nn.SST2.load(tmp_path, "dev")
    assert data.sentences == [["a", "fine", "film", "."], ["dull"]]
    assert data.labels.tolist() == [1, 0]


# ---------------------------------------------------------------- GloVe trailing whitespace


@pytest.mark.parametrize("tail", [" ", "  ", "\t", " \r", " \t "])
@pytest.mark.parametrize("compress", [True, False])
def test_glove_accepts_trailing_whitespace(tmp_path, tail, compress) -> None:
    """Regression: a trailing space on each line (as .vec files have) said 'not a number'."""
    lines = [glove_line("the", 0.1) + tail, glove_line("film", -1.0) + tail]
    write_glove(tmp_path, lines, compress)
    glove = nn.GloVe.load(tmp_path)
    assert glove.dim == 50
    assert list(glove.index) == ["the", "film"]
    np.testing.assert_allclose(glove.vectors[1], [-1.0 + k / 100 for k in range(50)])


def test_glove_skips_a_vec_header(tmp_path) -> None:
    write_glove(tmp_path, ["2 50", glove_line("the", 0.1) + " ", glove_line("film", 0.2) + " "])
    glove = nn.GloVe.load(tmp_path)
    assert list(glove.index) == ["the", "film"]
    assert glove.dim == 50


@given(position=st.integers(1, 50), token=st.sampled_from(["abc", "1..2", "0x1", "--1", "1,5"]))
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_glove_bad_token_names_the_line_the_word_and_the_token(tmp_path, position, token) -> None:
    line = glove_line("film", 0.2).split(" ")
    line[position] = token
    write_glove(tmp_path, [glove_line("the", 0.1), " ".join(line) + " "])
    with pytest.raises(
        nn.CorruptDataError,
        match=rf"line 2: value {position} of 'film' is not a number: {re.escape(repr(token))}$",
    ):
        nn.GloVe.load(tmp_path)
