"""A week of the calendar: its dates, starters and release tags."""

from __future__ import annotations

from typing import Any

from .config import Calendar, load_calendar

__all__ = ["week_plan", "week_table"]


def week_plan(number: int, cal: Calendar | None = None) -> dict[str, Any]:
    """The starters week ``number`` opens, its dates and the release tags it pushes."""
    cal = cal or load_calendar()
    w = cal.week(number)
    return {
        "week": w.week,
        "opens": w.opens.isoformat(),
        "deadline": w.deadline.isoformat(),
        "starters": list(w.starters),
        "tags": [f"mt-{n}-v{cal.layer(n).solution_version}" for n in w.release_solutions],
    }


def week_table(plan: dict[str, Any]) -> str:
    """``week_plan``'s answer as a small table for people."""
    rows = [
        ("week", str(plan["week"])),
        ("opens", plan["opens"]),
        ("deadline", plan["deadline"]),
        ("starters", ", ".join(f"mt-{s}" for s in plan["starters"]) or "(none)"),
        ("release tags", ", ".join(plan["tags"]) or "(none)"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
