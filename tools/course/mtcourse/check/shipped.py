"""Shipped tests must not need what the starter leaves out (``solution-only`` modules).

A test that ships with the starter runs in two places without the solution-only files:
the student's checkout, and the grader's copy of the course's code (the starter with every
task's functions filled in). A test that imports a solution-only module fails in both: on
a student's correct code, and in calibration, where the course's own solution must pass
every test, so the whole layer cannot be graded (the fast layer's zero-size matmul test
imported ``kernels.tuned`` in a child process, and ``grade-all`` refused the week).

Every test file of the starter's test tree is read for the modules it imports: import
statements, Python code in string constants (a child process's script) and the constant
argument of ``importlib.import_module`` or ``__import__``. An import of a solution-only
module of the layer is a problem, unless it sits in a ``try`` that catches ``ImportError``
(a test that runs the module where it exists).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from ..config import Layer

__all__ = ["solution_only_modules", "solution_only_references"]


def solution_only_modules(layer: Layer) -> dict[str, str]:
    """The layer's solution-only source modules: dotted name -> file (``src/...``)."""
    modules = {}
    for rel in layer.solution_only:
        parts = Path(rel).with_suffix("").parts
        if rel.endswith(".py") and parts[0] == "src":
            dotted = ".".join(parts[1:])
            modules[dotted.removesuffix(".__init__")] = rel
    return modules


def _guarded(tree: ast.AST) -> set[int]:
    """Ids of the import nodes inside a ``try`` whose handlers catch ``ImportError``."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        names = set()
        for handler in node.handlers:
            for n in ast.walk(handler.type) if handler.type else [ast.Name("BaseException")]:
                if isinstance(n, ast.Name):
                    names.add(n.id)
                elif isinstance(n, ast.Attribute):
                    names.add(n.attr)
        if names & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}:
            for statement in node.body:
                guarded.update(id(n) for n in ast.walk(statement))
    return guarded


def _references(source: str, depth: int = 0) -> Iterator[tuple[str, int]]:
    """``(dotted module name, line)`` of every module ``source`` may import unguarded."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    guarded = _guarded(tree)
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module, node.lineno
            for alias in node.names:
                yield f"{node.module}.{alias.name}", node.lineno
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            constant = first.value if isinstance(first, ast.Constant) else None
            if name in ("import_module", "__import__") and isinstance(constant, str):
                yield constant, node.lineno
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if depth < 2 and "import" in text:  # a script run by a child process
                for name, line in _references(text, depth + 1):
                    yield name, node.lineno + line - 1


def solution_only_references(layer: Layer, tests: Path) -> list[str]:
    """Problems: the shipped tests under ``tests`` that name a solution-only module."""
    modules = solution_only_modules(layer)
    if not modules:
        return []
    problems = []
    for path in sorted(tests.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        seen = set()
        for name, line in _references(source):
            hit = next((m for m in modules if name == m or name.startswith(m + ".")), None)
            if hit is None or (hit, line) in seen:
                continue
            seen.add((hit, line))
            problems.append(
                f"{path.relative_to(tests).as_posix()}:{line} ships with the starter and "
                f"imports {hit} ({modules[hit]}), which the starter leaves out "
                "(solution-only): it fails on a student's correct code and in the grader's "
                "calibration; guard the import (try/except ImportError) or make the test "
                "solution-only"
            )
    return problems
