"""Build wheels, make fresh virtual environments and run pytest in them, with limits.

A fresh environment gets the packages under test installed from wheels built from the
checkout, or editable from it (``pip install --no-index``: the index does not have them).
The third-party packages (pytest, hypothesis, numpy, numba, ...) come from the course
environment through a ``.pth`` line, so nothing is downloaded; the course environment
itself holds no ``minitorch`` package (it is a detached hatch environment), so the layer
under test is always the one installed here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Run", "build_wheel", "make_venv", "run_pytest"]

HERE = Path(__file__).resolve().parent


def _run(cmd: list[str | Path], cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n"
            f"{proc.stdout[-4000:]}{proc.stderr[-4000:]}"
        )


def build_wheel(project: Path, outdir: Path) -> None:
    """Build the wheel of ``project`` into ``outdir`` with hatchling, offline."""
    _run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", outdir], cwd=project)


def make_venv(
    where: Path, wheelhouse: Path, requirements: list[str], editable: tuple[Path, ...] = ()
) -> Path:
    """Create a virtual environment, install ``requirements`` from ``wheelhouse`` only.

    The projects in ``editable`` are installed first, editable (``pip install -e``, offline,
    without their dependencies): their code runs from the checkout, so Numba's cache of
    their kernels (kept beside the sources) is shared with every other run from the
    checkout instead of being compiled again in each fresh environment.

    Returns the environment's Python.
    """
    import importlib.util

    if importlib.util.find_spec("minitorch") is not None:
        raise RuntimeError(
            "the course tool must run where no minitorch package is installed "
            "(use `hatch run course:...`, a detached environment)"
        )
    _run([sys.executable, "-m", "venv", "--without-pip", where])
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    out = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    site = Path(out.stdout.strip())
    # addsitedir, not a bare path: the course environment's own .pth files must run too
    # (numba-cuda's makes `numba.cuda` its own module instead of Numba's built-in one).
    tools = sysconfig.get_paths()["purelib"]
    (site / "_course_tools.pth").write_text(f"import site; site.addsitedir({tools!r})\n")
    pip: list[str | Path] = [python, "-m", "pip", "install", "--quiet", "--no-index"]
    if editable:
        edits: list[str | Path] = []
        for project in editable:
            edits += ["-e", project]
        _run([*pip, "--no-deps", "--no-build-isolation", "--no-cache-dir", *edits])
    if requirements:
        _run([*pip, "--no-cache-dir", "--find-links", wheelhouse, *requirements])
    return python


@dataclass
class Run:
    """What one pytest process did."""

    returncode: int | None
    timed_out: bool
    output: str
    dropped: int
    records: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False

    @property
    def tests(self) -> list[dict[str, Any]]:
        """The per-test records (not the session's end marker)."""
        return [r for r in self.records if "nodeid" in r]


def run_pytest(
    python: Path,
    args: list[str],
    cwd: Path,
    *,
    timeout: float,
    output_limit: int,
    pythonpath: tuple[Path, ...] = (),
    env: dict[str, str] | None = None,
) -> Run:
    """Run ``python -m pytest -p probe ARGS`` in ``cwd`` with a time and an output limit.

    The process gets its own session, so a time-out kills it and every child it started.
    Only the first ``output_limit`` bytes of its output are kept. ``env`` adds variables
    (``COURSE_PROBE_TRACE``: the functions whose calls the probe records, see probe.py).
    """
    probe_out = cwd / ".probe.jsonl"
    probe_out.unlink(missing_ok=True)
    plugin_dir = cwd / ".probe"
    plugin_dir.mkdir(exist_ok=True)
    shutil.copy2(HERE / "probe.py", plugin_dir / "probe.py")
    extra = env or {}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [*pythonpath, plugin_dir])
    env["COURSE_PROBE_OUT"] = str(probe_out)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    cmd = [str(python), "-m", "pytest", "-p", "probe", "-p", "no:cacheprovider", *args]
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    kept = bytearray()
    dropped = 0

    def read() -> None:
        nonlocal dropped
        assert proc.stdout is not None
        while chunk := os.read(proc.stdout.fileno(), 65536):
            room = output_limit - len(kept)
            kept.extend(chunk[: max(room, 0)])
            dropped += max(len(chunk) - max(room, 0), 0)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    reader.join(timeout=10)
    records = []
    if probe_out.exists():
        for line in probe_out.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return Run(
        proc.returncode,
        timed_out,
        kept.decode("utf-8", errors="replace"),
        dropped,
        records,
        finished=any("finished" in r for r in records),
    )
