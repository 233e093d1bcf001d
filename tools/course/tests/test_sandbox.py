"""The worker's sandbox: what a process inside it can and cannot start."""

from __future__ import annotations

import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from mtcourse.grader import sandbox

PROBE = textwrap.dedent(
    """
    import os, subprocess, threading
    try:
        pid = os.fork()
    except OSError as e:
        print("fork refused:", type(e).__name__)
    else:
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print("fork allowed")
    try:
        subprocess.run(["/bin/true"], check=True)
    except OSError as e:
        print("subprocess refused:", type(e).__name__)
    else:
        print("subprocess allowed")
    done = []
    threads = [threading.Thread(target=done.append, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("threads ran:", len(done))
    """
)


def _run_in(mode: str, tmp_path) -> str:
    jail = sandbox.Jail(mode, tmp_path / "home")
    proc = sandbox.spawn(
        [sys.executable, "-c", PROBE], jail, sandbox.Limits(), stdout=subprocess.PIPE
    )
    out, _ = proc.communicate(timeout=120)
    return out.decode()


def test_a_worker_in_bwrap_starts_threads_but_no_process(tmp_path):
    """A fork bomb stops at its first fork, also where the process limit does not hold (root)."""
    if sandbox.isolation() != "bwrap":
        pytest.skip("bubblewrap is not usable here")
    out = _run_in("bwrap", tmp_path)
    assert "fork refused: BlockingIOError" in out, out
    assert "subprocess refused: BlockingIOError" in out, out
    assert "threads ran: 32" in out, out  # Numba's threads and the CUDA simulator's blocks


def test_as_root_bwrap_is_not_offered_without_the_filter(monkeypatch):
    """Without libseccomp a root grader falls back to a user of the worker's own."""
    if os.geteuid() != 0:
        pytest.skip("the rule is about root")
    monkeypatch.setattr(sandbox, "no_new_processes", lambda: None)
    assert sandbox.isolation() == "user"
    with pytest.raises(RuntimeError, match="libseccomp"):
        sandbox.isolation("bwrap")


# x86-64's numbers: the architecture tag the filter checks, and the system calls it names.
AUDIT_ARCH_X86_64 = 0xC000003E
X86_64 = {"clone": 56, "fork": 57, "vfork": 58, "clone3": 435}
CLONE_THREAD = 0x10000


def test_the_filter_names_the_calls_that_make_processes_and_their_answers():
    """Read the BPF program itself: what it compares and what it answers (x86-64).

    It reads libseccomp's output as that library writes it for a few rules (one comparison
    per call); what the filter does to a running worker is the test above.
    """
    program = sandbox.no_new_processes()
    assert program is not None, "pyseccomp and libseccomp are dependencies of the course tool"
    if platform.machine() != "x86_64":
        pytest.skip("the system call numbers below are x86-64's")
    assert len(program) % 8 == 0  # whole instructions: code, jump-if-true, -false, constant
    code = list(struct.iter_unpack("=HBBI", program))
    equal = {k for op, _, _, k in code if op == 0x15}  # BPF_JMP | BPF_JEQ | BPF_K
    masks = {k for op, _, _, k in code if op == 0x54}  # BPF_ALU | BPF_AND | BPF_K
    answers = {k for op, _, _, k in code if op == 0x06}  # BPF_RET | BPF_K
    assert AUDIT_ARCH_X86_64 in equal  # another architecture's numbers mean other calls
    assert set(X86_64.values()) <= equal
    assert CLONE_THREAD in masks  # clone is refused unless it makes a thread
    errno = 0x00050000  # SECCOMP_RET_ERRNO | errno
    assert {errno | 11, errno | 38} <= answers  # EAGAIN (fork, vfork, clone), ENOSYS (clone3)
    assert 0x7FFF0000 in answers  # SECCOMP_RET_ALLOW: every other call


# ------------------------------------------------------------------ what a run leaves behind

ZOMBIES = textwrap.dedent(
    """
    import os, subprocess, sys
    from pathlib import Path
    from mtcourse.grader import sandbox
    sandbox.become_subreaper()  # as the grader's test process is
    mode, home = sys.argv[1], Path(sys.argv[2])
    for i in range(5):
        jail = sandbox.Jail(mode, home / str(i))
        proc = sandbox.spawn(["/bin/sleep", "60"], jail, sandbox.Limits())
        assert sandbox.kill(proc, jail)
    me = os.getpid()
    left = [p for p, parent in sandbox._parents().items() if parent == me]
    print("children left:", len(left))
    """
)


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_every_killed_worker_is_collected_not_left_a_zombie(tmp_path, mode):
    """Five workers started and killed leave no process of theirs, zombies included."""
    if mode == "bwrap" and sandbox.isolation() != "bwrap":
        pytest.skip("bubblewrap is not usable here")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", ZOMBIES, mode, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": here},
        check=True,
    ).stdout
    assert "children left: 0" in out, out


def test_every_folder_any_user_may_write_is_swept():
    """/run/lock and /var/lock as well as /tmp: a worker's note to the next run is found."""
    found = sandbox.shared_folders()
    for usual in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        if os.path.isdir(usual):
            assert os.path.realpath(usual) in found, (usual, found)
    for folder in found:
        assert os.stat(folder).st_mode & 0o002, folder  # each is world-writable


def test_user_isolation_is_refused_where_its_user_cannot_run_python(tmp_path, monkeypatch):
    """A Python only root can reach (a pyenv in /root, mode 700): refused, the cause named."""
    if os.geteuid() != 0:
        pytest.skip("user isolation needs root")
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    python = private / "python"
    python.write_text("#!/bin/sh\nexit 0\n")
    python.chmod(0o755)
    problem = sandbox.user_problem(str(python))
    assert problem is not None
    assert "cannot run" in problem, problem
    assert "ermission" in problem, problem
    with pytest.raises(RuntimeError, match="the worker could not start"):
        sandbox.isolation("user", str(python))
    monkeypatch.setattr(sandbox, "_bwrap_works", lambda: False)
    with pytest.raises(RuntimeError, match="no isolation can run it"):
        sandbox.isolation(None, str(python))  # never "none" for a student's code as root
    readable = Path(tempfile.mkdtemp(prefix="mtc-open-", dir="/tmp"))  # pytest's is 700
    try:
        readable.chmod(0o755)
        shutil.copy(python, readable / "python")
        assert sandbox.user_problem(str(readable / "python")) is None
        assert sandbox.isolation(None, str(readable / "python")) == "user"
    finally:
        shutil.rmtree(readable)


def test_ending_a_user_kills_its_processes_only_from_a_threaded_grader(tmp_path):
    """grade-all ends a slot's user from one of its threads while others grade: every
    process of that user dies (a daemon too), a process of another user lives on."""
    if os.geteuid() != 0:
        pytest.skip("killing another user's processes needs root")
    import threading

    theirs = subprocess.Popen(["sleep", "60"], user=60123, group=60123, extra_groups=[])
    daemon = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 60 & wait"], user=60123, group=60123, extra_groups=[]
    )
    other = subprocess.Popen(["sleep", "60"], user=60124, group=60124, extra_groups=[])
    try:
        done = []
        worker = threading.Thread(target=lambda: done.append(sandbox.end_user(60123)))
        worker.start()
        worker.join(60)
        assert done == [True]
        # Both end within the timeout (a sleep of 60 s would not); their statuses may be
        # collected by end_user itself, which reaps its user's zombies among our children.
        theirs.wait(timeout=10)
        daemon.wait(timeout=10)
        assert not [p for p in sandbox._of_uid(60123) if sandbox._lingers(p)]
        assert other.poll() is None  # another slot's user
    finally:
        for proc in (theirs, daemon, other):
            proc.kill()
            proc.wait()
