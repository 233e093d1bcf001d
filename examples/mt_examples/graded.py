"""How the course grades the networks of the training tasks (1.5, 2.5, 3.5 and 4.5).

The toy tasks (1.5, 2.5, 3.5): grading trains your network with the task's training script
and options on each of the ``DATASETS`` (``POINTS`` points, seed ``SEED``), then counts the
*held-out* points the trained network labels correctly: ``HELD_OUT_POINTS`` other points of
the same dataset, drawn with a seed of the course's that you do not have
(``held_out_seed``; when you run this module, ``PRACTICE_SEED``), never the points it
trained on. At least ``THRESHOLD`` of them on every dataset: a network that learned the
shape of the classes passes, one that remembers its training points does not. Task 4.5
(``NETWORKS``): grading trains each network with its script on the first items of the real
data (``subset.GRADED``) and measures its accuracy on the held-out
images or sentences against the network's threshold. Task 0.5 (``MANUAL``) trains nothing:
``python -m mt_examples.graded task0_5`` scores the weights exported from its script's page
(``run_manual``), as grading does. The course's grading tests import
this module, so what runs here is what grading runs::

    python -m mt_examples.graded task2_5                    # as graded: every dataset
    python -m mt_examples.graded task2_5 --dataset xor      # one dataset
    python -m mt_examples.graded task2_5 --epochs 5         # a quick try (not as graded)
    python -m mt_examples.graded task4_5 --dataset mnist    # the data as --download fetched it

Run it from the folder that holds ``mt_examples/``. It prints each dataset's accuracy
against the threshold and exits with status 0 when every dataset passes, else 1. Training
runs the code of the earlier tasks: where one is not done yet (its stub raises
``NotImplementedError("Task X.Y: ...")``) it says so in one line and exits with status 1.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "DATASETS",
    "HELD_OUT_ENV",
    "HELD_OUT_POINTS",
    "MANUAL",
    "NETWORKS",
    "POINTS",
    "PRACTICE_SEED",
    "SEED",
    "TASKS",
    "THRESHOLD",
    "Score",
    "Network",
    "ToyTask",
    "command",
    "held_out_seed",
    "labels",
    "main",
    "mnist_score",
    "score",
    "score_network",
    "sentiment_score",
    "train",
    "train_network",
]

#: The fraction of the points a trained network must label correctly, on every dataset.
THRESHOLD = 0.9
#: The toy datasets a network is graded on.
DATASETS = ("simple", "split", "xor")
#: Points per dataset, and the seed of the data and of the initial weights.
POINTS = 50
SEED = 0
#: Held-out points per dataset a trained network is scored on (more than it trains on:
#: a correct network's accuracy on them varies less from one draw to the next).
HELD_OUT_POINTS = 500
#: The seed of the held-out points this module scores on when you run it; grading draws
#: its own with a seed of the course's (``held_out_seed``).
PRACTICE_SEED = 1
#: Where grading gives the seed of its held-out points (the test process only).
HELD_OUT_ENV = "MT_GRADED_SEED"


def held_out_seed() -> int:
    """The seed of the points a trained network is scored on (never ``SEED``'s)."""
    raw = os.environ.get(HELD_OUT_ENV)
    if raw is None:
        return PRACTICE_SEED
    try:
        seed = int(raw)
    except ValueError:
        raise ValueError(f"${HELD_OUT_ENV} must be an integer seed, got {raw!r}") from None
    if seed == SEED:
        raise ValueError(f"${HELD_OUT_ENV} is the training seed {SEED}: the points must differ")
    return seed


@dataclass(frozen=True)
class ToyTask:
    """A toy training task: the script that trains the network and its graded options."""

    script: str
    options: tuple[str, ...]
    backend: str | None  # a tensor backend's name, None for Scalars

    def argv(self, dataset: str, epochs: int | None = None) -> list[str]:
        """The script's command line for ``dataset`` (``epochs``: a shorter run)."""
        options = list(self.options)
        if epochs is not None:
            options[options.index("--epochs") + 1] = str(epochs)
        return ["--dataset", dataset, "--points", str(POINTS), "--seed", str(SEED), *options]


_TOY = ("--optimizer", "adam", "--epochs", "100")
TASKS = {
    "task1_5": ToyTask("train_scalar", _TOY, None),
    "task2_5": ToyTask("train_tensor", (*_TOY, "--backend", "simple"), "simple"),
    "task3_5": ToyTask("train_tensor", (*_TOY, "--backend", "fast", "--hidden", "100"), "fast"),
}
"""The graded settings of each toy training task, by its id."""

MANUAL = {"task0_5": "run_manual"}
"""Task 0.5 trains nothing: its script scores the exported weights as grading does."""


@dataclass(frozen=True)
class Score:
    """How many of a dataset's points a trained network labels correctly."""

    dataset: str
    correct: int
    total: int
    threshold: float = THRESHOLD
    items: str = "points"

    @property
    def passed(self) -> bool:
        """Whether the network reaches ``threshold``."""
        return self.correct >= self.threshold * self.total

    @property
    def message(self) -> str:
        """One line: the accuracy against the threshold."""
        verdict = "pass" if self.passed else "FAIL"
        return (
            f"{self.dataset}: the trained network labels {self.correct} of {self.total} "
            f"{self.items} correctly ({self.correct / self.total:.1%}); at least "
            f"{self.threshold:.0%} is needed: {verdict}"
        )


def command(task: ToyTask, dataset: str, epochs: int | None = None) -> str:
    """The shell command that trains ``task``'s network on ``dataset`` as grading does."""
    return f"python {task.script}.py {' '.join(task.argv(dataset, epochs))}"


def train(task: ToyTask, script: ModuleType, dataset: str, epochs: int | None = None) -> Any:
    """Train with ``script``'s ``main`` and the graded options; return its result."""
    return script.main([*task.argv(dataset, epochs), "--log-every", "0", "--no-progress"])


def labels(task: ToyTask, model: Any) -> Callable[[list[list[float]]], list[bool]]:
    """``labels(points)``: whether the trained ``model`` puts each point in class 1."""
    from minitorch.autodiff import no_grad

    if task.backend is None:

        def scalar_labels(points: list[list[float]]) -> list[bool]:
            with no_grad():
                return [bool(model.forward(x).data > 0.5) for x in points]

        return scalar_labels

    from minitorch.tensor import backend, tensor

    def tensor_labels(points: list[list[float]]) -> list[bool]:
        with no_grad():
            out = model.forward(tensor(points, backend=backend(task.backend))).to_numpy()
        return [bool(p > 0.5) for p in out[:, 0]]

    return tensor_labels


def score(
    dataset: str, label: Callable[[list[list[float]]], list[bool]], seed: int | None = None
) -> Score:
    """Count the held-out points of ``dataset`` that ``label`` puts in their class.

    The ``HELD_OUT_POINTS`` points are drawn with ``seed`` (default: :func:`held_out_seed`);
    ``seed=SEED`` counts the ``POINTS`` training points themselves (task 0.5, whose weights
    are set by hand on the points its page shows).
    """
    from mt_examples.toy import ToyConfig, make_data

    seed = held_out_seed() if seed is None else seed
    points = POINTS if seed == SEED else HELD_OUT_POINTS
    data, _ = make_data(ToyConfig(dataset, points=points, seed=seed))
    predicted = label(data.X)
    if len(predicted) != data.N:
        raise ValueError(f"{dataset}: {len(predicted)} labels for {data.N} points")
    correct = sum(bool(p) == (y == 1) for p, y in zip(predicted, data.y, strict=True))
    return Score(dataset, correct, data.N, items="points" if seed == SEED else "held-out points")


@dataclass(frozen=True)
class Network:
    """A network of task 4.5: its script, graded options and the accuracy it must reach."""

    dataset: str  # the name of its data (``mnist``, ``sst2``)
    script: str
    options: tuple[str, ...]
    threshold: float

    def argv(self, data_dir: Path, out_dir: Path, epochs: int | None = None) -> list[str]:
        """The script's command line on the subset in ``data_dir`` (``epochs``: shorter)."""
        options = list(self.options)
        if epochs is not None:
            options[options.index("--epochs") + 1] = str(epochs)
        out = ["--out-dir", str(out_dir)] if self.dataset == "mnist" else []
        return ["--data-dir", str(data_dir), *options, *out]


NETWORKS = {
    "task4_5": (
        Network("mnist", "train_mnist", ("--epochs", "3", "--no-plot"), 0.75),
        Network("sst2", "train_sentiment", ("--epochs", "2"), 0.65),
    ),
}
"""The networks of task 4.5, trained on the subset ``subset.GRADED`` of the real data."""


def train_network(
    net: Network,
    script: ModuleType,
    data_dir: Path,
    out_dir: Path,
    epochs: int | None = None,
    progress: bool = False,
) -> Any:
    """Train ``net`` with ``script``'s ``main`` on the subset in ``data_dir``; its result."""
    quiet = [] if progress else ["--no-progress"]
    return script.main([*net.argv(data_dir, out_dir, epochs), *quiet])


def mnist_score(model: Any, data_dir: Path, threshold: float) -> Score:
    """Count the test images of the subset in ``data_dir`` that ``model`` labels correctly."""
    import numpy as np

    from minitorch.autodiff import no_grad
    from minitorch.nn import MNIST
    from minitorch.tensor import backend, from_numpy

    test = MNIST.load(data_dir, "test")
    model.eval()
    x = test.images.reshape(-1, 1, 28, 28).astype(np.float64) / 255.0
    with no_grad():
        out = model(from_numpy(x, backend=backend("fast"))).to_numpy()
    correct = int(np.sum(np.argmax(out, axis=1) == test.labels))
    return Score("mnist", correct, len(test.labels), threshold, "test images")


def sentiment_score(model: Any, data_dir: Path, threshold: float) -> Score:
    """Count the dev sentences of the subset in ``data_dir`` that ``model`` labels correctly.

    Each sentence is read as the training script reads it: GloVe vectors of its first 60
    words (zeros for unknown words), padded to the widest kernel.
    """
    import numpy as np

    from minitorch.autodiff import no_grad
    from minitorch.nn import SST2, GloVe
    from minitorch.tensor import backend, from_numpy

    train, dev = SST2.load(data_dir, "train"), SST2.load(data_dir, "dev")
    words = {w for s in train.sentences + dev.sentences for w in s}
    glove = GloVe.load(data_dir, 50, vocab=words)
    table = np.vstack([glove.vectors, np.zeros((1, glove.dim))])  # the last row: unknown
    model.eval()
    correct = 0
    for sentence, label in zip(dev.sentences, dev.labels, strict=True):
        ids = [glove.index.get(w, len(glove.index)) for w in sentence[:60]]
        ids += [len(glove.index)] * (5 - len(ids))  # at least the widest kernel
        x = np.ascontiguousarray(table[ids].T[None])  # (1, 50, length)
        with no_grad():
            out = model(from_numpy(x, backend=backend("fast"))).to_numpy()
        correct += int(np.argmax(out[0]) == label)
    return Score("sst2", correct, len(dev.labels), threshold, "dev sentences")


def score_network(net: Network, model: Any, data_dir: Path) -> Score:
    """Score ``net``'s trained ``model`` on the held-out part of the subset in ``data_dir``."""
    scorer = mnist_score if net.dataset == "mnist" else sentiment_score
    return scorer(model, data_dir, net.threshold)


def _available(task: str) -> bool:
    """Whether the scripts ``task`` trains are here (a starter has its week's only)."""
    if task in MANUAL:
        scripts = [MANUAL[task]]
    elif task in TASKS:
        scripts = [TASKS[task].script]
    else:
        scripts = [n.script for n in NETWORKS[task]]
    return all(importlib.util.find_spec(f"mt_examples.{s}") is not None for s in scripts)


def _main_networks(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from mt_examples.subset import GRADED, DataError, make_subset, source_dir

    nets = [n for n in NETWORKS[args.task] if args.dataset in (None, n.dataset)]
    if not nets:
        names = ", ".join(n.dataset for n in NETWORKS[args.task])
        parser.error(f"{args.task} trains on {names}, not {args.dataset}")
    source = source_dir(Path(args.data_dir) if args.data_dir else None) or Path("data")
    scores = []
    with tempfile.TemporaryDirectory(prefix="mt-graded-") as tmp:
        subset = Path(tmp) / "data"
        wanted = {k: n for k, n in GRADED.items() if k.startswith(tuple(x.dataset for x in nets))}
        try:
            make_subset(source, subset, wanted)
        except DataError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        counts = ", ".join(f"{n} of {k}" for k, n in wanted.items())
        print(f"graded subset of {source}: the first {counts}", flush=True)
        for net in nets:
            script = importlib.import_module(f"mt_examples.{net.script}")
            argv = net.argv(subset, Path(tmp), args.epochs)
            print(f"$ python {net.script}.py {' '.join(argv)}", flush=True)
            result = train_network(net, script, subset, Path(tmp), args.epochs, progress=True)
            scores.append(score_network(net, result["model"], subset))
            print(scores[-1].message, flush=True)
    return _verdict(scores, args.epochs, [n.dataset for n in NETWORKS[args.task]])


def _unfinished(task: str, error: NotImplementedError) -> int:
    """Say in one line which task's stub stopped the training of ``task``; status 1."""
    text = " ".join(str(error).split()) or "NotImplementedError"
    found = re.search(r"\bTask (\d+\.\d+)", text)
    which = f"task {found.group(1)}" if found else "a task"
    print(
        f"error: cannot train {task}: it runs the code of {which}, which is not done yet "
        f"(NotImplementedError: {text})",
        file=sys.stderr,
    )
    return 1


def _verdict(scores: list[Score], epochs: int | None, graded: Sequence[str]) -> int:
    if epochs is not None:
        print(f"(trained {epochs} epochs, not the graded number)")
    passed = sum(s.passed for s in scores)
    print(f"{passed} of {len(scores)} datasets pass (grading trains on {', '.join(graded)})")
    return 0 if passed == len(scores) else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Train a task's network as grading does; print each dataset's score."""
    tasks = sorted([*TASKS, *NETWORKS, *MANUAL])
    parser = argparse.ArgumentParser(
        prog="python -m mt_examples.graded",
        description="Train a training task's network as grading does, and score it.",
    )
    parser.add_argument("task", choices=tasks, help="the training task")
    parser.add_argument(
        "--dataset",
        type=str.lower,
        choices=[*DATASETS, *(n.dataset for nets in NETWORKS.values() for n in nets)],
        help="only this dataset",
    )
    parser.add_argument("--epochs", type=int, help="fewer epochs, for a quick try (not graded)")
    parser.add_argument(
        "--data-dir",
        help="task 4.5: the data --download fetched (default: $MINITORCH_DATA, else ./data)",
    )
    args = parser.parse_args(argv)
    if args.epochs is not None and args.epochs < 1:
        parser.error(f"--epochs must be a positive int, got {args.epochs}")
    if not _available(args.task):
        parser.error(f"{args.task}'s training script is not in this folder's mt_examples/")
    try:
        return _main(args, parser)
    except NotImplementedError as e:  # a starter's stub: an earlier task is not done
        return _unfinished(args.task, e)


def _main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.task in MANUAL:
        if args.dataset or args.epochs or args.data_dir:
            parser.error(f"{args.task} takes no options: it scores the exported weights")
        return int(importlib.import_module(f"mt_examples.{MANUAL[args.task]}").main([]))
    if args.task in NETWORKS:
        return _main_networks(args, parser)
    if args.data_dir is not None:
        parser.error(f"--data-dir is for task 4.5; {args.task} trains on generated points")
    if args.dataset is not None and args.dataset not in DATASETS:
        parser.error(f"{args.task} trains on {', '.join(DATASETS)}, not {args.dataset}")
    task = TASKS[args.task]
    script = importlib.import_module(f"mt_examples.{task.script}")
    print(
        f"(scored on {HELD_OUT_POINTS} held-out points per dataset, seed {held_out_seed()}, "
        f"not the {POINTS} it trains on; grading draws its own)",
        flush=True,
    )
    scores = []
    for dataset in [args.dataset] if args.dataset else DATASETS:
        print(f"$ {command(task, dataset, args.epochs)}", flush=True)
        result = train(task, script, dataset, args.epochs)
        scores.append(score(dataset, labels(task, result.model)))
        print(scores[-1].message, flush=True)
    return _verdict(scores, args.epochs, DATASETS)


if __name__ == "__main__":
    sys.exit(main())
