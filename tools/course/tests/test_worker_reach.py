"""Nothing of the course is inside the worker's sandbox, at every isolation level offered here.

The family: code of the submission that looks for the course's files from inside the
worker (at definition time, in a decorator of a spliced ``def``; at call time), through
its mounts, ``sys.path``, ``/autograder`` or the whole file system; and a submission that
points at them with a link. The self-inspection probe proves the sandbox shows none of
them; the attacks show what a submission that tries gets (the stubs' points).
"""

import os
import shutil
from pathlib import Path

import pytest

from mtcourse.attacks import steal
from mtcourse.config import load_calendar
from mtcourse.grader import grading, sandbox
from mtcourse.grader.selfcheck import self_inspect
from mtcourse.starter import assign

pytestmark = pytest.mark.packaging

CAL = load_calendar()


def levels(env) -> list[str]:
    """Every level this machine offers the grading Python (``none`` is not a sandbox)."""
    out = []
    for level in ("bwrap", "user"):
        try:
            sandbox.isolation(level, str(env.course.python))
        except RuntimeError:
            continue
        out.append(level)
    assert out, "no isolation level here: install bubblewrap (tools/course/install-sandbox.sh)"
    return out


def test_the_probe_reads_no_file_of_the_course_at_any_level(operators_env, tmp_path):
    for level in levels(operators_env):
        report = self_inspect(operators_env.course, tmp_path / level, level)
        assert report["secrets"] > 10, report  # the solution, the hidden tests, the grader's copies
        assert report["seen"] > 1000, report  # it walked a real file system (Python's own)
        assert report["leaks"] == [], report


def test_the_probe_finds_a_course_file_put_where_the_worker_reads(operators_env, tmp_path):
    """The control: a copy of the solution in a folder the sandbox shows is found."""
    course = operators_env.course
    secret = course.root / "solution" / "minitorch" / "operators" / "scalar.py"
    site = Path(course.python).parents[1] / "lib"
    planted = next(site.glob("python3*/site-packages")) / "_planted_scalar.txt"
    shutil.copyfile(secret, planted)
    planted.chmod(0o644)
    try:
        report = self_inspect(course, tmp_path / "control", levels(operators_env)[0])
    finally:
        planted.unlink()
    # (named as the first course file of that content: solution/ or full/ hold the same)
    assert [p for p, _ in report["leaks"]] == [str(planted)], report


def test_the_sandbox_never_shows_the_callers_python_path(tmp_path, monkeypatch):
    """The grader's test process runs with PYTHONPATH = its copy of the solution."""
    secret = tmp_path / "grader-solution"
    secret.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(secret))
    paths = sandbox._python_paths(Path(os.path.realpath(shutil.which("python3") or "python3")))
    assert not any(p == secret or secret.is_relative_to(p) for p in paths), paths


def test_a_folder_of_the_course_the_sandbox_would_show_is_refused(tmp_path):
    python = os.path.realpath(shutil.which("python3") or "python3")
    prefix = sandbox.python_paths(python)[0]
    jail = sandbox.Jail("bwrap", tmp_path / "home", (), hidden=(prefix / "course",))
    with pytest.raises(sandbox.SandboxError, match="holds"):
        sandbox.shown(python, jail)


def test_definition_time_code_finds_no_solution_to_take(operators_env, tmp_path):
    student = tmp_path / "s"
    assign("operators", student, cal=CAL, wheels=False)  # every function a stub
    # Decorators that search the worker's mounts, sys.path, /autograder and /tmp for the
    # course's scalar.py and take its functions (the attack of ``course:attacks``).
    for name in ("mul", "add", "neg"):
        steal("scalar.py", name)(student)
    for level in levels(operators_env):
        res = grading.grade(
            operators_env.course, student, tmp_path / f"scratch-{level}", level, tasks=("task0_1",)
        )
        outputs = "\n".join(t["output"] for t in res["tests"])
        assert res["score"] == 0.0, (level, outputs[-3000:])


def test_a_linked_folder_to_the_course_is_not_graded(operators_env, tmp_path):
    """``src/minitorch -> <the course's solution>``: refused, with the reason."""
    student = tmp_path / "s"
    assign("operators", student, cal=CAL, wheels=False)
    shutil.rmtree(student / "src" / "minitorch")
    (student / "src" / "minitorch").symlink_to(operators_env.course.root / "solution" / "minitorch")
    with pytest.raises(grading.SubmissionError, match="symbolic link"):
        operators_env.grade(student, tmp_path / "scratch")
