"""How long a student waits for the tests of each starter: a table of measured times.

    hatch run course:starter-times [LAYER ...] [--filled] [--work DIR]

For each layer (default: all), the starter is written as ``assign`` writes it and installed
in a fresh virtual environment as its README says (``python -m pip install --find-links
wheels -e ".[test]"``, from the configured package index). Then, as a student runs them:

- ``pytest`` twice: the first run on a fresh install (no hypothesis database, Numba
  compiles every kernel it reaches), the second with those caches;
- ``pytest -m TASK`` for each task of the layer;
- with ``--filled``, for each task in order: the starter with that task's code and the
  earlier tasks' filled in (the solution's, as ``assign --keep TASK`` writes it), as a
  student who has got that far has it: ``pytest -m TASK`` (its tests now pass and run all
  their examples, and its kernels compile) and ``pytest``.

Each row has the wall-clock time, the CPU time (user + system, of pytest and its children:
less sensitive to other work on the machine than the wall-clock time), pytest's summary,
and the load average when it started. The header gives the CPU count. Times are only
comparable on a quiet machine with the same number of cores.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import dataclass
from pathlib import Path

from .config import Calendar, load_calendar
from .starter import assign

__all__ = ["Timing", "main", "measure_layer", "table"]


@dataclass(frozen=True)
class Timing:
    """One timed command."""

    layer: str
    what: str
    wall: float
    cpu: float
    summary: str
    load: float


def _summary(output: str) -> str:
    """The last line pytest printed, without its ``=`` and its own time."""
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    last = lines[-1].strip("= ") if lines else "(no output)"
    return re.sub(r" in [\d.]+s( \([\d:]+\))?$", "", last)


def _timed(layer: str, what: str, cmd: list[str], cwd: Path, env: dict[str, str]) -> Timing:
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    run = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(layer, what, wall, cpu, _summary(run.stdout + run.stderr), load)


def _install(starter: Path) -> Path:
    """A fresh virtual environment with the starter installed as its README says."""
    venv.create(starter / ".venv", with_pip=True)
    python = starter / ".venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--find-links", "wheels", "-e", ".[test]"],
        cwd=starter,
        check=True,
        capture_output=True,
    )
    return python


def _env(cal: Calendar, layer: str) -> dict[str, str]:
    """The environment a student's shell would have: no profile or CI override."""
    drop = {"HYPOTHESIS_PROFILE", "CI", "PYTHONPATH", "NUMBA_ENABLE_CUDASIM", "VIRTUAL_ENV"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(cal.layer(layer).test_env)
    return env


def _swap_code(starter: Path, filled: Path, layer: str) -> None:
    """Put ``filled``'s package (and training scripts) in place of ``starter``'s."""
    for rel in (Path("src") / "minitorch" / layer, Path("mt_examples")):
        if (filled / rel).is_dir():
            shutil.rmtree(starter / rel)
            shutil.copytree(filled / rel, starter / rel)


def measure_layer(cal: Calendar, layer: str, work: Path, *, filled: bool) -> list[Timing]:
    """Write, install and time the starter of ``layer`` in ``work/layer``."""
    starter = work / layer
    assign(layer, starter, cal=cal)
    python = _install(starter)
    env = _env(cal, layer)
    pytest = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    info = cal.layer(layer)
    tasks = info.task_ids  # with code to write
    marked = sorted({*tasks, *info.needs})  # every task marker a student may run
    rows = [
        _timed(layer, "pytest (first run)", pytest, starter, env),
        _timed(layer, "pytest", pytest, starter, env),
    ]
    rows += [_timed(layer, f"pytest -m {t}", [*pytest, "-m", t], starter, env) for t in marked]
    if filled:
        original = work / f"{layer}-original"
        shutil.copytree(starter, original, ignore=shutil.ignore_patterns(".venv", "wheels"))
        for i, t in enumerate(tasks):
            done = work / f"{layer}-{t}"
            assign(layer, done, cal=cal, keep=frozenset(tasks[: i + 1]), wheels=False)
            _swap_code(starter, done, layer)
            mark = [*pytest, "-m", t]
            rows.append(_timed(layer, f"up to {t} filled: pytest -m {t}", mark, starter, env))
            rows.append(_timed(layer, f"up to {t} filled: pytest", pytest, starter, env))
            _swap_code(starter, original, layer)
    return rows


def table(rows: list[Timing]) -> str:
    """The timings as a Markdown table."""
    out = [
        f"CPUs: {os.cpu_count()}",
        "",
        "| Layer | Command | Wall s | CPU s | Load | Result |",
        "|---|---|---:|---:|---:|---|",
    ]
    out += [
        f"| {r.layer} | `{r.what}` | {r.wall:.1f} | {r.cpu:.1f} | {r.load:.1f} | {r.summary} |"
        for r in rows
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="starter-times", description=__doc__.splitlines()[0])
    parser.add_argument("layers", nargs="*", help="layers to time (default: all)")
    parser.add_argument(
        "--filled", action="store_true", help="also time each task with its code filled in"
    )
    parser.add_argument("--work", type=Path, help="where to write the starters (kept)")
    args = parser.parse_args(argv)
    cal = load_calendar()
    layers = args.layers or list(cal.layers)
    unknown = [n for n in layers if n not in cal.layers]
    if unknown:
        print(f"error: unknown layer {', '.join(unknown)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="course-starter-times-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        rows: list[Timing] = []
        for layer in layers:
            rows += measure_layer(cal, layer, work, filled=args.filled)
            print(table([r for r in rows if r.layer == layer]), flush=True)
        print()
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
