"""The course guide's code runs: every ``exec="on"`` python block of every page of docs/.

The site runs these blocks when it is built (markdown-exec) and shows their output; this
test runs the same blocks against the installed layers, so a changed API fails here, in
``hatch run test:all``, and not in front of a reader. As markdown-exec does, the blocks of
one ``session`` on a page run in order in one namespace, and a block without a session
runs alone. One test per page and session.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TOOLS = DOCS / "_tools"

# ```python exec="on" ...``` at any indentation (inside an admonition or a tab too).
_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})python\s+(?P<attrs>[^\n]*)$")
_SESSION = re.compile(r'session="(?P<name>[^"]+)"')
_EXEC = re.compile(r'exec="(?:on|1|true|yes)"')


def blocks(page: Path) -> list[tuple[int, str | None, str]]:
    """The ``exec="on"`` python blocks of ``page``: (line, session, code), in page order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[tuple[int, str | None, str]] = []
    i = 0
    while i < len(lines):
        match = _OPEN.match(lines[i])
        if not match or not _EXEC.search(match.group("attrs")):
            i += 1
            continue
        indent, fence = match.group("indent"), match.group("fence")
        session = _SESSION.search(match.group("attrs"))
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != indent + fence:
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
            j += 1
        if j == len(lines):
            raise AssertionError(f"{page}:{i + 1}: the code block is never closed")
        out.append((i + 1, session.group("name") if session else None, "\n".join(body)))
        i = j + 1
    return out


def pages() -> list[Path]:
    """The guide's pages (docs/**/*.md, not docs/_tools or the folder's README)."""
    return [
        p
        for p in sorted(DOCS.rglob("*.md"))
        if "_tools" not in p.parts and p.relative_to(DOCS).as_posix() != "README.md"
    ]


def runs() -> list[tuple[Path, str | None, list[tuple[int, str]]]]:
    """One run per page and session (and per block without a session), in page order."""
    out: list[tuple[Path, str | None, list[tuple[int, str]]]] = []
    for page in pages():
        sessions: dict[str, list[tuple[int, str]]] = {}
        for line, session, code in blocks(page):
            if session is None:
                out.append((page, None, [(line, code)]))
            else:
                sessions.setdefault(session, []).append((line, code))
        out += [(page, name, found) for name, found in sessions.items()]
    return out


def _id(run: tuple[Path, str | None, list[tuple[int, str]]]) -> str:
    page, session, found = run
    rel = page.relative_to(DOCS).as_posix()
    return f"{rel}:{session}" if session else f"{rel}:{found[0][0]}"


RUNS = runs()


def test_the_guide_has_runnable_blocks() -> None:
    """The collector finds the guide's blocks (a changed fence syntax would find none)."""
    assert len(RUNS) >= 20, [_id(r) for r in RUNS]
    assert {p.relative_to(DOCS).as_posix() for p, _, _ in RUNS} >= {
        f"modules/{layer}.md" for layer in ("operators", "autodiff", "tensor", "fast", "cuda", "nn")
    }


def test_the_collector_reads_sessions_in_order(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n"
        '```python exec="on" session="a"\nx = 1\n```\n'
        '!!! note\n    ```python exec="on" source="block" session="a"\n'
        "    print(x + 1)\n    ```\n"
        '```python exec="on"\nprint(2)\n```\n'
        "```python\nnot run\n```\n"
    )
    assert blocks(page) == [(2, "a", "x = 1"), (6, "a", "print(x + 1)"), (9, None, "print(2)")]


@pytest.mark.parametrize("run", RUNS, ids=[_id(r) for r in RUNS])
def test_block_runs(run: tuple[Path, str | None, list[tuple[int, str]]], monkeypatch) -> None:
    page, _, found = run
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(TOOLS))
    namespace: dict[str, object] = {"__name__": "__main__"}
    for line, code in found:
        out = io.StringIO()
        where = f"{page.relative_to(ROOT)}:{line}"
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(code, where, "exec"), namespace)
            except Exception as error:
                pytest.fail(f"the block at {where} raised {error!r}\n--- block ---\n{code}")
