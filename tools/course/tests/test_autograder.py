"""The Gradescope bundle (`course autograder`), run as the service runs it, offline.

A temporary directory stands in for ``/autograder``: the bundle is unzipped into
``source/``, ``setup.sh`` builds the environment (the third-party packages come from this
environment's site-packages, the lower layers from the bundle's wheels, no index), and
``run_autograder`` grades ``submission/`` into ``results/results.json``. One setup per
layer serves every submission.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from mtcourse.bundle import autograder
from mtcourse.cli import main
from mtcourse.config import load_calendar
from mtcourse.grader.grading import sizing_notes
from mtcourse.starter import assign

pytestmark = pytest.mark.packaging

CAL = load_calendar()


def by_task(result):
    """Score and maximum of each task (its public and hidden entries added up)."""
    out: dict[str, list[float]] = {}
    for t in result["tests"]:
        s = out.setdefault(t["number"], [0.0, 0.0])
        s[0] += t["score"]
        s[1] += t["max_score"]
    return {n: (round(s, 2), round(m, 2)) for n, (s, m) in out.items()}


class Service:
    """A stand-in for the grading service's /autograder, with the bundle set up."""

    def __init__(self, root: Path, layer: str) -> None:
        self.root = root
        self.layer = CAL.layer(layer)
        bundle = autograder(layer, root / "autograder.zip", cal=CAL)
        with zipfile.ZipFile(bundle) as z:
            z.extractall(root / "source")
        for name in ("setup.sh", "run_autograder"):
            info = zipfile.ZipFile(bundle).getinfo(name)
            assert info.external_attr >> 16 & 0o111, f"{name} is not executable in the zip"
            (root / "source" / name).chmod(0o755)
        shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
        env = self.env()
        env["COURSE_PYTHON"] = sys.executable
        env["COURSE_AUTOGRADER_SITE"] = sysconfig.get_paths()["purelib"]
        proc = subprocess.run(
            ["bash", "source/setup.sh"], cwd=root, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        self.setup_log = proc.stdout

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        # Offline, and no pip configuration of this machine (extra indexes, find-links).
        env.update(AUTOGRADER_ROOT=str(self.root), PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull)
        return env

    def grade(self, submission: Path) -> dict:
        """Put ``submission`` (a folder or a zip) where the service does and grade it."""
        target = self.root / "submission"
        shutil.rmtree(target, ignore_errors=True)
        shutil.rmtree(self.root / "results", ignore_errors=True)
        if submission.is_dir():
            shutil.copytree(submission, target)
        else:
            target.mkdir()
            shutil.copy2(submission, target)
        proc = subprocess.run(
            [str(self.root / "run_autograder")],
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return json.loads((self.root / "results" / "results.json").read_text())

    def full(self) -> dict[str, tuple[float, float]]:
        return {t.id[4:].replace("_", "."): (t.points, t.points) for t in self.layer.tasks}

    def only(self, task: str) -> dict[str, tuple[float, float]]:
        return {
            t.id[4:].replace("_", "."): (t.points if t.id == task else 0.0, t.points)
            for t in self.layer.tasks
        }


@pytest.fixture(scope="module")
def operators(tmp_path_factory):
    return Service(tmp_path_factory.mktemp("autograder-operators"), "operators")


def test_bundle_holds_what_the_service_needs(operators):
    names = set(zipfile.ZipFile(operators.root / "autograder.zip").namelist())
    assert {"setup.sh", "run_autograder", "requirements.txt", "grader/grading.py"} <= names
    assert {"course/spec.json", "course/units.json"} <= names
    assert any(n.startswith("course/suite/hidden/") for n in names)
    assert any(n.startswith("course/solution/minitorch/operators/") for n in names)
    assert any(n.startswith("course/starter/minitorch/operators/") for n in names)
    assert any(n.startswith("wheels/mt_root-") for n in names)
    reqs = zipfile.ZipFile(operators.root / "autograder.zip").read("requirements.txt").decode()
    assert "pyseccomp" in reqs  # the sandbox's filter: as root, bwrap needs it


def test_bundle_carries_its_own_readme_with_the_upload_steps(operators):
    text = zipfile.ZipFile(operators.root / "autograder.zip").read("README.md").decode()
    assert "# The autograder of mt-operators" in text
    total = sum(t.points for t in operators.layer.tasks)
    assert f"total points: {total:g} (tasks 0.1: " in text
    for needed in ("setup.sh", "run_autograder", "results.json", "22.04", "timeout", "MiB"):
        assert needed in text, needed
    assert "course:assign operators" in text
    assert "@" not in text  # every placeholder filled


def test_setup_says_how_to_size_the_assignment_from_its_own_calibration(operators):
    """The README's step 3 points at these two lines of the image build's log."""
    log = operators.setup_log
    timeout = re.search(r"set the autograder's timeout to (\d+) min or more", log)
    memory = re.search(r"give the container (\d+) MiB or more", log)
    assert timeout, log[-2000:]
    assert memory, log[-2000:]
    assert int(timeout.group(1)) >= 1
    assert int(memory.group(1)) >= 1024


def test_sizing_is_five_times_the_solution_and_twice_its_largest_process():
    cal = {"tasks": {"task0_1": {"wall": 30.0}, "task0_2": {"wall": 90.4}, "task0_3": {}}}
    timeout, memory = sizing_notes(cal, 300 * 1024)
    assert "graded in 120 s here (slowest: task0_2, 90 s)" in timeout
    assert timeout.endswith("timeout to 11 min or more")  # 5 x 120.4 s = 602 s: 11 minutes
    assert memory == "its largest process used 300 MiB: give the container 1024 MiB or more"
    _, memory = sizing_notes(cal, 1000 * 1024)
    assert memory.endswith("give the container 2048 MiB or more")  # 2000 MiB, in 512s


def test_setup_calibrated_the_grader_and_hid_the_course_from_other_users(operators):
    course = operators.root / "source" / "course"
    calibration = json.loads((course / "calibration.json").read_text())
    assert set(calibration["tasks"]) == set(operators.layer.task_ids)
    for task in operators.layer.tasks:
        found = calibration["tasks"][task.id]
        # A test-writing task's plan is the mutants the course's tests catch.
        assert found["mutants"] if task.tests_of else found["tests"], task.id
    assert (operators.root / "source").stat().st_mode & 0o077 == 0


def test_solution_gets_full_marks_with_hidden_entries_after_publication(operators, tmp_path):
    assign("operators", tmp_path / "s", keep=frozenset(operators.layer.task_ids), cal=CAL)
    res = operators.grade(tmp_path / "s")
    assert by_task(res) == operators.full()
    assert res["score"] == sum(t.points for t in operators.layer.tasks)
    hidden = [t for t in res["tests"] if t["name"].endswith("(hidden tests)")]
    assert hidden, "operators has hidden tests: they get entries of their own"
    assert {t["visibility"] for t in hidden} == {"after_published"}
    assert {t["visibility"] for t in res["tests"] if t not in hidden} == {"visible"}


def test_untouched_starter_gets_zero_and_is_told_which_tests_fail(operators, tmp_path):
    assign("operators", tmp_path / "s", cal=CAL, wheels=False)
    res = operators.grade(tmp_path / "s")
    assert res["score"] == 0.0
    assert {s for s, _ in by_task(res).values()} == {0.0}
    public = [t for t in res["tests"] if t["visibility"] == "visible"]
    for t in public:
        if t["number"] == "0.2":  # the student's tests, each a stub
            assert "not written yet (it raises NotImplementedError)" in t["output"]
            continue
        assert "FAILED tests/" in t["output"]
        assert "NotImplementedError: Task 0." in t["output"]
    hidden = [t for t in res["tests"] if t["visibility"] == "after_published"]
    assert all("FAILED hidden/" in t["output"] for t in hidden)


# Every task reaches its points on its own: task 0.3's list helpers call task 0.1's
# operators, which the grader takes from the solution while it grades task 0.3. (Task
# 0.2's tests never run the student's functions: test_grade.py grades them alone on a
# starter whose functions are stubs; in the bundle, the whole solution above.)
@pytest.mark.parametrize("task", CAL.layer("operators").code_task_ids)
def test_one_task_submission_gets_exactly_its_points(operators, tmp_path, task):
    assign("operators", tmp_path / "s", keep=frozenset({task}), cal=CAL, wheels=False)
    assert by_task(operators.grade(tmp_path / "s")) == operators.only(task)


def test_a_zip_of_the_starter_folder_is_graded_like_the_folder(operators, tmp_path):
    assign("operators", tmp_path / "mt-operators", keep=frozenset({"task0_4"}), cal=CAL)
    archive = shutil.make_archive(str(tmp_path / "upload"), "zip", tmp_path, "mt-operators")
    assert by_task(operators.grade(Path(archive))) == operators.only("task0_4")


def test_a_file_that_does_not_parse_is_graded_as_the_starter_saying_why(operators, tmp_path):
    keep = frozenset(operators.layer.code_task_ids)  # 0.2: stubs
    assign("operators", tmp_path / "s", keep=keep, cal=CAL)
    scalar = tmp_path / "s/src/minitorch/operators/scalar.py"
    scalar.write_text(scalar.read_text() + "\ndef broken(:\n")
    res = operators.grade(tmp_path / "s")
    assert by_task(res)["0.1"] == (0.0, 10.0)
    assert by_task(res)["0.3"] == by_task(res)["0.4"] == (10.0, 10.0)
    out = next(t for t in res["tests"] if t["number"] == "0.1")["output"]
    assert "scalar.py: it does not parse" in out


def test_an_empty_submission_gets_zero_saying_why(operators, tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "notes.txt").write_text("I ran out of time\n")
    res = operators.grade(tmp_path / "s")
    assert res["score"] == 0.0
    assert "holds no src/minitorch/operators/" in res["output"]


def test_a_bug_in_one_function_costs_only_that_function(operators, tmp_path):
    # The functions' tasks (task 0.2's tests stay stubs: not what this is about).
    keep = frozenset(operators.layer.code_task_ids)
    assign("operators", tmp_path / "s", keep=keep, cal=CAL)
    scalar = tmp_path / "s/src/minitorch/operators/scalar.py"
    text = scalar.read_text()
    assert text.count("    return -x\n") == 1
    scalar.write_text(text.replace("    return -x\n", "    return x\n"))  # neg is wrong
    got = by_task(operators.grade(tmp_path / "s"))
    assert got["0.1"][0] == pytest.approx(10 - 10 / 17, abs=0.01)  # neg's share only
    assert got["0.3"] == operators.full()["0.3"]  # neg_list is graded with a right neg
    assert got["0.4"] == operators.full()["0.4"]


def test_command_line_writes_the_zip(tmp_path, capsys):
    assert main(["autograder", "operators", "--out", str(tmp_path / "ag.zip")]) == 0
    assert zipfile.is_zipfile(tmp_path / "ag.zip")
    assert "wrote" in capsys.readouterr().out
    assert main(["autograder", "operators", "--out", str(tmp_path / "ag.tar")]) == 2
    assert "must name a .zip file" in capsys.readouterr().err
