"""Repository-level guards of the layering: the rules of ARCHITECTURE.md ("The rules of the
layering", at the repository root), each test naming the rule it checks.

- rule 1: every package ships exactly one subpackage ``minitorch/<x>/`` of the PEP 420
  namespace, with ``__init__.py`` (and its ``__all__``), ``__about__.py`` and ``py.typed``;
- rule 2: modules import only their own layer and the layers they declare (transitively),
  and only the third-party distributions they declare; sibling dependencies use a
  compatible range that holds the sibling's current version;
- rule 3: a package uses only the names of another's root ``__all__``;
- rule 8: ``examples/mt_examples`` is only what a starter ships (it imports itself and
  the layers), the benchmarks, the explorer and the tests' helpers are packages beside it;
- rules 4 to 7: inside the layers, ``tensor.py`` is the course's Tensor and delegates to
  the engine, the op catalogue takes only the autograd package's public names, the
  backends' protocol, simple backend and registry are modules of their own, and every
  kernel module implements its folder's protocol;
- (``packaging`` marker) each wheel and sdist holds only its own layer and passes
  ``twine check``, and each layer whose dependencies are all siblings installs offline from
  the wheels alone into a fresh virtual environment, without numpy.

The packages are discovered from ``packages/*/pyproject.toml`` by the CI script
``.github/scripts/monorepo.py``, so a new layer is checked without editing this file.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / ".github" / "scripts" / "monorepo.py"


# The CI script is a plain file, not a package: import it from its folder.
sys.path.insert(0, str(SCRIPT.parent))
mr = importlib.import_module("monorepo")
PACKAGES = mr.load_packages(REPO_ROOT)
NAMES = mr.topological_order(PACKAGES)
REQUIRED_FILES = ("__init__.py", "__about__.py", "py.typed")
# mt-root ships the namespace root, minitorch/__init__.py (the course's flat names); every
# other package is a layer that ships one subpackage, minitorch/<layer>/.
ROOT = "mt-root"
LAYERS = [n for n in NAMES if n != ROOT]


def subpackage_dirs(name: str) -> list[Path]:
    """The entries of ``src/minitorch/`` of a package (there must be exactly one)."""
    namespace = REPO_ROOT / PACKAGES[name].path / "src" / "minitorch"
    if not namespace.is_dir():
        return []
    return sorted(p for p in namespace.iterdir() if p.name != "__pycache__")


def layer_of(name: str) -> str:
    """The subpackage name of a layer: ``mt-autodiff`` -> ``autodiff``."""
    assert name != ROOT, "mt-root ships the namespace root, not a layer"
    entries = subpackage_dirs(name)
    if len(entries) != 1 or not entries[0].is_dir():
        pytest.fail(f"{name} must ship exactly one folder in src/minitorch/, found {entries}")
    return entries[0].name


def module_of(name: str) -> str:
    """The module a package ships: ``minitorch.autodiff``, or ``minitorch`` for mt-root."""
    return "minitorch" if name == ROOT else f"minitorch.{layer_of(name)}"


def init_of(name: str, root: Path = REPO_ROOT) -> Path:
    """The ``__init__.py`` of the module a package ships."""
    return root / PACKAGES[name].path / "src" / Path(*module_of(name).split(".")) / "__init__.py"


def stdlib_only(name: str) -> bool:
    """True if the package and its required siblings need nothing from outside the repo."""
    closure = mr.dependency_closure(PACKAGES, [name])
    return not any(PACKAGES[n].dependencies(siblings=False) for n in closure)


# ARCHITECTURE.md, rule 2: mt-operators and mt-autodiff need no third-party package
# (`pip install mt-autodiff` must not pull numpy).
STDLIB_ONLY = ("mt-operators", "mt-autodiff")


# Layout.


@pytest.mark.parametrize("name", STDLIB_ONLY)
def test_scalar_layers_need_only_the_standard_library(name):
    assert name in PACKAGES
    pulled = {
        n: PACKAGES[n].dependencies(siblings=False)
        for n in mr.dependency_closure(PACKAGES, [name])
        if PACKAGES[n].dependencies(siblings=False)
    }
    assert pulled == {}, f"pip install {name} would pull third-party packages: {pulled}"


def test_every_folder_under_packages_is_a_package():
    folders = {p.name for p in (REPO_ROOT / "packages").iterdir() if p.is_dir()}
    not_packages = sorted(folders - {p.path.name for p in PACKAGES.values()})
    assert not_packages == [], (
        f"packages/{not_packages} have no pyproject.toml: hatch's workspace (packages/*) "
        "refuses to start, and CI would not test them"
    )


def test_only_mt_root_ships_the_namespace_init():
    found = [
        path.relative_to(REPO_ROOT).as_posix()
        for top in ("packages", "examples")
        for path in (REPO_ROOT / top).rglob("minitorch/__init__.py")
    ]
    assert found == [f"{PACKAGES[ROOT].path}/src/minitorch/__init__.py"], (
        "only mt-root ships minitorch/__init__.py: another one would hide the layers"
    )


def test_root_ships_only_the_namespace_root_and_keeps_it_open():
    namespace = REPO_ROOT / PACKAGES[ROOT].path / "src" / "minitorch"
    entries = {p.name for p in namespace.iterdir() if p.name != "__pycache__"}
    assert entries == set(REQUIRED_FILES), f"mt-root must ship only {REQUIRED_FILES}: {entries}"
    text = init_of(ROOT).read_text(encoding="utf-8")
    # Without it, a layer installed in another sys.path entry (the editable workspace
    # installs each layer from its own folder) would be hidden by this regular package.
    assert "__path__ = pkgutil.extend_path([], __name__)" in text
    assert PACKAGES[ROOT].dependencies(None, siblings=True) == set()


@pytest.mark.parametrize("name", LAYERS)
def test_every_layer_requires_the_root(name):
    assert ROOT in PACKAGES[name].dependencies(siblings=True), (
        f"{name} must require {ROOT}, which keeps `import minitorch` open to every layer"
    )


@pytest.mark.parametrize("name", LAYERS)
def test_one_subpackage_per_package(name):
    entries = subpackage_dirs(name)
    assert [p.name for p in entries if p.is_dir()] == [
        name.removeprefix("mt-").replace("-", "_")
    ], f"{name} must ship exactly src/minitorch/{name.removeprefix('mt-')}/, found {entries}"
    assert all(p.is_dir() for p in entries), f"files directly in {name}/src/minitorch: {entries}"
    sub = entries[0]
    missing = [f for f in REQUIRED_FILES if not (sub / f).is_file()]
    assert missing == [], f"{sub.relative_to(REPO_ROOT)} lacks {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_version_lives_in_about(name):
    pyproject = REPO_ROOT / PACKAGES[name].path / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    folder = "/".join(module_of(name).split("."))
    assert f'path = "src/{folder}/__about__.py"' in text
    Version(PACKAGES[name].version)  # a valid PEP 440 version


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _all_of(tree: ast.Module) -> list[str] | None:
    """The literal ``__all__`` a module assigns, if any."""
    exported = None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            exported = ast.literal_eval(node.value)
    return exported


def public_names(name: str, root: Path = REPO_ROOT) -> set[str]:
    """A package's public API: the names in its root ``__all__``."""
    return set(_all_of(ast.parse(init_of(name, root).read_text(encoding="utf-8"))) or [])


def _lazy_names(tree: ast.Module) -> set[str]:
    """Names a module-level ``__getattr__`` (PEP 562) answers: the strings it compares with."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            return {
                c.value
                for c in ast.walk(node)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
    return set()


@pytest.mark.parametrize("name", NAMES)
def test_package_root_has_an_explicit_all(name):
    init = init_of(name)
    tree = ast.parse(init.read_text(encoding="utf-8"), filename=str(init))
    stars = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
    ]
    assert stars == [], f"{init}: star imports on lines {stars}; import names explicitly"
    exported = _all_of(tree)
    assert exported, f"{init} has no (non-empty, literal) __all__"
    assert all(isinstance(n, str) for n in exported)
    assert len(set(exported)) == len(exported), f"{init}: duplicate names in __all__"
    unbound = sorted(set(exported) - _bound_names(tree) - _lazy_names(tree))
    assert unbound == [], f"{init}: __all__ names {unbound} that the module does not define"


# One shape for every package (issue 11): README sections and the changelog's format.

README_SECTIONS = ["Install", "Use", "Course tasks", "Design", "Figures"]
CHANGE_KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


@pytest.mark.parametrize("name", NAMES)
def test_readme_sections_in_the_shared_order(name):
    text = (REPO_ROOT / PACKAGES[name].path / "README.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert sections == README_SECTIONS, (
        f"{name}/README.md: after the introduction (what it is) the sections are "
        f"{README_SECTIONS}; put anything else under one of them as ### (found {sections})"
    )


@pytest.mark.parametrize("name", NAMES)
def test_changelog_keeps_a_changelog_with_dates(name):
    text = (REPO_ROOT / PACKAGES[name].path / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)" in text
    versions = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert versions[0] == "[Unreleased]", f"{name}: the first section is ## [Unreleased]"
    for heading in versions[1:]:
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", heading), (
            f"{name}/CHANGELOG.md: {heading!r} is not '[A.B.C] - YYYY-MM-DD'"
        )
    kinds = set(re.findall(r"^### (.+)$", text, flags=re.MULTILINE))
    assert kinds <= CHANGE_KINDS, f"{name}/CHANGELOG.md: unknown subsections {kinds - CHANGE_KINDS}"
    if versions[1:]:
        assert versions[1] == f"[{PACKAGES[name].version}] - " + versions[1].split(" - ")[-1], (
            f"{name}: the newest released section is its __about__.py version"
        )


# Imports.


@dataclass(frozen=True)
class Import:
    """One import found in a source file: the absolute module name, the names taken from it
    (``from m import a, b``; empty for ``import m``) and where."""

    module: str
    where: str
    names: tuple[str, ...] = ()

    def __str__(self) -> str:
        taken = f" ({', '.join(self.names)})" if self.names else ""
        return f"{self.where} imports {self.module}{taken}"


def _module_name(path: Path, src: Path) -> tuple[str, bool]:
    """Dotted name of a source file, and whether it is a package ``__init__``."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _is_import_module_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "import_module"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and not node.args[0].value.startswith(".")
    )


def imports_of(name: str, root: Path = REPO_ROOT) -> Iterator[Import]:
    """Every import in a package's sources (under ``root``), relative ones made absolute.

    ``importlib.import_module("...")`` calls with a literal name count too, and so does an
    attribute read through a module bound by an import (``tensor._private`` after
    ``from minitorch import tensor``), as ``from tensor import _private``.
    """
    src = root / PACKAGES[name].path / "src"
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module, is_package = _module_name(path, src)
        package_parts = module.split(".") if is_package else module.split(".")[:-1]
        bound: dict[str, str] = {}  # local name -> module it is bound to
        where = path.relative_to(root).as_posix()
        for node in ast.walk(tree):
            at = f"{where}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(alias.name, at)
                    if alias.asname:
                        bound[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    if node.level - 1 >= len(package_parts):
                        yield Import("." * node.level + (node.module or ""), at)
                        continue
                    base = package_parts[: len(package_parts) - (node.level - 1)]
                    absolute = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    absolute = node.module or ""
                if absolute == "minitorch":  # from minitorch import operators
                    for alias in node.names:
                        yield Import(f"minitorch.{alias.name}", at)
                        bound[alias.asname or alias.name] = f"minitorch.{alias.name}"
                else:
                    yield Import(absolute, at, tuple(alias.name for alias in node.names))
            elif isinstance(node, ast.Call) and _is_import_module_call(node):
                yield Import(str(getattr(node.args[0], "value", "")), at)
        # Attribute reads through a bound module: `alias.x` and `minitorch.layer.x`.
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            dotted = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                dotted.insert(0, value.attr)
                value = value.value
            if not isinstance(value, ast.Name):
                continue
            base_module = bound.get(value.id, value.id if value.id == "minitorch" else None)
            if base_module is None:
                continue
            full = [*base_module.split("."), *dotted]
            if len(full) == 3:  # minitorch.<layer>.<name>: the name read from the layer
                yield Import(".".join(full[:2]), f"{where}:{node.lineno}", (full[2],))


@pytest.mark.parametrize("name", NAMES)
def test_imports_only_declared_lower_layers(name):
    layer_to_package = {layer_of(n): n for n in LAYERS}
    allowed = mr.dependency_closure(PACKAGES, [name], optional=True)
    problems = []
    for imp in imports_of(name):
        parts = imp.module.split(".")
        if imp.module.startswith("."):
            problems.append(f"{imp}: a relative import that leaves the package")
        elif parts[0] != "minitorch":
            continue
        elif len(parts) == 1:
            problems.append(f"{imp}: import the layer itself (minitorch.<x>), not the namespace")
        elif name == ROOT:
            if parts[1:] != ["__about__"]:  # the root imports its version and no layer
                problems.append(f"{imp}: the namespace root imports no layer (it is lazy)")
        elif parts[1] not in layer_to_package:
            problems.append(f"{imp}: no package of this repository provides minitorch.{parts[1]}")
        elif layer_to_package[parts[1]] not in allowed:
            problems.append(
                f"{imp}: {layer_to_package[parts[1]]} is not a declared dependency of {name} "
                f"(it may use {', '.join(sorted(allowed))})"
            )
    assert problems == [], "\n".join(problems)


LOADED = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps([m for m in sys.modules if m.split(".")[0] == "minitorch"]))
"""


@pytest.mark.parametrize("name", NAMES)
def test_importing_a_package_imports_no_higher_layer(name, tmp_path):
    # The static check above cannot see the namespace root's lazy imports (their names are
    # computed): this one imports each package in a new interpreter and looks.
    result = subprocess.run(
        [sys.executable, "-c", LOADED, module_of(name)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    owner = {module_of(n): n for n in NAMES}
    loaded = {
        owner.get(".".join(m.split(".")[:2]), ROOT) for m in json.loads(result.stdout)
    }  # minitorch and minitorch.__about__ belong to mt-root
    allowed = mr.dependency_closure(PACKAGES, [name], optional=True)
    assert loaded <= allowed, f"importing {module_of(name)} imported {sorted(loaded - allowed)}"
    assert name in loaded


def private_uses(name: str, root: Path = REPO_ROOT) -> list[str]:
    """Where a package uses another package's non-public module or name (not in its root
    ``__all__``): ``minitorch.cuda.device``, ``from minitorch.tensor import _helper``."""
    layer_to_package = {layer_of(n): n for n in LAYERS}
    problems = []
    for imp in imports_of(name, root):
        parts = imp.module.split(".")
        if parts[0] != "minitorch" or len(parts) < 2 or parts[1] not in layer_to_package:
            continue
        owner = layer_to_package[parts[1]]
        if owner == name:
            continue
        public = public_names(owner, root)
        if len(parts) > 2 and parts[2] not in public:
            problems.append(
                f"{imp}: minitorch.{parts[1]}.{parts[2]} is not public in {owner} (not in "
                f"minitorch.{parts[1]}.__all__): import from minitorch.{parts[1]} itself"
            )
        elif len(parts) == 2 and set(imp.names) - public:
            private = sorted(set(imp.names) - public)
            problems.append(f"{imp}: {private} not in minitorch.{parts[1]}.__all__ ({owner})")
    return problems


@pytest.mark.parametrize("name", NAMES)
def test_uses_only_the_public_api_of_other_packages(name):
    problems = private_uses(name)
    rule = "ARCHITECTURE.md, rule 3: a package uses only another's public names (root __all__)"
    assert problems == [], rule + ":\n" + "\n".join(problems)


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """A copy of every package's sources, to add a deliberate import to."""
    shutil.copytree(
        REPO_ROOT / "packages",
        tmp_path / "packages",
        ignore=shutil.ignore_patterns("tests", "__pycache__", "*.md"),
    )
    return tmp_path


@pytest.mark.parametrize(
    "source",
    [
        "from minitorch.cuda.device import x",
        "from minitorch.fast.kernels import y",
        "from minitorch.tensor import _private",
        "from minitorch.tensor import Tensor, _private",
        "import minitorch.tensor.tensor_data",
        "from ..tensor.tensor_data import index_to_position",
        "import importlib\nkernels = importlib.import_module('minitorch.fast.kernels')",
        "from minitorch import tensor\nhelper = tensor._private",
        "import minitorch.tensor as mt\nhelper = mt._private",
        "import minitorch.tensor\nhelper = minitorch.tensor._private",
    ],
)
def test_private_use_check_fails_on_a_deliberate_private_import(tree_copy, source):
    before = private_uses("mt-nn", tree_copy)
    (tree_copy / "packages/mt-nn/src/minitorch/nn/deliberate.py").write_text(source + "\n")
    added = [p for p in private_uses("mt-nn", tree_copy) if p not in before]
    assert len(added) == 1, added
    assert "deliberate.py" in added[0]


@pytest.mark.parametrize(
    "source",
    [
        "from minitorch.tensor import Tensor, tensor",
        "from minitorch import tensor\nmake = tensor.zeros",
        "from ..tensor import Tensor",
        "from . import conv",  # its own modules are its own business
    ],
)
def test_private_use_check_accepts_public_names(tree_copy, source):
    before = private_uses("mt-nn", tree_copy)
    (tree_copy / "packages/mt-nn/src/minitorch/nn/deliberate.py").write_text(source + "\n")
    assert private_uses("mt-nn", tree_copy) == before


def _installed_requirements(dist: str, seen: set[str]) -> None:
    """Add ``dist`` and everything it requires (as installed here) to ``seen``."""
    if dist in seen:
        return
    seen.add(dist)
    try:
        requires = importlib.metadata.requires(dist) or []
    except importlib.metadata.PackageNotFoundError:
        return
    for raw in requires:
        requirement = Requirement(raw)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            _installed_requirements(canonicalize_name(requirement.name), seen)


@functools.cache
def import_providers() -> dict[str, set[str]]:
    """Top-level import name -> the installed distributions that provide it.

    Python 3.10's ``importlib.metadata.packages_distributions`` reads only
    ``top_level.txt``, which wheels built without setuptools (numpy's) do not have; so the
    names are also inferred from each distribution's files, as 3.11 does.
    """
    providers: dict[str, set[str]] = {}
    for dist in importlib.metadata.distributions():
        tops = set((dist.read_text("top_level.txt") or "").split())
        for file in dist.files or []:
            if file.suffix in {".py", ".so", ".pyd"} and file.parts[0] != "..":
                tops.add(file.parts[0] if len(file.parts) > 1 else file.name.split(".")[0])
        for top in tops:
            providers.setdefault(top, set()).add(canonicalize_name(dist.metadata["Name"]))
    return providers


UNDECLARED_BY_DESIGN = {
    # mt-root reads numba.cuda for the course's code only once that code has imported numba
    # itself (a hook on `import numba`): it never makes Numba a need of its own.
    ("mt-root", "numba.cuda"),
}


@pytest.mark.parametrize("name", NAMES)
def test_third_party_imports_are_declared(name):
    declared: set[str] = set()
    for member in mr.dependency_closure(PACKAGES, [name], optional=True):
        for dist in PACKAGES[member].dependencies(None, siblings=False):
            _installed_requirements(dist, declared)
    providers = import_providers()
    problems = []
    for imp in imports_of(name):
        top = imp.module.split(".")[0]
        if not top or top in {"minitorch", "__future__"} or top in sys.stdlib_module_names:
            continue
        if (name, imp.module) in UNDECLARED_BY_DESIGN:
            continue
        dists = providers.get(top, set())
        if not dists:
            problems.append(f"{imp}: no installed distribution provides {top!r} (declare it)")
        elif not dists & declared:
            problems.append(
                f"{imp}: {top!r} comes from {sorted(dists)}, which {name} does not declare "
                "(in [project].dependencies or an extra, or through a declared dependency)"
            )
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("name", NAMES)
def test_sibling_dependencies_use_compatible_ranges(name):
    problems = []
    for requirement in (r for group in PACKAGES[name].requirements.values() for r in group):
        raw = str(requirement)
        sibling = canonicalize_name(requirement.name)
        if sibling not in PACKAGES:
            continue
        spec = requirement.specifier
        current = Version(PACKAGES[sibling].version)
        breaking = (
            Version(f"{current.major + 1}.0")
            if current.major >= 1
            else Version(f"0.{current.minor + 1}.0")
        )
        if not spec.contains(current, prereleases=True):
            problems.append(f"{raw!r} excludes {sibling}'s current version {current}")
        if spec.contains(breaking, prereleases=True):
            problems.append(f"{raw!r} needs an upper bound below {breaking} (e.g. <{breaking})")
        if not any(s.operator in {">=", ">", "~=", "=="} for s in spec):
            problems.append(f"{raw!r} needs a lower bound (e.g. >={current.major}.{current.minor})")
    assert problems == [], f"{name}: " + "; ".join(problems)


# The architecture document and the rules inside the layers (ARCHITECTURE.md, rules 4-7).

ARCHITECTURE = REPO_ROOT / "ARCHITECTURE.md"
RULES = {
    1: "One package, one subpackage",
    2: "Down only",
    3: "Public names only",
    4: "The Tensor is the course's",
    5: "The op catalogue is not the engine",
    6: "Backends meet at the protocol",
    7: "One shape per kind of kernel module",
    8: "Examples by role",
}
TENSOR_SRC = REPO_ROOT / PACKAGES["mt-tensor"].path / "src" / "minitorch" / "tensor"


def rule(number: int) -> str:
    """How a failure names the rule it broke."""
    return f"ARCHITECTURE.md, rule {number} ({RULES[number]})"


def test_the_architecture_document_states_every_rule_checked_here_and_every_package():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [
        f"{n}. **{title}.**" for n, title in RULES.items() if f"{n}. **{title}.**" not in text
    ]
    assert missing == [], f"ARCHITECTURE.md does not state the rules {missing}"
    assert [n for n in NAMES if f"**{n}**" not in text] == []
    assert "tools/course/README.md" in text  # the course tool, described there at length
    assert "ARCHITECTURE.md" in (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def runtime_imports(source: str, module: str, is_package: bool = False) -> list[Import]:
    """The ``from ... import`` statements of ``source`` that run (not under TYPE_CHECKING),
    made absolute for the module ``module``, with the names they take."""
    tree = ast.parse(source)
    skip = {id(n) for block in ast.walk(tree) if _is_type_checking(block) for n in ast.walk(block)}
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or id(node) in skip:
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            absolute = ".".join([*base, *([node.module] if node.module else [])])
        else:
            absolute = node.module or ""
        names = tuple(alias.name for alias in node.names)
        if node.level and not node.module:  # from . import x: the submodules x
            found += [Import(f"{absolute}.{n}", f"{module}:{node.lineno}") for n in names]
        else:
            found.append(Import(absolute, f"{module}:{node.lineno}", names))
    return found


def _tensor_module(path: Path) -> tuple[str, str, bool]:
    """The source, dotted name and package-ness of a file of mt-tensor."""
    name, is_package = _module_name(path, TENSOR_SRC.parent.parent)
    return path.read_text(encoding="utf-8"), name, is_package


def test_tensor_py_is_the_course_size():
    lines = len((TENSOR_SRC / "tensor.py").read_text(encoding="utf-8").splitlines())
    assert lines <= 600, f"{rule(4)}: tensor.py has {lines} lines"


ENGINE_DELEGATES = (
    "backward",
    "chain_rule",
    "accumulate_derivative",
    "register_hook",
    "retain_grad",
)


def delegation_problems(source: str) -> list[str]:
    """Where ``Tensor``'s autograd methods do more than one call of the engine's namesake,
    or ``tensor.py`` imports what runs the graph."""
    tree = ast.parse(source)
    tensor = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    methods = {n.name: n for n in tensor.body if isinstance(n, ast.FunctionDef)}
    problems = []
    for name in ENGINE_DELEGATES:
        method = methods.get(name)
        if method is None:
            problems.append(f"Tensor.{name} is missing")
            continue
        body = method.body[1:] if ast.get_docstring(method) is not None else method.body
        call = getattr(body[0], "value", None) if len(body) == 1 else None
        if not (isinstance(call, ast.Call) and ast.unparse(call.func) == f"engine.{name}"):
            problems.append(f"Tensor.{name} is not one call of engine.{name}")
    for imp in runtime_imports(source, "minitorch.tensor.tensor"):
        engine_names = {"backpropagate", "topological_sort", "BACKWARD", "store_grad"}
        if engine_names & set(imp.names):
            problems.append(f"{imp}: the graph is walked in autograd/engine.py")
    return problems


def test_tensors_autograd_methods_are_one_call_into_the_engine():
    source = (TENSOR_SRC / "tensor.py").read_text(encoding="utf-8")
    assert delegation_problems(source) == [], rule(4)


def test_the_delegation_check_sees_an_engine_body_in_tensor_py():
    source = (TENSOR_SRC / "tensor.py").read_text(encoding="utf-8")
    grown = source.replace(
        "        engine.retain_grad(self)\n",
        "        h = self.history\n        h.retains_grad = True\n",
    ).replace(
        "from . import indexing",
        "from minitorch.autodiff import backpropagate\nfrom . import indexing",
    )
    assert grown != source
    found = delegation_problems(grown)
    assert any("Tensor.retain_grad" in p for p in found), found
    assert any("backpropagate" in p for p in found), found


def catalogue_problems(source: str) -> list[str]:
    """Imports of ``functions.py`` that reach into ``autograd/`` past its public names."""
    init = (TENSOR_SRC / "autograd" / "__init__.py").read_text(encoding="utf-8")
    public = set(_all_of(ast.parse(init)) or [])
    problems = []
    for imp in runtime_imports(source, "minitorch.tensor.functions"):
        if imp.module.startswith("minitorch.tensor.autograd."):
            problems.append(f"{imp}: an engine internal")
        elif imp.module == "minitorch.tensor.autograd" and set(imp.names) - public:
            problems.append(f"{imp}: {sorted(set(imp.names) - public)} not in autograd.__all__")
    return problems


def test_the_op_catalogue_takes_only_autograds_public_names():
    source = (TENSOR_SRC / "functions.py").read_text(encoding="utf-8")
    assert catalogue_problems(source) == [], rule(5)
    assert catalogue_problems(source + "\nfrom .autograd.engine import store_grad\n") != []
    assert catalogue_problems(source + "\nfrom .autograd import engine\n") != []


OUTSIDE_AUTOGRAD = ("functions", "tensor", "creation", "indexing", "inplace", "torch_compat")


def test_autograd_imports_neither_the_catalogue_nor_the_tensor_at_run_time():
    problems = []
    for path in sorted((TENSOR_SRC / "autograd").glob("*.py")):
        source, name, is_package = _tensor_module(path)
        problems += [
            str(imp)
            for imp in runtime_imports(source, name, is_package)
            if imp.module in {f"minitorch.tensor.{m}" for m in OUTSIDE_AUTOGRAD}
        ]
    assert problems == [], rule(5) + ":\n" + "\n".join(problems)


BACKEND_MODULES = {
    "protocol.py": {"TensorOps", "TensorBackend"},
    "simple.py": {"SimpleOps", "SimpleBackend"},
    "registry.py": {"backend", "available_backends", "get_default_backend", "set_default_backend"},
}


def _top_level_names(tree: ast.Module) -> set[str]:
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)} | {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }


def test_the_backend_protocol_simple_backend_and_registry_are_modules_of_their_own():
    folder = TENSOR_SRC / "backends"
    for file, names in BACKEND_MODULES.items():
        tree = ast.parse((folder / file).read_text(encoding="utf-8"))
        assert names <= _top_level_names(tree), f"{rule(6)}: backends/{file} defines {names}"
    source, name, _ = _tensor_module(folder / "protocol.py")
    tensor_imports = [
        str(i) for i in runtime_imports(source, name) if i.module == "minitorch.tensor.tensor"
    ]
    assert tensor_imports == [], f"{rule(6)}: the protocol uses tensors' public methods only"


KERNEL_FOLDERS = sorted(
    p.parent for p in REPO_ROOT.glob("packages/*/src/minitorch/*/kernels/__init__.py")
)


def kernel_protocol(init: Path) -> tuple[str, dict[str, list[str] | None]]:
    """The protocol a ``kernels/__init__.py`` states: its name, and each member with its
    parameters (without ``self``; None for an attribute)."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    classes = [
        n for n in tree.body
        if isinstance(n, ast.ClassDef) and any(ast.unparse(b) == "Protocol" for b in n.bases)
    ]  # fmt: skip
    assert len(classes) == 1, f"{init}: one typing.Protocol, the shape of the modules beside it"
    members: dict[str, list[str] | None] = {}
    for node in classes[0].body:
        if isinstance(node, ast.FunctionDef):
            args = node.args
            members[node.name] = [a.arg for a in args.args[1:]] + (
                [f"*{args.vararg.arg}"] if args.vararg else []
            )
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            members[node.target.id] = None
    return classes[0].name, members


def kernel_module_problems(path: Path, members: dict[str, list[str] | None]) -> list[str]:
    """What a kernel module lacks of its protocol: a member, or a parameter of a function
    (a module's function may take more parameters, with defaults, or take the rest as
    ``*args``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    imported = {
        a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names
    }
    defined = _top_level_names(tree) | {
        n.target.id
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    problems = []
    for name, params in members.items():
        if name not in defined | imported:
            problems.append(f"{path.name}: no {name}")
        elif params is not None and name in functions:
            args = functions[name].args
            own = [a.arg for a in args.args] + ([f"*{args.vararg.arg}"] if args.vararg else [])
            if args.vararg and len(args.args) <= len(params):  # the rest, whatever they are
                params = [*params[: len(args.args)], own[-1]]
            extra = own[len(params) :]
            if own[: len(params)] != params or len(extra) > len(args.defaults):
                problems.append(f"{path.name}: {name}({', '.join(own)}), not ({', '.join(params)})")
    return problems


def test_the_kernel_folders_are_mt_fasts_and_mt_nns():
    found = {p.relative_to(REPO_ROOT).as_posix() for p in KERNEL_FOLDERS}
    assert found == {
        "packages/mt-fast/src/minitorch/fast/kernels",
        "packages/mt-nn/src/minitorch/nn/kernels",
    }


@pytest.mark.parametrize(
    "module",
    [
        p
        for folder in KERNEL_FOLDERS
        for p in sorted(folder.glob("*.py"))
        if p.name != "__init__.py"
    ],
    ids=lambda p: f"{p.parent.parent.name}/kernels/{p.name}",
)
def test_each_kernel_module_implements_its_folders_protocol(module):
    name, members = kernel_protocol(module.parent / "__init__.py")
    assert members, f"{name} states no member"
    problems = kernel_module_problems(module, members)
    assert problems == [], f"{rule(7)}: {module.name} is a {name}:\n" + "\n".join(problems)


def test_the_kernel_module_check_sees_a_missing_member_and_a_changed_signature(tmp_path):
    _, members = kernel_protocol(REPO_ROOT / "packages/mt-nn/src/minitorch/nn/kernels/__init__.py")
    partial = tmp_path / "partial.py"
    partial.write_text(
        "def conv_forward(out, inp, weight, bias, sizes, reverse):\n    pass\n", encoding="utf-8"
    )
    found = kernel_module_problems(partial, members)
    assert any("no conv_weight_grad" in p for p in found), found
    assert any("conv_forward(" in p for p in found), found
    rest = tmp_path / "rest.py"
    rest.write_text(
        "def conv_forward(out, *args):\n    pass\n\n"
        "def conv_weight_grad(grad_weight, grad_out, inp, sizes):\n    pass\n",
        encoding="utf-8",
    )
    assert kernel_module_problems(rest, members) == [
        "rest.py: conv_weight_grad(grad_weight, "
        "grad_out, inp, sizes), not (grad_weight, grad_out, inp, sizes, reverse)"
    ]


# Built distributions (slow).


@dataclass(frozen=True)
class Dists:
    """The sdists and wheels built from the checkout, one of each per package."""

    wheels: Path
    sdist: dict[str, Path]
    wheel: dict[str, Path]


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    root = tmp_path_factory.mktemp("dists")
    wheels = root / "wheels"
    wheels.mkdir()
    sdist, wheel = {}, {}
    for name in NAMES:
        out = root / name
        result = subprocess.run(
            [sys.executable, "-m", "hatchling", "build", "--directory", str(out)],
            cwd=REPO_ROOT / PACKAGES[name].path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"building {name} failed:\n{result.stdout}{result.stderr}"
        sdist[name], wheel[name] = mr.check_dists(out, name, PACKAGES[name].version)
        shutil.copy(wheel[name], wheels)
    return Dists(wheels=wheels, sdist=sdist, wheel=wheel)


def ships(name: str, path: str) -> bool:
    """Whether ``path`` (``minitorch/...``) is a file this package may ship: one of its
    layer's, or for mt-root one of the namespace root's own three files."""
    folder = module_of(name).replace(".", "/")
    if name == ROOT:
        return path in {f"{folder}/{f}" for f in REQUIRED_FILES}
    return path.startswith(f"{folder}/")


def test_ships_tells_layers_and_the_root_apart():
    assert ships("mt-tensor", "minitorch/tensor/tensor.py")
    assert not ships("mt-tensor", "minitorch/__init__.py")
    assert not ships("mt-tensor", "minitorch/autodiff/core.py")
    assert ships(ROOT, "minitorch/__init__.py")
    assert not ships(ROOT, "minitorch/tensor/__init__.py")


@pytest.mark.packaging
@pytest.mark.parametrize("name", NAMES)
def test_wheel_holds_only_its_layer(dists, name):
    folder = module_of(name).replace(".", "/")
    stem = f"{name.replace('-', '_')}-{PACKAGES[name].version}"
    with zipfile.ZipFile(dists.wheel[name]) as archive:
        files = archive.namelist()
        metadata = archive.read(f"{stem}.dist-info/METADATA").decode()
    stray = [f for f in files if not (ships(name, f) or f.startswith(f"{stem}.dist-info/"))]
    assert stray == [], f"{dists.wheel[name].name} ships files not its own: {stray}"
    for required in REQUIRED_FILES:
        assert f"{folder}/{required}" in files
    assert f"Version: {PACKAGES[name].version}\n" in metadata
    declared = {str(r) for group in PACKAGES[name].requirements.values() for r in group}
    shipped = {
        str(Requirement(line.removeprefix("Requires-Dist: ")))
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: ")
    }
    assert {r.split(";")[0].strip() for r in shipped} == {
        r.split(";")[0].strip() for r in declared
    }, "the wheel's Requires-Dist differs from pyproject.toml"


@pytest.mark.packaging
@pytest.mark.parametrize("name", NAMES)
def test_sdist_holds_only_its_package(dists, name):
    folder = module_of(name).replace(".", "/")
    with tarfile.open(dists.sdist[name]) as archive:
        files = [m.name for m in archive.getmembers() if m.isfile()]
    prefix = f"{name.replace('-', '_')}-{PACKAGES[name].version}/"
    assert all(f.startswith(prefix) for f in files)
    inner = [f.removeprefix(prefix) for f in files]
    sources = [f for f in inner if f.startswith("src/")]
    stray = [f for f in sources if not ships(name, f.removeprefix("src/"))]
    assert stray == [], f"{dists.sdist[name].name} ships other packages' sources: {stray}"
    assert {"pyproject.toml", "README.md", f"src/{folder}/__about__.py"} <= set(inner)


@pytest.mark.packaging
def test_twine_check_passes(dists):
    files = [str(p) for n in NAMES for p in (dists.sdist[n], dists.wheel[n])]
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


SMOKE = """
import importlib, importlib.util, json, sys
report = {"prefix": sys.prefix, "files": {}, "versions": {}}
for name in json.loads(sys.argv[1]):
    module = importlib.import_module(name)
    report["files"][name] = module.__file__
    report["versions"][name] = module.__version__
if "minitorch.autodiff" in report["files"]:
    from minitorch.autodiff import Scalar
    x, y = Scalar(2.0), Scalar(3.0)
    (x * y + x.log()).backward()  # d/dx = y + 1/x = 3.5, d/dy = x = 2
    report["derivatives"] = [x.derivative, y.derivative]
import minitorch
report["flat"] = {}
for flat_name in ("Module", "Scalar", "Tensor"):  # the course's flat names, or the hint
    try:
        report["flat"][flat_name] = getattr(minitorch, flat_name).__module__
    except AttributeError as error:
        report["flat"][flat_name] = f"AttributeError: {error}"
report["numpy_findable"] = importlib.util.find_spec("numpy") is not None
report["numpy_imported"] = "numpy" in sys.modules
print(json.dumps(report))
"""


def _isolated_env() -> dict[str, str]:
    """The environment minus pip's and Python's settings, so only our flags apply."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return env


def _run(*args: str | Path, cwd: Path) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=_isolated_env(), capture_output=True, text=True
    )
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


def make_venv(where: Path) -> Path:
    """A fresh virtual environment of this Python; returns its interpreter."""
    _run(sys.executable, "-m", "venv", where, cwd=where.parent)
    return where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@pytest.mark.packaging
@pytest.mark.parametrize("name", [n for n in NAMES if stdlib_only(n)])
def test_stdlib_layer_installs_offline_alone(dists, name, tmp_path):
    python = make_venv(tmp_path / "venv")
    _run(
        python,
        "-m",
        "pip",
        "install",
        "--no-index",
        "--find-links",
        dists.wheels,
        name,
        cwd=tmp_path,
    )

    closure = mr.dependency_closure(PACKAGES, [name])
    installed = json.loads(_run(python, "-m", "pip", "list", "--format=json", cwd=tmp_path))
    others = {canonicalize_name(d["name"]) for d in installed} - {"pip", "setuptools"}
    assert others == closure, f"installing {name} brought {sorted(others)}"

    modules = [module_of(n) for n in sorted(closure)]
    report = json.loads(_run(python, "-I", "-c", SMOKE, json.dumps(modules), cwd=tmp_path))
    prefix = Path(report["prefix"]).resolve()
    for module, file in report["files"].items():
        assert prefix in Path(file).resolve().parents, f"{module} was imported from {file}"
    assert report["versions"] == {module_of(n): PACKAGES[n].version for n in closure}
    assert report["numpy_findable"] is False
    assert report["numpy_imported"] is False
    if "mt-autodiff" in closure:
        assert report["derivatives"] == pytest.approx([3.5, 2.0])
    # import minitorch: the flat names of the installed layers resolve, the others name the
    # wheel to install (and trying them imports no numpy).
    expected = {"Module": "mt-operators", "Scalar": "mt-autodiff", "Tensor": "mt-tensor"}
    for flat_name, wheel in expected.items():
        got = report["flat"][flat_name]
        if wheel in closure:
            assert got.startswith(module_of(wheel) + "."), (flat_name, got)
        else:
            assert got.startswith("AttributeError"), got
            assert f"pip install {wheel}" in got, got


EXAMPLES = REPO_ROOT / "examples"


def test_what_a_starter_ships_imports_only_itself_and_the_layers():
    # The course tool copies examples/mt_examples/ whole into a starter: an import of the
    # benchmarks, the explorer or the tests' helpers would fail in every starter.
    wrong = []
    for path in sorted((EXAMPLES / "mt_examples").glob("*.py")):
        name = f"mt_examples.{path.stem}" if path.stem != "__init__" else "mt_examples"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        tops = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ] + [imp.module for imp in runtime_imports(path.read_text(encoding="utf-8"), name)]
        wrong += [
            f"{path.name}: {top}"
            for top in tops
            if top.split(".")[0].startswith("mt_") and top.split(".")[0] != "mt_examples"
        ]
    assert wrong == [], f"{rule(8)}: {wrong}"
    assert not (EXAMPLES / "mt_examples" / "explorer").exists(), rule(8)


def test_examples_root_holds_only_the_training_launchers():
    launchers = {p.name for p in EXAMPLES.glob("*.py")}
    # The scripts a starter hands out (course.toml's [scripts]: the network to write).
    scripts = {
        p.name
        for p in (EXAMPLES / "mt_examples").glob("*.py")
        if "# BEGIN SOLUTION" in p.read_text(encoding="utf-8")
    }
    assert launchers == scripts, (
        f"{rule(8)}: examples/*.py beyond the launchers: {launchers - scripts}"
    )
    packages = {"mt_examples", "mt_bench", "mt_explorer", "tests/mt_testing"}
    pyproject = (EXAMPLES / "pyproject.toml").read_text(encoding="utf-8")
    assert all(f'"{p}"' in pyproject for p in packages), rule(8)
    assert all((EXAMPLES / p / "__init__.py").is_file() for p in packages), rule(8)
