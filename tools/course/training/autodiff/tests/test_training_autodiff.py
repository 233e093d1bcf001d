"""Task 1.5 is graded by training your network in `mt_examples/train_scalar.py`.

Grading runs `python train_scalar.py --dataset D --optimizer adam --epochs 100` (50 points,
seed 0) for each D of simple, split and xor. On each, the trained network must label at
least 90% of the points correctly (a correct network labels them all, in about 3 s per
dataset), within the task's time limit.
"""

import importlib
from types import ModuleType

import pytest

from minitorch.autodiff import no_grad

pytestmark = pytest.mark.task1_5
ARGS = ["--optimizer", "adam", "--epochs", "100", "--seed", "0", "--no-progress"]
THRESHOLD = 0.9


def script(name: str) -> ModuleType:
    try:
        return importlib.import_module(f"mt_examples.{name}")
    except ModuleNotFoundError as e:
        pytest.fail(f"the submission has no mt_examples/{name}.py to train ({e})")


@pytest.mark.parametrize("dataset", ["simple", "split", "xor"])
def test_the_network_learns(dataset: str) -> None:
    train_scalar = script("train_scalar")
    toy = script("toy")
    result = train_scalar.main(["--dataset", dataset, "--log-every", "0", *ARGS])
    data, _ = toy.make_data(toy.ToyConfig(dataset, points=50, seed=0))
    with no_grad():
        correct = sum(
            (result.model.forward(x).data > 0.5) == (y == 1)
            for x, y in zip(data.X, data.y, strict=True)
        )
    assert correct / data.N >= THRESHOLD, (
        f"{dataset}: the trained network labels {correct} of {data.N} points correctly; "
        f"at least {THRESHOLD:.0%} is needed"
    )
