import os
import sys
import tempfile
from pathlib import Path

import pytest

# The course tool is a folder of modules run as a script, not an installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Calibrations are kept between gradings (``grade.calibration_cache``): the session's own
# cache, so a test measures the calibration it checks, never one of an earlier run.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="mtcourse-test-cache-")


@pytest.fixture(autouse=True)
def own_calibration_cache(tmp_path_factory, monkeypatch):
    """Each test its own cache (the session's grading environment keeps the session's)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def operators_env(tmp_path_factory):
    """mt-operators' grading environment, built and calibrated once for the session.

    Building one takes a venv and a calibration of every task (task 0.2's calibration
    runs the course's tests once per mutant); the tests that only grade with it share it.
    """
    from mtcourse.config import load_calendar
    from mtcourse.grade import grading_env

    return grading_env("operators", tmp_path_factory.mktemp("operators-env"), cal=load_calendar())
