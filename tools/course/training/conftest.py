"""Fixtures of the course's training tests, shared by every layer's ``tests/``.

The graded copy of a layer's tests has one generated ``conftest.py`` (``course.py``'s
``_test_tree``); this file's text is appended to it whenever the layer has training tests,
so each test file stays one file a bundle can ship.
"""

import importlib
from collections.abc import Callable
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
