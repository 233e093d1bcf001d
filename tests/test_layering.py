"""Repository-level guards of the layering (ARCHITECTURE.md, "Rules of the layering").

- every package ships exactly one subpackage ``minitorch/<x>/`` of the PEP 420 namespace,
  with ``__init__.py`` (and its ``__all__``), ``__about__.py`` and ``py.typed``;
- modules import only their own layer and the layers they declare (transitively), and
  only the third-party distributions they declare;
- sibling dependencies use a compatible range that holds the sibling's current version;
- (``packaging`` marker) each wheel and sdist holds only its own layer and passes
  ``twine check``, and each layer whose dependencies are all siblings installs offline from
  the wheels alone into a fresh virtual environment, without numpy.

The packages are discovered from ``packages/*/pyproject.toml`` by the CI script
``.github/scripts/monorepo.py``, so a new layer is checked without editing this file.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import json
import os
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
from packaging.version import Version

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / ".github" / "scripts" / "monorepo.py"


# The CI script is a plain file, not a package: import it from its folder.
sys.path.insert(0, str(SCRIPT.parent))
mr = importlib.import_module("monorepo")
PACKAGES = mr.load_packages(REPO_ROOT)
NAMES = mr.topological_order(PACKAGES)
REQUIRED_FILES = ("__init__.py", "__about__.py", "py.typed")


def subpackage_dirs(name: str) -> list[Path]:
    """The entries of ``src/minitorch/`` of a package (there must be exactly one)."""
    namespace = REPO_ROOT / PACKAGES[name].path / "src" / "minitorch"
    if not namespace.is_dir():
        return []
    return sorted(p for p in namespace.iterdir() if p.name != "__pycache__")


def layer_of(name: str) -> str:
    """The subpackage name of a package: ``mt-autodiff`` -> ``autodiff``."""
    entries = subpackage_dirs(name)
    if len(entries) != 1 or not entries[0].is_dir():
        pytest.fail(f"{name} must ship exactly one folder in src/minitorch/, found {entries}")
    return entries[0].name


def source_files(name: str) -> list[Path]:
    return sorted((REPO_ROOT / PACKAGES[name].path / "src").rglob("*.py"))


def stdlib_only(name: str) -> bool:
    """True if the package and its required siblings need nothing from outside the repo."""
    return not any(PACKAGES[n].third_party for n in mr.dependency_closure(PACKAGES, [name]))


# ARCHITECTURE.md: "`pip install mt-autodiff` must not pull numpy".
STDLIB_ONLY = ("mt-operators", "mt-autodiff")


# Layout.


@pytest.mark.parametrize("name", STDLIB_ONLY)
def test_scalar_layers_need_only_the_standard_library(name):
    assert name in PACKAGES
    pulled = {
        n: PACKAGES[n].third_party
        for n in mr.dependency_closure(PACKAGES, [name])
        if PACKAGES[n].third_party
    }
    assert pulled == {}, f"pip install {name} would pull third-party packages: {pulled}"


def test_every_folder_under_packages_is_a_package():
    folders = {p.name for p in (REPO_ROOT / "packages").iterdir() if p.is_dir()}
    not_packages = sorted(folders - {p.path.name for p in PACKAGES.values()})
    assert not_packages == [], (
        f"packages/{not_packages} have no pyproject.toml: hatch's workspace (packages/*) "
        "refuses to start, and CI would not test them"
    )


def test_no_namespace_init_anywhere():
    strays = [
        path.relative_to(REPO_ROOT)
        for top in ("packages", "examples")
        for path in (REPO_ROOT / top).rglob("minitorch/__init__.py")
    ]
    assert strays == [], "minitorch is a PEP 420 namespace: a stray __init__.py hides other layers"


@pytest.mark.parametrize("name", NAMES)
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
    assert f'path = "src/minitorch/{layer_of(name)}/__about__.py"' in text
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


@pytest.mark.parametrize("name", NAMES)
def test_package_root_has_an_explicit_all(name):
    init = REPO_ROOT / PACKAGES[name].path / "src" / "minitorch" / layer_of(name) / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"), filename=str(init))
    stars = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
    ]
    assert stars == [], f"{init}: star imports on lines {stars}; import names explicitly"
    exported = None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            exported = ast.literal_eval(node.value)
    assert exported, f"{init} has no (non-empty, literal) __all__"
    assert all(isinstance(n, str) for n in exported)
    assert len(set(exported)) == len(exported), f"{init}: duplicate names in __all__"
    unbound = sorted(set(exported) - _bound_names(tree))
    assert unbound == [], f"{init}: __all__ names {unbound} that the module does not define"


# Imports.


@dataclass(frozen=True)
class Import:
    """One import found in a source file: the absolute module name and where."""

    module: str
    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.file.relative_to(REPO_ROOT)}:{self.line} imports {self.module}"


def _module_name(path: Path, src: Path) -> tuple[str, bool]:
    """Dotted name of a source file, and whether it is a package ``__init__``."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def imports_of(name: str) -> Iterator[Import]:
    """Every import in a package's sources, relative ones resolved to absolute names.

    ``importlib.import_module("...")`` calls with a literal name count too.
    """
    src = REPO_ROOT / PACKAGES[name].path / "src"
    for path in source_files(name):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module, is_package = _module_name(path, src)
        package_parts = module.split(".") if is_package else module.split(".")[:-1]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(alias.name, path, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    if node.level - 1 >= len(package_parts):
                        yield Import("." * node.level + (node.module or ""), path, node.lineno)
                        continue
                    base = package_parts[: len(package_parts) - (node.level - 1)]
                    absolute = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    absolute = node.module or ""
                if absolute == "minitorch":  # from minitorch import operators
                    for alias in node.names:
                        yield Import(f"minitorch.{alias.name}", path, node.lineno)
                else:
                    yield Import(absolute, path, node.lineno)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute | ast.Name)
                and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
                == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and not node.args[0].value.startswith(".")
            ):
                yield Import(node.args[0].value, path, node.lineno)


@pytest.mark.parametrize("name", NAMES)
def test_imports_only_declared_lower_layers(name):
    layer_to_package = {layer_of(n): n for n in NAMES}
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
        elif parts[1] not in layer_to_package:
            problems.append(f"{imp}: no package of this repository provides minitorch.{parts[1]}")
        elif layer_to_package[parts[1]] not in allowed:
            problems.append(
                f"{imp}: {layer_to_package[parts[1]]} is not a declared dependency of {name} "
                f"(it may use {', '.join(sorted(allowed))})"
            )
    assert problems == [], "\n".join(problems)


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
            _installed_requirements(mr.normalize_name(requirement.name), seen)


@pytest.mark.parametrize("name", NAMES)
def test_third_party_imports_are_declared(name):
    declared: set[str] = set()
    for member in mr.dependency_closure(PACKAGES, [name], optional=True):
        package = PACKAGES[member]
        direct = set(package.third_party)
        for extra in package.optional_third_party.values():
            direct.update(extra)
        for dist in direct:
            _installed_requirements(dist, declared)
    providers = importlib.metadata.packages_distributions()
    problems = []
    for imp in imports_of(name):
        top = imp.module.split(".")[0]
        if not top or top in {"minitorch", "__future__"} or top in sys.stdlib_module_names:
            continue
        dists = {mr.normalize_name(d) for d in providers.get(top, [])}
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
    for raw in PACKAGES[name].requirements:
        requirement = Requirement(raw)
        sibling = mr.normalize_name(requirement.name)
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


@pytest.mark.packaging
@pytest.mark.parametrize("name", NAMES)
def test_wheel_holds_only_its_layer(dists, name):
    layer = layer_of(name)
    stem = f"{name.replace('-', '_')}-{PACKAGES[name].version}"
    with zipfile.ZipFile(dists.wheel[name]) as archive:
        files = archive.namelist()
        metadata = archive.read(f"{stem}.dist-info/METADATA").decode()
    stray = [f for f in files if not f.startswith((f"minitorch/{layer}/", f"{stem}.dist-info/"))]
    assert stray == [], f"{dists.wheel[name].name} ships files outside minitorch/{layer}/"
    for required in REQUIRED_FILES:
        assert f"minitorch/{layer}/{required}" in files
    assert f"Version: {PACKAGES[name].version}\n" in metadata
    declared = {str(Requirement(r)) for r in PACKAGES[name].requirements}
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
    layer = layer_of(name)
    with tarfile.open(dists.sdist[name]) as archive:
        files = [m.name for m in archive.getmembers() if m.isfile()]
    prefix = f"{name.replace('-', '_')}-{PACKAGES[name].version}/"
    assert all(f.startswith(prefix) for f in files)
    inner = [f.removeprefix(prefix) for f in files]
    sources = [f for f in inner if f.startswith("src/")]
    stray = [f for f in sources if not f.startswith(f"src/minitorch/{layer}/")]
    assert stray == [], f"{dists.sdist[name].name} ships other layers' sources"
    assert {"pyproject.toml", "README.md", f"src/minitorch/{layer}/__about__.py"} <= set(inner)


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


@pytest.mark.packaging
@pytest.mark.parametrize("name", [n for n in NAMES if stdlib_only(n)])
def test_stdlib_layer_installs_offline_alone(dists, name, tmp_path):
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
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
    others = {mr.normalize_name(d["name"]) for d in installed} - {"pip", "setuptools"}
    assert others == closure, f"installing {name} brought {sorted(others)}"

    modules = [f"minitorch.{layer_of(n)}" for n in sorted(closure)]
    report = json.loads(_run(python, "-I", "-c", SMOKE, json.dumps(modules), cwd=tmp_path))
    prefix = Path(report["prefix"]).resolve()
    for module, file in report["files"].items():
        assert prefix in Path(file).resolve().parents, f"{module} was imported from {file}"
    assert report["versions"] == {f"minitorch.{layer_of(n)}": PACKAGES[n].version for n in closure}
    assert report["numpy_findable"] is False
    assert report["numpy_imported"] is False
    if "mt-autodiff" in closure:
        assert report["derivatives"] == pytest.approx([3.5, 2.0])
