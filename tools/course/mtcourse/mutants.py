"""How strong is the grader? Mutate the solution blocks and grade every mutant.

    hatch run course:mutants LAYER [--task T] [--sample N] [--seed S] [--first-failure]

Each mutant is the layer's solution with one small change inside one solution block (the
mistakes a student makes: an operator or a comparison swapped, a constant or a range off
by one, two arguments swapped, a statement dropped, a condition negated). It is graded by
the real grader (``grader.grading.grade_units``, the code path of ``course grade``): the
mutated function runs in the worker and every other is the course's, as when a student's
function is graded; the task's points are split among its functions. A mutant is
*killed* when a run of its function fails; it *survives* when all pass. Mutants listed
in ``equivalent-mutants.toml`` (beside this file) behave exactly as the solution does and
are counted apart, each with the reason.

It is cheap: one grading environment per layer serves every mutant; its calibration grades
the solution once (it must earn every point) and records which tests use which of the
task's functions. A mutant changes one function only, so only the runs that grade that
function can notice it: it runs those (the task's other functions keep their shares), and
with ``--first-failure`` stops at the first that fails (the points it keeps are then an
upper bound from the score formula).
"""

from __future__ import annotations

import ast
import copy
import difflib
import json
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomllib

from .config import Calendar, Layer, Task, load_calendar
from .grade import grading_env
from .grader.grading import grade_units, unit_names
from .grader.scoring import PUBLIC_PART
from .grader.splice import find_units
from .layers import CourseError, scan_blocks
from .markers import Block, function_spans

__all__ = ["EQUIVALENT", "Mutant", "Outcome", "generate", "load_equivalent", "run_mutants"]

#: The mutants judged equivalent to the solution, each with its reason.
EQUIVALENT = Path(__file__).resolve().parents[1] / "equivalent-mutants.toml"


@dataclass(frozen=True)
class Mutant:
    """One mutant: a solution source with one change inside a solution block."""

    task: str
    file: str  # relative to the package (``tensor_data.py``)
    function: str  # the dotted name of the innermost function holding the block
    line: int  # of the change, in the solution's file
    kind: str  # operator, comparison, constant, off-by-one, swap, drop, negate
    before: str  # the changed lines of the solution, stripped
    after: str  # what they became
    source: str  # the whole mutated file
    nth: int = 1  # the same change of the same lines in the function: which one (file order)

    @property
    def key(self) -> str:
        """A name that survives edits elsewhere in the file (``equivalent-mutants.toml``).

        Two mutants making the same change to equal lines of one function (two
        ``continue``) are told apart by ``#2``, ``#3``... in file order.
        """
        nth = f" #{self.nth}" if self.nth > 1 else ""
        return f"{self.file}:{self.function}: {self.before} -> {self.after}{nth}"

    def diff(self, original: str) -> str:
        """The unified diff of the mutant against the solution's file."""
        return "".join(
            difflib.unified_diff(
                original.splitlines(keepends=True),
                self.source.splitlines(keepends=True),
                f"a/{self.file}",
                f"b/{self.file}",
                n=1,
            )
        )


_BINOPS: dict[type[ast.operator], list[type[ast.operator]]] = {
    ast.Add: [ast.Sub],
    ast.Sub: [ast.Add],
    ast.Mult: [ast.Div],
    ast.Div: [ast.Mult],
    ast.FloorDiv: [ast.Div],
    ast.Mod: [ast.FloorDiv],
    ast.Pow: [ast.Mult],
}
_NONCOMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_COMPARE: dict[type[ast.cmpop], list[type[ast.cmpop]]] = {
    ast.Lt: [ast.LtE, ast.GtE],
    ast.LtE: [ast.Lt, ast.Gt],
    ast.Gt: [ast.GtE, ast.LtE],
    ast.GtE: [ast.Gt, ast.Lt],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
}
_ATOMS = (ast.Name, ast.Constant, ast.Call, ast.Attribute, ast.Subscript, ast.List, ast.Tuple)


def _expr_variants(node: ast.expr) -> Iterator[tuple[str, ast.expr]]:
    """The mutations of one expression node: (kind, the new node)."""
    if isinstance(node, ast.BinOp):
        for op in _BINOPS.get(type(node.op), []):
            yield "operator", ast.BinOp(node.left, op(), node.right)
        if isinstance(node.op, _NONCOMMUTATIVE):
            yield "swap", ast.BinOp(node.right, node.op, node.left)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        for cmp in _COMPARE.get(type(node.ops[0]), []):
            yield "comparison", ast.Compare(node.left, [cmp()], node.comparators)
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "negate", ast.BoolOp(other, node.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        yield "negate", node.operand
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield "constant", ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield "constant", ast.Constant(node.value + 1)
        yield "constant", ast.Constant(node.value - 1)
    elif isinstance(node, ast.Constant) and type(node.value) is float:
        yield "constant", ast.Constant(node.value + 1.0)
        if node.value != 0.0:
            yield "constant", ast.Constant(0.0)
    elif isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
            last = node.args[-1]
            for step in (ast.Sub, ast.Add):
                args = [*node.args[:-1], ast.BinOp(last, step(), ast.Constant(1))]
                yield "off-by-one", ast.Call(node.func, args, node.keywords)
        plain = [a for a in node.args if not isinstance(a, ast.Starred)]
        if len(plain) == len(node.args) >= 2 and ast.unparse(plain[0]) != ast.unparse(plain[1]):
            yield "swap", ast.Call(node.func, [plain[1], plain[0], *plain[2:]], node.keywords)
        for i, kw in enumerate(node.keywords):
            if kw.arg is not None:  # a keyword left out: the callee's default instead
                yield (
                    "drop-keyword",
                    ast.Call(node.func, node.args, node.keywords[:i] + node.keywords[i + 1 :]),
                )


def _stmt_variants(node: ast.stmt) -> Iterator[tuple[str, ast.stmt | None]]:
    """The mutations of one statement: (kind, the new statement, or None to drop it)."""
    if isinstance(node, ast.AnnAssign) and node.value is None:
        return  # ``s: float`` declares a type only: dropping it changes nothing
    yield "drop", None
    if isinstance(node, (ast.If, ast.While)):
        new = copy.copy(node)
        new.test = ast.UnaryOp(ast.Not(), node.test)
        yield "negate", new
    elif isinstance(node, ast.Assign) and len(node.targets) > 1:
        for i, target in enumerate(node.targets):
            if isinstance(target, (ast.Attribute, ast.Subscript)):  # one write left out
                rest = node.targets[:i] + node.targets[i + 1 :]
                yield "drop-write", ast.Assign(rest, node.value, lineno=node.lineno)
    elif isinstance(node, ast.AugAssign):
        for op in _BINOPS.get(type(node.op), []):
            yield "operator", ast.AugAssign(node.target, op(), node.value)
        yield "operator", ast.Assign([node.target], node.value, lineno=node.lineno)


def _offset(lines: list[str], line: int, col: int) -> int:
    """The character offset in ``lines[line - 1]`` of the UTF-8 byte column ``col``."""
    return len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def _replace(source: str, node: ast.expr | ast.stmt, text: str) -> str:
    lines = source.splitlines(keepends=True)
    a, b = node.lineno, node.end_lineno or node.lineno
    start = _offset(lines, a, node.col_offset)
    end = _offset(lines, b, node.end_col_offset or 0)
    head = "".join(lines[: a - 1]) + lines[a - 1][:start]
    tail = lines[b - 1][end:] + "".join(lines[b:])
    return head + text + tail


def _text(node: ast.AST) -> str:
    text = ast.unparse(ast.fix_missing_locations(node))
    return text if isinstance(node, (*_ATOMS, ast.stmt)) else f"({text})"


def _changed(before: str, after: str) -> tuple[int, str, str]:
    """The first changed line and the changed lines of both, stripped."""
    a, b = before.splitlines(), after.splitlines()
    first = 0
    while first < min(len(a), len(b)) and a[first] == b[first]:
        first += 1
    last_a, last_b = len(a), len(b)
    while last_a > first and last_b > first and a[last_a - 1] == b[last_b - 1]:
        last_a, last_b = last_a - 1, last_b - 1
    strip = " / ".join
    return (
        first + 1,
        strip(x.strip() for x in a[first:last_a]),
        strip(x.strip() for x in b[first:last_b]),
    )


def generate(
    source: str, blocks: list[Block], file: str, functions: dict[int, str]
) -> list[Mutant]:
    """Every mutant of the code inside ``blocks`` of ``source`` (a solution file).

    ``functions`` maps each block's ``BEGIN`` line to the dotted name of its function.
    Each mutant parses; two that give the same file are one.
    """
    tree = ast.parse(source)
    out: list[Mutant] = []
    seen = {source}
    for block in blocks:
        inside = [
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.expr, ast.stmt))
            and block.begin < n.lineno
            and (n.end_lineno or n.lineno) < block.end
        ]
        for node in sorted(inside, key=lambda n: (n.lineno, n.col_offset)):
            variants: Iterator[tuple[str, Any]] = (
                _stmt_variants(node) if isinstance(node, ast.stmt) else _expr_variants(node)
            )
            for kind, new in variants:
                if new is None:
                    text = "pass"
                else:
                    ast.copy_location(new, node)
                    text = _text(new)
                mutated = _replace(source, node, text)
                if mutated in seen:
                    continue
                try:
                    ast.parse(mutated)
                except SyntaxError:
                    continue
                seen.add(mutated)
                line, before, after = _changed(source, mutated)
                out.append(
                    Mutant(
                        block.task,
                        file,
                        functions[block.begin],
                        line,
                        kind,
                        before,
                        after,
                        mutated,
                    )
                )
    seen_keys: dict[str, int] = {}
    numbered = []
    for m in sorted(out, key=lambda m: m.line):
        seen_keys[m.key] = seen_keys.get(m.key, 0) + 1
        numbered.append(replace(m, nth=seen_keys[m.key]))
    return numbered


def load_equivalent(path: Path = EQUIVALENT) -> dict[tuple[str, str], str]:
    """The equivalent mutants: (layer, key) -> the reason."""
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        data = tomllib.load(f)
    return {(m["layer"], m["key"]): m["reason"] for m in data.get("mutant", [])}


@dataclass
class Outcome:
    """How the grader took one mutant."""

    mutant: Mutant
    status: str  # killed, survived, equivalent
    kept: float  # the task's points the mutant keeps
    exact: bool  # kept is the grade (else an upper bound: --first-failure)
    share: float  # the share of the task's points of the mutant's function
    failed: list[str] = field(default_factory=list)  # the tests that noticed it
    reason: str = ""  # why it is equivalent
    seconds: float = 0.0
    functions: dict[str, float] = field(default_factory=dict)  # --whole-task: each one's points

    def to_json(self, original: str) -> dict[str, Any]:
        """A JSON record of the outcome (``--json``)."""
        m = self.mutant
        return {
            "task": m.task,
            "file": m.file,
            "function": m.function,
            "line": m.line,
            "kind": m.kind,
            "key": m.key,
            "status": self.status,
            "kept": round(self.kept, 2),
            "exact": self.exact,
            "share": round(self.share, 2),
            "failed": self.failed,
            "reason": self.reason,
            "diff": m.diff(original),
            "seconds": round(self.seconds, 1),
            "functions": {k: round(v, 2) for k, v in self.functions.items()},
        }


def _sample(found: list[Mutant], n: int | None, seed: int) -> list[Mutant]:
    if n is None or n >= len(found):
        return found
    return sorted(random.Random(seed).sample(found, n), key=lambda m: (m.file, m.line))


#: The mistakes ``--per-function`` picks first: the ones students make most.
_TYPICAL = ("operator", "off-by-one", "comparison", "swap", "constant", "drop-keyword", "negate")


def _per_function(found: list[Mutant], n: int, unit: dict[str, str]) -> list[Mutant]:
    """``n`` mutants of each graded function: the most typical mistakes, in file order."""

    def rank(m: Mutant) -> tuple[int, int]:
        kind = _TYPICAL.index(m.kind) if m.kind in _TYPICAL else len(_TYPICAL)
        return kind, m.line

    chosen: list[Mutant] = []
    for key in dict.fromkeys(unit[m.key] for m in found):
        chosen += sorted((m for m in found if unit[m.key] == key), key=rank)[:n]
    return sorted(chosen, key=lambda m: (m.file, m.line))


def run_mutants(
    layer_name: str,
    *,
    tasks: list[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    first_failure: bool = False,
    json_out: Path | None = None,
    say: Any = print,
    cal: Calendar | None = None,
    per_function: int | None = None,
    whole_task: bool = False,
) -> int:
    """Grade the mutants of ``layer_name``'s solution blocks; print the table per task.

    ``sample`` takes that many mutants per task (chosen with ``seed``); ``per_function``
    that many of each graded function (its most typical mistakes). ``whole_task`` grades
    each mutant with every run of its task, not its function's only, and prints each
    function's points: what a wrong function costs the others (nothing, if the grader is
    fair). Returns 0, or 1 if a killed mutant keeps more than half of its function's share
    or (``whole_task``) costs another function anything. Building the grading environment
    calibrates it: the solution must earn every point there, or this raises.
    """
    cal = cal or load_calendar()
    layer = cal.layer(layer_name)
    training = set(cal.training_tasks(layer.name))
    writing = layer.test_writing_ids
    wanted = [
        t
        for t in layer.task_ids
        if t not in training and t not in writing and (not tasks or t in tasks)
    ]
    for t in tasks or []:
        if t not in layer.task_ids:
            raise CourseError(f"{t} is not a task of {layer.name}")
        if t in training:
            raise CourseError(f"{t} is a training task: its network is not mutated")
        if t in writing:
            raise CourseError(f"{t} writes tests: its grade is the mutants they catch")
    equivalent = load_equivalent()
    originals: dict[str, str] = {}
    by_task: dict[str, list[Mutant]] = {t: [] for t in wanted}
    unit_of: dict[tuple[str, int], str] = {}
    for path, blocks in scan_blocks(layer).items():
        rel = path.relative_to(layer.src).as_posix()
        if not (layer.src / rel).is_file() or any(
            (layer.path / so).resolve() == path.resolve() for so in layer.solution_only
        ):
            continue
        text = path.read_text(encoding="utf-8")
        originals[rel] = text
        spans = function_spans(text)
        owner = {
            b.begin: max((a, q) for q, (a, z) in spans.items() if a <= b.begin <= z)[1]
            for b in blocks
        }
        for b in blocks:
            (unit,) = find_units(text, [(b.task, b.begin, b.end)], rel)
            unit_of[(rel, b.begin)] = unit.key
        for m in generate(text, [b for b in blocks if b.task in by_task], rel, owner):
            by_task[m.task].append(m)
    status = 0
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix=f"course-mutants-{layer.name}-") as tmp:
        root = Path(tmp)
        root.chmod(0o711)  # a user-isolation worker passes through to its scratch
        t0 = time.perf_counter()
        env = grading_env(layer.name, root / "env", cal=cal, tasks=tuple(wanted))
        say(
            f"{layer.name}: grading environment built and calibrated in "
            f"{time.perf_counter() - t0:.0f}s"
        )
        course = env.course
        calibration = course.calibration()
        units = course.units
        shown = unit_names(units)

        def names_of(keys: list[str]) -> dict[str, str]:
            return {k: shown[k] for k in keys}

        n = 0
        summary: list[str] = []
        for task in layer.tasks:
            if task.id not in by_task:
                continue
            found = by_task[task.id]
            task_units = [u.key for u in units if u.task == task.id]
            keys = {m.key: _unit_key(m, unit_of, originals) for m in found}
            if per_function is not None:
                chosen = _per_function(found, per_function, keys)
            else:
                chosen = _sample(found, sample, seed)
            share = task.points / len(task_units)
            plan = calibration["tasks"][task.id]["tests"]
            say(
                f"\n{task.id} {task.title} ({task.points:g} points): "
                f"{len(chosen)} of {len(found)} mutants"
            )
            batch = []
            for n, m in enumerate(chosen):
                files = dict(originals)
                files[m.file] = m.source
                batch.append((f"m{n}", files, set(task_units) if whole_task else {keys[m.key]}))
            t1 = time.perf_counter()
            graded = grade_units(
                course,
                batch,
                root / f"batch-{task.id}",
                first_failure=first_failure,
                isolation=env.isolation,
            )
            each = (time.perf_counter() - t1) / max(len(chosen), 1)
            outcomes = [
                _outcome(
                    m,
                    keys[m.key],
                    task.points,
                    share,
                    plan,
                    graded[f"m{n}"],
                    equivalent.get((layer.name, m.key)),
                    each,
                    first_failure=first_failure,
                    units=names_of(task_units) if whole_task else None,
                )
                for n, m in enumerate(chosen)
            ]
            if whole_task:
                status |= _report_functions(task.points, outcomes, keys, names_of, say)
            shutil.rmtree(root / f"batch-{task.id}", ignore_errors=True)
            status |= _report(task.id, task.points, outcomes, originals, say)
            records += [o.to_json(originals[o.mutant.file]) for o in outcomes]
            summary.append(_summary(task.id, task.points, len(found), outcomes))
    say(
        f"\n{layer.name}: task | mutants (of all) | killed | survived | equivalent | "
        "mutation score | most a killed one keeps | least a killed one costs / its share"
    )
    for line in summary:
        say(line)
    if json_out is not None:
        json_out.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    return status


def _report_functions(
    points: float,
    outcomes: list[Outcome],
    keys: dict[str, str],
    names_of: Any,
    say: Any,
) -> int:
    """Print each function's points of each mutant graded on its whole task.

    Returns 1 if a function the mutant does not change lost anything.
    """
    bad = 0
    say("  each mutant graded with every run of its task (--whole-task):")
    for o in outcomes:
        mine = names_of([keys[o.mutant.key]])[keys[o.mutant.key]]
        others = {n: v for n, v in o.functions.items() if n != mine}
        lost = {n: v for n, v in others.items() if v < o.share - 0.005}
        bad |= bool(lost)
        say(
            f"  {o.mutant.function} [{o.mutant.kind}] {o.mutant.before} -> {o.mutant.after}: "
            f"{mine} keeps {o.functions.get(mine, 0.0):.2f} of {o.share:.2f}; the task "
            f"{sum(o.functions.values()):.2f} of {points:g}; the other functions "
            + ("lose nothing" if not lost else f"LOSE {lost}")
        )
    return int(bad)


TEST_TASK_MUTANTS = 2
"""Mutants of each function a test-writing task's tests check (its most typical mistakes):
each is a run of the student's tests in a fresh sandbox, about a second."""


def test_task_mutants(layer: Layer, task: Task) -> list[dict[str, Any]]:
    """The mutants a test-writing task is graded by, as the grader runs them.

    ``TEST_TASK_MUTANTS`` of each function of the solution blocks of ``task.tests_of``,
    its most typical mistakes, none of them equivalent (``equivalent-mutants.toml``): each
    with its graded function's key, the kind of change, and the mutated function's code
    (compiled beside the course's module by the grader).

    Raises:
        CourseError: if a block of those tasks is in a method (only module-level
            functions can be swapped for a mutant).
    """
    equivalent = load_equivalent()
    out: list[dict[str, Any]] = []
    for path, blocks in scan_blocks(layer).items():
        rel = path.relative_to(layer.src).as_posix()
        mine = [b for b in blocks if b.task in task.tests_of]
        if not mine:
            continue
        text = path.read_text(encoding="utf-8")
        spans = function_spans(text)
        owner = {
            b.begin: max((a, q) for q, (a, z) in spans.items() if a <= b.begin <= z)[1]
            for b in mine
        }
        unit_of = {
            (rel, b.begin): find_units(text, [(b.task, b.begin, b.end)], rel)[0].key for b in mine
        }
        found = [
            m for m in generate(text, mine, rel, owner) if (layer.name, m.key) not in equivalent
        ]
        unit = {m.key: _unit_key(m, unit_of, {rel: text}) for m in found}
        for m in _per_function(found, TEST_TASK_MUTANTS, unit):
            # A block in a function nested in a module-level one (``map``'s ``apply``)
            # mutates that module-level function: the graded function the grader swaps.
            top = m.function.split(".")[0]
            node = next(n for n in ast.parse(m.source).body if getattr(n, "name", None) == top)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                raise CourseError(
                    f"{rel}:{m.line}: {m.function} is a method; a test-writing task can only "
                    "check module-level functions"
                )
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            code = "".join(m.source.splitlines(keepends=True)[first - 1 : node.end_lineno])
            out.append(
                {
                    "id": f"m{len(out)}",
                    "key": unit[m.key],
                    "function": top,
                    "kind": m.kind,
                    "line": m.line,
                    "code": code,
                }
            )
    return out


def _unit_key(m: Mutant, unit_of: dict[tuple[str, int], str], originals: dict[str, str]) -> str:
    """The key of the graded function the mutant changes."""
    return next(v for (f, b), v in unit_of.items() if f == m.file and _within(m, b, originals[f]))


def _within(m: Mutant, begin: int, source: str) -> bool:
    """Is the mutant's change inside the block that begins at line ``begin``?"""
    lines = source.splitlines()
    end = next(i for i in range(begin, len(lines) + 1) if "END SOLUTION" in lines[i - 1])
    return begin < m.line < end


def _summary(tid: str, points: float, total: int, outcomes: list[Outcome]) -> str:
    """One row of the closing table."""
    killed = [o for o in outcomes if o.status == "killed"]
    survived = sum(o.status == "survived" for o in outcomes)
    equivalent = sum(o.status == "equivalent" for o in outcomes)
    judged = len(killed) + survived
    score = f"{100.0 * len(killed) / judged:.1f}%" if judged else "-"
    kept = f"{max(o.kept for o in killed):.2f}/{points:g}" if killed else "-"
    cost = f"{min((points - o.kept) / o.share for o in killed):.2f}" if killed else "-"
    return (
        f"{tid} | {len(outcomes)} ({total}) | {len(killed)} | {survived} | {equivalent} | "
        f"{score} | {kept} | {cost}"
    )


def _outcome(
    m: Mutant,
    key: str,
    points: float,
    share: float,
    plan: dict[str, list[str]],
    records: list[dict[str, Any]],
    reason: str | None,
    seconds: float,
    *,
    first_failure: bool,
    units: dict[str, str] | None = None,
) -> Outcome:
    """How the grader took one mutant, from the records of its function's runs.

    The task's other functions are the course's in every run, so they keep their shares
    whatever the mutant does: what it keeps is its own function's public part for the
    public tests that still pass (an upper bound with ``first_failure``).
    """
    runs = [r for r in records if r.get("key") == key]
    failed = sorted({r["nodeid"] for r in runs if r["outcome"] != "passed"})
    finished = any("finished" in r for r in records)
    mine = [n for n, keys in plan.items() if key in keys]
    if not finished and not failed:
        failed = ["(the test process ended before its tests did)"]
    public = [n for n in mine if not n.startswith("hidden/")]
    passed_public = sum(
        1 for r in runs if r["outcome"] == "passed" and not r["nodeid"].startswith("hidden/")
    )
    if not failed:
        kept, exact = points, True
    elif first_failure:
        kept, exact = points - (1 - PUBLIC_PART) * share, False
    else:
        part = PUBLIC_PART * share * (passed_public / len(public) if public else 0.0)
        kept, exact = points - share + part, True
    if reason is not None:
        status = "equivalent" if not failed else "killed"
    else:
        status = "killed" if failed else "survived"
    functions: dict[str, float] = {}
    if units is not None:  # every function of the task was graded: score each one
        for k, name in units.items():
            mine_k = [n for n, keys in plan.items() if k in keys]
            runs_k = {r["nodeid"]: r["outcome"] == "passed" for r in records if r.get("key") == k}
            public_k = [n for n in mine_k if not n.startswith("hidden/")]
            part = PUBLIC_PART * share if public_k else 0.0
            passed = sum(runs_k.get(n, False) for n in public_k)
            every = all(runs_k.get(n, False) for n in mine_k) and bool(mine_k)
            functions[name] = part * (passed / len(public_k) if public_k else 0) + (
                share - part if every else 0.0
            )
        kept, exact = sum(functions.values()), True
    return Outcome(m, status, kept, exact, share, failed, reason or "", seconds, functions)


def _report(
    tid: str, points: float, outcomes: list[Outcome], originals: dict[str, str], say: Any
) -> int:
    """Print one task's table; 1 if a killed mutant keeps more than half its function's share."""
    killed = [o for o in outcomes if o.status == "killed"]
    survived = [o for o in outcomes if o.status == "survived"]
    equivalent = [o for o in outcomes if o.status == "equivalent"]
    judged = len(killed) + len(survived)
    score = 100.0 * len(killed) / judged if judged else 100.0
    say(
        f"  mutants {len(outcomes)}, killed {len(killed)}, survived {len(survived)}, "
        f"equivalent {len(equivalent)}: mutation score {score:.1f}%"
    )
    bad = 0
    for o in outcomes:
        m = o.mutant
        bound = "" if o.exact else "<="
        costs = points - o.kept
        weak = o.status == "killed" and costs <= o.share / 2
        bad |= weak
        say(
            f"  {o.status:<10} keeps {bound}{o.kept:5.2f}/{points:g} (share {o.share:.2f})"
            f"{' COSTS LESS THAN HALF ITS SHARE' if weak else ''}  {m.file}:{m.line} "
            f"{m.function} [{m.kind}] {m.before} -> {m.after}"
        )
    for o in survived:
        say(f"  survivor {o.mutant.key}\n" + _indent(o.mutant.diff(originals[o.mutant.file])))
    for o in equivalent:
        say(f"  equivalent {o.mutant.key}: {o.reason}")
    for o in killed:
        if o.reason:
            say(f"  killed, but listed in {EQUIVALENT.name}: {o.mutant.key}")
    if killed:
        say(f"  a killed mutant keeps at most {max(o.kept for o in killed):.2f} of {points:g}")
    return int(bad)


def _indent(text: str) -> str:
    return "".join(f"    {ln}\n" for ln in text.splitlines())
