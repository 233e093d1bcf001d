"""The course's solution spliced into a starter, for ``check --one-task``.

A task's tests run on the starter with every other task's functions taken from the
solution: a test of the task that then passes runs none of its code. (Grading splices
function by function too, in its own copies: ``grader/splice.py``.)
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from pathlib import Path

from ..config import Layer
from ..layers import scan_blocks
from ..markers import function_spans, render

__all__ = ["SubmissionError", "check_imports", "overlay", "solution_overlay"]


class SubmissionError(ValueError):
    """The code under check does not import."""


def solution_overlay(layer: Layer, where: Path) -> Path:
    """The layer's solution sources and which function holds which task (``overlay``)."""
    table: dict[str, dict[str, list[str]]] = {}
    for path, blocks in scan_blocks(layer).items():
        rel = path.relative_to(layer.src).as_posix()
        text = path.read_text(encoding="utf-8")
        spans = function_spans(text)
        functions: dict[str, list[str]] = {}
        for b in blocks:
            inside = [(a, q) for q, (a, z) in spans.items() if a <= b.begin <= z]
            name = max(inside)[1]  # the innermost function holding the block
            if b.task not in functions.setdefault(name, []):
                functions[name].append(b.task)
        table[rel] = functions
        target = where / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(text, blocks, frozenset(b.task for b in blocks)), "utf-8")
    (where / "blocks.json").write_text(json.dumps(table, indent=1) + "\n", "utf-8")
    return where


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
