"""The MiniTorch course tool: write, prove and grade the weekly student starters.

    hatch run course:assign LAYER --out DIR      # the student starter of LAYER
    hatch run course:check LAYER | --all         # generate it and prove it right
    hatch run course:grade DIR --layer LAYER --out results.json
    hatch run course:grade-all DIR --layer LAYER --out gradebook.csv [--jobs N]
    hatch run course:autograder LAYER --out autograder.zip   # Gradescope's bundle
    hatch run course:attacks LAYER               # the hostile submissions, graded
    hatch run course:mutants LAYER [--sample N]  # how many mutants the grader catches
    hatch run course:week N [--json]             # the dates, starters and tags of week N

See tools/course/README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .attacks import run_attacks
from .bundle import autograder
from .check import check
from .config import CalendarError, load_calendar
from .grade import grade
from .gradebook import grade_all, merge_grades
from .grader import grading
from .layers import CourseError
from .mutants import run_mutants
from .starter import assign
from .weeks import week_plan, week_table

__all__ = ["main"]

_ISOLATION = "how to isolate the student's code (default: the strongest this machine has)"
_RECALIBRATE = (
    "measure the calibration again (it is kept per course, grading Python, isolation and "
    "machine, and reused by the next grade or grade-all)"
)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="course", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("assign", help="write the student starter of a layer")
    p.add_argument("layer")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--week", type=int, help="the week, shown in the README")
    p.add_argument(
        "--keep", action="append", default=[], metavar="TASK", help="keep this task's code"
    )
    p.add_argument("--guide-url", help="the course guide's URL (course.toml's [guide] url)")
    p = sub.add_parser("check", help="generate a starter and prove it right")
    p.add_argument("layers", nargs="*")
    p.add_argument("--all", action="store_true", help="every layer of course.toml")
    p.add_argument(
        "--one-task",
        action="store_true",
        help="also prove each task's tests fail when only that task is missing",
    )
    p = sub.add_parser("grade", help="grade a student's directory")
    p.add_argument("dir", type=Path)
    p.add_argument("--layer", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--data-dir", type=Path, help="real data for the training subset")
    p.add_argument("--isolation", choices=["bwrap", "user", "none"], help=_ISOLATION)
    p.add_argument("--task", action="append", default=[], help="only this task (repeatable)")
    p.add_argument("--recalibrate", action="store_true", help=_RECALIBRATE)
    p = sub.add_parser("grade-all", help="grade a folder of submissions into a gradebook")
    p.add_argument("dir", type=Path, help="one folder or zip per student, named for them")
    p.add_argument("--layer", required=True)
    p.add_argument("--out", type=Path, required=True, help="the gradebook (CSV) to write")
    p.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    p.add_argument("--shard", help="I/N: grade every N-th submission, the I-th of each N")
    p.add_argument("--data-dir", type=Path, help="real data for the training subset")
    p.add_argument("--isolation", choices=["bwrap", "user", "none"], help=_ISOLATION)
    p.add_argument("--recalibrate", action="store_true", help=_RECALIBRATE)
    p = sub.add_parser("merge-grades", help="join gradebooks of shards into one")
    p.add_argument("parts", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("attacks", help="grade the hostile submissions, locally and in the bundle")
    p.add_argument("layer")
    p.add_argument("--only", action="append", default=[], help="this attack only (repeatable)")
    p.add_argument("--local-only", action="store_true", help="not in the bundle")
    p.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    p.add_argument("--json", type=Path, help="also write the table as JSON")
    p.add_argument("--isolation", choices=["bwrap", "user"], help=_ISOLATION)
    p = sub.add_parser("autograder", help="write a layer's Gradescope autograder bundle")
    p.add_argument("layer")
    p.add_argument("--out", type=Path, required=True, help="the zip file to write")
    p.add_argument(
        "--data-dir",
        type=Path,
        help="real data for the training subset (default: $MINITORCH_DATA)",
    )
    p = sub.add_parser("mutants", help="grade mutants of a layer's solution blocks")
    p.add_argument("layer")
    p.add_argument("--task", action="append", default=[], help="only this task (repeatable)")
    p.add_argument("--sample", type=int, help="this many mutants per task, chosen at random")
    p.add_argument(
        "--per-function", type=int, help="this many mutants of each graded function (typical ones)"
    )
    p.add_argument(
        "--whole-task",
        action="store_true",
        help="grade each mutant with all of its task's runs and show every function's points",
    )
    p.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    p.add_argument(
        "--first-failure",
        action="store_true",
        help="stop each mutant's tests at the first failure (kept points: an upper bound)",
    )
    p.add_argument("--json", type=Path, help="also write every outcome to this file")
    p = sub.add_parser("week", help="print a week's dates, starters and release tags")
    p.add_argument("week", type=int)
    p.add_argument("--json", action="store_true", help="as JSON (for scripts)")
    p.add_argument("--github-output", type=Path, help="also write them as step outputs")
    args = parser.parse_args(argv)

    try:
        cal = load_calendar()
        if args.command == "assign":
            st = assign(
                args.layer,
                args.out,
                keep=frozenset(args.keep),
                week=args.week,
                cal=cal,
                guide_url=args.guide_url,
            )
            replaced = {t: n for t, n in st.blocks.items() if t not in st.kept}
            shown = ", ".join(f"{t}: {n}" for t, n in sorted(replaced.items()))
            print(f"wrote {st.path} (solution blocks replaced: {shown or 'none'})")
            return 0
        if args.command == "check":
            names = list(cal.layers) if args.all else args.layers
            if not names:
                parser.error("name a layer or give --all")
            failed = []
            for name in names:
                t0 = time.perf_counter()
                problems = check(name, cal, one_task=args.one_task)
                took = time.perf_counter() - t0
                for prob in problems:
                    print(f"FAIL {name}: {prob}")
                print(f"{'FAIL' if problems else 'ok'} {name} ({took:.0f}s)")
                if problems:
                    failed.append(name)
            if failed:
                print(f"course check failed for: {', '.join(failed)}")
            return 1 if failed else 0
        if args.command == "grade":
            res = grade(
                args.dir,
                args.layer,
                cal=cal,
                data_dir=args.data_dir,
                isolation=args.isolation,
                tasks=tuple(args.task) or None,
                recalibrate=args.recalibrate,
            )
            args.out.write_text(json.dumps(res, indent=2) + "\n", "utf-8")
            for t in res["tests"]:
                print(f"{t['name']}: {t['score']:g}/{t['max_score']:g}")
            print(f"total: {res['score']:g} (isolation: {res.get('isolation')})")
            return 0
        if args.command == "grade-all":
            t0 = time.perf_counter()
            rows = grade_all(
                args.dir,
                args.layer,
                args.out,
                jobs=args.jobs,
                shard=args.shard,
                cal=cal,
                data_dir=args.data_dir,
                isolation=args.isolation,
                recalibrate=args.recalibrate,
            )
            graded = sum(r["status"] == "graded" for r in rows)
            print(
                f"wrote {args.out}: {len(rows)} submissions, {graded} graded, "
                f"{len(rows) - graded} not ({time.perf_counter() - t0:.0f} s)"
            )
            return 0
        if args.command == "merge-grades":
            n = merge_grades(args.parts, args.out)
            print(f"wrote {args.out}: {n} students")
            return 0
        if args.command == "attacks":
            return run_attacks(
                args.layer,
                only=args.only,
                bundle=not args.local_only,
                jobs=args.jobs,
                json_out=args.json,
                cal=cal,
                isolation=args.isolation,
            )
        if args.command == "mutants":
            if args.sample is not None and args.sample <= 0:
                raise CourseError(f"--sample must be positive, got {args.sample}")
            return run_mutants(
                args.layer,
                tasks=args.task,
                sample=args.sample,
                seed=args.seed,
                first_failure=args.first_failure,
                json_out=args.json,
                per_function=args.per_function,
                whole_task=args.whole_task,
            )
        if args.command == "autograder":
            zipped = autograder(args.layer, args.out, cal=cal, data_dir=args.data_dir)
            print(f"wrote {zipped} ({zipped.stat().st_size / 1e6:.1f} MB)")
            return 0
        plan = week_plan(args.week, cal)
        print(json.dumps(plan) if args.json else week_table(plan))
        if args.github_output:
            with args.github_output.open("a", encoding="utf-8") as f:
                f.write(f"starters={json.dumps(plan['starters'])}\n")
                f.write(f"tags={' '.join(plan['tags'])}\n")
        return 0
    except (CalendarError, CourseError, grading.SubmissionError) as e:
        first, *_ = str(e).splitlines() or [""]
        print(f"error: {first if isinstance(e, grading.SubmissionError) else e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        if args.command not in ("grade", "grade-all"):
            raise
        # The grader refuses rather than give zeros: the course's own solution did not
        # earn every point here (calibration), or no sandbox can run the worker.
        first, *rest = str(e).splitlines() or [""]
        print(f"error: not graded: {first}", file=sys.stderr)
        for line in rest[:40]:
            print(f"  {line}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
