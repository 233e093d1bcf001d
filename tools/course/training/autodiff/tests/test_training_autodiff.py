"""Task 1.5 is graded by training your network in `mt_examples/train_scalar.py`.

Grading runs `python train_scalar.py --dataset D --optimizer adam --epochs 100` (50 points,
seed 0) for each D of simple, split and xor. On each, the trained network must label at
least 90% of the points correctly (a correct network labels them all, in about 3 s per
dataset), within the task's time limit.
"""

import pytest

from minitorch.autodiff import no_grad

pytestmark = pytest.mark.task1_5
ARGS = ["--optimizer", "adam", "--epochs", "100", "--seed", "0", "--no-progress"]


@pytest.mark.parametrize("dataset", ["simple", "split", "xor"])
def test_the_network_learns(dataset, training_script, toy_grade) -> None:
    train_scalar = training_script("train_scalar")
    result = train_scalar.main(["--dataset", dataset, "--log-every", "0", *ARGS])
    with no_grad():
        toy_grade(dataset, lambda points: [result.model.forward(x).data > 0.5 for x in points])
