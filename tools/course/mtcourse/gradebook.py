"""``course grade-all`` and ``course merge-grades``: a whole class into one gradebook.

    hatch run course:grade-all DIR --layer LAYER --out gradebook.csv [--jobs N] [--shard I/N]

``DIR`` holds one submission per student: a folder or a zip, named for the student (the
name without ``.zip``). Each is graded as the bundle grades (its own worker, sandbox and
scratch folder; ``N`` at a time), into ``<gradebook>-results/<student>/results.json``,
and the gradebook has a row per student: ``student``, a column per task (``2.1``),
``total`` and ``status`` (``graded``, or why not), below a first row, ``(maximum points)``,
of each task's points and the total. A submission that could not be graded (a broken zip,
an empty folder) has empty cells, not zeros, and its reason in ``status``. The gradebook
is rewritten as each submission finishes, and the progress bar counts finished ones. A
rerun keeps the results already written. ``--shard I/N`` grades every N-th submission only
(the I-th of each N), so a CI matrix can split a class over machines; ``merge-grades``
joins the shards' gradebooks.
"""

from __future__ import annotations

import concurrent.futures
import csv
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .config import Calendar, load_calendar
from .grade import GradingEnv, grading_env
from .grader import grading, sandbox
from .layers import CourseError

__all__ = ["cell", "grade_all", "merge_grades", "submissions", "uncell"]


def submissions(folder: Path) -> dict[str, Path]:
    """Student -> submission (a folder or a zip) in ``folder``, by name.

    Raises:
        CourseError: if ``folder`` is not a folder, or two entries name one student.
    """
    if not folder.is_dir():
        raise CourseError(f"{folder} is not a folder of submissions")
    out: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir() or entry.suffix == ".zip":
            name = entry.stem if entry.suffix == ".zip" else entry.name
            if name in out:
                raise CourseError(f"two submissions for {name}: {out[name].name} and {entry.name}")
            out[name] = entry
    return out


def _shard(spec: str | None) -> tuple[int, int]:
    if spec is None:
        return 1, 1
    try:
        i, n = (int(x) for x in spec.split("/"))
    except ValueError:
        raise CourseError(f"--shard takes I/N, such as 2/4, not {spec!r}") from None
    if not 1 <= i <= n:
        raise CourseError(f"--shard {spec}: I must be between 1 and N")
    return i, n


def _columns(env_tasks: list[tuple[str, str, float]]) -> list[str]:
    return [
        "student",
        *(t[0].removeprefix("task").replace("_", ".") for t in env_tasks),
        "total",
        "status",
    ]


MAXIMUM = "(maximum points)"
"""The first row's ``student`` cell: each task's points and the total a submission can earn."""


def _maximum(tasks: list[tuple[str, str, float]]) -> dict[str, Any]:
    row: dict[str, Any] = {"student": MAXIMUM, "status": ""}
    for tid, _, points in tasks:
        row[tid.removeprefix("task").replace("_", ".")] = f"{points:.2f}"
    row["total"] = f"{sum(points for _, _, points in tasks):.2f}"
    return row


def _row(
    student: str, tasks: list[tuple[str, str, float]], res: dict[str, Any] | None, status: str
) -> dict[str, Any]:
    row: dict[str, Any] = {"student": student, "status": status}
    graded = status == "graded"  # a submission that was not graded has no points, not 0
    by_task: dict[str, float] = {}
    for entry in (res or {}).get("tests", []):
        by_task[entry["number"]] = by_task.get(entry["number"], 0.0) + float(entry["score"])
    for tid, _, _ in tasks:
        n = tid.removeprefix("task").replace("_", ".")
        row[n] = f"{by_task.get(n, 0.0):.2f}" if graded else ""
    row["total"] = f"{sum(by_task.values()):.2f}" if graded else ""
    return row


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP's list for CSV injection)."""


def cell(value: Any) -> str:
    """``value`` as a gradebook cell that a spreadsheet shows as text, never evaluates.

    A cell starting with one of :data:`FORMULA_START` (a submission folder named
    ``=HYPERLINK(...)``) gets a leading ``'``, as OWASP recommends; :func:`uncell` reads
    it back as it was.
    """
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def uncell(text: str) -> str:
    """The value of a cell :func:`cell` wrote."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


def _write_csv(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    """Write the gradebook atomically: the maximum row first (if any), then by student."""
    tmp = path.with_suffix(".tmp")
    top = [r for r in rows if r["student"] == MAXIMUM][:1]
    students = sorted((r for r in rows if r["student"] != MAXIMUM), key=lambda r: r["student"])
    with tmp.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writerow({c: cell(c) for c in columns})
        for row in [*top, *students]:
            w.writerow({k: cell(v) for k, v in row.items()})
    tmp.replace(path)


def grade_all(
    folder: Path,
    layer_name: str,
    out: Path,
    *,
    jobs: int = 1,
    shard: str | None = None,
    cal: Calendar | None = None,
    data_dir: Path | None = None,
    isolation: str | None = None,
    env: GradingEnv | None = None,
    progress: bool = True,
    recalibrate: bool = False,
) -> list[dict[str, Any]]:
    """Grade every submission in ``folder`` (see the module's docstring); return the rows.

    Raises:
        CourseError: for a folder that is not one, a bad ``--shard`` or ``--jobs``.
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    if jobs < 1:
        raise CourseError(f"--jobs must be at least 1, got {jobs}")
    index, count = _shard(shard)
    everyone = submissions(folder)
    mine = {s: p for k, (s, p) in enumerate(everyone.items()) if k % count == index - 1}
    results = out.parent / f"{out.stem}-results"
    results.mkdir(parents=True, exist_ok=True)
    tasks = [(t.id, t.title, t.points) for t in layer.tasks]
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for student, path in mine.items():
        done = results / student / "results.json"
        if done.is_file():
            res = json.loads(done.read_text(encoding="utf-8"))
            rows[student] = _row(student, tasks, res, res.get("status", "graded"))
        else:
            todo.append((student, path))
    columns = _columns(tasks)
    if todo:
        with tempfile.TemporaryDirectory(prefix=f"course-grade-all-{layer.name}-") as tmp:
            root = Path(tmp)
            # Traversable, not readable: a worker of its own user (``user`` isolation)
            # reaches its code in ``scratch-*/public`` (the rest of each is 0700). At 0700
            # every worker failed to start and the whole class was graded 0.
            root.chmod(0o711)
            if env is None:
                env = grading_env(
                    layer.name,
                    root / "env",
                    cal=cal,
                    data_dir=data_dir,
                    isolation=isolation,
                    recalibrate=recalibrate,
                )
                for line in grading.calibration_notes(env.course.calibration()):
                    print(line, file=sys.stderr)
            slots = list(range(jobs))
            lock = threading.Lock()

            def one(item: tuple[str, Path]) -> tuple[str, dict[str, Any], str]:
                student, path = item
                with lock:
                    slot = slots.pop()
                scratch = root / f"scratch-{slot}-{student}"
                try:
                    try:
                        res = env.grade(path, scratch, slot)
                        status = "graded"
                    except grading.SubmissionError as e:
                        res = grading.results_for_error(env.course.spec, env.course.units, str(e))
                        status = f"not graded: {str(e).splitlines()[0][:200]}"
                    except Exception as e:
                        res = grading.results_for_error(
                            env.course.spec, env.course.units, f"grader error: {e}"
                        )
                        first = str(e).splitlines()[0][:200] if str(e) else ""
                        status = f"error: {type(e).__name__}: {first}"
                    if env.isolation == "user":
                        # This slot's user only: the other slots are grading.
                        sandbox.end_user(60000 + slot)
                    res["status"] = status
                    where = results / student
                    where.mkdir(parents=True, exist_ok=True)
                    tmp_file = where / "results.json.tmp"
                    tmp_file.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
                    tmp_file.replace(where / "results.json")
                    return student, res, status
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
                    with lock:
                        slots.append(slot)

            bar = tqdm(
                total=len(todo),
                unit="submission",
                disable=not progress,
                desc=f"grading {layer.package}",
            )
            # As each submission finishes, not in name order behind the slowest: the bar
            # counts finished submissions and the gradebook has every result so far.
            with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(one, item) for item in todo]
                for future in concurrent.futures.as_completed(futures):
                    student, res, status = future.result()
                    rows[student] = _row(student, tasks, res, status)
                    _write_csv(out, columns, [_maximum(tasks), *rows.values()])
                    bar.update(1)
            bar.close()
            sandbox.reap()
    _write_csv(out, columns, [_maximum(tasks), *rows.values()])
    return [rows[s] for s in sorted(rows)]


def merge_grades(parts: list[Path], out: Path) -> int:
    """Join shard gradebooks into ``out`` (one maximum row); the number of students.

    Raises:
        CourseError: if the gradebooks have different columns, or one student is in two
            with different grades.
    """
    columns: list[str] | None = None
    rows: dict[str, dict[str, str]] = {}
    for part in parts:
        with part.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if columns is None:
                columns = list(reader.fieldnames or [])
            elif list(reader.fieldnames or []) != columns:
                raise CourseError(f"{part} has other columns than {parts[0]}")
            for raw in reader:
                row = {k: uncell(v) for k, v in raw.items()}
                old = rows.get(row["student"])
                if old is not None and old != row:
                    raise CourseError(
                        f"{row['student']} is in two gradebooks with different grades"
                    )
                rows[row["student"]] = row
    if columns is None:
        raise CourseError("no gradebooks to merge")
    _write_csv(out, columns, list(rows.values()))
    return sum(1 for student in rows if student != MAXIMUM)


def now() -> float:
    """Seconds since an arbitrary point (for the command's timing line)."""
    return time.monotonic()
