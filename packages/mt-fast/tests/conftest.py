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
        # A test tagged with a task of this module already (3.1, 3.2, or the training task
        # 3.5 that the course's grader copies in here) keeps it; the shared backend suite's
        # tests (marked with module 2's tasks) are the fast backend's 3.1 or 3.2.
        if any(item.get_closest_marker(t) for t in ("task3_1", "task3_2", "task3_5")):
            continue
        task = "task3_2" if "matmul" in item.name else "task3_1"
        item.add_marker(getattr(pytest.mark, task))
