"""Fixtures of the course's training tests, shared by every layer's ``tests/``.

The graded copy of a layer's tests has one generated ``conftest.py`` (``course.py``'s
``_test_tree``); this file's text is appended to it whenever the layer has training tests,
so each test file stays one file a bundle can ship.
"""

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

#: What a network trained on a toy dataset (tasks 1.5, 2.5, 3.5) must label correctly.
TOY_THRESHOLD = 0.9


@pytest.fixture
def training_script() -> Callable[[str], ModuleType]:
    """``load(name)``: the submission's ``mt_examples.<name>``, or a failure naming it."""

    def load(name: str) -> ModuleType:
        try:
            return importlib.import_module(f"mt_examples.{name}")
        except ModuleNotFoundError as e:
            pytest.fail(f"the submission has no mt_examples/{name}.py to train ({e})")

    return load


@pytest.fixture
def toy_grade(
    training_script: Callable[[str], ModuleType],
) -> Callable[[str, Callable[[Any], Any]], None]:
    """``grade(dataset, labels)``: check a trained network on the toy points it is graded on.

    The points are the course's ``toy.make_data`` (50 points, seed 0); ``labels(X)`` says,
    for each point of ``X`` (a list of ``[x1, x2]``), whether the network puts it in class
    1. At least ``TOY_THRESHOLD`` of them must be right.
    """
    toy = training_script("toy")

    def grade(dataset: str, labels: Callable[[Any], Any]) -> None:
        data, _ = toy.make_data(toy.ToyConfig(dataset, points=50, seed=0))
        predicted = np.asarray(labels(data.X), dtype=bool).reshape(-1)
        correct = int(np.sum(predicted == (np.asarray(data.y) == 1)))
        assert correct / data.N >= TOY_THRESHOLD, (
            f"{dataset}: the trained network labels {correct} of {data.N} points correctly; "
            f"at least {TOY_THRESHOLD:.0%} is needed"
        )

    return grade
