"""Finding and rendering solution blocks, and reading the calendar."""

import ast
import dataclasses
import json
import textwrap
from pathlib import Path

import pytest
import tomllib

from mtcourse.cli import main
from mtcourse.config import REPO, CalendarError, load_calendar
from mtcourse.layers import CourseError, scan_blocks, script_blocks, written_test_blocks
from mtcourse.markers import MarkerError, find_blocks, render
from mtcourse.starter import assign
from mtcourse.weeks import week_plan

SOURCE = textwrap.dedent(
    '''\
    import math


    def area(r: float) -> float:
        """Area of a circle."""
        if r < 0:
            raise ValueError("negative radius")
        # BEGIN SOLUTION task0_1
        return math.pi * r * r
        # END SOLUTION


    class Box:
        def volume(self) -> float:
            """Volume."""
            # BEGIN SOLUTION task0_3 multiply the three sides
            x = 1.0
            for side in (1.0, 2.0, 3.0):
                x *= side
            return x
            # END SOLUTION

    text = "# BEGIN SOLUTION task9_9 (in a string: not a marker)"
    '''
)


def test_blocks_are_found_with_their_task_and_message():
    blocks = find_blocks(SOURCE)
    assert [(b.task, b.message) for b in blocks] == [
        ("task0_1", "Task 0.1: implement area"),
        ("task0_3", "Task 0.3: multiply the three sides"),
    ]


def test_render_replaces_blocks_and_keeps_the_rest():
    out = render(SOURCE, find_blocks(SOURCE))
    ast.parse(out)
    assert 'raise NotImplementedError("Task 0.1: implement area")' in out
    assert 'raise NotImplementedError("Task 0.3: multiply the three sides")' in out
    assert "math.pi" not in out
    assert "x *= side" not in out
    assert 'raise ValueError("negative radius")' in out  # code outside blocks stays
    assert "SOLUTION task9_9" in out


def test_render_keeps_the_code_of_kept_tasks_without_markers():
    out = render(SOURCE, find_blocks(SOURCE), frozenset({"task0_3"}))
    assert "x *= side" in out
    assert "Task 0.3" not in out
    assert "Task 0.1" in out
    assert out.count("SOLUTION") == 1  # only the string literal


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("def f():\n    # BEGIN SOLUTION task0_1\n    return 1\n", "without an END"),
        ("def f():\n    return 1\n    # END SOLUTION\n", "without a BEGIN"),
        (
            "def f():\n    # BEGIN SOLUTION task0_1\n    # BEGIN SOLUTION task0_1\n"
            "    return 1\n    # END SOLUTION\n    # END SOLUTION\n",
            "do not nest",
        ),
        ("# BEGIN SOLUTION task0_1\nx = 1\n# END SOLUTION\n", "inside a function"),
        (
            "def f():\n    # BEGIN SOLUTION task0_1\n    # END SOLUTION\n    return 1\n",
            "no statement",
        ),
        ("def f():\n    # BEGIN SOLUTION 0_1\n    return 1\n    # END SOLUTION\n", "malformed"),
        ("def f():\n    return 1  # BEGIN SOLUTION task0_1\n", "alone on its line"),
        (
            "def f():\n    # BEGIN SOLUTION task0_1\n    x = 1\n  # END SOLUTION\n    return x\n",
            "indented like its BEGIN",
        ),
        (
            "def f(a):\n    if a:\n        # BEGIN SOLUTION task0_1\n        x = 1\n"
            "    else:\n        # END SOLUTION\n        x = 2\n    return x\n",
            "not a whole statement",
        ),
        (
            "def f(a):\n    if a:\n        # BEGIN SOLUTION task0_1\n        x = (1 +\n"
            "        # END SOLUTION\n        2)\n    return x\n",
            "cuts the statement",
        ),
    ],
)
def test_bad_markers_are_reported(source, error):
    with pytest.raises(MarkerError, match=error):
        find_blocks(source, "f.py")


def test_calendar_of_the_repository_is_consistent():
    cal = load_calendar()
    assert week_plan(2, cal) == {
        "week": 2,
        "opens": cal.week(2).opens.isoformat(),
        "deadline": cal.week(2).deadline.isoformat(),
        "starters": ["autodiff"],
        "tags": [f"mt-operators-v{cal.layer('operators').solution_version}"],
    }
    assert cal.closure("nn") == ["operators", "autodiff", "tensor", "fast"]
    # Every layer has blocks for exactly its tasks: a training task's are in its script, a
    # test-writing task's in its tests.
    for name in cal.layers:
        layer = cal.layer(name)
        tasks = {b.task for blocks in scan_blocks(layer).values() for b in blocks}
        training = {b.task for blocks in script_blocks(layer, cal).values() for b in blocks}
        writing = {b.task for blocks in written_test_blocks(layer).values() for b in blocks}
        assert tasks | training | writing == set(layer.task_ids)
        assert not tasks & training
        assert not tasks & writing
        assert writing == layer.test_writing_ids
        assert training == set(cal.training_tasks(name))
        # Each training task is graded by the course's training tests.
        for task in training:
            tests = "".join(p.read_text() for p in layer.training_tests.glob("test_*.py"))
            assert f"pytest.mark.{task}" in tests, (name, task)
    assert cal.training_tasks("fast") == ("task3_5",)


def test_week_prints_a_table_by_default_and_json_when_asked(capsys):
    cal = load_calendar()
    assert main(["week", "2"]) == 0
    table = capsys.readouterr().out
    assert "deadline" in table
    assert cal.week(2).deadline.isoformat() in table
    assert "mt-autodiff" in table
    assert "{" not in table
    assert main(["week", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == week_plan(2, cal)
    assert main(["week", "99"]) == 2
    assert capsys.readouterr().err.strip() == "error: course.toml has no week 99"


def test_calendar_refuses_a_solution_released_before_its_deadline(tmp_path):
    text = (load_calendar.__globals__["REPO"] / "course.toml").read_text()
    bad = text.replace('release-solutions = ["operators"]', 'release-solutions = ["autodiff"]')
    assert bad != text
    (tmp_path / "course.toml").write_text(bad)
    with pytest.raises(CalendarError, match="autodiff solution before its deadline"):
        load_calendar(tmp_path / "course.toml")


def test_assign_writes_a_complete_starter(tmp_path):
    cal = load_calendar()
    layer = cal.layer("autodiff")
    out = tmp_path / "starter"
    starter = assign("autodiff", out, week=2, cal=cal)
    assert set(starter.blocks) == set(layer.task_ids)
    sources = list((out / "src" / "minitorch" / "autodiff").glob("*.py"))
    assert sources
    for f in sources:
        text = f.read_text()
        ast.parse(text)
        assert "SOLUTION" not in text
    assert (
        'NotImplementedError("Task 1.4: implement topological_sort")'
        in (out / "src/minitorch/autodiff/core.py").read_text()
    )
    # Public tests only: the hidden ones stay in the repository.
    public = {f.name for f in (layer.path / "tests").glob("test_*.py")}
    assert {f.name for f in (out / "tests").glob("test_*.py")} == public
    assert not any("hidden" in str(p) for p in out.rglob("*"))
    project = tomllib.loads((out / "pyproject.toml").read_text())["project"]
    assert f"mt-operators=={cal.layer('operators').solution_version}" in project["dependencies"]
    readme = (out / "README.md").read_text()
    workflow = (out / ".github/workflows/tests.yml").read_text()
    # The lower layers' solution wheels (and mt-root's) come with the starter.
    wheels = sorted(w.name.split("-")[0] for w in (out / "wheels").glob("*.whl"))
    assert wheels == ["mt_operators", "mt_root"]
    assert 'python -m pip install --find-links wheels -e ".[test]"' in readme
    assert 'python -m pip install --find-links wheels -e ".[test]"' in workflow
    # Task 1.5's training script, its network stubbed, with the helpers it imports.
    script = (out / "mt_examples/train_scalar.py").read_text()
    assert 'NotImplementedError("Task 1.5: implement Network.logit")' in script
    assert "SOLUTION" not in script
    # examples/mt_examples/ is copied whole: every helper, and this layer's scripts only.
    shipped = {f.name for f in (out / "mt_examples").iterdir() if f.name != "__pycache__"}
    examples = {f.name for f in (REPO / "examples" / "mt_examples").glob("*.py")}
    others = {Path(s).name for s in cal.scripts} - {"train_scalar.py"}
    assert shipped == examples - others
    assert {"support.py", "toy.py", "graded.py", "subset.py", "__init__.py"} <= shipped
    assert (out / "train_scalar.py").is_file()
    assert "python train_scalar.py --help" in readme
    for task in layer.task_ids:
        if task == "task1_5":  # its tests are not in the starter: it trains as graded
            assert f"`python -m mt_examples.graded {task}`" in readme
            assert f"run: python -m mt_examples.graded {task}" in workflow
        else:
            assert f"`pytest -m {task}`" in readme
            assert f"python -m pytest -m {task}" in workflow


def test_assign_names_only_the_blocks_it_replaced(tmp_path, capsys):
    tasks = load_calendar().layer("operators").task_ids
    keep = [a for t in tasks for a in ("--keep", t)]
    assert main(["assign", "operators", "--out", str(tmp_path / "all"), *keep]) == 0
    assert "(solution blocks replaced: none)" in capsys.readouterr().out
    assert main(["assign", "operators", "--out", str(tmp_path / "one"), *keep[2:]]) == 0
    said = capsys.readouterr().out
    assert f"solution blocks replaced: {tasks[0]}: " in said
    assert not any(f"{t}: " in said for t in tasks[1:])


@pytest.mark.parametrize("typo", ["task9_9", "task2_1x", "task0_1"])
def test_assign_refuses_a_task_the_layer_does_not_have(tmp_path, capsys, typo):
    out = tmp_path / "s"
    assert main(["assign", "tensor", "--out", str(out), "--keep", "task2_1", "--keep", typo]) == 2
    said = capsys.readouterr().err
    assert f"--keep {typo}: not a task of the tensor layer" in said
    assert "task2_1, task2_2" in said  # it names the layer's tasks
    assert said.count("\n") == 1  # one clear line
    assert not out.exists()


def test_assign_refuses_to_hand_out_a_solution(tmp_path, monkeypatch):
    # Every layer is marked: pretend one is not (its markers were forgotten).
    import mtcourse.starter

    monkeypatch.setattr(mtcourse.starter, "scan_blocks", lambda layer: {})
    with pytest.raises(CourseError, match="no solution blocks for tasks task2_1"):
        assign("tensor", tmp_path / "s", cal=load_calendar())
    assert not (tmp_path / "s").exists()


def test_fast_starter_runs_the_plain_kernels_without_the_tuned_ones(tmp_path):
    cal = load_calendar()
    assign("fast", tmp_path / "s", cal=cal)
    pkg = tmp_path / "s/src/minitorch/fast"
    assert not (pkg / "kernels/tuned.py").exists()
    assert not (pkg / "vecmath.py").exists()
    assert not (tmp_path / "s/tests/test_fast_tuned.py").exists()
    assert (tmp_path / "s/tests/test_fast_kernels.py").exists()
    assert 'kernels: ClassVar[str] = "plain"' in (pkg / "fast_ops.py").read_text()
    assert "NotImplementedError" in (pkg / "kernels/plain.py").read_text()


def test_training_scripts_mark_their_task_only():
    cal = load_calendar()
    assert cal.scripts
    for script, tasks in cal.scripts.items():
        path = load_calendar.__globals__["REPO"] / script
        source = path.read_text()
        blocks = find_blocks(source, script)
        assert blocks, script
        assert {b.task for b in blocks} == {tasks[0]}, script
        out = render(source, blocks)
        ast.parse(out)
        assert "SOLUTION" not in out


def test_fast_starter_carries_train_tensor_for_task_3_5(tmp_path):
    cal = load_calendar()
    out = tmp_path / "s"
    assign("fast", out, cal=cal, wheels=False)
    script = (out / "mt_examples/train_tensor.py").read_text()
    assert 'NotImplementedError("Task 3.5: implement Network.logit")' in script
    assert "Task 2.5" not in script
    assert (out / "train_tensor.py").is_file()
    readme = (out / "README.md").read_text()
    assert "python train_tensor.py --help" in readme
    assert "--backend fast --hidden 100" in readme  # how the task is graded
    # The training tests are the grader's: they need the course's data and fast kernels.
    assert not list((out / "tests").glob("test_training_*.py"))
    kept = tmp_path / "k"
    assign("fast", kept, keep=frozenset({"task3_5"}), cal=cal, wheels=False)
    assert "NotImplementedError" not in (kept / "mt_examples/train_tensor.py").read_text()


def test_nn_readme_says_how_training_is_graded(tmp_path):
    assign("nn", tmp_path / "s", cal=load_calendar(), wheels=False)
    readme = (tmp_path / "s/README.md").read_text()
    assert "first 2,000 training images" in readme
    assert "75%" in readme


def test_cuda_starter_runs_its_tests_on_the_simulator_without_a_gpu(tmp_path):
    assign("cuda", tmp_path / "s", cal=load_calendar(), wheels=False)
    assert "`NUMBA_ENABLE_CUDASIM=1 pytest -m task3_3`" in (tmp_path / "s/README.md").read_text()
    workflow = (tmp_path / "s/.github/workflows/tests.yml").read_text()
    assert '    env:\n      NUMBA_ENABLE_CUDASIM: "1"\n    steps:' in workflow


def test_the_graded_package_gets_the_layers_entry_points(tmp_path):
    import importlib.metadata

    from mtcourse.bundle import grade_spec
    from mtcourse.grader.grading import register

    cal = load_calendar()
    layer = cal.layer("fast")
    register(tmp_path, grade_spec(layer, cal))
    [dist] = importlib.metadata.distributions(path=[str(tmp_path)])
    assert dist.metadata["Name"] == "mt-fast"
    declared = layer.pyproject()["project"]["entry-points"]
    assert declared
    assert {(ep.group, ep.name, ep.value) for ep in dist.entry_points} == {
        (g, n, v) for g, entries in declared.items() for n, v in entries.items()
    }


def test_calendar_refuses_a_whole_task_the_layer_does_not_have(tmp_path):
    text = (load_calendar.__globals__["REPO"] / "course.toml").read_text()
    bad = text.replace('whole = ["task1_5"]', 'whole = ["task2_5"]')
    assert bad != text
    (tmp_path / "course.toml").write_text(bad)
    with pytest.raises(CalendarError, match="whole: task2_5 is not a task of autodiff"):
        load_calendar(tmp_path / "course.toml")


def test_the_autodiff_readme_says_training_runs_on_the_whole_layer(tmp_path):
    assign("autodiff", tmp_path / "a", cal=load_calendar(), wheels=False)
    readme = (tmp_path / "a" / "README.md").read_text()
    assert "Except task 1.5:" in " ".join(readme.split())
    assign("operators", tmp_path / "o", cal=load_calendar(), wheels=False)
    assert "Except task" not in (tmp_path / "o" / "README.md").read_text()


@pytest.mark.parametrize(
    ("twin", "error"),
    [
        ("kernels/nope.py", "kernels/nope.py is not a file of src/minitorch/nn"),
        ("conv.py", "conv.py must be solution-only"),
    ],
)
def test_calendar_refuses_a_stand_in_that_is_missing_or_reaches_the_worker(tmp_path, twin, error):
    # A stand-in runs only in the grader's copy: a module the starter ships would be the
    # student's, and the worker would hold the course's faster code.
    text = (load_calendar.__globals__["REPO"] / "course.toml").read_text()
    good = 'stand-ins = { "kernels/simple.py" = "kernels/fast.py" }'
    assert good in text
    (tmp_path / "course.toml").write_text(
        text.replace(good, f'stand-ins = {{ "kernels/simple.py" = "{twin}" }}')
    )
    with pytest.raises(CalendarError, match=error):
        load_calendar(tmp_path / "course.toml")
    assert load_calendar().layer("nn").stand_ins == {"kernels/simple.py": "kernels/fast.py"}


@pytest.mark.parametrize("tested", ["task0_9", "task0_2", "task1_1"])
def test_calendar_refuses_tests_of_a_task_without_functions_of_the_layer(tmp_path, tested):
    # A test-writing task is graded by mutants of other tasks' functions in its layer.
    text = (load_calendar.__globals__["REPO"] / "course.toml").read_text()
    good = 'tests-of = ["task0_1", "task0_3"]'
    assert text.count(good) == 1
    (tmp_path / "course.toml").write_text(text.replace(good, f'tests-of = ["{tested}"]'))
    with pytest.raises(CalendarError, match=f"tests-of: {tested} is not another task"):
        load_calendar(tmp_path / "course.toml")
    assert load_calendar().layer("operators").task("task0_2").tests_of == ("task0_1", "task0_3")


def test_a_layer_tells_its_test_writing_tasks_from_its_code_tasks():
    cal = load_calendar()
    operators = cal.layer("operators")
    assert operators.test_writing_ids == {"task0_2"}
    assert operators.code_task_ids == tuple(t for t in operators.task_ids if t != "task0_2")
    tensor = cal.layer("tensor")
    assert tensor.test_writing_ids == frozenset()
    assert tensor.code_task_ids == tensor.task_ids


def test_a_solution_block_in_a_test_file_needs_a_test_writing_task():
    layer = load_calendar().layer("operators")
    assert set(written_test_blocks(layer)) == {
        layer.path / "tests" / "test_operators_properties.py"
    }
    plain = dataclasses.replace(
        layer, tasks=tuple(dataclasses.replace(t, tests_of=()) for t in layer.tasks)
    )
    with pytest.raises(CourseError, match="a solution block of task0_2 in a test file"):
        written_test_blocks(plain)
