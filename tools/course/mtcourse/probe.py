"""A pytest plugin that writes one JSON line per test to ``$COURSE_PROBE_OUT``.

Loaded by the course tool with ``-p probe`` in the process that runs the tests. Each line
has the test's node id, its ``task*`` markers, its outcome and, for a failure, the
exception (each leaf of an exception group) with the file and line that raised it. A last
``{"finished": ...}`` line tells a session that ended from one that died (``os._exit``,
a segfault, a kill on time-out).

With ``$COURSE_PROBE_TRACE`` naming a JSON file (``{"source file": {"first line":
"function"}}``, written by the grader), each record also lists the functions of that table
the test called (``functions``): the grader gives each function of a task the tests that
exercise it. A ``sys.settrace`` hook sees every Python call and keeps only those; it asks
for no line events, so the tests run at nearly their usual speed. Code compiled by Numba
runs no Python frames and is not seen.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Generator
from typing import Any

import pytest

_TASK = re.compile(r"task\d+_\d+")
_LIMIT = 2000  # characters of an exception message kept
_NOTES = 6  # lines of an exception's notes kept (hypothesis's falsifying example)

# The functions to watch: co_filename -> {co_firstlineno: name}, and those the running
# test has called.
_watch: dict[str, dict[int, str]] = {}
_called: set[str] = set()


def _tracer(frame: Any, event: str, arg: Any) -> None:
    """The global trace function: note a watched function's call, trace nothing inside."""
    names = _watch.get(frame.f_code.co_filename)
    if names is not None:
        name = names.get(frame.f_code.co_firstlineno)
        if name is not None:
            _called.add(name)


def pytest_configure(config: pytest.Config) -> None:
    """Start watching the functions ``$COURSE_PROBE_TRACE`` names, if any."""
    path = os.environ.get("COURSE_PROBE_TRACE")
    if not path:
        return
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    for file, lines in table.items():
        names = {int(k): v for k, v in lines.items()}
        _watch[file] = names
        _watch[os.path.realpath(file)] = names
    sys.settrace(_tracer)
    threading.settrace(_tracer)


def _write(record: dict[str, Any]) -> None:
    path = os.environ.get("COURSE_PROBE_OUT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _leaves(exc: BaseException) -> list[BaseException]:
    group = getattr(exc, "exceptions", None)
    if isinstance(group, tuple) and isinstance(exc, BaseException) and group:
        return [leaf for e in group for leaf in _leaves(e)]
    return [exc]


def _where(exc: BaseException) -> dict[str, Any]:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    notes = [str(n) for n in getattr(exc, "__notes__", ()) or ()]
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:_LIMIT],
        "notes": "\n".join(notes).splitlines()[:_NOTES],
        "file": tb.tb_frame.f_code.co_filename if tb else None,
        "line": tb.tb_lineno if tb else None,
    }


def _describe(exc: BaseException) -> dict[str, Any]:
    """Describe the exception and the ones it was raised while handling.

    ``pytest.raises`` with a ``match`` that fails keeps the exception it caught as
    ``__context__``.
    """
    record = _where(exc)
    chain: list[dict[str, Any]] = []
    seen = {id(exc)}
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen and len(chain) < 5:
        seen.add(id(cause))
        chain.append(_where(cause))
        cause = cause.__cause__ or cause.__context__
    record["context"] = chain
    return record


_results: dict[str, dict[str, Any]] = {}


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """A test starts (before its fixtures): it has called nothing yet."""
    _called.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """Record the outcome and the exception of each phase of a test."""
    outcome = yield
    report = outcome.get_result()
    record = _results.setdefault(
        item.nodeid,
        {
            "nodeid": item.nodeid,
            "tasks": sorted({m.name for m in item.iter_markers() if _TASK.fullmatch(m.name)}),
            "outcome": "passed",
            "errors": [],
        },
    )
    if report.failed:
        record["outcome"] = "failed" if call.when == "call" else "error"
        if call.excinfo is not None:
            record["errors"] = [_describe(e) for e in _leaves(call.excinfo.value)]
    elif report.skipped and record["outcome"] == "passed":
        record["outcome"] = "skipped"
    if call.when == "teardown":
        if _watch:
            record["functions"] = sorted(_called)
            _called.clear()
        _write(_results.pop(item.nodeid))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Record a test module that fails to import or collect."""
    if report.failed:
        _write(
            {
                "nodeid": report.nodeid,
                "tasks": [],
                "outcome": "collect-error",
                "errors": [{"type": "CollectError", "message": str(report.longrepr)[-_LIMIT:]}],
            }
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Mark the end of a session that was not cut short."""
    _write({"finished": int(exitstatus)})
