"""`course:grade-all` and `course:merge-grades`: a class into one gradebook."""

import csv
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from mtcourse.attacks import ATTACKS
from mtcourse.cli import main
from mtcourse.config import load_calendar
from mtcourse.gradebook import grade_all, merge_grades, submissions
from mtcourse.layers import CourseError
from mtcourse.starter import assign

pytestmark = pytest.mark.packaging

CAL = load_calendar()
ALL = frozenset(CAL.layer("operators").task_ids)


@pytest.fixture
def env(operators_env):
    return operators_env  # conftest.py: one for the session


def a_class(where):
    """Seven students: every kind of submission a course gets."""
    assign("operators", where / "ana", keep=ALL, cal=CAL, wheels=False)  # the solution
    assign("operators", where / "ben", cal=CAL, wheels=False)  # untouched
    assign("operators", where / "cai", keep=frozenset({"task0_4"}), cal=CAL, wheels=False)
    # One wrong function, neg, and task 0.2's tests not written.
    assign("operators", where / "dee", keep=ALL - {"task0_2"}, cal=CAL, wheels=False)
    scalar = where / "dee/src/minitorch/operators/scalar.py"
    scalar.write_text(scalar.read_text().replace("    return -x\n", "    return x\n", 1))
    assign("operators", where / "eve", keep=frozenset({"task0_1"}), cal=CAL, wheels=False)
    next(a for a in ATTACKS if a.name == "init-forges-reports").edit(where / "eve")  # hostile
    shutil.make_archive(str(where / "fay"), "zip", where / "cai")  # a zip of a starter
    (where / "gus.zip").write_bytes(b"PK\x03\x04 not really a zip")  # a broken zip
    (where / "hal").mkdir()  # an empty folder
    return where


def rows(path):
    with path.open(newline="") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


class FakeEnv:
    """A grading environment whose ``grade`` is ``fn(path, scratch, slot)``, and nothing else."""

    isolation = "none"

    class course:
        spec = units = None

        @staticmethod
        def calibration():
            return {}

    def __init__(self, fn):
        self.grade = fn


def test_shards_merge_into_the_gradebook_of_the_whole_class(env, tmp_path, capsys):
    folder = a_class(tmp_path / "class")
    assert list(submissions(folder)) == ["ana", "ben", "cai", "dee", "eve", "fay", "gus", "hal"]
    one = grade_all(folder, "operators", tmp_path / "g1.csv", jobs=2, shard="1/2", env=env)
    two = grade_all(folder, "operators", tmp_path / "g2.csv", jobs=2, shard="2/2", env=env)
    assert [r["student"] for r in one] == ["ana", "cai", "eve", "gus"]
    assert [r["student"] for r in two] == ["ben", "dee", "fay", "hal"]
    assert merge_grades([tmp_path / "g1.csv", tmp_path / "g2.csv"], tmp_path / "all.csv") == 8
    book = rows(tmp_path / "all.csv")
    columns = ["0.1", "0.2", "0.3", "0.4", "0.5", "total"]
    assert list(next(iter(book.values()))) == ["student", *columns, "status"]
    share = 10 / 17
    expected = {
        "ana": ("10.00", "10.00", "10.00", "10.00", "10.00", "50.00"),
        "ben": ("0.00", "0.00", "0.00", "0.00", "0.00", "0.00"),
        "cai": ("0.00", "0.00", "0.00", "10.00", "0.00", "10.00"),
        "dee": (f"{10 - share:.2f}", "0.00", "10.00", "10.00", "10.00", f"{40 - share:.2f}"),
        "eve": ("10.00", "0.00", "0.00", "0.00", "0.00", "10.00"),
        "fay": ("0.00", "0.00", "0.00", "10.00", "0.00", "10.00"),
        # not graded: no points at all, rather than zeros that read as a graded 0
        "gus": ("", "", "", "", "", ""),
        "hal": ("", "", "", "", "", ""),
        "(maximum points)": ("10.00", "10.00", "10.00", "10.00", "10.00", "50.00"),
    }
    with (tmp_path / "all.csv").open(newline="") as f:
        first = next(csv.DictReader(f))
    assert first["student"] == "(maximum points)"  # the first row, whatever the names
    for student, row in expected.items():
        r = book[student]
        assert tuple(r[c] for c in columns) == row, r
    assert {s: r["status"] for s, r in book.items() if r["status"] not in ("graded", "")} == {
        "gus": "not graded: gus.zip is not a valid zip file: File is not a zip file",
        "hal": f"not graded: {folder / 'hal'} is empty: nothing was submitted",
    }
    # Each student's results.json is beside the gradebook.
    res = json.loads((tmp_path / "g1-results/ana/results.json").read_text())
    assert res["score"] == 50
    # A rerun keeps what is done: nothing is graded again.
    stamp = (tmp_path / "g1-results/ana/results.json").stat().st_mtime_ns
    again = grade_all(folder, "operators", tmp_path / "g1.csv", jobs=2, shard="1/2", env=env)
    assert again == one
    assert (tmp_path / "g1-results/ana/results.json").stat().st_mtime_ns == stamp


def test_the_progress_bar_and_the_gradebook_follow_finished_submissions(tmp_path, monkeypatch):
    """A slow first submission holds back neither the bar nor the others' rows."""
    import threading

    from mtcourse import gradebook

    for name in ("a-slow", "b", "c"):
        (tmp_path / "class" / name).mkdir(parents=True)
    release = threading.Event()
    seen: list[list[str]] = []

    def grade(path, scratch, slot):
        if path.name == "a-slow":
            assert release.wait(20), "the other submissions never finished"
        return {"tests": [{"number": "0.1", "score": 1.0}]}

    updates: list[int] = []

    class Bar:
        def __init__(self, **kwargs):
            pass

        def update(self, n):
            updates.append(n)
            out = tmp_path / "g.csv"
            seen.append([r["student"] for r in csv.DictReader(out.open(newline=""))])
            if len(updates) == 2:
                release.set()  # b and c are done and written: now let a-slow finish

        def close(self):
            pass

    monkeypatch.setattr(gradebook, "tqdm", Bar)
    grade_all(tmp_path / "class", "operators", tmp_path / "g.csv", jobs=3, env=FakeEnv(grade))
    assert updates == [1, 1, 1]
    assert sorted(seen[1]) == ["(maximum points)", "b", "c"]  # before a-slow finished
    assert seen[2] == ["(maximum points)", "a-slow", "b", "c"]


def test_a_worker_of_its_own_user_can_reach_its_scratch_folder(tmp_path):
    """In ``user`` isolation grade-all's folder was 0700: every worker failed to start and a
    class (the course's own solution among it) was graded 0.00 with exit status 0."""
    (tmp_path / "class" / "a").mkdir(parents=True)
    parents: list[int] = []

    top = Path(tempfile.gettempdir())  # grade-all's folders; above them is the machine's

    def grade(path, scratch, slot):
        parents.extend(p.stat().st_mode & 0o777 for p in scratch.parents if top in p.parents)
        return {"tests": [{"number": "0.1", "score": 1.0}]}

    env = FakeEnv(grade)
    grade_all(tmp_path / "class", "operators", tmp_path / "g.csv", progress=False, env=env)
    assert parents, "grade was not called"
    assert all(mode & 0o001 for mode in parents), [oct(m) for m in parents]  # others may pass


def test_a_slot_that_is_done_leaves_the_other_slots_processes_running(tmp_path):
    """In ``user`` isolation a slot that finished a submission killed every process below
    the grader: the other slot's test process too, whose later tasks then read "stopped
    before the end" (the course's own solution 10/50 under ``--jobs 2``)."""
    for name in ("a-slow", "b"):
        (tmp_path / "class" / name).mkdir(parents=True)
    done = tmp_path / "g-results" / "b" / "results.json"  # written after b's slot cleaned up
    alive: list[bool] = []

    def grade(path, scratch, slot):
        if path.name == "b":
            return {"tests": [{"number": "0.1", "score": 1.0}]}
        test_process = subprocess.Popen(["sleep", "60"])  # stands for its slot's pytest
        try:
            deadline = time.monotonic() + 30
            while not done.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)
            alive.append(test_process.poll() is None)
        finally:
            test_process.kill()
            test_process.wait()
        return {"tests": [{"number": "0.1", "score": 1.0}]}

    env = FakeEnv(grade)
    env.isolation = "user"
    grade_all(tmp_path / "class", "operators", tmp_path / "g.csv", jobs=2, progress=False, env=env)
    assert done.exists()
    assert alive == [True]


def test_bad_arguments_are_clear_errors(tmp_path, capsys):
    with pytest.raises(CourseError, match="I/N"):
        grade_all(tmp_path, "operators", tmp_path / "g.csv", shard="3")
    with pytest.raises(CourseError, match="between 1 and N"):
        grade_all(tmp_path, "operators", tmp_path / "g.csv", shard="3/2")
    with pytest.raises(CourseError, match="not a folder of submissions"):
        grade_all(tmp_path / "nope", "operators", tmp_path / "g.csv")
    (tmp_path / "a.csv").write_text("student,0.1,total,status\nx,1,1,graded\n")
    (tmp_path / "b.csv").write_text("student,0.1,total,status\nx,2,2,graded\n")
    with pytest.raises(CourseError, match="x is in two gradebooks with different grades"):
        merge_grades([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "m.csv")
    code = main(["grade-all", str(tmp_path / "nope"), "--layer", "operators", "--out", "g.csv"])
    assert code == 2
    assert "not a folder of submissions" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name", ['=HYPERLINK("http://x","y")', "@SUM(1+1)", "+1", "-2+3", "\tTAB", "\rCR", "ok"]
)
def test_a_cell_a_spreadsheet_would_evaluate_is_written_as_text(tmp_path, name):
    """OWASP's rule for CSV injection: a leading ' on = + - @ tab CR; the name reads back."""
    from mtcourse.gradebook import _write_csv, cell, uncell

    out = tmp_path / "grades.csv"
    _write_csv(out, ["student", "status"], [{"student": name, "status": f"error: {name}"}])
    with out.open(newline="", encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    assert not row["student"].startswith(("=", "+", "-", "@", "\t", "\r"))
    assert uncell(row["student"]) == name == uncell(cell(name))
    assert row["status"] == f"error: {name}"  # starts with "e": left as it is
    merged = tmp_path / "merged.csv"
    merge_grades([out], merged)
    assert merged.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")  # not twice
