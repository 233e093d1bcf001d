"""Train a 1-D convolutional sentiment classifier on SST-2 over GloVe embeddings (module 4).

Each sentence becomes a ``(50, length)`` matrix of fixed 50-d GloVe vectors (zeros for
unknown words and padding). Three ``conv1d`` layers of widths 3, 4 and 5 (100 filters each,
ReLU) run over it; each is max-pooled over time, the three ``(batch, 100)`` features are
added, and dropout, a linear layer 100->2 and log-softmax give the class probabilities
(Kim, 2014, as the course builds it). Trained with Adam on the negative log-likelihood;
after each epoch the accuracy on the 872 sentences of the SST-2 dev set is printed.

    python train_sentiment.py --download             # fetch SST-2 and GloVe, train
    python train_sentiment.py --train-size 5000 --epochs 1

(from the folder that holds ``mt_examples/``).

The data folder holds ``sst2/{train,dev}.tsv`` and ``glove/glove.6B.50d.txt`` (or a
vocabulary-restricted ``glove/glove50_sst2.txt.gz``); SST-2 is 7 MB, GloVe's archive 822 MB.
``main(argv)`` and ``train(SentimentConfig(...))`` can also be imported.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from minitorch.autodiff import Adam, no_grad
from minitorch.nn import (
    SST2,
    Conv1d,
    DatasetError,
    GloVe,
    Linear,
    dropout,
    logsoftmax,
)
from minitorch.nn import max as tensor_max
from minitorch.operators import Module
from minitorch.tensor import Tensor, TensorBackend, from_numpy
from minitorch.tensor import backend as find_backend
from mt_examples.support import NNConfig, nn_fit, nn_parser, nn_run, positive_int


@dataclass(frozen=True)
class SentimentConfig(NNConfig):
    """What ``train`` trains: ``NNConfig`` with this script's defaults and options.

    Attributes:
        filters: output channels of each convolution.
        max_length: cut sentences to this many tokens.
    """

    epochs: int = 3
    batch_size: int = 64
    filters: int = 100
    max_length: int = 60


DEFAULTS = SentimentConfig()
KERNEL_WIDTHS = (3, 4, 5)


def check_max_length(max_length: int) -> None:
    """Refuse a ``max_length`` below the widest kernel (no convolution output would fit).

    Raises:
        ValueError: naming ``--max-length`` and the smallest value that works.
    """
    widest = max(KERNEL_WIDTHS)
    if max_length < widest:
        raise ValueError(
            f"--max-length {max_length} is shorter than the widest convolution kernel "
            f"({widest} tokens): use --max-length {widest} or more"
        )


class SentimentCNN(Module):
    """Convolutions of widths 3, 4, 5 over embeddings, max over time, linear to 2 classes.

    Args:
        embedding_dim: length of a word vector (the input's channels).
        filters: output channels of each convolution.
        rate: dropout rate before the linear layer.
        backend: where the parameters live.
        seed: seeds the initial weights and the dropout masks.
    """

    def __init__(
        self,
        embedding_dim: int = 50,
        filters: int = 100,
        rate: float = 0.25,
        backend: TensorBackend | None = None,
        seed: int | None = 0,
    ) -> None:
        super().__init__()
        be = backend if backend is not None else find_backend("fast")
        self.rng = np.random.default_rng(seed)
        self.rate = rate
        self.filters = filters
        self.conv3 = Conv1d(embedding_dim, filters, 3, be, self.rng)
        self.conv4 = Conv1d(embedding_dim, filters, 4, be, self.rng)
        self.conv5 = Conv1d(embedding_dim, filters, 5, be, self.rng)
        self.linear = Linear(filters, 2, be, self.rng)

    def forward(self, x: Tensor) -> Tensor:
        """Map ``(batch, embedding_dim, length)`` embeddings to ``(batch, 2)`` log-probabilities."""
        # BEGIN SOLUTION task4_5
        batch = x.shape[0]
        h = tensor_max(self.conv3(x).relu(), 2) + tensor_max(self.conv4(x).relu(), 2)
        h = (h + tensor_max(self.conv5(x).relu(), 2)).view(batch, self.filters)
        h = dropout(h, self.rate, ignore=not self.training, seed=self.rng)
        return logsoftmax(self.linear(h), 1)
        # END SOLUTION


class Vocabulary:
    """Token ids for sentences and the embedding matrix, with a zero row for unknown words."""

    def __init__(self, glove: GloVe) -> None:
        self.glove = glove
        self.unknown = len(glove)
        self.matrix = np.vstack([glove.vectors, np.zeros((1, glove.dim))])

    def ids(self, sentence: Sequence[str]) -> npt.NDArray[np.int64]:
        """Return the row of each token (``unknown`` for words without a vector)."""
        index = self.glove.index
        return np.array([index.get(w, self.unknown) for w in sentence], dtype=np.int64)

    def batch(
        self, sentences: Sequence[npt.NDArray[np.int64]], max_length: int
    ) -> npt.NDArray[np.float64]:
        """Embed a batch as ``(batch, dim, length)``, zero padded to the longest sentence.

        ``length`` is at least the widest kernel (so every convolution fits) and at most
        ``max_length`` (longer sentences are cut).
        """
        length = min(max_length, max([len(s) for s in sentences] + [KERNEL_WIDTHS[-1]]))
        ids = np.full((len(sentences), length), self.unknown, dtype=np.int64)
        for row, s in enumerate(sentences):
            ids[row, : min(len(s), length)] = s[:length]
        return np.ascontiguousarray(self.matrix[ids].transpose(0, 2, 1))


def accuracy(
    model: SentimentCNN,
    vocab: Vocabulary,
    sentences: Sequence[npt.NDArray[np.int64]],
    labels: npt.NDArray[np.int64],
    backend: TensorBackend,
    max_length: int,
    batch_size: int = 128,
) -> float:
    """Fraction of ``sentences`` classified correctly (eval mode, no gradients)."""
    model.eval()
    correct = 0
    with no_grad():
        for start in range(0, len(labels), batch_size):
            x = vocab.batch(sentences[start : start + batch_size], max_length)
            out = model(from_numpy(x, backend=backend)).to_numpy()
            correct += int(np.sum(np.argmax(out, axis=1) == labels[start : start + batch_size]))
    model.train()
    return correct / max(1, len(labels))


def train(
    config: SentimentConfig = DEFAULTS, *, progress: bool = True, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Train ``SentimentCNN`` on SST-2 with Adam; return per-epoch figures, timings and the model.

    Args:
        config: what to train.
        progress: show a progress bar per epoch.
        log: where the per-epoch lines go.

    Raises:
        ValueError: if ``max_length`` is below the widest kernel (before the data is read).
        DatasetError: if a data file is missing, corrupt or empty.
        DivergedError: if the loss becomes NaN or infinite.
    """
    c = config
    check_max_length(c.max_length)
    be = find_backend(c.backend) if isinstance(c.backend, str) else c.backend
    train_set = SST2.load(c.data_dir, "train")
    dev_set = SST2.load(c.data_dir, "dev")
    words = {w for s in train_set.sentences + dev_set.sentences for w in s}
    glove = GloVe.load(c.data_dir, 50, vocab=words)
    vocab = Vocabulary(glove)
    rng = np.random.default_rng(c.seed)
    order = rng.permutation(len(train_set))
    if c.train_size is not None:
        order = order[: c.train_size]
    x_train = [vocab.ids(train_set.sentences[i]) for i in order]
    y_train = train_set.labels[order]
    if not len(y_train) or not len(dev_set.labels):
        split = "train" if not len(y_train) else "dev"
        raise DatasetError(f"the SST-2 {split} split has no phrases: nothing to train or measure")
    x_dev = [vocab.ids(s) for s in dev_set.sentences]
    y_dev = dev_set.labels
    model = SentimentCNN(
        glove.dim, c.filters, c.dropout, be, None if c.seed is None else c.seed + 1
    )
    opt = Adam(model.parameters(), lr=c.lr)

    def make_batch(idx: npt.NDArray[np.int64]) -> tuple[Tensor, npt.NDArray[np.int64]]:
        x = vocab.batch([x_train[i] for i in idx], c.max_length)
        return from_numpy(x, backend=be), y_train[idx]

    def measure(epoch: int) -> tuple[dict[str, float], str]:
        acc = accuracy(model, vocab, x_dev, y_dev, be, c.max_length)
        return {"dev_accuracy": acc}, f"dev acc {acc:.4f} ({len(y_dev)} sentences)"

    fitted = nn_fit(
        model, opt, make_batch, len(y_train), measure,
        epochs=c.epochs, batch_size=c.batch_size, rng=rng, progress=progress, log=log,
    )  # fmt: skip
    dev = fitted["history"].get("dev_accuracy", [float("nan")])
    return {
        **fitted,
        "backend": be.name,
        "train_phrases": len(y_train),
        "dev_sentences": len(y_dev),
        "dev_accuracy": dev[-1],
        "best_dev_accuracy": max(dev),
        "glove_coverage": len(glove) / max(1, len(words)),
    }


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser of this script."""
    description = "Train a conv1d sentiment classifier on SST-2 with GloVe embeddings."
    p = nn_parser("train_sentiment", description, DEFAULTS)
    add = p.add_argument
    add("--filters", type=positive_int, default=DEFAULTS.filters,
        help="output channels of each convolution")  # fmt: skip
    add("--max-length", type=positive_int, default=DEFAULTS.max_length,
        help=f"cut sentences to this many tokens (at least {max(KERNEL_WIDTHS)}, the widest "
        "kernel)")  # fmt: skip
    add("--train-size", type=positive_int, help="train on this many phrases (default: all 67,349)")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Parse ``argv``, train, print a summary; return the result of ``train``.

    Raises:
        SystemExit: 2 for bad arguments or missing, corrupt or empty data; 1 when the loss
            diverges.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_max_length(args.max_length)  # before any download or data is read
    except ValueError as e:
        parser.error(str(e))
    # GloVe's 822 MB are fetched only if its vectors are missing.
    result = nn_run(
        parser, args, "SST-2", train, DEFAULTS, [SST2, GloVe], (DatasetError, ValueError)
    )
    print(
        f"done: {result['train_phrases']} training phrases, dev accuracy "
        f"{result['dev_accuracy']:.2%} on {result['dev_sentences']} sentences (best epoch "
        f"{result['best_dev_accuracy']:.2%}); {result['seconds_per_epoch']:.1f} s/epoch"
    )
    return result
