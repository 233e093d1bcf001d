"""Task 1.5 is graded by training your network in `mt_examples/train_scalar.py`.

Grading runs `python train_scalar.py --dataset D --points 50 --seed 0 --optimizer adam
--epochs 100` for each D of simple, split and xor. On each, the trained network must label
at least 90% of 500 held-out points (drawn with the course's own seed, never the 50 it
trained on) correctly (a correct network labels 94-99% of them, in about 3 s per dataset),
within the task's time limit.

Run the same training and scoring yourself: `python -m mt_examples.graded task1_5` prints
each dataset's accuracy on practice points of its own against the threshold.
"""

import pytest

from mt_examples import graded

pytestmark = pytest.mark.task1_5
TASK = graded.TASKS["task1_5"]


@pytest.mark.parametrize("dataset", graded.DATASETS)
def test_the_network_learns(dataset, training_script) -> None:
    result = graded.train(TASK, training_script(TASK.script), dataset)
    score = graded.score(dataset, graded.labels(TASK, result.model))
    assert score.passed, score.message
