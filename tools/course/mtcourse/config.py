"""The course calendar (``course.toml``) and the facts about each layer it needs."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomllib
from packaging.requirements import Requirement

__all__ = [
    "REPO",
    "Calendar",
    "CalendarError",
    "Layer",
    "StarterEdit",
    "Task",
    "Week",
    "load_calendar",
    "own_layer_commands",
    "root_pyproject",
]

REPO = Path(__file__).resolve().parents[3]
"""The repository root (this file is ``tools/course/mtcourse/config.py``)."""

_TASK = re.compile(r"task\d+_\d+")
_VERSION = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


class CalendarError(ValueError):
    """``course.toml`` is inconsistent with itself or with the repository."""


@dataclass(frozen=True)
class Task:
    """A task with code to write: its marker id, title and points.

    ``tests_of`` names the tasks whose functions a *test-writing* task's tests check: its
    solution blocks are test bodies (in the layer's tests), graded by the mistakes in those
    functions (mutants) that the student's tests catch.
    """

    id: str
    title: str
    points: float
    tests_of: tuple[str, ...] = ()


@dataclass(frozen=True)
class StarterEdit:
    """A line of the solution the starter says differently (``old`` occurs once in ``file``)."""

    file: str
    old: str
    new: str


@dataclass(frozen=True)
class Layer:
    """One layer (package ``packages/mt-<name>``) as the course sees it."""

    name: str
    solution_version: str
    tasks: tuple[Task, ...]
    needs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    scaffold_tests: tuple[str, ...] = ()
    solution_only: tuple[str, ...] = ()
    child_process_tests: tuple[str, ...] = ()
    starter_edits: tuple[StarterEdit, ...] = ()
    time_limit: float | None = None
    """Seconds per task when graded, if not ``[grading]``'s (a layer whose tests compile)."""
    training_data: dict[str, int] = field(default_factory=dict)
    """The data subset its training tests need (``mnist-train`` -> number of images...)."""
    test_env: dict[str, str] = field(default_factory=dict)
    """Environment the starter's tests need on a machine without a GPU (the CUDA simulator)."""
    uses: dict[str, tuple[str, ...]] | None = None
    """Task -> the other tasks of the layer whose code its tests run (``check`` proves it).

    None where course.toml does not say (then neither ``check`` nor the README does).
    """
    pure: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Graded functions whose answer depends on their arguments alone (``file:name`` ->
    the positions of the arguments they write into): the grader's worker remembers the
    course's answers to them instead of asking again (a kernel calls them per element)."""
    whole: tuple[str, ...] = ()
    """Tasks graded on the student's whole copy of the layer at once (training a network of
    Scalars: one function at a time, each scalar operation would cross the sandbox)."""
    stand_ins: dict[str, str] = field(default_factory=dict)
    """Graded module -> a solution-only module with the same functions, faster (``src``
    paths): when the worker asks the grader for the course's answer of a function of the
    first, the grader's copy runs the second's function of that name, where it has it."""
    submitted_files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Task -> files of the submission that are not code (``mt_examples/...``) which the
    task's tests read: the export of task 0.5's weights. The course's own copies are in
    ``examples/``; the grader hands the course's tests the student's copy, never the
    course's."""

    @property
    def package(self) -> str:
        """The distribution name, ``mt-<layer>``."""
        return f"mt-{self.name}"

    @property
    def path(self) -> Path:
        """The package directory in the repository."""
        return REPO / "packages" / self.package

    @property
    def src(self) -> Path:
        """The layer's subpackage, ``src/minitorch/<layer>``."""
        return self.path / "src" / "minitorch" / self.name

    @property
    def hidden_tests(self) -> Path:
        """The folder of hidden tests, kept in this repository only."""
        return REPO / "tools" / "course" / "hidden" / self.name / "tests"

    @property
    def training_tests(self) -> Path:
        """The folder of the course's tests of the layer's training tasks (see README)."""
        return REPO / "tools" / "course" / "training" / self.name / "tests"

    @property
    def task_ids(self) -> tuple[str, ...]:
        """The ids of the tasks with code to write."""
        return tuple(t.id for t in self.tasks)

    @property
    def test_writing_ids(self) -> frozenset[str]:
        """The tasks whose code is tests of other tasks' functions (``tests-of`` set)."""
        return frozenset(t.id for t in self.tasks if t.tests_of)

    @property
    def code_task_ids(self) -> tuple[str, ...]:
        """The tasks whose code is the layer's functions or training scripts, in order.

        Every task but the test-writing ones (``test_writing_ids``).
        """
        return tuple(t.id for t in self.tasks if not t.tests_of)

    def task(self, tid: str) -> Task:
        """The task ``tid`` of this layer.

        Raises:
            KeyError: if the layer has no such task.
        """
        for t in self.tasks:
            if t.id == tid:
                return t
        raise KeyError(tid)

    def pyproject(self) -> dict[str, Any]:
        """The package's ``pyproject.toml``."""
        with (self.path / "pyproject.toml").open("rb") as f:
            return tomllib.load(f)

    def checkout_version(self) -> str:
        """The version in the checkout's ``__about__.py``."""
        m = _VERSION.search((self.src / "__about__.py").read_text(encoding="utf-8"))
        if m is None:
            raise CalendarError(f"{self.src / '__about__.py'} has no __version__")
        return m.group(1)

    def sibling_dependencies(self) -> list[str]:
        """Names of the lower layers this one depends on directly (``operators``...).

        mt-root (the ``minitorch`` namespace root, required by every layer) is not a layer
        of the course: the wheelhouses always hold it.
        """
        reqs = [Requirement(r) for r in self.pyproject()["project"].get("dependencies", [])]
        siblings = [r for r in reqs if r.name.startswith("mt-") and r.name != "mt-root"]
        return [r.name.removeprefix("mt-") for r in siblings]


@dataclass(frozen=True)
class Week:
    """One week of the calendar."""

    week: int
    starters: tuple[str, ...]
    opens: dt.date
    deadline: dt.date
    release_solutions: tuple[str, ...]


@dataclass(frozen=True)
class Calendar:
    """The whole calendar: layers, weeks and grading limits."""

    layers: dict[str, Layer]
    weeks: tuple[Week, ...]
    time_limit: float
    output_limit: int
    scripts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Training script (path from the repository root) -> the training tasks that hand it out.

    The script's markers name the first; the starters of the others get it re-tagged.
    """
    guide_url: str = ""
    """The course guide (``[guide] url``): a starter's README links ``<url>modules/<layer>/``."""

    def layer(self, name: str) -> Layer:
        """Return the layer called ``name`` (as in ``hatch run test:pkg <name>``)."""
        try:
            return self.layers[name]
        except KeyError:
            raise CalendarError(
                f"unknown layer {name!r}; course.toml has {', '.join(self.layers)}"
            ) from None

    def week(self, number: int) -> Week:
        """Return week ``number``."""
        for w in self.weeks:
            if w.week == number:
                return w
        raise CalendarError(f"course.toml has no week {number}")

    def closure(self, name: str) -> list[str]:
        """The layers below ``name`` that it needs, lowest first (not ``name`` itself)."""
        order: list[str] = []

        def visit(n: str) -> None:
            for dep in self.layer(n).sibling_dependencies():
                if dep not in order:
                    visit(dep)
                    order.append(dep)

        visit(name)
        return order

    def scripts_of(self, name: str) -> dict[str, str]:
        """The training scripts in layer ``name``'s starter: path -> the layer's task."""
        tasks = set(self.layer(name).task_ids)
        return {s: t for s, ts in self.scripts.items() for t in ts if t in tasks}

    def training_tasks(self, name: str) -> tuple[str, ...]:
        """The tasks of layer ``name`` whose code is a training script's network."""
        return tuple(dict.fromkeys(self.scripts_of(name).values()))


def _date(value: Any, where: str) -> dt.date:
    if not isinstance(value, dt.date):
        raise CalendarError(f"{where} must be a TOML date (2027-01-11), got {value!r}")
    return value


def load_calendar(path: Path = REPO / "course.toml") -> Calendar:
    """Read and check ``course.toml``.

    Raises:
        CalendarError: naming what is inconsistent (an unknown layer or task id, a solution
            released before its deadline, a starter whose lower layers are not released).
    """
    with path.open("rb") as f:
        data = tomllib.load(f)
    layers: dict[str, Layer] = {}
    for name, raw in data.get("layers", {}).items():
        tasks = tuple(
            Task(
                tid,
                str(t["title"]),
                float(t.get("points", 10)),
                tuple(map(str, t.get("tests-of", ()))),
            )
            for tid, t in raw.get("tasks", {}).items()
        )
        needs = {k: tuple(v) for k, v in raw.get("needs", {}).items()}
        for tid in [t.id for t in tasks] + list(needs):
            if not _TASK.fullmatch(tid):
                raise CalendarError(f"layers.{name}: {tid!r} is not a task id like task0_1")
        edits = tuple(
            StarterEdit(str(e["file"]), str(e["old"]), str(e["new"]))
            for e in raw.get("starter-edits", ())
        )
        layer = Layer(
            name,
            str(raw["solution-version"]),
            tasks,
            needs,
            tuple(raw.get("scaffold-tests", ())),
            tuple(raw.get("solution-only", ())),
            tuple(raw.get("child-process-tests", ())),
            edits,
            float(raw["time-limit"]) if "time-limit" in raw else None,
            {str(k): int(v) for k, v in raw.get("training-data", {}).items()},
            {str(k): str(v) for k, v in raw.get("test-env", {}).items()},
            {str(k): tuple(map(str, v)) for k, v in raw["uses"].items()} if "uses" in raw else None,
        )
        layer = replace(
            layer,
            pure={str(k): tuple(int(i) for i in v) for k, v in raw.get("pure", {}).items()},
            whole=tuple(str(t) for t in raw.get("whole", ())),
            stand_ins={str(k): str(v) for k, v in raw.get("stand-ins", {}).items()},
            submitted_files={
                str(k): tuple(map(str, v)) for k, v in raw.get("submitted-files", {}).items()
            },
        )
        for tid, files in layer.submitted_files.items():
            for rel in files:
                if not rel.startswith("mt_examples/") or not (REPO / "examples" / rel).is_file():
                    raise CalendarError(
                        f"layers.{name}.submitted-files.{tid}: {rel} is not a file of "
                        "examples/mt_examples/"
                    )
        for graded, fast in layer.stand_ins.items():
            for rel in (graded, fast):
                if not (layer.src / rel).is_file():
                    raise CalendarError(
                        f"layers.{name}.stand-ins: {rel} is not a file of src/minitorch/{name}"
                    )
            if f"src/minitorch/{name}/{fast}" not in layer.solution_only:
                raise CalendarError(
                    f"layers.{name}.stand-ins: {fast} must be solution-only (the worker "
                    "never gets it)"
                )
        for writer in tasks:
            for t in writer.tests_of:
                if t not in layer.task_ids or t == writer.id or layer.task(t).tests_of:
                    raise CalendarError(
                        f"layers.{name}.tasks.{writer.id}.tests-of: {t} is not another task "
                        f"of {name} with functions to write"
                    )
        for tid in layer.whole:
            if tid not in layer.task_ids:
                raise CalendarError(f"layers.{name}.whole: {tid} is not a task of {name}")
        for tid, used in (layer.uses or {}).items():
            for t in (tid, *used):
                if t not in layer.task_ids and t not in layer.needs:
                    raise CalendarError(f"layers.{name}.uses: {t} is not a task of {name}")
        if not layer.path.is_dir():
            raise CalendarError(f"layers.{name}: there is no package {layer.path}")
        for rel in [*layer.solution_only, *(e.file for e in edits)]:
            if not (layer.path / rel).is_file():
                raise CalendarError(f"layers.{name}: {rel} is not a file of {layer.package}")
        layers[name] = layer

    weeks = tuple(
        Week(
            int(w["week"]),
            tuple(w.get("starters", ())),
            _date(w["opens"], f"week {w['week']}: opens"),
            _date(w["deadline"], f"week {w['week']}: deadline"),
            tuple(w.get("release-solutions", ())),
        )
        for w in data.get("weeks", [])
    )
    grading = data.get("grading", {})
    scripts = {
        str(k): (str(v),) if isinstance(v, str) else tuple(map(str, v))
        for k, v in data.get("scripts", {}).items()
    }
    owner = {t: name for name, layer in layers.items() for t in layer.task_ids}
    for script, script_tasks in scripts.items():
        if not (REPO / script).is_file():
            raise CalendarError(f"scripts: {script} is not a file of the repository")
        for task in script_tasks:
            if task not in owner:
                raise CalendarError(f"scripts: {script}'s {task} is not a task of a layer")
        if len({owner[t] for t in script_tasks}) != len(script_tasks):
            raise CalendarError(f"scripts: {script} names two tasks of one layer")
    cal = Calendar(
        layers,
        weeks,
        float(grading.get("time-limit", 120)),
        int(grading.get("output-limit", 65536)),
        scripts,
        str(data.get("guide", {}).get("url", "")),
    )

    deadline: dict[str, dt.date] = {}
    released: dict[str, int] = {}
    for w in weeks:
        for name in w.starters + w.release_solutions:
            cal.layer(name)
        for name in w.starters:
            deadline[name] = w.deadline
        for name in w.release_solutions:
            if name not in deadline or deadline[name] > w.opens:
                raise CalendarError(
                    f"week {w.week} releases the {name} solution before its deadline"
                )
            released[name] = w.week
    for w in weeks:
        for name in w.starters:
            for dep in cal.closure(name):
                if released.get(dep, w.week + 1) > w.week:
                    raise CalendarError(
                        f"week {w.week}: the {name} starter needs the {dep} solution wheel, "
                        "which is not released by then"
                    )
    return cal


def root_pyproject() -> dict[str, Any]:
    """The repository's own ``pyproject.toml`` (pytest's markers, ruff's rules)."""
    with (REPO / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def own_layer_commands(layer: Layer, cal: Calendar) -> tuple[str, str]:
    """The commands that install the student's own lower layers, and the course's back.

    Returns:
        Two blocks of lines, one command per lower layer each: the editable installs of
        ``../mt-<layer>`` (without dependencies), and the reinstalls of the course's wheels.
    """
    pins = [(f"mt-{d}", cal.layer(d).solution_version) for d in cal.closure(layer.name)]
    install = "".join(f"python -m pip install --no-deps -e ../{name}\n" for name, _ in pins)
    restore = "".join(
        f"python -m pip install --force-reinstall --no-deps --no-index --find-links wheels "
        f"{name}=={version}\n"
        for name, version in pins
    )
    return install, restore
