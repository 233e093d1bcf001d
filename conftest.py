"""Shared pytest configuration: hypothesis profiles, and stubs that fail at once.

`dev` is the default; `ci` is selected when the `CI` environment variable is set (GitHub
Actions and `.ci/run` set it). `HYPOTHESIS_PROFILE` overrides both. A student starter's
copy of this file loads `starter` (the course tool adds the line).

With Numba's CUDA simulator on (``NUMBA_ENABLE_CUDASIM=1``), the interpreter switches
threads every 0.1 ms instead of 5 ms (see ``_simulator_switch_interval``).

A student starter's stub raises ``NotImplementedError("Task X.Y: ...")``. Hypothesis would
treat it as a bug to shrink and explain, which costs seconds to minutes per test and finds
nothing: the test fails at once instead, with the stub's own error and traceback.
"""

import functools
import os
import re
import sys
import sysconfig
import types
from collections.abc import Callable, Generator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# A student runs the tests many times a day, most of them on unfinished code: fewer
# examples than `dev` (grading runs more, with its own profile), stop at the first bug, and
# no explain phase (it replays a failing test thousands of times to say which parts of the
# input matter). A real bug is still shrunk to a small example.
settings.register_profile(
    "starter",
    max_examples=20,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow],
)
# Many more draws for every property test, before a release or when hunting a rare case:
# `HYPOTHESIS_PROFILE=deep pytest`.
settings.register_profile(
    "deep", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def _simulator_switch_interval() -> None:
    """Let the CUDA simulator's threads take turns every 0.1 ms (Python's default is 5 ms).

    The simulator runs each CUDA thread of a block as a Python thread, and its block manager
    polls them in a loop that holds the GIL: a thread that is ready to run, or released
    from ``syncthreads``, waits for the switch interval each time. Reductions and tiled
    matrix products synchronise a block several times, so a launch took tens to hundreds
    of milliseconds; with 0.1 ms it is about ten times faster. The order in which the
    threads run is the simulator's either way; no result depends on it.
    """
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        sys.setswitchinterval(1e-4)


_simulator_switch_interval()

# What a starter's stub says (after the thread and block ids of Numba's CUDA simulator).
_STUB_MESSAGE = re.compile(r"^(?:tid=(?:\[[^\]]*\])? ctaid=(?:\[[^\]]*\])?: )?Task \d+\.\d+: ")


class _StubReached(BaseException):
    """Carries a stub's error out of hypothesis, which lets a ``BaseException`` through."""

    def __init__(self, error: NotImplementedError) -> None:
        super().__init__(str(error))
        self.error = error


# Installed packages: the lower layers, hypothesis, numba (a starter's own code is not).
_INSTALLED = tuple({os.path.join(sysconfig.get_paths()[k], "") for k in ("purelib", "platlib")})


def _own_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback from the test to the stub, without the frames of installed packages.

    A starter's tests fail by the hundred on stubs; pytest formats every frame of each
    (seconds in all), and the frames inside the released lower layers say nothing about
    what to write. The test's own frame and the stub's stay.
    """
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    keep = [
        t
        for i, t in enumerate(frames)
        if i in (0, len(frames) - 1) or not t.tb_frame.f_code.co_filename.startswith(_INSTALLED)
    ]
    out = None
    for t in reversed(keep):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def _stubs_fail_at_once(test: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return test(*args, **kwargs)
        except NotImplementedError as e:
            if _STUB_MESSAGE.match(str(e)):
                tb = e.__traceback__
                raise _StubReached(e.with_traceback(_own_frames(tb and tb.tb_next))) from None
            raise

    run._stubs_fail_at_once = True  # type: ignore[attr-defined]
    return run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Run a property test so that a stub's ``NotImplementedError`` ends it at once.

    The test fails with that error, as a plain test would: not shrunk, not explained.
    """
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    inner = getattr(handle, "inner_test", None)
    if inner is not None and not getattr(inner, "_stubs_fail_at_once", False):
        handle.inner_test = _stubs_fail_at_once(inner)  # hypothesis allows replacing it
    try:
        return (yield)
    except _StubReached as stop:
        error = stop.error
    raise error  # outside the handler: the error keeps its own context and traceback


_PTX: dict[str, str] = {}


def pytest_runtest_logreport(report: Any) -> None:
    """Keep the outcome of each test that compiles kernels for a real GPU (``*_ptx.py``)."""
    if "_ptx.py::" in report.nodeid and (report.when == "call" or report.outcome != "passed"):
        _PTX[report.nodeid.rsplit("/", 1)[-1]] = report.outcome


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how much of the op database ran, and how the PTX compilations (sm_75, sm_90) fared."""
    opdb = sys.modules.get("minitorch.tensor.opdb")
    line = opdb.coverage() if opdb is not None else ""
    if line:
        terminalreporter.write_line(line)
    if _PTX:
        shown = ", ".join(f"{name} {outcome}" for name, outcome in sorted(_PTX.items()))
        terminalreporter.write_line(f"PTX for real GPUs (no GPU used): {shown}")
