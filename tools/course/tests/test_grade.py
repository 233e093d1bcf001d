"""The grader on mt-operators: full marks, zero, one task, and code that misbehaves.

One grading environment (built and calibrated once) grades every submission here, as
``course grade-all`` does for a class; the command-line tests build their own.
"""

import ast
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from mtcourse.check import check
from mtcourse.cli import main
from mtcourse.config import REPO, load_calendar
from mtcourse.grader import grading
from mtcourse.starter import assign

pytestmark = pytest.mark.packaging

CAL = load_calendar()
LAYER = CAL.layer("operators")
TASKS = LAYER.task_ids
ALL = frozenset(TASKS)
POINTS_0_1 = next(t.points for t in LAYER.tasks if t.id == "task0_1")
# The tasks whose functions the student writes (task 0.2 writes tests; its grading runs
# the student's tests once per mistake it is graded by: left out where it is not the point).
FUNCTIONS = LAYER.code_task_ids
PROPERTIES = "tests/test_operators_properties.py"


@pytest.fixture
def env(operators_env):
    return operators_env  # conftest.py: one for the session


@pytest.fixture
def grade(env, tmp_path):
    count = iter(range(100))

    def run(student: Path, tasks: tuple[str, ...] | None = None) -> dict:
        return env.grade(student, tmp_path / f"scratch-{next(count)}", tasks=tasks)

    return run


def scores(result):
    """The score of each task: its public and hidden entries added up."""
    out: dict[str, float] = {}
    for t in result["tests"]:
        out[t["number"]] = round(out.get(t["number"], 0.0) + t["score"], 2)
    return out


def full(result):
    out: dict[str, float] = {}
    for t in result["tests"]:
        out[t["number"]] = round(out.get(t["number"], 0.0) + t["max_score"], 2)
    return out


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def test_solution_gets_full_marks(tmp_path, grade):
    assign("operators", tmp_path / "s", keep=ALL, cal=CAL, wheels=False)
    res = grade(tmp_path / "s")
    assert scores(res) == full(res)
    assert res["score"] == sum(t.points for t in LAYER.tasks) > 0
    assert all(t["status"] == "passed" for t in res["tests"])
    public = [t for t in res["tests"] if t["visibility"] == "visible"]
    assert {t["name"] for t in public} == {
        f"Task {t.id[4:].replace('_', '.')}: {t.title}" for t in LAYER.tasks
    }
    hidden = [t for t in res["tests"] if t["visibility"] == "after_published"]
    assert {t["name"] for t in hidden} <= {f"{t['name']} (hidden tests)" for t in public}


def test_untouched_starter_gets_zero_even_with_its_tests_edited(tmp_path, grade):
    assign("operators", tmp_path / "s", cal=CAL, wheels=False)
    # A student who edits the tests changes nothing: grading uses the repository's copies.
    for f in (tmp_path / "s" / "tests").glob("test_*.py"):
        f.write_text("def test_ok():\n    assert True\n")
    res = grade(tmp_path / "s")
    assert set(scores(res).values()) == {0.0}
    assert res["score"] == 0.0
    # Task 0.2's tests are the student's own: these edits are what it grades (no test left).
    assert all("NotImplementedError" in t["output"] for t in res["tests"] if t["number"] != "0.2")
    tests_entry = next(t for t in res["tests"] if t["number"] == "0.2")
    assert "no such test in your file" in tests_entry["output"]


def test_a_task_left_as_the_stubs_is_graded_as_the_starter_was(tmp_path, env, monkeypatch):
    # Calibration grades the untouched starter once; a task whose functions are all still
    # the stubs gets that result without a run of its own (its other code never runs).
    runs = []
    real = grading.run_harness

    def counted(course, task, *args, **kwargs):
        runs.append(task)
        return real(course, task, *args, **kwargs)

    monkeypatch.setattr(grading, "run_harness", counted)
    student = tmp_path / "s"
    assign("operators", student, keep=frozenset({"task0_1"}), cal=CAL, wheels=False)
    edit(
        student / "src/minitorch/operators/module.py",
        "    def children(self) -> list[Module]:",
        "    # not started yet\n    def children(self) -> list[Module]:",
    )
    res = env.grade(student, tmp_path / "scratch")
    assert "task0_1" in runs
    assert not {"task0_3", "task0_4", "task0_5"} & set(runs)
    stubbed = [t for t in res["tests"] if t["number"] in ("0.3", "0.4", "0.5")]
    assert stubbed
    assert all(t["score"] == 0 and "NotImplementedError" in t["output"] for t in stubbed)
    assert scores(res)["0.1"] == full(res)["0.1"]
    # One changed function, even to another stub, and the task runs.
    runs.clear()
    edit(student / "src/minitorch/operators/module.py", "    # not started yet\n", "")
    edit(
        student / "src/minitorch/operators/module.py",
        'raise NotImplementedError("Task 0.4: implement Module.children")',
        'raise NotImplementedError("not yet")',
    )
    res = env.grade(student, tmp_path / "scratch-2", tasks=("task0_4",))
    assert runs == ["task0_4"]
    assert "not yet" in res["tests"][0]["output"]


@pytest.mark.parametrize("task", ["task0_1", "task0_4"])
def test_one_task_filled_in_gets_exactly_its_points(tmp_path, grade, task):
    assign("operators", tmp_path / "s", keep=frozenset({task}), cal=CAL, wheels=False)
    res = grade(tmp_path / "s")
    number = task[4:].replace("_", ".")
    expected = {n: (m if n == number else 0.0) for n, m in full(res).items()}
    assert scores(res) == expected


def test_task_0_5_grades_the_export_the_submission_holds(tmp_path, grade):
    student = tmp_path / "s"
    assign("operators", student, keep=frozenset({"task0_5"}), cal=CAL, wheels=False)
    export = student / "mt_examples" / "manual_weights.json"
    course = export.read_text()  # the course's, kept with the task's code
    res = grade(student, ("task0_5",))
    assert scores(res) == full(res) == {"0.5": 10.0}

    def task(res: dict) -> tuple[float, str]:
        return scores(res)["0.5"], "\n".join(t["output"] for t in res["tests"])

    # The grader reads the student's copy, never the course's: without one, the network's
    # own checks pass and the export's fail; a link is not followed, a long file not read.
    for kind in ("missing", "link", "long"):
        export.unlink(missing_ok=True)
        if kind == "link":
            export.symlink_to(REPO / "examples" / "mt_examples" / "manual_weights.json")
        elif kind == "long":
            export.write_text(course + " " * grading.MAX_DATA_FILE)
        score, output = task(grade(student, ("task0_5",)))
        assert 0 < score < 4, (kind, output)  # the public part of the network's checks
        assert "has no mt_examples/manual_weights.json" in output, kind
        if kind == "link":  # refused, saying why
            assert "mt_examples/manual_weights.json is a symbolic link" in output, output
        else:
            assert "mt_examples/manual_weights.json: not found in the submission" in output, kind
    # Weights that do not separate one dataset cost its test only; a bad export says why.
    data = json.loads(course)
    data["networks"]["simple"]["weights"]["output.bias_0"] = -5.0
    export.unlink()
    export.write_text(json.dumps(data))
    without, (score, output) = score, task(grade(student, ("task0_5",)))
    assert without < score < 4
    assert "separate_the_dataset[simple]" in output
    assert "separate_the_dataset[diag]" not in output
    assert "separate_the_dataset[split]" not in output
    export.write_text('{"format": "minitorch-manual/1", "networks": {"simple": {"weights": 1}}}')
    score, output = task(grade(student, ("task0_5",)))
    assert score < 4
    assert 'simple: no "weights" table' in output
    # A network that labels by the rule of the data, not by its weights, fails its checks.
    export.write_text(course)
    edit(
        student / "mt_examples" / "run_manual.py",
        "        values = list(x)\n",
        "        return 1.0 if x[0] < 0.2 or x[0] > 0.8 else 0.0\n        values = list(x)\n",
    )
    score, output = task(grade(student, ("task0_5",)))
    assert score < 10
    assert "test_network_applies_relu_then_sigmoid" in output


def test_an_infinite_loop_costs_its_function_only(tmp_path, grade):
    student = tmp_path / "s"
    assign("operators", student, keep=ALL, cal=CAL, wheels=False)
    edit(
        student / "src/minitorch/operators/module.py",
        'return list(self.__dict__["_modules"].values())',
        "while True:\n            pass",
    )
    res = grade(student, FUNCTIONS)
    public = next(t for t in res["tests"] if t["number"] == "0.4")
    assert scores(res)["0.4"] == pytest.approx(10 - 10 / 8, abs=0.01)  # children's share
    assert "time limit: your code used" in public["output"]
    assert scores(res)["0.1"] == scores(res)["0.3"] == 10


def test_crash_and_flood_cost_their_function_only(tmp_path, grade):
    student = tmp_path / "s"
    assign("operators", student, keep=ALL, cal=CAL, wheels=False)
    # map: the interpreter exits in the middle of the tests.
    edit(
        student / "src/minitorch/operators/functional.py",
        "return [fn(x) for x in xs]",
        '__import__("os")._exit(3)',
    )
    # mul: megabytes on stdout, but right answers.
    edit(
        student / "src/minitorch/operators/scalar.py",
        '"""Return ``x * y``."""\n',
        '"""Return ``x * y``."""\n    print("spam" * 1_000_000)\n',
    )
    res = grade(student, FUNCTIONS)
    got = scores(res)
    public = next(t for t in res["tests"] if t["number"] == "0.3")
    assert "the process running your code ended (exit status 3)" in public["output"]
    # map's share is lost; neg_list, which the course builds on map, is graded with the
    # course's map and keeps its own.
    assert got["0.3"] == pytest.approx(10 - 10 / 7, abs=0.01)
    assert got["0.1"] == got["0.4"] == 10
    assert all(len(t["output"]) <= CAL.output_limit + 100 for t in res["tests"])


# Task 0.2: tests that run the operators but assert one example, or only that nothing
# raises (what a hurried student writes), keyed by test.
WEAK_BODIES = {
    "test_same_as_python": "assert mul(2.0, 3.0) == 6.0",
    "test_sigmoid_range_and_symmetry": "sigmoid(a)",
    "test_sigmoid_is_monotone": "sigmoid(a)\n    sigmoid(b)",
    "test_sigmoid_and_exp_never_raise": "sigmoid(x)\n    exp(x)",
    "test_relu_and_relu_back": "assert relu(1.0) == 1.0",
    "test_lt_eq_trichotomy": "assert lt(1.0, 2.0) == 1.0",
    "test_max_properties": "assert max(1.0, 2.0) == 2.0",
    "test_mul_distributes_over_add": "mul(z, add(x, y))",
    "test_add_and_mul_commute": "add(x, y)\n    mul(x, y)",
    "test_log_inverts_exp": "log(exp(x))",
    "test_exp_inverts_log": "exp(log(x))",
    "test_log_of_negative_is_nan": "log(x)",
    "test_is_close_reflexive": "is_close(x, x)",
    "test_log_back_matches_central_difference": "log_back(x, d)",
    "test_inv_back_matches_central_difference": "inv_back(x, d)",
    "test_relu_back_matches_central_difference": "relu_back(x, d)",
    "test_sigmoid_back_matches_central_difference": "sigmoid_back(x, d)",
    "test_sum_distribute": "sum(add_lists(ls1, ls2))",
    "test_neg_list_is_map_of_neg": "neg_list(ls)",
    "test_zip_with_and_reduce_keep_the_order": "assert prod([]) == 1.0",
}


def with_bodies(path: Path, bodies: dict[str, str]) -> None:
    """Give the tests of the file at ``path`` new bodies (after their docstrings)."""
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    tests = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    for node in sorted(tests, key=lambda n: n.lineno, reverse=True):
        if node.name in bodies:
            lines[node.body[0].end_lineno : node.end_lineno] = [f"    {bodies[node.name]}\n"]
    path.write_text("".join(lines))


# A test that remembers what the operators answered in its first run (in its home, /tmp
# and /dev/shm) and fails when a later run answers otherwise: if anything of a run reached
# the next, it would catch every mistake without stating a property.
REMEMBERING_BODY = """import json, os, pathlib
    got = json.dumps([f(1.5, -2.0) for f in (mul, add, lt, eq, max, is_close, log_back)])
    got += json.dumps([f(0.7) for f in (neg, id, sigmoid, relu, exp, inv)])
    for folder in (os.environ.get("HOME", "/tmp"), "/tmp", "/dev/shm"):
        path = pathlib.Path(folder) / "answers.json"
        try:
            if path.exists():
                assert path.read_text() == got
            else:
                path.write_text(got)
        except OSError:
            pass"""


# A test that ends the run instead of failing when mul or add is wrong: were a broken run
# a catch, a test that broke runs at random would be paid for every mutant run it broke.
ENDING_BODY = """import os
    if mul(2.0, 3.0) != 6.0 or add(2.0, 3.0) != 5.0:
        os._exit(3)"""


def test_property_tests_are_graded_by_the_mistakes_they_catch(tmp_path, grade):
    """Task 0.2, in one grading: tests that assert one example or nothing earn under half;
    a test that fails on correct code earns nothing of what it catches; a test cannot
    remember an earlier run; a run a test ends is no catch (the course's own tests earn
    full marks: test_solution_gets_full_marks)."""
    weak = tmp_path / "weak"
    # The functions stay the starter's stubs: task 0.2 runs the tests on the course's
    # code and its mistakes only, never on the student's functions.
    assign("operators", weak, keep=frozenset({"task0_2"}), cal=CAL, wheels=False)
    # The only test of log_back keeps its property, with its expected value off by one.
    name = "test_log_back_matches_central_difference"
    bodies = {k: v for k, v in WEAK_BODIES.items() if k != name}
    bodies["test_same_as_python"] = REMEMBERING_BODY
    bodies["test_add_and_mul_commute"] = ENDING_BODY
    with_bodies(weak / PROPERTIES, bodies)
    edit(
        weak / PROPERTIES,
        "expected = d * central_diff(log, x)",
        "expected = 1 + d * central_diff(log, x)",
    )
    res = grade(weak, ("task0_2",))
    (entry,) = res["tests"]
    assert 0 < entry["score"] < entry["max_score"] / 2
    assert "19 of your 20 tests pass on correct code" in entry["output"]
    assert "sigmoid_back:" in entry["output"].partition("Not caught, by function")[2]
    assert f"{name} fails on the course's correct code (AssertionError)" in entry["output"]
    assert f"  {name}:" not in entry["output"]  # it catches nothing that counts
    assert "log_back:" in entry["output"].partition("Not caught")[2]
    # Had anything of one run reached the next, it would catch every mistake of the
    # functions it calls (mul, add, neg, ...) without stating a property.
    assert "  test_same_as_python: 0" in entry["output"]
    # The runs it ended count for nothing: no mistake of mul or add stops the course's tests.
    assert "runs on mistakes ended before your tests reported" in entry["output"]
    assert "  test_add_and_mul_commute: 0" in entry["output"]


def test_the_course_tests_catch_mistakes_in_functions_that_make_functions(env):
    """map, zip_with and reduce return functions: a mutant of one must be what the
    student's tests get back (the grader builds the product with the run's mutant), so the
    course's own list-property tests catch every mutant of them in the calibration."""
    root = env.course.root
    mutants = json.loads((root / "mutants-task0_2.json").read_text())
    factories = {m["id"] for m in mutants if m["function"] in ("map", "zip_with", "reduce")}
    assert len(factories) >= 3
    caught = json.loads((root / "calibration.json").read_text())["tasks"]["task0_2"]["mutants"]
    assert factories <= set(caught)


# Module-level code of a student's test file runs at the start of every run.
SLOW_START = """

import time as _time

_t0 = _time.process_time()
while _time.process_time() - _t0 < 1.0:
    pass
"""


def test_slow_tests_stop_at_their_budget(tmp_path, grade, monkeypatch):
    """A student's slow tests cannot hold the grader for each run's full limit."""
    monkeypatch.setattr(grading, "MIN_TEST_BUDGET", 4.0)
    monkeypatch.setattr(grading, "TEST_BUDGET_FACTOR", 0.0)
    student = tmp_path / "s"
    assign("operators", student, keep=frozenset({"task0_2"}), cal=CAL, wheels=False)
    path = student / PROPERTIES
    path.write_text(path.read_text() + SLOW_START)
    res = grade(student, ("task0_2",))
    (entry,) = res["tests"]
    assert "20 of your 20 tests pass on correct code" in entry["output"]
    note = "Your tests used their CPU time for grading (4 s, 0 times what the course's"
    assert note in entry["output"]
    left, _, rest = entry["output"].partition(") before ")[2].partition(" of their ")
    total = int(rest.split()[0])  # a run per mistake graded, and 2 more of correct code
    assert total - 8 <= int(left) < total  # about 1.5 s a run: 3 or so ran
    assert entry["score"] < entry["max_score"]


SKIPPING_TESTS = """
import pytest
from minitorch.operators import mul


@pytest.mark.task0_1
def test_mul_then_a_comparison_this_machine_cannot_make():
    assert mul(2.0, 3.0) == 6.0
    pytest.importorskip("a_package_no_grader_has")


@pytest.mark.task0_1
def test_a_comparison_this_machine_cannot_make():
    pytest.importorskip("a_package_no_grader_has")
    assert mul(2.0, 3.0) == 6.0


@pytest.mark.task0_1
def test_mul_where_the_solution_never_skips():
    if mul(2.0, 3.0) != 6.0:
        pytest.skip("mul looks different")
"""


def test_calibration_notes_say_once_a_task_which_missing_package_its_tests_skip_for():
    """Some 35 lines of "could not import 'torch'" read as errors during calibration."""
    torch = "t.py:3: could not import 'torch': No module named 'torch'"
    cal = {
        "tasks": {
            "task2_3": {
                "skips": {**{f"t.py::test_{i}": torch for i in range(30)}, "u.py::x": "u.py:9: no"},
                "ungraded": {"v.py::y": torch},
            },
            "task2_4": {"skips": {"w.py::z": torch}},
        }
    }
    notes = grading.calibration_notes(cal)
    assert notes == [
        "task2_3: graded up to where it skips: u.py::x (u.py:9: no)",
        "task2_3: graded up to where it skips (30 tests, as expected: the grading environment "
        "has no torch, which they compare with): t.py::test_0 and 29 more",
        "task2_3: not graded, it skips before using a function (1 test, as expected: the "
        "grading environment has no torch, which they compare with): v.py::y",
        "task2_4: graded up to where it skips (1 test, as expected: the grading environment "
        "has no torch, which they compare with): w.py::z",
    ]


def test_a_test_that_skips_where_the_solution_does_is_graded_up_to_there(env, tmp_path):
    """Tests that compare with PyTorch skip on a grading machine without it.

    What such a test checked before its skip is graded (a run that reaches the same skip
    passes); one that skips before using the student's code is named as not graded; and a
    student's function that raises pytest's skip itself fails the test.
    """
    root = tmp_path / "course"
    shutil.copytree(env.course.root, root, symlinks=True)
    (root / "suite" / "tests" / "test_zz_skips.py").write_text(SKIPPING_TESTS)
    course = grading.Course(root, env.course.python)
    grading.calibrate(course, tmp_path / "cal", env.isolation, ("task0_1",))
    task = course.calibration()["tasks"]["task0_1"]
    late = "tests/test_zz_skips.py::test_mul_then_a_comparison_this_machine_cannot_make"
    early = "tests/test_zz_skips.py::test_a_comparison_this_machine_cannot_make"
    assert late in task["tests"]
    assert "a_package_no_grader_has" in task["skips"][late]
    assert early not in task["tests"]
    assert "a_package_no_grader_has" in task["ungraded"][early]
    notes = grading.calibration_notes(course.calibration())
    assert any(late in n and "graded up to where it skips" in n for n in notes)
    assert any(early in n and "not graded" in n for n in notes)

    student = tmp_path / "s"
    assign("operators", student, keep=ALL, cal=CAL, wheels=False)
    res = grading.grade(course, student, tmp_path / "g1", env.isolation, tasks=("task0_1",))
    assert res["score"] == POINTS_0_1

    edit(
        student / "src/minitorch/operators/scalar.py",
        "    return x * y\n",
        '    __import__("pytest").skip("my mul is graded elsewhere")\n',
    )
    res = grading.grade(course, student, tmp_path / "g2", env.isolation, tasks=("task0_1",))
    assert 0 < res["score"] < POINTS_0_1
    output = next(t for t in res["tests"] if t["visibility"] == "visible")["output"]
    assert "test_mul_then_a_comparison_this_machine_cannot_make (with your mul)" in output

    # A skip where the solution runs to the end is no pass.
    edit(
        student / "src/minitorch/operators/scalar.py",
        '    __import__("pytest").skip("my mul is graded elsewhere")\n',
        "    return x * y + 1.0\n",
    )
    res = grading.grade(course, student, tmp_path / "g3", env.isolation, tasks=("task0_1",))
    output = next(t for t in res["tests"] if t["visibility"] == "visible")["output"]
    assert "skipped (mul looks different) where the course's solution does not" in output


def test_feedback_names_the_line_of_the_students_own_file(tmp_path, grade):
    """Tracebacks named the worker's copy's line (``tensor_data.py:200`` for the student's 186)."""
    assign("operators", tmp_path / "s", keep=ALL, cal=CAL, wheels=False)
    path = tmp_path / "s/src/minitorch/operators/scalar.py"
    notes = "".join(f"# a note of mine, line {i}\n" for i in range(12))
    edit(
        path,
        "def mul(x: float, y: float) -> float:",
        notes + "def mul(x: float, y: float) -> float:",
    )
    edit(path, "    return x * y\n", '    raise ValueError("planted in mul")\n')
    line = path.read_text().splitlines().index('    raise ValueError("planted in mul")') + 1
    res = grade(tmp_path / "s", ("task0_1",))
    out = "\n".join(t["output"] for t in res["tests"] if t["number"] == "0.1")
    assert "planted in mul" in out, out[:3000]
    assert f"at scalar.py:{line} in mul" in out, out[:3000]


def test_a_file_that_does_not_parse_grades_its_functions_as_stubs_and_says_why(tmp_path, grade):
    assign("operators", tmp_path / "s", keep=ALL, cal=CAL, wheels=False)
    path = tmp_path / "s/src/minitorch/operators/functional.py"
    path.write_text(path.read_text() + "\ndef broken(:\n")
    init = tmp_path / "s/src/minitorch/operators/__init__.py"
    init.write_text("import this_module_does_not_exist\n" + init.read_text())  # never runs
    res = grade(tmp_path / "s", FUNCTIONS)
    assert scores(res) == {"0.1": 10.0, "0.3": 0.0, "0.4": 10.0, "0.5": 10.0}
    out = next(t for t in res["tests"] if t["number"] == "0.3")["output"]
    assert "functional.py: it does not parse (line" in out


def test_command_line_writes_results_json(tmp_path, capsys):
    assert main(["assign", "operators", "--out", str(tmp_path / "s"), "--keep", "task0_3"]) == 0
    out = tmp_path / "results.json"
    # --task: only the functions' tasks are calibrated and graded (not task 0.2's tests).
    tasks = [a for t in FUNCTIONS for a in ("--task", t)]
    args = ["grade", str(tmp_path / "s"), "--layer", "operators", "--out", str(out), *tasks]
    assert main(args) == 0
    res = json.loads(out.read_text())
    got = scores(res)
    assert [got[t[4:].replace("_", ".")] > 0 for t in FUNCTIONS] == [
        t == "task0_3" for t in FUNCTIONS
    ]
    assert "0.2" not in got
    assert res["score"] == round(sum(t["score"] for t in res["tests"]), 2)
    assert "total:" in capsys.readouterr().out


# Bad input: one line on stderr, a non-zero exit, no results.json.


def test_grading_a_missing_directory_is_an_error(tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(["grade", str(tmp_path / "nope"), "--layer", "operators", "--out", str(out)])
    assert code != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "does not exist" in err
    assert not out.exists()


def test_grading_an_empty_submission_is_an_error(tmp_path, capsys):
    (tmp_path / "s").mkdir()
    code = main(["grade", str(tmp_path / "s"), "--layer", "operators", "--out", "r.json"])
    assert code != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "is empty" in err
    (tmp_path / "s" / "README.md").write_text("hello\n")
    assert main(["grade", str(tmp_path / "s"), "--layer", "operators", "--out", "r.json"]) != 0
    assert "holds no src/minitorch/operators/" in capsys.readouterr().err


# check --one-task: a task's test that passes without the task's code is reported.


def test_check_one_task_passes_on_operators():
    assert check("operators", CAL, verbose=False, one_task=True) == []


def test_check_one_task_reports_a_test_that_runs_none_of_its_task(tmp_path):
    text = (REPO / "course.toml").read_text()
    entry = '  "test_autodiff_backprop.py::test_backward_on_constant_raises",\n'
    assert text.count(entry) == 1
    (tmp_path / "course.toml").write_text(text.replace(entry, ""))
    problems = check(
        "autodiff", load_calendar(tmp_path / "course.toml"), verbose=False, one_task=True
    )
    assert len(problems) == 1
    assert "test_backward_on_constant_raises (marked task1_4) passes without task1_4" in problems[0]


def test_the_files_a_user_mode_worker_left_in_shared_folders_are_swept(tmp_path):
    """Task A's worker (a user of its own) must not hand task B's worker what it kept."""
    import os

    from mtcourse.grader import sandbox

    if os.geteuid() != 0:
        pytest.skip("needs root to own files as another user")
    uid, other = 60123, 60124
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "hidden.txt").write_text("what a hidden test showed")
    mine = tmp_path / "mine.txt"
    mine.write_text("the grader's")
    theirs = tmp_path / "theirs.txt"
    theirs.write_text("another worker's")
    for p in (kept, kept / "hidden.txt"):
        os.chown(p, uid, uid)
    os.chown(theirs, other, other)
    link = tmp_path / "link"
    link.symlink_to(mine)
    os.lchown(link, uid, uid)
    assert sandbox.sweep_files(uid, (str(tmp_path),)) == 3  # the file, its folder, the link
    assert not kept.exists()
    assert not link.is_symlink()
    assert mine.read_text() == "the grader's"  # a link is removed, never followed
    assert theirs.exists()


# The grader refuses rather than give zeros: the course's own solution must earn every
# point through the worker on this machine first.


@pytest.fixture
def no_worker(monkeypatch):
    """Every worker's Python is one its sandbox cannot start (as a 0700 pyenv in /root)."""
    real = grading._worker_spec

    def broken(*args, **kwargs):
        spec = real(*args, **kwargs)
        return {**spec, "argv": ["/nonexistent/python", *spec["argv"][1:]]}

    monkeypatch.setattr(grading, "_worker_spec", broken)


def test_a_folder_a_user_mode_worker_cannot_pass_is_named_before_grading(tmp_path):
    """grade-all's 0700 folder made every worker fail to start: the class was graded 0."""
    closed = Path(tempfile.mkdtemp(prefix="mtc-closed-"))  # in /tmp: pytest's are 0700
    try:
        (closed / "scratch" / "public").mkdir(parents=True)
        closed.chmod(0o700)
        assert grading.closed_folder(closed / "scratch" / "public") == closed
        closed.chmod(0o711)
        assert grading.closed_folder(closed / "scratch" / "public") is None
    finally:
        shutil.rmtree(closed)


def test_grade_refuses_where_the_worker_cannot_start(tmp_path, capsys, no_worker):
    assign("operators", tmp_path / "s", keep=ALL, cal=CAL, wheels=False)
    out = tmp_path / "results.json"
    args = ["grade", str(tmp_path / "s"), "--layer", "operators", "--out", str(out)]
    assert main([*args, "--task", "task0_1"]) == 1
    err = capsys.readouterr().err
    # One line naming the cause, after calibration's progress bar (its own lines).
    said = [line for line in err.splitlines() if line.startswith("error: not graded")]
    assert len(said) == 1, err
    assert "not graded: calibration failed: the worker could not start" in said[0]
    assert not out.exists()


def test_grade_all_refuses_where_the_worker_cannot_start(tmp_path, capsys, no_worker):
    folder = tmp_path / "class"
    assign("operators", folder / "alice", keep=ALL, cal=CAL, wheels=False)
    out = tmp_path / "grades.csv"
    assert main(["grade-all", str(folder), "--layer", "operators", "--out", str(out)]) == 1
    assert "the worker could not start" in capsys.readouterr().err
    assert not out.exists()
    assert not any((tmp_path / "grades-results").glob("*/results.json"))


def test_a_second_grading_environment_reuses_the_calibration(tmp_path, monkeypatch, capsys):
    """Staff grading a second class (or one more student) the same week on the same machine
    wait for no second calibration; calibration shows its steps as it runs them."""
    from mtcourse.grade import calibration_cache, calibration_key, grading_env

    first = grading_env("operators", tmp_path / "one", cal=CAL, tasks=("task0_1",))
    err = capsys.readouterr().err
    assert "calibrating mt-operators" in err, err
    assert "task 0.1: the solution through the worker" in err, err
    assert "3/3" in err, err  # survey, solution, starter: every step counted
    assert len(list(calibration_cache().glob("*.json"))) == 1

    def measured(*args, **kwargs):
        raise AssertionError("calibrated again")

    monkeypatch.setattr(grading, "calibrate", measured)
    second = grading_env("operators", tmp_path / "two", cal=CAL, tasks=("task0_1",))
    assert "calibration of mt-operators reused" in capsys.readouterr().err
    assert second.course.calibration() == first.course.calibration()
    assign("operators", tmp_path / "solved", keep=ALL, cal=CAL, wheels=False)
    res = second.grade(tmp_path / "solved", tmp_path / "scratch", tasks=("task0_1",))
    assert res["score"] == POINTS_0_1, res  # the reused plan grades the solution fully
    # What it depends on changes it: the course's files, the tasks, the isolation.
    key = calibration_key(second.course, second.isolation, ("task0_1",))
    assert key == calibration_key(first.course, first.isolation, ("task0_1",))  # two builds
    assert key != calibration_key(second.course, second.isolation, ("task0_2",))
    assert key != calibration_key(second.course, "none", ("task0_1",))
    hidden = next((second.course.root / "suite" / "hidden").rglob("*.py"))
    hidden.write_text(hidden.read_text() + "\n# changed\n")
    assert key != calibration_key(second.course, second.isolation, ("task0_1",))
    with pytest.raises(AssertionError, match="calibrated again"):
        grading_env("operators", tmp_path / "three", cal=CAL, tasks=("task0_1",), recalibrate=True)
