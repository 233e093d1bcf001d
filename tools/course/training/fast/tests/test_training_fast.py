"""Task 3.5 is graded by training your network in `mt_examples/train_tensor.py`, fast.

Grading runs `python train_tensor.py --backend fast --hidden 100 --dataset D --optimizer adam
--epochs 100` (50 points, seed 0) for each D of simple, split and xor, on the course's fast
backend (its tuned kernels: this task grades your network, not your kernels). On each,
the trained network must label at least 90% of the points correctly (a correct network
labels them all, in about a second per dataset once the kernels are compiled), within the
task's time limit.
"""

import pytest

from minitorch.autodiff import no_grad
from minitorch.tensor import backend, tensor

pytestmark = pytest.mark.task3_5
BACKEND = "fast"
ARGS = ["--optimizer", "adam", "--epochs", "100", "--seed", "0", "--backend", BACKEND]
ARGS += ["--hidden", "100"]


@pytest.mark.parametrize("dataset", ["simple", "split", "xor"])
def test_the_network_learns(dataset, training_script, toy_grade) -> None:
    train_tensor = training_script("train_tensor")
    result = train_tensor.main(["--dataset", dataset, "--log-every", "0", "--no-progress", *ARGS])

    def labels(points):
        out = result.model.forward(tensor(points, backend=backend(BACKEND)))
        return out.to_numpy()[:, 0] > 0.5

    with no_grad():
        toy_grade(dataset, labels)
