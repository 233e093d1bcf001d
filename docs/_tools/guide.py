"""Build-time helpers of the course guide: what the pages print about the course.

The pages call these from hidden ``markdown-exec`` blocks, so a task's card (its points,
marker, files and the functions to write) is read from ``course.toml`` and from the code
when the site is built, never typed by hand. The functions are shown by their signature
and docstring only: the body of a function that holds a solution block is never read
into the page (``stub``). The tests of the guide (``tests/test_docs_*.py``) import this
module too.
"""

from __future__ import annotations

import ast
import copy
import os
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root (this file is ``docs/_tools/guide.py``)."""

sys.path.insert(0, str(ROOT / "tools" / "course"))
from mtcourse import markers  # noqa: E402  (the course tool's marker finder, as `assign`'s)

LAYERS = ("operators", "autodiff", "tensor", "fast", "cuda", "nn")
"""The six course layers, in course order (``docs/modules/<layer>.md``)."""

MODULE_NUMBER = {
    "operators": "0",
    "autodiff": "1",
    "tensor": "2",
    "fast": "3",
    "cuda": "3",
    "nn": "4",
}

WEEK_ENV = "MINITORCH_GUIDE_WEEK"
"""Set to a week of ``course.toml`` to build the guide as of that week."""


def course() -> dict:
    """Return ``course.toml`` as a dict."""
    with open(ROOT / "course.toml", "rb") as f:
        return tomllib.load(f)


@dataclass(frozen=True)
class Task:
    """One graded task of ``course.toml``."""

    task: str
    layer: str
    title: str
    points: int

    @property
    def number(self) -> str:
        """The course's name, ``2.3`` for ``task2_3``."""
        return markers.task_number(self.task)


def tasks(layer: str | None = None) -> list[Task]:
    """Every graded task of ``course.toml`` (of one layer), in course order."""
    out = []
    for name, spec in course()["layers"].items():
        if layer is not None and name != layer:
            continue
        for task, info in spec.get("tasks", {}).items():
            out.append(Task(task, name, info["title"], int(info["points"])))
    return sorted(out, key=lambda t: tuple(int(x) for x in t.number.split(".")))


def opened_layers(week: int | None) -> list[str]:
    """The layers whose starters have opened by ``week`` (every layer for ``None``)."""
    if week is None:
        return list(LAYERS)
    weeks = course()["weeks"]
    known = [w["week"] for w in weeks]
    if week not in known:
        raise ValueError(f"week {week} is not in course.toml (weeks: {known})")
    opened = {layer for w in weeks if w["week"] <= week for layer in w["starters"]}
    return [layer for layer in LAYERS if layer in opened]


def guide_week() -> int | None:
    """The week the guide is built as of (``MINITORCH_GUIDE_WEEK``), or ``None``: all."""
    value = os.environ.get(WEEK_ENV, "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{WEEK_ENV}={value!r} is not a week number") from None


def source_files() -> list[Path]:
    """Every file that may hold a solution block.

    The layers' sources, the training scripts, and the tests a test-writing task hands out.
    """
    files = sorted((ROOT / "packages").glob("mt-*/src/minitorch/**/*.py"))
    files += sorted((ROOT / "examples" / "mt_examples").glob("*.py"))  # the [scripts]
    files += sorted((ROOT / "packages").glob("mt-*/tests/test_*.py"))
    return files


def _display_path(path: Path) -> str:
    rel = path.relative_to(ROOT).as_posix()
    if rel.startswith("packages/") and "/src/" in rel:
        return "src/" + rel.split("/src/", 1)[1]
    if rel.startswith("packages/"):
        return "tests/" + rel.split("/tests/", 1)[1]
    return rel.removeprefix("examples/")


@dataclass(frozen=True)
class Exercise:
    """A function a student writes: where it is and its signature and docstring."""

    task: str
    file: str
    qualname: str
    stub: str


def _docstring_only(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body: list[ast.stmt] = []
    if ast.get_docstring(node, clean=False) is not None:
        body.append(node.body[0])
    return body


def stub(
    node: ast.FunctionDef | ast.AsyncFunctionDef, path: list[ast.AST]
) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """Return a copy of ``node`` with only its docstring and ``...`` for a body.

    ``path`` lists the functions nested in ``node`` down to the one holding the block:
    each keeps its own signature and docstring, so a kernel built by a factory is shown
    inside the factory's signature. No other statement of any body is kept.
    """
    new = copy.copy(node)
    body = _docstring_only(node)
    if path:
        body.append(stub(path[0], path[1:]))  # type: ignore[arg-type]
    else:
        body.append(ast.Expr(ast.Constant(...)))
    new.body = body
    return new


def exercises(task: str) -> list[Exercise]:
    """The functions holding ``task``'s solution blocks, in file order, each once."""
    out: list[Exercise] = []
    seen: set[tuple[str, str]] = set()
    for path in source_files():
        source = path.read_text(encoding="utf-8")
        if "BEGIN SOLUTION" not in source:
            continue
        # A training script's blocks name the first task of its [scripts] entry and belong
        # to the others too (train_tensor.py: task 2.5, and task 3.5 on the fast backend).
        names = {task, *_script_aliases(path, task)}
        blocks = [b for b in markers.find_blocks(source, str(path)) if b.task in names]
        if not blocks:
            continue
        tree = ast.parse(source)
        functions = markers.qualnames(tree)
        for block in blocks:
            inside = [(f, q) for f, q in functions if f.lineno <= block.begin <= f.end_lineno]
            # Outermost first: a kernel defined in a factory is shown inside the factory.
            inside.sort(key=lambda fq: fq[0].lineno)
            qualname = inside[-1][1]
            if (str(path), qualname) in seen:
                continue
            seen.add((str(path), qualname))
            top_level = [(f, q) for f, q in inside if "." not in q or _is_method(q, tree)]
            outer = top_level[0][0] if top_level else inside[0][0]
            chain = [f for f, _ in inside if f is not outer and f.lineno > outer.lineno]
            text = ast.unparse(stub(outer, chain))
            out.append(Exercise(task, _display_path(path), qualname, text))
    return out


def _script_aliases(path: Path, task: str) -> list[str]:
    """The task a training script's markers name when ``task`` is handed out by it too."""
    rel = path.relative_to(ROOT).as_posix()
    scripts = course().get("scripts", {})
    listed = scripts.get(rel, [])
    return [listed[0]] if task in listed[1:] else []


def _is_method(qualname: str, tree: ast.Module) -> bool:
    """True for ``Class.method`` where ``Class`` is a top-level class of ``tree``."""
    head, _, rest = qualname.partition(".")
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    return head in classes and "." not in rest


def task_card(task: str) -> str:
    """The markdown a task's section opens with: points, marker, files and functions."""
    found = [t for t in tasks() if t.task == task]
    if not found:
        raise ValueError(f"{task} is not a graded task of course.toml")
    info = found[0]
    items = exercises(task)
    if not items:
        raise ValueError(f"{task} has no solution block in the sources")
    files = sorted({e.file for e in items})
    graded = training_note(info)
    if graded and task == "task0_5":  # nothing is trained: its export is graded
        run = f"`python {Path(files[0]).name} --app` (the page), graded by its export"
    elif graded:
        run = f"`python {Path(files[0]).name} --help` (the script), graded by training"
    else:
        run = f"`pytest -m {task}`"
    lines = [
        '<div class="task-card" markdown>',
        "",
        "| Points | Marker | Run | Files |",
        "| --- | --- | --- | --- |",
        f"| **{info.points}** | `{task}` | {run} | {'<br>'.join(f'`{f}`' for f in files)} |",
        "",
        f"To write: {', '.join(f'`{e.qualname}`' for e in items)}.",
        "",
        "</div>",
        "",
    ]
    if graded:
        lines += ['!!! note "How it is graded"', "", *("    " + x for x in graded.splitlines()), ""]
    # The functions' signatures and docstrings, in a block whose code wraps its long lines
    # (docs/stylesheets/guide.css) instead of cutting them at the page's right edge.
    lines += ['<div class="task-stubs" markdown>', ""]
    for e in items:
        lines += [f"`{e.file}` · `{e.qualname}`", "", "```python", e.stub, "```", ""]
    lines += ["</div>", ""]
    return "\n".join(lines)


def training_note(info: Task) -> str:
    """How a training task is graded: its training tests' docstring (empty for others)."""
    folder = ROOT / "tools" / "course" / "training" / info.layer / "tests"
    for path in sorted(folder.glob("test_*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if doc.startswith(f"Task {info.number} "):
            return doc
    return ""


def points_table(base: str = "") -> str:
    """A markdown table of every graded task with its points (of the opened layers).

    ``base`` as for :func:`layer_table`.
    """
    opened = set(opened_layers(guide_week()))
    lines = ["| Module | Task | Marker | Points |", "| --- | --- | --- | --- |"]
    for t in tasks():
        if t.layer not in opened:
            continue
        link = f"[{t.number}: {t.title}]({base}modules/{t.layer}/#{t.task})"
        lines.append(f"| {MODULE_NUMBER[t.layer]} | {link} | `{t.task}` | {t.points} |")
    return "\n".join(lines)


PACKAGE_SUMMARY = {
    "operators": "scalar math, functional helpers, Module/Parameter, toy datasets",
    "autodiff": "central difference, Scalar, backpropagation, optimizers",
    "tensor": "strided tensors, broadcasting, the backend protocol, tensor autodiff",
    "fast": "the parallel CPU backend (Numba)",
    "cuda": "the CUDA backend (Numba CUDA; the simulator runs it without a GPU)",
    "nn": "convolution, pooling, softmax, dropout, layers, MNIST and SST-2",
}


def layer_table(base: str = "") -> str:
    """A markdown table of the layers (opened by the guide's week), linked to their pages.

    ``base`` leads from the calling page's URL to the site's root (``../`` from
    ``students/``): generated markdown is not rewritten by MkDocs, so links are URLs.
    """
    opened = set(opened_layers(guide_week()))
    lines = ["| Module | Package | Import | What it adds |", "| --- | --- | --- | --- |"]
    for layer in LAYERS:
        name = f"Module {MODULE_NUMBER[layer]}"
        if layer in opened:
            name = f"[{name}]({base}modules/{layer}/)"
        lines.append(f"| {name} | `mt-{layer}` | `minitorch.{layer}` | {PACKAGE_SUMMARY[layer]} |")
    return "\n".join(lines)


def week_table() -> str:
    """The calendar of ``course.toml``: each week, what it opens and its deadline."""
    lines = ["| Week | Opens | Modules | Deadline |", "| --- | --- | --- | --- |"]
    for week in course()["weeks"]:
        opened = ", ".join(f"{MODULE_NUMBER[s]} ({s})" for s in week["starters"]) or "none"
        lines.append(f"| {week['week']} | {week['opens']} | {opened} | {week['deadline']} |")
    return "\n".join(lines)


def api_table(base: str = "") -> str:
    """A markdown table of the API pages (of the opened layers), with their packages."""
    opened = set(opened_layers(guide_week()))
    lines = ["| Package | Import | Module |", "| --- | --- | --- |"]
    lines.append(f"| [mt-root]({base}api/root/) | `minitorch` | the flat names |")
    for layer in LAYERS:
        if layer in opened:
            lines.append(
                f"| [mt-{layer}]({base}api/{layer}/) | `minitorch.{layer}` "
                f"| {MODULE_NUMBER[layer]}: {PACKAGE_SUMMARY[layer]} |"
            )
    return "\n".join(lines)


def own_layers_commands(layer: str) -> str:
    """The commands of ``layer``'s starter that install the student's own earlier layers.

    The same lines as the starter README's section "Use your own earlier layers" (one
    function writes both), as two fenced blocks: the installs, then the way back.
    """
    from mtcourse.config import load_calendar, own_layer_commands

    cal = load_calendar()
    install, restore = own_layer_commands(cal.layer(layer), cal)
    return (
        f"In the `mt-{layer}` starter's folder, with its environment active:\n\n"
        f"```bash\n{install}```\n\n"
        f"and back to the course's solution of those layers:\n\n```bash\n{restore}```\n"
    )
