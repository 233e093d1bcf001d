"""The autograder on mt-operators: full marks, zero, one task, and code that misbehaves.

Each grade builds a fresh environment and runs one pytest process per task, so these tests
take a minute or two; time limits are kept small.
"""

import json
from pathlib import Path

import pytest
from config import load_calendar
from course import assign, grade, main

pytestmark = pytest.mark.packaging

CAL = load_calendar()
LAYER = CAL.layer("operators")
TASKS = LAYER.task_ids
ALL = frozenset(TASKS)
LIMIT = 60.0


def scores(result):
    return {t["number"]: t["score"] for t in result["tests"]}


def full(result):
    return {t["number"]: t["max_score"] for t in result["tests"]}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def test_solution_gets_full_marks(tmp_path):
    assign("operators", tmp_path / "s", keep=ALL, cal=CAL)
    res = grade(tmp_path / "s", "operators", cal=CAL, time_limit=LIMIT)
    assert scores(res) == full(res)
    assert res["score"] == sum(t.points for t in LAYER.tasks) > 0
    assert all(t["status"] == "passed" and t["visibility"] == "visible" for t in res["tests"])
    assert {t["name"] for t in res["tests"]} == {
        f"Task {t.id[4:].replace('_', '.')}: {t.title}" for t in LAYER.tasks
    }


def test_untouched_starter_gets_zero_even_with_its_tests_edited(tmp_path):
    assign("operators", tmp_path / "s", cal=CAL)
    # A student who edits the tests changes nothing: grading uses the repository's copies.
    for f in (tmp_path / "s" / "tests").glob("test_*.py"):
        f.write_text("def test_ok():\n    assert True\n")
    res = grade(tmp_path / "s", "operators", cal=CAL, time_limit=LIMIT)
    assert set(scores(res).values()) == {0.0}
    assert res["score"] == 0.0
    assert all("NotImplementedError" in t["output"] for t in res["tests"])


@pytest.mark.parametrize("task", ["task0_1", "task0_4"])
def test_one_task_filled_in_gets_exactly_its_points(tmp_path, task):
    assign("operators", tmp_path / "s", keep=frozenset({task}), cal=CAL)
    res = grade(tmp_path / "s", "operators", cal=CAL, time_limit=LIMIT)
    number = task[4:].replace("_", ".")
    expected = {n: (m if n == number else 0.0) for n, m in full(res).items()}
    assert scores(res) == expected


def test_infinite_loop_times_out_that_task_only(tmp_path):
    student = tmp_path / "s"
    assign("operators", student, keep=ALL, cal=CAL)
    edit(
        student / "src/minitorch/operators/module.py",
        'return list(self.__dict__["_modules"].values())',
        "while True:\n            pass",
    )
    res = grade(student, "operators", cal=CAL, time_limit=15)
    by_number = {t["number"]: t for t in res["tests"]}
    assert by_number["0.4"]["score"] == 0.0
    assert "Time limit exceeded" in by_number["0.4"]["output"]
    assert by_number["0.1"]["score"] == by_number["0.1"]["max_score"]
    assert by_number["0.3"]["score"] == by_number["0.3"]["max_score"]


def test_crash_and_flood_are_contained_to_their_task(tmp_path):
    student = tmp_path / "s"
    assign("operators", student, keep=ALL, cal=CAL)
    # Task 0.3: the interpreter exits in the middle of the tests.
    edit(
        student / "src/minitorch/operators/functional.py",
        "return [fn(x) for x in xs]",
        '__import__("os")._exit(3)',
    )
    # Task 0.1: megabytes on stdout and in an exception message, but right answers.
    edit(
        student / "src/minitorch/operators/scalar.py",
        '"""Return ``x * y``."""\n',
        '"""Return ``x * y``."""\n    print("spam" * 1_000_000)\n',
    )
    res = grade(student, "operators", cal=CAL, time_limit=LIMIT)
    by_number = {t["number"]: t for t in res["tests"]}
    assert by_number["0.3"]["score"] == 0.0
    assert "ended abnormally (exit 3)" in by_number["0.3"]["output"]
    assert by_number["0.1"]["score"] == by_number["0.1"]["max_score"]
    assert by_number["0.4"]["score"] == by_number["0.4"]["max_score"]
    assert all(len(t["output"]) <= CAL.output_limit + 100 for t in res["tests"])


def test_command_line_writes_results_json(tmp_path, capsys):
    assert main(["assign", "operators", "--out", str(tmp_path / "s"), "--keep", "task0_3"]) == 0
    out = tmp_path / "results.json"
    assert main(["grade", str(tmp_path / "s"), "--layer", "operators", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert [t["score"] > 0 for t in res["tests"]] == [t == "task0_3" for t in TASKS]
    assert res["score"] == sum(t["score"] for t in res["tests"])
    assert "total:" in capsys.readouterr().out


# The same verdicts on mt-tensor (module 2): the lower layers come from the released wheels.
TENSOR = CAL.layer("tensor")


def test_tensor_solution_full_marks_and_starter_zero(tmp_path):
    assign("tensor", tmp_path / "solution", keep=frozenset(TENSOR.task_ids), cal=CAL)
    res = grade(tmp_path / "solution", "tensor", cal=CAL, time_limit=300)
    assert scores(res) == full(res)
    assert res["score"] == sum(t.points for t in TENSOR.tasks) > 0
    assign("tensor", tmp_path / "starter", cal=CAL)
    res = grade(tmp_path / "starter", "tensor", cal=CAL, time_limit=300)
    assert set(scores(res).values()) == {0.0}
    assert all("NotImplementedError" in t["output"] for t in res["tests"])


def test_tensor_one_task_filled_in_gets_exactly_its_points(tmp_path):
    assign("tensor", tmp_path / "s", keep=frozenset({"task2_1"}), cal=CAL)
    res = grade(tmp_path / "s", "tensor", cal=CAL, time_limit=300)
    expected = {n: (m if n == "2.1" else 0.0) for n, m in full(res).items()}
    assert scores(res) == expected
