"""Import the example scripts of ``examples/`` (a folder of scripts, not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["EXAMPLES_DIR", "load_example"]

#: The ``examples/`` folder of the repository.
EXAMPLES_DIR = Path(__file__).resolve().parents[2]


def load_example(name: str) -> ModuleType:
    """Return the module of ``examples/<name>.py``, importing it on first use.

    Raises:
        FileNotFoundError: if there is no such script.
    """
    module_name = f"minitorch_examples_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = EXAMPLES_DIR / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"example script {path} not found")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
