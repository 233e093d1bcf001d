"""Grade a submission: the orchestrator, trusted, which alone writes ``results.json``.

A *course folder* (written by ``course autograder`` into the bundle, or by ``course grade``
into a temporary folder) holds what grading a layer needs and no student may see:

    spec.json         the layer's tasks, points and limits (:class:`GradeSpec`)
    units.json        the functions the student writes (``splice.Unit``)
    solution/         the layer's package as a submission has it, the course's code
    full/             the whole solution package (training tasks are graded with it)
    starter/          the starter's package (stubs): the worker's copy starts from it
    suite/            the public and hidden tests as they run
    mutants-<task>.json  a test-writing task's mutants: mistakes in the functions its
                      tests check (``key``, ``kind``, ``code``: the mutated function)
    calibration.json  the runs and their times on this machine (:func:`calibrate`)

For each task, one test process (``harness.py``) runs the task's tests on the grader's
copy of the layer, each test once per function it uses; that function alone comes from
the worker (``worker.py``), which runs the student's code in a sandbox (``sandbox.py``)
and answers in plain data (``wire.py``). This process only starts them, waits, kills
whatever is left of them, and scores the runs their records describe; it writes
``results.json`` after every process the submission could have started is gone.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import sandbox, splice
from .scoring import MISSING, UNWRITTEN, TaskPlan, results, task_entries, test_task_entry

__all__ = [
    "Course",
    "GradeSpec",
    "SubmissionError",
    "calibrate",
    "closed_folder",
    "find_submission",
    "grade",
    "main",
    "sizing_notes",
]

HERE = Path(__file__).resolve().parent

#: What a run of the student's code may take: ``max(MIN_CPU, FACTOR * the course's)`` CPU
#: seconds, and ``WALL_FACTOR`` times that in all (a busy machine runs it more slowly).
MIN_CPU = 10.0
FACTOR = 20.0
WALL_FACTOR = 4.0
MIN_WALL = 60.0

#: Limits on what is read of a submission.
MAX_FILES = 5000
MAX_BYTES = 50 << 20
MAX_FILE = 2 << 20
MAX_DATA_FILE = 64 << 10


class SubmissionError(ValueError):
    """The submission cannot be graded at all (missing, empty, not a starter)."""


@dataclass(frozen=True)
class GradeSpec:
    """What grading a layer needs to know (from course.toml), as the bundle stores it."""

    layer: str
    package: str
    tasks: tuple[tuple[str, str, float], ...]  # (task id, title, points)
    scaffold_tests: tuple[str, ...]
    output_limit: int
    version: str = "0"
    entry_points: tuple[tuple[str, str, str], ...] = ()  # (group, name, object reference)
    training_tasks: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()  # training scripts' file names in mt_examples/
    test_env: tuple[tuple[str, str], ...] = ()
    opaque: tuple[str, ...] = ()  # classes that cross as handles (autograd histories)
    pure: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (key, written arguments)
    whole: tuple[str, ...] = ()  # tasks graded on the student's whole copy at once
    stand_ins: tuple[tuple[str, str], ...] = ()  # (graded module, its faster twin)
    # Test-writing tasks: (task, its test file in the starter, the tests the student writes).
    test_tasks: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # (task, the files of the submission that are not code which its tests read).
    submitted: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_json(self) -> str:
        """The spec as JSON (``spec.json``)."""
        return json.dumps(asdict(self), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> GradeSpec:
        """Read a spec written by :meth:`to_json`."""
        d = json.loads(text)
        return cls(
            d["layer"],
            d["package"],
            tuple((t[0], t[1], float(t[2])) for t in d["tasks"]),
            tuple(d["scaffold_tests"]),
            int(d["output_limit"]),
            str(d.get("version", "0")),
            tuple((g, n, v) for g, n, v in d.get("entry_points", ())),
            tuple(d.get("training_tasks", ())),
            tuple(d.get("scripts", ())),
            tuple((k, v) for k, v in d.get("test_env", ())),
            tuple(d.get("opaque", ())),
            tuple((k, tuple(v)) for k, v in d.get("pure", ())),
            tuple(d.get("whole", ())),
            tuple((k, v) for k, v in d.get("stand_ins", ())),
            tuple((t, f, tuple(names)) for t, f, names in d.get("test_tasks", ())),
            tuple((t, tuple(files)) for t, files in d.get("submitted", ())),
        )

    @property
    def submitted_files(self) -> tuple[str, ...]:
        """Every file of the submission that is not code and that a task's tests read."""
        return tuple(dict.fromkeys(f for _, files in self.submitted for f in files))


@dataclass
class Course:
    """A course folder (see the module's docstring) and the Python that grades with it."""

    root: Path
    python: Path = field(default_factory=lambda: Path(sys.executable))

    @property
    def spec(self) -> GradeSpec:
        """The layer's spec."""
        return GradeSpec.from_json((self.root / "spec.json").read_text(encoding="utf-8"))

    @property
    def units(self) -> list[splice.Unit]:
        """The functions the student writes."""
        raw = json.loads((self.root / "units.json").read_text(encoding="utf-8"))
        return [splice.Unit(**u) for u in raw]

    def held_out_seed(self) -> int:
        """The seed of the held-out points the training tasks' networks are scored on.

        A secret of the course's: derived from its hidden tests (which no student has),
        so the same bundle scores every student, and its calibration, on the same points;
        never 0 (the training points' seed) nor 1 (the starter's practice points).
        """
        digest = hashlib.sha256(b"held-out points")
        hidden = self.root / "suite" / "hidden"
        for path in sorted(hidden.rglob("*")) if hidden.is_dir() else []:
            if path.is_file():
                digest.update(path.relative_to(hidden).as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
        return 2 + int.from_bytes(digest.digest()[:4], "big") % (2**31 - 3)

    def calibration(self) -> dict[str, Any]:
        """What :func:`calibrate` measured (raises if it has not run)."""
        path = self.root / "calibration.json"
        if not path.is_file():
            raise RuntimeError(f"{self.root} is not calibrated: run calibrate first")
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data


def unit_names(units: list[splice.Unit]) -> dict[str, str]:
    """The name a student sees for each unit.

    ``Class.method``, or ``file:name`` where two files have a function of that name.
    """
    count: dict[str, int] = {}
    for u in units:
        count[u.qualname] = count.get(u.qualname, 0) + 1
    return {u.key: u.qualname if count[u.qualname] == 1 else u.key for u in units}


# ------------------------------------------------------------------------- submissions
#
# A submission is read here, once, into plain texts (path inside it -> text); nothing
# after this reads the student's folder or zip again. Only regular files are read: a
# symbolic link anywhere on a path (a parent folder included), a device, a fifo or a
# socket is refused with a line of feedback, never followed or opened.

_SKIP = {"__pycache__", ".pytest_cache", ".hypothesis", ".git", ".venv", "venv", "wheels"}
_DEPTH = 8  # folders below the submission's root that are read
#: The files grading may read (code, tests, exports); others (a student's downloaded data,
#: images) are neither read nor counted against the limits.
_TEXT = (".py", ".json", ".toml", ".txt", ".md", ".cfg", ".ini")


@dataclass
class Tree:
    """A submission as plain data: its regular files' texts and what was refused."""

    files: dict[str, str | None] = field(default_factory=dict)  # None: not UTF-8, too large
    refused: dict[str, str] = field(default_factory=dict)  # path -> why it was not read
    size: int = 0

    def add(self, rel: str, raw: bytes | None, name: str) -> None:
        """Keep ``raw`` (None: too large to read) as the text of ``rel``."""
        if len(self.files) >= MAX_FILES:
            raise SubmissionError(f"{name} holds more than {MAX_FILES} files")
        if raw is not None:
            self.size += len(raw)
            if self.size > MAX_BYTES:
                raise SubmissionError(f"{name} holds more than {MAX_BYTES} bytes of files")
        try:
            self.files[rel] = None if raw is None else raw.decode("utf-8")
        except UnicodeDecodeError:
            self.files[rel] = None

    def why_missing(self, rel: str) -> str:
        """Why ``rel`` is not among the files: a refused entry on its path, or absence."""
        for bad, why in self.refused.items():
            if rel == bad or rel.startswith(bad + "/"):
                return f"{rel}: not read: {bad} is {why}"
        return f"{rel}: not found in the submission (or not a UTF-8 text file)"


def _kind(mode: int) -> str | None:
    """What a non-regular, non-folder file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link (links are not followed: submit the files themselves)"
    if stat.S_ISFIFO(mode):
        return "a fifo (only regular files are read)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device (only regular files are read)"
    if stat.S_ISSOCK(mode):
        return "a socket (only regular files are read)"
    return "not a regular file"


def _read_regular(dir_fd: int, name: str, limit: int) -> bytes | None:
    """The bytes of the regular file ``name`` in ``dir_fd`` (None if over ``limit``).

    Opened without following a link and without blocking (a fifo swapped in after the
    folder was listed is not waited on), then checked to be a regular file.
    """
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SubmissionError(f"{name} changed while it was read")
        if st.st_size > limit:
            return None
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return None if len(data) > limit else data
    finally:
        os.close(fd)


def read_folder(root: Path) -> Tree:
    """Every regular file below ``root`` (its resolved self), no link followed.

    Each folder is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so no
    path component, parents included, can lead outside ``root``.

    Raises:
        SubmissionError: past the limits on files and bytes.
    """
    tree = Tree()
    top = os.open(root.resolve(), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    todo: list[tuple[int, str, int]] = [(top, "", 0)]
    try:
        while todo:
            fd, prefix, depth = todo.pop()
            try:
                with os.scandir(fd) as it:
                    entries = sorted(it, key=lambda e: e.name)
                for e in entries:
                    rel = prefix + e.name
                    mode = e.stat(follow_symlinks=False).st_mode
                    if stat.S_ISDIR(mode):
                        if e.name in _SKIP or depth >= _DEPTH:
                            continue
                        sub = os.open(
                            e.name,
                            os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                            dir_fd=fd,
                        )
                        todo.append((sub, rel + "/", depth + 1))
                    elif (why := _kind(mode)) is not None:
                        tree.refused[rel] = why
                    elif e.name.endswith(_TEXT):
                        tree.add(rel, _read_regular(fd, e.name, MAX_FILE), root.name)
                    elif not prefix and e.name.endswith(".zip"):
                        tree.add(rel, None, root.name)  # a zip of the starter, read if alone
            except OSError as e:
                tree.refused[prefix.rstrip("/") or "."] = f"unreadable ({e.strerror})"
            finally:
                os.close(fd)
    finally:
        for fd, _, _ in todo:
            os.close(fd)
    return tree


def read_zip(path: Path) -> Tree:
    """Every regular member of the zip ``path``, read into memory (nothing is unpacked).

    Raises:
        SubmissionError: if it is not a zip, holds a path outside it, or passes the limits
            (its real sizes count, not those it claims).
    """
    tree = Tree()
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if len(infos) > MAX_FILES:
                raise SubmissionError(f"{path.name} holds more than {MAX_FILES} files")
            for info in infos:
                name = info.filename.replace("\\", "/")
                parts = [p for p in name.split("/") if p not in ("", ".")]
                if name.startswith("/") or ".." in parts or ":" in (parts[0] if parts else ""):
                    raise SubmissionError(f"{path.name} holds a path outside it: {info.filename}")
                if not parts or info.is_dir():
                    continue
                rel = "/".join(parts)
                if any(p in _SKIP for p in parts[:-1]) or len(parts) > _DEPTH + 1:
                    continue
                mode = info.external_attr >> 16
                why = _kind(mode) if stat.S_IFMT(mode) else None
                if why is not None:
                    tree.refused[rel] = why
                    continue
                if not rel.endswith(_TEXT):
                    continue
                if info.file_size > MAX_FILE:
                    tree.add(rel, None, path.name)
                    continue
                with z.open(info) as src:
                    raw = src.read(MAX_FILE + 1)
                tree.add(rel, raw if len(raw) <= MAX_FILE else None, path.name)
    except zipfile.BadZipFile as e:
        raise SubmissionError(f"{path.name} is not a valid zip file: {e}") from None
    except (OSError, EOFError, RuntimeError, NotImplementedError, ValueError) as e:
        if isinstance(e, SubmissionError):
            raise
        raise SubmissionError(
            f"{path.name} could not be unpacked: {type(e).__name__}: {e}"
        ) from None
    return tree


def _package(tree: Tree, layer: str) -> str | None:
    """The shallowest ``.../minitorch/<layer>`` folder of ``tree`` with an ``__init__.py``."""
    tail = f"minitorch/{layer}/__init__.py"
    found = [rel for rel in tree.files if rel == tail or rel.endswith("/" + tail)]
    if not found:
        return None
    best = min(found, key=lambda r: (r.count("/"), r))
    return best[: -len("/__init__.py")]


@dataclass
class Submission:
    """The student's files grading reads: the layer's unit files and training scripts."""

    files: dict[str, str | None]  # relative path (as in units) -> text, None if unreadable
    notes: list[str]
    # Files that are not code which tests read (``GradeSpec.submitted``): path -> text.
    data: dict[str, str | None] = field(default_factory=dict)


def _read(path: Path, limit: int = MAX_FILE) -> str | None:
    """A file of the course's own (never a student's: those are read by :func:`read_tree`)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > limit:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def read_tree(submission: Path, layer: str) -> Tree:
    """``submission`` (a starter folder, a zip of one, or a folder holding one zip) as data.

    Raises:
        SubmissionError: if it does not exist, is empty, or cannot be read.
    """
    try:
        st = os.lstat(submission)
    except OSError:
        raise SubmissionError(f"{submission} does not exist") from None
    if stat.S_ISLNK(st.st_mode):
        raise SubmissionError(f"{submission} is a symbolic link: submit the files themselves")
    try:
        if stat.S_ISDIR(st.st_mode):
            tree = read_folder(submission)
            if not any(not r.split("/")[0].startswith(".") for r in [*tree.files, *tree.refused]):
                raise SubmissionError(f"{submission} is empty: nothing was submitted")
            zips = [r for r in tree.files if "/" not in r and r.endswith(".zip")]
            if _package(tree, layer) is None and len(zips) == 1:
                tree = read_zip(submission / zips[0])
            return tree
        if stat.S_ISREG(st.st_mode) and (
            submission.suffix == ".zip" or zipfile.is_zipfile(submission)
        ):
            return read_zip(submission)
    except OSError as e:
        raise SubmissionError(f"{submission} could not be read: {e.strerror or e}") from None
    raise SubmissionError(f"{submission} is neither a folder nor a zip file")


def find_submission(
    submission: Path,
    layer: str,
    units: list[splice.Unit],
    test_files: tuple[str, ...] = (),
    data_files: tuple[str, ...] = (),
) -> Submission:
    """Read the files of ``submission`` that grading takes functions (or tests) from.

    ``submission`` is a starter folder, a zip of one, or a folder holding one zip;
    ``test_files`` are the test-writing tasks' files (``tests/...``, from its root);
    ``data_files`` the files that are not code which tests read (``mt_examples/...``).
    It is read once, as plain files (:func:`read_tree`): each regular file at most
    ``MAX_FILE`` bytes (a data file at most ``MAX_DATA_FILE``), no link followed.

    Raises:
        SubmissionError: if it does not exist, is empty, or holds no package of the layer.
    """
    tree = read_tree(submission, layer)
    pkg = _package(tree, layer)
    if pkg is None:
        links = [f"{r} is {w}" for r, w in tree.refused.items() if "minitorch" in r or "src" in r]
        raise SubmissionError(
            f"{submission} holds no src/minitorch/{layer}/ package: submit the whole starter "
            "folder (or a zip of it)" + "".join(f"\n{line}" for line in links[:5])
        )
    parts = pkg.split("/")
    # The package's folder, its ``src/``, the starter's root (as prefixes of tree paths).
    base1 = "/".join(parts[:-2])
    base2 = "/".join(parts[:-3])

    def at(base: str, rel: str) -> str:
        return f"{base}/{rel}" if base else rel

    files: dict[str, str | None] = {}
    notes: list[str] = []
    for rel in test_files:
        files[rel] = tree.files.get(at(base2, rel))
        if files[rel] is None:
            notes.append(tree.why_missing(at(base2, rel)).replace(at(base2, rel), rel, 1))
    for rel in sorted({u.file for u in units}):
        if rel.startswith("mt_examples/"):
            places = [at(base2, rel), at(base1, rel)]
        else:
            places = [f"{pkg}/{rel}"]
        text = next((tree.files[p] for p in places if tree.files.get(p) is not None), None)
        files[rel] = text
        if text is None:
            notes.append(tree.why_missing(places[0]).replace(places[0], rel, 1))
    data: dict[str, str | None] = {}
    for rel in data_files:
        places = [at(base2, rel), at(base1, rel)]
        found = [tree.files[p] for p in places if tree.files.get(p) is not None]
        text = found[0] if found else None
        if text is not None and len(text.encode("utf-8")) > MAX_DATA_FILE:
            text = None
        data[rel] = text
        if text is None:
            missing = tree.why_missing(places[0])
            if "not found" in missing:
                missing = (
                    f"{rel}: not found in the submission (or not a UTF-8 text file of at "
                    f"most {MAX_DATA_FILE // 1024} kB)"
                )
            notes.append(missing.replace(places[0], rel, 1))
    return Submission(files, notes, data)


# -------------------------------------------------------------------------- the copies


_SUPPORT = {
    "_mtcourse_route.py": "route.py",
    "_mtcourse_wire.py": "wire.py",
    "_mtcourse_harness.py": "harness.py",
    "_mtcourse_sandbox.py": "sandbox.py",
    "_mtcourse_checks.py": "checks.py",
    "_mtcourse_worker.py": "worker.py",
}


def _support(where: Path, names: tuple[str, ...]) -> None:
    for name in names:
        shutil.copyfile(HERE / _SUPPORT[name], where / name)


def register(where: Path, spec: GradeSpec) -> None:
    """Distribution metadata beside the package, so its entry points are found."""
    info = where / f"{spec.package.replace('-', '_')}-{spec.version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {spec.package}\nVersion: {spec.version}\n", "utf-8"
    )
    groups: dict[str, list[str]] = {}
    for group, name, value in spec.entry_points:
        groups.setdefault(group, []).append(f"{name} = {value}")
    (info / "entry_points.txt").write_text(
        "".join(f"[{g}]\n" + "\n".join(lines) + "\n\n" for g, lines in groups.items()), "utf-8"
    )


def _package_file(root: Path, layer: str, rel: str) -> Path:
    return root / rel if rel.startswith("mt_examples/") else root / "minitorch" / layer / rel


def grader_folder(course: Course, where: Path, source: str = "solution") -> Path:
    """The grader's copy of the layer (``source``: ``solution`` or ``full``) in ``where``."""
    spec, units = course.spec, course.units
    shutil.copytree(course.root / source, where)
    by_file: dict[str, list[splice.Unit]] = {}
    for u in units:
        by_file.setdefault(u.file, []).append(u)
    for rel, file_units in by_file.items():
        path = _package_file(where, spec.layer, rel)
        path.write_text(splice.grader_copy(path.read_text("utf-8"), file_units), "utf-8")
    register(where, spec)
    _support(
        where,
        (
            "_mtcourse_route.py",
            "_mtcourse_wire.py",
            "_mtcourse_harness.py",
            "_mtcourse_sandbox.py",
            "_mtcourse_checks.py",
        ),
    )
    return where


LINE_MAP = "_mtcourse_lines.json"
"""The worker's copy's file of line maps (``splice.Taken.lines``), by path in the copy."""


def worker_folder(
    course: Course, submission: Submission | None, where: Path, owner: int | None = None
) -> tuple[Path, list[str]]:
    """The worker's copy: the starter with the student's functions.

    ``submission`` None takes the course's solution as if it were a student's (calibrating).
    """
    spec, units = course.spec, course.units
    shutil.copytree(course.root / "starter", where / "code")
    code = where / "code"
    notes: list[str] = []
    lines: dict[str, list[tuple[int, int, int]]] = {}  # the copy's lines -> the student's
    by_file: dict[str, list[splice.Unit]] = {}
    for u in units:
        by_file.setdefault(u.file, []).append(u)
    for rel, file_units in by_file.items():
        path = _package_file(code, spec.layer, rel)
        starter = path.read_text("utf-8")
        if submission is None:
            mine: str | None = _package_file(course.root / "solution", spec.layer, rel).read_text(
                "utf-8"
            )
        else:
            mine = submission.files.get(rel)
        text, taken = splice.worker_copy(starter, mine, file_units)
        path.write_text(text, "utf-8")
        if taken.lines:
            lines[path.relative_to(code).as_posix()] = taken.lines
        if submission is not None:
            if taken.error:
                notes.append(
                    f"{rel}: {taken.error}; its functions are graded as the starter's stubs"
                )
            for q in taken.missing:
                if not taken.error:
                    notes.append(f"{rel}: no function {q} (keep the starter's names)")
    # Where the student's functions sit in the copy: the worker's tracebacks name the
    # student's own lines (wire's ``_frames``), not the copy's.
    (code / LINE_MAP).write_text(json.dumps(lines), "utf-8")
    register(code, spec)
    _support(code, ("_mtcourse_route.py", "_mtcourse_wire.py", "_mtcourse_worker.py"))
    for path in [where, *where.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    if owner is not None:
        # A worker that runs as a user of its own reads its copy, and no other worker
        # (another student's, graded at the same time) does: the folder is its group's.
        # It owns none of it: it cannot change its code between runs, and the sweep of
        # what it owns after a run leaves its copy alone.
        os.chown(where, 0, owner)
        where.chmod(0o750)
    return code, notes


# --------------------------------------------------------------------------- test runs


def _scaffold(spec: GradeSpec, nodeid: str) -> bool:
    """Is ``nodeid`` one of the layer's scaffold tests (never graded)?"""
    names = {nodeid, nodeid.split("[")[0], nodeid.split("::")[0]}
    return any(f"tests/{t}" in names for t in spec.scaffold_tests)


def _task_tests(
    spec: GradeSpec, task: str, survey: list[dict[str, Any]]
) -> tuple[dict[str, list[str]], dict[str, str], dict[str, str]]:
    """From a survey: the plan of ``task``'s grading.

    Returns the tests that pass on the solution or skip after using graded functions (each
    with the functions it uses), where each of the latter skips (a student's run that skips
    there passes, one that skips anywhere else fails), and the tests not graded on this
    machine: those that skip before using any (with the reason).
    """
    plan: dict[str, list[str]] = {}
    skips: dict[str, str] = {}
    ungraded: dict[str, str] = {}
    for r in survey:
        if "nodeid" not in r or task not in r["tasks"] or _scaffold(spec, r["nodeid"]):
            continue
        if r["outcome"] == "skipped":
            where = _err(r).get("skip") or "?"
            if r["used"]:
                plan[r["nodeid"]] = r["used"]
                skips[r["nodeid"]] = where
            else:
                ungraded[r["nodeid"]] = where
        elif r["outcome"] == "passed" and r["used"]:
            plan[r["nodeid"]] = r["used"]
    return plan, skips, ungraded


def _owner(mode: str, uid: int) -> int | None:
    """The owner of a worker's copy: its user where it runs as one (``user``), else none."""
    return uid if mode == "user" and os.geteuid() == 0 else None


def _err(record: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = record.get("error") or {}
    return error


def _cpu(slot: int) -> int | None:
    """The CPU grading slot ``slot`` runs on (its test process and worker take turns)."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    return allowed[slot % len(allowed)] if allowed else None


def _grade_config(
    course: Course, task: str, planned: dict[str, Any], worker: dict[str, Any], **more: Any
) -> dict[str, Any]:
    """The harness's configuration to grade ``task`` through ``worker``.

    ``planned`` holds the task's plan as calibrated (``tests``: test -> the functions it
    uses; ``skips``: test -> where the course's solution skips it); ``more`` adds the
    run's limits, its CPU, a batch.
    """
    spec, units = course.spec, course.units
    return {
        "mode": "grade",
        "plan": planned["tests"],
        "skips": planned.get("skips", {}),
        "units": [u.key for u in units if u.task == task],
        "all_units": [u.key for u in units],
        "opaque": _opaque(spec),
        **_whole(spec, task),
        "stand_ins": dict(spec.stand_ins),
        "worker": worker,
        **more,
    }


def run_harness(
    course: Course,
    task: str,
    config: dict[str, Any],
    tfolder: Path,
    scratch: Path,
    timeout: float,
    submitted: dict[str, str | None] | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Run the harness for ``task`` with ``config``; its records and (bounded) output.

    ``submitted`` (path -> text, None where the submission lacks it) are the files that
    are not code which the tests read; they find them in ``$MTC_SUBMITTED``.
    """
    spec = course.spec
    run = scratch / f"run-{task}-{config['mode']}"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(course.root / "suite", run)
    given = run / ".submitted"
    if submitted is not None:
        for rel, text in submitted.items():
            if text is not None:
                (given / rel).parent.mkdir(parents=True, exist_ok=True)
                (given / rel).write_text(text, "utf-8")
        given.mkdir(exist_ok=True)
    out = run / ".records.jsonl"
    config = {"cpu": _cpu(0), **config, "out": str(out), "layer": spec.layer, "task": task}
    (run / ".harness.json").write_text(json.dumps(config), "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(dict(spec.test_env))
    env.update(
        PYTHONPATH=str(tfolder),
        PYTHONDONTWRITEBYTECODE="1",
        MTC_HARNESS=str(run / ".harness.json"),
        MINITORCH_QUIET="1",
        # The test process scores trained networks on points of this seed; the worker's
        # environment is its own (``_worker_spec``) and never holds it.
        MT_GRADED_SEED=str(course.held_out_seed()),
    )
    if submitted is not None:
        env["MTC_SUBMITTED"] = str(given)
    paths = [p for p in ("tests", "hidden") if (run / p).is_dir()]
    cmd = [str(course.python), "-m", "pytest", "-p", "_mtcourse_harness", "-p", "no:cacheprovider"]
    cmd += ["-q", "--tb=no", "-m", task, *paths]
    proc = subprocess.Popen(
        cmd,
        cwd=run,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        output, _ = proc.communicate()
        output += f"\n[the test process did not finish in {timeout:.0f} s]".encode()
    records = []
    if out.is_file():
        for line in out.read_text("utf-8", errors="replace").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    text = output.decode("utf-8", "replace")
    return records, text[-20000:]


def _worker_limits(spec: GradeSpec) -> sandbox.Limits:
    """The worker's limits: more threads where the tests run Numba's CUDA simulator.

    The simulator runs each thread of a block (up to 1024) as a thread of the worker, and
    the process limit counts threads.
    """
    if dict(spec.test_env).get("NUMBA_ENABLE_CUDASIM") == "1":
        return sandbox.Limits(processes=1024 + 256)
    return sandbox.Limits()


def _worker_spec(
    course: Course, code: Path, home: Path, isolation: str, uid: int, log: Path | None = None
) -> dict[str, Any]:
    spec = course.spec
    env = {
        "MTC_LAYER": spec.layer,
        "PYTHONDONTWRITEBYTECODE": "1",
        "MINITORCH_QUIET": "1",
        "NUMBA_CACHE_DIR": str(home / "numba-cache"),
        "TMPDIR": "/tmp" if isolation == "bwrap" else str(home),
        "MTC_PURE": json.dumps(dict(spec.pure)),
        **dict(spec.test_env),
    }
    boot = (
        f"import sys; sys.path.insert(0, {str(code)!r}); "
        "import _mtcourse_worker as w; sys.exit(w.main())"
    )
    return {
        "mode": isolation,
        "home": str(home),
        "readable": [str(code)],
        # Never shown to it, whatever Python's search path says: the course, and the
        # grader's private scratch (the tests, the records).
        "hidden": [str(course.root), str(home.parents[2] / "private")],
        "uid": uid,
        "env": env,
        "argv": [str(course.python), "-I", "-c", boot],
        "python": str(course.python),
        "limits": asdict(_worker_limits(spec)),
        "log": str(log) if log is not None else None,
        "start_cpu": 120.0,
        "start_wall": 300.0,
    }


def _limits(runs: dict[str, list[float]]) -> dict[str, list[float]]:
    out = {}
    for name, (cpu, wall) in runs.items():
        c = max(MIN_CPU, FACTOR * cpu)
        out[name] = [c, max(MIN_WALL, WALL_FACTOR * c, FACTOR * wall)]
    return out


def _opaque(spec: GradeSpec) -> list[str]:
    return list(spec.opaque)


def _whole(spec: GradeSpec, tid: str) -> dict[str, Any]:
    """The harness's settings of a task graded on the student's whole copy, if it is one."""
    if tid not in spec.whole:
        return {}
    return {"whole": True, "scripts": [f"mt_examples.{Path(s).stem}" for s in spec.scripts]}


def _submitted(
    spec: GradeSpec, tid: str, data: dict[str, str | None]
) -> dict[str, str | None] | None:
    """The files that are not code which ``tid``'s tests read (None: they read none)."""
    files = dict(spec.submitted).get(tid)
    return None if files is None else {rel: data.get(rel) for rel in files}


def course_files(course: Course) -> dict[str, str | None]:
    """The course's own copies of the files of ``GradeSpec.submitted`` (calibrating)."""
    base = course.root / "submitted-solution"
    return {rel: _read(base / rel, MAX_DATA_FILE) for rel in course.spec.submitted_files}


def _scratch(scratch: Path) -> tuple[Path, Path]:
    """Two folders: one only this user reads, one the worker's user reads too.

    The first holds the tests and the records, the second the worker's code and home.
    """
    private, public = scratch / "private", scratch / "public"
    scratch.mkdir(parents=True, exist_ok=True)
    scratch.chmod(0o711)
    private.mkdir(mode=0o700)
    public.mkdir(mode=0o755)
    (public / "homes").mkdir(mode=0o755)
    return private, public


def _tests_folder(spec: GradeSpec, folders: dict[str, Path], tid: str) -> Path:
    """The grader's copy ``tid``'s tests run in: the whole solution for a training task."""
    return folders["full" if tid in spec.training_tasks and "full" in folders else "solution"]


def _grader_folders(course: Course) -> dict[str, Path]:
    """The grader's copies, made once in the course folder.

    Numba's cache of the course's kernels lives beside them: what calibrating compiled,
    grading loads.
    """
    folders = {}
    for kind in ("solution", "full"):
        if (course.root / kind).is_dir():
            where = course.root / f"grader-{kind}"
            if not where.is_dir():
                grader_folder(course, where, kind)
            folders[kind] = where
    return folders


def calibrate(
    course: Course,
    scratch: Path,
    isolation: str | None = None,
    tasks: tuple[str, ...] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """Survey the tests and grade the course's own solution on this machine.

    Writes ``calibration.json`` into the course folder: per task, the tests that pass on
    the solution and the functions each uses (the plan of every grading), and each run's
    CPU and wall time with the solution as the student's code (the base of the time
    limits). The solution must earn every point, or this raises. ``tasks`` calibrates
    those only (what ``course mutants --task`` needs); the others keep what an earlier call
    measured. ``progress(done, total, what)`` is called as each step starts (a task's
    survey, its solution through the worker, its starter) and once at the end.

    Raises:
        RuntimeError: naming what failed (a test that fails through the worker but passes
            on the solution alone, a function no test uses).
    """
    spec, units = course.spec, course.units
    mode = sandbox.isolation(isolation, str(course.python))
    private, public = _scratch(scratch)
    folders = _grader_folders(course)
    names = unit_names(units)
    out: dict[str, Any] = {
        "isolation": mode,
        "machine": platform.processor() or platform.machine(),
        "tasks": {},
    }
    code, _ = worker_folder(course, None, public / "worker", _owner(mode, 60000))
    problems: list[str] = []
    path = course.root / "calibration.json"
    if tasks is not None and path.is_file():
        out["tasks"] = json.loads(path.read_text(encoding="utf-8"))["tasks"]
    chosen = [tid for tid, _, _ in spec.tasks if tasks is None or tid in tasks]
    steps = [
        (tid, what)
        for tid in chosen
        for what in (
            ("the course's tests on the solution and its mutants",)
            if _test_task(spec, tid) is not None
            else ("survey of the tests", "the solution through the worker")
            + (() if tid in spec.whole else ("the untouched starter",))
        )
    ]
    done = 0

    def step(tid: str, what: str) -> None:
        nonlocal done
        if progress is not None:
            number = tid.removeprefix("task").replace("_", ".")
            progress(done, len(steps), f"task {number}: {what}")
        done += 1

    for tid in chosen:
        if _test_task(spec, tid) is not None:
            step(tid, steps[done][1])
            out["tasks"][tid] = _calibrate_tests(course, tid, (private, public), mode, problems)
            continue
        step(tid, "survey of the tests")
        tfolder = _tests_folder(spec, folders, tid)
        task_units = [u.key for u in units if u.task == tid]
        t0 = time.monotonic()
        survey, text = run_harness(
            course,
            tid,
            {
                "mode": "survey",
                "units": task_units,
                "all_units": [u.key for u in units],
                "opaque": _opaque(spec),
            },
            tfolder,
            private,
            3600.0,
            _submitted(spec, tid, course_files(course)),
        )
        if not any("finished" in r for r in survey):
            raise RuntimeError(f"{tid}: the survey did not finish:\n{text[-4000:]}")
        plan, skips, ungraded = _task_tests(spec, tid, survey)
        broken = [
            f"\n  {r['nodeid']}: {_err(r).get('type')}: {_err(r).get('message', '')[:300]}"
            for r in survey
            if "nodeid" in r
            and tid in r["tasks"]
            and r["outcome"] in ("failed", "error")
            and not _scaffold(spec, r["nodeid"])
        ]
        if broken:  # with the grader's routing in place, it must change nothing
            problems.append(
                f"{tid}: tests that fail on the solution in the grader's copy:"
                + "".join(broken[:10])
            )
        unused = [names[k] for k in task_units if not any(k in v for v in plan.values())]
        if unused:
            problems.append(f"{tid}: no test uses {', '.join(unused)}")
        home = public / "homes" / tid
        step(tid, "the solution through the worker")
        config = _grade_config(
            course,
            tid,
            {"tests": plan, "skips": skips},
            _worker_spec(course, code, home, mode, 60000, private / f"{tid}.log"),
            limits={},
            default_limit=[600.0, 1800.0],
        )
        records, text = run_harness(
            course,
            tid,
            config,
            tfolder,
            private,
            7200.0,
            _submitted(spec, tid, course_files(course)),
        )
        failed = [r for r in records if "key" in r and r["outcome"] != "passed"]
        passed = {(r["nodeid"], r["key"]) for r in records if r.get("outcome") == "passed"}
        unrun = [
            f"{t} with {names.get(k, k)}"
            for t, ks in plan.items()
            for k in ks
            if (t, k) not in passed
        ]
        if plan and not passed:
            # Not one run of the course's own code passed: the worker does not start here.
            log = private / f"{tid}.log"
            said = log.read_text("utf-8", "replace").strip()[-1500:] if log.is_file() else ""
            why = next((_err(r).get("message", "") for r in records if "key" in r and _err(r)), "")
            raise RuntimeError(
                f"calibration failed: the worker could not start in {mode} isolation "
                f"({tid}: none of the course's {len(unrun)} planned runs passed: "
                f"{why[:300] or 'no record'})" + (f"\nthe worker said:\n{said}" if said else "")
            )
        if unrun and not failed:
            # Every planned run must leave a passed record: a worker that never started
            # (its Python unreadable to its user) would otherwise calibrate a task whose
            # every grading is 0.
            problems.append(
                f"{tid}: {len(unrun)} of the solution's planned runs left no record "
                f"(the worker could not start, or the tests stopped): {unrun[0]}\n{text[-2000:]}"
            )
        if failed or not any("finished" in r for r in records):
            shown = "\n".join(
                f"  {r['nodeid']} with {names.get(r['key'], r['key'])}: "
                f"{_err(r).get('type')}: {_err(r).get('message', '')[:300]}"
                for r in failed[:10]
            )
            problems.append(
                f"{tid}: the solution fails through the worker:\n{shown}\n{text[-2000:]}"
            )
        runs = {
            f"{r['nodeid']} {r['key']}": [r.get("cpu") or 0.0, r.get("wall") or 0.0]
            for r in records
            if "key" in r
        }
        out["tasks"][tid] = {
            "tests": plan,
            "skips": skips,
            "ungraded": ungraded,
            "runs": runs,
            "wall": time.monotonic() - t0,
            "survey_wall": sum(r.get("wall", 0.0) for r in survey if "nodeid" in r),
        }
        if tid not in spec.whole:
            step(tid, "the untouched starter")
            stubs = _starter_records(course, tid, out["tasks"][tid], (private, public), mode)
            if stubs is not None:
                out["tasks"][tid]["starter"] = stubs
    if progress is not None:
        progress(len(steps), len(steps), "done")
    if problems:
        raise RuntimeError("calibration failed:\n" + "\n".join(problems))
    path.write_text(json.dumps(out, indent=1) + "\n", "utf-8")
    return out


def starter_submission(course: Course) -> Submission:
    """The starter as the student got it, as a submission (every function a stub)."""
    rels = {u.file for u in course.units}
    base = course.root / "starter"
    return Submission(
        {rel: _package_file(base, course.spec.layer, rel).read_text("utf-8") for rel in rels}, []
    )


def _starter_records(
    course: Course,
    tid: str,
    planned: dict[str, Any],
    scratch: tuple[Path, Path],
    mode: str,
) -> list[dict[str, Any]] | None:
    """Grade ``tid`` of the untouched starter once, calibrating.

    What every submission whose functions of the task are the starter's stubs gets (see
    :func:`untouched`); None if the run did not finish.
    """
    private, public = scratch
    where = public / "starter-worker"
    if not where.is_dir():
        where.mkdir()
        worker_folder(course, starter_submission(course), where, _owner(mode, 60000))
    home = public / "homes" / f"{tid}-starter"
    config = _grade_config(
        course,
        tid,
        planned,
        _worker_spec(course, where / "code", home, mode, 60000, private / f"{tid}-starter.log"),
        limits=_limits(planned["runs"]),
        default_limit=[MIN_CPU * 3, MIN_WALL * 3],
    )
    tfolder = _tests_folder(course.spec, _grader_folders(course), tid)
    records, _ = run_harness(
        course,
        tid,
        config,
        tfolder,
        private,
        600.0 + 5 * planned["wall"],
        _submitted(course.spec, tid, {}),
    )
    shutil.rmtree(home, ignore_errors=True)
    if _owner(mode, 60000) is not None:
        sandbox.sweep_files(60000)
    return records if any("finished" in r for r in records) else None


def untouched(course: Course, sub: Submission, tid: str) -> bool:
    """Whether ``tid`` is graded as the starter was at calibration.

    That is when every function of the task in ``sub`` is the starter's stub and the task
    reads no file of the submission that is not code. A run of such a task depends on the
    course's code and the stubs alone (the student's other functions never run in it: the
    course's run in their place), so it earns what the starter earns, and the run is not
    repeated for every student who has not started the task.
    """
    files = _submitted(course.spec, tid, sub.data)
    if files is not None and any(text is not None for text in files.values()):
        return False
    by_file: dict[str, list[str]] = {}
    for u in course.units:
        if u.task == tid:
            by_file.setdefault(u.file, []).append(u.qualname)
    base = course.root / "starter"
    return all(
        splice.untouched(
            _package_file(base, course.spec.layer, rel).read_text("utf-8"),
            sub.files.get(rel),
            names,
        )
        for rel, names in by_file.items()
    )


# ------------------------------------------------------------- test-writing tasks

TEST_EXAMPLES = 15
"""Inputs Hypothesis draws for each of a student's tests in each run (the same every run)."""

SOLUTION_RUNS = 3
"""Runs of a student's tests on the course's correct code: one first, two among the
mutants' runs at places the student cannot know."""

TEST_BUDGET_FACTOR = 10.0
"""A student's tests may use this many times the CPU time the course's tests take in all
their runs (at least ``MIN_TEST_BUDGET`` s): beyond it, the mistakes not yet run count as
not caught, so slow tests cannot hold a grading machine for each run's full limit."""

MIN_TEST_BUDGET = 120.0

TESTS_MODULE = "_mtcourse_student_tests"


def _test_task(spec: GradeSpec, tid: str) -> tuple[str, tuple[str, ...]] | None:
    """A test-writing task's file and the tests the student writes; None for another task."""
    for task, file, names in spec.test_tasks:
        if task == tid:
            return file, names
    return None


def _mutants(course: Course, tid: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(
        (course.root / f"mutants-{tid}.json").read_text(encoding="utf-8")
    )
    return found


def _run_tests(
    course: Course,
    tid: str,
    text: str,
    runs: list[dict[str, Any]],
    limit: list[float],
    scratch: tuple[Path, Path],
    mode: str,
    uid: int,
    fresh: bool = True,
    budget: float | None = None,
) -> dict[str, dict[str, Any]]:
    """Run the tests ``text`` (a test file) once per entry of ``runs``; each run's record.

    The worker's copy is the starter's package, every graded function answered by the
    grader (the course's, or the run's mutant), with the tests beside it. ``fresh``: a new
    worker for each run (a student's tests); otherwise one serves the runs until one
    breaks it (the course's own tests, which remember nothing between runs). ``budget``:
    CPU seconds the runs may use in all; the runs after it record the event ``budget``.
    """
    file_names = _test_task(course.spec, tid)
    assert file_names is not None
    private, public = scratch
    where = public / f"tests-{tid}"
    shutil.rmtree(where, ignore_errors=True)
    # This user's, readable by all (the starter and the student's own tests: nothing to
    # hide), so that a worker running as a user of its own cannot write into it either:
    # a run that rewrote its tests could leave the next run what it saw.
    code, _ = worker_folder(course, Submission({}, []), where, None)
    target = code / f"{TESTS_MODULE}.py"
    target.write_text(text, "utf-8")
    target.chmod(0o644)
    config = {
        "mode": "tests",
        "student_tests": {
            "module": TESTS_MODULE,
            "tests": list(file_names[1]),
            "examples": TEST_EXAMPLES,
            "runs": runs,
            "limit": limit,
            "fresh": fresh,
            "budget": budget,
        },
        "units": [],
        "all_units": [u.key for u in course.units],
        "opaque": _opaque(course.spec),
        "worker": _worker_spec(
            course, code, public / "homes" / tid, mode, uid, private / f"{tid}.log"
        ),
        "cpu": _cpu(uid - 60000),
    }
    timeout = 600.0 + len(runs) * (limit[1] + 10.0)
    records, _ = run_harness(
        course, tid, config, _grader_folders(course)["solution"], private, timeout
    )
    shutil.rmtree(where, ignore_errors=True)
    if _owner(mode, uid) is not None:
        sandbox.sweep_files(uid)
    return {r["run"]: r for r in records if "run" in r}


def _failing(record: dict[str, Any] | None, tests: list[str]) -> list[str]:
    """The tests among ``tests`` that did not pass in a run (all of them if it broke)."""
    if record is None or "outcomes" not in record:
        return list(tests)
    return [t for t in tests if record["outcomes"][t][0] != "passed"]


def _calibrate_tests(
    course: Course, tid: str, scratch: tuple[Path, Path], mode: str, problems: list[str]
) -> dict[str, Any]:
    """Run the course's own tests of a test-writing task on the solution and every mutant.

    They must all pass on the solution; the mutants they catch are the ones a student's
    tests are graded by.
    """
    file_names = _test_task(course.spec, tid)
    assert file_names is not None
    file, tests = file_names
    text = (course.root / "suite" / file).read_text(encoding="utf-8")
    mutants = _mutants(course, tid)
    runs = [{"id": "s0"}] + [
        {"id": m["id"], "mutant": {"key": m["key"], "code": m["code"]}} for m in mutants
    ]
    t0 = time.monotonic()
    records = _run_tests(course, tid, text, runs, [120.0, 600.0], scratch, mode, 60000, fresh=False)
    solution = records.get("s0")
    failing = _failing(solution, list(tests))
    if failing:
        why = (solution or {}).get("message") or ", ".join(
            f"{t} ({solution['outcomes'][t][1]})" for t in failing if solution
        )
        problems.append(f"{tid}: the course's tests fail on the solution in the grader: {why}")
    missing = [m["id"] for m in mutants if m["id"] not in records]
    if missing:
        problems.append(f"{tid}: the runs of {len(missing)} mutants did not finish")
    caught = [m["id"] for m in mutants if _failing(records.get(m["id"]), list(tests))]
    # The mistakes that break a run of the course's tests (an endless loop, a crash): only
    # for those does a student's broken run count as a catch.
    breaks = [m["id"] for m in mutants if "outcomes" not in records.get(m["id"], {})]
    return {
        "kind": "tests",
        "mutants": caught,
        "breaks": breaks,
        "of": len(mutants),
        "cpu": max((r.get("cpu") or 0.0 for r in records.values()), default=0.0),
        "wall": time.monotonic() - t0,
    }


def _grade_tests(
    course: Course,
    task: tuple[str, str, float],
    sub: Submission,
    task_cal: dict[str, Any],
    scratch: tuple[Path, Path],
    mode: str,
    uid: int,
) -> dict[str, Any]:
    """Grade a student's tests: run on the course's code, then on each graded mutant.

    A test that fails on correct code in any of the ``SOLUTION_RUNS`` earns nothing; a
    mutant is caught when one of the other tests fails on it; a run that breaks (it ends
    or runs out of time) counts only for a mistake that breaks the course's tests' run too
    (an endless loop the mistake causes): a test that breaks runs at random would
    otherwise be paid for each mutant run it broke. The runs cannot share anything (see
    the harness), and the correct code's runs fall among the mutants' at random places.
    """
    import random

    spec = course.spec
    tid = task[0]
    file_names = _test_task(spec, tid)
    assert file_names is not None
    file, tests = file_names
    mutants = [m for m in _mutants(course, tid) if m["id"] in set(task_cal["mutants"])]
    cpu = max(MIN_CPU, FACTOR * task_cal["cpu"])
    limit = [cpu, max(MIN_WALL, WALL_FACTOR * cpu)]
    text = sub.files.get(file)
    if text is None:
        note = f"{file}: not found in the submission (or not a UTF-8 text file)"
        return test_task_entry(task, tests, {}, mutants, {}, spec.output_limit, [note])
    unwritten = _unwritten(text, tests)
    if len(unwritten) == len(tests):  # the starter's stubs (or none at all): nothing to run
        return test_task_entry(task, tests, unwritten, mutants, {}, spec.output_limit, [])
    first = _run_tests(course, tid, text, [{"id": "s0"}], limit, scratch, mode, uid)
    broken = _broken(first.get("s0"), tests)
    valid = [t for t in tests if t not in broken]
    caught: dict[str, list[str]] = {}
    notes: list[str] = []
    if valid and mutants:
        runs = [{"id": m["id"], "mutant": {"key": m["key"], "code": m["code"]}} for m in mutants]
        runs += [{"id": f"s{n}"} for n in range(1, SOLUTION_RUNS)]
        random.SystemRandom().shuffle(runs)
        budget = max(MIN_TEST_BUDGET, TEST_BUDGET_FACTOR * task_cal["cpu"] * len(runs))
        records = _run_tests(course, tid, text, runs, limit, scratch, mode, uid, budget=budget)
        over = [r for r in records.values() if r.get("event") == "budget"]
        if over:
            notes.append(
                f"Your tests used their CPU time for grading ({budget:.0f} s, "
                f"{TEST_BUDGET_FACTOR:g} times what the course's tests take) before "
                f"{len(over)} of their {len(runs)} runs: the mistakes of those runs count "
                "as not caught. Make them faster (smaller inputs, fewer loops)."
            )
        for n in range(1, SOLUTION_RUNS):
            record = records.get(f"s{n}")
            if record is not None and record.get("event") == "budget":
                continue
            for t, why in _broken(record, tests).items():
                broken.setdefault(t, f"{why}, in a later run")
        valid = [t for t in tests if t not in broken]
        breaks = set(task_cal.get("breaks", ()))
        ended = 0
        for m in mutants:
            record = records.get(m["id"])
            if record is not None and record.get("event") == "budget":
                caught[m["id"]] = []
            elif record is not None and "outcomes" not in record:
                # The mistake broke the run, or the tests did: the course's tests say which.
                caught[m["id"]] = list(valid) if m["id"] in breaks else []
                ended += m["id"] not in breaks
            else:
                caught[m["id"]] = _failing(record, valid) if record is not None else []
        if ended:
            notes.append(
                f"{ended} runs on mistakes ended before your tests reported (the process "
                "exited, crashed or ran out of time): such a run counts as a catch only for "
                "a mistake that also stops the course's own tests. Let a test fail with an "
                "assertion instead."
            )
    return test_task_entry(task, tests, broken, mutants, caught, spec.output_limit, notes)


def _unwritten(text: str, tests: tuple[str, ...]) -> dict[str, str]:
    """The tests ``text`` lacks, or whose body only raises ``NotImplementedError``, with why.

    The starter's stubs are such tests. None if the file does not parse (a run says why).
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    out = {t: MISSING for t in tests}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in out:
            del out[node.name]
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring
            if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None:
                exc = body[0].exc
                name = exc.func if isinstance(exc, ast.Call) else exc
                if isinstance(name, ast.Name) and name.id == "NotImplementedError":
                    out[node.name] = UNWRITTEN
    return out


def _broken(record: dict[str, Any] | None, tests: tuple[str, ...]) -> dict[str, str]:
    """The tests that did not pass in a run of the course's code, each with why."""
    if record is None:
        return {t: "the run did not finish" for t in tests}
    if "outcomes" not in record:
        why = str(record.get("message") or "the run broke")[:300]
        return {t: why for t in tests}
    out = {}
    for t in tests:
        outcome, kind = record["outcomes"][t]
        if outcome != "passed":
            out[t] = {"missing": MISSING, "skipped": "it skipped"}.get(outcome, kind or outcome)
    return out


_NO_MODULE = re.compile(r"could not import '([\w.]+)'")
"""pytest.importorskip's reason: the package a test skips without."""


def calibration_notes(cal: dict[str, Any]) -> list[str]:
    """What staff should know of a calibration: the tests this machine cannot grade in full.

    A test that skips here (it compares with PyTorch, which the grading environment
    lacks; it trains on data that is missing) is graded up to its skip if it used a graded
    function before it, else not at all.
    """
    lines = []
    for tid, task in cal["tasks"].items():
        for kind, what in (
            ("skips", "graded up to where it skips"),
            ("ungraded", "not graded, it skips before using a function"),
        ):
            # The tests that skip for a package this environment lacks (PyTorch, which
            # the tests compare with) are one line per package: expected, not an error.
            missing: dict[str, list[str]] = {}
            for nodeid, where in sorted(task.get(kind, {}).items()):
                found = _NO_MODULE.search(where)
                if found:
                    missing.setdefault(found.group(1), []).append(nodeid)
                else:
                    lines.append(f"{tid}: {what}: {nodeid} ({where})")
            for module, nodeids in sorted(missing.items()):
                tests = "1 test" if len(nodeids) == 1 else f"{len(nodeids)} tests"
                lines.append(
                    f"{tid}: {what} ({tests}, as expected: the grading environment has no "
                    f"{module}, which they compare with): {nodeids[0]}"
                    + (f" and {len(nodeids) - 1} more" if len(nodeids) > 1 else "")
                )
    return lines


def sizing_notes(cal: dict[str, Any], peak_kib: int) -> list[str]:
    """How to size the grading service, from a calibration on its machine.

    Args:
        cal: the calibration (each task's ``wall``: seconds of the solution's grading).
        peak_kib: the largest resident set of a process the calibration ran, in KiB
            (``getrusage(RUSAGE_CHILDREN).ru_maxrss`` on Linux).

    Returns:
        Two lines for the build log: the time to allow a submission, the memory to give it.
    """
    walls = {tid: float(task.get("wall", 0.0)) for tid, task in cal["tasks"].items()}
    total = sum(walls.values())
    slowest = max(walls, key=walls.__getitem__, default="-")
    # A correct submission may be slower than the course's (its limits allow 20x a run):
    # five times the solution's time, in whole minutes, leaves room for a slow but fair one.
    minutes = max(1, -(-int(5 * total) // 60))
    peak = peak_kib / 1024
    return [
        f"the solution graded in {total:.0f} s here (slowest: {slowest}, "
        f"{walls.get(slowest, 0.0):.0f} s): set the autograder's timeout to {minutes} min or more",
        f"its largest process used {peak:.0f} MiB: give the container "
        f"{max(1024, -(-int(2 * peak) // 512) * 512)} MiB or more",
    ]


def closed_folder(path: Path) -> Path | None:
    """The first folder above ``path`` that another user may not pass through, if any.

    A worker of its own user (``user`` isolation) reaches its code below ``path`` only if
    every folder on the way lets others search it (``x`` for others).
    """
    for folder in reversed(path.parents):
        if folder != folder.parent and not folder.stat().st_mode & 0o001:
            return folder
    return None


def grade(
    course: Course,
    submission: Path,
    scratch: Path,
    isolation: str | None = None,
    uid: int = 60000,
    tasks: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Grade ``submission``; return Gradescope's ``results.json`` content.

    ``tasks`` grades those tasks only (the results then hold their entries only).

    Raises:
        SubmissionError: if the submission is missing, empty, or holds no package.
    """
    spec, units = course.spec, course.units
    cal = course.calibration()
    mode = sandbox.isolation(isolation or cal.get("isolation"), str(course.python))
    t0 = time.monotonic()
    private, public = _scratch(scratch)
    closed = closed_folder(public) if mode == "user" else None
    if closed is not None:  # every worker would fail to start: a class graded 0
        raise RuntimeError(
            f"the worker could not start: its user cannot pass through {closed} "
            f"(mode {closed.stat().st_mode & 0o777:o}); nothing is graded"
        )
    test_files = tuple(f for _, f, _ in spec.test_tasks)
    sub = find_submission(submission, spec.layer, units, test_files, spec.submitted_files)
    code, notes = worker_folder(course, sub, public / "worker", _owner(mode, uid))
    notes = sub.notes + notes
    folders = _grader_folders(course)
    names = unit_names(units)
    entries: list[dict[str, Any]] = []
    for tid, title, points in spec.tasks:
        if tasks is not None and tid not in tasks:
            continue
        task_cal = cal["tasks"][tid]
        if _test_task(spec, tid) is not None:
            entries.append(
                _grade_tests(
                    course, (tid, title, points), sub, task_cal, (private, public), mode, uid
                )
            )
            continue
        task_units = [u.key for u in units if u.task == tid]
        plan = TaskPlan(
            tid,
            title,
            points,
            tuple((k, names[k]) for k in task_units),
            {n: tuple(v) for n, v in task_cal["tests"].items()},
        )
        limits = _limits(task_cal["runs"])
        home = public / "homes" / tid
        config = _grade_config(
            course,
            tid,
            task_cal,
            _worker_spec(course, code, home, mode, uid, private / f"{tid}.log"),
            limits=limits,
            default_limit=[MIN_CPU * 3, MIN_WALL * 3],
            cpu=_cpu(uid - 60000),
        )
        budget = (
            600.0
            + 5 * task_cal["wall"]
            + sum(2 * w for _, w in limits.values()) / max(len(limits), 1) * len(task_units)
        )
        tfolder = _tests_folder(spec, folders, tid)
        if "starter" in task_cal and untouched(course, sub, tid):
            records = task_cal["starter"]
        else:
            records, _ = run_harness(
                course, tid, config, tfolder, private, budget, _submitted(spec, tid, sub.data)
            )
            # What the worker kept of this task's (hidden) tests must not reach the next
            # task's worker, which runs as the same user: its home, and what it left in /tmp.
            shutil.rmtree(home, ignore_errors=True)
            if _owner(mode, uid) is not None:
                sandbox.sweep_files(uid)
        error = None
        if not any("finished" in r for r in records):
            error = (
                "The tests of this task stopped before the end (the time for the whole task "
                "ran out); the tests that did not run count as failed."
            )
        own = [u.file for u in units if u.task == tid] + list(dict(spec.submitted).get(tid, ()))
        mine = [n for n in notes if n.startswith(tuple(own))]
        entries += task_entries(plan, records, spec.output_limit, mine, error)
    out = results(
        entries,
        time.monotonic() - t0,
        f"Graded against the tests of {spec.package} (public and hidden).",
    )
    out["isolation"] = mode
    return out


def grade_units(
    course: Course,
    batch: list[tuple[str, dict[str, str], set[str]]],
    scratch: Path,
    *,
    first_failure: bool = False,
    isolation: str | None = None,
    uid: int = 60000,
) -> dict[str, list[dict[str, Any]]]:
    """Grade several submissions, each on the runs of some functions only; their records.

    ``batch`` holds ``(id, files, keys)``: the student's files of each submission, and
    the functions whose runs grade it. What ``course mutants`` asks: a mutant changes one
    function, so only that function's runs can notice it. One test process per task grades
    every submission of the batch in turn (``harness``'s batch mode); ``first_failure``
    stops a submission's runs at the first that fails (enough to know it is caught).
    Returns id -> its records (``finished`` marks a submission whose runs all ran).
    """
    spec, units = course.spec, course.units
    cal = course.calibration()
    mode = sandbox.isolation(isolation or cal.get("isolation"), str(course.python))
    private, public = _scratch(scratch)
    folders = _grader_folders(course)
    codes = {}
    for ident, files, _ in batch:
        codes[ident], _ = worker_folder(
            course, Submission(dict(files), []), public / f"w-{ident}", _owner(mode, uid)
        )
    out: dict[str, list[dict[str, Any]]] = {ident: [] for ident, _, _ in batch}
    for tid, _title, _points in spec.tasks:
        task_units = [u.key for u in units if u.task == tid]
        entries: list[dict[str, Any]] = [
            {
                "id": ident,
                "only": sorted(keys & set(task_units)),
                "worker": _worker_spec(
                    course,
                    codes[ident],
                    public / "homes" / f"{tid}-{ident}",
                    mode,
                    uid,
                    private / f"{tid}-{ident}.log",
                ),
            }
            for ident, _, keys in batch
            if keys & set(task_units)
        ]
        if not entries:
            continue
        task_cal = cal["tasks"][tid]
        config = _grade_config(
            course,
            tid,
            task_cal,
            entries[0]["worker"],
            batch=entries,
            first_failure=first_failure,
            limits=_limits(task_cal["runs"]),
            default_limit=[MIN_CPU * 3, MIN_WALL * 3],
            cpu=_cpu(uid - 60000),
        )
        tfolder = _tests_folder(spec, folders, tid)
        budget = 600.0 + 5 * task_cal["wall"] * len(entries)
        records, _ = run_harness(
            course,
            tid,
            config,
            tfolder,
            private,
            budget,
            _submitted(spec, tid, course_files(course)),
        )
        for r in records:
            if "batch" in r:
                out[r["batch"]].append(r)
            elif "batch_done" in r:
                out[r["batch_done"]].append({"finished": 0})
    return out


def results_for_error(spec: GradeSpec, units: list[splice.Unit], message: str) -> dict[str, Any]:
    """The results of a submission that cannot be graded: every task 0, saying why."""
    names = unit_names(units)
    entries = []
    for tid, title, points in spec.tasks:
        if _test_task(spec, tid) is not None:
            mine = test_task_entry((tid, title, points), (), {}, [], {}, spec.output_limit, [])
            entries.append({**mine, "output": f"Not graded: {message}"})
            continue
        keys = [u.key for u in units if u.task == tid]
        plan = TaskPlan(tid, title, points, tuple((k, names[k]) for k in keys), {})
        entries += task_entries(plan, [], spec.output_limit, [], f"Not graded: {message}")
    res = results(entries, 0.0, f"Not graded: {message}")
    return res


def selfcheck_command(course: Course, isolation: str | None) -> int:
    """``grader selfcheck``: the probe as a worker (:mod:`selfcheck`); 1 if it read a secret."""
    from .selfcheck import self_inspect

    wanted = isolation or course.calibration().get("isolation")
    with tempfile.TemporaryDirectory(prefix="mtc-selfcheck-") as tmp:
        Path(tmp).chmod(0o755)
        report = self_inspect(course, Path(tmp), wanted)
    print(
        f"self-inspection in {report['isolation']} isolation: {report['seen']} files "
        f"readable, {report['hashed']} hashed against {report['secrets']} files of the course"
    )
    for path, secret in report["leaks"][:20]:
        print(f"  the worker can read {path}: it is the course's {secret}")
    if report["leaks"]:
        print("refusing: a worker could read the course's files in this sandbox")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """The bundle's entry: ``python -m grader calibrate|grade|selfcheck``."""
    import argparse

    parser = argparse.ArgumentParser(prog="grader")
    parser.add_argument("command", choices=["calibrate", "grade", "selfcheck"])
    parser.add_argument("--course", type=Path, default=None)
    parser.add_argument("--isolation", default=None)
    args = parser.parse_args(argv)
    # Staff may choose the sandbox on the grading machine (``MTC_ISOLATION``); a
    # submission cannot set the grader's environment.
    args.isolation = args.isolation or os.environ.get("MTC_ISOLATION") or None
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    course = Course(args.course or root / "source" / "course")
    sandbox.become_subreaper()
    if args.command == "calibrate":
        with tempfile.TemporaryDirectory(prefix="mtc-calibrate-") as tmp:
            Path(tmp).chmod(0o711)  # a user-isolation worker passes through to its code
            started = time.monotonic()

            def step(done: int, total: int, what: str) -> None:
                # setup.sh's log, a line per step (no terminal to redraw a bar on)
                print(f"[{done}/{total}] {what} ({time.monotonic() - started:.0f} s)", flush=True)

            cal = calibrate(course, Path(tmp), args.isolation, progress=step)
        print(f"calibrated {course.spec.package}: isolation {cal['isolation']}")
        import resource

        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        for line in [*calibration_notes(cal), *sizing_notes(cal, peak)]:
            print(line)
        return 0
    if args.command == "selfcheck":
        return selfcheck_command(course, args.isolation)
    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mtc-grade-") as tmp:
        Path(tmp).chmod(0o755)
        try:
            res = grade(course, root / "submission", Path(tmp), args.isolation)
        except SubmissionError as e:
            res = results_for_error(course.spec, course.units, str(e))
        except OSError as e:  # the submission's own files (a name the disk refuses, ...)
            res = results_for_error(
                course.spec, course.units, f"the submission could not be read: {e}"
            )
    sandbox.reap()
    tmp_out = out.with_suffix(".tmp")
    tmp_out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp_out, out)
    for entry in res["tests"]:
        print(f"{entry['name']}: {entry['score']:g}/{entry['max_score']:g}")
    print(f"total: {res['score']:g}")
    return 0
