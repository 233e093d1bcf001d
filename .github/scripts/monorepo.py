"""Facts about the MiniTorch monorepo for CI: its packages, their layering, what to test.

Every package is a directory ``packages/<dir>/`` with a ``pyproject.toml``. A dependency
whose name is another package of the repository (a *sibling*) is an edge of the layer
graph; everything else is a third-party requirement. Nothing here hard-codes the list of
packages: it is read from ``packages/*/pyproject.toml`` each time.

Commands (run from anywhere; paths are relative to the repository root)::

    # CI matrix of the packages a change affects (the changed paths come one per line
    # from a file, or from stdin with "-"), or of every package with --all.
    python .github/scripts/monorepo.py matrix --changed-files changed.txt
    python .github/scripts/monorepo.py matrix --all --python 3.10,3.11,3.12,3.13

    # Release: check a tag ``mt-<x>-vA.B.C`` against that package's __about__.py, then
    # check a dist/ folder holds exactly that package's sdist and wheel.
    python .github/scripts/monorepo.py release-tag mt-autodiff-v0.1.0
    python .github/scripts/monorepo.py check-dists dist mt-autodiff 0.1.0

``--github-output FILE`` (for ``$GITHUB_OUTPUT``) also writes the results as step outputs.
Needs Python 3.11+ (``tomllib``) and the standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import tomllib

__all__ = [
    "CUDA_SIMULATOR_DEPENDENCIES",
    "PYTHON_VERSIONS",
    "ROOT_TRIGGERS",
    "SIBLING_PREFIX",
    "Package",
    "RepoError",
    "affected_packages",
    "build_matrix",
    "check_dists",
    "dependency_closure",
    "install_targets",
    "load_packages",
    "main",
    "normalize_name",
    "parse_release_tag",
    "release_info",
    "requirement_name",
    "reverse_closure",
    "supported_pythons",
    "topological_order",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository this script lives in (``.github/scripts/`` is two levels down)."""

PYTHON_VERSIONS = ("3.10", "3.11", "3.12", "3.13")
"""Python versions CI tests every package on (filtered by each ``requires-python``)."""

ROOT_TRIGGERS = ("hatch.toml", "pyproject.toml", "conftest.py", ".github/", "tests/")
"""Paths whose change re-tests every package (a trailing ``/`` means a whole folder)."""

SIBLING_PREFIX = "mt-"
"""Every distribution named ``mt-*`` must be a package of this repository."""

CUDA_SIMULATOR_DEPENDENCIES = frozenset({"numba-cuda"})
"""Third-party requirements whose tests run on Numba's CUDA simulator in CI (no GPU)."""

_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_VERSION_ASSIGNMENT = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)
_TAG = re.compile(
    r"^(?P<package>[a-z0-9][a-z0-9-]*?)"
    r"-v(?P<version>\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?)$"
)
_PYTHON_CLAUSE = re.compile(r"^(>=|<=|==|!=|~=|>|<)\s*(\d+(?:\.\d+)*)(\.\*)?$")


class RepoError(Exception):
    """The repository layout, a package's metadata, a tag or a dist folder is wrong."""


@dataclass(frozen=True)
class Package:
    """One package under ``packages/``, as declared by its ``pyproject.toml``.

    Attributes:
        name: normalized distribution name, e.g. ``mt-autodiff``.
        path: its directory relative to the repository root, e.g. ``packages/mt-autodiff``.
        version: the version in the file named by ``[tool.hatch.version].path``.
        requires_python: the ``requires-python`` specifier ("" if absent).
        siblings: names of the sibling packages in ``[project].dependencies``.
        optional_siblings: extra name -> sibling packages that extra adds.
        third_party: normalized names of the other required dependencies.
        optional_third_party: extra name -> other dependencies that extra adds.
        requirements: the raw requirement strings (required first, then each extra's).
    """

    name: str
    path: PurePosixPath
    version: str
    requires_python: str = ""
    siblings: tuple[str, ...] = ()
    optional_siblings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    third_party: tuple[str, ...] = ()
    optional_third_party: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    requirements: tuple[str, ...] = ()

    @property
    def sibling_extras(self) -> tuple[str, ...]:
        """Names of the extras that add a sibling package (e.g. ``cuda`` of mt-nn)."""
        return tuple(sorted(e for e, names in self.optional_siblings.items() if names))

    def direct_siblings(self, *, optional: bool) -> set[str]:
        """Siblings this package depends on, with those of every extra if ``optional``."""
        names = set(self.siblings)
        if optional:
            for extra in self.optional_siblings.values():
                names.update(extra)
        return names


def normalize_name(name: str) -> str:
    """Return the PEP 503 normalized form of a distribution name (``Mt_Foo`` -> ``mt-foo``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """Return the normalized distribution name a PEP 508 requirement string starts with.

    Raises:
        RepoError: if the string does not start with a distribution name.
    """
    match = _NAME.match(requirement)
    if match is None:
        raise RepoError(f"cannot read a distribution name from requirement {requirement!r}")
    return normalize_name(match.group(1))


def _read_version(package_dir: Path, pyproject: Mapping[str, object]) -> str:
    """Read ``__version__`` from the file ``[tool.hatch.version].path`` names."""
    tool = pyproject.get("tool", {})
    version_path = None
    if isinstance(tool, dict):
        version_path = tool.get("hatch", {}).get("version", {}).get("path")
    if not isinstance(version_path, str):
        raise RepoError(
            f"{package_dir}/pyproject.toml has no [tool.hatch.version] path: the version must "
            "live in one file, src/minitorch/<x>/__about__.py"
        )
    about = package_dir / version_path
    if not about.is_file():
        raise RepoError(f"{about} (named by [tool.hatch.version].path) does not exist")
    match = _VERSION_ASSIGNMENT.search(about.read_text(encoding="utf-8"))
    if match is None:
        raise RepoError(f'{about} has no line __version__ = "A.B.C"')
    return match.group(1)


def _split_requirements(
    requirements: Sequence[str], siblings: set[str], where: str
) -> tuple[list[str], list[str]]:
    """Split requirement strings into sibling names and other (third-party) names."""
    found, others = [], []
    for requirement in requirements:
        dep = requirement_name(requirement)
        if dep in siblings:
            found.append(dep)
        elif dep.startswith(SIBLING_PREFIX):
            raise RepoError(
                f"{where} requires {dep!r}, which is not a package under packages/ "
                f"(known: {', '.join(sorted(siblings))})"
            )
        else:
            others.append(dep)
    return found, others


def load_packages(root: Path = REPO_ROOT) -> dict[str, Package]:
    """Read every ``packages/*/pyproject.toml`` under ``root``.

    Returns:
        Normalized name -> Package, sorted by name.

    Raises:
        RepoError: on a missing or unreadable name or version, two directories declaring the
            same name, or a dependency named ``mt-*`` that is not a package of the repository.
    """
    raw: dict[str, tuple[Path, dict[str, object]]] = {}
    for pyproject_path in sorted((root / "packages").glob("*/pyproject.toml")):
        try:
            data = tomllib.loads(pyproject_path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise RepoError(f"{pyproject_path} is not valid TOML: {error}") from error
        project = data.get("project")
        if not isinstance(project, dict) or not isinstance(project.get("name"), str):
            raise RepoError(f"{pyproject_path} has no [project] name")
        name = normalize_name(project["name"])
        if name in raw:
            raise RepoError(
                f"two packages are named {name}: {raw[name][0].parent} and {pyproject_path.parent}"
            )
        raw[name] = (pyproject_path, data)

    packages: dict[str, Package] = {}
    for name in sorted(raw):
        pyproject_path, data = raw[name]
        project = data["project"]
        assert isinstance(project, dict)  # checked above

        required = list(project.get("dependencies", []))
        where = f"{pyproject_path} [project].dependencies"
        siblings, third_party = _split_requirements(required, set(raw), where)
        optional_siblings: dict[str, tuple[str, ...]] = {}
        optional_third_party: dict[str, tuple[str, ...]] = {}
        all_requirements = list(required)
        for extra, requirements in sorted(project.get("optional-dependencies", {}).items()):
            where = f"{pyproject_path} [project.optional-dependencies].{extra}"
            extra_siblings, extra_others = _split_requirements(requirements, set(raw), where)
            optional_siblings[extra] = tuple(extra_siblings)
            optional_third_party[extra] = tuple(extra_others)
            all_requirements.extend(requirements)
        directory = pyproject_path.parent
        packages[name] = Package(
            name=name,
            path=PurePosixPath(directory.relative_to(root).as_posix()),
            version=_read_version(directory, data),
            requires_python=str(project.get("requires-python", "")),
            siblings=tuple(siblings),
            optional_siblings=optional_siblings,
            third_party=tuple(third_party),
            optional_third_party=optional_third_party,
            requirements=tuple(all_requirements),
        )
    topological_order(packages)  # reject cycles early, with the cycle named
    return packages


def topological_order(packages: Mapping[str, Package]) -> list[str]:
    """Return package names with every package after the siblings it depends on.

    Optional (extra) dependencies count as edges. Ties are broken by name.

    Raises:
        RepoError: if the dependencies form a cycle (the cycle is named).
    """
    order: list[str] = []
    state: dict[str, str] = {}  # name -> "visiting" | "done"

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            cycle = [*path[path.index(name) :], name]
            raise RepoError(f"sibling dependencies form a cycle: {' -> '.join(cycle)}")
        state[name] = "visiting"
        for dep in sorted(packages[name].direct_siblings(optional=True)):
            visit(dep, [*path, name])
        state[name] = "done"
        order.append(name)

    for name in sorted(packages):
        visit(name, [])
    return order


def dependency_closure(
    packages: Mapping[str, Package], names: Iterable[str], *, optional: bool = False
) -> set[str]:
    """Return ``names`` and every sibling they depend on, transitively.

    Args:
        packages: the repository's packages.
        names: where to start.
        optional: also follow the siblings of extras (at every level).
    """
    seen: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        if name not in packages:
            raise RepoError(f"unknown package {name!r} (known: {', '.join(sorted(packages))})")
        seen.add(name)
        stack.extend(packages[name].direct_siblings(optional=optional))
    return seen


def reverse_closure(packages: Mapping[str, Package], names: Iterable[str]) -> set[str]:
    """Return ``names`` and every package that depends on one of them, transitively.

    A dependency through an extra counts: a change to mt-cuda re-tests mt-nn, whose ``cuda``
    extra uses it.
    """
    targets = set(names)
    return {
        name for name in packages if dependency_closure(packages, [name], optional=True) & targets
    }


def _is_root_trigger(path: str) -> bool:
    return any(
        path.startswith(trigger) if trigger.endswith("/") else path == trigger
        for trigger in ROOT_TRIGGERS
    )


def affected_packages(packages: Mapping[str, Package], changed: Iterable[str]) -> set[str]:
    """Return the packages to re-test after a change to the ``changed`` paths.

    A path inside a package re-tests it and every package above it. A path in
    ``ROOT_TRIGGERS`` re-tests everything, and so does a path under ``packages/`` that
    belongs to no package (a package being added or removed). Other paths (examples,
    docs) re-test nothing here.
    """
    direct: set[str] = set()
    for raw_path in changed:
        path = raw_path.strip().removeprefix("./")
        if not path:
            continue
        if _is_root_trigger(path):
            return set(packages)
        if path.startswith("packages/"):
            owner = [p.name for p in packages.values() if path.startswith(f"{p.path}/")]
            if not owner:
                return set(packages)
            direct.update(owner)
    return reverse_closure(packages, direct)


def install_targets(packages: Mapping[str, Package], name: str) -> list[str]:
    """Return the pip arguments that install ``name`` and its siblings from the checkout.

    Every sibling comes from its directory in one pip command, because unreleased
    siblings are not on PyPI. The package is installed with its extras that add a sibling
    (``./packages/mt-nn[cuda]``), so it is tested with the layers it can optionally use;
    those layers' third-party dependencies come from PyPI as usual.
    """
    package = packages[name]
    extras = package.sibling_extras
    needed = dependency_closure(packages, [name])
    for extra in extras:
        needed |= dependency_closure(packages, package.optional_siblings[extra])
    head = f"./{package.path}" + (f"[{','.join(extras)}]" if extras else "")
    rest = [f"./{packages[n].path}" for n in topological_order(packages) if n in needed - {name}]
    return [head, *rest]


def _needs_cuda_simulator(packages: Mapping[str, Package], name: str) -> bool:
    """True if ``name`` is tested with a package that requires a CUDA toolchain."""
    package = packages[name]
    tested_with = dependency_closure(packages, [name])
    for extra in package.sibling_extras:
        tested_with |= dependency_closure(packages, package.optional_siblings[extra])
    third_party = {d for n in tested_with for d in packages[n].third_party}
    for extra in package.sibling_extras:
        third_party.update(package.optional_third_party.get(extra, ()))
    return bool(third_party & CUDA_SIMULATOR_DEPENDENCIES)


def _release_tuple(version: str, where: str) -> tuple[int, ...]:
    if not re.fullmatch(r"\d+(?:\.\d+)*", version):
        raise RepoError(f"unsupported version {version!r} in {where}")
    return tuple(int(part) for part in version.split("."))


def supported_pythons(requires_python: str, candidates: Sequence[str]) -> list[str]:
    """Return the ``candidates`` (``"3.12"``) allowed by a ``requires-python`` specifier.

    Versions are compared at minor-version granularity (``>=3.10.2`` allows ``3.10``),
    which is what a CI matrix of minor versions needs.

    Raises:
        RepoError: on a clause this simple reader does not understand (e.g. ``===``).
    """
    clauses = [c.strip() for c in requires_python.split(",") if c.strip()]
    allowed = []
    for candidate in candidates:
        have = _release_tuple(candidate, "the Python version list")[:2]
        ok = True
        for clause in clauses:
            match = _PYTHON_CLAUSE.match(clause)
            if match is None:
                raise RepoError(f"unsupported requires-python clause {clause!r}")
            op, version, wildcard = match.groups()
            want = _release_tuple(version, f"requires-python {requires_python!r}")[:2]
            if op == "~=":  # ~=X.Y means >=X.Y,==X.*; ~=X.Y.Z means >=X.Y.Z,==X.Y.*
                prefix = _release_tuple(version, "requires-python")[:-1]
                if not prefix or wildcard:
                    raise RepoError(f"invalid requires-python clause {clause!r}")
                ok &= have >= want and have[: len(prefix)] == prefix[:2]
            elif op == ">=":
                ok &= have >= want
            elif op == ">":
                ok &= have > want
            elif op == "<=":
                ok &= have <= want
            elif op == "<":
                ok &= have < want
            elif op == "==":
                ok &= have[: len(want)] == want if wildcard else have == want
            else:  # "!="
                ok &= have[: len(want)] != want if wildcard else have != want
        if ok:
            allowed.append(candidate)
    return allowed


def build_matrix(
    packages: Mapping[str, Package],
    names: Iterable[str],
    pythons: Sequence[str] = PYTHON_VERSIONS,
) -> dict[str, list[dict[str, str]]]:
    """Return a GitHub Actions matrix ``{"include": [...]}`` for ``names`` x ``pythons``.

    Each entry has ``package``, ``path``, ``python``, ``install`` (space-separated pip
    arguments, see :func:`install_targets`) and ``cudasim`` (``"1"`` to run Numba's CUDA
    simulator). Entries are in layer order, lowest layer first.
    """
    selected = set(names)
    include = []
    for name in topological_order(packages):
        if name not in selected:
            continue
        package = packages[name]
        install = " ".join(install_targets(packages, name))
        cudasim = "1" if _needs_cuda_simulator(packages, name) else "0"
        for python in supported_pythons(package.requires_python, pythons):
            include.append(
                {
                    "package": name,
                    "path": str(package.path),
                    "python": python,
                    "install": install,
                    "cudasim": cudasim,
                }
            )
    return {"include": include}


def parse_release_tag(tag: str) -> tuple[str, str]:
    """Split a release tag ``mt-<x>-vA.B.C`` into ``("mt-<x>", "A.B.C")``.

    Raises:
        RepoError: if the tag does not have that form.
    """
    match = _TAG.match(tag.removeprefix("refs/tags/"))
    if match is None or not match.group("package").startswith(SIBLING_PREFIX):
        raise RepoError(
            f"release tag {tag!r} is not of the form mt-<x>-vA.B.C (e.g. mt-autodiff-v0.1.0)"
        )
    return match.group("package"), match.group("version")


def release_info(packages: Mapping[str, Package], tag: str) -> Package:
    """Return the package a release tag names, after checking the tag's version.

    Raises:
        RepoError: if the tag is malformed, names no package, or its version differs from
            the package's ``__about__.py``.
    """
    name, version = parse_release_tag(tag)
    if name not in packages:
        raise RepoError(
            f"release tag {tag!r} names package {name!r}, which is not under packages/ "
            f"(known: {', '.join(sorted(packages))})"
        )
    package = packages[name]
    if version != package.version:
        raise RepoError(
            f"release tag {tag!r} says version {version} but {package.path} is at version "
            f"{package.version}: bump __about__.py (and CHANGELOG.md) in a commit, then tag "
            "that commit"
        )
    return package


def check_dists(dist_dir: Path, name: str, version: str) -> list[Path]:
    """Check ``dist_dir`` holds exactly one sdist and one wheel of ``name`` ``version``.

    Returns:
        The two files, sdist first.

    Raises:
        RepoError: naming the missing or unexpected files.
    """
    stem = f"{normalize_name(name).replace('-', '_')}-{version}"
    files = sorted(p for p in dist_dir.iterdir() if p.is_file())
    sdists = [p for p in files if p.name == f"{stem}.tar.gz"]
    wheels = [p for p in files if p.name.startswith(f"{stem}-") and p.name.endswith(".whl")]
    unexpected = sorted(p.name for p in set(files) - set(sdists) - set(wheels))
    problems = []
    if len(sdists) != 1:
        problems.append(f"expected one sdist {stem}.tar.gz, found {len(sdists)}")
    if len(wheels) != 1:
        problems.append(f"expected one wheel {stem}-*.whl, found {len(wheels)}")
    if unexpected:
        problems.append(f"unexpected files: {', '.join(unexpected)}")
    if problems:
        raise RepoError(f"{dist_dir}: " + "; ".join(problems))
    return [sdists[0], wheels[0]]


def _write_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    if path is None:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for key, value in outputs.items():
            if "\n" in value:
                raise RepoError(f"output {key} must be one line")
            handle.write(f"{key}={value}\n")


def _read_changed(source: str) -> list[str]:
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None, root: Path = REPO_ROOT) -> int:
    """Run the command line; return the exit status (errors go to stderr as one line)."""
    parser = argparse.ArgumentParser(
        description="Facts about the MiniTorch monorepo for CI (see the module docstring)."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    matrix = commands.add_parser("matrix", help="print the CI matrix of affected packages")
    selection = matrix.add_mutually_exclusive_group(required=True)
    selection.add_argument("--all", action="store_true", help="test every package")
    selection.add_argument(
        "--changed-files", metavar="FILE", help="changed paths, one a line ('-' for stdin)"
    )
    matrix.add_argument(
        "--python", default=",".join(PYTHON_VERSIONS), help="comma-separated Python versions"
    )
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
            for path in check_dists(args.dist_dir, args.package, args.version):
                print(path)
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
            names = set(packages)
            reason = "--all"
        else:
            changed = _read_changed(args.changed_files)
            names = affected_packages(packages, changed)
            reason = f"{len(changed)} changed path(s)"
        pythons = [v.strip() for v in args.python.split(",") if v.strip()]
        result = build_matrix(packages, names, pythons)
        order = [n for n in topological_order(packages) if n in names]
        print(f"testing {', '.join(order) or 'nothing'} ({reason})", file=sys.stderr)
        text = json.dumps(result, separators=(",", ":"))
        print(text)
        _write_outputs(
            args.github_output, {"matrix": text, "any": "true" if result["include"] else "false"}
        )
        return 0
    except (RepoError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
