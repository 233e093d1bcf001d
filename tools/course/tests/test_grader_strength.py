"""The grader tells wrong code from right: the score split by function, the feedback's
evidence, the mutants command, and `check`'s leak, issue-number and shipped-test checks."""

import ast
import json

import pytest

from mtcourse.check import uses_problems
from mtcourse.check.leaks import issue_problems, leak_problems
from mtcourse.check.shipped import solution_only_references
from mtcourse.config import load_calendar
from mtcourse.grader.scoring import (
    EVIDENCE_LINES,
    PUBLIC_PART,
    TaskPlan,
    short,
    short_hidden,
    task_entries,
)
from mtcourse.markers import find_blocks
from mtcourse.mutants import generate, load_equivalent, run_mutants
from mtcourse.starter import assign
from mtcourse.suite import suite_tree

CAL = load_calendar()


def plan(tests, units=("f", "g")):
    """Task 9.1 (10 points) of ``units``; ``tests`` maps node ids to the units they use."""
    return TaskPlan("task9_1", "Nine", 10.0, tuple((u, u) for u in units), tests)


def run(nodeid, key, outcome="passed", message="", notes=(), kind="AssertionError"):
    error = None
    if outcome != "passed":
        error = {"type": kind, "message": message, "notes": list(notes)}
    return {"nodeid": nodeid, "key": key, "outcome": outcome, "error": error}


def total(es):
    return round(sum(e["score"] for e in es), 2)


# The score split by function.


def test_one_wrong_function_among_many_passing_tests_costs_more_than_half_its_share():
    # 40 tests of g pass; one of f's 5 tests fails: f's share (5 points) loses more than half.
    tests = {f"tests/t.py::test_g{i}": ("g",) for i in range(40)}
    tests |= {f"tests/t.py::test_f{i}": ("f",) for i in range(5)}
    records = [run(n, keys[0]) for n, keys in tests.items() if n != "tests/t.py::test_f4"]
    records.append(run("tests/t.py::test_f4", "f", "failed"))
    es = task_entries(plan(tests), records, 65536)
    assert total(es) < 10 - 5 / 2
    assert total(es) == pytest.approx(5 + 5 * PUBLIC_PART * 4 / 5, abs=0.01)
    assert sum(e["max_score"] for e in es) == 10


def test_a_test_of_two_functions_fails_only_for_the_one_that_is_wrong():
    # The test uses f and g: run once with the student's f (the course's g), once with the
    # student's g. Only the run of f fails: g keeps its whole share.
    tests = {"tests/t.py::test_fg": ("f", "g"), "hidden/t.py::test_h": ("f", "g")}
    records = [
        run("tests/t.py::test_fg", "f", "failed"),
        run("tests/t.py::test_fg", "g"),
        run("hidden/t.py::test_h", "f", "failed"),
        run("hidden/t.py::test_h", "g"),
    ]
    assert total(task_entries(plan(tests), records, 65536)) == 5


def test_a_whole_run_counts_for_every_function_and_names_no_single_one():
    # A ``whole`` task's test runs once on all of the student's code: its outcome counts for
    # each function it uses, and the feedback blames no function in particular.
    tests = {"tests/t.py::test_trains": ("f", "g")}
    records = [
        {**run("tests/t.py::test_trains", k, "failed", "labels 29 of 50"), "whole": True}
        for k in ("f", "g")
    ]
    es = task_entries(plan(tests), records, 65536)
    public = es[0]
    assert total(es) == 0
    assert public["output"].count("FAILED tests/t.py::test_trains") == 1
    assert "(with your code, all of it)" in public["output"]


def test_the_maximum_of_each_entry_does_not_depend_on_the_submission():
    tests = {"tests/t.py::a": ("f",), "tests/t.py::b": ("g",), "hidden/t.py::c": ("f", "g")}
    everything = [run(n, k) for n, keys in tests.items() for k in keys]
    nothing: list = []  # the test process ended before any record (a crash)
    full = task_entries(plan(tests), everything, 65536)
    none = task_entries(plan(tests), nothing, 65536)
    assert [e["max_score"] for e in full] == [e["max_score"] for e in none] == [4.0, 6.0]
    assert total(full) == 10
    assert total(none) == 0


def test_a_hidden_failure_costs_more_than_half_and_shows_only_after_publication():
    tests = {f"tests/t.py::test_f{i}": ("f",) for i in range(5)}
    tests |= {"tests/t.py::test_g": ("g",), "hidden/tests/h.py::test_f[7-3]": ("f",)}
    records = [run(n, keys[0]) for n, keys in tests.items() if n.startswith("tests/")]
    records.append(run("hidden/tests/h.py::test_f[7-3]", "f", "failed", "assert 3 == 7"))
    public, hidden = task_entries(plan(tests), records, 65536)
    assert public["score"] == public["max_score"] == 10 * PUBLIC_PART
    assert hidden["visibility"] == "after_published"
    assert hidden["max_score"] == pytest.approx(10 * (1 - PUBLIC_PART))
    assert total([public, hidden]) == pytest.approx(10 - 5 * (1 - PUBLIC_PART))
    # Its name without the parametrization, and no message: nothing of its inputs.
    assert "FAILED hidden/tests/h.py::test_f (with your f): AssertionError" in hidden["output"]
    assert "7-3" not in hidden["output"]
    assert "assert 3 == 7" not in hidden["output"]


def test_a_function_without_public_tests_earns_its_share_from_the_hidden_ones():
    tests = {"tests/t.py::a": ("f",), "hidden/t.py::b": ("g",)}
    es = task_entries(plan(tests), [run("tests/t.py::a", "f"), run("hidden/t.py::b", "g")], 65536)
    assert total(es) == 10
    assert es[1]["max_score"] == pytest.approx(10 - 5 * PUBLIC_PART)


# Feedback with evidence.

WHERE = "assert 3 == 2\n +  where 3 = index_to_position(array([1, 2]), array([3, 1]))\n" + "".join(
    f" +    line {i}\n" for i in range(20)
)


def test_a_failing_public_test_keeps_its_where_lines_bounded():
    error = {"type": "AssertionError", "message": WHERE, "notes": ["Falsifying example: p(a=1)"]}
    text = short("tests/t.py::test_p[a]", "to_index", error)
    assert text.startswith(
        "FAILED tests/t.py::test_p[a] (with your to_index): AssertionError: assert 3 == 2"
    )
    assert "where 3 = index_to_position(array([1, 2]), array([3, 1]))" in text
    assert len(text.splitlines()) == EVIDENCE_LINES
    assert text.splitlines()[-1].strip() == "[...]"


def test_a_failing_hidden_test_keeps_its_name_and_a_stub_message_only():
    error = {"type": "AssertionError", "message": WHERE, "notes": ["Falsifying: q(3)"]}
    assert short_hidden("hidden/tests/h.py::test_q[3-4]", "f", error) == (
        "FAILED hidden/tests/h.py::test_q (with your f): AssertionError"
    )
    stub = {"type": "NotImplementedError", "message": "Task 2.1: implement f", "notes": []}
    assert short_hidden("hidden/tests/h.py::test_q", "f", stub).endswith(
        "NotImplementedError: Task 2.1: implement f"
    )


@pytest.mark.packaging
def test_graded_feedback_shows_pytests_explanation_and_one_wrong_function_costs_only_itself(
    tmp_path, operators_env
):
    student = tmp_path / "s"
    # The functions' tasks (task 0.2's tests stay stubs: not what this is about).
    keep = frozenset(CAL.layer("operators").code_task_ids)
    assign("operators", student, keep=keep, cal=CAL, wheels=False)
    path = student / "src/minitorch/operators/scalar.py"
    text = path.read_text()
    assert text.count("return x * y") == 1
    path.write_text(text.replace("return x * y", "return x + y"))
    res = operators_env.grade(student, tmp_path / "scratch")
    public = next(t for t in res["tests"] if t["number"] == "0.1" and t["visibility"] == "visible")
    assert "where" in public["output"], public["output"][:2000]
    assert "(with your mul)" in public["output"]
    hidden = next(t for t in res["tests"] if t["number"] == "0.1" and t["visibility"] != "visible")
    assert "mul:" in hidden["output"]
    # mul loses its whole share (every test of it fails); every other function keeps its own,
    # including those tested together with mul.
    share = 10 / 17
    score = sum(t["score"] for t in res["tests"] if t["number"] == "0.1")
    assert score == pytest.approx(10 - share, abs=0.01)
    points = sum(t.points for t in CAL.layer("operators").tasks if t.id in keep)
    assert sum(t["score"] for t in res["tests"]) == pytest.approx(points - share, abs=0.01)


# The mutants command.

SOURCE = '''\
def f(xs, n):
    """Doc."""
    # BEGIN SOLUTION task9_1
    total = 0.0
    for i in range(n):
        if xs[i] < 2 and not xs[i] == 1:
            total += max(xs[i], 1.5) - i
    return total
    # END SOLUTION


def g(x):
    return x * 2
'''


def test_mutants_change_only_the_solution_blocks_and_parse():
    blocks = find_blocks(SOURCE)
    found = generate(SOURCE, blocks, "m.py", {blocks[0].begin: "f"})
    kinds = {m.kind for m in found}
    assert kinds == {"operator", "comparison", "constant", "off-by-one", "swap", "drop", "negate"}
    for m in found:
        ast.parse(m.source)
        assert m.source != SOURCE
        assert m.source.endswith("def g(x):\n    return x * 2\n")
        assert 3 < m.line < 9, m
        assert m.function == "f"
    keys = [m.key for m in found]
    assert len(set(keys)) == len(keys)
    assert "m.py:f: for i in range(n): -> for i in range(n - 1):" in keys
    assert "m.py:f: total += max(xs[i], 1.5) - i -> total = max(xs[i], 1.5) - i" in keys
    assert "m.py:f: total += max(xs[i], 1.5) - i -> total += max(1.5, xs[i]) - i" in keys


VIEW = """\
class Data:
    def permute(self, order):
        # BEGIN SOLUTION task9_1
        view = Data.__new__(Data)
        view.shape = self.shape[0] = tuple(order)
        return make(view, version=self.version)
        # END SOLUTION
"""


def test_mutants_leave_out_a_keyword_argument_or_one_attribute_write():
    # A view that does not pass its base's version counter: the mistake a keyword hides.
    blocks = find_blocks(VIEW)
    found = generate(VIEW, blocks, "v.py", {blocks[0].begin: "Data.permute"})
    keys = {m.key for m in found}
    assert "v.py:Data.permute: return make(view, version=self.version) -> return make(view)" in keys
    assert (
        "v.py:Data.permute: view.shape = self.shape[0] = tuple(order) -> view.shape = tuple(order)"
    ) in keys
    assert {"drop-keyword", "drop-write"} <= {m.kind for m in found}


def test_the_equivalent_mutants_have_reasons():
    for (layer, key), reason in load_equivalent().items():
        assert layer in CAL.layers
        assert ": " in key
        assert " -> " in key
        assert len(reason) > 10


@pytest.mark.packaging
def test_mutants_of_a_sample_of_operators_are_graded_by_the_grader(tmp_path, capsys):
    out = tmp_path / "mutants.json"
    assert run_mutants("operators", tasks=["task0_3"], sample=4, seed=1, json_out=out) == 0
    records = json.loads(out.read_text())
    assert len(records) == 4
    assert {r["task"] for r in records} == {"task0_3"}
    for r in records:
        assert r["status"] in {"killed", "survived", "equivalent"}
        assert r["diff"].startswith("--- a/functional.py")
        if r["status"] == "killed":
            assert r["failed"]
            assert 10 - r["kept"] > r["share"] / 2
        else:
            assert r["kept"] == 10
    printed = capsys.readouterr().out
    assert "calibrated" in printed
    assert "mutation score" in printed


# check: no solution in what the student reads, no issue numbers.


def test_check_catches_a_solution_statement_or_formula_planted_in_a_docstring(tmp_path):
    layer = CAL.layer("operators")
    assign("operators", tmp_path / "s", cal=CAL, wheels=False)
    assert leak_problems(layer, CAL, tmp_path / "s") == []
    path = tmp_path / "s/src/minitorch/operators/functional.py"
    text = path.read_text()
    # A comment with a statement of reduce's block, blanks changed.
    path.write_text(text.replace('"""', '"""Hint: ``acc  =  fn(acc, x)``.\n', 1))
    problems = leak_problems(layer, CAL, tmp_path / "s")
    assert len(problems) == 1
    assert "functional.py:1 hands out the solution" in problems[0]
    assert "acc = fn(acc, x)" in problems[0]
    # A formula of sigmoid's block with other names: the same shape.
    path.write_text(text + "\n# sigmoid(z) is 1 / (1 + math.exp(-z)) for z >= 0\n")
    problems = leak_problems(layer, CAL, tmp_path / "s")
    assert problems
    assert all("hands out the solution" in p for p in problems)


def test_check_catches_a_solution_planted_in_a_script_at_the_starters_root(tmp_path):
    # which_layers.py (and the training launchers) ship beside the package: read as well.
    layer = CAL.layer("operators")
    assign("operators", tmp_path / "s", cal=CAL, wheels=False)
    path = tmp_path / "s/which_layers.py"
    assert path.is_file()
    path.write_text(path.read_text() + "\n# Hint: ``acc = fn(acc, x)``\n")
    (problem,) = leak_problems(layer, CAL, tmp_path / "s")
    assert problem.startswith("which_layers.py:")
    assert "acc = fn(acc, x)" in problem


def test_check_catches_an_issue_number_in_anything_a_starter_ships(tmp_path):
    # The planted references are built from parts, so this file itself names no issue.
    issue = "issue"
    (tmp_path / "tests").mkdir()
    (tmp_path / "wheels").mkdir()
    (tmp_path / "tests/test_a.py").write_text(f"# {issue} {22}: the storage length\nx = 1\n")
    (tmp_path / "README.md").write_text("See Issue #13, (#4) and GH-5.\nNo issues here.\n")
    (tmp_path / "wheels/notes.txt").write_text(f"{issue} {1}\n")
    problems = issue_problems(tmp_path)
    assert [p.split(" in ")[-1].split(":")[0] for p in problems] == [
        "README.md",
        "README.md",
        "README.md",
        "tests/test_a.py",
    ]
    assert f"'{issue} {22}'" in problems[-1]


def test_uses_names_every_other_task_whose_code_a_tasks_tests_run():
    layer = CAL.layer("operators")
    ran = [{"nodeid": "tests/t.py::t", "tasks": ["task0_3"], "functions": ["task0_1:mul"]}]
    assert uses_problems(layer, ran) == []
    ran[0]["tasks"] = ["task0_4"]
    (problem,) = uses_problems(layer, ran)
    assert "the tests of task0_4 run the code of task0_1" in problem


# The README of each task.


def test_readme_says_per_task_where_what_needs_points_and_the_guide(tmp_path):
    assign("operators", tmp_path / "s", cal=CAL, wheels=False, guide_url="https://x.github.io/mt")
    readme = (tmp_path / "s/README.md").read_text()
    assert "### Task 0.3: " in readme
    assert "- `src/minitorch/operators/functional.py`: `map`, `zip_with`, " in readme
    assert "Its tests also run the code of task 0.1" in readme
    assert "<https://x.github.io/mt/modules/operators/>" in readme
    assert "section: <https://x.github.io/mt/modules/operators/#task0_3>" in readme
    assert f"up to {10 * PUBLIC_PART:g} from the public tests" in readme
    assert "share    = task points / number of functions" in readme
    assert "issue" not in readme.lower()


def test_readme_of_a_training_task_gives_its_command_and_all_or_partial_points(tmp_path):
    assign("autodiff", tmp_path / "s", cal=CAL, wheels=False)
    readme = (tmp_path / "s/README.md").read_text()
    section = readme.split("### Task 1.5: ")[1].split("### ")[0]
    assert "train it as the grader does with `python -m mt_examples.graded task1_5`" in section
    assert "Points: all 10 once every graded run reaches its threshold" in section
    assert "hidden ones too" not in section
    task_1_4 = readme.split("### Task 1.4: ")[1].split("### ")[0]
    assert "Its tests also run the code of tasks 1.1, 1.2 and 1.3: " in task_1_4


def test_check_catches_a_shipped_test_that_imports_a_solution_only_module(tmp_path):
    # The fast layer's zero-size matmul test imported kernels.tuned in a child process: it
    # failed on every student's correct code, and calibration refused to grade the week.
    fast, nn = CAL.layer("fast"), CAL.layer("nn")
    (tmp_path / "tests").mkdir()
    (tmp_path / "hidden").mkdir()
    child = 'CHILD = """\nimport numpy\nfrom minitorch.fast.kernels import plain, tuned\n"""\n'
    (tmp_path / "tests/test_child.py").write_text("x = 1\n" + child)
    (tmp_path / "tests/test_direct.py").write_text("import minitorch.fast.vecmath as v\n")
    (tmp_path / "hidden/test_dynamic.py").write_text(
        "import importlib\nm = importlib.import_module('minitorch.fast.microkernel')\n"
    )
    (tmp_path / "tests/test_fine.py").write_text(
        "from minitorch.fast.kernels import plain\n"
        "try:\n    from minitorch.fast.kernels import tuned\nexcept ImportError:\n"
        "    tuned = None\n"
        'CHILD = """\ntry:\n    import minitorch.fast.kernels.tuned\nexcept ImportError:\n'
        '    pass\n"""\n'
        "# minitorch.fast.kernels.tuned in a comment, 'minitorch.fast.vecmath' in a string\n"
        "NAME = 'minitorch.fast.vecmath'\n"
    )
    problems = solution_only_references(fast, tmp_path)
    assert [p.split(" ships")[0] for p in problems] == [
        "hidden/test_dynamic.py:2",
        "tests/test_child.py:4",
        "tests/test_direct.py:1",
    ], problems
    assert (
        "imports minitorch.fast.kernels.tuned (src/minitorch/fast/kernels/tuned.py)" in problems[1]
    )
    # Each layer's own modules: the nn layer's solution-only kernels are not fast's.
    (tmp_path / "tests/test_nn.py").write_text("from minitorch.nn.kernels import fast\n")
    assert [p.split(" ships")[0] for p in solution_only_references(nn, tmp_path)] == [
        "tests/test_nn.py:1"
    ]


@pytest.mark.parametrize("name", sorted(CAL.layers))
def test_no_shipped_test_imports_a_solution_only_module(tmp_path, name):
    # What course:check proves for each starter, on every layer's shipped and hidden tests.
    layer = CAL.layer(name)
    assert solution_only_references(layer, suite_tree(layer, tmp_path / "run", hidden=True)) == []
