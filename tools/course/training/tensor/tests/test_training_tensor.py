"""Task 2.5 is graded by training your network in `mt_examples/train_tensor.py`.

Grading runs `python train_tensor.py --dataset D --optimizer adam --epochs 100` (50 points,
hidden 10, seed 0, the simple backend) for each D of simple, split and xor. On each, the
trained network must label at least 90% of the points correctly (a correct network labels
them all, in about 10 s per dataset), within the task's time limit.
"""

import importlib
from types import ModuleType

import numpy as np
import pytest

from minitorch.autodiff import no_grad
from minitorch.tensor import backend, tensor

pytestmark = pytest.mark.task2_5
BACKEND = "simple"
ARGS = ["--optimizer", "adam", "--epochs", "100", "--seed", "0", "--backend", BACKEND]
THRESHOLD = 0.9


def script(name: str) -> ModuleType:
    try:
        return importlib.import_module(f"mt_examples.{name}")
    except ModuleNotFoundError as e:
        pytest.fail(f"the submission has no mt_examples/{name}.py to train ({e})")


@pytest.mark.parametrize("dataset", ["simple", "split", "xor"])
def test_the_network_learns(dataset: str) -> None:
    train_tensor = script("train_tensor")
    toy = script("toy")
    argv = ["--dataset", dataset, "--log-every", "0", "--no-progress", *ARGS]
    result = train_tensor.main(argv)
    data, _ = toy.make_data(toy.ToyConfig(dataset, points=50, seed=0))
    with no_grad():
        p = result.model.forward(tensor(data.X, backend=backend(BACKEND)))
    correct = int(np.sum((p.to_numpy()[:, 0] > 0.5) == (np.asarray(data.y) == 1)))
    assert correct / data.N >= THRESHOLD, (
        f"{dataset}: the trained network labels {correct} of {data.N} points correctly; "
        f"at least {THRESHOLD:.0%} is needed"
    )
