"""Shared pytest configuration: hypothesis profiles for development and CI.

`dev` is the default; `ci` is selected when the `CI` environment variable is set (GitHub
Actions and `.ci/run` set it). `HYPOTHESIS_PROFILE` overrides both.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
