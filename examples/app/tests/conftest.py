"""Fixtures of the explorer's tests (helpers: ``mt_testing``)."""

from collections.abc import Iterator

import pytest


@pytest.fixture
def stop_training() -> Iterator[list]:
    """Collect training jobs; stop them and wait for their threads after the test."""
    jobs: list = []
    yield jobs
    for job in jobs:
        job.stop()
    for job in jobs:
        assert job.join(timeout=60), "a training thread did not stop within 60 s"
