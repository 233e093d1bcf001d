"""Fast checks that the example scripts run: a few epochs of training and a tiny benchmark.

``examples/`` is not a package: ``conftest.py`` puts it on ``sys.path`` and each script
is loaded from its path with ``example_support.load_example``.
"""

from __future__ import annotations

import math
import random
from types import ModuleType

import pytest
from example_support import load_example

pytestmark = pytest.mark.task1_5


@pytest.fixture(scope="module")
def train_scalar() -> ModuleType:
    return load_example("train_scalar")


@pytest.fixture(scope="module")
def bench_scalar() -> ModuleType:
    return load_example("bench_scalar")


RESULT_KEYS = {
    "dataset",
    "points",
    "hidden",
    "lr",
    "epochs",
    "optimizer",
    "seed",
    "losses",
    "accuracies",
    "final_loss",
    "final_accuracy",
    "seconds",
    "seconds_per_epoch",
    "model",
}


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_train_loss_decreases(train_scalar: ModuleType, optimizer: str) -> None:
    lr = 0.5 if optimizer == "sgd" else 0.05
    result = train_scalar.train(
        "simple", points=10, hidden=3, lr=lr, epochs=15, optimizer=optimizer, seed=1
    )
    assert set(result) == RESULT_KEYS
    losses = result["losses"]
    assert len(losses) == len(result["accuracies"]) == 15
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < losses[0]
    assert result["final_loss"] < losses[0]
    assert 0.0 <= result["final_accuracy"] <= 1.0
    assert result["points"] == 10
    assert result["seconds_per_epoch"] >= 0.0


def test_train_is_reproducible_and_leaves_global_rng_alone(train_scalar: ModuleType) -> None:
    state = random.getstate()
    a = train_scalar.train("xor", points=8, hidden=2, epochs=3, seed=7)
    b = train_scalar.train("xor", points=8, hidden=2, epochs=3, seed=7)
    assert random.getstate() == state
    assert a["losses"] == b["losses"]
    c = train_scalar.train("xor", points=8, hidden=2, epochs=3, seed=8)
    assert c["losses"] != a["losses"]


def test_network_parameters_are_named_scalars(train_scalar: ModuleType) -> None:
    model = train_scalar.Network(3, random.Random(0))
    names = [name for name, _ in model.named_parameters()]
    # 2*3 + 3, 3*3 + 3 and 3*1 + 1 weights and biases.
    assert len(names) == 9 + 12 + 4
    assert "layer1.weight_0_0" in names
    assert "layer3.bias_0" in names
    p = model.forward((0.2, 0.7))
    assert 0.0 < p.data < 1.0


def test_point_loss_is_finite_when_sigmoid_saturates(train_scalar: ModuleType) -> None:
    from minitorch.autodiff import Scalar

    z = Scalar(50.0)  # sigmoid(50) rounds to 1.0, so a literal -log(1 - p) would be inf
    loss = train_scalar.point_loss(z, 0)
    loss.backward()
    assert loss.data == pytest.approx(50.0)
    assert z.derivative == pytest.approx(1.0)


def test_main_prints_progress_and_summary(
    train_scalar: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    result = train_scalar.main(
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
    assert "epoch     2/4" in out
    assert "epoch     4/4" in out
    assert "final accuracy" in out
    assert "s/epoch" in out
    assert result["dataset"] == "diag"
    assert result["epochs"] == 4


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dataset", "moons"], "invalid choice: 'moons'"),
        (["--points", "0"], "expected a positive integer"),
        (["--lr", "-1"], "expected a positive finite number"),
        (["--optimizer", "rmsprop"], "invalid choice: 'rmsprop'"),
    ],
)
def test_cli_rejects_bad_arguments(
    train_scalar: ModuleType, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        train_scalar.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_train_rejects_unknown_dataset(train_scalar: ModuleType) -> None:
    with pytest.raises(ValueError, match="unknown dataset 'moons'"):
        train_scalar.train("moons")


def test_bench_runs_tiny(bench_scalar: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    results = bench_scalar.main(["--ops", "50", "--repeat", "2"])
    assert set(results) == {"forward", "backward", "forward (no_grad)"}
    for stats in results.values():
        assert stats["best"] > 0.0
        assert stats["median"] >= stats["best"]
    assert "us per op" in capsys.readouterr().out


@pytest.mark.parametrize("n_ops", [1, 7, 8, 13, 100])
def test_bench_graph_has_exactly_n_ops(bench_scalar: ModuleType, n_ops: int) -> None:
    from minitorch.autodiff import topological_sort

    out = bench_scalar.build_graph(n_ops, random.Random(0))
    nodes = topological_sort(out)
    assert sum(1 for v in nodes if not v.is_leaf()) == n_ops
    assert math.isfinite(out.data)


def test_on_epoch_reports_each_epoch_and_can_stop_training(train_scalar: ModuleType) -> None:
    seen: list[dict[str, object]] = []

    class Stop(Exception):
        pass

    def on_epoch(info: dict[str, object]) -> None:
        seen.append(info)
        if info["epoch"] == 3:
            raise Stop

    with pytest.raises(Stop):
        train_scalar.train("split", points=6, hidden=2, epochs=10, on_epoch=on_epoch)
    assert [info["epoch"] for info in seen] == [1, 2, 3]
    assert set(seen[0]) == {"epoch", "loss", "accuracy", "model", "data"}
