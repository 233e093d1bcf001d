"""The grader's pytest plugin: runs the course's tests, each once per graded function.

Loaded as ``-p _mtcourse_harness`` in the test process, which holds the course's tests and
solution and nothing of the student's but what the worker answers. Its configuration is
the JSON file ``$MTC_HARNESS`` (written by ``grading.py``):

- ``survey``: run every test on the solution alone and note which graded functions
  (``units``) it used: the plan of the runs, and the tests that pass here;
- ``grade``: for each test of the plan and each unit it uses, make that unit the worker's
  (the student's) and run the test; every other unit is the solution's. Public tests run
  before hidden ones, so what the worker saw of a hidden test's inputs can only reach the
  feedback of hidden tests (which shows their names only).

  A task marked ``whole`` (training a network of scalars: sent one operation at a time,
  its millions of operations would take hours) runs each test once with *every* graded
  function the student's (``route.EVERY``): the training scripts' ``main`` runs in the
  worker, on the student's copy alone, and the outcome counts for each function the test
  uses.

Each run's outcome goes to the file ``out`` as a JSON line, written by this process only;
the worker cannot reach it. A run that the worker cannot finish within its CPU time (or
its wall-clock time), a worker that dies, or a message that is not valid plain data fails
that run, whatever the test did with the error; the worker is started again for the next.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # checked as part of the package; it runs as a top-level module
    from . import route
    from . import sandbox as _sandbox
    from .wire import MAX_TEXT, Endpoint, Policy, WireError
else:
    import _mtcourse_route as route
    import _mtcourse_sandbox as _sandbox
    from _mtcourse_wire import MAX_TEXT, Endpoint, Policy, WireError

_CONFIG: dict[str, Any] = {}
_STATE: dict[str, Any] = {"worker": None, "endpoint": None, "event": None}
_TIMEOUTS: dict[str, int] = {}


class StudentTimeout(BaseException):
    """The student's code ran past its time in this run (not catchable as an Exception)."""


class StudentCrash(BaseException):
    """The worker running the student's code ended, or broke the channel."""


def _out(record: dict[str, Any]) -> None:
    with open(_CONFIG["out"], "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _policy() -> Policy:
    validators: dict[str, Any] = {}
    try:
        import _mtcourse_checks as checks  # type: ignore[import-not-found]

        validators = checks.VALIDATORS
    except ImportError:
        pass
    return Policy(
        ("minitorch.", "mt_examples.", "_mtcourse_route"),
        opaque=frozenset(_CONFIG.get("opaque", ())),
        validators=validators,
        trusted=True,
    )


def _serve(kind: str, payload: list[Any]) -> Any:
    """Requests of the worker: the solution's functions, the tests' callables."""
    ep: Endpoint = _STATE["endpoint"]
    if kind in ("call", "product", "launch"):
        key = payload[0]
        if not isinstance(key, str) or key not in route.REGISTRY:
            _ensure(key)
        # The function being graded is never answered here: route.serve sends it back.
        graded = key == route.ACTIVE or route.ACTIVE == route.EVERY
        twin = _stand_in(key) if kind == "call" and not graded else None
        if twin is not None:
            _, args, kwargs = payload
            return twin(*args, **kwargs)
        return route.serve(kind, payload)
    if kind == "method":
        ident, name, obj, args, kwargs = payload
        cls = ep.handles.get(ident) if type(ident) is int else None
        if not isinstance(cls, type) or not isinstance(obj, cls) or not isinstance(name, str):
            raise LookupError("no such method")
        if name.startswith("__"):
            raise LookupError("no such method")
        return getattr(obj, name)(*args, **kwargs)
    if kind == "smethod":
        ident, name, args, kwargs = payload
        cls = ep.handles.get(ident) if type(ident) is int else None
        if not isinstance(cls, type) or not isinstance(name, str) or name.startswith("__"):
            raise LookupError("no such method")
        return getattr(cls, name)(*args, **kwargs)
    if kind == "ready":
        _STATE["ready"] = payload[0]
        return None
    raise LookupError(f"the grader does not serve {kind!r}")


_TWINS: dict[str, Any] = {}


def _stand_in(key: str) -> Any:
    """The faster twin that answers the worker's call of ``key`` here, if it has one.

    course.toml's ``stand-ins`` name a solution-only module with the same functions as a
    graded one (the Numba convolution beside the plain loops): a network the student
    trains in the worker convolves at the solution's speed, and the worker never holds the
    twin. Only a module-level function has one, and only where this copy ships the module.
    """
    if key in _TWINS:
        return _TWINS[key]
    import importlib

    file, _, name = key.partition(":")
    twin_file = _CONFIG.get("stand_ins", {}).get(file)
    twin = None
    if twin_file is not None and "." not in name:
        module = f"minitorch.{_CONFIG['layer']}." + twin_file.removesuffix(".py").replace("/", ".")
        try:
            twin = getattr(importlib.import_module(module), name, None)
        except ImportError:  # this copy (the starter-shaped solution) leaves it out
            twin = None
    _TWINS[key] = twin
    return twin


def _ensure(key: Any) -> None:
    """Import the module of a graded function the worker names (``tensor_data.py:...``)."""
    if not isinstance(key, str) or key not in _CONFIG["all_units"]:
        raise LookupError(f"no graded function {key!r}")
    import importlib

    file = key.split(":", 1)[0].removesuffix(".py")
    if file.startswith("mt_examples/"):
        importlib.import_module(file.replace("/", "."))
    else:
        importlib.import_module(f"minitorch.{_CONFIG['layer']}." + file.replace("/", "."))


# ---------------------------------------------------------------------------- the worker


def _start_worker() -> None:
    """Start the worker in its sandbox and wait until it has imported the layer."""
    sb = _sandbox
    spec = _CONFIG["worker"]
    mine, theirs = socket.socketpair()
    jail = sb.Jail(
        spec["mode"],
        Path(spec["home"]),
        tuple(Path(p) for p in spec["readable"]),
        int(spec["uid"]),
        {**spec["env"], "MTC_FD": str(theirs.fileno())},
        tuple(Path(p) for p in spec.get("hidden", ())),
    )
    limits = sb.Limits(**spec["limits"])
    proc = sb.spawn(
        spec["argv"],
        jail,
        limits,
        pass_fds=(theirs.fileno(),),
        python=spec["python"],
        stdout=subprocess.PIPE,
    )
    threading.Thread(target=_drain, args=(proc, spec.get("log")), daemon=True).start()
    theirs.close()
    _STATE.update(worker=proc, jail=jail, started=time.monotonic(), ready=False)
    endpoint = Endpoint(mine, _policy(), _serve, wait=_watch)
    _STATE["endpoint"] = endpoint
    route.ENDPOINT = endpoint
    _STATE["limit"] = (spec["start_cpu"], spec["start_wall"])
    _STATE["cpu0"] = 0.0
    _STATE["t0"] = time.monotonic()
    try:
        endpoint.serve_until("ready")
    except BaseException:
        _stop_worker()
        raise StudentCrash("the process for your code did not start") from None
    if _STATE["ready"] is not None:
        _STATE["broken"] = str(_STATE["ready"])[:MAX_TEXT]


def _drain(proc: subprocess.Popen[bytes], log: str | None) -> None:
    """Keep the first ``LOG_BYTES`` of the worker's output (for the staff), drop the rest."""
    assert proc.stdout is not None
    kept = 0
    with open(log or os.devnull, "ab") as f:
        while chunk := os.read(proc.stdout.fileno(), 1 << 16):
            if kept < LOG_BYTES:
                f.write(chunk[: LOG_BYTES - kept])
                kept += len(chunk)


LOG_BYTES = 1 << 20

IDLE_SECONDS = 15.0
"""A worker that uses no CPU this long while the grader waits for it is stopped."""


def _stop_worker() -> None:
    sb = _sandbox
    proc = _STATE.get("worker")
    endpoint = _STATE.get("endpoint")
    if endpoint is not None:
        with contextlib.suppress(OSError):
            endpoint.sock.close()
        endpoint.closed = True
    if proc is not None:
        sb.kill(proc, _STATE["jail"])
    _STATE.update(worker=None, endpoint=None)
    route.ENDPOINT = None


def _disk_used(home: Path) -> int:
    sb = _sandbox
    return int(sb.used_bytes(home))


def _cpu() -> float:
    sb = _sandbox
    proc = _STATE.get("worker")
    return sb.tree_cpu(proc.pid) if proc is not None else 0.0


def _watch() -> None:
    """Called while the grader waits for the worker: enforce the run's limits."""
    now = time.monotonic()
    if now - _STATE.get("checked", 0.0) < 0.2:
        return
    _STATE["checked"] = now
    cpu_limit, wall_limit = _STATE["limit"]
    proc = _STATE["worker"]
    if proc.poll() is not None:
        return  # the socket's end of stream will say so
    used = _cpu() - _STATE["cpu0"]
    jail = _STATE["jail"]
    if jail.mode != "bwrap" and now - _STATE.get("disk_checked", 0.0) > 1.0:
        _STATE["disk_checked"] = now
        disk = _CONFIG["worker"]["limits"]["disk"]
        if _disk_used(jail.home) > disk:
            message = f"disk limit: your code wrote more than {disk >> 20} MB"
            _STATE.update(event="limit", event_message=message)
            _stop_worker()
            raise StudentCrash(message)
    if used > _STATE.get("last_used", -1.0):
        _STATE.update(last_used=used, progressed=now)
    elif now - max(_STATE.get("progressed", now), _STATE["t0"]) > IDLE_SECONDS:
        message = (
            f"your code used no CPU for {IDLE_SECONDS:.0f} s while the grader waited for its "
            "answer: it sleeps, or waits for something that never comes"
        )
        _STATE.update(event="timeout", event_message=message)
        _stop_worker()
        raise StudentTimeout(message)
    if used > cpu_limit or now - _STATE["t0"] > wall_limit:
        what = f"{used:.1f} s of CPU time" if used > cpu_limit else f"{now - _STATE['t0']:.0f} s"
        message = (
            f"time limit: your code used {what} in this test (its limit: {cpu_limit:.0f} s of "
            f"CPU time, {wall_limit:.0f} s in all): an endless loop, or far slower code than "
            "the course's"
        )
        _STATE.update(event="timeout", event_message=message)
        _stop_worker()
        raise StudentTimeout(message)


# ----------------------------------------------------------------------------- pytest


def pytest_configure(config: pytest.Config) -> None:
    """Read the configuration; in ``grade`` mode, start the worker."""
    path = os.environ.get("MTC_HARNESS")
    if not path:
        return
    _CONFIG.update(json.loads(Path(path).read_text(encoding="utf-8")))
    route.SIDE = "T"
    # What outlives a killed sandbox (bwrap's init, a worker's children) comes back here
    # and is collected after each kill (``sandbox.kill``), not left a zombie.
    _sandbox.become_subreaper()
    cpu = _CONFIG.get("cpu")
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        # The grader and the worker take turns (each waits while the other works): on one
        # CPU a request and its answer need no wake-up across CPUs, about three times
        # faster on a virtual machine. The worker inherits it.
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {int(cpu)})
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Run only the planned tests, public ones first."""
    if not _CONFIG:
        return
    plan = _CONFIG.get("plan")
    if plan is not None:
        only = _CONFIG.get("only")
        if "batch" in _CONFIG:
            only = sorted({k for entry in _CONFIG["batch"] for k in entry["only"]})
        if only is not None:
            plan = {n: keys for n, keys in plan.items() if set(keys) & set(only)}
        keep = [i for i in items if i.nodeid in plan]
        dropped = [i for i in items if i.nodeid not in plan]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    items.sort(key=lambda i: i.nodeid.startswith("hidden/"))


_REPORTS: list[dict[str, Any]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """Keep each phase's outcome and the exception that ended it."""
    outcome = yield
    report = outcome.get_result()
    entry: dict[str, Any] = {"when": call.when, "outcome": report.outcome}
    if report.failed and call.excinfo is not None:
        entry["error"] = _describe(call.excinfo.value)
    if report.skipped and isinstance(report.longrepr, tuple):
        path, line, reason = report.longrepr
        reason = str(reason).removeprefix("Skipped: ")
        entry["error"] = {"type": "Skipped", "message": str(reason)[:MAX_TEXT]}
        entry["skip"] = f"{Path(path).name}:{line}: {reason}"[:MAX_TEXT]
    _REPORTS.append(entry)


def _describe(exc: BaseException) -> dict[str, Any]:
    leaves = [exc]
    group = getattr(exc, "exceptions", None)
    if isinstance(group, tuple) and group:
        leaves = list(group)
    first = leaves[0]
    notes = [str(n) for n in getattr(first, "__notes__", ()) or ()]
    context = first.__context__
    return {
        "type": type(first).__name__,
        "message": str(first)[:MAX_TEXT],
        "notes": "\n".join(notes).splitlines()[:12],
        "context": type(context).__name__ if context is not None else None,
    }


def _outcome(reports: list[dict[str, Any]]) -> tuple[str, dict[str, Any] | None]:
    for r in reports:
        if r["outcome"] == "failed":
            return ("failed" if r["when"] == "call" else "error"), r.get("error")
    for r in reports:
        if r["outcome"] == "skipped":
            return "skipped", {**r.get("error", {"type": "Skipped"}), "skip": r.get("skip")}
    return "passed", None


def _run_once(item: pytest.Item, nextitem: pytest.Item | None, fresh: bool) -> tuple[str, Any]:
    from _pytest.runner import runtestprotocol

    if fresh:
        item._initrequest()  # type: ignore[attr-defined]
    _REPORTS.clear()
    runtestprotocol(item, nextitem=nextitem, log=False)
    return _outcome(list(_REPORTS))


def _mutant(key: str, code: str) -> Any:
    """Compile a mutant of the graded function ``key`` beside the course's code."""
    import importlib

    _ensure(key)
    file, _, name = key.partition(":")
    module = importlib.import_module(
        f"minitorch.{_CONFIG['layer']}." + file.removesuffix(".py").replace("/", ".")
    )
    namespace = dict(vars(module))
    exec(compile(code, f"<mutant of {key}>", "exec"), namespace)
    return namespace[name]


def _valid_outcomes(answer: Any, names: list[str]) -> dict[str, list[str]] | None:
    """The worker's report of a run of the student's tests, if it is one."""
    if not isinstance(answer, dict) or set(answer) != set(names):
        return None
    out = {}
    for name, value in answer.items():
        if (
            not isinstance(value, list)
            or len(value) != 2
            or value[0] not in ("passed", "failed", "skipped", "missing")
            or not isinstance(value[1], str)
        ):
            return None
        out[name] = [value[0], value[1][:200]]
    return out


def _student_test_runs() -> None:
    """A test-writing task: run the student's tests once per entry of ``runs``.

    For a student's tests (``fresh``), each run has a worker of its own, started afresh
    with a fresh home and nothing left of the last run: the tests cannot remember what an
    earlier run's functions answered (and so cannot tell the course's code from a mutant
    but by testing it); the runs stop at the CPU ``budget``. The course's own tests (in
    calibration) share one worker until a run breaks it. Every graded function is the
    grader's: the course's, or in a mutant's run the mutant.
    """
    cfg = _CONFIG["student_tests"]
    names = list(cfg["tests"])
    # The course's own tests (calibration) are trusted: one worker serves every run
    # until a run breaks it. A student's tests get a fresh worker each run.
    fresh = cfg.get("fresh", True)
    spec = _CONFIG["worker"]
    base_home = Path(spec["home"])
    budget = cfg.get("budget")  # CPU seconds all the runs may use (a student's)
    spent = 0.0
    for n, run in enumerate(cfg["runs"]):
        record: dict[str, Any] = {"run": run["id"]}
        if budget is not None and spent > budget:
            record.update(event="budget", message=f"the runs used {spent:.0f} s of CPU time")
            _out(record)
            continue
        mutant = run.get("mutant")
        _STATE.update(event=None, event_message="")
        t0 = time.monotonic()
        try:
            if fresh or _STATE.get("worker") is None:
                _stop_worker()
                if fresh:
                    shutil.rmtree(spec["home"], ignore_errors=True)
                spec["home"] = str(base_home.with_name(f"{base_home.name}-{n}"))
                if spec["mode"] == "user":
                    _sandbox.sweep_files(int(spec["uid"]))
                _STATE.pop("broken", None)
                _start_worker()
            if _STATE.get("broken"):
                raise StudentCrash(f"your code did not import: {_STATE['broken']}")
            if mutant is not None:
                route.SWAP[mutant["key"]] = _mutant(mutant["key"], mutant["code"])
            _STATE["limit"] = tuple(cfg["limit"])
            _STATE["cpu0"] = _cpu()
            _STATE["t0"] = time.monotonic()
            _STATE.update(last_used=-1.0, progressed=_STATE["t0"])
            route.ACTIVE = None
            _STATE["endpoint"].request("active", None)
            answer = _STATE["endpoint"].request("tests", cfg["module"], names, cfg["examples"])
            outcomes = _valid_outcomes(answer, names)
            if outcomes is None:
                record.update(event="wire", message="the run's report was not one")
            else:
                record["outcomes"] = outcomes
            record["cpu"] = _cpu() - _STATE["cpu0"]
        except (StudentTimeout, StudentCrash, WireError) as e:
            record.update(
                event=_STATE["event"] or "crash", message=_STATE["event_message"] or str(e)
            )
            _stop_worker()  # the next run starts a new one
        except Exception as e:  # the worker raised: the student's module, say
            record.update(event="error", message=f"{type(e).__name__}: {e}"[:MAX_TEXT])
            _stop_worker()
        finally:
            route.SWAP.clear()
            if fresh:
                _stop_worker()
        record["wall"] = time.monotonic() - t0
        # A run stopped at its limit counts the limit (its CPU time is not measured).
        spent += record.get("cpu", cfg["limit"][0] if record.get("event") == "timeout" else 0.0)
        _out(record)
    _stop_worker()
    shutil.rmtree(spec["home"], ignore_errors=True)
    spec["home"] = str(base_home)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """In ``batch`` mode, grade several workers in turn (the mutants of ``course mutants``).

    Each entry of the batch names a worker (a copy of the layer with one function
    changed) and the functions to grade in it: the tests that use them run once per entry,
    in one test process, so its start and the course's compiled code serve every entry.
    Records carry the entry's ``batch`` id; ``{"batch_done": id}`` ends each entry.
    """
    if _CONFIG and "student_tests" in _CONFIG:
        _student_test_runs()
        return True
    if not _CONFIG or "batch" not in _CONFIG:
        return None
    plan = _CONFIG["plan"]
    for entry in _CONFIG["batch"]:
        _stop_worker()
        _TIMEOUTS.clear()
        _CONFIG["worker"] = entry["worker"]
        only = set(entry["only"])
        mine = [i for i in session.items if only & set(plan[i.nodeid])]
        stop = False
        for n, item in enumerate(mine):
            nextitem = mine[n + 1] if n + 1 < len(mine) else None
            item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
            for record in _graded_runs(item, nextitem, [k for k in plan[item.nodeid] if k in only]):
                record["batch"] = entry["id"]
                _out(record)
                if record["outcome"] != "passed" and _CONFIG.get("first_failure"):
                    stop = True
                    break
            if stop:
                break
        _stop_worker()
        _out({"batch_done": entry["id"]})
    return True


def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Survey the test, or run it once per graded function it uses."""
    if not _CONFIG:
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    if _CONFIG["mode"] == "survey":
        route.USED = set()
        t0, c0 = time.monotonic(), time.process_time()
        outcome, error = _run_once(item, nextitem, False)
        used = sorted(route.USED & set(_CONFIG["units"]))
        route.USED = None
        _out(
            {
                "nodeid": item.nodeid,
                "tasks": sorted(m.name for m in item.iter_markers() if m.name.startswith("task")),
                "outcome": outcome,
                "error": error,
                "used": used,
                "wall": time.monotonic() - t0,
                "cpu": time.process_time() - c0,
            }
        )
        return True
    keys = _CONFIG["plan"][item.nodeid]
    only = _CONFIG.get("only")
    if only is not None:
        keys = [k for k in keys if k in only]
    for record in _graded_runs(item, nextitem, keys):
        _out(record)
        if record["outcome"] != "passed" and _CONFIG.get("first_failure"):
            item.session.shouldstop = "the first failure was all that was asked for"
            break
    return True


def _graded_runs(
    item: pytest.Item, nextitem: pytest.Item | None, keys: list[str]
) -> Generator[dict[str, Any], None, None]:
    """The records of ``item``'s runs for ``keys``: one run each, or one for all (whole)."""
    if _CONFIG.get("whole") and keys:
        with _scripts_in_worker():
            record = _graded_run(item, nextitem, route.EVERY, fresh=True, keys=keys)
        for key in keys:
            yield {**record, "key": key, "whole": True}
        return
    for key in keys:
        yield _graded_run(item, nextitem, key, fresh=True)


@contextlib.contextmanager
def _scripts_in_worker() -> Generator[None, None, None]:
    """While it lasts, each training script's ``main`` trains in the worker."""
    import importlib

    saved = []
    for name in _CONFIG.get("scripts", ()):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue

        def main(argv: list[str] | None = None, _name: str = name) -> Any:
            return _STATE["endpoint"].request("main", _name, list(argv or []))

        saved.append((module, getattr(module, "main", None)))
        setattr(module, "main", main)  # noqa: B010 (a module attribute the checker cannot see)
    try:
        yield
    finally:
        for module, original in saved:
            setattr(module, "main", original)  # noqa: B010


def _graded_run(
    item: pytest.Item,
    nextitem: pytest.Item | None,
    key: str,
    fresh: bool,
    keys: list[str] | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {"nodeid": item.nodeid, "key": key}
    if _TIMEOUTS.get(key, 0) >= 2:
        record.update(
            outcome="failed",
            event="limit",
            error=_error(
                "TimeLimit",
                "not run: this function already ran out of time in two tests (an endless "
                "loop costs only the function it is in)",
            ),
        )
        return record
    limits = max(
        (
            _CONFIG["limits"].get(f"{item.nodeid} {k}", _CONFIG["default_limit"])
            for k in keys or [key]
        ),
        key=lambda limit: float(limit[0]),
    )
    _STATE.update(event=None, event_message="")
    t0 = time.monotonic()
    cpu = 0.0
    try:
        if _STATE.get("worker") is None or _STATE["worker"].poll() is not None:
            _stop_worker()
            _start_worker()
        if _STATE.get("broken"):
            record.update(
                outcome="failed", event="import", error=_error("ImportError", _STATE["broken"])
            )
            return record
        _STATE["limit"] = tuple(limits)
        _STATE["cpu0"] = _cpu()
        _STATE["t0"] = time.monotonic()
        _STATE.update(last_used=-1.0, progressed=_STATE["t0"])
        route.ACTIVE = key
        _STATE["endpoint"].request("active", key)
        outcome, error = _run_once(item, nextitem, fresh)
        cpu = _cpu() - _STATE["cpu0"]
    except (StudentTimeout, StudentCrash, WireError) as e:
        outcome, error = "failed", None
        if _STATE["event"] is None:
            _STATE.update(event="wire", event_message=str(e))
    finally:
        route.ACTIVE = None
    worker = _STATE.get("worker")
    endpoint = _STATE.get("endpoint")
    if _STATE["event"] is None and (
        (worker is not None and worker.poll() is not None)
        or (endpoint is not None and endpoint.closed)
    ):
        code = worker.returncode if worker is not None else None
        _STATE.update(
            event="crash", event_message=f"the process running your code ended ({_how(code)})"
        )
    if _STATE["event"] == "timeout":
        _TIMEOUTS[key] = _TIMEOUTS.get(key, 0) + 1
    if _STATE["event"] is not None:
        outcome = "failed"
        error = _error("WorkerError", _STATE["event_message"])
        _stop_worker()
    elif outcome == "skipped":
        outcome, error = _judge_skip(item.nodeid, error or {})
        if outcome == "passed":
            record["skipped_at"] = _CONFIG.get("skips", {}).get(item.nodeid)
    record.update(
        outcome=outcome, error=error, event=_STATE["event"], cpu=cpu, wall=time.monotonic() - t0
    )
    return record


def _judge_skip(nodeid: str, error: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """A graded run that skipped: passed where the solution skips at the same place, else failed.

    A test that compares with a package this machine lacks (PyTorch) skips there after
    checking the student's function on its own; that part is graded. A skip anywhere else
    is no pass. (The worker cannot raise pytest's skip: only ``Exception`` classes cross.)
    """
    expected = _CONFIG.get("skips", {}).get(nodeid)
    if expected is not None and error.get("skip") == expected:
        return "passed", None
    reason = error.get("message") or "no reason given"
    return "failed", _error(
        "Skipped", f"the test skipped ({reason}) where the course's solution does not"
    )


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": kind, "message": message[:MAX_TEXT], "notes": []}


def _how(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit status {code}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the worker and mark the end of a session that was not cut short."""
    if not _CONFIG:
        return
    endpoint = _STATE.get("endpoint")
    if endpoint is not None and not endpoint.closed:
        with contextlib.suppress(BaseException):
            endpoint.close()
    if _STATE.get("worker") is not None:
        _stop_worker()
    _out({"finished": int(exitstatus)})
