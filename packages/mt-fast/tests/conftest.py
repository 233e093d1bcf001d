"""Tag the shared backend suite run here with the fast-backend tasks (3.2: matmul, else 3.1).

So ``pytest -m task3_1`` and ``-m task3_2`` select every fast-backend test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(item.path).resolve().parent != HERE:
            continue
        if item.get_closest_marker("task3_1") or item.get_closest_marker("task3_2"):
            continue
        task = "task3_2" if "matmul" in item.name else "task3_1"
        item.add_marker(getattr(pytest.mark, task))
