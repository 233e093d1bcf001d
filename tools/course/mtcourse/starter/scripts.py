"""The training scripts a starter carries (``mt_examples/``) and their launchers."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..config import REPO, Calendar, Layer
from ..layers import script_blocks
from ..markers import render

__all__ = ["EXAMPLES", "copy_scripts", "script_helpers", "write_scripts"]

EXAMPLES = REPO / "examples" / "mt_examples"
"""What a starter ships of the examples: its training scripts and the helpers they import."""


def script_helpers(cal: Calendar) -> tuple[str, ...]:
    """The files of ``examples/mt_examples/`` that are not a training script.

    The folder holds only what starters ship (benchmarks, the explorer and the tests'
    helpers live beside it), so a starter with training scripts gets every one of these:
    the grader uses the course's copies.
    """
    scripts = {Path(s).name for s in cal.scripts}
    return tuple(sorted(p.name for p in EXAMPLES.glob("*.py") if p.name not in scripts))


def write_scripts(
    layer: Layer, cal: Calendar, where: Path, keep: frozenset[str] = frozenset()
) -> Path | None:
    """Write ``where/mt_examples/``: the layer's training scripts and the helpers they import.

    Each script's solution blocks are replaced (as in the package) but those of the tasks
    in ``keep``, which also get their files that are not code (``submitted-files``).
    Returns ``where``, or None if the layer has no training scripts.
    """
    blocks = script_blocks(layer, cal)
    if not blocks:
        return None
    pkg = where / "mt_examples"
    pkg.mkdir(parents=True)
    for name in script_helpers(cal):
        shutil.copy2(EXAMPLES / name, pkg / name)
    for path, bl in blocks.items():
        (pkg / path.name).write_text(render(path.read_text(encoding="utf-8"), bl, keep), "utf-8")
    # A kept task's files that are not code (the course's export of task 0.5's weights):
    # what the solution has; a student's starter gets none.
    for task, files in layer.submitted_files.items():
        if task in keep:
            for rel in files:
                shutil.copy2(EXAMPLES.parent / rel, where / rel)
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
