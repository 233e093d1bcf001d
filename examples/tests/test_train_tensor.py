"""Fast checks of the tensor examples: a few epochs of training, the CLI, a tiny benchmark.

``examples/`` is not a package: ``conftest.py`` puts it on ``sys.path`` and each script
is loaded from its path with ``example_support.load_example``.
"""

from __future__ import annotations

import importlib.metadata
import math
import random
from types import ModuleType

import numpy as np
import pytest
from example_support import load_example

from minitorch.tensor import SimpleBackend, available_backends, tensor

pytestmark = pytest.mark.task2_5


@pytest.fixture(scope="module")
def train_tensor() -> ModuleType:
    return load_example("train_tensor")


@pytest.fixture(scope="module")
def bench_tensor() -> ModuleType:
    return load_example("bench_tensor")


@pytest.mark.parametrize(("optimizer", "lr"), [("sgd", 0.5), ("adam", 0.05)])
def test_train_loss_decreases(train_tensor: ModuleType, optimizer: str, lr: float) -> None:
    result = train_tensor.train(
        "simple", points=12, hidden=3, lr=lr, epochs=15, optimizer=optimizer, seed=1
    )
    losses = result["losses"]
    assert len(losses) == len(result["accuracies"]) == 15
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < losses[0]
    assert result["final_loss"] < losses[0]
    assert 0.0 <= result["final_accuracy"] <= 1.0
    assert result["backend"] == "simple"
    assert result["points"] == 12
    assert result["seconds_per_epoch"] >= 0.0


def test_train_is_reproducible_and_leaves_global_rngs_alone(train_tensor: ModuleType) -> None:
    py_state, np_state = random.getstate(), np.random.get_state()
    a = train_tensor.train("xor", points=8, hidden=2, epochs=3, seed=7)
    b = train_tensor.train("xor", points=8, hidden=2, epochs=3, seed=7)
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert after[0] == np_state[0]
    assert np.array_equal(after[1], np_state[1])
    assert a["losses"] == b["losses"]
    c = train_tensor.train("xor", points=8, hidden=2, epochs=3, seed=8)
    assert c["losses"] != a["losses"]


def test_linear_is_an_affine_map(train_tensor: ModuleType) -> None:
    layer = train_tensor.Linear(3, 2, SimpleBackend, np.random.default_rng(0))
    x = np.arange(12.0).reshape(4, 3) / 10.0
    out = layer.forward(tensor(x.tolist()))
    w, b = layer.weight.value.to_numpy(), layer.bias.value.to_numpy()
    assert out.shape == (4, 2)
    np.testing.assert_allclose(out.to_numpy(), x @ w + b)
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    with pytest.raises(ValueError, match=r"shape \(B, 3\), got \(4, 2\)"):
        layer.forward(tensor(np.zeros((4, 2)).tolist()))


def test_bce_loss_is_finite_when_sigmoid_saturates(train_tensor: ModuleType) -> None:
    z = tensor([[50.0], [-50.0]], requires_grad=True)
    sign = tensor([[-1.0], [1.0]])  # both points on the wrong side, sigmoid saturated
    loss = train_tensor.bce_loss(z, sign)
    loss.backward()
    assert loss.item() == pytest.approx(50.0)
    assert z.grad is not None
    np.testing.assert_allclose(z.grad.to_numpy(), [[0.5], [-0.5]])


def test_main_prints_progress_and_summary(
    train_tensor: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    result = train_tensor.main(
        [
            "--dataset",
            "diag",
            "--points",
            "6",
            "--hidden",
            "2",
            "--epochs",
            "4",
            "--log-every",
            "2",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert "backend=simple" in out
    assert "epoch     2/4" in out
    assert "epoch     4/4" in out
    assert "final accuracy" in out
    assert "s/epoch" in out
    assert result["dataset"] == "diag"
    assert result["epochs"] == 4


@pytest.fixture
def no_backend_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide every installed backend package (as if only mt-tensor were installed)."""
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_: ())
    assert list(available_backends()) == ["simple"]


@pytest.mark.usefixtures("no_backend_packages")
@pytest.mark.parametrize("script", ["train_tensor", "bench_tensor"])
def test_backend_not_installed_is_an_argparse_error(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], script: str
) -> None:
    module = request.getfixturevalue(script)
    with pytest.raises(SystemExit) as exc:
        module.main(["--backend", "fast"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --backend: backend 'fast' is not installed" in err
    assert "pip install mt-fast" in err


def test_unknown_backend_lists_the_known_ones(
    train_tensor: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        train_tensor.main(["--backend", "no-such-backend"])
    assert exc.value.code == 2
    assert "known backends: [" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dataset", "moons"], "invalid choice: 'moons'"),
        (["--points", "0"], "expected a positive integer"),
        (["--lr", "-1"], "expected a positive finite number"),
    ],
)
def test_cli_rejects_bad_arguments(
    train_tensor: ModuleType, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        train_tensor.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_train_rejects_unknown_dataset(train_tensor: ModuleType) -> None:
    with pytest.raises(ValueError, match="unknown dataset 'moons'"):
        train_tensor.train("moons")


def test_bench_runs_tiny(bench_tensor: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    results = bench_tensor.main(["--number", "2", "--repeat", "2", "--no-torch"])
    assert list(results) == ["minitorch:simple"]
    for stats in results["minitorch:simple"].values():
        assert stats["best"] > 0.0
        assert stats["median"] >= stats["best"]
    out = capsys.readouterr().out
    assert "fwd+bwd" in out
    assert "PyTorch column skipped (--no-torch)" in out


def test_bench_notes_missing_torch(
    bench_tensor: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_tensor, "_import_torch", lambda: None)
    results = bench_tensor.main(["--number", "1", "--repeat", "1", "--timer", "cpu"])
    assert "torch" not in results
    out = capsys.readouterr().out
    assert "torch is not importable" in out
    assert "cpu microseconds per call" in out


def test_bench_cases_compute_the_expression(bench_tensor: ModuleType) -> None:
    fns = bench_tensor.minitorch_cases(SimpleBackend)
    assert set(fns) == set(bench_tensor.CASES)
    assert fns["a + b"]().item() == pytest.approx(0.9)
    assert fns["a + b (grad)"]().requires_grad
    for _ in range(2):
        assert fns["fwd+bwd"]() is None
