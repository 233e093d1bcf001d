"""Task 4.5 is graded by training your two networks on a fixed subset of the real data.

- MNIST: `python train_mnist.py --epochs 3` on the first 2,000 training images must reach
  75% accuracy on the first 1,000 test images (a correct network: 84-85%).
- SST-2: `python train_sentiment.py --epochs 2` on the first 4,000 training phrases must
  reach 65% accuracy on the 872 dev sentences (a correct network: 68-75%).

Grading uses the course's fast convolution (this task grades your networks, not your
kernels): each run takes seconds there, within the task's time limit. With your plain
`conv_simple.py` a training step costs about 0.2 s per image on 2 cores (and each epoch
ends with a pass over the test images), so train on a small `--train-size` to see the loss
fall.
"""

from pathlib import Path

import numpy as np
import pytest

from minitorch.autodiff import no_grad
from minitorch.nn import MNIST, SST2, GloVe
from minitorch.tensor import backend, from_numpy

pytestmark = pytest.mark.task4_5
# The subset beside the tests (the autograder bundle ships it; `course check` makes it).
DATA = Path(__file__).resolve().parents[1] / "data"
MNIST_THRESHOLD = 0.75
SST2_THRESHOLD = 0.65


def data(what: str) -> Path:
    if not (DATA / what).is_dir():
        pytest.skip(f"no {what} subset in {DATA} (course staff: set MINITORCH_DATA)")
    return DATA


def test_the_mnist_network_learns(tmp_path: Path, training_script) -> None:
    train_mnist = training_script("train_mnist")
    folder = data("mnist")
    argv = ["--data-dir", str(folder), "--epochs", "3", "--no-progress", "--no-plot"]
    result = train_mnist.main([*argv, "--out-dir", str(tmp_path)])
    test = MNIST.load(folder, "test")
    model = result["model"]
    model.eval()
    x = test.images.reshape(-1, 1, 28, 28).astype(np.float64) / 255.0
    with no_grad():
        out = model(from_numpy(x, backend=backend("fast"))).to_numpy()
    accuracy = float(np.mean(np.argmax(out, axis=1) == test.labels))
    assert accuracy >= MNIST_THRESHOLD, (
        f"MNIST: test accuracy {accuracy:.1%} on {len(test.labels)} images; at least "
        f"{MNIST_THRESHOLD:.0%} is needed"
    )


def test_the_sentiment_network_learns(training_script) -> None:
    train_sentiment = training_script("train_sentiment")
    folder = data("sst2")
    result = train_sentiment.main(["--data-dir", str(folder), "--epochs", "2", "--no-progress"])
    train, dev = SST2.load(folder, "train"), SST2.load(folder, "dev")
    words = {w for s in train.sentences + dev.sentences for w in s}
    glove = GloVe.load(folder, 50, vocab=words)
    table = np.vstack([glove.vectors, np.zeros((1, glove.dim))])  # the last row: unknown
    model = result["model"]
    model.eval()
    correct = 0
    for sentence, label in zip(dev.sentences, dev.labels, strict=True):
        ids = [glove.index.get(w, len(glove.index)) for w in sentence[:60]]
        ids += [len(glove.index)] * (5 - len(ids))  # at least the widest kernel
        x = np.ascontiguousarray(table[ids].T[None])  # (1, 50, length)
        with no_grad():
            out = model(from_numpy(x, backend=backend("fast"))).to_numpy()
        correct += int(np.argmax(out[0]) == label)
    accuracy = correct / len(dev.labels)
    assert accuracy >= SST2_THRESHOLD, (
        f"SST-2: dev accuracy {accuracy:.1%} on {len(dev.labels)} sentences; at least "
        f"{SST2_THRESHOLD:.0%} is needed"
    )
