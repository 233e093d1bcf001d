"""Solution blocks: find the ``# BEGIN SOLUTION taskX_Y`` ... ``# END SOLUTION`` comments.

The markers are found with :mod:`tokenize` (so a marker inside a string is not one) and
checked with :mod:`ast`: a block holds whole statements, all inside one function, at the
indentation of its ``BEGIN`` comment. :func:`render` turns a source into a student starter
by replacing each block with ``raise NotImplementedError("Task X.Y: ...")``, or keeps the
code of the tasks it is told to keep (without the marker lines).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

__all__ = [
    "Block",
    "MarkerError",
    "find_blocks",
    "function_spans",
    "qualnames",
    "render",
    "task_number",
]

_BEGIN = re.compile(r"#\s*BEGIN SOLUTION\s+(?P<task>task\d+_\d+)(?:\s+(?P<text>\S.*?))?\s*$")
_END = re.compile(r"#\s*END SOLUTION\s*$")
_ANY = re.compile(r"#\s*(BEGIN|END)\s+SOLUTION\b")


class MarkerError(ValueError):
    """A solution marker is malformed, unpaired or in a place it cannot be replaced."""


@dataclass(frozen=True)
class Block:
    """One solution block of a source file.

    Attributes:
        task: the course task id, as the pytest marker (``task0_1``).
        begin: line number (1-based) of the ``BEGIN`` comment.
        end: line number of the ``END`` comment.
        indent: the indentation of both comments and of the replacement ``raise``.
        message: what the starter's ``NotImplementedError`` says.
    """

    task: str
    begin: int
    end: int
    indent: str
    message: str


def task_number(task: str) -> str:
    """Return the course's name of a task id: ``task2_3`` -> ``2.3``."""
    return task.removeprefix("task").replace("_", ".")


def qualnames(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Every function of ``tree`` with its dotted name (``Module.train``, ``map.apply``)."""
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.append((child, name))
                stack.append((child, name + "."))
            else:
                stack.append((child, prefix))
    return out


def _compound(node: ast.stmt) -> bool:
    return isinstance(getattr(node, "body", None), list)


def find_blocks(source: str, filename: str = "<source>") -> list[Block]:
    """Return the solution blocks of ``source`` in file order.

    Raises:
        MarkerError: naming the file and line of a malformed, unpaired or nested marker,
            or of a block that is empty, cuts a statement, or is not inside a function.
    """
    marks: list[tuple[str, int, str, re.Match[str]]] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT or not _ANY.match(tok.string):
            continue
        line = tok.start[0]
        where = f"{filename}:{line}"
        if tok.line.strip() != tok.string.strip():
            raise MarkerError(f"{where}: a solution marker must be alone on its line")
        m = _BEGIN.match(tok.string) or _END.match(tok.string)
        if m is None:
            raise MarkerError(
                f"{where}: malformed marker {tok.string!r}; write "
                "'# BEGIN SOLUTION taskX_Y' or '# END SOLUTION'"
            )
        kind = "begin" if m.re is _BEGIN else "end"
        marks.append((kind, line, tok.line[: tok.start[1]], m))

    pairs: list[tuple[int, int, str, re.Match[str]]] = []
    open_mark: tuple[int, str, re.Match[str]] | None = None
    for kind, line, indent, m in marks:
        if kind == "begin":
            if open_mark is not None:
                raise MarkerError(
                    f"{filename}:{line}: BEGIN SOLUTION inside the block opened at line "
                    f"{open_mark[0]} (blocks do not nest)"
                )
            open_mark = (line, indent, m)
        else:
            if open_mark is None:
                raise MarkerError(f"{filename}:{line}: END SOLUTION without a BEGIN")
            if indent != open_mark[1]:
                raise MarkerError(
                    f"{filename}:{line}: END SOLUTION is not indented like its BEGIN at line "
                    f"{open_mark[0]}"
                )
            pairs.append((open_mark[0], line, open_mark[1], open_mark[2]))
            open_mark = None
    if open_mark is not None:
        raise MarkerError(f"{filename}:{open_mark[0]}: BEGIN SOLUTION without an END")

    if not pairs:
        return []
    tree = ast.parse(source, filename)
    functions = qualnames(tree)
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    lines = source.splitlines()
    blocks = []
    for begin, end, indent, m in pairs:
        where = f"{filename}:{begin}"
        inside = [s for s in statements if begin < s.lineno < end]
        if not inside:
            raise MarkerError(f"{where}: the solution block holds no statement")
        for s in statements:
            end_line = s.end_lineno or s.lineno
            starts_in, ends_in = begin < s.lineno < end, begin < end_line < end
            # A function or loop may end inside the block (the block is its tail).
            if (starts_in and not ends_in) or (ends_in and not starts_in and not _compound(s)):
                raise MarkerError(f"{where}: the block cuts the statement at line {s.lineno}")
        top = [s for s in inside if s.col_offset == len(indent)]
        if not top or top[0].lineno != min(s.lineno for s in inside):
            raise MarkerError(f"{where}: the block's code is not indented like its markers")
        covered = {n for s in top for n in range(s.lineno, (s.end_lineno or s.lineno) + 1)}
        for n in range(begin + 1, end):
            text = lines[n - 1].strip()
            if n not in covered and text and not text.startswith("#"):
                raise MarkerError(f"{where}: line {n} is not a whole statement of the block")
        owners = [
            (fn, name)
            for fn, name in functions
            if fn.body[0].lineno <= top[0].lineno and (fn.end_lineno or 0) >= top[-1].lineno
        ]
        if not owners:
            raise MarkerError(f"{where}: a solution block must be inside a function body")
        _, qualname = max(owners, key=lambda pair: pair[0].lineno)
        test = qualname.rpartition(".")[2].startswith("test_")
        text = m.group("text") or ("write this test" if test else f"implement {qualname}")
        message = f"Task {task_number(m.group('task'))}: {text}"
        blocks.append(Block(m.group("task"), begin, end, indent, message))
    return blocks


def render(source: str, blocks: list[Block], keep: frozenset[str] = frozenset()) -> str:
    """Return ``source`` with every block replaced by a ``raise NotImplementedError``.

    Blocks of the tasks in ``keep`` keep their code and lose only the two marker lines.
    The result is checked to parse.
    """
    lines = source.splitlines(keepends=True)
    for block in sorted(blocks, key=lambda b: b.begin, reverse=True):
        if block.task in keep:
            del lines[block.end - 1]
            del lines[block.begin - 1]
        else:
            message = block.message.replace("\\", "\\\\").replace('"', '\\"')
            stub = f'{block.indent}raise NotImplementedError("{message}")\n'
            lines[block.begin - 1 : block.end] = [stub]
    out = "".join(lines)
    ast.parse(out)
    return out


def function_spans(source: str) -> dict[str, tuple[int, int]]:
    """Every function of ``source`` by dotted name (``Module.train``): its first and last line.

    The first line is that of its first decorator, if any.
    """
    spans: dict[str, tuple[int, int]] = {}
    for fn, name in qualnames(ast.parse(source)):
        first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        spans[name] = (first, fn.end_lineno or fn.lineno)
    return spans
