"""Task 4.5 is graded by training your two networks on a fixed subset of the real data.

- MNIST: `python train_mnist.py --epochs 3` on the first 2,000 training images must reach
  75% accuracy on the first 1,000 test images (a correct network: 84-85%).
- SST-2: `python train_sentiment.py --epochs 2` on the first 4,000 training phrases must
  reach 65% accuracy on the 872 dev sentences (a correct network: 68-75%).

Run the same training and scoring yourself, on the data the scripts' `--download` fetched:
`python -m mt_examples.graded task4_5` (add `--dataset mnist` or `--dataset sst2` for one
network) makes the subset and prints each network's accuracy against its threshold.

Grading uses the course's fast convolution (this task grades your networks, not your
kernels): each run takes seconds there, within the task's time limit. With your plain
`conv_simple.py` a training step costs about 0.2 s per image on 2 cores (and each epoch
ends with a pass over the test images), so the graded run is long here: first train on a
small `--train-size` to see the loss fall.
"""

from pathlib import Path

import pytest

from mt_examples import graded

pytestmark = pytest.mark.task4_5
# The subset beside the tests (the autograder bundle ships it; `course check` makes it).
DATA = Path(__file__).resolve().parents[1] / "data"
MNIST, SST2 = graded.NETWORKS["task4_5"]


def data(what: str) -> Path:
    if not (DATA / what).is_dir():
        pytest.skip(f"no {what} subset in {DATA} (course staff: set MINITORCH_DATA)")
    return DATA


@pytest.mark.parametrize("net", [MNIST, SST2], ids=["mnist", "sst2"])
def test_the_network_learns(net, tmp_path: Path, training_script) -> None:
    folder = data(net.dataset)
    result = graded.train_network(net, training_script(net.script), folder, tmp_path)
    score = graded.score_network(net, result["model"], folder)
    assert score.passed, score.message
