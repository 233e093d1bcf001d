"""The course guide, built: complete, free of solutions, offline, and usable in a browser.

The site is built once for this module (``mkdocs build --strict`` into a temporary folder,
as ``hatch run docs:build`` does), and then:

- every task of ``course.toml`` has its section on its module's page, with its title,
  points, marker and files (a task added to the calendar without a guide section fails);
- the API reference documents every public name (root ``__all__``) of the seven packages;
- no statement of any ``# BEGIN SOLUTION`` block is in the built pages or the search index
  (the rule is in :func:`solution_statements`), and the check is shown to catch one;
- nothing in the site loads from another host when a page is viewed (no web fonts, no CDN
  scripts or styles);
- a build as of week 2 has only the first two modules;
- headless Chromium opens the start page, a module page with a figure and the Tensor API
  page, and the search finds "broadcast" (skipped without a browser, failed in CI).
"""

from __future__ import annotations

import ast
import functools
import html
import http.server
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_tools"))

import guide  # noqa: E402

from mtcourse import markers  # noqa: E402  (tools/course, put on sys.path by guide)


def build(out: Path, week: int | None = None) -> Path:
    """Build the guide strictly into ``out`` (as of ``week``); fail with mkdocs' output."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NUMBA_ENABLE_CUDASIM": "1"}
    env.pop(guide.WEEK_ENV, None)
    if week is not None:
        env[guide.WEEK_ENV] = str(week)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"mkdocs build failed:\n{done.stdout}\n{done.stderr}"
    return out


DOCS_TOOLS = ("mkdocs", "material", "mkdocstrings_handlers.python", "markdown_exec")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole guide, built strictly once for this module."""
    if any(importlib.util.find_spec(name.split(".")[0]) is None for name in DOCS_TOOLS):
        if sys.version_info < (3, 11):
            pytest.skip("the guide's tools (mkdocs-material, mkdocstrings) need Python 3.11+")
        from mt_testing import missing

        missing("the course guide's tools", "hatch env create test (hatch.toml pins them)")
    return build(tmp_path_factory.mktemp("site") / "site")


def page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------
# Every task of course.toml has its section.


def section(text: str, anchor: str) -> str:
    """The HTML of the section under ``<h2 id="anchor">``, up to the next ``<h2``."""
    start = text.find(f'<h2 id="{anchor}"')
    assert start >= 0, f"no section with id {anchor!r}"
    end = text.find("<h2", start + 1)
    return text[start : end if end >= 0 else len(text)]


@pytest.mark.parametrize("task", guide.tasks(), ids=lambda t: t.task)
def test_every_task_has_its_section(site: Path, task: guide.Task) -> None:
    text = section(page(site, f"modules/{task.layer}"), task.task)
    heading = html.unescape(re.sub(r"<[^>]+>", "", text[: text.find("</h2>")]))
    assert heading.startswith(f"Task {task.number}: {task.title}"), heading
    plain = html.unescape(re.sub(r"<[^>]+>", "", text))
    assert f"\n{task.points}\n" in plain or f">{task.points}<" in text, "no points"
    assert task.task in plain, "no marker"
    for exercise in guide.exercises(task.task):
        assert exercise.file in plain, f"{exercise.file} is not named"
        assert exercise.qualname in plain, f"{exercise.qualname} is not named"
    if not guide.training_note(task):
        assert f"pytest -m {task.task}" in plain


def test_a_task_without_a_section_is_caught(site: Path) -> None:
    with pytest.raises(AssertionError, match="no section"):
        section(page(site, "modules/operators"), "task0_9")


# ---------------------------------------------------------------------------------------
# The API reference covers every public name.

SHADOWED = {"tensor": ("tensor",)}
"""Public names that are also the name of a submodule of their package."""

PACKAGES = {"root": "minitorch", **{layer: f"minitorch.{layer}" for layer in guide.LAYERS}}


def public_names(module: str) -> list[str]:
    """The names of the package's root ``__all__`` (read from its source)."""
    layer = module.partition(".")[2]
    folder = f"mt-{layer}/src/minitorch/{layer}" if layer else "mt-root/src/minitorch"
    tree = ast.parse((ROOT / "packages" / folder / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return [n for n in ast.literal_eval(node.value) if n != "__version__"]
    raise AssertionError(f"{module} has no __all__")


@pytest.mark.parametrize("name", PACKAGES)
def test_the_api_reference_documents_every_public_name(site: Path, name: str) -> None:
    text = page(site, f"api/{name}")
    module = PACKAGES[name]
    # A name may be documented where it is defined, when a submodule of the same name
    # shadows it (``minitorch.tensor.tensor``: the factory, and the module of Tensor).
    missing = [
        n
        for n in public_names(module)
        if f'id="{module}.{n}"' not in text
        and not (n in SHADOWED.get(name, ()) and re.search(rf'id="{module}\.\w+\.{n}"', text))
    ]
    assert not missing, f"{module}: not in api/{name}.md: {missing}"


# ---------------------------------------------------------------------------------------
# No solution in the site.

MIN_CHARS = 12
"""A statement shorter than this (without whitespace) is not checked: ``return x * y``."""


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", text)


def given_lines() -> set[str]:
    """Every line a student is given: the starters' code and tests (blocks removed)."""
    lines: set[str] = set()
    for path in [*guide.source_files(), *(ROOT / "packages").glob("mt-*/tests/**/*.py")]:
        source = path.read_text(encoding="utf-8")
        text = markers.render(source, markers.find_blocks(source, str(path)))
        lines.update(_normal(line) for line in text.splitlines())
    return lines


@functools.cache
def solution_statements() -> dict[str, str]:
    """The statements of every solution block, whitespace removed -> where it is.

    What counts: each statement of a block (ast) as its source text; for a compound
    statement (``for``, ``if``, ``with``, ...) its first line. Whitespace is removed, so
    a reformatted copy matches too. Left out, because they would match innocent text or
    are public anyway: statements shorter than ``MIN_CHARS`` characters (``return x * y``,
    ``pass``, ``i += 1``) and statements that are also a line of the code a student is given
    (the starter around the blocks, the public tests: ``out = a.zeros(shape)``).
    """
    given = given_lines()
    out: dict[str, str] = {}
    for path in guide.source_files():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for block in markers.find_blocks(source, str(path)):
            body = "\n".join(lines[block.begin : block.end - 1])
            code = "\n".join(line[len(block.indent) :] for line in body.splitlines())
            for node in ast.walk(ast.parse(code)):
                if not isinstance(node, ast.stmt):
                    continue
                text = ast.get_source_segment(code, node) or ""
                if isinstance(getattr(node, "body", None), list):
                    text = text.splitlines()[0]
                key = _normal(text)
                if len(key) >= MIN_CHARS and key not in given:
                    out.setdefault(key, f"{path.relative_to(ROOT)}:{block.begin} ({block.task})")
    return out


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def text_of(markup: str) -> str:
    """The text of an HTML document, whitespace removed (code split in spans is joined)."""
    parser = _Text()
    parser.feed(markup)
    return _normal("".join(parser.parts))


def leaks(text: str) -> list[str]:
    """The solution statements found in ``text`` (from :func:`text_of`), with their place."""
    return [f"{where}: {key}" for key, where in solution_statements().items() if key in text]


@pytest.mark.parametrize("layer", guide.LAYERS)
def test_the_api_reference_shows_no_attribute_values(site: Path, layer: str) -> None:
    """Signatures and docstrings only: an attribute's heading gives its name (and type), not
    the expression ``__init__`` assigns (it showed ``history = back``)."""
    text = page(site, f"api/{layer}")
    attributes = re.findall(
        r'<div class="doc doc-object doc-attribute">.*?<div class="doc-signature highlight">'
        r"<pre>(.*?)</pre>",
        text,
        flags=re.DOTALL,
    )
    shown = [html.unescape(re.sub(r"<[^>]+>", "", a)).strip() for a in attributes]
    assert shown, f"no attribute in the {layer} reference"
    assert [a for a in shown if "=" in a] == []


def test_task_cards_wrap_their_functions_long_lines(site: Path) -> None:
    """A task's signatures and docstrings wrap at the page's edge (they were cut off)."""
    css = (ROOT / "docs" / "stylesheets" / "guide.css").read_text(encoding="utf-8")
    rule = re.search(r"\.task-stubs pre > code \{([^}]*)\}", css)
    assert rule is not None
    assert "white-space: pre-wrap" in rule.group(1)
    built = (site / "stylesheets" / "guide.css").read_text(encoding="utf-8")
    assert rule.group(0) in built
    for task in guide.tasks():
        text = section(page(site, f"modules/{task.layer}"), task.task)
        stubs = text[text.find('<div class="task-stubs">') :]
        assert '<div class="task-stubs">' in text, task.task
        assert '<div class="highlight"><pre>' in stubs, task.task  # the code is inside


def test_the_rule_finds_statements_of_every_task() -> None:
    tasks = {where.rsplit("(", 1)[1].rstrip(")") for where in solution_statements().values()}
    assert tasks >= {t.task for t in guide.tasks()} - {"task3_5"}  # 3.5 is 2.5's script


def test_the_leak_check_catches_a_leaked_statement() -> None:
    for task in ("task1_4", "task2_2", "task4_1"):
        key = max((k for k, w in solution_statements().items() if w.endswith(f"({task})")), key=len)
        # As a page would show it: highlighted in spans, spaced differently, escaped.
        tokens = re.findall(r"\w+|\S", key)
        leaked = "".join(f'<span class="n">{html.escape(t)}</span> ' for t in tokens)
        markup = f"<html><body><p>Hello</p><pre><code>{leaked}</code></pre></body></html>"
        assert leaks(text_of(markup)) == [f"{solution_statements()[key]}: {key}"], key
    assert not leaks(text_of("<html><body><pre><code>return x</code></pre></body></html>"))


def test_no_solution_statement_is_in_the_site(site: Path) -> None:
    found = []
    for path in sorted(site.rglob("*.html")):
        found += [f"{path.relative_to(site)}: {x}" for x in leaks(text_of(path.read_text()))]
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    for doc in index["docs"]:
        found += [f"search index {doc['location']}: {x}" for x in leaks(text_of(doc["text"]))]
    assert not found, "solution statements in the built site:\n" + "\n".join(found)


# ---------------------------------------------------------------------------------------
# Offline: nothing loads from another host.

_LOADS = re.compile(
    r"""<(?:script|img|iframe|source|video|audio|embed)\b[^>]*\bsrc=["']?(?:https?:)?//"""
    r"""|url\(\s*["']?(?:https?:)?//"""
    r"""|@import\s+["'](?:https?:)?//""",
    re.IGNORECASE,
)
_LINK = re.compile(r"<link\b[^>]*>", re.IGNORECASE)
_REL = re.compile(r"""\brel=["']?([^"'>]+)""", re.IGNORECASE)
_REMOTE_HREF = re.compile(r"""\bhref=["']?(?:https?:)?//""", re.IGNORECASE)
# Links that only name an address (canonical, prev, next, alternate) load nothing.
_LOADING_RELS = {"stylesheet", "preload", "modulepreload", "prefetch", "icon", "manifest"}


def external_loads(text: str) -> list[str]:
    """What in ``text`` (HTML or CSS) would be fetched from another host when viewed."""
    found = [text[m.start() : m.start() + 120] for m in _LOADS.finditer(text)]
    for tag in _LINK.findall(text):
        rel = _REL.search(tag)
        rels = set(rel.group(1).lower().split()) if rel else set()
        if rels & _LOADING_RELS and _REMOTE_HREF.search(tag):
            found.append(tag)
    return found


def test_the_offline_check_finds_a_cdn_script() -> None:
    assert external_loads('<script src="https://cdn.example.org/x.js"></script>')
    assert external_loads("<link rel=stylesheet href='//fonts.googleapis.com/css'>")
    assert not external_loads('<a href="https://pytorch.org">PyTorch</a><script src="a.js">')
    assert not external_loads('<link rel="canonical" href="https://example.org/guide/">')


def test_nothing_loads_from_another_host(site: Path) -> None:
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix in {".html", ".css"}:
            found += [f"{path.relative_to(site)}: {x}" for x in external_loads(path.read_text())]
    assert not found, "\n".join(found)
    assert "fonts.googleapis" not in page(site, "")


# ---------------------------------------------------------------------------------------
# The guide as of a week.


def test_week_two_has_only_the_first_two_modules(site: Path, tmp_path: Path) -> None:
    """The build as of week 2 is strict too: its links to later modules become text."""
    week2 = build(tmp_path / "week2", week=2)
    for layer in guide.LAYERS[:2]:
        assert (week2 / "modules" / layer / "index.html").is_file(), layer
    for layer in guide.LAYERS[2:]:
        assert not (week2 / "modules" / layer).exists(), layer
        assert not (week2 / "api" / layer).exists(), layer
        assert f"modules/{layer}/" not in page(week2, "")
    assert 'href="../tensor/' not in page(week2, "modules/autodiff")
    assert 'href="../tensor/' in page(site, "modules/autodiff")


def test_the_staff_manual_is_a_page_of_the_site_linked_from_the_staff_page(site: Path) -> None:
    """The course tool's manual was only in the repository, named without a link."""
    manual = page(site, "staff-manual")
    anchor = 'id="autograder-the-gradescope-bundle"'
    for needed in ("grade-all", "Uploading it", "threat model", anchor):
        assert needed in manual, needed
    staff = page(site, "staff")
    assert 'href="../staff-manual/"' in staff
    assert "course:grade-all" in staff


def test_the_students_page_says_how_to_carry_your_own_earlier_layers(site: Path) -> None:
    """Only the starter's README and the staff manual said so."""
    text = text_of(section(page(site, "students"), "carrying-your-own-earlier-layers"))
    version = guide.course()["layers"]["operators"]["solution-version"]
    for needed in (
        "python -m pip install --no-deps -e ../mt-operators",
        "python -m pip install --no-deps -e ../mt-autodiff",
        f"--find-links wheels mt-operators=={version}",
        "python which_layers.py",
    ):
        assert _normal(needed) in text, needed  # text_of's text has no whitespace


def test_the_weeks_open_the_layers_of_course_toml() -> None:
    assert guide.opened_layers(1) == ["operators"]
    assert guide.opened_layers(4) == ["operators", "autodiff", "tensor", "fast", "cuda"]
    assert guide.opened_layers(None) == list(guide.LAYERS)
    with pytest.raises(ValueError, match="week 99"):
        guide.opened_layers(99)


def test_the_docs_tools_are_pinned_alike_in_both_environments() -> None:
    from packaging.requirements import Requirement

    hatch = guide.tomllib.loads((ROOT / "hatch.toml").read_text(encoding="utf-8"))

    def pins(requirements: list[str]) -> set[str]:  # name==version, markers left out
        parsed = [Requirement(r) for r in requirements]
        return {f"{r.name}{r.specifier}" for r in parsed if str(r.specifier).startswith("==")}

    docs = pins(hatch["envs"]["docs"]["dependencies"])
    test = pins(hatch["envs"]["test"]["extra-dependencies"])
    pinned = docs
    assert pinned, "the docs environment pins nothing"
    assert pinned <= test, sorted(pinned - test)


# ---------------------------------------------------------------------------------------
# In a real browser.


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


#: The guide's module pages (docs/modules/*.md), the ones with formulas.
MODULE_PAGES = sorted(p.stem for p in (ROOT / "docs" / "modules").glob("*.md") if p.stem != "index")


def test_in_a_browser(served: str) -> None:
    from mt_testing import Browser, find_browser, missing

    found = find_browser()
    if found is None:  # a failure in CI, a skip elsewhere
        missing("Chromium and chromium-driver", "sh examples/app/install-browser.sh")
    assert found is not None
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with Browser(*found) as browser:
        driver = browser.driver
        wait = WebDriverWait(driver, 30)

        driver.get(served)
        assert "MiniTorch" in driver.title
        assert driver.find_element(By.CSS_SELECTOR, "article h1").text

        driver.get(served + "modules/tensor/")
        figures = driver.find_elements(By.CSS_SELECTOR, "article .guide-figure svg")
        assert figures, "no figure on the page"
        assert figures[0].size["width"] > 100, "the figure is not drawn"

        driver.get(served + "api/tensor/")
        wait.until(lambda d: d.find_elements(By.ID, "minitorch.tensor.Tensor"))

        # At a laptop's 1280 px no formula needs a scrollbar of its own (block formulas
        # scroll sideways when wider than the column: ``overflow-x: auto``).
        driver.set_window_size(1280, 900)
        wide = []
        for page in MODULE_PAGES:
            driver.get(served + f"modules/{page}/")
            wide += [
                f"{page}: {w}"
                for w in driver.execute_script(
                    "return [...document.querySelectorAll('article math')]"
                    ".filter(m => m.scrollWidth > m.clientWidth + 1)"
                    ".map(m => m.scrollWidth + ' px in ' + m.clientWidth + ' px: '"
                    " + m.textContent.slice(0, 60))"
                )
            ]
        assert not wide, wide

        driver.get(served)
        box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
        driver.execute_script("arguments[0].focus()", box)
        box.send_keys("broadcast")  # results appear as one types (Enter would open the first)
        hits = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item"))
        assert any("broadcast" in h.text.lower() for h in hits), [h.text for h in hits]
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors


# ---------------------------------------------------------------------------------------
# The READMEs link to the guide.


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_readme_links_to_its_guide_pages(name: str) -> None:
    url = guide.course()["guide"]["url"]
    text = (ROOT / "packages" / f"mt-{name}" / "README.md").read_text(encoding="utf-8")
    flat = re.sub(r"\s+", " ", text)
    assert f"{url}api/{name}/" in flat
    if name != "root":
        assert f"{url}modules/{name}/" in flat


def test_the_root_readme_links_to_the_guide_and_keeps_its_two_commands() -> None:
    url = guide.course()["guide"]["url"]
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"]({url})" in text
    assert "](docs/students.md)" in text
    assert "](docs/modules/index.md)" in text
    check_set_up_and_two_commands(text)


def check_set_up_and_two_commands(text: str) -> None:
    """The set-up installs hatch in an environment of its own (pipx, as hatch's docs), never
    into the system Python; then the two commands, each a line of its own."""
    code = "\n".join(re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL))
    lines = [line for line in code.splitlines() if line and not line.startswith("#")]
    setup, train, test = 'pipx install "hatch>=1.16"', "hatch run train", "hatch run test:all"
    for command in (setup, train, test):
        assert command in lines, lines
    assert lines.index(setup) < lines.index(train) < lines.index(test)
    assert not [line for line in lines if "pip install" in line and "hatch" in line], lines


def test_the_guides_start_page_gives_the_same_set_up_and_two_commands() -> None:
    check_set_up_and_two_commands((ROOT / "docs" / "index.md").read_text(encoding="utf-8"))
