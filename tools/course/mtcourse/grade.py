"""``course grade``: grade a submission on this machine, as the autograder bundle does.

A grading environment (:func:`grading_env`) is built once per layer and grades any number
of submissions: a fresh virtual environment with the lower layers' solution wheels, the
layer's course folder (``bundle.write_course``) and its calibration (the course's own
solution graded once here, which must earn every point).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .bundle import layer_units, write_course
from .config import Calendar, load_calendar
from .grader import grading, sandbox
from .grader.selfcheck import self_inspect
from .runner import make_venv
from .suite import data_subset, wheelhouse

__all__ = ["GradingEnv", "grade", "grading_env"]


@dataclass(frozen=True)
class GradingEnv:
    """What grading a layer runs in: built once, it grades any number of submissions."""

    layer: str
    course: grading.Course
    isolation: str

    def grade(
        self,
        submission: Path,
        scratch: Path,
        slot: int = 0,
        tasks: tuple[str, ...] | None = None,
    ) -> dict[str, Any]:
        """Grade ``submission``.

        ``slot`` says which of several concurrent gradings this is; ``tasks`` grades
        those tasks only.

        Raises:
            grading.SubmissionError: if the submission is missing, empty, or no starter.
        """
        return grading.grade(self.course, submission, scratch, self.isolation, 60000 + slot, tasks)


def grading_env(
    layer_name: str,
    root: Path,
    *,
    cal: Calendar | None = None,
    data_dir: Path | None = None,
    isolation: str | None = None,
    tasks: tuple[str, ...] | None = None,
) -> GradingEnv:
    """Build ``layer_name``'s grading environment in ``root`` and calibrate it.

    With ``tasks``, only those are calibrated (and can then be graded).

    ``root`` should be a folder only this user reads (it holds the solution and the hidden
    tests). The training data subset is made from ``data_dir`` (else ``$MINITORCH_DATA``);
    without it, the tests that need it skip.

    Raises:
        RuntimeError: if the solution does not earn every point here (calibration).
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o700)
    lower = cal.closure(layer.name)
    wheels = wheelhouse(cal, lower, root / "wheels")
    reqs = [f"mt-{d}=={cal.layer(d).solution_version}" for d in lower]
    python = make_venv(root / "venv", wheels, reqs)
    data = data_subset(layer, root / "data", data_dir, required=False)
    course = grading.Course(write_course(layer, cal, root / "course", data), python)
    # A worker of its own user (``user`` isolation) runs the environment's Python: it may
    # pass through ``root`` to the venv, and reads nothing else of it.
    root.chmod(0o711)
    for part in root.iterdir():
        if part.name != "venv":
            part.chmod(0o700)
    mode = sandbox.isolation(isolation, str(python))
    sandbox.become_subreaper()
    with tempfile.TemporaryDirectory(prefix=f"course-calibrate-{layer.name}-") as tmp:
        Path(tmp).chmod(0o755)
        grading.calibrate(course, Path(tmp), mode, tasks)
        report = self_inspect(course, Path(tmp) / "selfcheck", mode)
    if report["leaks"]:
        path, secret = report["leaks"][0]
        raise RuntimeError(
            f"the worker could read the course's files in {mode} isolation: {path} is the "
            f"course's {secret} ({len(report['leaks'])} such files); nothing is graded"
        )
    return GradingEnv(layer.name, course, mode)


def grade(
    student: Path,
    layer_name: str,
    *,
    cal: Calendar | None = None,
    data_dir: Path | None = None,
    isolation: str | None = None,
    tasks: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Grade a student's folder (or a zip of it); return Gradescope's ``results.json``.

    Builds a grading environment for this one submission (see :func:`grading_env`),
    calibrated for ``tasks`` only if given (the results then hold those tasks only).

    Raises:
        grading.SubmissionError: the submission is missing, empty, or holds no package.
    """
    cal = cal or load_calendar()
    with tempfile.TemporaryDirectory(prefix=f"course-grade-{layer_name}-") as tmp:
        Path(tmp).chmod(0o711)  # a user-isolation worker passes through to its scratch
        # A submission that cannot be graded at all says so before the environment is built.
        grading.find_submission(student, layer_name, layer_units(cal.layer(layer_name), cal))
        env = grading_env(
            layer_name,
            Path(tmp) / "env",
            cal=cal,
            data_dir=data_dir,
            isolation=isolation,
            tasks=tasks,
        )
        res = env.grade(student, Path(tmp) / "scratch", tasks=tasks)
        sandbox.reap()
        return res
