"""Task 4.5: checkpoints are written atomically and only load into the model they fit."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import minitorch.nn as nn
from minitorch.fast import FastBackend
from minitorch.operators import Module

pytestmark = pytest.mark.task4_5


class Small(Module):
    def __init__(self, seed: int, hidden: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 2, backend=FastBackend, seed=seed)
        self.head = nn.Linear(3, hidden, backend=FastBackend, seed=seed)


def values(model: Module) -> dict[str, np.ndarray]:
    return {k: p.value.to_numpy().copy() for k, p in model.named_parameters()}


def test_round_trip(tmp_path) -> None:
    a, b = Small(0), Small(1)
    path = nn.save_checkpoint(a, tmp_path / "model.npz", epoch=3, accuracy=0.5)
    assert path.is_file()
    meta = nn.load_checkpoint(b, path)
    assert meta == {"epoch": 3, "accuracy": 0.5}
    for name, value in values(a).items():
        np.testing.assert_array_equal(values(b)[name], value)
    assert all(p.value.backend is FastBackend and p.value.requires_grad for p in b.parameters())


def test_save_replaces_atomically_and_leaves_no_temporary(tmp_path, monkeypatch) -> None:
    path = tmp_path / "model.npz"
    nn.save_checkpoint(Small(0), path, epoch=1)
    before = path.read_bytes()

    def fail(*args, **kwargs):
        raise KeyboardInterrupt  # an interrupted save, half-way through writing

    monkeypatch.setattr(np, "savez", fail)
    with pytest.raises(KeyboardInterrupt):
        nn.save_checkpoint(Small(1), path, epoch=2)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]
    monkeypatch.undo()
    assert nn.load_checkpoint(Small(2), path) == {"epoch": 1}


@pytest.mark.skipif(os.name != "posix", reason="file modes and the umask are POSIX's")
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=["022", "077", "002"])
def test_a_checkpoint_gets_the_mode_the_umask_gives_as_np_savez(tmp_path, umask) -> None:
    """The atomic write keeps the file mode of a plain write: 0666 less the umask.

    (``tempfile.mkstemp`` made every checkpoint 0600, where ``np.savez`` and ``torch.save``
    give 0644 under umask 022.)
    """
    before = os.umask(umask)
    try:
        path = nn.save_checkpoint(Small(0), tmp_path / "model.npz")
        nn.save_checkpoint(Small(1), path)  # replacing an existing checkpoint too
        np.savez(tmp_path / "plain.npz", a=np.zeros(2))
        torch_mode = None
        try:
            import torch
        except ImportError:
            pass
        else:
            torch.save({"a": torch.zeros(2)}, tmp_path / "torch.pt")
            torch_mode = (tmp_path / "torch.pt").stat().st_mode & 0o777
    finally:
        os.umask(before)
    mode = path.stat().st_mode & 0o777
    assert mode == 0o666 & ~umask
    assert mode == (tmp_path / "plain.npz").stat().st_mode & 0o777
    assert torch_mode in (None, mode)


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
@pytest.mark.parametrize("private", [0o600, 0o640, 0o444])
def test_saving_over_a_checkpoint_keeps_its_mode_as_np_savez(tmp_path, private) -> None:
    """A checkpoint made private (``chmod 600``) stays private when saved over.

    ``np.savez`` and ``torch.save`` write into the existing file, so its mode stays; the
    atomic write's new file used to get 0644 from the umask instead.
    """
    path = nn.save_checkpoint(Small(0), tmp_path / "model.npz")
    plain = tmp_path / "plain.npz"
    np.savez(plain, a=np.zeros(2))
    os.chmod(path, private)
    os.chmod(plain, private | 0o200)  # np.savez needs to open it for writing
    nn.save_checkpoint(Small(1), path)
    np.savez(plain, a=np.ones(2))
    assert stat.S_IMODE(path.stat().st_mode) == private
    assert stat.S_IMODE(plain.stat().st_mode) == private | 0o200
    assert nn.load_checkpoint(Small(2), path) == {}


def test_loading_into_a_different_model_raises_and_changes_nothing(tmp_path) -> None:
    path = nn.save_checkpoint(Small(0, hidden=4), tmp_path / "model.npz")
    other = Small(1, hidden=5)
    original = values(other)
    with pytest.raises(nn.CheckpointError, match=r"head\.weight has shape \(3, 4\) in the file"):
        nn.load_checkpoint(other, path)
    for name, value in values(other).items():
        np.testing.assert_array_equal(original[name], value)

    class Renamed(Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv1d(2, 3, 2)
            self.out = nn.Linear(3, 4)

    with pytest.raises(
        nn.CheckpointError, match=r"missing parameters \['out\.bias', 'out\.weight'\]"
    ):
        nn.load_checkpoint(Renamed(), path)


def test_corrupt_and_missing_files(tmp_path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(nn.CheckpointError, match="not a readable"):
        nn.load_checkpoint(Small(0), bad)
    with pytest.raises(FileNotFoundError):
        nn.load_checkpoint(Small(0), tmp_path / "nope.npz")
    with pytest.raises(ValueError, match=r"\.npz"):
        nn.save_checkpoint(Small(0), tmp_path / "model.bin")


# ------------------------------------------------------------------------------ bad files


def rewrite(path, **changes) -> None:
    """Rewrite the checkpoint at ``path`` with some entries replaced (raw numpy arrays)."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    arrays.update(changes)
    arrays = {k: v for k, v in arrays.items() if v is not None}
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def assert_unchanged(model: Module, before: dict[str, np.ndarray]) -> None:
    after = values(model)
    assert after.keys() == before.keys()
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"__metadata__": np.array("{not json")}, "metadata"),
        ({"__metadata__": np.array("[1, 2]")}, "metadata"),
        ({"__metadata__": np.arange(3)}, "metadata"),
        ({"__metadata__": None}, "no __metadata__ entry"),
        ({"head.weight": np.full((3, 4), "x")}, r"head\.weight.*str"),
        ({"head.weight": np.ones((3, 4)) + 1j}, r"head\.weight.*complex"),
        ({"head.weight": np.ones((3, 4), dtype=bool)}, r"head\.weight.*bool"),
    ],
    ids=["non-json", "not-a-dict", "not-a-string", "no-metadata", "string", "complex", "bool"],
)
def test_bad_entries_raise_and_change_nothing(tmp_path, change, match) -> None:
    """Regression: every entry is checked before any parameter is set."""
    path = nn.save_checkpoint(Small(0), tmp_path / "model.npz", epoch=1)
    rewrite(path, **change)
    model = Small(1)
    before = values(model)
    with pytest.raises(nn.CheckpointError, match=match):
        nn.load_checkpoint(model, path)
    assert_unchanged(model, before)


def test_integer_parameters_load_as_float(tmp_path) -> None:
    path = nn.save_checkpoint(Small(0), tmp_path / "model.npz")
    rewrite(path, **{"head.bias": np.arange(4, dtype=np.int32)})
    model = Small(1)
    nn.load_checkpoint(model, path)
    np.testing.assert_array_equal(values(model)["head.bias"], [0.0, 1.0, 2.0, 3.0])


def test_a_plain_npz_of_other_arrays_does_not_match(tmp_path) -> None:
    path = tmp_path / "other.npz"
    np.savez(path, weight=np.zeros((2, 2)))
    with pytest.raises(nn.CheckpointError, match=r"does not match Small: missing parameters"):
        nn.load_checkpoint(Small(1), path)


def test_npy_renamed_npz(tmp_path) -> None:
    """Regression: a ``.npy`` file named ``.npz`` gave a TypeError."""
    path = tmp_path / "model.npz"
    with open(path, "wb") as f:
        np.save(f, np.ones((3, 4)))
    model = Small(1)
    before = values(model)
    with pytest.raises(nn.CheckpointError, match="not a readable"):
        nn.load_checkpoint(model, path)
    assert_unchanged(model, before)


def test_every_single_flipped_byte_is_caught_or_harmless(tmp_path) -> None:
    """Regression: flipped bytes gave NotImplementedError and others.

    Each byte of a small checkpoint is flipped in turn: the load either raises
    ``CheckpointError`` with the model unchanged, or (a byte the format does not check,
    such as a timestamp) loads exactly the saved values.
    """
    source = Small(0, hidden=2)
    path = nn.save_checkpoint(source, tmp_path / "model.npz", epoch=1)
    saved = values(source)
    raw = path.read_bytes()
    model = Small(1, hidden=2)
    before = values(model)
    loaded = 0
    for offset in range(len(raw)):
        damaged = bytearray(raw)
        damaged[offset] ^= 0xFF
        path.write_bytes(bytes(damaged))
        try:
            meta = nn.load_checkpoint(model, path)
        except nn.CheckpointError:
            assert_unchanged(model, before)
            continue
        loaded += 1
        assert meta == {"epoch": 1}
        assert_unchanged(model, saved)
        model = Small(1, hidden=2)
    assert loaded < len(raw) // 4


# ------------------------------------------------------------------- stale temporary files

KILLED_SAVE = """
import sys, time
import numpy as np
import minitorch.nn as nn

def slow_savez(f, **arrays):
    f.write(b"PK partial")
    f.flush()
    print("writing", flush=True)
    time.sleep(600)

np.savez = slow_savez
nn.save_checkpoint(nn.Linear(3, 4), sys.argv[1])
"""


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_a_save_killed_mid_write_is_cleaned_up_by_the_next_save(tmp_path) -> None:
    """Regression: a killed save left a stray temporary file forever."""
    path = tmp_path / "model.npz"
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_SAVE, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == "writing\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    (stray,) = temporaries(tmp_path)
    assert stray.startswith(f".model.npz.{writer.pid}.")
    assert not path.exists()
    nn.save_checkpoint(Small(0), path)  # less than a minute old: might still be in use
    assert temporaries(tmp_path) == [stray]
    age(tmp_path / stray, 120)
    nn.save_checkpoint(Small(0), path)
    assert temporaries(tmp_path) == []
    assert nn.load_checkpoint(Small(1), path) == {}


def test_stale_temporaries_rule(tmp_path) -> None:
    """Only this checkpoint's temporaries whose writer is gone (or a day old) are removed."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    names = {
        "dead_old": f".model.npz.{dead.pid}.abc123.tmp",
        "dead_fresh": f".model.npz.{dead.pid}.def456.tmp",
        "alive_old": f".model.npz.{os.getpid()}.ghi789.tmp",
        "alive_ancient": f".model.npz.{os.getpid()}.jkl012.tmp",
        "other_checkpoint": f".other.npz.{dead.pid}.abc123.tmp",
        "not_ours": "model.npz.tmp",
    }
    for key, name in names.items():
        (tmp_path / name).write_bytes(b"x")
        if key != "dead_fresh":
            age(tmp_path / name, 2 * 24 * 3600 if key == "alive_ancient" else 120)
    nn.save_checkpoint(Small(0), tmp_path / "model.npz")
    left = {p.name for p in tmp_path.iterdir()}
    assert names["dead_old"] not in left
    assert names["alive_ancient"] not in left
    for key in ("dead_fresh", "alive_old", "other_checkpoint", "not_ours"):
        assert names[key] in left


def test_stale_temporaries_of_a_name_with_glob_characters(tmp_path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stray = tmp_path / f".m[1]*.npz.{dead.pid}.abc.tmp"
    other = tmp_path / f".m1x.npz.{dead.pid}.abc.tmp"  # would match an unescaped [1]*
    for path in (stray, other):
        path.write_bytes(b"x")
        age(path, 120)
    nn.save_checkpoint(Small(0), tmp_path / "m[1]*.npz")
    assert not stray.exists()
    assert other.exists()


# --------------------------------------------------- paths and metadata that cannot work


def test_loading_a_directory_says_it_is_one(tmp_path) -> None:
    folder = tmp_path / "model.npz"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match=r"model\.npz is a directory, not a \.npz file"):
        nn.load_checkpoint(Small(0), folder)
    with pytest.raises(IsADirectoryError, match=r"model\.npz: it is a directory"):
        nn.save_checkpoint(Small(0), folder)


@pytest.mark.parametrize("below", ["x.npz", "sub/x.npz"])
def test_saving_under_a_file_says_the_parent_is_not_a_directory(tmp_path, below) -> None:
    taken = tmp_path / "a.npz"
    taken.write_bytes(b"a file")
    with pytest.raises(NotADirectoryError, match=rf"{taken} is a file, not a directory"):
        nn.save_checkpoint(Small(0), taken / below)
    assert taken.read_bytes() == b"a file"


@pytest.mark.parametrize(
    ("metadata", "match"),
    [
        (
            {"epoch": 3, "accuracy": np.float32(0.5)},
            r"accuracy=np\.float32\(0\.5\): a numpy\.float32",
        ),
        ({"history": [0.1, {"loss": np.arange(3)}]}, r"history=\[0\.1, .*: a numpy\.ndarray"),
        ({"best": nn.Linear(1, 1)}, r"best=.*: a minitorch\.Linear cannot be stored as JSON"),
        ({"table": {(1, 2): 3}}, r"table=\{\(1, 2\): 3\}: JSON cannot store it \(keys must be"),
    ],
    ids=["numpy-scalar", "nested-array", "object", "tuple-key"],
)
def test_metadata_that_is_not_json_names_its_key_and_type(tmp_path, metadata, match) -> None:
    target = tmp_path / "model.npz"
    with pytest.raises(TypeError, match=rf"^checkpoint metadata {match}"):
        nn.save_checkpoint(Small(0), target, **metadata)
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []  # and no temporary file left behind
