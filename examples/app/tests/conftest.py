"""Put the app's folder (package ``explorer``) and this folder on ``sys.path``.

``streamlit run`` does the same for the app; tests import ``explorer`` and the helpers
here (``app_support``, ``app_browser``) as top-level modules.
"""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for folder in (HERE.parent, HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


@pytest.fixture
def stop_training() -> Iterator[list]:
    """Collect training jobs; stop them and wait for their threads after the test."""
    jobs: list = []
    yield jobs
    for job in jobs:
        job.stop()
    for job in jobs:
        assert job.join(timeout=60), "a training thread did not stop within 60 s"
