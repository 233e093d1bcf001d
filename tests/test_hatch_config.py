"""The workspace's hatch.toml: what its environments install and how its scripts take options.

The scripts are run here as hatch runs them: ``{args}`` replaced by the arguments, quoted,
and the command given to the shell.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
HATCH: dict[str, Any] = tomllib.loads((ROOT / "hatch.toml").read_text(encoding="utf-8"))
ENVS: dict[str, Any] = HATCH["envs"]


def skips_install(name: str) -> bool:
    """Whether hatch installs no project into environment ``name`` (following templates)."""
    seen = set()
    while name not in seen:
        seen.add(name)
        env = ENVS.get(name, {})
        if env.get("detached") or "skip-install" in env:
            return bool(env.get("detached") or env["skip-install"])
        name = env.get("template", "default")  # hatch's templates: default unless named
    return False


@pytest.mark.parametrize("name", sorted(ENVS))
def test_no_environment_installs_the_repository_root(name: str) -> None:
    """The root is not a package: an environment that installed it (the docs environment,
    whose template is itself, lacked the default's ``skip-install``) got a package named
    ``packages`` 0.0.0 in development mode."""
    assert skips_install(name), f"[envs.{name}] installs the repository root: skip-install = true"


def run_script(command: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` as hatch runs it, with this interpreter for ``python`` and ``pytest``."""
    line = command.replace("{args}", " ".join(shlex.quote(a) for a in args))
    first, _, rest = line.partition(" ")
    python = shlex.quote(sys.executable)
    program = {"python": python, "pytest": f"{python} -m pytest"}.get(first, first)
    return subprocess.run(
        f"{program} {rest}", shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_pkg_takes_the_layer_then_pytests_options() -> None:
    """``hatch run test:pkg cuda -q`` failed: ``-q`` was pasted into the path
    (``pytest packages/mt-{args}/tests`` is ``packages/mt-cuda -q/tests``)."""
    pkg = ENVS["test"]["scripts"]["pkg"]
    options = ["--collect-only", "-p", "no:cacheprovider", "-k", "div", "-q"]  # -q last
    done = run_script(pkg, ["operators", *options])
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected, done.stdout
    assert all(line.startswith("packages/mt-operators/tests/") for line in collected), collected
    assert all("div" in line.split("::")[-1] for line in collected), collected
    plain = run_script(pkg, ["root", "--collect-only", "-p", "no:cacheprovider", "-q"])
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert "packages/mt-root/tests/" in plain.stdout


@pytest.mark.parametrize("args", [[], ["tensors"], ["-q"]])
def test_pkg_without_a_known_layer_says_which_there_are(args: list[str]) -> None:
    done = run_script(ENVS["test"]["scripts"]["pkg"], args)
    assert done.returncode == 2
    assert "usage: hatch run test:pkg LAYER [pytest options]" in done.stderr
    assert "operators, root, tensor" in done.stderr


def test_the_docs_build_is_not_preceded_by_the_themes_banner() -> None:
    """mkdocs-material's end-of-life banner (a dozen lines) printed before every build."""
    assert ENVS["docs"]["env-vars"]["NO_MKDOCS_2_WARNING"] == "1"
