"""Start the worker where a hostile submission can do no harm, and make sure it is gone.

Three levels, the strongest this machine offers (:func:`isolation`):

- ``bwrap`` (bubblewrap, the sandbox Flatpak uses): new user, PID, network, IPC and mount
  namespaces; the worker sees the Python installation and its own folder read-only, a
  private ``/tmp`` and home, no network, no other process, and nothing of the grader's
  files (the solution, the hidden tests, the results). It dies with its parent, and every
  process it started dies with it (its PID namespace ends).
- ``user`` (running as root without bubblewrap, as Gradescope does): the worker runs as an
  unprivileged user of its own (a fresh uid per concurrent grading), so file permissions
  keep it out of the grader's files; every process of that uid is killed at the end.
- ``none`` (neither): only the limits below and a process group. The grader says so in
  its output: use it for a course's own solutions, not for students' code.

Every level sets resource limits on the worker and all it starts: address space
(memory), processes, file size (disk), open files, CPU seconds, no core dumps.

The process limit counts the processes of the worker's user, and Linux does not apply it
to root: a bwrap sandbox started by root (the grading service, CI) maps its user to root,
so a fork bomb would be stopped only by the CPU limit, after making thousands of
processes that slow every other grading on the machine. In ``bwrap`` mode the worker
therefore also gets a seccomp filter (libseccomp, through ``pyseccomp``) that refuses new
processes and lets threads start: the worker never needs a process of its own. As root,
``bwrap`` is offered only where that filter can be made.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Jail",
    "Limits",
    "SandboxError",
    "descendants",
    "end_user",
    "isolation",
    "kill",
    "reap",
    "reap_zombies",
    "shared_folders",
    "spawn",
    "sweep_files",
    "tree_cpu",
    "user_problem",
]


@dataclass(frozen=True)
class Limits:
    """Resource limits of the worker (each of its processes)."""

    memory: int = 6 << 30  # bytes of address space (Numba and LLVM reserve much)
    processes: int = 256  # processes and threads of its user (not root's: see the docstring)
    file_size: int = 256 << 20  # bytes a file it writes may reach
    open_files: int = 256
    cpu: int = 3600  # CPU seconds of one process (the grader's own budget is finer)
    disk: int = 512 << 20  # bytes its home may hold


@dataclass(frozen=True)
class Jail:
    """Where and as whom the worker runs.

    Args:
        mode: ``bwrap``, ``user`` or ``none`` (see the module's docstring).
        home: the worker's writable folder (its home, cwd and Numba cache).
        readable: folders the worker reads (its code, the Python installation).
        uid: the user it runs as in ``user`` mode (and inside the bwrap sandbox).
        env: the worker's environment.
        hidden: folders of the grader's (the course, its private scratch): a folder the
            sandbox would show that holds one of them, or lies inside one, is refused.
    """

    mode: str
    home: Path
    readable: tuple[Path, ...] = ()
    uid: int = 65534
    env: dict[str, str] = field(default_factory=dict)
    hidden: tuple[Path, ...] = ()  # folders no bound folder may hold (the course's)


@functools.cache
def _bwrap_works() -> bool:
    exe = shutil.which("bwrap")
    if exe is None:
        return False
    try:
        proc = subprocess.run(
            [exe, "--unshare-all", "--die-with-parent", *_system_binds(), "--", "/bin/true"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


CLONE_THREAD = 0x00010000


@functools.cache
def no_new_processes() -> bytes | None:
    """A seccomp program (BPF) that refuses new processes and lets threads start.

    ``fork``, ``vfork`` and a ``clone`` without ``CLONE_THREAD`` fail with EAGAIN (as at a
    process limit); ``clone3`` fails with ENOSYS, so the C library falls back to ``clone``.
    A system call of another architecture's table ends the process (libseccomp's default).
    None where libseccomp or its binding is missing.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError, OSError):
        return None
    refuse = seccomp.ERRNO(errno.EAGAIN)
    flt = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in ("fork", "vfork"):
        with contextlib.suppress(Exception):  # not on every architecture (aarch64 has none)
            flt.add_rule(refuse, name)
    flt.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    flt.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as f:
        flt.export_bpf(f)
        f.seek(0)
        return f.read()


@functools.cache
def user_problem(python: str, uid: int = 60000) -> str | None:
    """Why a worker running as ``uid`` cannot start ``python`` here (None: it can).

    ``user`` isolation runs the worker as a user of its own, who must be able to execute
    the grading Python and read its installation: a Python under a private home (a pyenv
    in ``/root``, mode 700) or a grading folder only root reads keeps it out, and every
    test would then fail without a line of the student's code having run.
    """
    if os.geteuid() != 0:
        return "user isolation needs root"
    try:
        proc = subprocess.run(
            [python, "-I", "-c", "import encodings, json, socket"],
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/"},
            cwd="/",
            user=uid,
            group=uid,
            extra_groups=[],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return f"user {uid} cannot run {python}: {e}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return f"user {uid} cannot run {python}: {last[:300]}"
    return None


def isolation(wanted: str | None = None, python: str | None = None) -> str:
    """The strongest level this machine offers, or ``wanted`` if it works here.

    With ``python`` (the interpreter the worker runs), ``user`` is offered only where a
    user of its own can start it (:func:`user_problem`). As root, ``none`` (the student's
    code running as root, unconfined) is never chosen unasked.

    Raises:
        RuntimeError: if ``wanted`` is a level this machine cannot give, or (as root) no
            level can run the worker; the message names the cause.
    """
    levels = []
    why: dict[str, str] = {}
    # As root, the process limit does not hold in the sandbox: only with the filter.
    if not _bwrap_works():
        why["bwrap"] = "bubblewrap is not installed here, or cannot make user namespaces"
    elif os.geteuid() == 0 and no_new_processes() is None:
        why["bwrap"] = "as root it needs libseccomp and pyseccomp (for its process filter)"
    else:
        levels.append("bwrap")
    if os.geteuid() == 0:
        problem = user_problem(python) if python is not None else None
        if problem is None:
            levels.append("user")
        else:
            why["user"] = problem
    else:
        why["user"] = "user isolation needs root"
    if wanted is None and os.geteuid() == 0 and not levels:
        raise RuntimeError(
            "the worker could not start: no isolation can run it here ("
            + "; ".join(f"{k}: {v}" for k, v in why.items())
            + "); install bubblewrap (tools/course/install-sandbox.sh), or make the grading "
            "Python readable by other users"
        )
    levels.append("none")
    if wanted is None:
        return levels[0]
    if wanted not in levels:
        raise RuntimeError(
            f"the worker could not start: isolation {wanted!r} is not available here "
            f"({why.get(wanted, 'unknown level')}; available: {', '.join(levels)})"
        )
    return wanted


def _system_binds() -> list[str]:
    out = []
    for p in ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin"):
        if os.path.exists(p):
            out += ["--ro-bind", p, p]
    for p in (
        "/etc/ld.so.cache",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/localtime",
        "/etc/nsswitch.conf",
        "/etc/passwd",
        "/etc/group",
        "/etc/alternatives",
        "/sys/devices/system/cpu",
    ):
        if os.path.exists(p):
            out += ["--ro-bind", p, p]
    return out


def _python_paths(python: Path) -> list[Path]:
    """What running ``python`` reads: its installation, its environment, their site dirs."""
    # Asked as the worker runs (``-I``, an environment of its own): the caller's
    # ``PYTHONPATH`` (the grader's copy of the solution, in its test process) must not
    # become a folder the sandbox shows.
    probe = subprocess.run(
        [
            str(python),
            "-I",
            "-c",
            "import sys, os; print('\\n'.join([sys.prefix, sys.base_prefix, *sys.path]))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        cwd="/",  # an empty entry of the path (``-c`` before 3.11) is then "/", not kept
    )
    paths = {Path(p).resolve() for p in probe.stdout.splitlines() if p.strip()}
    paths.add(Path(os.path.realpath(python)).parent.parent)
    keep: list[Path] = []
    for p in sorted(paths, key=lambda x: len(x.parts)):
        if p.exists() and str(p) != "/" and not any(p.is_relative_to(k) for k in keep):
            keep.append(p)
    return keep


@functools.cache
def python_paths(python: str) -> tuple[Path, ...]:
    """:func:`_python_paths`, once per interpreter."""
    return tuple(_python_paths(Path(python)))


class SandboxError(RuntimeError):
    """The worker cannot be started as asked (a folder it would see is the course's)."""


def shown(python: str, jail: Jail) -> tuple[Path, ...]:
    """The folders a ``bwrap`` sandbox binds beside the system's: Python's and ``readable``.

    Raises:
        SandboxError: if one of them holds, or lies inside, a folder of ``jail.hidden``.
    """
    paths = (*python_paths(python), *(Path(p).resolve() for p in jail.readable))
    for p in paths:
        for h in jail.hidden:
            h = Path(h).resolve()
            if p.is_relative_to(h) or h.is_relative_to(p):
                how = "lies inside" if p.is_relative_to(h) else "holds"
                raise SandboxError(
                    f"the worker would see {p}, which {how} the grader's {h}: the grading "
                    "Python's search path reaches the course"
                )
    return paths


def _limit(limits: Limits, new_net: bool) -> None:
    """Runs in the child before it executes the worker."""
    for what, value in (
        (resource.RLIMIT_AS, limits.memory),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_FSIZE, limits.file_size),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CPU, limits.cpu),
        (resource.RLIMIT_CORE, 0),
    ):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(what, (value, value))
    if new_net:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.unshare(0x40000000)  # CLONE_NEWNET: no network (where allowed)
        except OSError:
            pass


def spawn(
    argv: list[str],
    jail: Jail,
    limits: Limits,
    *,
    pass_fds: tuple[int, ...] = (),
    python: str = sys.executable,
    stdout: int | None = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (the worker) in ``jail`` with ``limits``; its environment is ``jail.env``."""
    jail.home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(jail.home), **jail.env}
    if jail.mode == "bwrap":
        cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
        cmd += _system_binds()
        cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(256 << 20), "--tmpfs", "/tmp"]
        for p in shown(python, jail):
            cmd += ["--ro-bind", str(p), str(p)]
        # Its home is a size-limited tmpfs too: a disk it cannot fill (and gone with it).
        cmd += ["--size", str(limits.disk), "--tmpfs", str(jail.home), "--chdir", str(jail.home)]
        cmd += ["--uid", str(jail.uid), "--gid", str(jail.uid), "--hostname", "worker"]
        cmd += ["--clearenv"]
        for k, v in env.items():
            cmd += ["--setenv", k, v]
        program = no_new_processes()
        with tempfile.TemporaryFile() as bpf:
            fds = pass_fds
            if program is not None:
                bpf.write(program)
                bpf.seek(0)
                cmd += ["--seccomp", str(bpf.fileno())]
                fds = (*pass_fds, bpf.fileno())
            cmd += ["--", *argv]
            return subprocess.Popen(
                cmd,
                pass_fds=fds,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=subprocess.STDOUT,
                preexec_fn=functools.partial(_limit, limits, False),
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )
    if jail.mode == "user":
        os.chown(jail.home, jail.uid, jail.uid)
        jail.home.chmod(0o700)
        return subprocess.Popen(
            argv,
            pass_fds=pass_fds,
            cwd=jail.home,
            env=env,
            user=jail.uid,
            group=jail.uid,
            extra_groups=[],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.STDOUT,
            preexec_fn=functools.partial(_limit, limits, True),
        )
    return subprocess.Popen(
        argv,
        pass_fds=pass_fds,
        cwd=jail.home,
        env=env,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.STDOUT,
        preexec_fn=functools.partial(_limit, limits, False),
    )


def used_bytes(path: Path, most: int = 20_000) -> int:
    """Bytes of disk the files under ``path`` use.

    A folder of more than ``most`` entries counts as full: walking it would take too long.
    """
    total, seen = 0, 0
    todo = [str(path)]
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > most:
                return 1 << 62
            try:
                if e.is_dir(follow_symlinks=False):
                    todo.append(e.path)
                else:
                    total += e.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                pass
    return total


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its end.
    return raw[raw.rfind(")") + 2 :].split()


def _parents() -> dict[int, int]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(int(name))
            if fields is not None:
                out[int(name)] = int(fields[1])
    return out


def descendants(pid: int) -> list[int]:
    """Every living process below ``pid`` (children, theirs, ...)."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds used by ``pid`` and every process below it (reaped ones included)."""
    total = 0
    for p in (pid, *descendants(pid)):
        fields = _stat(p)
        if fields is not None:
            # utime stime cutime cstime: fields 14-17 of stat, 12-15 after the name.
            total += sum(int(x) for x in fields[11:15])
    return total / _TICK


def _kill_uid(uid: int) -> None:
    """Kill every process of ``uid`` (run as that uid, ``kill -9 -1`` reaches exactly those).

    A shell started as ``uid`` by ``subprocess`` (its child does the ``setuid`` in C
    before ``exec``), not ``os.fork`` with Python code in the child: grade-all calls this
    from its threads, and a forked child of a threaded process may deadlock on a lock
    another thread held (the allocator's) before it reaches ``setuid``.
    """
    subprocess.run(
        ["/bin/sh", "-c", "kill -9 -1"],
        user=uid,
        group=uid,
        extra_groups=[],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        check=False,
        timeout=30,
    )


def _of_uid(uid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    out.append(int(name))
            except OSError:
                pass
    return out


def kill(proc: subprocess.Popen[bytes], jail: Jail, timeout: float = 10.0) -> bool:
    """Kill the worker and everything it started; True once none is left.

    ``bwrap``: killing the sandbox ends its PID namespace. ``user``: every process of
    the jail's uid. ``none``: the worker's process group and every process below it.
    """
    deadline = time.monotonic() + timeout
    mine = jail.mode == "none"  # orphans come back to this process (a subreaper)
    ever: set[int] = set()  # what ran below the worker: orphaned once it is killed
    me = os.getpid()
    before = {p for p, parent in _parents().items() if parent == me} - {proc.pid}
    while True:
        below = descendants(os.getpid() if mine else proc.pid)
        ever.update(below)
        for p in [proc.pid, *below]:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
        if jail.mode == "none":
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
        if jail.mode == "user" and os.geteuid() == 0:
            _kill_uid(jail.uid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)
        reap_zombies(keep=(proc.pid,))
        left = descendants(os.getpid() if mine else proc.pid)
        left += [p for p in ever if _lingers(p)]
        if jail.mode == "user":
            left += _of_uid(jail.uid)
        if proc.poll() is not None and not left:
            # A child bwrap was making as it was killed was in no list above: orphaned,
            # it comes back here (a subreaper) a moment later, and is killed and collected.
            settle = time.monotonic() + 0.05
            while time.monotonic() < settle:
                reap_zombies()
                late = {p for p, parent in _parents().items() if parent == me} - before
                if late:
                    for p in late:
                        with contextlib.suppress(OSError):
                            os.kill(p, signal.SIGKILL)
                    settle = min(time.monotonic() + 0.05, deadline)
                time.sleep(0.005)
            return True
        if time.monotonic() > deadline:
            return False


def _lingers(pid: int) -> bool:
    """Whether ``pid`` still runs, or is a zombie this process must still collect."""
    fields = _stat(pid)
    if fields is None:
        return False
    return fields[0] not in ("Z", "X") or int(fields[1]) == os.getpid()


def reap_zombies(keep: tuple[int, ...] = ()) -> int:
    """Collect every child of this process that has ended (but ``keep``); how many.

    Killing a sandbox orphans what ran inside it (bwrap's own init, a worker's children);
    they come back to this process, a subreaper (:func:`become_subreaper`), and stay as
    zombies until waited for: one a worker start, never collected until the grading
    ended, would fill the process table over a class.
    """
    me, n = os.getpid(), 0
    for pid, parent in _parents().items():
        if parent != me or pid in keep:
            continue
        fields = _stat(pid)
        if fields is None or fields[0] not in ("Z", "X"):
            continue
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                n += 1
    return n


SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock", "/run/shm")
"""Folders every user may write: a worker running as a user of its own can leave files there."""

_NOT_WALKED = ("/proc", "/sys")


@functools.cache
def shared_folders(depth: int = 3) -> tuple[str, ...]:
    """:data:`SHARED_FOLDERS` and every other folder any user may write, ``depth`` deep.

    ``user`` isolation keeps a worker's writes from the next run by sweeping these after
    each: whatever this machine makes world-writable (``/run/lock``, a spool), not only
    the usual three.
    """
    found = {os.path.realpath(p) for p in SHARED_FOLDERS if os.path.isdir(p)}
    level = ["/"]
    for _ in range(depth):
        nxt = []
        for d in level:
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            for e in entries:
                if e.path in _NOT_WALKED:
                    continue
                try:
                    if not e.is_dir(follow_symlinks=False):
                        continue
                    if e.stat(follow_symlinks=False).st_mode & stat.S_IWOTH:
                        found.add(e.path)
                    else:
                        nxt.append(e.path)
                except OSError:
                    continue
        level = nxt[:5000]
    return tuple(sorted(found))


def sweep_files(uid: int, folders: tuple[str, ...] | None = None) -> int:
    """Delete every file and folder ``uid`` owns below ``folders``; return how many.

    ``folders`` defaults to every folder any user may write (:func:`shared_folders`).

    A worker that runs as a user of its own (``user`` mode) could keep what one task's
    hidden tests showed it in ``/tmp`` for the next task's worker (the same uid) to print
    into a public test's feedback. Links are removed, never followed.
    """
    removed = 0
    for top in shared_folders() if folders is None else folders:
        for root, dirs, files in os.walk(top, topdown=False, followlinks=False):
            for name in [*files, *dirs]:
                path = os.path.join(root, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if st.st_uid != uid:
                    continue
                with contextlib.suppress(OSError):
                    if stat.S_ISDIR(st.st_mode):
                        shutil.rmtree(path)
                    else:
                        os.unlink(path)
                    removed += 1
    return removed


def become_subreaper() -> None:
    """Adopt orphaned descendants (a daemon the worker started comes back to this process).

    Linux only; a no-op where ``prctl`` is missing.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def end_user(uid: int, timeout: float = 10.0) -> bool:
    """Kill every process of ``uid``, delete its files in shared folders; True once none runs.

    ``grade-all`` calls it when one slot's submission is done, while the other slots
    grade: unlike :func:`reap` it touches no other process of this one (a second slot's
    test process is one too, and :func:`reap` killed it, grading that submission's later
    tasks 0). Only root can kill another user's processes; elsewhere this is a no-op.
    """
    if os.geteuid() != 0:
        return True
    deadline = time.monotonic() + timeout
    me = os.getpid()
    while True:
        _kill_uid(uid)
        left = []
        for pid in _of_uid(uid):
            fields = _stat(pid)
            if fields is None:
                continue
            if fields[0] in ("Z", "X"):
                if int(fields[1]) == me:  # an orphan of the slot's, come back here
                    with contextlib.suppress(ChildProcessError, OSError):
                        os.waitpid(pid, os.WNOHANG)
                continue  # another parent's zombie: nothing runs
            left.append(pid)
        if not left:
            sweep_files(uid)
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def reap(uid: int | None = None, timeout: float = 10.0) -> bool:
    """Kill every process below this one (and, as root, every process of ``uid``).

    Only where nothing else is being graded (every slot's test process is below this
    one: a slot that is done calls :func:`end_user`). The grader calls it before it
    writes the results: with this process a subreaper
    (:func:`become_subreaper`), a daemon the submission started is one of them.
    Returns True once none is left.
    """
    deadline = time.monotonic() + timeout
    while True:
        left = descendants(os.getpid())
        if uid is not None and os.geteuid() == 0:
            _kill_uid(uid)
            left += _of_uid(uid)
        if not left:
            return True
        for p in left:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
