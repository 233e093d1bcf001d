"""Import the example scripts of ``examples/`` (a folder of scripts, not a package).

The loading itself is ``example_support.load_example``, next to the scripts; this module
puts ``examples/`` on ``sys.path`` first (``streamlit run`` puts only the app's folder
there), which is also what lets the scripts import ``example_support``.
"""

from __future__ import annotations

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
    if str(EXAMPLES_DIR) not in sys.path:
        sys.path.insert(0, str(EXAMPLES_DIR))
    import example_support

    return example_support.load_example(name)
