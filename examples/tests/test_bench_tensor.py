"""``bench_tensor.py``'s MLP-step case and profiler (its timing cases are in test_toy.py)."""

from __future__ import annotations

import pytest
from mt_examples import bench_tensor

from minitorch.tensor import SimpleBackend


def test_mlp_step_matches_pytorch_step_by_step() -> None:
    torch = pytest.importorskip("torch")
    ours = bench_tensor.minitorch_cases(SimpleBackend)["mlp step"]
    theirs = bench_tensor.torch_cases(torch)["mlp step"]
    losses = [(ours().item(), theirs().item()) for _ in range(3)]
    for mine, reference in losses:
        assert mine == pytest.approx(reference, rel=1e-9)
    assert losses[2][0] < losses[0][0]  # SGD is training the network


def test_mlp_data_is_the_documented_batch() -> None:
    x, sign, weights = bench_tensor.mlp_data()
    assert x.shape == (bench_tensor.MLP_BATCH, bench_tensor.MLP_IN)
    assert set(sign.ravel()) <= {1.0, -1.0}
    assert [w.shape for w in weights] == [(2, 64), (64,), (64, 1), (1,)]


def test_profile_prints_where_the_time_goes(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_tensor.main(["--profile", "a + b", "--number", "5", "--no-torch"]) == {}
    out = capsys.readouterr().out
    assert "cProfile of 5 calls of 'a + b' on simple" in out
    assert "tottime" in out
    assert "apply" in out  # Function.apply is on the path of every operation
