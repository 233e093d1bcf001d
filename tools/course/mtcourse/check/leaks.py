"""What a starter must not ship: a solution in its prose, an internal issue number."""

from __future__ import annotations

import ast
import copy
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from ..config import REPO, Calendar, Layer
from ..layers import scan_blocks, script_blocks
from ..markers import Block

__all__ = ["issue_problems", "leak_problems"]

_ISSUE_REF = re.compile(r"(?i)\b(?:issues?|gh)\s*[#-]?\s*\d+\b|\(#\d+\)")
_TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".ini", ".json"}


def issue_problems(starter: Path) -> list[str]:
    """Every issue number in what the starter ships (all its text files but ``wheels/``)."""
    problems = []
    for path in sorted(starter.rglob("*")):
        rel = path.relative_to(starter)
        if not path.is_file() or rel.parts[0] == "wheels" or path.suffix not in _TEXT_SUFFIXES:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _ISSUE_REF.finditer(line):
                problems.append(
                    f"the starter ships an internal reference ({m.group(0)!r}) in {rel}:{n}: "
                    "say what it means instead of the issue's number"
                )
    return problems


def _norm(text: str) -> str:
    """Text without blanks, backticks and quotes: how a statement is compared."""
    return re.sub(r"[\s`'\"]", "", text)


_OPS = (ast.BinOp, ast.Call, ast.Compare, ast.BoolOp, ast.UnaryOp)


class _Shape(ast.NodeTransformer):
    """A formula's shape: every name and attribute chain becomes ``_``, methods stay.

    ``(x.view(B, n, 1) * w.view(1, n, m)).sum(1)`` and the solution's ``(x.view(batch,
    self.in_size, 1) * weight.view(1, self.in_size, self.out_size)).sum(1)`` have one shape.
    """

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name("_")

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return ast.Constant(float(value))
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        return ast.Name("_")

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute):
            new_func: ast.expr = ast.Attribute(self.visit(func.value), func.attr)
        else:
            new_func = self.visit(func)
        return ast.Call(new_func, [self.visit(a) for a in node.args], [])


def _shapes(node: ast.AST) -> Iterator[str]:
    """The shapes of ``node``'s expressions with two operations or more."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.expr) and sum(isinstance(n, _OPS) for n in ast.walk(sub)) >= 2:
            shape = _norm(ast.unparse(_Shape().visit(copy.deepcopy(sub))))
            if len(shape) >= 12:
                yield shape


def _statements(source: str, blocks: list[Block]) -> Iterator[tuple[ast.stmt, int]]:
    """The simple statements inside ``blocks`` of ``source``."""
    tree = ast.parse(source)
    for b in blocks:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.stmt)
                and getattr(node, "body", None) is None
                and b.begin < node.lineno
                and (node.end_lineno or node.lineno) < b.end
            ):
                yield node, node.lineno


def _snippets(text: str) -> Iterator[ast.AST]:
    """The code a comment or docstring shows: ``inline`` spans, lines, literal blocks."""
    pieces = re.findall(r"``(.+?)``", text, re.DOTALL)
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        pieces += [line, *re.split(r"\s(?:=|is|equals|gives|returns?|for|if|when)\s", line)]
    for piece in pieces:
        # Prose names things as code cannot: ``x.view(B, in, 1)``.
        named = re.sub(
            r"\b(in|is|as|from|for|if|or|and|not|with|lambda)\b(?=\s*[,)])", r"\1_", piece
        )
        for text, mode in ((piece, "eval"), (piece, "exec"), (named, "eval")):
            try:
                yield ast.parse(text, mode=mode)
                break
            except SyntaxError:
                continue


def _prose(source: str) -> list[tuple[str, int]]:
    """A source's comments and string constants (docstrings): what a student reads."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.string, tok.start[0]))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.value, node.lineno))
    return out


def leak_problems(layer: Layer, cal: Calendar, starter: Path) -> list[str]:
    """A solution statement or formula in the starter's comments or docstrings.

    A statement of a solution block (``acc = fn(acc, x)``, blanks aside) found in what a
    student reads about the stubs, or a formula of two operations or more with the shape
    of one of the solution's (:class:`_Shape`: the same operations and methods, whatever
    the names). Short ones (``x * y``, which a docstring may state as the specification)
    are not compared. The starter's code outside the blocks may share them (a helper).
    """
    statements: dict[str, str] = {}
    shapes: dict[str, str] = {}
    for path, bl in [*scan_blocks(layer).items(), *script_blocks(layer, cal).items()]:
        where = path.relative_to(REPO).as_posix()
        for node, line in _statements(path.read_text(encoding="utf-8"), bl):
            text = ast.unparse(node)
            ops = sum(isinstance(n, _OPS) for n in ast.walk(node))
            if len(_norm(text)) >= 12 and ops >= (2 if isinstance(node, ast.Expr) else 1):
                statements.setdefault(_norm(text), f"`{text}` ({where}:{line})")
            for shape in _shapes(node):
                shapes.setdefault(shape, f"`{ast.unparse(node)}` ({where}:{line})")
    problems: dict[str, None] = {}
    # The package, the training scripts, and the scripts at the root (the launchers,
    # which_layers.py, conftest.py).
    files = [
        *(starter / "src").rglob("*.py"),
        *(starter / "mt_examples").glob("*.py"),
        *starter.glob("*.py"),
    ]
    for path in sorted(files):
        rel = path.relative_to(starter)
        for text, line in _prose(path.read_text(encoding="utf-8")):
            said = _norm(text)
            found = [what for key, what in statements.items() if key in said]
            found += [
                shapes[shape]
                for snippet in _snippets(text)
                for shape in _shapes(snippet)
                if shape in shapes
            ]
            for what in dict.fromkeys(found):
                problems[f"{rel}:{line} hands out the solution: it states {what}"] = None
    return list(problems)
