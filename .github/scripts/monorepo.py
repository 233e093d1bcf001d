"""Facts about the MiniTorch monorepo for CI: its packages, their layering, what to test.

Every package is a directory ``packages/<dir>/`` with a ``pyproject.toml``; a dependency
named ``mt-*`` is a sibling package (an edge of the layer graph), anything else is
third-party. The list of packages is read from ``packages/*/pyproject.toml`` each time.

Commands (run from anywhere; paths are relative to the repository root)::

    # CI matrix of the packages a change affects (changed paths one a line, from a file or
    # from stdin with "-"), or of every package with --all.
    python .github/scripts/monorepo.py matrix --changed-files changed.txt
    python .github/scripts/monorepo.py matrix --all --python 3.10,3.13

    # Release: check a tag mt-<x>-vA.B.C against that package's __about__.py, then check
    # that a dist/ folder holds exactly that package's sdist and wheel.
    python .github/scripts/monorepo.py release-tag mt-autodiff-v0.1.0
    python .github/scripts/monorepo.py check-dists dist mt-autodiff 0.1.0

``--github-output FILE`` (for ``$GITHUB_OUTPUT``) also writes the results as step outputs.
Needs ``packaging`` (and ``tomli`` before Python 3.11).
"""

from __future__ import annotations

import argparse
import graphlib
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[2]
PYTHON_VERSIONS = ("3.10", "3.11", "3.12", "3.13")
"""Python versions CI tests every package on (filtered by each ``requires-python``)."""
ROOT_TRIGGERS = ("hatch.toml", "pyproject.toml", "conftest.py", ".github/", "tests/")
"""Paths whose change re-tests every package (a trailing ``/`` means a whole folder)."""
SIBLING_PREFIX = "mt-"
CUDA_SIMULATOR_DEPENDENCIES = frozenset({"numba-cuda"})
"""Third-party requirements whose tests run on Numba's CUDA simulator in CI (no GPU)."""
_VERSION_ASSIGNMENT = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)
_TAG = re.compile(r"^(?P<package>mt-[a-z0-9-]+?)-v(?P<version>[0-9][0-9a-z.]*)$")


class RepoError(Exception):
    """The repository layout, a package's metadata, a tag or a dist folder is wrong."""


@dataclass(frozen=True)
class Package:
    """One package under ``packages/``, as its ``pyproject.toml`` declares it.

    ``requirements`` maps ``""`` to ``[project].dependencies`` and each extra's name to
    its optional dependencies.
    """

    name: str
    path: PurePosixPath
    version: str
    requires_python: SpecifierSet
    requirements: Mapping[str, tuple[Requirement, ...]]

    def dependencies(self, extra: str | None = "", *, siblings: bool) -> set[str]:
        """Names of the siblings (or third-party) required (``""``), by an extra, or by all."""
        groups = self.requirements.values() if extra is None else [self.requirements[extra]]
        names = {canonicalize_name(r.name) for group in groups for r in group}
        return {n for n in names if n.startswith(SIBLING_PREFIX) == siblings}

    @property
    def sibling_extras(self) -> list[str]:
        """The extras that add a sibling package (e.g. ``cuda`` of mt-nn)."""
        return sorted(e for e in self.requirements if e and self.dependencies(e, siblings=True))

    def tested_with(self) -> set[str]:
        """Direct siblings CI installs it with: the required ones and its sibling extras'."""
        extras = ["", *self.sibling_extras]
        return set().union(*(self.dependencies(e, siblings=True) for e in extras))


def _read_package(pyproject: Path, root: Path) -> Package:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        project = data["project"]
        about = pyproject.parent / data["tool"]["hatch"]["version"]["path"]
        version = _VERSION_ASSIGNMENT.search(about.read_text(encoding="utf-8"))
        groups = {"": project.get("dependencies", []), **project.get("optional-dependencies", {})}
        package = Package(
            name=canonicalize_name(project["name"]),
            path=PurePosixPath(pyproject.parent.relative_to(root).as_posix()),
            version=version.group(1) if version else "",
            requires_python=SpecifierSet(project.get("requires-python", "")),
            requirements={k: tuple(map(Requirement, v)) for k, v in sorted(groups.items())},
        )
    except (tomllib.TOMLDecodeError, KeyError, TypeError, OSError, ValueError) as error:
        raise RepoError(
            f"{pyproject}: needs a [project] name, valid requirements and a "
            f"[tool.hatch.version] path to a readable __about__.py ({type(error).__name__}: "
            f"{error})"
        ) from error
    if not version:
        raise RepoError(f'{about} has no line __version__ = "A.B.C"')
    return package


def load_packages(root: Path = REPO_ROOT) -> dict[str, Package]:
    """Read every ``packages/*/pyproject.toml`` under ``root``: name -> Package, by name.

    Raises:
        RepoError: on unreadable metadata, two packages with one name, a dependency named
            ``mt-*`` that is not a package here, or a cycle of sibling dependencies.
    """
    packages: dict[str, Package] = {}
    for pyproject in sorted((root / "packages").glob("*/pyproject.toml")):
        package = _read_package(pyproject, root)
        if package.name in packages:
            raise RepoError(f"two packages are named {package.name}: {package.path} too")
        packages[package.name] = package
    for package in packages.values():
        unknown = package.dependencies(None, siblings=True) - set(packages)
        if unknown:
            raise RepoError(
                f"{package.path}/pyproject.toml requires {sorted(unknown)}, not a package "
                f"under packages/ (known: {', '.join(packages)})"
            )
    topological_order(packages)  # reject cycles early, with the cycle named
    return dict(sorted(packages.items()))


def topological_order(packages: Mapping[str, Package]) -> list[str]:
    """Package names, each after the siblings it depends on (extras too); ties by name."""
    graph = {n: p.dependencies(None, siblings=True) for n, p in packages.items()}
    sorter = graphlib.TopologicalSorter(graph)
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        cycle = " -> ".join(reversed(error.args[1]))
        raise RepoError(f"sibling dependencies form a cycle: {cycle}") from error
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order.extend(ready)
        sorter.done(*ready)
    return order


def dependency_closure(
    packages: Mapping[str, Package], names: Iterable[str], *, optional: bool = False
) -> set[str]:
    """``names`` and every sibling they depend on, transitively (through extras if ``optional``)."""
    seen: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name not in packages:
            raise RepoError(f"unknown package {name!r} (known: {', '.join(sorted(packages))})")
        if name not in seen:
            seen.add(name)
            stack.extend(packages[name].dependencies(None if optional else "", siblings=True))
    return seen


def affected_packages(packages: Mapping[str, Package], changed: Iterable[str]) -> set[str]:
    """The packages to re-test after a change to the ``changed`` paths.

    A path inside a package re-tests it and every package that depends on it (through an
    extra too). A root trigger, or a path under ``packages/`` that belongs to no package (a
    package being added or removed), re-tests everything; other paths re-test nothing.
    """
    direct: set[str] = set()
    for raw_path in changed:
        path = raw_path.strip().removeprefix("./")
        if any(path.startswith(t) if t.endswith("/") else path == t for t in ROOT_TRIGGERS):
            return set(packages)
        if path.startswith("packages/"):
            owner = {n for n, p in packages.items() if path.startswith(f"{p.path}/")}
            if not owner:
                return set(packages)
            direct |= owner
    return {n for n in packages if dependency_closure(packages, [n], optional=True) & direct}


def build_matrix(
    packages: Mapping[str, Package], names: Iterable[str], pythons: Sequence[str] = PYTHON_VERSIONS
) -> dict[str, list[dict[str, str]]]:
    """A GitHub Actions matrix ``{"include": [...]}`` for ``names`` x supported ``pythons``.

    Each entry, lowest layer first, has ``package``, ``path``, ``python``, ``install`` (the
    pip arguments: the package with its sibling-adding extras, e.g. ``./packages/mt-nn[cuda]``,
    then every sibling it needs from its folder, since unreleased siblings are not on PyPI)
    and ``cudasim`` (``"1"`` when a CUDA toolchain is installed: run Numba's simulator).
    """
    selected = set(names)
    include = []
    for name in topological_order(packages):
        if name not in selected:
            continue
        package = packages[name]
        needed = dependency_closure(packages, package.tested_with()) - {name}
        extras = f"[{','.join(package.sibling_extras)}]" if package.sibling_extras else ""
        install = [f"./{package.path}{extras}"]
        install += [f"./{packages[n].path}" for n in topological_order(packages) if n in needed]
        third_party = package.dependencies("", siblings=False).union(
            *(packages[n].dependencies("", siblings=False) for n in needed),
            *(package.dependencies(e, siblings=False) for e in package.sibling_extras),
        )
        for python in pythons:
            if package.requires_python.contains(python):
                entry = {"package": name, "path": str(package.path), "python": python}
                entry["install"] = " ".join(install)
                entry["cudasim"] = "1" if third_party & CUDA_SIMULATOR_DEPENDENCIES else "0"
                include.append(entry)
    return {"include": include}


def parse_release_tag(tag: str) -> tuple[str, str]:
    """Split a release tag ``mt-<x>-vA.B.C`` (a normalized PEP 440 version) into its parts."""
    match = _TAG.match(tag.removeprefix("refs/tags/"))
    try:
        ok = match is not None and str(Version(match["version"])) == match["version"]
    except InvalidVersion:
        ok = False
    if not ok or match is None:
        raise RepoError(
            f"release tag {tag!r} is not of the form mt-<x>-vA.B.C (e.g. mt-autodiff-v0.1.0)"
        )
    return match["package"], match["version"]


def release_info(packages: Mapping[str, Package], tag: str) -> Package:
    """The package a release tag names, after checking the tag's version against it."""
    name, version = parse_release_tag(tag)
    if name not in packages:
        raise RepoError(
            f"release tag {tag!r} names package {name!r}, which is not under packages/ "
            f"(known: {', '.join(sorted(packages))})"
        )
    package = packages[name]
    if Version(version) != Version(package.version):
        raise RepoError(
            f"release tag {tag!r} says version {version} but {package.path} is at version "
            f"{package.version}: bump __about__.py (and CHANGELOG.md) in a commit, then tag "
            "that commit"
        )
    return package


def check_dists(dist_dir: Path, name: str, version: str) -> list[Path]:
    """Check ``dist_dir`` holds exactly one sdist and one wheel of ``name`` ``version``.

    Returns the two files, sdist first; raises RepoError naming what is missing or extra.
    """
    want = (canonicalize_name(name), Version(version))
    sdists, wheels, unexpected = [], [], []
    for path in sorted(p for p in dist_dir.iterdir() if p.is_file()):
        try:
            if path.name.endswith(".whl"):
                found, kind = parse_wheel_filename(path.name)[:2], wheels
            else:
                found, kind = parse_sdist_filename(path.name), sdists
        except (InvalidWheelFilename, InvalidSdistFilename):
            found, kind = None, unexpected
        (kind if found == want else unexpected).append(path)
    problems = [
        f"expected one {what} of {name} {version}, found {len(files)}"
        for what, files in (("sdist", sdists), ("wheel", wheels))
        if len(files) != 1
    ]
    if unexpected:
        problems.append(f"unexpected files: {', '.join(p.name for p in unexpected)}")
    if problems:
        raise RepoError(f"{dist_dir}: " + "; ".join(problems))
    return [sdists[0], wheels[0]]


def _write_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    if path is not None:
        with open(path, "a", encoding="utf-8") as handle:
            handle.writelines(f"{key}={value}\n" for key, value in outputs.items())


def main(argv: Sequence[str] | None = None, root: Path = REPO_ROOT) -> int:
    """Run the command line; return the exit status (errors go to stderr as one line)."""
    parser = argparse.ArgumentParser(description="Facts about the MiniTorch monorepo for CI.")
    commands = parser.add_subparsers(dest="command", required=True)
    matrix = commands.add_parser("matrix", help="print the CI matrix of affected packages")
    selection = matrix.add_mutually_exclusive_group(required=True)
    selection.add_argument("--all", action="store_true", help="test every package")
    selection.add_argument("--changed-files", metavar="FILE", help="one path a line, - for stdin")
    matrix.add_argument("--python", default=",".join(PYTHON_VERSIONS), help="e.g. 3.10,3.13")
    matrix.add_argument("--github-output", metavar="FILE", help="also write matrix= and any=")
    tag = commands.add_parser("release-tag", help="check a release tag, print package facts")
    tag.add_argument("tag", help="e.g. mt-autodiff-v0.1.0 (refs/tags/ is stripped)")
    tag.add_argument("--github-output", metavar="FILE", help="also write package/version/path")
    dists = commands.add_parser("check-dists", help="check a dist folder before publishing")
    dists.add_argument("dist_dir", type=Path)
    dists.add_argument("package")
    dists.add_argument("version")
    args = parser.parse_args(argv)
    try:
        if args.command == "check-dists":
            print(*check_dists(args.dist_dir, args.package, args.version), sep="\n")
            return 0
        packages = load_packages(root)
        if args.command == "release-tag":
            package = release_info(packages, args.tag)
            outputs = {"package": package.name, "version": package.version}
            outputs["path"] = str(package.path)
            print(json.dumps(outputs))
            _write_outputs(args.github_output, outputs)
            return 0
        if args.all:
            names, reason = set(packages), "--all"
        else:
            source = args.changed_files
            text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
            changed = [line for line in text.splitlines() if line.strip()]
            names, reason = affected_packages(packages, changed), f"{len(changed)} changed path(s)"
        result = build_matrix(packages, names, [v.strip() for v in args.python.split(",")])
        order = [n for n in topological_order(packages) if n in names]
        print(f"testing {', '.join(order) or 'nothing'} ({reason})", file=sys.stderr)
        text = json.dumps(result, separators=(",", ":"))
        print(text)
        any_ = "true" if result["include"] else "false"
        _write_outputs(args.github_output, {"matrix": text, "any": any_})
        return 0
    except (RepoError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
