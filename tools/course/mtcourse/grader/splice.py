"""Build the two copies of a layer that grading runs: the grader's and the worker's.

The *units* of a layer are the functions the student writes: for each solution block, the
outermost function holding it (a method, or a module-level function). A unit whose block
sits in a function it defines and returns is a *factory* (a kernel factory): it is routed
when its product is called (see ``route.py``).

- The grader's copy is the course's solution with a routing line after every unit.
- The worker's copy is the starter with every unit the student wrote put in its place
  (found by its dotted name in the student's file, decorators included), the functions
  the student added beside them (module-level functions, methods of the starter's classes)
  and the student's imports, then the same routing lines. Nothing else of the student's
  files is taken: module-level statements, other files, tests and configuration are not.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field

__all__ = [
    "ROUTE_IMPORT",
    "Taken",
    "Unit",
    "find_units",
    "grader_copy",
    "line_map",
    "worker_copy",
]

ROUTE_IMPORT = (
    "from _mtcourse_route import broken as __mtc_broken__, route as __mtc_route__  # noqa\n"
)


@dataclass(frozen=True)
class Unit:
    """A function the student writes: where it is and which task it belongs to."""

    file: str  # relative to the package (``tensor_data.py``) or ``mt_examples/train_x.py``
    qualname: str  # ``TensorData.permute``, ``SimpleOps.map_kernel``, ``make_map``
    task: str
    factory: bool

    @property
    def key(self) -> str:
        """The routing key, ``file:qualname``."""
        return f"{self.file}:{self.qualname}"


Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _paths(tree: ast.Module) -> list[tuple[list[Scope], Scope]]:
    """Every function of ``tree`` with the classes and functions around it (outermost first)."""
    out: list[tuple[list[Scope], Scope]] = []

    def walk(node: ast.AST, path: list[Scope]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((path, child))
                walk(child, [*path, child])
            elif isinstance(child, ast.ClassDef):
                walk(child, [*path, child])
            else:
                walk(child, path)

    walk(tree, [])
    return out


def _unit_of(path: list[Scope], fn: Scope) -> tuple[Scope, str]:
    """The outermost function on ``path`` + ``fn`` and its dotted name."""
    chain = [*path, fn]
    names = []
    for node in chain:
        names.append(node.name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node, ".".join(names)
    raise AssertionError("a function path without a function")


def find_units(source: str, blocks: list[tuple[str, int, int]], file: str) -> list[Unit]:
    """The units holding ``blocks`` (task, begin line, end line) of ``source``.

    Raises:
        ValueError: if a unit holds blocks of two tasks (it could not be graded for each
            task apart from the other).
    """
    tree = ast.parse(source)
    functions = _paths(tree)
    found: dict[str, Unit] = {}
    for task, begin, _end in blocks:
        owners = [
            (path, fn)
            for path, fn in functions
            if fn.lineno <= begin and (fn.end_lineno or fn.lineno) > begin
        ]
        if not owners:
            raise ValueError(f"{file}:{begin}: a solution block outside any function")
        path, inner = max(owners, key=lambda pair: pair[1].lineno)
        unit, qualname = _unit_of(path, inner)
        u = Unit(file, qualname, task, factory=unit is not inner)
        old = found.get(qualname)
        if old is not None and old.task != task:
            raise ValueError(
                f"{file}: {qualname} holds blocks of {old.task} and {task}: a graded "
                "function belongs to one task"
            )
        if old is None or (u.factory and not old.factory):
            found[qualname] = u
    return list(found.values())


def _defs(tree: ast.Module) -> dict[str, Scope]:
    """Every function of ``tree`` whose path holds classes only, by dotted name."""
    return {q: fn for q, (fn, _) in _placed(tree).items()}


def _placed(tree: ast.Module) -> dict[str, tuple[Scope, ast.stmt]]:
    """Every function whose path holds classes only, and the statement that defines it.

    The statement is the function itself, or the ``try`` of a student's guarded function.
    """
    out: dict[str, tuple[Scope, ast.stmt]] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[prefix + node.name] = (node, node)
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.Try):
                for inner in node.body:
                    if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        out[prefix + inner.name] = (inner, node)

    walk(tree.body, "")
    return out


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    out: dict[str, ast.ClassDef] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                out[prefix + node.name] = node
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return out


def _span(node: Scope) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _segment(lines: list[str], node: Scope, indent: str) -> list[str]:
    """The lines of ``node`` (decorators included), moved to ``indent``."""
    a, b = _span(node)
    text = textwrap.dedent("".join(lines[a - 1 : b]))
    return [indent + ln if ln.strip() else ln for ln in text.splitlines(keepends=True)]


def _guarded(lines: list[str], node: Scope, indent: str, qualname: str) -> list[str]:
    """The student's function, defined inside ``try``.

    One that fails to define (its decorator raises) becomes a function raising that
    error, and costs only itself.
    """
    body = _segment(lines, node, indent + "    ")
    return [
        f"{indent}try:\n",
        *body,
        f"{indent}except Exception as __mtc_error:  # noqa: BLE001\n",
        f"{indent}    {node.name} = __mtc_broken__({qualname!r}, __mtc_error)\n",
    ]


def _insert_at(tree: ast.Module) -> int:
    """The line before which the routing import goes: after the docstring and __future__."""
    for i, node in enumerate(tree.body):
        doc = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (doc or future):
            return node.lineno
    return (tree.body[-1].end_lineno or 0) + 1 if tree.body else 1


def _with_routes(source: str, units: list[Unit]) -> str:
    """``source`` with ``name = __mtc_route__(key, name, factory)`` after each unit."""
    tree = ast.parse(source)
    placed = _placed(tree)
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    inserts: list[tuple[int, str]] = []
    for u in units:
        if u.qualname not in placed:
            continue
        node, stmt = placed[u.qualname]
        indent = " " * stmt.col_offset
        name = node.name
        inserts.append(
            (
                stmt.end_lineno or stmt.lineno,
                f"{indent}{name} = __mtc_route__({u.key!r}, {name}, factory={u.factory})\n",
            )
        )
    for at, text in sorted(inserts, reverse=True):
        lines[at:at] = [text]
    top = _insert_at(tree) - 1
    lines[top:top] = [ROUTE_IMPORT]
    out = "".join(lines)
    ast.parse(out)
    return out


def grader_copy(solution: str, units: list[Unit]) -> str:
    """The grader's copy of one file: the solution with every unit routed."""
    return _with_routes(solution, units)


def untouched(starter: str, student: str | None, qualnames: list[str]) -> bool:
    """Whether each function ``qualnames`` of ``student`` is still the starter's stub.

    Compared as syntax trees (formatting and comments do not count; a changed docstring
    or decorator does). A file that is missing or does not parse, and a function the
    student deleted, count as untouched: their functions are graded as the stubs.
    """
    if student is None:
        return True
    try:
        mine = _defs(ast.parse(student))
    except SyntaxError:
        return True
    base = _defs(ast.parse(starter))
    return all(
        q not in mine or q not in base or ast.dump(mine[q]) == ast.dump(base[q]) for q in qualnames
    )


@dataclass
class Taken:
    """What the worker's copy of a file took from the student's, for the record.

    ``lines`` maps the copy's lines back to the student's file: ``(first, last, theirs)``
    for each function taken, its lines ``first..last`` in the copy being the student's from
    line ``theirs`` on (so a traceback can name the student's own line).
    """

    units: list[str]
    missing: list[str]
    helpers: list[str]
    error: str | None = None
    lines: list[tuple[int, int, int]] = field(default_factory=list)


def line_map(copy: str, student: str, qualnames: list[str]) -> list[tuple[int, int, int]]:
    """Where the functions ``qualnames`` of ``student`` are in ``copy`` (see ``Taken``)."""
    mine, theirs = _defs(ast.parse(copy)), _defs(ast.parse(student))
    out = []
    for q in qualnames:
        if q in mine and q in theirs:
            (a, b), (c, d) = _span(mine[q]), _span(theirs[q])
            if b - a == d - c:  # moved whole (re-indenting keeps every line)
                out.append((a, b, c))
    return sorted(out)


def worker_copy(starter: str, student: str | None, units: list[Unit]) -> tuple[str, Taken]:
    """The worker's copy of one file: the starter with the student's units and helpers.

    A student file that does not parse gives the starter as it is (every unit a stub).
    """
    taken = Taken([], [u.qualname for u in units], [])
    if student is None:
        taken.error = "the file is missing"
        return _with_routes(starter, units), taken
    try:
        mine = ast.parse(student)
    except SyntaxError as e:
        taken.error = f"it does not parse (line {e.lineno}: {e.msg})"
        return _with_routes(starter, units), taken
    base = ast.parse(starter)
    base_lines = starter.splitlines(keepends=True)
    mine_lines = student.splitlines(keepends=True)
    if mine_lines and not mine_lines[-1].endswith("\n"):
        mine_lines[-1] += "\n"
    base_defs, mine_defs = _defs(base), _defs(mine)
    wanted = {u.qualname for u in units}
    replace: list[tuple[int, int, list[str]]] = []
    taken.missing = []
    for q in sorted(wanted):
        node, theirs = base_defs.get(q), mine_defs.get(q)
        if node is None:
            continue
        if theirs is None:
            taken.missing.append(q)
            continue
        a, b = _span(node)
        replace.append((a, b, _guarded(mine_lines, theirs, " " * node.col_offset, q)))
        taken.units.append(q)
    # Methods the student added to the starter's classes go at the end of the class.
    classes = _classes(base)
    for q, node in mine_defs.items():
        if q in base_defs or q in wanted:
            continue
        owner = q.rpartition(".")[0]
        if owner and owner in classes:
            cls = classes[owner]
            end = cls.end_lineno or cls.lineno
            indent = " " * cls.body[0].col_offset
            replace.append((end + 1, end, ["\n", *_guarded(mine_lines, node, indent, q)]))
            taken.helpers.append(q)
    lines = list(base_lines)
    for a, b, new in sorted(replace, key=lambda r: (r[0], r[1]), reverse=True):
        lines[a - 1 : b] = new
    # Module-level functions the student added, and the student's imports.
    tail = []
    for q, node in mine_defs.items():
        if "." not in q and q not in base_defs and q not in wanted:
            tail += ["\n", "\n", *_guarded(mine_lines, node, "", q)]
            taken.helpers.append(q)
    imports: list[str] = []
    base_imports = {
        ast.unparse(n) for n in base.body if isinstance(n, (ast.Import, ast.ImportFrom))
    }
    for stmt in mine.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) and ast.unparse(stmt) not in base_imports:
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                continue
            imports.append(f"try:\n    {ast.unparse(stmt)}\nexcept ImportError:\n    pass\n")
    text = "".join(lines).rstrip("\n") + "\n" + "".join(tail)
    if imports:
        tree = ast.parse(text)
        at = max(
            [
                (n.end_lineno or n.lineno)
                for n in tree.body
                if isinstance(n, (ast.Import, ast.ImportFrom))
            ]
            or [_insert_at(tree) - 1]
        )
        all_lines = text.splitlines(keepends=True)
        all_lines[at:at] = imports
        text = "".join(all_lines)
    try:
        out = _with_routes(text, units)
    except SyntaxError as e:  # the student's unit does not fit where it goes
        taken.error = f"its functions do not fit the starter ({e.msg})"
        return _with_routes(starter, units), taken
    taken.lines = line_map(out, student, [*taken.units, *taken.helpers])
    return out, taken
