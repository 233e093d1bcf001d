"""``course check``: generate a layer's starter and prove it right (see the README)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import REPO, Calendar, Layer, load_calendar
from ..layers import (
    TASK_MESSAGE,
    CourseError,
    check_version,
    is_scaffold,
    listed,
    scan_blocks,
    script_blocks,
    test_names,
    written_test_blocks,
)
from ..markers import Block, MarkerError, function_spans
from ..runner import build_wheel, make_venv, run_pytest
from ..starter import assign
from ..starter.scripts import write_scripts
from ..suite import data_subset, suite_tree
from .leaks import issue_problems, leak_problems
from .overlay import SubmissionError, check_imports, overlay, solution_overlay
from .shipped import solution_only_references

__all__ = ["check", "uses_problems"]


def _judge_starter(
    layer: Layer, record: dict[str, Any], code_dirs: tuple[Path, ...], on_solution: str | None
) -> str | None:
    """Why this test's outcome on the starter is wrong, or None if it is right.

    ``on_solution`` is the same test's outcome on the solution: a task's test that is
    skipped on both (it needs something this machine lacks, e.g. PyTorch) proves nothing
    either way and is accepted.
    """
    nodeid, tasks = record["nodeid"], set(record["tasks"])
    if record["outcome"] == "collect-error":
        return f"{nodeid}: collection fails: {record['errors'][0]['message'][-300:]}"
    layer_tasks = set(layer.task_ids) | set(layer.needs)
    scaffold = is_scaffold(layer, nodeid)
    if not tasks & layer_tasks or scaffold:
        if record["outcome"] in ("passed", "skipped"):
            return None
        if scaffold and record["outcome"] == "failed":
            return _from_solution_block(layer, record, code_dirs)
        errs = "; ".join(f"{e['type']}: {e['message'][:200]}" for e in record["errors"])
        return f"{nodeid}: should pass on the starter (not a task's test), got {errs}"
    if record["outcome"] == "skipped" and on_solution == "skipped":
        return None
    if record["outcome"] == "failed" and listed(layer.child_process_tests, nodeid):
        return None  # the stub's NotImplementedError ended a child process
    if record["outcome"] != "failed":
        return (
            f"{nodeid} (marked {', '.join(sorted(tasks))}) should fail with "
            f"NotImplementedError on the starter, but {record['outcome']}"
        )
    return _from_solution_block(layer, record, code_dirs)


def _from_solution_block(
    layer: Layer, record: dict[str, Any], code_dirs: tuple[Path, ...]
) -> str | None:
    """None if the test failed only with NotImplementedError raised by a solution block.

    ``code_dirs`` are the starter's code: its installed package and its training scripts.
    """
    nodeid = record["nodeid"]

    def from_block(e: dict[str, Any]) -> bool:
        m = TASK_MESSAGE.match(e["message"])
        return (
            e["type"] == "NotImplementedError"
            and m is not None
            and f"task{m.group(1)}_{m.group(2)}" in layer.task_ids
            and any(Path(e["file"] or "").resolve().is_relative_to(d) for d in code_dirs)
        )

    for e in record["errors"]:
        # A test expecting another exception (pytest.raises) fails while handling the stub's.
        if not (from_block(e) or any(from_block(c) for c in e.get("context", []))):
            return (
                f"{nodeid}: should fail with NotImplementedError from a solution block, got "
                f"{e['type']}: {e['message'][:200]} (raised at {e['file']}:{e['line']})"
            )
    return None


def _starter_tests(layer: Layer, starter: Path, tests: Path, task: str | None) -> None:
    """Put the starter's stubs of a test-writing task's tests (``task``, or all) in ``tests``.

    ``tests`` is a run's copy of the course's tests (``suite_tree``): the student starts
    from the stubs, so the starter's run (and the run with only that task missing) must.
    """
    for path, blocks in written_test_blocks(layer).items():
        if task is None or any(b.task == task for b in blocks):
            rel = path.relative_to(layer.path / "tests")
            shutil.copyfile(starter / "tests" / rel, tests / "tests" / rel)


def _one_task_problems(
    layer: Layer,
    cal: Calendar,
    root: Path,
    python: Path,
    say: Callable[..., None],
    scripts: Path | None = None,
    data: Path | None = None,
) -> list[str]:
    """Each task's tests must fail when only that task is missing (``check --one-task``).

    The starter's code with every other task's functions from the solution (as the grader
    runs each task): a test of the task that passes then runs none of its code, so it
    would give its points away (list it in ``scaffold-tests`` or mark it with the task
    whose code it runs). A training task runs the whole solution package (as graded) with
    the starter's training ``scripts``.
    """
    solution = solution_overlay(layer, root / "one-task-solution")
    training = cal.training_tasks(layer.name)
    problems = []
    for task in layer.task_ids:
        if task in training:
            code = layer.path / "src"
        else:
            code = overlay(
                root / "starter" / "src", layer.name, solution, task, root / f"ot-{task}"
            )
        try:
            check_imports(python, code, layer.name)  # the overlay, not the installed starter
        except SubmissionError as e:
            problems.append(f"only {task} missing: {e}")
            continue
        tests = suite_tree(layer, root / f"run-ot-{task}", hidden=True, data=data)
        _starter_tests(layer, root / "starter", tests, task)
        paths = ["tests", "hidden"] if (tests / "hidden").exists() else ["tests"]
        t0 = time.perf_counter()
        run = run_pytest(
            python,
            ["-q", "--tb=no", "-m", task, *paths],
            tests,
            timeout=30 * 60,
            output_limit=cal.output_limit,
            pythonpath=(code, *([scripts] if scripts else [])),
        )
        say(
            f"{layer.name}: only {task} missing: {len(run.tests)} tests in "
            f"{time.perf_counter() - t0:.1f}s"
        )
        if not run.finished:
            problems.append(f"only {task} missing: the run did not finish:\n{run.output[-2000:]}")
            continue
        problems += [
            f"{r['nodeid']} (marked {task}) passes without {task}'s code (the other tasks "
            "done): list it in scaffold-tests or mark it with the task it runs"
            for r in run.tests
            if task in r["tasks"]
            and r["outcome"] == "passed"
            and not is_scaffold(layer, r["nodeid"])
        ]
    return problems


def check(
    layer_name: str,
    cal: Calendar | None = None,
    *,
    verbose: bool = True,
    one_task: bool = False,
) -> list[str]:
    """Generate the starter of ``layer_name`` and prove it right; return the problems.

    With ``one_task``, also prove that each task's tests fail when only that task is
    missing (see :func:`_one_task_problems`).
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    say = print if verbose else (lambda *_: None)
    try:
        blocks = scan_blocks(layer)
        scripts = script_blocks(layer, cal)
    except MarkerError as e:
        return [str(e)]
    counts: dict[str, int] = {}
    for bl in blocks.values():
        for b in bl:
            counts[b.task] = counts.get(b.task, 0) + 1
    problems = [
        f"solution block for {t}, which is not a task of {layer.name} in course.toml"
        for t in sorted(set(counts) - set(layer.task_ids))
    ]
    try:
        written_tests = written_test_blocks(layer)
    except (MarkerError, CourseError) as e:
        return [str(e)]
    for bl in [*scripts.values(), *written_tests.values()]:
        for b in bl:
            counts[b.task] = counts.get(b.task, 0) + 1
    missing = [t for t in layer.task_ids if t not in counts]
    if missing:
        problems.append(f"no solution blocks for tasks {', '.join(missing)}")
        return problems

    with tempfile.TemporaryDirectory(prefix=f"course-check-{layer.name}-") as tmp:
        root = Path(tmp)
        try:
            starter = assign(layer.name, root / "starter", cal=cal, wheels=False)
        except CourseError as e:
            return [*problems, str(e)]
        say(f"{layer.name}: starter written ({sum(starter.blocks.values())} blocks)")
        problems += leak_problems(layer, cal, root / "starter")
        problems += issue_problems(root / "starter")
        # The lower layers (the released solutions) and the solution itself run from the
        # checkout (editable): their Numba kernels are compiled once and cached beside the
        # sources, for every check and for the repository's own test run. The starter is
        # installed from its wheel, as a student installs it.
        lower = cal.closure(layer.name)
        for name in [*lower, layer.name]:
            check_version(cal.layer(name))
        shared = (REPO / "packages" / "mt-root", *(cal.layer(n).path for n in lower))
        wheels = root / "wheels"
        build_wheel(root / "starter", wheels / "starter")
        # The training scripts (solution, and the starter's as written) and the data subset
        # their tests train on (skipped without the real data).
        script_dirs: dict[str, Path | None] = {
            "solution": write_scripts(
                layer, cal, root / "scripts-solution", frozenset(layer.task_ids)
            ),
            "starter": None,
        }
        if (root / "starter" / "mt_examples").is_dir():
            shutil.copytree(root / "starter" / "mt_examples", root / "scripts-starter/mt_examples")
            script_dirs["starter"] = root / "scripts-starter"
        data = data_subset(layer, root / "data", None, required=False)
        if layer.training_data and data is None:
            say(f"{layer.name}: no MINITORCH_DATA: the training tests on real data skip")

        outcomes: dict[str, list[dict[str, Any]]] = {}
        package_dirs: dict[str, Path] = {}
        pythons: dict[str, Path] = {}
        for kind in ("solution", "starter"):
            try:
                if kind == "solution":
                    python = make_venv(
                        root / f"venv-{kind}", wheels, [], editable=(*shared, layer.path)
                    )
                else:
                    wheel = next((wheels / kind).glob("*.whl"))
                    python = make_venv(root / f"venv-{kind}", wheels, [str(wheel)], shared)
            except RuntimeError as e:
                return [*problems, f"the {kind} does not install: {e}"]
            imp = subprocess.run(
                [python, "-c", f"import minitorch.{layer.name} as m; print(m.__file__)"],
                capture_output=True,
                text=True,
                check=False,
            )
            if imp.returncode != 0:
                problems.append(f"the {kind} does not import: {imp.stderr[-1000:]}")
                continue
            package_dirs[kind] = Path(imp.stdout.strip()).parent.resolve()
            pythons[kind] = python
            tests = suite_tree(
                layer, root / f"run-{kind}", hidden=True, solution=kind == "solution", data=data
            )
            if kind == "starter":
                _starter_tests(layer, root / "starter", tests, None)
                problems += solution_only_references(layer, tests)
            here = script_dirs[kind]
            trace: dict[str, str] = {}
            if kind == "solution":  # which tasks' functions each test runs: `uses`
                (tests / ".trace.json").write_text(json.dumps(_task_trace(blocks)), "utf-8")
                trace["COURSE_PROBE_TRACE"] = str(tests / ".trace.json")
            t0 = time.perf_counter()
            run = run_pytest(
                python,
                ["-q", "--tb=no", "tests", "hidden"]
                if (tests / "hidden").exists()
                else ["-q", "--tb=no", "tests"],
                tests,
                timeout=30 * 60,
                output_limit=cal.output_limit,
                pythonpath=(here,) if here else (),
                env=trace,
            )
            say(f"{layer.name}: {kind}: {len(run.tests)} tests in {time.perf_counter() - t0:.1f}s")
            if not run.finished:
                problems.append(f"the {kind}'s test run did not finish:\n{run.output[-2000:]}")
                continue
            outcomes[kind] = run.tests
        solution = outcomes.get("solution", [])
        problems += [
            f"{r['nodeid']}: fails with the solution: "
            + "; ".join(f"{e['type']}: {e['message'][:200]}" for e in r["errors"])
            for r in solution
            if r["outcome"] not in ("passed", "skipped")
        ]
        on_solution = {r["nodeid"]: r["outcome"] for r in solution}
        starter_scripts = script_dirs["starter"]
        code_dirs = (
            package_dirs.get("starter", root / "starter"),
            *([(starter_scripts / "mt_examples").resolve()] if starter_scripts else []),
            # A test-writing task's stubs are its tests' bodies.
            *((root / "run-starter" / p.relative_to(layer.path)).resolve() for p in written_tests),
        )
        problems += [
            p
            for r in outcomes.get("starter", [])
            if (p := _judge_starter(layer, r, code_dirs, on_solution.get(r["nodeid"]))) is not None
        ]
        for t in layer.task_ids:
            n = sum(t in r["tasks"] for r in solution)
            say(f"{layer.name}: {t}: {counts[t]} solution blocks, {n} tests")
            if solution and n == 0:
                problems.append(f"no test is marked {t}")
        problems += uses_problems(layer, solution, cal.training_tasks(layer.name))
        listed = {name for r in solution for name in test_names(r["nodeid"])}
        problems += [
            f"scaffold test {s} (course.toml) does not exist"
            for s in layer.scaffold_tests
            if solution and f"tests/{s}" not in listed
        ]
        if one_task and "starter" in pythons:
            problems += _one_task_problems(
                layer, cal, root, pythons["starter"], say, script_dirs["starter"], data
            )
    return problems


# An internal reference a starter must not ship: the word "issue" and a number, "#13", "GH-5".


def _task_trace(blocks: dict[Path, list[Block]]) -> dict[str, dict[str, str]]:
    """The probe's table of every function holding a solution block: its tasks, by line.

    A function is named ``task2_1,task2_2:name`` (the tasks whose blocks it holds).
    """
    table: dict[str, dict[str, str]] = {}
    for path, bl in blocks.items():
        spans = function_spans(path.read_text(encoding="utf-8"))
        for b in bl:
            first, name = max((a, q) for q, (a, z) in spans.items() if a <= b.begin <= z)
            lines = table.setdefault(str(path.resolve()), {})
            tasks = set(lines.get(str(first), ":").split(":")[0].split(",")) - {""}
            lines[str(first)] = ",".join(sorted(tasks | {b.task})) + ":" + name
    return table


def _used_tasks(layer: Layer, records: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Task -> the layer's other tasks whose functions its (graded) tests ran on the solution."""
    used: dict[str, set[str]] = {}
    for r in records:
        if is_scaffold(layer, r["nodeid"]):
            continue
        ran = {t for f in r.get("functions", []) for t in f.split(":")[0].split(",")}
        for task in set(r["tasks"]) & set(layer.task_ids):
            used.setdefault(task, set()).update(ran - {task})
    return used


def uses_problems(
    layer: Layer, records: list[dict[str, Any]], training: tuple[str, ...] = ()
) -> list[str]:
    """A task whose tests run another task's code must say so in ``uses`` (the README's).

    Measured on the solution by the probe's trace; code that Numba compiles is not seen,
    so ``uses`` may name more than is measured, never less. A training task runs every
    task's code (the README says so) and is not listed. A layer without ``uses`` in
    course.toml is not checked (its README says nothing of it).
    """
    if layer.uses is None:
        return []
    problems = []
    for task, used in sorted(_used_tasks(layer, records).items()):
        if task in training:
            continue
        missing = sorted(used - set(layer.uses.get(task, ())))
        if missing:
            problems.append(
                f"the tests of {task} run the code of {', '.join(missing)}: add them to "
                f"`uses` of layers.{layer.name} in course.toml (the starter's README says so)"
            )
    return problems
