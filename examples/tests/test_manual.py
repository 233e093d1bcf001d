"""``mt_examples.run_manual``: task 0.5's network, its export and its command line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mt_examples import graded, run_manual
from mt_examples.run_manual import ExportError, Linear, Network

pytestmark = pytest.mark.task0_5

COURSE_EXPORT = Path(run_manual.__file__).with_name(run_manual.EXPORT_NAME)
weights = st.floats(-5.0, 5.0, allow_nan=False)
unit = st.floats(0.0, 1.0, allow_nan=False)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


@given(st.lists(weights, min_size=9, max_size=9), st.lists(weights, min_size=3, max_size=3))
def test_linear_is_the_weighted_sum_plus_the_bias(w: list[float], x: list[float]) -> None:
    layer = Linear(3, 3)
    params = dict(layer.named_parameters())
    for i in range(3):
        for j in range(3):
            params[f"weight_{i}_{j}"].update(w[3 * i + j])
    for j in range(3):
        params[f"bias_{j}"].update(w[j] / 2)
    got = layer.forward(x)
    want = [w[j] / 2 + sum(x[i] * w[3 * i + j] for i in range(3)) for j in range(3)]
    assert got == pytest.approx(want, abs=1e-9)


@given(st.lists(weights, min_size=9, max_size=9), unit, unit)
def test_network_is_relu_then_sigmoid(w: list[float], x1: float, x2: float) -> None:
    net = Network(2)  # layer1: 2x2 weights + 2 biases; output: 2 weights + 1 bias
    for (_, p), value in zip(net.named_parameters(), w, strict=True):
        p.update(value)
    v = {name: p.value for name, p in net.named_parameters()}
    h = [
        max(
            0.0,
            v[f"layer1.bias_{j}"] + x1 * v[f"layer1.weight_0_{j}"] + x2 * v[f"layer1.weight_1_{j}"],
        )
        for j in range(2)
    ]
    z = v["output.bias_0"] + h[0] * v["output.weight_0_0"] + h[1] * v["output.weight_1_0"]
    assert net.forward([x1, x2]) == pytest.approx(_sigmoid(z), abs=1e-12)


def test_the_networks_have_the_parameters_the_export_names() -> None:
    assert run_manual.parameter_names("simple") == [
        "output.weight_0_0", "output.weight_1_0", "output.bias_0"
    ]  # fmt: skip
    assert len(run_manual.parameter_names("split")) == 6 + 3
    with pytest.raises(ValueError, match="2 inputs, got 3"):
        Network().output.forward([1.0, 2.0, 3.0])


def test_the_course_export_separates_every_graded_dataset() -> None:
    networks = run_manual.load_export(COURSE_EXPORT)
    assert set(networks) == set(run_manual.DATASETS)
    for dataset, values in networks.items():
        score = run_manual.score(dataset, run_manual.build(dataset, values))
        assert score.passed, score.message


def test_a_network_that_ignores_its_weights_scores_by_its_labels_alone() -> None:
    # Zero weights: P(y = 1) = 0.5 everywhere, which is not above 0.5: label 0 for all.
    net = run_manual.build("simple", dict.fromkeys(run_manual.parameter_names("simple"), 0.0))
    data = run_manual.graded_data("simple")
    assert run_manual.score("simple", net).correct == data.N - sum(data.y)


def test_build_names_unknown_missing_and_bad_weights() -> None:
    good = dict.fromkeys(run_manual.parameter_names("diag"), 1.0)
    with pytest.raises(ExportError, match=r"no weight output\.weight_9_0"):
        run_manual.build("diag", {**good, "output.weight_9_0": 1.0})
    with pytest.raises(ExportError, match=r"missing output\.bias_0"):
        run_manual.build("diag", {k: v for k, v in good.items() if k != "output.bias_0"})
    for bad in [math.inf, math.nan, True, "1"]:
        with pytest.raises(ExportError, match="must be a finite number"):
            run_manual.build("diag", {**good, "output.bias_0": bad})
    with pytest.raises(ExportError, match="no network for 'xor'"):
        run_manual.build("xor", good)


def test_an_export_round_trips_with_accuracy_and_picture(tmp_path: Path) -> None:
    networks = run_manual.load_export(COURSE_EXPORT)
    path = tmp_path / "sub" / "export.json"
    data = run_manual.write_export(path, networks)
    assert run_manual.read_export(path.read_text()) == networks
    assert [p.name for p in path.parent.iterdir()] == ["export.json"]  # no temporary left
    for entry in data["networks"].values():
        assert entry["accuracy"] == 1.0
        assert len(entry["picture"]) == run_manual.GRID
        assert all(len(row) == run_manual.GRID for row in entry["picture"])
    simple = data["networks"]["simple"]["picture"]  # label 1 left of x1 = 0.5
    assert simple[0][0] > 0.5 > simple[0][-1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x" * (run_manual.MAX_EXPORT_BYTES + 1), "at most"),
        ("{", "not JSON"),
        ('{"format": "other"}', "format"),
        (json.dumps({"format": run_manual.FORMAT}), '"networks"'),
        (json.dumps({"format": run_manual.FORMAT, "networks": {"xor": {}}}), "'xor'"),
        (json.dumps({"format": run_manual.FORMAT, "networks": {"simple": []}}), '"weights"'),
        (
            f'{{"format": "{run_manual.FORMAT}", "networks": '
            '{"simple": {"weights": {"output.bias_0": NaN}}}}',
            "finite",
        ),
        ("[" * 30_000 + "]" * 30_000, "nested too deeply"),
    ],
)
def test_a_bad_export_is_refused_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(ExportError, match=message):
        run_manual.read_export(text)


def test_the_command_sets_weights_and_scores_the_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "w.json"
    assert run_manual.main(["--export", str(path)]) == 1
    assert "no export at" in capsys.readouterr().out
    argv = ["--export", str(path), "--set", "simple", "output.weight_0_0=-10", "output.bias_0=5"]
    assert run_manual.main(argv) == 1  # diag and split are still missing
    out = capsys.readouterr().out
    assert "simple: the network labels 50 of 50 points correctly" in out
    assert "diag: no weights in the export: FAIL" in out
    assert run_manual.main(["--export", str(path), "--set", "simple", "output.bias_0"]) == 2
    assert "expected NAME=NUMBER" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run_manual.main(["--export", str(path), "--set", "simple", "layer1.bias_0=1"])
    assert "not layer1.bias_0" in capsys.readouterr().err
    path.write_text("{")
    assert run_manual.main(["--export", str(path)]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_graded_scores_task_0_5_with_the_script(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "task0_5" in graded.MANUAL
    calls = []
    monkeypatch.setattr(run_manual, "main", lambda argv: calls.append(argv) or 0)
    assert graded.main(["task0_5"]) == 0
    assert calls == [[]]
    with pytest.raises(SystemExit):
        graded.main(["task0_5", "--epochs", "3"])
    assert "takes no options" in capsys.readouterr().err
