"""The course's tests of a layer as grading and checking run them, and the lower layers' wheels."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from .config import REPO, Calendar, Layer, root_pyproject
from .layers import CourseError, check_version, ignore_caches, solution_only_tests
from .runner import build_wheel
from .training_data import GRADED, DataError, make_subset, source_dir

__all__ = ["TRAINING_FIXTURES", "data_subset", "suite_tree", "wheelhouse"]

#: The fixtures every layer's training tests share, appended to a graded copy's conftest.py.
TRAINING_FIXTURES = REPO / "tools" / "course" / "training" / "conftest.py"

# Checking and grading need the verdict, not the smallest failing example: no shrinking,
# no hunting for more bugs once one is found, no example database between runs.
_HYPOTHESIS_PROFILE = """
from hypothesis import Phase  # noqa: E402

settings.register_profile(
    "course",
    parent=settings.get_profile("ci"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    report_multiple_bugs=False,
    database=None,
)
settings.load_profile("course")
"""


def suite_tree(
    layer: Layer,
    where: Path,
    *,
    hidden: bool,
    solution: bool = False,
    data: Path | None = None,
) -> Path:
    """A fresh copy of the repository's tests of ``layer`` (and hidden ones) to run.

    The solution-only tests (of code the starter leaves out) are copied for ``solution``.
    The course's training tests join the public ones in ``tests/`` (they are graded like
    them, but not in the starter: they need the course's data and, for nn, its fast
    kernels), with their fixtures (``TRAINING_FIXTURES``) in the generated ``conftest.py``,
    and ``data`` (the training data subset, if any) becomes ``data/``.
    """
    where.mkdir(parents=True)
    ignore = ignore_caches if solution else solution_only_tests(layer)
    shutil.copytree(layer.path / "tests", where / "tests", ignore=ignore)
    if layer.training_tests.is_dir():
        shutil.copytree(
            layer.training_tests, where / "tests", ignore=ignore_caches, dirs_exist_ok=True
        )
    if data is not None:
        shutil.copytree(data, where / "data")
    if hidden and layer.hidden_tests.is_dir():
        shutil.copytree(layer.hidden_tests, where / "hidden", ignore=ignore_caches)
    conftest = (REPO / "conftest.py").read_text(encoding="utf-8") + _HYPOTHESIS_PROFILE
    if layer.training_tests.is_dir():  # the training tests' fixtures
        conftest += "\n" + TRAINING_FIXTURES.read_text(encoding="utf-8")
    (where / "conftest.py").write_text(conftest, "utf-8")
    ini = root_pyproject()["tool"]["pytest"]["ini_options"]
    markers = "".join(f"    {m}\n" for m in ini["markers"])
    (where / "pytest.ini").write_text(
        "[pytest]\naddopts = --import-mode=importlib -ra --strict-markers\n"
        f"xfail_strict = true\nmarkers =\n{markers}"
    )
    return where


def wheelhouse(cal: Calendar, layers: Iterable[str], where: Path) -> Path:
    """Build the wheels of ``layers``, and of mt-root that every layer requires, into ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    build_wheel(REPO / "packages" / "mt-root", where)
    for name in layers:
        layer = cal.layer(name)
        check_version(layer)
        build_wheel(layer.path, where)
    return where


def data_subset(layer: Layer, where: Path, source: Path | None, *, required: bool) -> Path | None:
    """Write the layer's training data subset (course.toml's ``training-data``) into ``where``.

    Returns None if the layer needs none, or (unless ``required``) if there is no real data
    to make it from (``source``, else ``$MINITORCH_DATA``): its training tests then skip.

    Raises:
        CourseError: if the subset is ``required`` and cannot be made.
    """
    if not layer.training_data:
        return None
    if layer.training_data != GRADED:
        raise CourseError(
            f"course.toml's training-data of {layer.name} ({layer.training_data}) is not "
            f"GRADED of examples/mt_examples/subset.py ({GRADED}): the starter's graded "
            "command would train on other data than grading"
        )
    src = source_dir(source)
    if src is None:
        if required:
            raise CourseError(
                f"the {layer.name} training tests need a subset of the real data: set "
                "MINITORCH_DATA (or --data-dir) to a folder with mnist/, sst2/ and glove/"
            )
        return None
    try:
        return make_subset(src, where, layer.training_data)
    except DataError as e:
        if required:
            raise CourseError(str(e)) from e
        print(f"note: no training data subset for {layer.name}: {e}")
        return None
