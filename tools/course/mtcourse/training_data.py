"""The fixed data subsets the training tasks are graded on: the examples' ``subset`` module.

The starter ships ``mt_examples/subset.py`` (``python -m mt_examples.graded task4_5`` makes
the subset with it); the course tool loads the same file from ``examples/`` without
installing anything, so a student's local run and grading train on the same bytes.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

_PATH = Path(__file__).resolve().parents[3] / "examples" / "mt_examples" / "subset.py"
_spec = importlib.util.spec_from_file_location("_mt_examples_subset", _PATH)
assert _spec is not None
assert _spec.loader is not None
_subset = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _subset  # dataclasses and pickling look modules up by name
_spec.loader.exec_module(_subset)

GRADED: dict[str, int] = _subset.GRADED
SUBSETS: dict[str, tuple[str, str]] = _subset.SUBSETS
DataError: type[ValueError] = _subset.DataError
make_subset: Callable[[Path, Path, Mapping[str, int]], Path] = _subset.make_subset
source_dir: Callable[[Path | None], Path | None] = _subset.source_dir

__all__ = ["GRADED", "SUBSETS", "DataError", "make_subset", "source_dir"]
