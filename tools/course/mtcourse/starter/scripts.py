"""The training scripts a starter carries (``mt_examples/``) and their launchers."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..config import REPO, Calendar, Layer
from ..layers import script_blocks
from ..markers import render

__all__ = ["SCRIPT_HELPERS", "copy_scripts", "write_scripts"]

# The examples' helpers the training scripts import: the grader uses the course's copies.
SCRIPT_HELPERS = ("__init__.py", "support.py", "toy.py", "graded.py", "subset.py")


def write_scripts(
    layer: Layer, cal: Calendar, where: Path, keep: frozenset[str] = frozenset()
) -> Path | None:
    """Write ``where/mt_examples/``: the layer's training scripts and the helpers they import.

    Each script's solution blocks are replaced (as in the package) but those of the tasks
    in ``keep``. Returns ``where``, or None if the layer has no training scripts.
    """
    blocks = script_blocks(layer, cal)
    if not blocks:
        return None
    pkg = where / "mt_examples"
    pkg.mkdir(parents=True)
    helpers = REPO / "examples" / "mt_examples"
    for name in SCRIPT_HELPERS:
        shutil.copy2(helpers / name, pkg / name)
    for path, bl in blocks.items():
        (pkg / path.name).write_text(render(path.read_text(encoding="utf-8"), bl, keep), "utf-8")
    return where


def copy_scripts(
    layer: Layer, cal: Calendar, out: Path, keep: frozenset[str] = frozenset()
) -> list[str]:
    """Copy the layer's training scripts into the starter, their network stubbed.

    ``mt_examples/`` gets the scripts (see ``write_scripts``) and the starter's root gets
    their ``train_*.py`` launchers. Returns the launchers' names.
    """
    if write_scripts(layer, cal, out, keep) is None:
        return []
    launchers = []
    for script in cal.scripts_of(layer.name):
        launcher = REPO / "examples" / Path(script).name
        if launcher.is_file():
            shutil.copy2(launcher, out / launcher.name)
            launchers.append(launcher.name)
    return launchers
