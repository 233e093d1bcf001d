"""The starter's ``pyproject.toml``: the layer's own, with the lower layers pinned."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from packaging.requirements import Requirement

from ..config import Calendar, Layer, root_pyproject
from ..layers import written_test_blocks

__all__ = ["student_pyproject"]


def _pin(requirements: Iterable[str], cal: Calendar) -> list[str]:
    """Pin every sibling requirement to the solution version the calendar names."""
    out = []
    for text in requirements:
        req = Requirement(text)
        name = req.name.removeprefix("mt-")
        if req.name.startswith("mt-") and req.name != "mt-root":  # mt-root keeps its range
            extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
            out.append(f"{req.name}{extras}=={cal.layer(name).solution_version}")
        else:
            out.append(text)
    return out


def student_pyproject(layer: Layer, cal: Calendar, week: int | None) -> dict[str, Any]:
    """The starter's ``pyproject.toml``: the layer's own, lower layers pinned, a test extra."""
    data = layer.pyproject()
    project = data["project"]
    project["dependencies"] = _pin(project.get("dependencies", []), cal)
    extras = project.setdefault("optional-dependencies", {})
    for key, reqs in extras.items():
        extras[key] = _pin(reqs, cal)
    extras.setdefault("test", ["pytest>=8", "hypothesis>=6.100"])
    if week is not None:
        project["description"] = f"{project.get('description', '')} (student starter, week {week})"
    data["tool"]["hatch"]["build"]["targets"].pop("sdist", None)
    root = root_pyproject()["tool"]
    pytest_ini = dict(root["pytest"]["ini_options"])
    pytest_ini["testpaths"] = ["tests"]
    pytest_ini["markers"] = [m for m in pytest_ini["markers"] if re.match(r"task\d", m)]
    ruff = dict(root["ruff"])
    ruff["src"] = ["src"]
    lint = dict(ruff["lint"])
    prefix = f"packages/{layer.package}/"
    lint["per-file-ignores"] = {
        k.removeprefix(prefix): v
        for k, v in lint.get("per-file-ignores", {}).items()
        if k.startswith(("**", prefix))
    }
    # The training scripts (mt_examples/, train_*.py) keep the examples' exemptions.
    for key, value in root_pyproject()["tool"]["ruff"]["lint"].get("per-file-ignores", {}).items():
        if key == "examples/**":
            lint["per-file-ignores"]["mt_examples/**"] = value
            lint["per-file-ignores"]["train_*.py"] = value
    # The tests a test-writing task hands out import what their bodies will use.
    for path in written_test_blocks(layer):
        lint["per-file-ignores"][path.relative_to(layer.path).as_posix()] = ["F401"]
    ruff["lint"] = lint
    ruff.pop("format", None)
    data["tool"]["pytest"] = {"ini_options": pytest_ini}
    data["tool"]["ruff"] = ruff
    return data
