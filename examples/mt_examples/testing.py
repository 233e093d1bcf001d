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


def write_fake_mnist(root: Path, count: int = 40, seed: int = 0) -> Path:
    """Write ``count`` random 28 x 28 'test images' in MNIST's file format under ``root/mnist``.

    Returns ``root``, a data folder for ``MINITORCH_DATA``.
    """
    import gzip

    import numpy as np

    def write_idx(path: Path, array: np.ndarray) -> None:
        magic = 2051 if array.ndim == 3 else 2049
        header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in array.shape)
        with gzip.open(path, "wb") as f:
            f.write(header + array.astype(np.uint8).tobytes())

    folder = root / "mnist"
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    write_idx(folder / "t10k-images-idx3-ubyte.gz", rng.integers(0, 256, (count, 28, 28)))
    write_idx(folder / "t10k-labels-idx1-ubyte.gz", rng.integers(0, 10, count))
    return root


def write_untrained_checkpoint(path: Path) -> Path:
    """Save a freshly initialised ``train_mnist.Network`` as a checkpoint (needs mt-nn)."""
    from explorer.examples import load_example

    from minitorch.nn import save_checkpoint
    from minitorch.tensor import backend

    model = load_example("train_mnist").Network(backend("fast"), seed=0)
    return save_checkpoint(model, path, epoch=0, note="untrained, for tests")


def require_mt_nn() -> None:
    """Skip (or fail in CI) unless mt-nn and the MNIST example are available."""
    from explorer.mnist import nn_problem

    problem = nn_problem()
    if problem:
        missing("mt-nn", problem)
