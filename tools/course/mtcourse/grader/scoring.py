"""A task's score from its runs, and the entries of Gradescope's ``results.json``.

The points of a task are split equally among its functions (the starter's README lists
them; the list does not depend on the submission). Each function is graded by the runs of
the tests that use it, with that function the student's and every other the course's:

    share    = task points / number of its functions
    function = share * (PUBLIC_PART * its public tests passed / its public tests
                        + (1 - PUBLIC_PART) if all its tests pass, public and hidden)
    task     = the sum over its functions

A function without public tests earns its whole share from the second term. The public
entry (shown at once) holds each function's first term; the hidden entry (shown once the
grades are published) the second, decided by the hidden tests with the public ones. Its
feedback names failing hidden tests only, never their inputs or messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "EVIDENCE_LINES",
    "PUBLIC_PART",
    "TaskPlan",
    "results",
    "task_entries",
    "test_task_entry",
]

PUBLIC_PART = 0.4
"""The part of a function's share earned in proportion to its public tests that pass."""

EVIDENCE_LINES = 12
"""Lines of a failing public test's explanation kept (pytest's ``where`` lines, the
falsifying example): enough to see the inputs and what came out."""


@dataclass(frozen=True)
class TaskPlan:
    """What grading a task runs: its functions and, per test, the functions it uses."""

    task: str
    title: str
    points: float
    units: tuple[tuple[str, str], ...]  # (key, name shown to the student)
    tests: dict[str, tuple[str, ...]]  # node id -> keys of the units it uses

    def runs(self, key: str) -> list[str]:
        """The tests that grade ``key``, public ones first."""
        found = [n for n, keys in self.tests.items() if key in keys]
        return sorted(found, key=lambda n: n.startswith("hidden/"))


def number(task: str) -> str:
    """``task2_3`` -> ``2.3``."""
    return task.removeprefix("task").replace("_", ".")


def _hidden(nodeid: str) -> bool:
    return nodeid.startswith("hidden/")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n[output truncated]"


def short(nodeid: str, name: str, error: dict[str, Any] | None) -> str:
    """A failing public test with its evidence: ``FAILED nodeid (your f): Type: message``."""
    err = error or {"type": "failed", "message": "", "notes": []}
    lines = [ln[:300] for ln in (err.get("message") or "").splitlines() if ln.strip()]
    lines += [ln[:300] for ln in err.get("notes", []) if str(ln).strip()]
    if len(lines) > EVIDENCE_LINES:
        lines = [*lines[: EVIDENCE_LINES - 1], "[...]"]
    first = lines[0] if lines else ""
    rest = "".join(f"\n    {ln}" for ln in lines[1:])
    return f"FAILED {nodeid} (with your {name}): {err.get('type', 'Error')}: {first}{rest}"


def short_hidden(nodeid: str, name: str, error: dict[str, Any] | None) -> str:
    """A failing hidden test: its name and the exception's type, never its inputs.

    The parametrization id and the message would show the hidden test's inputs; a stub's
    ``NotImplementedError`` keeps its message (``Task 2.1: ...``, the student's own).
    """
    err = error or {"type": "failed", "message": ""}
    msg = ""
    if err.get("type") == "NotImplementedError" and str(err.get("message", "")).startswith("Task "):
        msg = ": " + str(err["message"]).splitlines()[0][:200]
    if err.get("type") in ("WorkerError", "TimeLimit"):
        msg = ": " + str(err.get("message", "")).split(":", 1)[0][:120]
    return f"FAILED {nodeid.split('[')[0]} (with your {name}): {err.get('type', 'Error')}{msg}"


def task_entries(
    plan: TaskPlan,
    records: list[dict[str, Any]],
    output_limit: int,
    notes: list[str] = (),  # type: ignore[assignment]
    error: str | None = None,
) -> list[dict[str, Any]]:
    """The results.json entries of one task from its runs' records.

    ``records`` are the harness's (``nodeid``, ``key``, ``outcome``, ``error``); a planned
    run without a record did not run (the test process ended early) and fails. ``error``
    gives the task 0 with that message (the task could not be run at all).
    """
    name = f"Task {number(plan.task)}: {plan.title}"
    got = {(r["nodeid"], r["key"]): r for r in records if "key" in r}
    share = plan.points / len(plan.units) if plan.units else 0.0
    has_hidden = any(_hidden(n) for n in plan.tests)
    fns: list[dict[str, Any]] = []
    public_fail: list[str] = []
    hidden_fail: list[str] = []
    public_tests: dict[str, bool] = {}
    hidden_tests: dict[str, bool] = {}
    for key, shown in plan.units:
        runs = plan.runs(key)
        passed = []
        for n in runs:
            r = got.get((n, key)) if error is None else None
            ok = r is not None and r["outcome"] == "passed"
            passed.append(ok)
            table = hidden_tests if _hidden(n) else public_tests
            table[n] = table.get(n, True) and ok
            if not ok:
                err = (r or {}).get("error") or {
                    "type": "NotRun",
                    "message": "the tests stopped before this one ran",
                    "notes": [],
                }
                # A run of a ``whole`` task ran all of the student's code at once.
                who = "code, all of it" if (r or {}).get("whole") else shown
                line = short_hidden(n, who, err) if _hidden(n) else short(n, who, err)
                (hidden_fail if _hidden(n) else public_fail).append(line)
        public = [ok for n, ok in zip(runs, passed, strict=True) if not _hidden(n)]
        part = PUBLIC_PART * share if public else 0.0
        earned_public = part * sum(public) / len(public) if public else 0.0
        every = bool(runs) and all(passed)
        fns.append(
            {
                "name": shown,
                "public_max": part,
                "public": earned_public,
                "verdict": (share - part) if every else 0.0,
                "failed": passed.count(False),
                "tests": len(runs),
            }
        )
    each = [
        f"  {f['name']}: {f['public'] + f['verdict']:.2f} of {share:.2f} points"
        + (f" ({f['failed']} of its {f['tests']} tests failed)" if f["failed"] else "")
        for f in fns
    ]
    public_max = round(sum(f["public_max"] for f in fns), 2)
    public_score = round(sum(f["public"] for f in fns), 2)
    total = round(sum(f["public"] + f["verdict"] for f in fns), 2)
    head = list(notes)
    if error is not None:
        head.append(error)
    passed_public = sum(public_tests.values())
    lines = [*head, f"{passed_public} of {len(public_tests)} public tests passed."]
    lines += _dedupe(public_fail)
    formula = (
        f"Score: the task's {plan.points:g} points are split equally among its "
        f"{len(fns)} functions; each is graded with the course's code around it. "
        f"{PUBLIC_PART:.0%} of a function's share is earned in proportion to its public "
        "tests that pass, the rest only when all its tests pass"
    )
    if not has_hidden:
        lines.append(formula + ". Each function:")
        return [
            {
                "name": name,
                "number": number(plan.task),
                "score": total,
                "max_score": plan.points,
                "status": "passed" if total >= plan.points - 1e-9 else "failed",
                "output": _clip("\n".join(lines + each), output_limit),
                "visibility": "visible",
            }
        ]
    lines.append(formula + ", the hidden ones too (the entry shown once grades are published).")
    entries = [
        {
            "name": name,
            "number": number(plan.task),
            "score": public_score,
            "max_score": public_max,
            "status": "passed" if all(public_tests.values()) and error is None else "failed",
            "output": _clip("\n".join(lines), output_limit),
            "visibility": "visible",
        }
    ]
    passed_hidden = sum(hidden_tests.values())
    hidden_lines = [f"{passed_hidden} of {len(hidden_tests)} hidden tests passed."]
    hidden_lines += _dedupe(hidden_fail)
    hidden_lines.append("Each function, earned when all its tests (public and hidden) pass:")
    hidden_lines += each
    entries.append(
        {
            "name": name + " (hidden tests)",
            "number": number(plan.task),
            "score": round(max(total - public_score, 0.0), 2),
            "max_score": round(plan.points - public_max, 2),
            "status": "passed" if total >= plan.points - 1e-9 else "failed",
            "output": _clip("\n".join(hidden_lines), output_limit),
            "visibility": "after_published",
        }
    )
    return entries


MISSING = "no such test in your file"
UNWRITTEN = "not written yet (it raises NotImplementedError)"


def test_task_entry(
    task: tuple[str, str, float],
    tests: tuple[str, ...],
    broken: dict[str, str],
    mutants: list[dict[str, Any]],
    caught: dict[str, list[str]],
    output_limit: int,
    notes: list[str],
) -> dict[str, Any]:
    """The entry of a test-writing task: its points times the share of mistakes caught.

    ``task`` is (id, title, points); ``broken`` the student's tests that fail on the
    course's correct code (each earns nothing), with why; ``mutants`` the mistakes graded
    (those the course's own tests catch: ``id``, ``function``, ``kind``); ``caught`` the
    student's other tests that fail on each. The feedback names the tests and, for the
    mistakes no test caught, the function and kind of change, never the changed code.
    """
    tid, title, points = task
    n = sum(1 for m in mutants if caught.get(m["id"]))
    score = round(points * n / len(mutants), 2) if mutants else 0.0
    lines = [*notes, f"{len(tests) - len(broken)} of your {len(tests)} tests pass on correct code."]
    lines += [
        f"{t}: {why}, so it earns nothing"
        if why in (MISSING, UNWRITTEN)
        else f"{t} fails on the course's correct code ({why}): it earns nothing (a property "
        "must hold for every correct input)"
        for t, why in broken.items()
    ]
    lines.append(
        f"Your tests catch {n} of {len(mutants)} mistakes: small changes to the course's "
        "functions (a comparison, an operator or a constant changed, a statement dropped) "
        "that the course's own tests catch."
    )
    per_test = {t: 0 for t in tests if t not in broken}
    for m in mutants:
        for t in caught.get(m["id"], []):
            per_test[t] = per_test.get(t, 0) + 1
    if per_test:
        lines.append("Mistakes each test catches:")
        lines += [f"  {t}: {k}" for t, k in per_test.items()]
    missed: dict[str, list[str]] = {}
    for m in mutants:
        if not caught.get(m["id"]):
            missed.setdefault(m["function"], []).append(m["kind"])
    if missed:
        lines.append("Not caught, by function (how many, and the kinds of change):")
        lines += [
            f"  {f}: {len(kinds)} ({', '.join(sorted(set(kinds)))})"
            for f, kinds in sorted(missed.items())
        ]
    lines.append(f"Score: {points:g} points times the share of the mistakes your tests catch.")
    return {
        "name": f"Task {number(tid)}: {title}",
        "number": number(tid),
        "score": score,
        "max_score": points,
        "status": "passed" if score >= points - 1e-9 else "failed",
        "output": _clip("\n".join(lines), output_limit),
        "visibility": "visible",
    }


def _dedupe(lines: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for ln in lines:
        if ln not in seen:
            seen.add(ln)
            out.append(ln)
    return out


def results(entries: list[dict[str, Any]], took: float, output: str) -> dict[str, Any]:
    """Gradescope's ``results.json`` content."""
    return {
        "score": round(sum(e["score"] for e in entries), 2),
        "execution_time": round(took),
        "output": output,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": entries,
    }
