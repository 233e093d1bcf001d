"""``course grade``: grade a submission on this machine, as the autograder bundle does.

A grading environment (:func:`grading_env`) is built once per layer and grades any number
of submissions: a fresh virtual environment with the lower layers' solution wheels, the
layer's course folder (``bundle.write_course``) and its calibration (the course's own
solution graded once here, which must earn every point).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

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
    recalibrate: bool = False,
) -> GradingEnv:
    """Build ``layer_name``'s grading environment in ``root`` and calibrate it.

    With ``tasks``, only those are calibrated (and can then be graded). A calibration is
    kept (:func:`calibration_key`: the course's files, the grading Python's packages, the
    isolation and this machine) and reused unless ``recalibrate``; the self-inspection
    probe runs every time.

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
    key = calibration_key(course, mode, tasks)
    kept = None if recalibrate else _kept_calibration(key)
    with tempfile.TemporaryDirectory(prefix=f"course-calibrate-{layer.name}-") as tmp:
        Path(tmp).chmod(0o755)
        if kept is not None:
            (course.root / "calibration.json").write_text(json.dumps(kept["calibration"]), "utf-8")
            print(
                f"calibration of {layer.package} reused: measured {kept['measured']} on this "
                f"machine in {mode} isolation, {kept['seconds']:.0f} s "
                "(--recalibrate measures it again)",
                file=sys.stderr,
            )
        else:
            t0 = time.monotonic()
            with _Progress(f"calibrating {layer.package} ({mode} isolation)") as bar:
                out = grading.calibrate(course, Path(tmp), mode, tasks, progress=bar)
            _keep_calibration(key, out, time.monotonic() - t0)
        # Every time, reused or not: the worker starts here and sees nothing of the course.
        report = self_inspect(course, Path(tmp) / "selfcheck", mode)
    if report["leaks"]:
        path, secret = report["leaks"][0]
        raise RuntimeError(
            f"the worker could read the course's files in {mode} isolation: {path} is the "
            f"course's {secret} ({len(report['leaks'])} such files); nothing is graded"
        )
    return GradingEnv(layer.name, course, mode)


def calibration_key(course: grading.Course, mode: str, tasks: tuple[str, ...] | None) -> str:
    """What a calibration depends on, hashed: equal keys measure the same thing.

    The course folder (its solution, tests, hidden tests and data; not the calibration),
    the code of the layers installed in the grading Python and their versions, that
    Python, the isolation, the tasks, and this machine (its CPU, CPU count, memory, kernel).
    """
    digest = hashlib.sha256(b"mtcourse calibration 1\0")

    def files(top: Path, skip: tuple[str, ...] = ()) -> None:
        for path in sorted(top.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.name not in skip:
                if "__pycache__" in path.parts:
                    continue
                digest.update(path.relative_to(top).as_posix().encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())

    files(course.root, ("calibration.json",))
    venv = Path(course.python).parent.parent
    for site in sorted(venv.glob("lib/python*/site-packages")):
        digest.update(" ".join(sorted(p.name for p in site.glob("*.dist-info"))).encode())
        if (site / "minitorch").is_dir():
            files(site / "minitorch")
    digest.update(os.path.realpath(course.python).encode() + b"\0")
    digest.update(f"{mode}\0{sorted(tasks) if tasks else 'all'}\0".encode())
    digest.update(machine().encode())
    return digest.hexdigest()[:32]


def machine() -> str:
    """This machine, as far as timings go: CPU model, CPUs this process may use, memory, kernel."""
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory = ""
    with contextlib.suppress(OSError):
        memory = Path("/proc/meminfo").read_text().splitlines()[0].split(":", 1)[1].strip()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}; {cpus} CPUs; {memory}; {platform.system()} {platform.release()}"


def calibration_cache() -> Path:
    """Where calibrations are kept: ``$XDG_CACHE_HOME/minitorch-course`` (``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "minitorch-course" / "calibrations"


def _kept_calibration(key: str) -> dict[str, Any] | None:
    path = calibration_cache() / f"{key}.json"
    try:
        kept: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if kept.get("key") != key or not isinstance(kept.get("calibration"), dict):
        return None
    return kept


def _keep_calibration(key: str, calibration: dict[str, Any], seconds: float) -> None:
    folder = calibration_cache()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)  # the plan names the hidden tests
        kept = {
            "key": key,
            "measured": time.strftime("%Y-%m-%d %H:%M"),
            "machine": machine(),
            "seconds": seconds,
            "calibration": calibration,
        }
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(kept) + "\n", encoding="utf-8")
        os.replace(tmp, folder / f"{key}.json")
    except OSError as e:  # a read-only home: calibrate again next time, say so
        print(f"calibration not kept ({folder}: {e})", file=sys.stderr)


class _Progress:
    """A progress bar over calibration's steps (tqdm, on stderr), naming the step it runs."""

    def __init__(self, desc: str) -> None:
        self.desc = desc
        self.bar: tqdm[Any] | None = None

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()

    def __call__(self, done: int, total: int, what: str) -> None:
        if self.bar is None:
            self.bar = tqdm(total=total, desc=self.desc, unit="step", file=sys.stderr)
        self.bar.n = done
        self.bar.set_postfix_str(what)  # refreshes: the estimate follows the steps done


def grade(
    student: Path,
    layer_name: str,
    *,
    cal: Calendar | None = None,
    data_dir: Path | None = None,
    isolation: str | None = None,
    tasks: tuple[str, ...] | None = None,
    recalibrate: bool = False,
) -> dict[str, Any]:
    """Grade a student's folder (or a zip of it); return Gradescope's ``results.json``.

    Builds a grading environment for this one submission (see :func:`grading_env`),
    calibrated for ``tasks`` only if given (the results then hold those tasks only), or
    with the calibration kept from an earlier grading of the same course on this machine.

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
            recalibrate=recalibrate,
        )
        res = env.grade(student, Path(tmp) / "scratch", tasks=tasks)
        sandbox.reap()
        return res
