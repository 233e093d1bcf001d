"""How the course grades the networks of the toy training tasks (1.5, 2.5 and 3.5).

Grading trains your network with the task's training script and options on each of the
``DATASETS`` (``POINTS`` points, seed ``SEED``), then counts the points the trained network
labels correctly: at least ``THRESHOLD`` of them on every dataset. The course's grading
tests import this module, so what runs here is what grading runs::

    python -m mt_examples.graded task2_5                    # as graded: every dataset
    python -m mt_examples.graded task2_5 --dataset xor      # one dataset
    python -m mt_examples.graded task2_5 --epochs 5         # a quick try (not as graded)

Run it from the folder that holds ``mt_examples/``. It prints each dataset's accuracy
against the threshold and exits with status 0 when every dataset passes, else 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = [
    "DATASETS",
    "POINTS",
    "SEED",
    "TASKS",
    "THRESHOLD",
    "Score",
    "ToyTask",
    "command",
    "labels",
    "main",
    "score",
    "train",
]

#: The fraction of the points a trained network must label correctly, on every dataset.
THRESHOLD = 0.9
#: The toy datasets a network is graded on.
DATASETS = ("simple", "split", "xor")
#: Points per dataset, and the seed of the data and of the initial weights.
POINTS = 50
SEED = 0


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


@dataclass(frozen=True)
class Score:
    """How many of a dataset's points a trained network labels correctly."""

    dataset: str
    correct: int
    total: int

    @property
    def passed(self) -> bool:
        """Whether the network reaches ``THRESHOLD``."""
        return self.correct >= THRESHOLD * self.total

    @property
    def message(self) -> str:
        """One line: the accuracy against the threshold."""
        verdict = "pass" if self.passed else "FAIL"
        return (
            f"{self.dataset}: the trained network labels {self.correct} of {self.total} points "
            f"correctly ({self.correct / self.total:.0%}); at least {THRESHOLD:.0%} is needed: "
            f"{verdict}"
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


def score(dataset: str, label: Callable[[list[list[float]]], list[bool]]) -> Score:
    """Count the graded points of ``dataset`` that ``label`` puts in their class."""
    from mt_examples.toy import ToyConfig, make_data

    data, _ = make_data(ToyConfig(dataset, points=POINTS, seed=SEED))
    predicted = label(data.X)
    if len(predicted) != data.N:
        raise ValueError(f"{dataset}: {len(predicted)} labels for {data.N} points")
    correct = sum(bool(p) == (y == 1) for p, y in zip(predicted, data.y, strict=True))
    return Score(dataset, correct, data.N)


def main(argv: Sequence[str] | None = None) -> int:
    """Train a task's network as grading does; print each dataset's score."""
    parser = argparse.ArgumentParser(
        prog="python -m mt_examples.graded",
        description="Train a toy training task's network as grading does, and score it.",
    )
    parser.add_argument("task", choices=sorted(TASKS), help="the training task")
    parser.add_argument("--dataset", choices=DATASETS, help="only this dataset")
    parser.add_argument("--epochs", type=int, help="fewer epochs, for a quick try (not graded)")
    args = parser.parse_args(argv)
    if args.epochs is not None and args.epochs < 1:
        parser.error(f"--epochs must be a positive int, got {args.epochs}")
    task = TASKS[args.task]
    script = importlib.import_module(f"mt_examples.{task.script}")
    scores = []
    for dataset in [args.dataset] if args.dataset else DATASETS:
        print(f"$ {command(task, dataset, args.epochs)}", flush=True)
        result = train(task, script, dataset, args.epochs)
        scores.append(score(dataset, labels(task, result.model)))
        print(scores[-1].message, flush=True)
    if args.epochs is not None:
        print(f"(trained {args.epochs} epochs, not the graded number)")
    passed = sum(s.passed for s in scores)
    print(f"{passed} of {len(scores)} datasets pass (grading trains on {', '.join(DATASETS)})")
    return 0 if passed == len(scores) else 1


if __name__ == "__main__":
    sys.exit(main())
