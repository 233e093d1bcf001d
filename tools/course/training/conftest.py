"""Fixtures of the course's training tests, shared by every layer's ``tests/``.

The graded copy of a layer's tests has one generated ``conftest.py`` (``course.py``'s
``_test_tree``); this file's text is appended to it whenever the layer has training tests,
so each test file stays one file a bundle can ship.
"""

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


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
def submitted_file() -> Callable[[str], Path]:
    """``find(rel)``: a file of the submission that is not code (``mt_examples/...``).

    When grading, the grader names a folder with the student's copies in
    ``$MTC_SUBMITTED`` (never the course's); elsewhere (the course's checks) it is the
    file beside the imported ``mt_examples``. A missing file fails the test, naming it.
    """

    def find(rel: str) -> Path:
        given = os.environ.get("MTC_SUBMITTED")
        if given:
            path = Path(given) / rel
        else:
            package = importlib.import_module("mt_examples")
            path = Path(next(iter(package.__path__))).parent / rel
        if not path.is_file():
            pytest.fail(f"the submission has no {rel} (see the README: how to write it)")
        return path

    return find
