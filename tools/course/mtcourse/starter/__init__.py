"""``course assign``: write a layer's student starter from the solution."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

from ..config import REPO, Calendar, load_calendar
from ..layers import (
    CourseError,
    ignore_caches,
    scan_blocks,
    script_blocks,
    solution_only_tests,
    written_test_blocks,
)
from ..markers import MarkerError, render
from ..suite import wheelhouse
from .pyproject import student_pyproject
from .readme import REPORT, student_readme
from .scripts import copy_scripts
from .workflow import student_workflow

__all__ = ["Starter", "assign"]


@dataclass
class Starter:
    """What ``assign`` wrote."""

    path: Path
    blocks: dict[str, int] = field(default_factory=dict)  # task id -> number of blocks
    kept: frozenset[str] = frozenset()  # the tasks whose code the starter keeps


# A starter's tests run with the conftest's "starter" hypothesis profile (fewer examples,
# no explain phase), unless HYPOTHESIS_PROFILE says otherwise.
_STARTER_PROFILE = """
# This starter: the "starter" profile above.
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "starter"))
"""


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
        CourseError: for a ``keep`` that is not a task of the layer, bad markers, or lint
            errors left in the starter.
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    unknown = sorted(keep - set(layer.task_ids))
    if unknown:  # a typo would quietly leave a task out of a "full solution" starter
        raise CourseError(
            f"--keep {', '.join(unknown)}: not a task of the {layer_name} layer "
            f"(its tasks: {', '.join(layer.task_ids)})"
        )
    if out.exists() and any(out.iterdir()):
        raise CourseError(f"{out} exists and is not empty")
    starter = Starter(out, kept=keep)
    pkg_out = out / "src" / "minitorch" / layer.name
    shutil.copytree(layer.src, pkg_out, ignore=ignore_caches, dirs_exist_ok=True)
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
        for blocks in [*script_blocks(layer, cal).values(), *written_test_blocks(layer).values()]:
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
    shutil.copytree(layer.path / "tests", out / "tests", ignore=solution_only_tests(layer))
    # A test-writing task's tests: the student gets each test's name, strategies and the
    # property in words, and writes its body.
    for path, blocks in written_test_blocks(layer).items():
        target = out / path.relative_to(layer.path)
        target.write_text(render(path.read_text(encoding="utf-8"), blocks, keep), "utf-8")
    conftest = (REPO / "conftest.py").read_text(encoding="utf-8") + _STARTER_PROFILE
    (out / "conftest.py").write_text(conftest, "utf-8")
    (out / "pyproject.toml").write_text(tomli_w.dumps(student_pyproject(layer, cal, week)), "utf-8")
    (out / "README.md").write_text(student_readme(layer, cal, week, guide_url), "utf-8")
    (out / ".github" / "workflows").mkdir(parents=True)
    (out / ".github" / "workflows" / "tests.yml").write_text(student_workflow(layer), "utf-8")
    copy_scripts(layer, cal, out, keep)
    shutil.copy2(Path(__file__).with_name(REPORT), out / REPORT)
    (out / ".gitignore").write_text("__pycache__/\n*.egg-info/\n.venv/\n.hypothesis/\n")
    if wheels:
        wheelhouse(cal, cal.closure(layer.name), out / "wheels")

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
