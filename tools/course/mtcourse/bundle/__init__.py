"""``course autograder``: a layer's Gradescope bundle, and the course folder grading reads.

The *course folder* holds what the grader needs and no student may see (its layout:
``grader/grading.py``); ``course grade`` writes one into a temporary folder, the bundle
ships one as ``course/``. The bundle's ``setup.sh`` and ``run_autograder`` are the files
in ``templates/``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from dataclasses import asdict
from pathlib import Path

from ..config import REPO, Calendar, Layer, load_calendar
from ..grader.grading import GradeSpec
from ..grader.splice import Unit, find_units
from ..layers import CourseError, check_version, scan_blocks, script_blocks, written_test_blocks
from ..markers import find_blocks, render
from ..starter import assign
from ..starter.scripts import EXAMPLES, script_helpers
from ..suite import data_subset, suite_tree, wheelhouse

__all__ = [
    "OPAQUE",
    "autograder",
    "bundle_readme",
    "grade_spec",
    "layer_units",
    "write_bundle",
    "write_course",
]

#: Classes whose objects cross between the grader and the worker as handles: an autograd
#: history holds the whole graph behind a tensor, which the student's code never walks.
OPAQUE = ("minitorch.tensor.autograd.function:History",)

_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis")


def layer_units(layer: Layer, cal: Calendar) -> list[Unit]:
    """The functions the student writes in ``layer``: the units of its solution blocks."""
    units: list[Unit] = []
    for path, blocks in scan_blocks(layer).items():
        rel = path.relative_to(layer.src).as_posix()
        text = path.read_text(encoding="utf-8")
        units += find_units(text, [(b.task, b.begin, b.end) for b in blocks], rel)
    for path, blocks in script_blocks(layer, cal).items():
        rel = f"mt_examples/{path.name}"
        text = path.read_text(encoding="utf-8")
        units += find_units(text, [(b.task, b.begin, b.end) for b in blocks], rel)
    return units


def grade_spec(layer: Layer, cal: Calendar) -> GradeSpec:
    """What grading ``layer`` needs, from the calendar (as the bundle stores it)."""
    return GradeSpec(
        layer.name,
        layer.package,
        tuple((t.id, t.title, t.points) for t in layer.tasks),
        layer.scaffold_tests,
        cal.output_limit,
        layer.solution_version,
        tuple(
            (group, name, value)
            for group, entries in layer.pyproject()["project"].get("entry-points", {}).items()
            for name, value in entries.items()
        ),
        cal.training_tasks(layer.name),
        tuple(dict.fromkeys(Path(s).name for s in cal.scripts_of(layer.name))),
        tuple(sorted(layer.test_env.items())),
        OPAQUE,
        tuple(sorted(layer.pure.items())),
        layer.whole,
        tuple(sorted(layer.stand_ins.items())),
        _test_tasks(layer),
        tuple(sorted(layer.submitted_files.items())),
    )


def _test_tasks(layer: Layer) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Each test-writing task's file (from the starter's root) and the tests it writes.

    Raises:
        CourseError: if a task's test bodies are in more than one file.
    """
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for path, blocks in written_test_blocks(layer).items():
        rel = path.relative_to(layer.path).as_posix()
        text = path.read_text(encoding="utf-8")
        for task in dict.fromkeys(b.task for b in blocks):
            if task in found:
                raise CourseError(f"{task}: its tests are in {found[task][0]} and {rel}")
            units = find_units(
                text, [(b.task, b.begin, b.end) for b in blocks if b.task == task], rel
            )
            found[task] = (rel, tuple(u.qualname for u in units))
    return tuple((task, rel, names) for task, (rel, names) in found.items())


def _solution_text(path: Path) -> str:
    """A solution file without its marker lines (the code of every task kept)."""
    text = path.read_text(encoding="utf-8")
    blocks = find_blocks(text, str(path))
    return render(text, blocks, frozenset(b.task for b in blocks)) if blocks else text


def write_course(layer: Layer, cal: Calendar, where: Path, data: Path | None = None) -> Path:
    """Write ``layer``'s course folder into ``where`` (which must not exist).

    ``data`` is the training data subset (``suite/data``), if the layer trains on one.
    """
    where.mkdir(parents=True)
    spec = grade_spec(layer, cal)
    units = layer_units(layer, cal)
    (where / "spec.json").write_text(spec.to_json(), "utf-8")
    (where / "units.json").write_text(json.dumps([asdict(u) for u in units], indent=1), "utf-8")
    from ..mutants import test_task_mutants  # (it grades with what this module writes)

    for task in layer.tasks:
        if task.tests_of:
            found = json.dumps(test_task_mutants(layer, task), indent=1)
            (where / f"mutants-{task.id}.json").write_text(found, "utf-8")
    pkg = Path("minitorch") / layer.name
    # The course's code as a submission has it: starter edits applied, solution-only
    # sources left out (mt-fast's FastOps runs the plain kernels the student writes).
    solution = where / "solution" / pkg
    shutil.copytree(layer.src, solution, ignore=_IGNORE)
    prefix = layer.src.relative_to(layer.path)
    for rel in layer.solution_only:
        if Path(rel).is_relative_to(prefix):
            (solution / Path(rel).relative_to(prefix)).unlink()
    for edit in layer.starter_edits:
        target = solution / Path(edit.file).relative_to(prefix)
        text = target.read_text(encoding="utf-8")
        target.write_text(text.replace(edit.old, edit.new, 1), encoding="utf-8")
    for path in solution.rglob("*.py"):
        path.write_text(_solution_text(path), "utf-8")
    # The whole solution package, for the training tasks (it grades the network, fast).
    if spec.training_tasks:
        full = where / "full" / pkg
        shutil.copytree(layer.src, full, ignore=_IGNORE)
        for path in full.rglob("*.py"):
            path.write_text(_solution_text(path), "utf-8")
    # The starter as the student got it.
    starter_tmp = where / ".starter"
    assign(layer.name, starter_tmp, cal=cal, wheels=False)
    shutil.copytree(starter_tmp / "src" / pkg, where / "starter" / pkg, ignore=_IGNORE)
    if spec.scripts:
        for kind in ("solution", "full", "starter"):
            if not (where / kind).is_dir():
                continue
            target = where / kind / "mt_examples"
            target.mkdir(parents=True)
            for name in script_helpers(cal):
                shutil.copy2(EXAMPLES / name, target / name)
            for script in cal.scripts_of(layer.name):
                name = Path(script).name
                if kind == "starter":
                    shutil.copy2(starter_tmp / "mt_examples" / name, target / name)
                else:
                    (target / name).write_text(_solution_text(REPO / script), "utf-8")
    shutil.rmtree(starter_tmp)
    # The course's own copies of the files a submission has that are not code (calibrating).
    for rel in grade_spec(layer, cal).submitted_files:
        target = where / "submitted-solution" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(EXAMPLES.parent / rel, target)
    suite_tree(layer, where / "suite", hidden=True, data=data)
    return where


_TEMPLATES = Path(__file__).resolve().parent / "templates"
_GRADER = Path(__file__).resolve().parents[1] / "grader"


def _template(name: str, **values: str) -> str:
    text = (_TEMPLATES / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def write_bundle(layer: Layer, cal: Calendar, where: Path, data: Path | None) -> Path:
    """Write the autograder bundle's files into ``where`` (``autograder`` zips them)."""
    lower = cal.closure(layer.name)
    wheelhouse(cal, lower, where / "wheels")
    shutil.copytree(_GRADER, where / "grader", ignore=_IGNORE)
    write_course(layer, cal, where / "course", data)
    project = layer.pyproject()["project"]
    third = [r for r in project.get("dependencies", []) if not r.startswith("mt-")]
    test_extra = project.get("optional-dependencies", {}).get(
        "test", ["pytest>=8", "hypothesis>=6.100"]
    )
    reqs = [f"mt-{d}=={cal.layer(d).solution_version}" for d in lower]
    # pyseccomp: the grader's sandbox filter (see grader/sandbox.py).
    reqs += ["mt-root", *third, *test_extra, "pyseccomp>=0.1.2"]
    (where / "requirements.txt").write_text("\n".join(reqs) + "\n", "utf-8")
    imports = "".join(f"; import minitorch.{d}" for d in lower)
    # Compile the lower layers' Numba kernels now, into their cache in the environment.
    warm = (
        '"$VPY" -m minitorch.fast.diagnostics compile-time >/dev/null\n' if "fast" in lower else ""
    )
    for name in ("setup.sh", "run_autograder"):
        text = _template(name, PACKAGE=layer.package, IMPORTS=imports, WARM=warm)
        (where / name).write_text(text, "utf-8")
        (where / name).chmod(0o755)
    (where / "README.md").write_text(bundle_readme(layer, has_data=data is not None), "utf-8")
    return where


def bundle_readme(layer: Layer, *, has_data: bool = False) -> str:
    """The bundle's own README: how to upload it and what each of its files does."""
    points = sum(t.points for t in layer.tasks)
    tasks = ", ".join(f"{t.id[4:].replace('_', '.')}: {t.points:g}" for t in layer.tasks)
    return _template(
        "README.md",
        PACKAGE=layer.package,
        LAYER=layer.name,
        POINTS=f"{points:g}",
        TASKS=f"task {tasks}" if len(layer.tasks) == 1 else f"tasks {tasks}",
        DATA=", and the training data subset its training tasks use" if has_data else "",
    )


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
    layer_name: str, out: Path, *, cal: Calendar | None = None, data_dir: Path | None = None
) -> Path:
    """Write the Gradescope autograder bundle of ``layer_name`` to the zip file ``out``.

    It holds ``setup.sh`` (the environment, then a calibration: the course's solution
    graded once on the grading machine), ``run_autograder``, the grader (``grader/``),
    the course folder (``course/``: the layer's tests, solution and starter, and for a
    layer with training tasks the data subset they train on, made from ``data_dir``, else
    ``$MINITORCH_DATA``), the lower layers' wheels and ``requirements.txt``.

    Raises:
        CourseError: if ``out`` is not a ``.zip`` path, the checkout's versions disagree
            with course.toml, or the layer's training data cannot be made.
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    if out.suffix != ".zip":
        raise CourseError(f"--out must name a .zip file, got {out}")
    check_version(layer)
    with tempfile.TemporaryDirectory(prefix=f"course-autograder-{layer.name}-") as tmp:
        data = data_subset(layer, Path(tmp) / "data", data_dir, required=True)
        bundle = write_bundle(layer, cal, Path(tmp) / "bundle", data)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.unlink(missing_ok=True)
        _zip_dir(bundle, out)
    return out
