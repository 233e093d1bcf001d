"""`hatch run dist`, then one layer installed from the wheels into a fresh venv (issue 13).

The test runs the ``dist`` script exactly as hatch.toml defines it, in a copy of the
packages, then ``pip install --no-index --find-links dist mt-fast`` in a new virtual
environment and trains a small model there with the fast backend, in the course's style.

The README's command has no ``--no-index``: there pip takes numpy and numba from the
index. Here nothing is downloaded: the venv sees this environment's own numpy, numba and
llvmlite (and nothing else of it) through a ``.pth`` file, so pip finds them installed and
``--no-index`` proves the sibling wheels in dist/ are all mt-fast needs from the checkout.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / ".github" / "scripts"))
mr = importlib.import_module("monorepo")
PACKAGES = mr.load_packages(REPO_ROOT)

TRAIN = """
import json, sys
import minitorch

backend = minitorch.TensorBackend(minitorch.FastOps)
data = minitorch.datasets["simple"](40, seed=0)
x = minitorch.tensor(data.X, backend=backend)
sign = minitorch.tensor([[2.0 * y - 1.0] for y in data.y], backend=backend)


class Logistic(minitorch.Module):
    def __init__(self):
        super().__init__()
        w = minitorch.tensor([[0.1], [-0.1]], backend=backend, requires_grad=True)
        self.w = minitorch.Parameter(w)
        self.b = minitorch.Parameter(minitorch.tensor([0.0], backend=backend, requires_grad=True))

    def forward(self, x):
        return x @ self.w.value + self.b.value


model = Logistic()
optimizer = minitorch.SGD(model.parameters(), lr=2.0)
losses = []
for _ in range(15):
    optimizer.zero_grad()
    loss = -(model(x) * sign).sigmoid().log().mean()  # binary cross-entropy
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
names = ("minitorch", "minitorch.fast", "minitorch.tensor", "numba")
print(json.dumps({
    "losses": losses,
    "files": {name: sys.modules[name].__file__ for name in names},
    "prefix": sys.prefix,
}))
"""


def _installed_closure(dist: str, seen: set[str]) -> None:
    """Add ``dist`` and what it requires (as installed here) to ``seen``."""
    if dist in seen:
        return
    seen.add(dist)
    for raw in importlib.metadata.requires(dist) or []:
        requirement = Requirement(raw)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            _installed_closure(canonicalize_name(requirement.name), seen)


def _share(dists: set[str], into: Path) -> Path:
    """A folder of links to the installed files of ``dists`` (packages and metadata)."""
    into.mkdir()
    for name in sorted(dists):
        distribution = importlib.metadata.distribution(name)
        tops = {Path(str(f)).parts[0] for f in distribution.files or []}
        for top in sorted(tops - {".."}):
            target = Path(str(distribution.locate_file(top)))
            if target.exists() and not (into / top).exists():
                (into / top).symlink_to(target)
    return into


def _run(args: list[str | Path], cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


@pytest.mark.packaging
def test_dist_then_pip_install_mt_fast_trains(tmp_path):
    # 1. hatch run dist, in a copy of the packages (the checkout's dist/ stays untouched).
    hatch = tomllib.loads((REPO_ROOT / "hatch.toml").read_text(encoding="utf-8"))
    command = hatch["envs"]["default"]["scripts"]["dist"].replace(" {args}", "")
    work = tmp_path / "checkout"
    shutil.copytree(
        REPO_ROOT / "packages",
        work / "packages",
        ignore=shutil.ignore_patterns("tests", "__pycache__", "*.nbi", "*.nbc"),
    )
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    build = subprocess.run(command, shell=True, cwd=work, env=env, capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    built = {parse_wheel_filename(p.name)[0] for p in (work / "dist").glob("*.whl")}
    assert built == set(PACKAGES), "hatch run dist builds one wheel per package"

    # 2. A fresh venv that sees only this environment's numpy/numba/llvmlite.
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp_path, env)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    third_party: set[str] = set()
    for name in mr.dependency_closure(PACKAGES, ["mt-fast"]):
        for dist in PACKAGES[name].dependencies(siblings=False):
            _installed_closure(dist, third_party)
    shared = _share(third_party, tmp_path / "shared")
    site = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path, env
    )
    Path(site.strip(), "shared_from_the_test_env.pth").write_text(f"{shared}\n")

    # 3. The README's command (offline: nothing but dist/).
    clean = {k: v for k, v in env.items() if not k.startswith(("PIP_", "PYTHON"))}
    clean.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    pip = [python, "-m", "pip", "install", "--no-index", "--find-links", work / "dist", "mt-fast"]
    _run(pip, tmp_path, clean)
    listed = json.loads(_run([python, "-m", "pip", "list", "--format=json"], tmp_path, clean))
    installed = {canonicalize_name(d["name"]) for d in listed}
    closure = mr.dependency_closure(PACKAGES, ["mt-fast"])
    assert {n for n in installed if n in PACKAGES} == closure

    # 4. Train a few steps with the fast backend, outside the checkout.
    report = json.loads(_run([python, "-I", "-c", TRAIN], tmp_path, clean))
    prefix = Path(report["prefix"]).resolve()
    for module in ("minitorch", "minitorch.fast", "minitorch.tensor"):
        assert prefix in Path(report["files"][module]).resolve().parents, report["files"]
    losses = report["losses"]
    assert all(b < a for a, b in itertools.pairwise(losses)), losses  # every step lowers it
    assert losses[-1] < 0.9 * losses[0], losses
