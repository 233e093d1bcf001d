"""The worker's sandbox: what a process inside it can and cannot start."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

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


def test_the_filter_is_a_seccomp_program():
    """It is made here (the dependencies are installed), as whole BPF instructions of 8 bytes."""
    program = sandbox.no_new_processes()
    assert program is not None, "pyseccomp and libseccomp are dependencies of the course tool"
    assert len(program) % 8 == 0
    assert len(program) >= 8 * 6
