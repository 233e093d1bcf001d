"""Shared helpers of the explorer's tests (this folder is put on ``sys.path`` by conftest)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

APP_DIR = Path(__file__).resolve().parents[1]
APP = APP_DIR / "app.py"
REPO = APP_DIR.parents[1]
#: Screenshots of the end-to-end test (a folder that ignores itself in git).
ARTIFACTS = REPO / "test-artifacts" / "app"
#: Python packages the app needs, with what to do when one is missing.
APP_PACKAGES = {
    "streamlit": "pip install streamlit",
    "plotly": "pip install plotly",
    "graphviz": "pip install graphviz",
}


def in_ci() -> bool:
    """True when running in CI (``CI`` is set), where nothing may be skipped for lack of tools."""
    return bool(os.environ.get("CI"))


def missing(what: str, hint: str) -> None:
    """Fail in CI, else skip the calling module, because ``what`` is not available."""
    if in_ci():
        pytest.fail(f"{what} is required in CI: {hint}", pytrace=False)
    pytest.skip(f"{what} is not available ({hint})", allow_module_level=True)


def require_app_packages() -> None:
    """Skip (or fail in CI) unless every Python package of the app is importable."""
    for name, hint in APP_PACKAGES.items():
        try:
            importlib.import_module(name)
        except ImportError:
            missing(f"the Python package {name!r}", hint)


def app_module(name: str) -> ModuleType:
    """Import a module of the app's ``explorer`` package."""
    return importlib.import_module(f"explorer.{name}")
