"""The MiniTorch course tool: write, prove and grade the weekly student starters.

    hatch run course:assign LAYER --out DIR      # the student starter of LAYER
    hatch run course:check LAYER | --all         # generate it and prove it right
    hatch run course:grade DIR --layer LAYER --out results.json
    hatch run course:autograder LAYER --out autograder.zip   # Gradescope's bundle
    hatch run course:week N [--json]             # the dates, starters and tags of week N
    hatch run course:mutants LAYER [--sample N]  # how many mutants the grader catches

See tools/course/README.md.
"""

from __future__ import annotations

import argparse
import ast
import copy
import functools
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli_w
from config import REPO, Calendar, CalendarError, Layer, Task, load_calendar
from grading import (
    PUBLIC_PART,
    GradeSpec,
    SubmissionError,
    check_imports,
    find_package,
    function_spans,
    grade_tasks,
    overlay,
    register,
)
from markers import Block, MarkerError, find_blocks, render, task_number
from packaging.requirements import Requirement
from runner import build_wheel, make_venv, run_pytest
from training_data import GRADED, DataError, make_subset, source_dir

__all__ = [
    "CourseError",
    "Starter",
    "assign",
    "autograder",
    "check",
    "grade",
    "grade_spec",
    "main",
    "scan_blocks",
    "script_blocks",
    "week_plan",
    "week_table",
]

# Numba's CUDA simulator puts the thread and block ids before the message of an exception
# raised in a kernel.
_TASK_MESSAGE = re.compile(r"^(?:tid=(?:\[[^\]]*\])? ctaid=(?:\[[^\]]*\])?: )?Task (\d+)\.(\d+): ")


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


# --------------------------------------------------------------------------------- assign


@dataclass
class Starter:
    """What ``assign`` wrote."""

    path: Path
    blocks: dict[str, int] = field(default_factory=dict)  # task id -> number of blocks


def _ignore(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n in {"__pycache__", ".pytest_cache", ".hypothesis"}}


def _solution_only_tests(layer: Layer) -> Callable[[str, list[str]], set[str]]:
    """A ``copytree`` filter that also leaves out the layer's solution-only test files."""
    tests = layer.path / "tests"
    skip = {(layer.path / rel).resolve() for rel in layer.solution_only}

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory).resolve()
        dropped = {n for n in names if (here / n) in skip and here.is_relative_to(tests)}
        return _ignore(directory, names) | dropped

    return ignore


def _root_pyproject() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as f:
        import tomllib

        return tomllib.load(f)


def _pin(requirements: Iterable[str], cal: Calendar) -> list[str]:
    """Pin every sibling requirement to the solution version the calendar names."""
    out = []
    for text in requirements:
        req = Requirement(text)
        name = req.name.removeprefix("mt-")
        if req.name.startswith("mt-") and req.name != "mt-root":  # mt-root keeps its range
            extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
            out.append(f"{req.name}{extras}=={cal.layer(name).solution_version}")
        else:
            out.append(text)
    return out


def _student_pyproject(layer: Layer, cal: Calendar, week: int | None) -> dict[str, Any]:
    data = layer.pyproject()
    project = data["project"]
    project["dependencies"] = _pin(project.get("dependencies", []), cal)
    extras = project.setdefault("optional-dependencies", {})
    for key, reqs in extras.items():
        extras[key] = _pin(reqs, cal)
    extras.setdefault("test", ["pytest>=8", "hypothesis>=6.100"])
    if week is not None:
        project["description"] = f"{project.get('description', '')} (student starter, week {week})"
    data["tool"]["hatch"]["build"]["targets"].pop("sdist", None)
    root = _root_pyproject()["tool"]
    pytest_ini = dict(root["pytest"]["ini_options"])
    pytest_ini["testpaths"] = ["tests"]
    pytest_ini["markers"] = [m for m in pytest_ini["markers"] if re.match(r"task\d", m)]
    ruff = dict(root["ruff"])
    ruff["src"] = ["src"]
    lint = dict(ruff["lint"])
    prefix = f"packages/{layer.package}/"
    lint["per-file-ignores"] = {
        k.removeprefix(prefix): v
        for k, v in lint.get("per-file-ignores", {}).items()
        if k.startswith(("**", prefix))
    }
    # The training scripts (mt_examples/, train_*.py) keep the examples' exemptions.
    for key, value in _root_pyproject()["tool"]["ruff"]["lint"].get("per-file-ignores", {}).items():
        if key == "examples/**":
            lint["per-file-ignores"]["mt_examples/**"] = value
            lint["per-file-ignores"]["train_*.py"] = value
    ruff["lint"] = lint
    ruff.pop("format", None)
    data["tool"]["pytest"] = {"ini_options": pytest_ini}
    data["tool"]["ruff"] = ruff
    return data


def _workflow_pins() -> dict[str, str]:
    """``uses:`` references of checkout and setup-python, as pinned in ci.yml."""
    pins = {}
    text = (REPO / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    for m in re.finditer(r"uses: (actions/(?:checkout|setup-python)@[0-9a-f]{40} # \S+)", text):
        pins[m.group(1).split("@")[0]] = m.group(1)
    return pins


@functools.cache
def _graded_tasks(table: str) -> frozenset[str]:
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


def _task_command(task_id: str) -> str:
    """What a student runs to check a task: its tests, or a toy network's graded training.

    A training task's tests are not in the starter (grading trains the network), so its
    command trains and scores it as grading does.
    """
    if task_id in _graded_tasks("TASKS") | _graded_tasks("NETWORKS"):
        return f"python -m mt_examples.graded {task_id}"
    return f"pytest -m {task_id}"


def _workflow_step(task: Task) -> tuple[str, str]:
    """The name and command of a task's step in the starter's workflow.

    Task 4.5's graded command needs the real data (GloVe alone is 822 MB) and trains for
    long on the plain kernels, so its step runs the tests of the code its scripts use.
    """
    name = f"Task {task_number(task.id)}: {task.title}"
    if task.id in _graded_tasks("NETWORKS"):
        return f"{name} (the layers and data readers its scripts use)", f"pytest -m {task.id}"
    return name, _task_command(task.id)


def _student_workflow(layer: Layer) -> str:
    pins = _workflow_pins()
    steps = "".join(
        f"      - name: {json.dumps(_workflow_step(t)[0])}\n"
        "        if: ${{ !cancelled() }}\n"
        f"        run: {_python_m(_workflow_step(t)[1])}\n"
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
        f"        run: python -m pip install {_INSTALL}\n"
        f"{steps}"
    )


# A starter's tests run with the conftest's "starter" hypothesis profile (fewer examples,
# no explain phase), unless HYPOTHESIS_PROFILE says otherwise.
_STARTER_PROFILE = """
# This starter: the "starter" profile above.
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "starter"))
"""


def _python_m(command: str) -> str:
    """``command`` run with ``python -m`` (a workflow's ``pytest`` may not be on PATH)."""
    return command if command.startswith("python ") else f"python -m {command}"


# How a student installs the starter: the lower layers' wheels come with it (wheels/), the
# third-party packages (numpy, numba, pytest, ...) from PyPI.
_INSTALL = '--find-links wheels -e ".[test]"'


# The examples' helpers the training scripts import: the grader uses the course's copies.
_SCRIPT_HELPERS = ("__init__.py", "support.py", "toy.py", "graded.py", "subset.py")


def _write_scripts(
    layer: Layer, cal: Calendar, where: Path, keep: frozenset[str] = frozenset()
) -> Path | None:
    """Write ``where/mt_examples/``: the layer's training scripts and the helpers they import.

    Each script's solution blocks are replaced (as in the package) but those of the tasks
    in ``keep``. Returns ``where``, or None if the layer has no training scripts.
    """
    blocks = script_blocks(layer, cal)
    if not blocks:
        return None
    pkg = where / "mt_examples"
    pkg.mkdir(parents=True)
    helpers = REPO / "examples" / "mt_examples"
    for name in _SCRIPT_HELPERS:
        shutil.copy2(helpers / name, pkg / name)
    for path, bl in blocks.items():
        (pkg / path.name).write_text(render(path.read_text(encoding="utf-8"), bl, keep), "utf-8")
    return where


def _copy_scripts(
    layer: Layer, cal: Calendar, out: Path, keep: frozenset[str] = frozenset()
) -> list[str]:
    """Copy the layer's training scripts into the starter, their network stubbed.

    ``mt_examples/`` gets the scripts (see ``_write_scripts``) and the starter's root gets
    their ``train_*.py`` launchers. Returns the launchers' names.
    """
    if _write_scripts(layer, cal, out, keep) is None:
        return []
    launchers = []
    for script in cal.scripts_of(layer.name):
        launcher = REPO / "examples" / Path(script).name
        if launcher.is_file():
            shutil.copy2(launcher, out / launcher.name)
            launchers.append(launcher.name)
    return launchers


def _task_places(layer: Layer, cal: Calendar) -> dict[str, dict[str, list[str]]]:
    """Task -> file of the starter -> the functions to write there (from the markers)."""
    places: dict[str, dict[str, list[str]]] = {}
    found = [
        (f"src/minitorch/{layer.name}/{path.relative_to(layer.src).as_posix()}", path, bl)
        for path, bl in scan_blocks(layer).items()
        if not any((layer.path / so).resolve() == path.resolve() for so in layer.solution_only)
    ]
    found += [
        (f"mt_examples/{path.name}", path, bl) for path, bl in script_blocks(layer, cal).items()
    ]
    for rel, path, bl in found:
        spans = function_spans(path.read_text(encoding="utf-8"))
        for b in bl:
            name = max((a, q) for q, (a, z) in spans.items() if a <= b.begin <= z)[1]
            names = places.setdefault(b.task, {}).setdefault(rel, [])
            if name not in names:
                names.append(name)
    return places


def _tasks_phrase(tasks: list[str]) -> str:
    """``task 2.1`` or ``tasks 2.1, 2.2 and 2.3``."""
    numbers = [task_number(t) for t in tasks]
    if len(numbers) == 1:
        return f"task {numbers[0]}"
    return f"tasks {', '.join(numbers[:-1])} and {numbers[-1]}"


def _task_section(
    layer: Layer, cal: Calendar, task: Task, places: dict[str, list[str]], guide: str
) -> str:
    """The README's section of one task: where, how to test it, its points, what it needs."""
    write = "".join(
        f"- `{rel}`: {', '.join(f'`{n}`' for n in names)}\n" for rel, names in places.items()
    )
    public = round(task.points * PUBLIC_PART, 2)
    training = task.id in cal.training_tasks(layer.name)
    command = _task_command(task.id)
    if not training:
        run = f"run its tests with `{command}`"
    elif command.startswith("pytest"):
        run = "its network is graded by training it (see Training below)"
    else:
        run = f"train it as the grader does with `{command}` (see Training below)"
    if training:
        points = (
            f"Points: all {task.points:g} once every graded run reaches its threshold (no "
            "hidden tests; see Grading)."
        )
    else:
        points = (
            f"Points: up to {public:g} from the public tests you have, "
            f"{task.points - public:g} more once every test passes, the hidden ones too (see "
            "Grading)."
        )
    used = [t for t in (layer.uses or {}).get(task.id, ()) if t != task.id]
    if training:
        needs = (
            "Training runs the code of every task of this week: it is graded with the "
            "course's solution of the other tasks and your network.\n\n"
        )
    elif used:
        needs = (
            f"Its tests also run the code of {_tasks_phrase(used)}: "
            "they fail until that is written too. The grader fills in the other tasks with "
            "the course's solution, so this task is graded on its own code.\n\n"
        )
    elif layer.uses is not None:
        needs = "Its tests run only its own code (and the lower layers').\n\n"
    else:
        needs = ""
    link = f"The guide's section: <{guide}modules/{layer.name}/#{task.id}>.\n\n" if guide else ""
    return (
        f"### Task {task_number(task.id)}: {task.title} ({task.points:g} points)\n\n"
        f'Write (each place raises `NotImplementedError("Task {task_number(task.id)}: '
        '...")`):\n\n'
        f"{write}\n"
        f"Then {run}. {points}\n\n"
        f"{needs}{link}"
    )


def _student_readme(
    layer: Layer, cal: Calendar, week: int | None, guide_url: str | None = None
) -> str:
    deps = [f"`mt-{d}=={cal.layer(d).solution_version}`" for d in cal.closure(layer.name)]
    guide = cal.guide_url if guide_url is None else guide_url
    if guide and not guide.endswith("/"):
        guide += "/"
    rows = "\n".join(
        f"| {task_number(t.id)} | {t.title} | `{_task_command(t.id)}` | {t.points:g} |"
        for t in layer.tasks
    )
    places = _task_places(layer, cal)
    sections = "".join(
        _task_section(layer, cal, t, places.get(t.id, {}), guide) for t in layer.tasks
    )
    when = f" (week {week})" if week is not None else ""
    lower = (
        f"It builds on the released solutions of the lower layers ({', '.join(deps)}), "
        "installed as wheels, so earlier bugs do not carry over.\n\n"
        if deps
        else ""
    )
    wheels = (
        "`wheels/` holds the wheels this starter needs that are not on PyPI (the namespace "
        "root `mt-root`"
        + (" and the lower layers' solutions" if deps else "")
        + "); everything else comes from PyPI. Keep the folder in your repository: the "
        "workflow installs from it too.\n\n"
    )
    part = f"{PUBLIC_PART:.0%}"
    rest = f"{1 - PUBLIC_PART:.0%}"
    return (
        f"# {layer.package}: student starter{when}\n\n"
        f"This is `minitorch.{layer.name}` with the code of this week's tasks taken out. "
        'Each place to fill in raises `NotImplementedError("Task X.Y: ...")`; the message '
        "names the task and what to implement. Signatures, docstrings and type hints are "
        "there to guide you.\n\n"
        + (f"The guide to this week: <{guide}modules/{layer.name}/>.\n\n" if guide else "")
        + f"{lower}"
        "## Set up\n\n"
        "```\npython -m venv .venv && . .venv/bin/activate\n"
        f"python -m pip install {_INSTALL}\n```\n\n"
        f"{wheels}"
        "## Tasks\n\n"
        "| Task | What | Run its tests | Points |\n|---|---|---|---|\n"
        f"{rows}\n\n"
        f"{_test_env_readme(layer)}"
        "`pytest` runs every test. The tests you see are the public ones; grading adds "
        "hidden tests of the same tasks and always uses its own copy of the tests, so "
        "editing them changes nothing. Each task has a time limit when graded: an endless "
        "loop costs that task's points only.\n\n"
        "The workflow in `.github/workflows/tests.yml` runs each task's tests on every push "
        "to main and on every pull request.\n\n"
        f"{sections}"
        "## Grading\n\n"
        "Each task is graded on its own: the other tasks' code is the course's solution. A "
        "task's points are split equally among the functions you write for it (listed "
        "above), and each function is graded by the tests that run it:\n\n"
        "```\n"
        "share    = task points / number of functions\n"
        f"function = share * ({PUBLIC_PART:g} * public tests of it passed / its public tests\n"
        f"                    + {1 - PUBLIC_PART:g} if all its tests pass, public and hidden, "
        "else 0)\n"
        "task     = the sum over its functions\n"
        "```\n\n"
        f"So {part} of a function's share follows its public tests, and {rest} needs all "
        "of its tests to pass: one wrong function costs more than half of its share, "
        "however many other tests pass. The public part is shown at once with each failing "
        "test's assertion and its values; the hidden tests (their names, not their inputs) "
        "are shown when the grades are published.\n"
        f"{_training_readme(layer, cal)}"
    )


def _test_env_readme(layer: Layer) -> str:
    """The README's sentence on the environment the tests need without a GPU, if any."""
    if not layer.test_env:
        return ""
    env = " ".join(f"{k}={v}" for k, v in layer.test_env.items())
    return (
        "Without an NVIDIA GPU, run the tests with the kernels on Numba's CUDA simulator "
        f"(the workflow does): `{env} pytest -m {layer.task_ids[0]}`.\n\n"
    )


def _training_readme(layer: Layer, cal: Calendar) -> str:
    """The README's section on the layer's training scripts (empty if it has none).

    It says how each training task is graded: the docstring of the layer's training tests.
    """
    scripts = cal.scripts_of(layer.name)
    if not scripts:
        return ""
    rows = "\n".join(
        f"- Task {task_number(t)}: `mt_examples/{Path(s).name}`, run with "
        f"`python {Path(s).name} --help`"
        for s, t in scripts.items()
    )
    graded = "".join(
        f"\n{ast.get_docstring(ast.parse(path.read_text(encoding='utf-8'))) or ''}\n"
        for path in sorted(layer.training_tests.glob("test_*.py"))
    )
    return (
        "\n## Training\n\n"
        "The training script of this week is in `mt_examples/`, with the network for you to "
        "write (its `NotImplementedError` names the task); everything else it needs (data, "
        "the training loop, the command line) is there. Run it from this folder:\n\n"
        f"{rows}\n{graded}"
    )


def _ruff(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def assign(
    layer_name: str,
    out: Path,
    *,
    keep: frozenset[str] = frozenset(),
    week: int | None = None,
    cal: Calendar | None = None,
    wheels: bool = True,
    guide_url: str | None = None,
) -> Starter:
    """Write the student starter of ``layer_name`` into ``out`` (which must not exist).

    With ``wheels``, ``out/wheels`` holds the wheels of the lower layers (the released
    solutions, built from the checkout) and of mt-root, which the starter's README installs
    with ``--find-links wheels``: the starter installs with no index but PyPI.

    ``guide_url`` (default: course.toml's ``[guide] url``) is the course guide the README
    links (``<url>modules/<layer>/``).

    Every solution block becomes ``raise NotImplementedError("Task X.Y: ...")`` except the
    blocks of the tasks in ``keep`` (to make a filled-in copy, e.g. for tests of the
    grader). Then unused imports are removed with ruff, the code is formatted, and the
    whole starter must pass ``ruff check`` and parse.

    Raises:
        CourseError: for bad markers, or lint errors left in the starter.
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    if out.exists() and any(out.iterdir()):
        raise CourseError(f"{out} exists and is not empty")
    starter = Starter(out)
    pkg_out = out / "src" / "minitorch" / layer.name
    shutil.copytree(layer.src, pkg_out, ignore=_ignore, dirs_exist_ok=True)
    for rel in layer.solution_only:
        (out / rel).unlink(missing_ok=True)
    try:
        for path, blocks in scan_blocks(layer).items():
            target = pkg_out / path.relative_to(layer.src)
            if not target.exists():  # solution-only
                continue
            target.write_text(render(path.read_text(encoding="utf-8"), blocks, keep), "utf-8")
            for b in blocks:
                starter.blocks[b.task] = starter.blocks.get(b.task, 0) + 1
        for blocks in script_blocks(layer, cal).values():
            for b in blocks:
                starter.blocks[b.task] = starter.blocks.get(b.task, 0) + 1
    except MarkerError as e:
        raise CourseError(str(e)) from e
    missing = [t for t in layer.task_ids if t not in starter.blocks and t not in keep]
    if missing:
        shutil.rmtree(out)
        raise CourseError(
            f"no solution blocks for tasks {', '.join(missing)} in {layer.package}: "
            "the starter would hand out their solution"
        )
    for edit in layer.starter_edits:
        target = out / edit.file
        text = target.read_text(encoding="utf-8")
        if text.count(edit.old) != 1:
            shutil.rmtree(out)
            raise CourseError(
                f"starter-edits of {layer.name}: {edit.old!r} occurs {text.count(edit.old)} "
                f"times in {edit.file} (expected once)"
            )
        target.write_text(text.replace(edit.old, edit.new), "utf-8")
    shutil.copytree(layer.path / "tests", out / "tests", ignore=_solution_only_tests(layer))
    conftest = (REPO / "conftest.py").read_text(encoding="utf-8") + _STARTER_PROFILE
    (out / "conftest.py").write_text(conftest, "utf-8")
    (out / "pyproject.toml").write_text(
        tomli_w.dumps(_student_pyproject(layer, cal, week)), "utf-8"
    )
    (out / "README.md").write_text(_student_readme(layer, cal, week, guide_url), "utf-8")
    (out / ".github" / "workflows").mkdir(parents=True)
    (out / ".github" / "workflows" / "tests.yml").write_text(_student_workflow(layer), "utf-8")
    _copy_scripts(layer, cal, out, keep)
    (out / ".gitignore").write_text("__pycache__/\n*.egg-info/\n.venv/\n.hypothesis/\n")
    if wheels:
        _wheelhouse(cal, cal.closure(layer.name), out / "wheels")

    # An import that only a removed block used (prange, the index helpers a kernel calls)
    # stays for the student, as a local set up for the block does (a kernel's device
    # function, the sizes unpacked for its loops): each is marked with a noqa comment (F401,
    # F841 or RUF059). Then format.
    code = ["src", *(["mt_examples"] if (out / "mt_examples").is_dir() else [])]
    for args in (
        ["check", "--select", "F401,F841,RUF059", "--add-noqa", "--quiet", *code],
        ["format", *code],
    ):
        _ruff(args, out)
    lint = _ruff(["check", "--no-fix", "."], out)
    if lint.returncode != 0:
        raise CourseError(f"the starter of {layer.name} is not lint-clean:\n{lint.stdout}")
    for path in out.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), str(path))
    return starter


# ---------------------------------------------------------------------------------- tests


#: The fixtures every layer's training tests share, appended to a graded copy's conftest.py.
TRAINING_FIXTURES = REPO / "tools" / "course" / "training" / "conftest.py"

# Checking and grading need the verdict, not the smallest failing example: no shrinking,
# no hunting for more bugs once one is found, no example database between runs.
_HYPOTHESIS_PROFILE = """
from hypothesis import Phase  # noqa: E402

settings.register_profile(
    "course",
    parent=settings.get_profile("ci"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    report_multiple_bugs=False,
    database=None,
)
settings.load_profile("course")
"""


def _test_tree(
    layer: Layer,
    where: Path,
    *,
    hidden: bool,
    solution: bool = False,
    data: Path | None = None,
) -> Path:
    """A fresh copy of the repository's tests of ``layer`` (and hidden ones) to run.

    The solution-only tests (of code the starter leaves out) are copied for ``solution``.
    The course's training tests join the public ones in ``tests/`` (they are graded like
    them, but not in the starter: they need the course's data and, for nn, its fast
    kernels), with their fixtures (``TRAINING_FIXTURES``) in the generated ``conftest.py``,
    and ``data`` (the training data subset, if any) becomes ``data/``.
    """
    where.mkdir(parents=True)
    ignore = _ignore if solution else _solution_only_tests(layer)
    shutil.copytree(layer.path / "tests", where / "tests", ignore=ignore)
    if layer.training_tests.is_dir():
        shutil.copytree(layer.training_tests, where / "tests", ignore=_ignore, dirs_exist_ok=True)
    if data is not None:
        shutil.copytree(data, where / "data")
    if hidden and layer.hidden_tests.is_dir():
        shutil.copytree(layer.hidden_tests, where / "hidden", ignore=_ignore)
    conftest = (REPO / "conftest.py").read_text(encoding="utf-8") + _HYPOTHESIS_PROFILE
    if layer.training_tests.is_dir():  # the training tests' fixtures
        conftest += "\n" + TRAINING_FIXTURES.read_text(encoding="utf-8")
    (where / "conftest.py").write_text(conftest, "utf-8")
    ini = _root_pyproject()["tool"]["pytest"]["ini_options"]
    markers = "".join(f"    {m}\n" for m in ini["markers"])
    (where / "pytest.ini").write_text(
        "[pytest]\naddopts = --import-mode=importlib -ra --strict-markers\n"
        f"xfail_strict = true\nmarkers =\n{markers}"
    )
    return where


def _wheelhouse(cal: Calendar, layers: Iterable[str], where: Path) -> Path:
    """Build the wheels of ``layers``, and of mt-root that every layer requires, into ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    build_wheel(REPO / "packages" / "mt-root", where)
    for name in layers:
        layer = cal.layer(name)
        _check_version(layer)
        build_wheel(layer.path, where)
    return where


def _training_data(
    layer: Layer, where: Path, source: Path | None, *, required: bool
) -> Path | None:
    """Write the layer's training data subset (course.toml's ``training-data``) into ``where``.

    Returns None if the layer needs none, or (unless ``required``) if there is no real data
    to make it from (``source``, else ``$MINITORCH_DATA``): its training tests then skip.

    Raises:
        CourseError: if the subset is ``required`` and cannot be made.
    """
    if not layer.training_data:
        return None
    if layer.training_data != GRADED:
        raise CourseError(
            f"course.toml's training-data of {layer.name} ({layer.training_data}) is not "
            f"GRADED of examples/mt_examples/subset.py ({GRADED}): the starter's graded "
            "command would train on other data than grading"
        )
    src = source_dir(source)
    if src is None:
        if required:
            raise CourseError(
                f"the {layer.name} training tests need a subset of the real data: set "
                "MINITORCH_DATA (or --data-dir) to a folder with mnist/, sst2/ and glove/"
            )
        return None
    try:
        return make_subset(src, where, layer.training_data)
    except DataError as e:
        if required:
            raise CourseError(str(e)) from e
        print(f"note: no training data subset for {layer.name}: {e}")
        return None


def _check_version(layer: Layer) -> None:
    """The checkout's version of ``layer`` must be the one the calendar releases."""
    if layer.checkout_version() != layer.solution_version:
        raise CourseError(
            f"course.toml names {layer.package} {layer.solution_version} but the checkout "
            f"is {layer.checkout_version()}: update solution-version in course.toml"
        )


def _names(nodeid: str) -> tuple[str, str, str]:
    """The names course.toml may list ``nodeid`` by: itself, its test, and its file."""
    return nodeid, nodeid.split("[")[0], nodeid.split("::")[0]


def _listed(tests: tuple[str, ...], nodeid: str) -> bool:
    """Is ``nodeid`` one of ``tests`` ("file.py", "file.py::test" or "file.py::test[id]")?"""
    names = _names(nodeid)
    return any(f"tests/{t}" in names for t in tests)


def _is_scaffold(layer: Layer, nodeid: str) -> bool:
    return _listed(layer.scaffold_tests, nodeid)


# ---------------------------------------------------------------------------------- check


def _judge_starter(
    layer: Layer, record: dict[str, Any], code_dirs: tuple[Path, ...], on_solution: str | None
) -> str | None:
    """Why this test's outcome on the starter is wrong, or None if it is right.

    ``on_solution`` is the same test's outcome on the solution: a task's test that is
    skipped on both (it needs something this machine lacks, e.g. PyTorch) proves nothing
    either way and is accepted.
    """
    nodeid, tasks = record["nodeid"], set(record["tasks"])
    if record["outcome"] == "collect-error":
        return f"{nodeid}: collection fails: {record['errors'][0]['message'][-300:]}"
    layer_tasks = set(layer.task_ids) | set(layer.needs)
    scaffold = _is_scaffold(layer, nodeid)
    if not tasks & layer_tasks or scaffold:
        if record["outcome"] in ("passed", "skipped"):
            return None
        if scaffold and record["outcome"] == "failed":
            return _from_solution_block(layer, record, code_dirs)
        errs = "; ".join(f"{e['type']}: {e['message'][:200]}" for e in record["errors"])
        return f"{nodeid}: should pass on the starter (not a task's test), got {errs}"
    if record["outcome"] == "skipped" and on_solution == "skipped":
        return None
    if record["outcome"] == "failed" and _listed(layer.child_process_tests, nodeid):
        return None  # the stub's NotImplementedError ended a child process
    if record["outcome"] != "failed":
        return (
            f"{nodeid} (marked {', '.join(sorted(tasks))}) should fail with "
            f"NotImplementedError on the starter, but {record['outcome']}"
        )
    return _from_solution_block(layer, record, code_dirs)


def _from_solution_block(
    layer: Layer, record: dict[str, Any], code_dirs: tuple[Path, ...]
) -> str | None:
    """None if the test failed only with NotImplementedError raised by a solution block.

    ``code_dirs`` are the starter's code: its installed package and its training scripts.
    """
    nodeid = record["nodeid"]

    def from_block(e: dict[str, Any]) -> bool:
        m = _TASK_MESSAGE.match(e["message"])
        return (
            e["type"] == "NotImplementedError"
            and m is not None
            and f"task{m.group(1)}_{m.group(2)}" in layer.task_ids
            and any(Path(e["file"] or "").resolve().is_relative_to(d) for d in code_dirs)
        )

    for e in record["errors"]:
        # A test expecting another exception (pytest.raises) fails while handling the stub's.
        if not (from_block(e) or any(from_block(c) for c in e.get("context", []))):
            return (
                f"{nodeid}: should fail with NotImplementedError from a solution block, got "
                f"{e['type']}: {e['message'][:200]} (raised at {e['file']}:{e['line']})"
            )
    return None


def _one_task_problems(
    layer: Layer,
    cal: Calendar,
    root: Path,
    python: Path,
    say: Callable[..., None],
    scripts: Path | None = None,
    data: Path | None = None,
) -> list[str]:
    """Each task's tests must fail when only that task is missing (``check --one-task``).

    The starter's code with every other task's functions from the solution (as the grader
    runs each task): a test of the task that passes then runs none of its code, so it
    would give its points away (list it in ``scaffold-tests`` or mark it with the task
    whose code it runs). A training task runs the whole solution package (as graded) with
    the starter's training ``scripts``.
    """
    solution = _solution_overlay(layer, root / "one-task-solution")
    training = cal.training_tasks(layer.name)
    problems = []
    for task in layer.task_ids:
        if task in training:
            code = layer.path / "src"
        else:
            code = overlay(
                root / "starter" / "src", layer.name, solution, task, root / f"ot-{task}"
            )
        try:
            check_imports(python, code, layer.name)  # the overlay, not the installed starter
        except SubmissionError as e:
            problems.append(f"only {task} missing: {e}")
            continue
        tests = _test_tree(layer, root / f"run-ot-{task}", hidden=True, data=data)
        paths = ["tests", "hidden"] if (tests / "hidden").exists() else ["tests"]
        t0 = time.perf_counter()
        run = run_pytest(
            python,
            ["-q", "--tb=no", "-m", task, *paths],
            tests,
            timeout=30 * 60,
            output_limit=cal.output_limit,
            pythonpath=(code, *([scripts] if scripts else [])),
        )
        say(
            f"{layer.name}: only {task} missing: {len(run.tests)} tests in "
            f"{time.perf_counter() - t0:.1f}s"
        )
        if not run.finished:
            problems.append(f"only {task} missing: the run did not finish:\n{run.output[-2000:]}")
            continue
        problems += [
            f"{r['nodeid']} (marked {task}) passes without {task}'s code (the other tasks "
            "done): list it in scaffold-tests or mark it with the task it runs"
            for r in run.tests
            if task in r["tasks"]
            and r["outcome"] == "passed"
            and not _is_scaffold(layer, r["nodeid"])
        ]
    return problems


def check(
    layer_name: str,
    cal: Calendar | None = None,
    *,
    verbose: bool = True,
    one_task: bool = False,
) -> list[str]:
    """Generate the starter of ``layer_name`` and prove it right; return the problems.

    With ``one_task``, also prove that each task's tests fail when only that task is
    missing (see :func:`_one_task_problems`).
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    say = print if verbose else (lambda *_: None)
    try:
        blocks = scan_blocks(layer)
        scripts = script_blocks(layer, cal)
    except MarkerError as e:
        return [str(e)]
    counts: dict[str, int] = {}
    for bl in blocks.values():
        for b in bl:
            counts[b.task] = counts.get(b.task, 0) + 1
    problems = [
        f"solution block for {t}, which is not a task of {layer.name} in course.toml"
        for t in sorted(set(counts) - set(layer.task_ids))
    ]
    for bl in scripts.values():
        for b in bl:
            counts[b.task] = counts.get(b.task, 0) + 1
    missing = [t for t in layer.task_ids if t not in counts]
    if missing:
        problems.append(f"no solution blocks for tasks {', '.join(missing)}")
        return problems

    with tempfile.TemporaryDirectory(prefix=f"course-check-{layer.name}-") as tmp:
        root = Path(tmp)
        try:
            starter = assign(layer.name, root / "starter", cal=cal, wheels=False)
        except CourseError as e:
            return [*problems, str(e)]
        say(f"{layer.name}: starter written ({sum(starter.blocks.values())} blocks)")
        problems += _leak_problems(layer, cal, root / "starter")
        problems += _issue_problems(root / "starter")
        # The lower layers (the released solutions) and the solution itself run from the
        # checkout (editable): their Numba kernels are compiled once and cached beside the
        # sources, for every check and for the repository's own test run. The starter is
        # installed from its wheel, as a student installs it.
        lower = cal.closure(layer.name)
        for name in [*lower, layer.name]:
            _check_version(cal.layer(name))
        shared = (REPO / "packages" / "mt-root", *(cal.layer(n).path for n in lower))
        wheels = root / "wheels"
        build_wheel(root / "starter", wheels / "starter")
        # The training scripts (solution, and the starter's as written) and the data subset
        # their tests train on (skipped without the real data).
        script_dirs: dict[str, Path | None] = {
            "solution": _write_scripts(
                layer, cal, root / "scripts-solution", frozenset(layer.task_ids)
            ),
            "starter": None,
        }
        if (root / "starter" / "mt_examples").is_dir():
            shutil.copytree(root / "starter" / "mt_examples", root / "scripts-starter/mt_examples")
            script_dirs["starter"] = root / "scripts-starter"
        data = _training_data(layer, root / "data", None, required=False)
        if layer.training_data and data is None:
            say(f"{layer.name}: no MINITORCH_DATA: the training tests on real data skip")

        outcomes: dict[str, list[dict[str, Any]]] = {}
        package_dirs: dict[str, Path] = {}
        pythons: dict[str, Path] = {}
        for kind in ("solution", "starter"):
            try:
                if kind == "solution":
                    python = make_venv(
                        root / f"venv-{kind}", wheels, [], editable=(*shared, layer.path)
                    )
                else:
                    wheel = next((wheels / kind).glob("*.whl"))
                    python = make_venv(root / f"venv-{kind}", wheels, [str(wheel)], shared)
            except RuntimeError as e:
                return [*problems, f"the {kind} does not install: {e}"]
            imp = subprocess.run(
                [python, "-c", f"import minitorch.{layer.name} as m; print(m.__file__)"],
                capture_output=True,
                text=True,
                check=False,
            )
            if imp.returncode != 0:
                problems.append(f"the {kind} does not import: {imp.stderr[-1000:]}")
                continue
            package_dirs[kind] = Path(imp.stdout.strip()).parent.resolve()
            pythons[kind] = python
            tests = _test_tree(
                layer, root / f"run-{kind}", hidden=True, solution=kind == "solution", data=data
            )
            here = script_dirs[kind]
            trace: dict[str, str] = {}
            if kind == "solution":  # which tasks' functions each test runs: `uses`
                (tests / ".trace.json").write_text(json.dumps(_task_trace(blocks)), "utf-8")
                trace["COURSE_PROBE_TRACE"] = str(tests / ".trace.json")
            t0 = time.perf_counter()
            run = run_pytest(
                python,
                ["-q", "--tb=no", "tests", "hidden"]
                if (tests / "hidden").exists()
                else ["-q", "--tb=no", "tests"],
                tests,
                timeout=30 * 60,
                output_limit=cal.output_limit,
                pythonpath=(here,) if here else (),
                env=trace,
            )
            say(f"{layer.name}: {kind}: {len(run.tests)} tests in {time.perf_counter() - t0:.1f}s")
            if not run.finished:
                problems.append(f"the {kind}'s test run did not finish:\n{run.output[-2000:]}")
                continue
            outcomes[kind] = run.tests
        solution = outcomes.get("solution", [])
        problems += [
            f"{r['nodeid']}: fails with the solution: "
            + "; ".join(f"{e['type']}: {e['message'][:200]}" for e in r["errors"])
            for r in solution
            if r["outcome"] not in ("passed", "skipped")
        ]
        on_solution = {r["nodeid"]: r["outcome"] for r in solution}
        starter_scripts = script_dirs["starter"]
        code_dirs = (
            package_dirs.get("starter", root / "starter"),
            *([(starter_scripts / "mt_examples").resolve()] if starter_scripts else []),
        )
        problems += [
            p
            for r in outcomes.get("starter", [])
            if (p := _judge_starter(layer, r, code_dirs, on_solution.get(r["nodeid"]))) is not None
        ]
        for t in layer.task_ids:
            n = sum(t in r["tasks"] for r in solution)
            say(f"{layer.name}: {t}: {counts[t]} solution blocks, {n} tests")
            if solution and n == 0:
                problems.append(f"no test is marked {t}")
        problems += _uses_problems(layer, solution, cal.training_tasks(layer.name))
        listed = {name for r in solution for name in _names(r["nodeid"])}
        problems += [
            f"scaffold test {s} (course.toml) does not exist"
            for s in layer.scaffold_tests
            if solution and f"tests/{s}" not in listed
        ]
        if one_task and "starter" in pythons:
            problems += _one_task_problems(
                layer, cal, root, pythons["starter"], say, script_dirs["starter"], data
            )
    return problems


# An internal reference a starter must not ship: the word "issue" and a number, "#13", "GH-5".
_ISSUE_REF = re.compile(r"(?i)\b(?:issues?|gh)\s*[#-]?\s*\d+\b|\(#\d+\)")
_TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".ini", ".json"}


def _issue_problems(starter: Path) -> list[str]:
    """Every issue number in what the starter ships (all its text files but ``wheels/``)."""
    problems = []
    for path in sorted(starter.rglob("*")):
        rel = path.relative_to(starter)
        if not path.is_file() or rel.parts[0] == "wheels" or path.suffix not in _TEXT_SUFFIXES:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _ISSUE_REF.finditer(line):
                problems.append(
                    f"the starter ships an internal reference ({m.group(0)!r}) in {rel}:{n}: "
                    "say what it means instead of the issue's number"
                )
    return problems


def _norm(text: str) -> str:
    """Text without blanks, backticks and quotes: how a statement is compared."""
    return re.sub(r"[\s`'\"]", "", text)


_OPS = (ast.BinOp, ast.Call, ast.Compare, ast.BoolOp, ast.UnaryOp)


class _Shape(ast.NodeTransformer):
    """A formula's shape: every name and attribute chain becomes ``_``, methods stay.

    ``(x.view(B, n, 1) * w.view(1, n, m)).sum(1)`` and the solution's ``(x.view(batch,
    self.in_size, 1) * weight.view(1, self.in_size, self.out_size)).sum(1)`` have one shape.
    """

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name("_")

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return ast.Constant(float(value))
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        return ast.Name("_")

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute):
            new_func: ast.expr = ast.Attribute(self.visit(func.value), func.attr)
        else:
            new_func = self.visit(func)
        return ast.Call(new_func, [self.visit(a) for a in node.args], [])


def _shapes(node: ast.AST) -> Iterator[str]:
    """The shapes of ``node``'s expressions with two operations or more."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.expr) and sum(isinstance(n, _OPS) for n in ast.walk(sub)) >= 2:
            shape = _norm(ast.unparse(_Shape().visit(copy.deepcopy(sub))))
            if len(shape) >= 12:
                yield shape


def _statements(source: str, blocks: list[Block]) -> Iterator[tuple[ast.stmt, int]]:
    """The simple statements inside ``blocks`` of ``source``."""
    tree = ast.parse(source)
    for b in blocks:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.stmt)
                and getattr(node, "body", None) is None
                and b.begin < node.lineno
                and (node.end_lineno or node.lineno) < b.end
            ):
                yield node, node.lineno


def _snippets(text: str) -> Iterator[ast.AST]:
    """The code a comment or docstring shows: ``inline`` spans, lines, literal blocks."""
    pieces = re.findall(r"``(.+?)``", text, re.DOTALL)
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        pieces += [line, *re.split(r"\s(?:=|is|equals|gives|returns?|for|if|when)\s", line)]
    for piece in pieces:
        # Prose names things as code cannot: ``x.view(B, in, 1)``.
        named = re.sub(
            r"\b(in|is|as|from|for|if|or|and|not|with|lambda)\b(?=\s*[,)])", r"\1_", piece
        )
        for text, mode in ((piece, "eval"), (piece, "exec"), (named, "eval")):
            try:
                yield ast.parse(text, mode=mode)
                break
            except SyntaxError:
                continue


def _prose(source: str) -> list[tuple[str, int]]:
    """A source's comments and string constants (docstrings): what a student reads."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.string, tok.start[0]))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.value, node.lineno))
    return out


def _leak_problems(layer: Layer, cal: Calendar, starter: Path) -> list[str]:
    """A solution statement or formula in the starter's comments or docstrings.

    A statement of a solution block (``acc = fn(acc, x)``, blanks aside) found in what a
    student reads about the stubs, or a formula of two operations or more with the shape
    of one of the solution's (:class:`_Shape`: the same operations and methods, whatever
    the names). Short ones (``x * y``, which a docstring may state as the specification)
    are not compared. The starter's code outside the blocks may share them (a helper).
    """
    statements: dict[str, str] = {}
    shapes: dict[str, str] = {}
    for path, bl in [*scan_blocks(layer).items(), *script_blocks(layer, cal).items()]:
        where = path.relative_to(REPO).as_posix()
        for node, line in _statements(path.read_text(encoding="utf-8"), bl):
            text = ast.unparse(node)
            ops = sum(isinstance(n, _OPS) for n in ast.walk(node))
            if len(_norm(text)) >= 12 and ops >= (2 if isinstance(node, ast.Expr) else 1):
                statements.setdefault(_norm(text), f"`{text}` ({where}:{line})")
            for shape in _shapes(node):
                shapes.setdefault(shape, f"`{ast.unparse(node)}` ({where}:{line})")
    problems: dict[str, None] = {}
    files = [*(starter / "src").rglob("*.py"), *(starter / "mt_examples").glob("*.py")]
    for path in sorted(files):
        rel = path.relative_to(starter)
        for text, line in _prose(path.read_text(encoding="utf-8")):
            said = _norm(text)
            found = [what for key, what in statements.items() if key in said]
            found += [
                shapes[shape]
                for snippet in _snippets(text)
                for shape in _shapes(snippet)
                if shape in shapes
            ]
            for what in dict.fromkeys(found):
                problems[f"{rel}:{line} hands out the solution: it states {what}"] = None
    return list(problems)


def _task_trace(blocks: dict[Path, list[Block]]) -> dict[str, dict[str, str]]:
    """The probe's table of every function holding a solution block: its tasks, by line.

    A function is named ``task2_1,task2_2:name`` (the tasks whose blocks it holds).
    """
    table: dict[str, dict[str, str]] = {}
    for path, bl in blocks.items():
        spans = function_spans(path.read_text(encoding="utf-8"))
        for b in bl:
            first, name = max((a, q) for q, (a, z) in spans.items() if a <= b.begin <= z)
            lines = table.setdefault(str(path.resolve()), {})
            tasks = set(lines.get(str(first), ":").split(":")[0].split(",")) - {""}
            lines[str(first)] = ",".join(sorted(tasks | {b.task})) + ":" + name
    return table


def _used_tasks(layer: Layer, records: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Task -> the layer's other tasks whose functions its (graded) tests ran on the solution."""
    used: dict[str, set[str]] = {}
    for r in records:
        if _is_scaffold(layer, r["nodeid"]):
            continue
        ran = {t for f in r.get("functions", []) for t in f.split(":")[0].split(",")}
        for task in set(r["tasks"]) & set(layer.task_ids):
            used.setdefault(task, set()).update(ran - {task})
    return used


def _uses_problems(
    layer: Layer, records: list[dict[str, Any]], training: tuple[str, ...] = ()
) -> list[str]:
    """A task whose tests run another task's code must say so in ``uses`` (the README's).

    Measured on the solution by the probe's trace; code that Numba compiles is not seen,
    so ``uses`` may name more than is measured, never less. A training task runs every
    task's code (the README says so) and is not listed. A layer without ``uses`` in
    course.toml is not checked (its README says nothing of it).
    """
    if layer.uses is None:
        return []
    problems = []
    for task, used in sorted(_used_tasks(layer, records).items()):
        if task in training:
            continue
        missing = sorted(used - set(layer.uses.get(task, ())))
        if missing:
            problems.append(
                f"the tests of {task} run the code of {', '.join(missing)}: add them to "
                f"`uses` of layers.{layer.name} in course.toml (the starter's README says so)"
            )
    return problems


# ---------------------------------------------------------------------------------- grade


def _solution_overlay(layer: Layer, where: Path, spec: GradeSpec | None = None) -> Path:
    """The layer's solution sources and which function holds which task (``overlay``).

    With ``spec`` of a layer with training tasks, ``package/`` holds the whole solution
    package with its entry points: a training task is graded with it (``grade_tasks``).
    """
    table: dict[str, dict[str, list[str]]] = {}
    for path, blocks in scan_blocks(layer).items():
        rel = path.relative_to(layer.src).as_posix()
        text = path.read_text(encoding="utf-8")
        spans = function_spans(text)
        functions: dict[str, list[str]] = {}
        for b in blocks:
            inside = [(a, q) for q, (a, z) in spans.items() if a <= b.begin <= z]
            name = max(inside)[1]  # the innermost function holding the block
            if b.task not in functions.setdefault(name, []):
                functions[name].append(b.task)
        table[rel] = functions
        target = where / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(text, blocks, frozenset(b.task for b in blocks)), "utf-8")
    (where / "blocks.json").write_text(json.dumps(table, indent=1) + "\n", "utf-8")
    if spec is not None and spec.training_tasks:
        shutil.copytree(layer.src, where / "package" / "minitorch" / layer.name, ignore=_ignore)
        register(where / "package", spec)
    return where


def _write_helpers(where: Path) -> Path:
    """The course's copies of the modules the training scripts import, in ``where``."""
    where.mkdir(parents=True)
    for name in _SCRIPT_HELPERS:
        shutil.copy2(REPO / "examples" / "mt_examples" / name, where / name)
    return where


def grade_spec(layer: Layer, cal: Calendar, time_limit: float | None = None) -> GradeSpec:
    """What grading ``layer`` needs, from the calendar (as the autograder bundle stores it)."""
    return GradeSpec(
        layer.name,
        layer.package,
        tuple((t.id, t.title, t.points) for t in layer.tasks),
        layer.scaffold_tests,
        time_limit if time_limit is not None else layer.time_limit or cal.time_limit,
        cal.output_limit,
        layer.solution_version,
        tuple(
            (group, name, value)
            for group, entries in layer.pyproject()["project"].get("entry-points", {}).items()
            for name, value in entries.items()
        ),
        cal.training_tasks(layer.name),
        tuple(dict.fromkeys(Path(s).name for s in cal.scripts_of(layer.name))),
    )


def grade(
    student: Path,
    layer_name: str,
    *,
    cal: Calendar | None = None,
    time_limit: float | None = None,
    data_dir: Path | None = None,
) -> dict[str, Any]:
    """Grade a student's directory (or a zip of it); return Gradescope's ``results.json``.

    Each task runs in its own process, on a fresh copy of this repository's public and
    hidden tests (never the student's), with only ``src/minitorch/<layer>`` (and the
    training scripts in ``mt_examples/``) taken from the student and the lower layers
    installed from the checkout's wheels. The training data subset is made from
    ``data_dir`` (else ``$MINITORCH_DATA``); without it, tests that need it skip.

    Raises:
        SubmissionError: the submission is missing, empty, or does not import.
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    spec = grade_spec(layer, cal, time_limit)
    with tempfile.TemporaryDirectory(prefix=f"course-grade-{layer.name}-") as tmp:
        root = Path(tmp)
        helpers = _write_helpers(root / "helpers" / "mt_examples") if spec.scripts else None
        code = find_package(student, layer.name, root, spec.scripts, helpers)
        register(code, spec)
        env = grading_env(layer, cal, spec, root, data_dir)
        check_imports(env.python, code, layer.name)
        return grade_tasks(env.python, code, spec, env.template, root, env.solution)


@dataclass(frozen=True)
class GradingEnv:
    """What grading a layer runs in: built once, it grades any number of submissions."""

    python: Path  # a fresh environment with the lower layers' solution wheels
    template: Path  # the public and hidden tests as they run
    solution: Path  # the solution sources and blocks.json (see grading.overlay)


def grading_env(
    layer: Layer, cal: Calendar, spec: GradeSpec, root: Path, data_dir: Path | None = None
) -> GradingEnv:
    """Build ``layer``'s grading environment in ``root`` (as ``grade`` and ``mutants`` use)."""
    wheels = _wheelhouse(cal, cal.closure(layer.name), root / "wheels")
    reqs = [f"mt-{d}=={cal.layer(d).solution_version}" for d in cal.closure(layer.name)]
    python = make_venv(root / "venv", wheels, reqs)
    data = _training_data(layer, root / "data", data_dir, required=False)
    template = _test_tree(layer, root / "template", hidden=True, data=data)
    solution = _solution_overlay(layer, root / "solution", spec)
    return GradingEnv(python, template, solution)


# ----------------------------------------------------------------------------- autograder

# The bundle's setup.sh: run once by the grading service, as root, on a bare Ubuntu image
# (the bundle unpacked in /autograder/source): it installs Python with apt, then the
# autograder's environment in /autograder/venv. AUTOGRADER_ROOT moves /autograder (the
# tool's tests use a temporary directory); COURSE_PYTHON names a Python to build on instead
# of apt's; COURSE_AUTOGRADER_SITE makes an existing environment's site-packages (numpy,
# numba, pytest...) visible instead of downloading them, for offline tests of the bundle.
_SETUP_SH = """\
#!/usr/bin/env bash
# Set up the MiniTorch autograder of {package} (written by `hatch run course:autograder`).
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
if [ -z "${{COURSE_PYTHON:-}}" ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends python3 python3-venv python3-pip
fi
PYTHON="${{COURSE_PYTHON:-python3}}"
rm -rf "$ROOT/venv"
VPY="$ROOT/venv/bin/python"
if [ -n "${{COURSE_AUTOGRADER_SITE:-}}" ]; then
  "$PYTHON" -m venv --without-pip "$ROOT/venv"
  site="$("$VPY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")"
  printf 'import site; site.addsitedir(%s)\\n' "'$COURSE_AUTOGRADER_SITE'" \\
    >"$site/_course_site.pth"
else
  "$PYTHON" -m venv "$ROOT/venv"
fi
"$VPY" -m pip install --no-cache-dir --find-links "$SOURCE/wheels" -r "$SOURCE/requirements.txt"
{warm}"$VPY" -c "import minitorch{imports}; print('autograder of {package} ready')"
"""

_RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Grade /autograder/submission into /autograder/results/results.json ({package}).
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
export NUMBA_ENABLE_CUDASIM="${{NUMBA_ENABLE_CUDASIM:-1}}"
cd "$ROOT"
exec "$ROOT/venv/bin/python" "$ROOT/source/grader/grading.py"
"""


def _zip_dir(folder: Path, out: Path) -> None:
    """Zip the contents of ``folder`` (not the folder) into ``out``, keeping file modes."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(str(path.relative_to(folder)), (2027, 1, 1, 0, 0, 0))
                info.external_attr = (path.stat().st_mode & 0o777 | 0o100000) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, path.read_bytes())


def autograder(
    layer_name: str,
    out: Path,
    *,
    cal: Calendar | None = None,
    time_limit: float | None = None,
    data_dir: Path | None = None,
) -> Path:
    """Write the Gradescope autograder bundle of ``layer_name`` to the zip file ``out``.

    The bundle holds ``setup.sh`` (a virtual environment with the lower layers' solution
    wheels, from ``wheels/``, and the third-party packages of ``requirements.txt``),
    ``run_autograder`` (grades ``/autograder/submission``), the grading code
    (``grader/``: this tool's ``grading.py``, ``markers.py``, ``runner.py``, ``probe.py`` and
    the layer's ``spec.json``) and the layer's public and hidden tests (``suite/``). A
    layer with training tasks also gets the solution package they are graded with
    (``solution/package/``), the course's copies of the modules its training scripts import
    (``helpers/mt_examples/``) and the data subset its training tests train on
    (``suite/data/``, made from ``data_dir``, else ``$MINITORCH_DATA``).

    Raises:
        CourseError: if ``out`` is not a ``.zip`` path, the checkout's versions disagree
            with course.toml, or the layer's training data cannot be made.
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    if out.suffix != ".zip":
        raise CourseError(f"--out must name a .zip file, got {out}")
    lower = cal.closure(layer.name)
    _check_version(layer)
    with tempfile.TemporaryDirectory(prefix=f"course-autograder-{layer.name}-") as tmp:
        b = Path(tmp) / "bundle"
        _wheelhouse(cal, lower, b / "wheels")
        (b / "grader").mkdir()
        for name in ("grading.py", "markers.py", "runner.py", "probe.py"):
            shutil.copy2(Path(__file__).with_name(name), b / "grader" / name)
        spec = grade_spec(layer, cal, time_limit)
        (b / "grader" / "spec.json").write_text(spec.to_json(), "utf-8")
        data = _training_data(layer, Path(tmp) / "data", data_dir, required=True)
        _test_tree(layer, b / "suite", hidden=True, data=data)
        _solution_overlay(layer, b / "solution", spec)
        if spec.scripts:
            _write_helpers(b / "helpers" / "mt_examples")
        project = layer.pyproject()["project"]
        third = [r for r in project.get("dependencies", []) if not r.startswith("mt-")]
        test_extra = project.get("optional-dependencies", {}).get(
            "test", ["pytest>=8", "hypothesis>=6.100"]
        )
        reqs = [f"mt-{d}=={cal.layer(d).solution_version}" for d in lower]
        reqs += ["mt-root", *third, *test_extra]
        (b / "requirements.txt").write_text("\n".join(reqs) + "\n", "utf-8")
        imports = "".join(f"; import minitorch.{d}" for d in lower)
        # Compile the lower layers' Numba kernels now, into their cache in the environment,
        # not in each task's time limit.
        warm = (
            '"$VPY" -m minitorch.fast.diagnostics compile-time >/dev/null\n'
            if "fast" in lower
            else ""
        )
        fmt = {"package": layer.package, "imports": imports, "warm": warm}
        for name, text in (("setup.sh", _SETUP_SH), ("run_autograder", _RUN_AUTOGRADER)):
            (b / name).write_text(text.format(**fmt), "utf-8")
            (b / name).chmod(0o755)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.unlink(missing_ok=True)
        _zip_dir(b, out)
    return out


# ---------------------------------------------------------------------------------- weeks


def week_plan(number: int, cal: Calendar | None = None) -> dict[str, Any]:
    """The starters week ``number`` opens, its dates and the release tags it pushes."""
    cal = cal or load_calendar()
    w = cal.week(number)
    return {
        "week": w.week,
        "opens": w.opens.isoformat(),
        "deadline": w.deadline.isoformat(),
        "starters": list(w.starters),
        "tags": [f"mt-{n}-v{cal.layer(n).solution_version}" for n in w.release_solutions],
    }


def week_table(plan: dict[str, Any]) -> str:
    """``week_plan``'s answer as a small table for people."""
    rows = [
        ("week", str(plan["week"])),
        ("opens", plan["opens"]),
        ("deadline", plan["deadline"]),
        ("starters", ", ".join(f"mt-{s}" for s in plan["starters"]) or "(none)"),
        ("release tags", ", ".join(plan["tags"]) or "(none)"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="course", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("assign", help="write the student starter of a layer")
    p.add_argument("layer")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--week", type=int, help="the week, shown in the README")
    p.add_argument(
        "--keep", action="append", default=[], metavar="TASK", help="keep this task's code"
    )
    p.add_argument("--guide-url", help="the course guide's URL (course.toml's [guide] url)")
    p = sub.add_parser("check", help="generate a starter and prove it right")
    p.add_argument("layers", nargs="*")
    p.add_argument("--all", action="store_true", help="every layer of course.toml")
    p.add_argument(
        "--one-task",
        action="store_true",
        help="also prove each task's tests fail when only that task is missing",
    )
    p = sub.add_parser("grade", help="grade a student's directory")
    p.add_argument("dir", type=Path)
    p.add_argument("--layer", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--time-limit", type=float, help="seconds per task (course.toml)")
    p.add_argument("--data-dir", type=Path, help="real data for the training subset")
    p = sub.add_parser("autograder", help="write a layer's Gradescope autograder bundle")
    p.add_argument("layer")
    p.add_argument("--out", type=Path, required=True, help="the zip file to write")
    p.add_argument("--time-limit", type=float, help="seconds per task (course.toml)")
    p.add_argument(
        "--data-dir",
        type=Path,
        help="real data for the training subset (default: $MINITORCH_DATA)",
    )
    p = sub.add_parser("mutants", help="grade mutants of a layer's solution blocks")
    p.add_argument("layer")
    p.add_argument("--task", action="append", default=[], help="only this task (repeatable)")
    p.add_argument("--sample", type=int, help="this many mutants per task, chosen at random")
    p.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    p.add_argument(
        "--first-failure",
        action="store_true",
        help="stop each mutant's tests at the first failure (kept points: an upper bound)",
    )
    p.add_argument(
        "--all-tests", action="store_true", help="run all of the task's tests on each mutant"
    )
    p.add_argument("--json", type=Path, help="also write every outcome to this file")
    p = sub.add_parser("week", help="print a week's dates, starters and release tags")
    p.add_argument("week", type=int)
    p.add_argument("--json", action="store_true", help="as JSON (for scripts)")
    p.add_argument("--github-output", type=Path, help="also write them as step outputs")
    args = parser.parse_args(argv)

    try:
        cal = load_calendar()
        if args.command == "assign":
            st = assign(
                args.layer,
                args.out,
                keep=frozenset(args.keep),
                week=args.week,
                cal=cal,
                guide_url=args.guide_url,
            )
            shown = ", ".join(f"{t}: {n}" for t, n in sorted(st.blocks.items()))
            print(f"wrote {st.path} (solution blocks replaced: {shown or 'none'})")
            return 0
        if args.command == "check":
            names = list(cal.layers) if args.all else args.layers
            if not names:
                parser.error("name a layer or give --all")
            failed = []
            for name in names:
                t0 = time.perf_counter()
                problems = check(name, cal, one_task=args.one_task)
                took = time.perf_counter() - t0
                for prob in problems:
                    print(f"FAIL {name}: {prob}")
                print(f"{'FAIL' if problems else 'ok'} {name} ({took:.0f}s)")
                if problems:
                    failed.append(name)
            if failed:
                print(f"course check failed for: {', '.join(failed)}")
            return 1 if failed else 0
        if args.command == "grade":
            if args.time_limit is not None and args.time_limit <= 0:
                raise CourseError(f"--time-limit must be positive, got {args.time_limit:g}")
            res = grade(
                args.dir, args.layer, cal=cal, time_limit=args.time_limit, data_dir=args.data_dir
            )
            args.out.write_text(json.dumps(res, indent=2) + "\n", "utf-8")
            for t in res["tests"]:
                print(f"{t['name']}: {t['score']:g}/{t['max_score']:g}")
            print(f"total: {res['score']:g}")
            return 0
        if args.command == "mutants":
            from mutants import run_mutants

            if args.sample is not None and args.sample <= 0:
                raise CourseError(f"--sample must be positive, got {args.sample}")
            return run_mutants(
                args.layer,
                tasks=args.task,
                sample=args.sample,
                seed=args.seed,
                first_failure=args.first_failure,
                all_tests=args.all_tests,
                json_out=args.json,
            )
        if args.command == "autograder":
            zipped = autograder(
                args.layer, args.out, cal=cal, time_limit=args.time_limit, data_dir=args.data_dir
            )
            print(f"wrote {zipped} ({zipped.stat().st_size / 1e6:.1f} MB)")
            return 0
        plan = week_plan(args.week, cal)
        print(json.dumps(plan) if args.json else week_table(plan))
        if args.github_output:
            with args.github_output.open("a", encoding="utf-8") as f:
                f.write(f"starters={json.dumps(plan['starters'])}\n")
                f.write(f"tags={' '.join(plan['tags'])}\n")
        return 0
    except (CalendarError, CourseError, SubmissionError) as e:
        first, *_ = str(e).splitlines() or [""]
        print(f"error: {first if isinstance(e, SubmissionError) else e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
