"""Tests of .github/scripts/monorepo.py: package discovery, the path-aware CI matrix, release tags.

Most tests build a small fake repository in a temporary folder that mirrors the planned
layering (operators <- autodiff <- tensor <- fast/cuda <- nn with a ``cuda`` extra), so they
do not depend on which layers exist yet; a few check the real repository and workflows.
"""

from __future__ import annotations

import importlib
import io
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / ".github" / "scripts" / "monorepo.py"
WORKFLOWS = REPO_ROOT / ".github" / "workflows"


# The CI script is a plain file, not a package: import it from its folder.
sys.path.insert(0, str(SCRIPT.parent))
mr = importlib.import_module("monorepo")

# name -> (requirements, optional dependencies, requires-python)
LAYERS: dict[str, tuple[list[str], dict[str, list[str]], str]] = {
    "operators": ([], {}, ">=3.10"),
    "autodiff": (["mt-operators>=0.1,<0.2"], {}, ">=3.10"),
    "tensor": (["mt-autodiff>=0.1,<0.2", "numpy>=1.24"], {"test": ["pytest>=8"]}, ">=3.10"),
    "fast": (["mt-tensor>=0.1,<0.2", "numba>=0.59"], {}, ">=3.10"),
    "cuda": (["mt-tensor>=0.1,<0.2", "numba-cuda>=0.4"], {}, ">=3.10"),
    "nn": (["mt-fast>=0.1,<0.2"], {"cuda": ["mt-cuda>=0.1,<0.2"]}, ">=3.11"),
}


def write_package(
    root: Path,
    layer: str,
    requirements: list[str],
    optional: dict[str, list[str]] | None = None,
    requires_python: str = ">=3.10",
    version: str = "0.1.0",
) -> Path:
    directory = root / "packages" / f"mt-{layer}"
    about = directory / "src" / "minitorch" / layer / "__about__.py"
    about.parent.mkdir(parents=True)
    about.write_text(f'"""Version."""\n\n__version__ = "{version}"\n')
    extras = "".join(f"{k} = {json.dumps(v)}\n" for k, v in (optional or {}).items())
    (directory / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [project]
            name = "mt-{layer}"
            dynamic = ["version"]
            requires-python = "{requires_python}"
            dependencies = {json.dumps(requirements)}

            [project.optional-dependencies]
            """
        )
        + extras
        + f'\n[tool.hatch.version]\npath = "src/minitorch/{layer}/__about__.py"\n'
    )
    return directory


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for layer, (requirements, optional, requires_python) in LAYERS.items():
        write_package(tmp_path, layer, requirements, optional, requires_python)
    return tmp_path


@pytest.fixture
def packages(repo: Path) -> dict[str, object]:
    return mr.load_packages(repo)


# Discovery.


def test_load_packages_reads_siblings_extras_and_versions(packages):
    assert list(packages) == sorted(f"mt-{layer}" for layer in LAYERS)
    nn = packages["mt-nn"]
    assert nn.dependencies(siblings=True) == {"mt-fast"}
    assert nn.dependencies("cuda", siblings=True) == {"mt-cuda"}
    assert nn.dependencies(None, siblings=True) == {"mt-fast", "mt-cuda"}
    assert nn.sibling_extras == ["cuda"]
    assert not nn.requires_python.contains("3.10")
    tensor = packages["mt-tensor"]
    assert tensor.dependencies(siblings=True) == {"mt-autodiff"}
    assert tensor.dependencies(siblings=False) == {"numpy"}
    assert tensor.dependencies("test", siblings=False) == {"pytest"}
    assert tensor.sibling_extras == []
    assert str(tensor.path) == "packages/mt-tensor"
    assert tensor.version == "0.1.0"


def test_sibling_names_are_normalized(repo):
    # packaging reads the requirement: case, separators, extras and markers do not hide a
    # sibling edge.
    write_package(repo, "extra", ["Mt_Autodiff[x] >=0.1 ; python_version>'3'"])
    assert mr.load_packages(repo)["mt-extra"].dependencies(siblings=True) == {"mt-autodiff"}


def test_unknown_mt_dependency_is_an_error(repo):
    write_package(repo, "extra", ["mt-tensr>=0.1,<0.2"])
    with pytest.raises(mr.RepoError, match=r"'mt-tensr'.*not a package under packages/"):
        mr.load_packages(repo)


def test_missing_version_file_is_an_error(repo):
    (repo / "packages/mt-fast/src/minitorch/fast/__about__.py").write_text("VERSION = 1\n")
    with pytest.raises(mr.RepoError, match="__version__"):
        mr.load_packages(repo)


def test_cycle_is_named(tmp_path):
    write_package(tmp_path, "a", ["mt-b"])
    write_package(tmp_path, "b", [], {"x": ["mt-a"]})
    with pytest.raises(mr.RepoError, match=r"cycle: mt-(a|b) -> mt-(b|a) -> mt-\1"):
        mr.load_packages(tmp_path)


def test_topological_order_puts_dependencies_first(packages):
    order = mr.topological_order(packages)
    for name, package in packages.items():
        for dep in package.dependencies(None, siblings=True):
            assert order.index(dep) < order.index(name), (dep, name)


def test_dependency_closure(packages):
    assert mr.dependency_closure(packages, ["mt-nn"]) == {
        "mt-nn",
        "mt-fast",
        "mt-tensor",
        "mt-autodiff",
        "mt-operators",
    }
    assert "mt-cuda" in mr.dependency_closure(packages, ["mt-nn"], optional=True)
    with pytest.raises(mr.RepoError, match="unknown package 'mt-nope'"):
        mr.dependency_closure(packages, ["mt-nope"])


# Which packages a change re-tests.


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (["packages/mt-nn/src/minitorch/nn/conv.py"], {"nn"}),
        (["packages/mt-cuda/tests/test_cuda.py"], {"cuda", "nn"}),
        (["packages/mt-fast/README.md"], {"fast", "nn"}),
        (["packages/mt-tensor/pyproject.toml"], {"tensor", "fast", "cuda", "nn"}),
        (["packages/mt-operators/src/minitorch/operators/scalar.py"], set(LAYERS)),
        (["packages/mt-fast/x.py", "packages/mt-autodiff/y.py"], set(LAYERS) - {"operators"}),
        (["examples/train_scalar.py", "README.md", ".ci/run"], set()),
        ([], set()),
    ],
)
def test_affected_packages_follow_reverse_dependencies(packages, changed, expected):
    assert mr.affected_packages(packages, changed) == {f"mt-{x}" for x in expected}


@pytest.mark.parametrize(
    "changed",
    [
        "hatch.toml",
        "pyproject.toml",
        "conftest.py",
        ".github/workflows/ci.yml",
        ".github/scripts/monorepo.py",
        "tests/test_layering.py",
        "packages/mt-new/pyproject.toml",  # a package being added or removed
    ],
)
def test_root_files_retest_everything(packages, changed):
    assert mr.affected_packages(packages, ["examples/a.py", changed]) == set(packages)


def test_root_trigger_prefixes_do_not_overmatch(packages):
    # "tests/" is a folder trigger: a package's tests folder or a similar name is not.
    assert mr.affected_packages(packages, ["testsuite.txt", "pyproject.toml.bak"]) == set()
    assert mr.affected_packages(packages, ["packages/mt-nn/tests/test_x.py"]) == {"mt-nn"}


# Installing and the matrix.


def install_of(packages, name):
    (entry,) = mr.build_matrix(packages, [name], ["3.12"])["include"]
    return entry["install"].split()


def test_install_targets_are_sibling_directories_in_one_command(packages):
    assert install_of(packages, "mt-operators") == ["./packages/mt-operators"]
    assert install_of(packages, "mt-autodiff") == [
        "./packages/mt-autodiff",
        "./packages/mt-operators",
    ]
    nn = install_of(packages, "mt-nn")
    assert nn[0] == "./packages/mt-nn[cuda]"
    assert sorted(nn[1:]) == sorted(
        f"./packages/mt-{x}" for x in ("operators", "autodiff", "tensor", "fast", "cuda")
    )
    # Only siblings-adding extras are selected: mt-tensor's "test" extra is not.
    assert install_of(packages, "mt-tensor")[0] == "./packages/mt-tensor"


def test_matrix_crosses_packages_with_supported_pythons(packages):
    matrix = mr.build_matrix(packages, ["mt-nn", "mt-autodiff"], ["3.10", "3.11", "3.12"])
    entries = [(e["package"], e["python"]) for e in matrix["include"]]
    assert entries == [
        ("mt-autodiff", "3.10"),
        ("mt-autodiff", "3.11"),
        ("mt-autodiff", "3.12"),
        ("mt-nn", "3.11"),  # mt-nn requires Python >= 3.11 in the fake repo
        ("mt-nn", "3.12"),
    ]
    autodiff = matrix["include"][0]
    assert autodiff["install"] == "./packages/mt-autodiff ./packages/mt-operators"
    assert autodiff["path"] == "packages/mt-autodiff"
    assert mr.build_matrix(packages, [], ["3.12"]) == {"include": []}


def test_cuda_simulator_only_where_a_cuda_toolchain_is_installed(packages):
    matrix = mr.build_matrix(packages, set(packages), ["3.12"])
    cudasim = {e["package"]: e["cudasim"] for e in matrix["include"]}
    assert cudasim == {
        "mt-operators": "0",
        "mt-autodiff": "0",
        "mt-tensor": "0",
        "mt-fast": "0",
        "mt-cuda": "1",
        "mt-nn": "1",  # tested with its cuda extra
    }


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("", ["3.10", "3.13"]), (">=3.10", ["3.10", "3.13"]), (">=3.11,<3.13", [])],
)
def test_requires_python_filters_the_matrix(tmp_path, spec, expected):
    write_package(tmp_path, "solo", [], requires_python=spec)
    matrix = mr.build_matrix(mr.load_packages(tmp_path), ["mt-solo"], ["3.10", "3.13"])
    assert [e["python"] for e in matrix["include"]] == expected


# Command line.


def test_cli_matrix_from_changed_files(repo, tmp_path, capsys):
    changed = tmp_path / "changed.txt"
    changed.write_text("packages/mt-cuda/src/minitorch/cuda/ops.py\nexamples/x.py\n")
    output = tmp_path / "github_output"
    status = mr.main(
        [
            "matrix",
            "--changed-files",
            str(changed),
            "--python",
            "3.12",
            "--github-output",
            str(output),
        ],
        root=repo,
    )
    assert status == 0
    out, err = capsys.readouterr()
    matrix = json.loads(out)
    assert [e["package"] for e in matrix["include"]] == ["mt-cuda", "mt-nn"]
    assert "testing mt-cuda, mt-nn" in err
    lines = output.read_text().splitlines()
    assert lines == [f"matrix={out.strip()}", "any=true"]


def test_cli_matrix_with_nothing_affected(repo, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("README.md\n"))
    output = tmp_path / "github_output"
    assert mr.main(["matrix", "--changed-files", "-", "--github-output", str(output)], repo) == 0
    assert json.loads(capsys.readouterr().out) == {"include": []}
    assert output.read_text().splitlines()[-1] == "any=false"


def test_cli_matrix_all(repo, capsys):
    assert mr.main(["matrix", "--all", "--python", "3.11,3.12"], root=repo) == 0
    matrix = json.loads(capsys.readouterr().out)
    assert len(matrix["include"]) == 2 * len(LAYERS)


def test_cli_reports_errors_on_one_line(repo, capsys):
    write_package(repo, "bad", ["mt-missing"])
    assert mr.main(["matrix", "--all"], root=repo) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert "mt-missing" in err


# Release tags and dist folders.


def test_parse_release_tag():
    assert mr.parse_release_tag("mt-autodiff-v0.1.0") == ("mt-autodiff", "0.1.0")
    assert mr.parse_release_tag("refs/tags/mt-nn-v1.2.3rc1") == ("mt-nn", "1.2.3rc1")
    assert mr.parse_release_tag("mt-v2-layer-v0.1.0") == ("mt-v2-layer", "0.1.0")


@pytest.mark.parametrize(
    "tag", ["v0.1.0", "mt-autodiff-0.1.0", "autodiff-v0.1.0", "mt-autodiff-v", "mt-x-v1.0-1"]
)
def test_malformed_release_tags_are_rejected(tag):
    with pytest.raises(mr.RepoError, match=re.escape("not of the form mt-<x>-vA.B.C")):
        mr.parse_release_tag(tag)


def test_release_info_checks_the_version(packages):
    assert mr.release_info(packages, "mt-fast-v0.1.0").name == "mt-fast"
    with pytest.raises(mr.RepoError, match=r"says version 0\.2\.0 but .* at version 0\.1\.0"):
        mr.release_info(packages, "mt-fast-v0.2.0")
    with pytest.raises(mr.RepoError, match="'mt-slow', which is not under packages/"):
        mr.release_info(packages, "mt-slow-v0.1.0")


def test_cli_release_tag_writes_outputs(repo, tmp_path, capsys):
    output = tmp_path / "github_output"
    assert mr.main(["release-tag", "mt-nn-v0.1.0", "--github-output", str(output)], repo) == 0
    assert output.read_text().splitlines() == [
        "package=mt-nn",
        "version=0.1.0",
        "path=packages/mt-nn",
    ]
    assert mr.main(["release-tag", "mt-nn-v9.9.9"], root=repo) == 1
    assert "bump __about__.py" in capsys.readouterr().err


def test_check_dists(tmp_path):
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "mt_autodiff-0.1.0.tar.gz").write_text("")
    (dist / "mt_autodiff-0.1.0-py3-none-any.whl").write_text("")
    assert [p.name for p in mr.check_dists(dist, "mt-autodiff", "0.1.0")] == [
        "mt_autodiff-0.1.0.tar.gz",
        "mt_autodiff-0.1.0-py3-none-any.whl",
    ]
    (dist / "mt_operators-0.1.0-py3-none-any.whl").write_text("")
    with pytest.raises(mr.RepoError, match=re.escape("unexpected files: mt_operators-0.1.0-py3")):
        mr.check_dists(dist, "mt-autodiff", "0.1.0")
    with pytest.raises(
        mr.RepoError, match=re.escape("expected one sdist of mt-autodiff 0.2.0, found 0")
    ):
        mr.check_dists(dist, "mt-autodiff", "0.2.0")


# The real repository and its workflows.


def test_real_repository_loads_and_every_package_gets_a_matrix_entry():
    packages = mr.load_packages(REPO_ROOT)
    assert {"mt-operators", "mt-autodiff"} <= set(packages)
    matrix = mr.build_matrix(packages, set(packages))
    assert {e["package"] for e in matrix["include"]} == set(packages)


def _workflow_texts() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(WORKFLOWS.glob("*.yml"))}


def test_workflow_actions_are_pinned_to_commits_with_a_version_comment():
    uses = re.compile(r"^\s*(?:-\s*)?uses:\s*(\S+)(.*)$", re.MULTILINE)
    found = 0
    for name, text in _workflow_texts().items():
        for action, rest in uses.findall(text):
            found += 1
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", action), (name, action)
            assert re.fullmatch(r"\s*# v\d+(\.\d+)*", rest), (name, action, rest)
    assert found >= 5


def test_ci_installs_the_test_tools_hatch_uses():
    hatch = tomllib.loads((REPO_ROOT / "hatch.toml").read_text(encoding="utf-8"))
    tools = [
        r
        # The test env inherits the default env's dependencies (pytest, hypothesis).
        for r in hatch["envs"]["default"]["dependencies"]
        if Requirement(r).name in {"pytest", "hypothesis"}
    ]
    ci = _workflow_texts()["ci.yml"]
    assert len(tools) == 2
    for requirement in tools:
        assert f'"{requirement}"' in ci, f"ci.yml should install {requirement} like hatch.toml"


def test_ci_python_versions_match_the_script_default():
    ci = _workflow_texts()["ci.yml"]
    assert f'PYTHON_VERSIONS: "{",".join(mr.PYTHON_VERSIONS)}"' in ci
