"""Which minitorch layers in this environment are yours, and do their public tests pass?

Run it from the starter's folder, in the environment you set it up in::

    python which_layers.py              # the table, with each of your layers' tests run
    python which_layers.py --no-tests   # the table alone

One row per installed layer (``minitorch.operators``, ``minitorch.autodiff``, ...), for the
code Python imports:

- ``course``: the course's released solution, the same files as its wheel in ``wheels/``;
- ``yours``: anything else: the package of this starter, your finished starter of an
  earlier week installed in its place (README.md, "Use your own earlier layers"), or any
  other install whose files are not the course's wheel's.

For each of your layers it runs the public tests of the starter it comes from (its
``tests/`` folder, with that starter's settings) and shows how many pass; below the table
it names each failing test. The course's layers have their own tests in their own
starters and are not run here. The exit status is 1 when a test failed, else 0.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

WHEELS = Path(__file__).resolve().parent / "wheels"
SHOWN_FAILURES = 10


@dataclass
class Row:
    """One installed layer: whose it is, where it is imported from, how its tests went."""

    layer: str
    version: str
    yours: bool
    source: str
    project: Path | None  # the starter it comes from (with its tests), if any
    tests: str = ""
    failed: list[str] = field(default_factory=list)


def course_wheel(layer: str, distribution: str) -> tuple[Path, dict[str, bytes]] | None:
    """The course's wheel of ``distribution`` in ``wheels/`` and its ``minitorch/<layer>/``."""
    prefix = f"minitorch/{layer}/"
    for wheel in sorted(WHEELS.glob(f"{distribution.replace('-', '_')}-*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            return wheel, {
                name[len(prefix) :]: archive.read(name)
                for name in archive.namelist()
                if name.startswith(prefix) and not name.endswith("/")
            }
    return None


def same_files(folder: Path, files: dict[str, bytes]) -> bool:
    """Whether ``folder`` holds exactly ``files`` (compiled caches aside), byte for byte."""
    present = {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    return present == set(files) and all((folder / n).read_bytes() == b for n, b in files.items())


def shown(path: Path) -> str:
    """``path`` relative to the current folder when that is shorter (``../mt-operators``)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
    return relative if len(relative) < len(str(path)) else str(path)


def installed_layers() -> list[Row]:
    """One row per minitorch layer Python finds, in the order of the layers."""
    import minitorch  # the namespace root (mt-root): it imports no layer

    rows = []
    for layer, distribution in minitorch.LAYERS.items():
        spec = importlib.util.find_spec(f"minitorch.{layer}")
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = Path(next(iter(spec.submodule_search_locations))).resolve()
        try:
            version = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            version = "?"
        course = course_wheel(layer, distribution)
        if course is not None and same_files(folder, course[1]):
            rows.append(Row(layer, version, False, f"wheels/{course[0].name}", None))
            continue
        # A starter's layout: <starter>/src/minitorch/<layer>, its tests in <starter>/tests.
        project = folder.parents[2] if folder.parents[1].name == "src" else None
        if project is not None and not (project / "tests").is_dir():
            project = None
        rows.append(Row(layer, version, True, shown(project or folder), project))
    return rows


def run_tests(row: Row) -> bool:
    """Run the public tests of ``row``'s starter; fill in its summary. True if none failed."""
    if row.project is None:
        row.tests = "no tests beside it"
        return True
    print(f"Running the public tests of minitorch.{row.layer} in {row.source} ...", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE"]
        proc = subprocess.run(
            [*pytest, f"--junitxml={report}"],
            cwd=row.project,
            capture_output=True,
            text=True,
            check=False,
        )
        suites = ET.parse(report).getroot().iter("testsuite") if report.is_file() else []
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for suite in suites:
            for key in counts:
                counts[key] += int(suite.get(key, "0"))
    row.failed = [
        line.split(" - ")[0]
        for line in proc.stdout.splitlines()
        if line.startswith(("FAILED ", "ERROR "))
    ]
    passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    parts = [
        f"{counts['failures']} failed" if counts["failures"] else "",
        f"{counts['errors']} errors" if counts["errors"] else "",
        f"{passed} passed",
        f"{counts['skipped']} skipped" if counts["skipped"] else "",
    ]
    row.tests = ", ".join(p for p in parts if p)
    if proc.returncode not in (0, 1):  # interrupted, a usage error, no tests collected
        row.tests += f" (pytest exited with status {proc.returncode})"
        row.failed = row.failed or proc.stdout.strip().splitlines()[-1:]
        return False
    return proc.returncode == 0


def table(rows: list[Row], with_tests: bool) -> str:
    """The rows as a plain-text table, columns aligned."""
    head = ["Layer", "Version", "Whose", "From"] + (["Public tests"] if with_tests else [])
    body = [
        [f"minitorch.{r.layer}", r.version, "yours" if r.yours else "course", r.source]
        + ([r.tests if r.yours else "not run (the course's)"] if with_tests else [])
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = [head, ["-" * w for w in widths], *body]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def main(argv: list[str] | None = None) -> int:
    """Print the table of the installed layers; return 1 if a test of one of yours failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-tests", action="store_true", help="only say whose each layer is; run no tests"
    )
    args = parser.parse_args(argv)
    try:
        rows = installed_layers()
    except ImportError:
        print("no minitorch here: set up this starter first (see README.md)", file=sys.stderr)
        return 2
    ok = True
    if not args.no_tests:
        for row in rows:
            if row.yours:
                ok = run_tests(row) and ok
    print()
    print(table(rows, not args.no_tests))
    for row in rows:
        if row.failed:
            print(f"\nFailing in minitorch.{row.layer} (run `pytest` in {row.source} to see why):")
            print("\n".join(f"  {name}" for name in row.failed[:SHOWN_FAILURES]))
            if len(row.failed) > SHOWN_FAILURES:
                print(f"  ... and {len(row.failed) - SHOWN_FAILURES} more")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
