"""Grade a submission: one pytest process per task, and Gradescope's ``results.json``.

This module needs nothing of the repository: ``course grade`` uses it from the checkout,
and the autograder bundle (``course autograder``) ships it with ``runner.py`` and
``probe.py`` and runs it on the grading service (``python grading.py``, see :func:`main`).

A submission is the student's starter folder (or a zip of it, or a folder holding one):
only its ``src/minitorch/<layer>/`` is used, put first on ``PYTHONPATH``; the tests are
always a fresh copy of the course's own (public and hidden), never the student's.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from markers import qualnames
from runner import Run, run_pytest

__all__ = [
    "GradeSpec",
    "SubmissionError",
    "find_package",
    "grade_task",
    "grade_tasks",
    "main",
    "task_functions",
]


class SubmissionError(ValueError):
    """The submission cannot be graded at all (missing, empty, or it does not import)."""


@dataclass(frozen=True)
class GradeSpec:
    """What grading a layer needs to know (from course.toml), as the bundle stores it."""

    layer: str
    package: str
    tasks: tuple[tuple[str, str, float], ...]  # (task id, title, points)
    scaffold_tests: tuple[str, ...]
    time_limit: float
    output_limit: int
    version: str = "0"
    entry_points: tuple[tuple[str, str, str], ...] = ()  # (group, name, object reference)
    training_tasks: tuple[str, ...] = ()  # tasks whose code is a training script's network
    scripts: tuple[str, ...] = ()  # those scripts' file names in mt_examples/

    def to_json(self) -> str:
        """The spec as JSON (``spec.json`` of the bundle)."""
        return json.dumps(asdict(self), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> GradeSpec:
        """Read a spec written by :meth:`to_json`."""
        d = json.loads(text)
        return cls(
            d["layer"],
            d["package"],
            tuple((t[0], t[1], float(t[2])) for t in d["tasks"]),
            tuple(d["scaffold_tests"]),
            float(d["time_limit"]),
            int(d["output_limit"]),
            str(d.get("version", "0")),
            tuple((g, n, v) for g, n, v in d.get("entry_points", ())),
            tuple(d.get("training_tasks", ())),
            tuple(d.get("scripts", ())),
        )


def task_number(task: str) -> str:
    """Return the course's name of a task id: ``task2_3`` -> ``2.3``."""
    return task.removeprefix("task").replace("_", ".")


_SKIP = {"__pycache__", ".pytest_cache", ".hypothesis", ".git", ".venv", "venv", "wheels"}


def _ignore(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n in {"__pycache__", ".pytest_cache", ".hypothesis"}}


def _candidates(root: Path, layer: str, depth: int = 3) -> list[Path]:
    """Folders ``minitorch/<layer>`` with an ``__init__.py`` under ``root``, shallowest first."""
    found: list[Path] = []
    level = [root]
    for _ in range(depth + 2):
        nxt: list[Path] = []
        for d in level:
            pkg = d / "minitorch" / layer
            if (pkg / "__init__.py").is_file():
                found.append(pkg)
            try:
                nxt += [c for c in sorted(d.iterdir()) if c.is_dir() and c.name not in _SKIP]
            except OSError:
                continue
        if found:
            return found
        level = nxt
    return found


def find_package(
    submission: Path,
    layer: str,
    scratch: Path,
    scripts: tuple[str, ...] = (),
    helpers: Path | None = None,
) -> Path:
    """Copy the submission's ``minitorch/<layer>`` into ``scratch``; return what to import from.

    ``submission`` is a starter folder, a zip of one, or a folder whose only content is such
    a zip (as a grading service may deliver an upload). The package is looked for as
    ``src/minitorch/<layer>`` (or ``minitorch/<layer>``) up to three folders deep. The
    training ``scripts`` the submission has in ``mt_examples/`` beside ``src/`` come too,
    into ``mt_examples/`` with the course's copies of the modules they import (``helpers``).

    Raises:
        SubmissionError: if ``submission`` does not exist, is empty, or holds no package.
    """
    if not submission.exists():
        raise SubmissionError(f"{submission} does not exist")
    root = submission
    if submission.is_dir():
        entries = [p for p in submission.iterdir() if not p.name.startswith(".")]
        if not entries:
            raise SubmissionError(f"{submission} is empty: nothing was submitted")
        zips = [p for p in entries if p.suffix == ".zip"]
        if not _candidates(submission, layer) and len(zips) == 1:
            root = _unzip(zips[0], scratch / "unzipped")
    elif zipfile.is_zipfile(submission):
        root = _unzip(submission, scratch / "unzipped")
    else:
        raise SubmissionError(f"{submission} is neither a folder nor a zip file")
    found = _candidates(root, layer)
    if not found:
        raise SubmissionError(
            f"{submission} holds no src/minitorch/{layer}/ package: submit the whole "
            "starter folder (or a zip of it)"
        )
    code = scratch / "code"
    shutil.copytree(found[0], code / "minitorch" / layer, ignore=_ignore)
    if scripts:
        pkg = code / "mt_examples"
        if helpers is not None:
            shutil.copytree(helpers, pkg, ignore=_ignore)
        for base in (found[0].parents[2], found[0].parents[1]):
            for name in scripts:
                if (base / "mt_examples" / name).is_file() and not (pkg / name).exists():
                    pkg.mkdir(exist_ok=True)
                    shutil.copy2(base / "mt_examples" / name, pkg / name)
    return code


def register(code: Path, spec: GradeSpec) -> None:
    """Give the student's package in ``code`` its distribution metadata and entry points.

    The student's code is not installed, only put on ``PYTHONPATH``: a ``.dist-info``
    folder beside it makes ``importlib.metadata`` find the layer's entry points (mt-fast's
    backend ``fast``, as ``minitorch.tensor.backend("fast")`` looks it up) as if it were.
    """
    info = code / f"{spec.package.replace('-', '_')}-{spec.version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {spec.package}\nVersion: {spec.version}\n", "utf-8"
    )
    groups: dict[str, list[str]] = {}
    for group, name, value in spec.entry_points:
        groups.setdefault(group, []).append(f"{name} = {value}")
    (info / "entry_points.txt").write_text(
        "".join(f"[{g}]\n" + "\n".join(lines) + "\n\n" for g, lines in groups.items()), "utf-8"
    )


def _unzip(path: Path, where: Path) -> Path:
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                target = (where / info.filename).resolve()
                if not target.is_relative_to(where.resolve()):
                    raise SubmissionError(f"{path.name} holds a path outside it: {info.filename}")
            z.extractall(where)
    except zipfile.BadZipFile as e:
        raise SubmissionError(f"{path.name} is not a valid zip file: {e}") from None
    return where


def function_spans(source: str) -> dict[str, tuple[int, int]]:
    """Every function of ``source`` by dotted name (``Module.train``): its first and last line.

    The first line is that of its first decorator, if any.
    """
    spans: dict[str, tuple[int, int]] = {}
    for fn, name in qualnames(ast.parse(source)):
        first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        spans[name] = (first, fn.end_lineno or fn.lineno)
    return spans


def _import_lines(source: str) -> list[str]:
    """The module-level import statements of ``source`` (not ``__future__``), as text."""
    lines = source.splitlines(keepends=True)
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import) or (
            isinstance(node, ast.ImportFrom) and node.module != "__future__"
        ):
            out.append("".join(lines[node.lineno - 1 : node.end_lineno]))
    return out


def _first_body_line(tree: ast.Module) -> int:
    """The line before which imports may go: after the docstring and ``__future__``."""
    for i, node in enumerate(tree.body):
        doc = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (doc or future):
            return node.lineno
    return (tree.body[-1].end_lineno or 0) + 1 if tree.body else 1


def overlay(code: Path, layer: str, solution: Path, task: str, out: Path) -> Path:
    """A copy of ``code`` in which the other tasks' functions are the course's solution.

    ``solution`` holds the layer's solution sources (``<file>.py``, with every task's code)
    and ``blocks.json`` (file -> function -> the tasks whose solution blocks it holds). In
    the copy, each function of the student's files that holds blocks of other tasks only is
    replaced by the solution's (and the solution's imports are added), so a task's tests
    grade that task's code, not the student's other tasks: a task reaches full marks on its
    own, and a bug in one task costs only that task. A file that does not parse, or a
    function the student renamed, is left as it is.
    """
    shutil.copytree(code, out)
    table: dict[str, dict[str, list[str]]] = json.loads(
        (solution / "blocks.json").read_text(encoding="utf-8")
    )
    for rel, functions in table.items():
        target = out / "minitorch" / layer / rel
        others = [q for q, tasks in functions.items() if task not in tasks]
        if not target.is_file() or not others:
            continue
        mine = target.read_text(encoding="utf-8")
        theirs = (solution / rel).read_text(encoding="utf-8")
        try:
            tree = ast.parse(mine)
            spans = function_spans(mine)
        except SyntaxError:
            continue
        solved = function_spans(theirs)
        pairs = sorted((spans[q], solved[q]) for q in others if q in spans and q in solved)
        # A function inside one already replaced goes with it.
        chosen: list[tuple[tuple[int, int], tuple[int, int]]] = []
        for pair in pairs:
            if not chosen or pair[0][0] > chosen[-1][0][1]:
                chosen.append(pair)
        if not chosen:
            continue
        lines = mine.splitlines(keepends=True)
        source_lines = theirs.splitlines(keepends=True)
        for (a, b), (c, d) in reversed(chosen):
            lines[a - 1 : b] = source_lines[c - 1 : d]
        at = _first_body_line(tree) - 1
        lines[at:at] = _import_lines(theirs)
        target.write_text("".join(lines), encoding="utf-8")
    return out


def check_imports(python: Path, code: Path, layer: str) -> None:
    """Import ``minitorch.<layer>`` from ``code`` in ``python``.

    Raises:
        SubmissionError: with the last line of the traceback, if it does not import.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = str(code)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    script = (
        f"import minitorch.{layer} as m, pathlib, sys\n"
        f"assert pathlib.Path(m.__file__).resolve().is_relative_to(pathlib.Path({str(code)!r})"
        ".resolve()), m.__file__\n"
    )
    try:
        proc = subprocess.run(
            [str(python), "-c", script],
            env=env,
            cwd=code,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SubmissionError(f"importing minitorch.{layer} did not finish in 120 s") from None
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        where = next((ln.strip() for ln in reversed(lines) if ln.strip().startswith("File ")), "")
        last = lines[-1] if lines else f"exit {proc.returncode}"
        raise SubmissionError(
            f"the submission does not import (minitorch.{layer}): {last}"
            + (f" [{where}]" if where else "")
        )


def _scaffold(spec: GradeSpec, nodeid: str) -> bool:
    """Is ``nodeid`` a scaffold test of course.toml ("file.py", "file.py::test" or itself)?"""
    names = {nodeid, nodeid.split("[")[0], nodeid.split("::")[0]}
    return any(f"tests/{t}" in names for t in spec.scaffold_tests)


#: Lines of a failing public test's explanation kept (pytest's ``where`` lines, the
#: falsifying example): enough to see the inputs and what came out.
EVIDENCE_LINES = 12

#: The part of each function's share earned in proportion to its public tests that pass;
#: the rest is earned only when every test of the function passes, the hidden ones too.
PUBLIC_PART = 0.4


def _error(record: dict[str, Any]) -> dict[str, Any]:
    if record["errors"]:
        err: dict[str, Any] = record["errors"][0]
        return err
    return {"type": record["outcome"], "message": "", "notes": []}


def _short(record: dict[str, Any]) -> str:
    """A failing public test with its evidence: ``FAILED nodeid: Type: message``.

    The message keeps pytest's assertion explanation (the ``where`` lines) and the
    falsifying example hypothesis notes, ``EVIDENCE_LINES`` lines at most.
    """
    err = _error(record)
    lines = [ln[:300] for ln in (err["message"] or "").splitlines() if ln.strip()]
    lines += [ln[:300] for ln in err.get("notes", []) if ln.strip()]
    if len(lines) > EVIDENCE_LINES:
        lines = [*lines[: EVIDENCE_LINES - 1], "[...]"]
    first = lines[0] if lines else ""
    rest = "".join(f"\n    {ln}" for ln in lines[1:])
    return f"FAILED {record['nodeid']}: {err['type']}: {first}{rest}"


def _short_hidden(record: dict[str, Any]) -> str:
    """A failing hidden test: its name and the exception's type, never its inputs.

    The parametrization id (``[shape0-3]``) and the message (``assert 3 == 2``, the
    falsifying example) would show the hidden test's inputs, so they are left out; a
    ``NotImplementedError`` keeps its message (the student's own stub, ``Task 2.1: ...``).
    """
    err = _error(record)
    name = record["nodeid"].split("[")[0]
    msg = ""
    if err["type"] == "NotImplementedError" and err["message"]:
        msg = ": " + err["message"].splitlines()[0][:200]
    return f"FAILED {name}: {err['type']}{msg}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n[output truncated]"


def task_functions(code: Path, layer: str, solution: Path, task: str) -> dict[str, tuple[str, int]]:
    """The functions holding ``task``'s solution blocks, and where they are in ``code``.

    ``blocks.json`` (see :func:`overlay`) names them; each is looked for by its dotted name
    in the student's file: the value is (file, first line), or ("", 0) if the student's
    file does not parse or lacks it. The name is the dotted one (``TensorData.permute``),
    with the file's name before it if two files have the same.
    """
    table: dict[str, dict[str, list[str]]] = json.loads(
        (solution / "blocks.json").read_text(encoding="utf-8")
    )
    found = [(rel, q) for rel, fns in table.items() for q, tasks in fns.items() if task in tasks]
    short = [q for _, q in found]
    out: dict[str, tuple[str, int]] = {}
    for rel, q in found:
        path = code / "minitorch" / layer / rel
        try:
            spans = function_spans(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            spans = {}
        name = q if short.count(q) == 1 else f"{rel}:{q}"
        out[name] = (str(path), spans[q][0]) if q in spans else ("", 0)
    return out


def _trace_table(functions: dict[str, tuple[str, int]]) -> dict[str, dict[str, str]]:
    """The probe's table of the functions to watch: file -> first line -> name."""
    table: dict[str, dict[str, str]] = {}
    for name, (file, line) in functions.items():
        if file:
            table.setdefault(file, {})[str(line)] = name
    return table


def _function_scores(
    tests: list[dict[str, Any]], functions: list[str], points: float
) -> list[dict[str, Any]]:
    """Split a task's ``points`` among its functions and grade each by the tests it ran.

    A test belongs to every function of the task it called (the probe's ``functions``);
    one that called none of them (the student renamed it, or Numba ran it) to all. Each
    function with tests gets an equal share: ``PUBLIC_PART`` of it in proportion to its
    public tests that pass, the rest only if all its tests pass (public and hidden; all of
    the share if it has no public test) and one of them ran it. One failing test of a
    function thus costs more than half of that function's share, however many other tests
    pass.
    """
    names = functions or ["(the task)"]
    mine: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    ran: set[str] = set()
    for r in tests:
        called = [n for n in r.get("functions", []) if n in mine]
        ran.update(called)
        for n in called or names:
            mine[n].append(r)
    graded = [n for n in names if mine[n]]
    share = points / len(graded) if graded else 0.0
    out = []
    for n in graded:
        public = [r for r in mine[n] if not r["nodeid"].startswith("hidden/")]
        passed_public = sum(r["outcome"] == "passed" for r in public)
        # Its verdict needs a test that ran it: a function no test reached (a stub that
        # raised before it, or an earlier failure) has shown nothing yet. Where the probe
        # saw no function of the task at all (Numba-compiled kernels), none can be told.
        every = all(r["outcome"] == "passed" for r in mine[n]) and (n in ran or not ran)
        part = PUBLIC_PART * share if public else 0.0
        out.append(
            {
                "name": n,
                "share": share,
                "tests": len(mine[n]),
                "failed": sum(r["outcome"] != "passed" for r in mine[n]),
                "public_max": part,
                "public": part * passed_public / len(public) if public else 0.0,
                "verdict_max": share - part,
                "verdict": (share - part) if every else 0.0,
            }
        )
    return out


def _task_entries(
    spec: GradeSpec,
    task: tuple[str, str, float],
    run: Run | None,
    error: str | None,
    functions: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The results.json entries of one task: its public tests, and every test of it.

    The task's points are split among its ``functions`` (:func:`_function_scores`). The
    public entry (shown at once) holds each function's public part, earned in proportion
    to its public tests that pass; the second entry (shown once the grades are published,
    as it holds the hidden tests' verdicts) holds the rest, each function's part earned
    when every one of its tests passes, public and hidden. A task without hidden tests (a
    training task) gets one visible entry with all of it.
    """
    tid, title, points = task
    name = f"Task {task_number(tid)}: {title}"

    def single(text: str) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "number": task_number(tid),
                "score": 0.0,
                "max_score": points,
                "status": "failed",
                "output": _clip(text, spec.output_limit),
                "visibility": "visible",
            }
        ]

    if error is not None:
        return single(error)
    assert run is not None
    if run.timed_out:
        return single(
            f"Time limit exceeded: the tests of this task did not finish in "
            f"{spec.time_limit:g} s (an endless loop or very slow code). 0 points for this task."
        )
    head = run.output if len(run.output) < 4000 else run.output[:4000] + "\n[...]"
    if run.dropped:
        head += f"\n[output truncated: {run.dropped} more bytes]"
    if not run.finished:
        code = run.returncode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
        return single(
            f"The test process ended abnormally ({how}) before the tests of this task "
            f"finished: the code crashed the interpreter or exited. Output:\n{head}"
        )
    # A test that skips (it needs PyTorch, say, and the grader has none) counts for nothing,
    # and so does a scaffold test (it checks what the starter ships).
    tests = [
        r
        for r in run.tests
        if tid in r["tasks"] and r["outcome"] != "skipped" and not _scaffold(spec, r["nodeid"])
    ]
    if not tests:
        errors = [r for r in run.tests if r["outcome"] == "collect-error"]
        if errors:
            return single(
                "The tests could not be collected:\n"
                + "\n".join(e["errors"][0]["message"][-1000:] for e in errors)
            )
        return single(f"No test of this task ran. Output:\n{head}")
    public = [r for r in tests if not r["nodeid"].startswith("hidden/")]
    hidden = [r for r in tests if r["nodeid"].startswith("hidden/")]
    fns = _function_scores(tests, list(functions or []), points)
    public_max = round(sum(f["public_max"] for f in fns), 2)
    public_score = round(sum(f["public"] for f in fns), 2)
    verdict_score = round(sum(f["public"] + f["verdict"] for f in fns), 2) - public_score
    entries = []
    passed = [r for r in public if r["outcome"] == "passed"]
    lines = [f"{len(passed)} of {len(public)} public tests passed."]
    lines += [_short(r) for r in public if r["outcome"] != "passed"]
    each = [
        f"  {f['name']}: {f['public'] + f['verdict']:.2f} of {f['share']:.2f} points"
        + (f" ({f['failed']} of its {f['tests']} tests failed)" if f["failed"] else "")
        for f in fns
    ]
    if not hidden:
        # Nothing is hidden: one entry, shown at once, with the whole formula's result.
        lines.append(
            f"Score: the task's {points:g} points are split equally among the "
            f"{len(fns)} function(s) its tests run; {PUBLIC_PART:.0%} of a function's "
            "share is earned in proportion to its tests that pass, the rest only when all "
            "of them pass. Each function:"
        )
        return [
            {
                "name": name,
                "number": task_number(tid),
                "score": round(public_score + verdict_score, 2),
                "max_score": points,
                "status": "passed" if len(passed) == len(public) else "failed",
                "output": _clip("\n".join(lines + each), spec.output_limit),
                "visibility": "visible",
            }
        ]
    lines.append(
        f"Score: the task's {points:g} points are split equally among the "
        f"{len(fns)} function(s) its tests run; {PUBLIC_PART:.0%} of a function's share "
        "is earned in proportion to its public tests that pass (this entry), the rest "
        f"only when all its tests pass, the {len(hidden)} hidden one(s) too (the entry "
        "shown once grades are published)."
    )
    entries.append(
        {
            "name": name,
            "number": task_number(tid),
            "score": public_score,
            "max_score": public_max,
            "status": "passed" if len(passed) == len(public) else "failed",
            "output": _clip("\n".join(lines), spec.output_limit),
            "visibility": "visible",
        }
    )
    failed_hidden = [r for r in hidden if r["outcome"] != "passed"]
    lines = [f"{len(hidden) - len(failed_hidden)} of {len(hidden)} hidden tests passed."]
    lines += [_short_hidden(r) for r in failed_hidden]
    lines.append("Each function, earned when all its tests (public and hidden) pass:")
    lines += each
    entries.append(
        {
            "name": name + " (hidden tests)",
            "number": task_number(tid),
            "score": round(max(verdict_score, 0.0), 2),
            "max_score": round(points - public_max, 2),
            "status": "passed" if all(r["outcome"] == "passed" for r in tests) else "failed",
            "output": _clip("\n".join(lines), spec.output_limit),
            "visibility": "after_published",
        }
    )
    return entries


def grade_task(
    python: Path,
    code: Path,
    spec: GradeSpec,
    task: tuple[str, str, float],
    template: Path,
    scratch: Path,
    solution: Path | None = None,
    *,
    select: list[str] | None = None,
    first_failure: bool = False,
) -> tuple[list[dict[str, Any]], Run]:
    """Run one task's tests on ``code`` (see :func:`grade_tasks`); its entries and the run.

    ``course mutants`` runs a mutant with ``select`` (the node ids of the task's tests
    that call the mutated function: no other test can notice it) and ``first_failure``
    (stop at the first failing test, when only whether one fails matters); the entries'
    scores are then those of the tests run only.
    """
    tests = scratch / f"run-{task[0]}"
    shutil.copytree(template, tests)
    paths = ["tests", "hidden"] if (tests / "hidden").exists() else ["tests"]
    if select is not None:
        paths = select
    here: tuple[Path, ...] = (code,)
    functions: dict[str, tuple[str, int]] = {}
    env: dict[str, str] = {}
    if solution is not None and task[0] in spec.training_tasks:
        here = (solution / "package", code)
    elif solution is not None:
        here = (overlay(code, spec.layer, solution, task[0], scratch / f"code-{task[0]}"),)
        functions = task_functions(here[0], spec.layer, solution, task[0])
        trace = tests / ".trace.json"
        trace.write_text(json.dumps(_trace_table(functions)), encoding="utf-8")
        env["COURSE_PROBE_TRACE"] = str(trace)
    run = run_pytest(
        python,
        ["-q", "--tb=no", *(["-x"] if first_failure else []), "-m", task[0], *paths],
        tests,
        timeout=spec.time_limit,
        output_limit=spec.output_limit,
        pythonpath=here,
        env=env,
    )
    return _task_entries(spec, task, run, None, list(functions)), run


def grade_tasks(
    python: Path,
    code: Path,
    spec: GradeSpec,
    template: Path,
    scratch: Path,
    solution: Path | None = None,
) -> dict[str, Any]:
    """Run each task's tests on ``code`` and return Gradescope's ``results.json`` content.

    ``template`` holds the course's tests as they run (``tests/``, ``hidden/``,
    ``conftest.py``, ``pytest.ini``): each task runs on a fresh copy of it, in its own
    process, with the spec's time and output limits. With ``solution`` (see
    :func:`overlay`), each task runs with the other tasks' functions taken from it, and its
    points are split among its own functions (:func:`_task_entries`); a training task runs
    the whole solution package (``solution/package``) with the student's training scripts
    (``code/mt_examples``).
    """
    entries: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for task in spec.tasks:
        entries += grade_task(python, code, spec, task, template, scratch, solution)[0]
    return _results(spec, entries, time.perf_counter() - t0)


def results_for_error(spec: GradeSpec, message: str) -> dict[str, Any]:
    """The results of a submission that cannot be graded: every task 0, saying why."""
    entries = [e for task in spec.tasks for e in _task_entries(spec, task, None, message)]
    res = _results(spec, entries, 0.0)
    res["output"] = f"Not graded: {message}"
    return res


def _results(spec: GradeSpec, entries: list[dict[str, Any]], took: float) -> dict[str, Any]:
    return {
        "score": round(sum(e["score"] for e in entries), 2),
        "execution_time": round(took),
        "output": f"Graded against the tests of {spec.package} (public and hidden).",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": entries,
    }


def main() -> int:
    """The autograder bundle's ``run_autograder``: grade ``$AUTOGRADER_ROOT/submission``.

    ``AUTOGRADER_ROOT`` defaults to ``/autograder`` (the grading service's layout): the
    bundle is in ``source/``, the submission in ``submission/``, and the results go to
    ``results/results.json``. This runs in the environment ``setup.sh`` made, whose
    Python has the lower layers installed.
    """
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    source = root / "source"
    spec = GradeSpec.from_json((source / "grader" / "spec.json").read_text(encoding="utf-8"))
    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-autograder-") as tmp:
        scratch = Path(tmp)
        python = Path(sys.executable)
        try:
            code = find_package(
                root / "submission",
                spec.layer,
                scratch,
                spec.scripts,
                source / "helpers" / "mt_examples",
            )
            register(code, spec)
            check_imports(python, code, spec.layer)
        except SubmissionError as e:
            res = results_for_error(spec, str(e))
        else:
            res = grade_tasks(python, code, spec, source / "suite", scratch, source / "solution")
    out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    for entry in res["tests"]:
        print(f"{entry['name']}: {entry['score']:g}/{entry['max_score']:g}")
    print(f"total: {res['score']:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
