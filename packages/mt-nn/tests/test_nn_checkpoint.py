"""Task 4.5: checkpoints are written atomically and only load into the model they fit."""

from __future__ import annotations

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
