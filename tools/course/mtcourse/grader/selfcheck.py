"""The self-inspection check: what can a worker read of the course? Nothing, it must be.

A probe is started exactly as a worker is (the same sandbox, user, environment and
folders: :func:`grading._worker_spec`), walks every file it can read (the whole file
system it sees, ``/proc`` included) and hashes each one whose size is the size of a
secret: a file of the course folder (the solution, the full solution, the hidden and
public tests as they run, the calibration, the graded data, the mutants) that is not also
in the worker's own copy (the starter's files it is given). It prints what it found; the
grader compares. One match means the sandbox shows the course, and grading refuses.

Files shorter than :data:`SMALLEST` bytes are not secrets (an empty ``__init__.py`` equals
thousands of files of any system, and no solution fits in it).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from . import sandbox

__all__ = ["PROBE", "SMALLEST", "secrets", "self_inspect"]

SMALLEST = 32

_OWN = ("starter",)  # the course folder's parts the worker is given a copy of


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _hashes(top: Path) -> dict[str, str]:
    out = {}
    for p in top.rglob("*"):
        if p.is_file() and not p.is_symlink():
            h = _sha(p)
            if h is not None:
                out[str(p)] = h
    return out


def secrets(course_root: Path, code: Path) -> dict[str, str]:
    """sha256 -> a course file it is the content of, for every secret (see the module).

    ``code`` is the worker's copy: what it holds is the worker's to read.
    """
    given = set(_hashes(code).values())
    for part in _OWN:
        given |= set(_hashes(course_root / part).values())
    out: dict[str, str] = {}
    for path, h in sorted(_hashes(course_root).items()):
        rel = Path(path).relative_to(course_root)
        if rel.parts[0] in _OWN or h in given or Path(path).stat().st_size < SMALLEST:
            continue
        out.setdefault(h, str(rel))
    return out


PROBE = r"""
import hashlib, json, os, stat, sys
want = json.loads(sys.argv[1])          # {"sizes": [...], "most": N}
sizes, most = set(want["sizes"]), want["most"]
skip = {"/proc/kcore", "/proc/kmsg", "/sys/kernel/debug", "/proc/sys", "/sys/fs/cgroup"}
found, seen, hashed, errors = [], 0, 0, 0
todo = ["/"]
while todo:
    d = todo.pop()
    try:
        it = list(os.scandir(d))
    except OSError:
        errors += 1
        continue
    for e in it:
        p = e.path
        if p in skip or p.endswith(("/task", "/pagemap", "/mem", "/map_files")):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            errors += 1
            continue
        if stat.S_ISDIR(st.st_mode):
            # /proc's numbered folders: the processes this worker can see (its own, and
            # what its sandbox lets through); each is walked like any folder.
            todo.append(p)
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        seen += 1
        virtual = p.startswith(("/proc/", "/sys/"))  # sizes read 0 or 4096: read to know
        if not virtual and st.st_size not in sizes:
            continue
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            try:
                data = os.read(fd, most + 1)
            finally:
                os.close(fd)
        except OSError:
            errors += 1
            continue
        if len(data) in sizes:
            hashed += 1
            found.append([p, hashlib.sha256(data).hexdigest()])
print(json.dumps({"found": found, "seen": seen, "hashed": hashed, "errors": errors}))
"""


def self_inspect(course: Any, scratch: Path, isolation: str | None = None) -> dict[str, Any]:
    """Run the probe as a worker of ``course`` in ``isolation``; what it read of the course.

    Returns ``{"isolation", "seen", "hashed", "secrets", "leaks": [[path it read, course
    file], ...]}``; ``leaks`` must be empty.

    Raises:
        RuntimeError: if the probe did not run (its output names why).
    """
    from . import grading

    mode = sandbox.isolation(isolation, str(course.python))
    scratch.mkdir(parents=True, exist_ok=True)
    private, public = grading._scratch(Path(tempfile.mkdtemp(dir=scratch)))
    # The worker's copy as a student's starter makes it (the stubs: the solution's code
    # spliced in would make its files the worker's own, and so no secret).
    code, _ = grading.worker_folder(
        course, grading.starter_submission(course), public / "worker", grading._owner(mode, 60000)
    )
    wanted = secrets(course.root, code)
    sizes = sorted({(course.root / rel).stat().st_size for rel in wanted.values()})
    spec = grading._worker_spec(course, code, public / "homes" / "probe", mode, 60000)
    jail = sandbox.Jail(
        mode,
        Path(spec["home"]),
        (code,),
        60000,
        spec["env"],
        tuple(Path(p) for p in spec["hidden"]),
    )
    want = json.dumps({"sizes": sizes, "most": max(sizes, default=0)})
    argv = [str(course.python), "-I", "-c", PROBE, want]
    proc = sandbox.spawn(
        argv, jail, sandbox.Limits(), python=str(course.python), stdout=subprocess.PIPE
    )
    try:
        out, _ = proc.communicate(timeout=900)
    finally:
        sandbox.kill(proc, jail)
        if grading._owner(mode, 60000) is not None:
            sandbox.sweep_files(60000)
    text = out.decode("utf-8", "replace").strip()
    try:
        report = json.loads(text.splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise RuntimeError(
            f"the self-inspection probe did not run in {mode} isolation: {text[-2000:]}"
        ) from None
    leaks = [[p, wanted[h]] for p, h in report["found"] if h in wanted]
    shutil.rmtree(private.parent, ignore_errors=True)
    return {
        "isolation": mode,
        "seen": report["seen"],
        "hashed": report["hashed"],
        "secrets": len(wanted),
        "leaks": leaks,
    }
