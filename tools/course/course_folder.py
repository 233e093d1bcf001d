"""Write a layer's course folder: what the grader needs and no student may see.

See ``mtcourse/grader/grading.py`` for its layout. ``course grade`` writes one into a
temporary folder, ``course autograder`` into the bundle (``course/``).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from config import REPO, Calendar, Layer
from markers import render
from mtcourse.grader.grading import GradeSpec
from mtcourse.grader.splice import Unit, find_units

__all__ = ["OPAQUE", "grade_spec", "layer_units", "write_course"]

#: Classes whose objects cross between the grader and the worker as handles: an autograd
#: history holds the whole graph behind a tensor, which the student's code never walks.
OPAQUE = ("minitorch.tensor.functions:History",)

_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis")


def layer_units(layer: Layer, cal: Calendar) -> list[Unit]:
    """The functions the student writes in ``layer``: the units of its solution blocks."""
    from course import scan_blocks, script_blocks

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
    )


def _solution_text(path: Path) -> str:
    """A solution file without its marker lines (the code of every task kept)."""
    from course import find_blocks

    text = path.read_text(encoding="utf-8")
    blocks = find_blocks(text, str(path))
    return render(text, blocks, frozenset(b.task for b in blocks)) if blocks else text


def write_course(layer: Layer, cal: Calendar, where: Path, data: Path | None = None) -> Path:
    """Write ``layer``'s course folder into ``where`` (which must not exist).

    ``data`` is the training data subset (``suite/data``), if the layer trains on one.
    """
    from course import _SCRIPT_HELPERS, _test_tree, assign

    where.mkdir(parents=True)
    spec = grade_spec(layer, cal)
    units = layer_units(layer, cal)
    (where / "spec.json").write_text(spec.to_json(), "utf-8")
    (where / "units.json").write_text(json.dumps([asdict(u) for u in units], indent=1), "utf-8")
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
            for name in _SCRIPT_HELPERS:
                shutil.copy2(REPO / "examples" / "mt_examples" / name, target / name)
            for script in cal.scripts_of(layer.name):
                name = Path(script).name
                if kind == "starter":
                    shutil.copy2(starter_tmp / "mt_examples" / name, target / name)
                else:
                    (target / name).write_text(_solution_text(REPO / script), "utf-8")
    shutil.rmtree(starter_tmp)
    _test_tree(layer, where / "suite", hidden=True, data=data)
    return where
