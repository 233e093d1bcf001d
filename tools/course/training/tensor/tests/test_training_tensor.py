"""Task 2.5 is graded by training your network in `mt_examples/train_tensor.py`.

Grading runs `python train_tensor.py --dataset D --optimizer adam --epochs 100` (50 points,
hidden 10, seed 0, the simple backend) for each D of simple, split and xor. On each, the
trained network must label at least 90% of the points correctly (a correct network labels
them all, in about 10 s per dataset), within the task's time limit.
"""

import pytest

from minitorch.autodiff import no_grad
from minitorch.tensor import backend, tensor

pytestmark = pytest.mark.task2_5
BACKEND = "simple"
ARGS = ["--optimizer", "adam", "--epochs", "100", "--seed", "0", "--backend", BACKEND]


@pytest.mark.parametrize("dataset", ["simple", "split", "xor"])
def test_the_network_learns(dataset, training_script, toy_grade) -> None:
    train_tensor = training_script("train_tensor")
    result = train_tensor.main(["--dataset", dataset, "--log-every", "0", "--no-progress", *ARGS])

    def labels(points):
        out = result.model.forward(tensor(points, backend=backend(BACKEND)))
        return out.to_numpy()[:, 0] > 0.5

    with no_grad():
        toy_grade(dataset, labels)
