"""What the course tool reads of a layer: its solution blocks and the tests course.toml lists."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .config import REPO, Calendar, Layer
from .markers import Block, find_blocks, task_number

__all__ = [
    "TASK_MESSAGE",
    "CourseError",
    "check_version",
    "is_scaffold",
    "listed",
    "scan_blocks",
    "script_blocks",
    "ignore_caches",
    "solution_only_tests",
    "test_names",
]

# Numba's CUDA simulator puts the thread and block ids before the message of an exception
# raised in a kernel.
TASK_MESSAGE = re.compile(r"^(?:tid=(?:\[[^\]]*\])? ctaid=(?:\[[^\]]*\])?: )?Task (\d+)\.(\d+): ")


class CourseError(RuntimeError):
    """The starter cannot be written (bad markers, lint errors in the result)."""


def scan_blocks(layer: Layer) -> dict[Path, list[Block]]:
    """Return the solution blocks of every source file of ``layer`` that has any."""
    out = {}
    for path in sorted(layer.src.rglob("*.py")):
        blocks = find_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
        if blocks:
            out[path] = blocks
    return out


def written_test_blocks(layer: Layer) -> dict[Path, list[Block]]:
    """The solution blocks of the layer's test files: the bodies a test-writing task writes.

    Raises:
        CourseError: if a block belongs to a task without ``tests-of`` in course.toml.
    """
    writing = layer.test_writing_ids
    out = {}
    for path in sorted((layer.path / "tests").rglob("*.py")):
        blocks = find_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
        for b in blocks:
            if b.task not in writing:
                raise CourseError(
                    f"{path.relative_to(REPO)}:{b.begin}: a solution block of {b.task} in a "
                    "test file, but course.toml gives that task no tests-of"
                )
        if blocks:
            out[path] = blocks
    return out


def script_blocks(layer: Layer, cal: Calendar) -> dict[Path, list[Block]]:
    """The solution blocks of the layer's training scripts, tagged with the layer's task.

    A script's markers name the first task of ``[scripts]``; in the starter of another of
    its tasks (train_tensor.py for task 3.5) each block is that task's.
    """
    out = {}
    for script, task in cal.scripts_of(layer.name).items():
        path = REPO / script
        blocks = find_blocks(path.read_text(encoding="utf-8"), script)
        out[path] = [_retag(b, task) for b in blocks]
    return out


def _retag(block: Block, task: str) -> Block:
    if block.task == task:
        return block
    text = block.message.removeprefix(f"Task {task_number(block.task)}: ")
    return replace(block, task=task, message=f"Task {task_number(task)}: {text}")


def check_version(layer: Layer) -> None:
    """The checkout's version of ``layer`` must be the one the calendar releases."""
    if layer.checkout_version() != layer.solution_version:
        raise CourseError(
            f"course.toml names {layer.package} {layer.solution_version} but the checkout "
            f"is {layer.checkout_version()}: update solution-version in course.toml"
        )


def test_names(nodeid: str) -> tuple[str, str, str]:
    """The names course.toml may list ``nodeid`` by: itself, its test, and its file."""
    return nodeid, nodeid.split("[")[0], nodeid.split("::")[0]


def listed(tests: tuple[str, ...], nodeid: str) -> bool:
    """Is ``nodeid`` one of ``tests`` ("file.py", "file.py::test" or "file.py::test[id]")?"""
    names = test_names(nodeid)
    return any(f"tests/{t}" in names for t in tests)


def is_scaffold(layer: Layer, nodeid: str) -> bool:
    """Is ``nodeid`` one of the layer's scaffold tests (course.toml)?"""
    return listed(layer.scaffold_tests, nodeid)


def ignore_caches(_dir: str, names: list[str]) -> set[str]:
    """A ``copytree`` filter that leaves out caches (``__pycache__``, ...)."""
    return {n for n in names if n in {"__pycache__", ".pytest_cache", ".hypothesis"}}


def solution_only_tests(layer: Layer) -> Callable[[str, list[str]], set[str]]:
    """A ``copytree`` filter that also leaves out the layer's solution-only test files."""
    tests = layer.path / "tests"
    skip = {(layer.path / rel).resolve() for rel in layer.solution_only}

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory).resolve()
        dropped = {n for n in names if (here / n) in skip and here.is_relative_to(tests)}
        return ignore_caches(directory, names) | dropped

    return ignore
