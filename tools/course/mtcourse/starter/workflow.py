"""The starter's workflow (``.github/workflows/tests.yml``) and each task's command."""

from __future__ import annotations

import ast
import functools
import json
import re

from ..config import REPO, Layer, Task
from ..layers import CourseError
from ..markers import task_number

__all__ = ["INSTALL", "graded_tasks", "python_m", "student_workflow", "task_command"]


def _workflow_pins() -> dict[str, str]:
    """``uses:`` references of checkout and setup-python, as pinned in ci.yml."""
    pins = {}
    text = (REPO / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    for m in re.finditer(r"uses: (actions/(?:checkout|setup-python)@[0-9a-f]{40} # \S+)", text):
        pins[m.group(1).split("@")[0]] = m.group(1)
    return pins


@functools.cache
def graded_tasks(table: str) -> frozenset[str]:
    """The keys of ``table`` in ``examples/mt_examples/graded.py``, read without running it.

    ``TASKS``: the toy training tasks, ``NETWORKS``: task 4.5's; ``python -m
    mt_examples.graded TASK`` trains either as grading does.
    """
    tree = ast.parse((REPO / "examples" / "mt_examples" / "graded.py").read_text("utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [ast.unparse(t) for t in node.targets] == [table]
            and isinstance(node.value, ast.Dict)
        ):
            return frozenset(ast.literal_eval(k) for k in node.value.keys if k is not None)
    raise CourseError(f"examples/mt_examples/graded.py has no {table} = {{...}}")


def task_command(task_id: str) -> str:
    """What a student runs to check a task: its tests, or a toy network's graded training.

    A training task's tests are not in the starter (grading trains the network), so its
    command trains and scores it as grading does.
    """
    if task_id in graded_tasks("TASKS") | graded_tasks("NETWORKS") | graded_tasks("MANUAL"):
        return f"python -m mt_examples.graded {task_id}"
    return f"pytest -m {task_id}"


def _workflow_step(task: Task) -> tuple[str, str]:
    """The name and command of a task's step in the starter's workflow.

    Task 4.5's graded command needs the real data (GloVe alone is 822 MB) and trains for
    long on the plain kernels, so its step runs the tests of the code its scripts use.
    """
    name = f"Task {task_number(task.id)}: {task.title}"
    if task.id in graded_tasks("NETWORKS"):
        return f"{name} (the layers and data readers its scripts use)", f"pytest -m {task.id}"
    return name, task_command(task.id)


def student_workflow(layer: Layer) -> str:
    """The starter's ``.github/workflows/tests.yml``: one step per task."""
    pins = _workflow_pins()
    steps = "".join(
        f"      - name: {json.dumps(_workflow_step(t)[0])}\n"
        "        if: ${{ !cancelled() }}\n"
        f"        run: {python_m(_workflow_step(t)[1])}\n"
        for t in layer.tasks
    )
    env = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in layer.test_env.items())
    return (
        f"# The tests of this week's tasks ({layer.package}), one step per task.\n"
        "name: tests\n\n"
        "on:\n  push:\n    branches: [main, master]\n  pull_request:\n  workflow_dispatch:\n\n"
        "permissions:\n  contents: read\n\n"
        "concurrency:\n  group: tests-${{ github.ref }}\n  cancel-in-progress: true\n\n"
        "jobs:\n  test:\n    runs-on: ubuntu-24.04\n    timeout-minutes: 30\n"
        + (f"    env:\n{env}" if env else "")
        + "    steps:\n"
        f"      - uses: {pins['actions/checkout']}\n"
        "        with:\n          persist-credentials: false\n"
        f"      - uses: {pins['actions/setup-python']}\n"
        '        with:\n          python-version: "3.12"\n'
        "      - name: Install the package and the test tools\n"
        f"        run: python -m pip install {INSTALL}\n"
        f"{steps}"
    )


def python_m(command: str) -> str:
    """``command`` run with ``python -m`` (a workflow's ``pytest`` may not be on PATH)."""
    return command if command.startswith("python ") else f"python -m {command}"


# How a student installs the starter: the lower layers' wheels come with it (wheels/), the
# third-party packages (numpy, numba, pytest, ...) from PyPI.
INSTALL = '--find-links wheels -e ".[test]"'
