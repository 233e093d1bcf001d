"""MkDocs hooks of the course guide (``hooks:`` in mkdocs.yml).

- The pages' hidden snippets import :mod:`guide` (this folder), so it goes on ``sys.path``.
- ``MINITORCH_GUIDE_WEEK=N`` builds the guide as of week N of ``course.toml``: the module
  and API pages of the layers whose starters have not opened by then are left out of the
  site and the navigation, and links to them become plain text.
- The course tool's manual (``tools/course/README.md``) becomes the page ``staff-manual.md``.
- Formulas (``$...$``, ``$$...$$``, marked by pymdownx.arithmatex) become MathML when the
  site is built, so the pages show them without JavaScript or a CDN.
"""

from __future__ import annotations

import html
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

TOOLS = str(Path(__file__).resolve().parent)
sys.path.insert(0, TOOLS)

import guide  # noqa: E402
from latex2mathml.converter import convert  # noqa: E402

_hidden: set[str] = set()
"""Source paths (``modules/fast.md``) of the pages left out of this build."""


def hidden_pages(week: int | None) -> set[str]:
    """The pages a build as of ``week`` leaves out (none for ``None``)."""
    opened = set(guide.opened_layers(week))
    return {
        f"{folder}/{layer}.md"
        for layer in guide.LAYERS
        if layer not in opened
        for folder in ("modules", "api")
    }


def _prune(nav: Any) -> Any:
    if isinstance(nav, list):
        kept = [_prune(item) for item in nav]
        return [item for item in kept if item not in (None, [], {})]
    if isinstance(nav, dict):
        return {k: v for k, v in ((k, _prune(v)) for k, v in nav.items()) if v not in (None, [])}
    if isinstance(nav, str) and nav in _hidden:
        return None
    return nav


API_SOURCES = guide.ROOT / "build" / "guide-src"
"""Where the packages' sources are linked into one ``minitorch`` tree for the reference."""


def link_sources(where: Path = API_SOURCES) -> Path:
    """Link the seven packages' sources into ``where/minitorch`` (replacing what was there).

    Each wheel ships one subpackage of the shared namespace from its own ``src/``; the
    API reference reads them statically (griffe), which needs one folder holding them all.
    """
    root = where / "minitorch"
    root.mkdir(parents=True, exist_ok=True)
    for src in sorted((guide.ROOT / "packages").glob("mt-*/src/minitorch")):
        for item in src.iterdir():
            if item.name == "__pycache__":
                continue
            link = root / item.name
            if link.is_symlink() or link.is_file():
                link.unlink()
            link.symlink_to(item.resolve(), target_is_directory=item.is_dir())
    return where


# Linked when MkDocs loads this file, which is before any plugin's `config` event: the
# reference's handler (mkdocstrings) keeps only the search paths that exist by then.
link_sources()


def on_config(config: Any) -> Any:
    """Take the site's address from course.toml and prune the nav to the guide's week."""
    if TOOLS not in sys.path:  # MkDocs takes its own entry for the hook's folder back
        sys.path.insert(0, TOOLS)
    url = guide.course().get("guide", {}).get("url")
    if url:
        config["site_url"] = url
    _hidden.clear()
    week = guide.guide_week()
    _hidden.update(hidden_pages(week))
    if week is not None:
        config["nav"] = _prune(config["nav"])
        config["site_name"] = f"{config['site_name']} (week {week})"
    return config


STAFF_MANUAL = guide.ROOT / "tools" / "course" / "README.md"
"""The course tool's manual, which the site shows as ``staff-manual.md``."""


def staff_manual() -> str:
    """The staff manual's page: ``tools/course/README.md``, said to be that file."""
    text = STAFF_MANUAL.read_text(encoding="utf-8")
    title, _, rest = text.partition("\n")
    where = (
        "\n\n!!! note\n    This page is `tools/course/README.md` of the course's repository, "
        "where its paths start; [For course staff](staff.md) is the overview.\n"
    )
    return title + where + rest


def on_files(files: Any, config: Any) -> Any:
    """Leave out the pages of the layers not opened by the guide's week; add the manual."""
    from mkdocs.structure.files import File

    for path in sorted(_hidden):
        found = files.get_file_from_path(path)
        if found is not None:
            files.remove(found)
    files.append(File.generated(config, "staff-manual.md", content=staff_manual()))
    return files


_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s#]+\.md)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Turn links to pages left out of this week's build into plain text."""
    if not _hidden:
        return markdown
    here = posixpath.dirname(page.file.src_uri)

    def unlink(match: re.Match[str]) -> str:
        target = posixpath.normpath(posixpath.join(here, match.group(2)))
        return match.group(1) if target in _hidden else match.group(0)

    return _LINK.sub(unlink, markdown)


_MATH = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<body>.*?)</(?P=tag)>', re.DOTALL)


def mathml(fragment: str) -> str:
    r"""Replace arithmatex's ``\(..\)`` / ``\[..\]`` spans of ``fragment`` by MathML."""

    def one(match: re.Match[str]) -> str:
        tex = html.unescape(match.group("body")).strip()
        block = tex.startswith("\\[")
        tex = tex[2:-2].strip()
        return convert(tex, display="block" if block else "inline")

    return _MATH.sub(one, fragment)


def on_page_content(content: str, page: Any, config: Any, files: Any) -> str:
    """Formulas to MathML."""
    return mathml(content)
