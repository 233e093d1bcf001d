"""Task 0.5 is graded with your `Network` and the weights you exported.

Grading reads `mt_examples/manual_weights.json` from your submission, the one file
besides your functions that it reads (the page's Save button and `python run_manual.py
--set ...` write it; at most 64 kB), puts each dataset's weights into your `Network`
from `mt_examples/run_manual.py`, and counts the graded points (50 points, seed 0, as
the toy training tasks) it labels correctly: at least 90% on each of simple, diag and
split. It also checks `Linear.forward` and `Network.forward` against their formulas with
other weights: the accuracy must come from the weights.

Score your export as grading does: `python run_manual.py` prints each dataset's accuracy
against the threshold.
"""

import math

import pytest

pytestmark = pytest.mark.task0_5

EXPORT = "mt_examples/manual_weights.json"


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


@pytest.mark.parametrize("dataset", ["simple", "diag", "split"])
def test_the_exported_weights_separate_the_dataset(
    dataset, training_script, submitted_file
) -> None:
    manual = training_script("run_manual")
    net = manual.build(dataset)  # your Network, its weights 0 until the export's are set
    assert manual.probability(net, [(0.5, 0.5)]) == [0.5]
    weights = manual.read_export(submitted_file(EXPORT).read_bytes())
    if dataset not in weights:
        pytest.fail(f"{EXPORT} has no weights for {dataset}: set them and Save")
    score = manual.score(dataset, manual.build(dataset, weights[dataset], type(net)))
    assert score.passed, score.message


def test_linear_computes_the_weighted_sums(training_script) -> None:
    manual = training_script("run_manual")
    layer = manual.Linear(3, 2)
    values = {"weight_0_0": 0.5, "weight_1_0": -2.0, "weight_2_0": 1.5, "bias_0": 0.25}
    values |= {"weight_0_1": -1.0, "weight_1_1": 3.0, "weight_2_1": 0.0, "bias_1": -4.0}
    for name, p in layer.named_parameters():
        p.update(values[name])
    x = [2.0, -1.0, 0.5]
    want = [0.25 + 1.0 + 2.0 + 0.75, -4.0 - 2.0 - 3.0 + 0.0]
    got = layer.forward(x)
    assert len(got) == 2
    assert all(math.isclose(g, w) for g, w in zip(got, want, strict=True)), got
    with pytest.raises(ValueError, match="3 inputs, got 2"):
        layer.forward([1.0, 2.0])


@pytest.mark.parametrize("hidden", [0, 2, 3])
def test_network_applies_relu_then_sigmoid(training_script, hidden) -> None:
    manual = training_script("run_manual")
    net = manual.Network(hidden)
    for k, (_, p) in enumerate(net.named_parameters()):
        p.update((-1.0) ** k * (0.5 + 0.25 * k))
    w = {name: p.value for name, p in net.named_parameters()}
    for x in [(0.1, 0.9), (0.7, 0.2), (0.5, 0.5)]:
        values = list(x)
        if hidden:
            values = [
                max(
                    0.0,
                    w[f"layer1.bias_{j}"]
                    + sum(values[i] * w[f"layer1.weight_{i}_{j}"] for i in range(2)),
                )
                for j in range(hidden)
            ]
        z = w["output.bias_0"] + sum(v * w[f"output.weight_{i}_0"] for i, v in enumerate(values))
        assert math.isclose(net.forward(list(x)), _sigmoid(z), rel_tol=1e-9), (hidden, x)
