"""The tools around the kernels: the compile notice and ``minitorch.fast.diagnostics``.

They test what the package gives around the kernels (the notice, the reports), not the
kernels themselves, and each compiles kernels afresh (a child process with an empty cache,
or every operation once): a course starter leaves them out (``solution-only``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from minitorch.fast import PlainFastBackend, diagnostics, runtime
from minitorch.fast.runtime import COMPILE_NOTICE

# Builds the kernels of the operations named in argv and prints how many of them Numba
# compiled (cache misses) rather than loaded from the disk cache.
SCRIPT = """
import sys
from minitorch.fast import FastBackend, FastOps
from minitorch.tensor import tensor
x = tensor([1.0, 2.0], backend=FastBackend)
for name in sys.argv[1:]:
    op = getattr(FastBackend, name)
    op(x) if name.endswith("_map") else op(x, x)
kernels = FastOps.kernel_module().KERNELS.values()
print(sum(sum(k.stats.cache_misses.values()) for k in kernels))
"""


def build(cache: Path, *ops: str, quiet: bool = False) -> tuple[int, str]:
    """Run ``SCRIPT`` with its own Numba cache; return (kernels compiled, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "MINITORCH_QUIET"}
    env["NUMBA_CACHE_DIR"] = str(cache)
    if quiet:
        env["MINITORCH_QUIET"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *ops],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.strip()), done.stderr


@pytest.mark.task3_1
def test_notice_once_when_compiling_and_never_when_cached(tmp_path: Path) -> None:
    compiled, stderr = build(tmp_path, "neg_map", "add_zip")
    assert compiled == 2
    assert stderr.count(COMPILE_NOTICE) == 1
    assert stderr.count("minitorch.fast:") == 1

    compiled, stderr = build(tmp_path, "neg_map", "add_zip")  # the same cache: loaded
    assert compiled == 0
    assert "minitorch.fast:" not in stderr


@pytest.mark.task3_1
def test_minitorch_quiet_hides_the_notice(tmp_path: Path) -> None:
    compiled, stderr = build(tmp_path, "neg_map", quiet=True)
    assert compiled == 1
    assert "minitorch.fast:" not in stderr


def _compile_event(function_module: str, dispatcher_module: str) -> object:
    from numba.core import event

    dispatcher = type("Dispatcher", (), {"__module__": dispatcher_module})()
    dispatcher.py_func = SimpleNamespace(__module__=function_module)
    return event.Event("numba:compile", event.EventStatus.START, {"dispatcher": dispatcher})


@pytest.mark.task3_1
def test_only_a_cpu_kernel_of_minitorch_shows_the_notice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(runtime._CompileNotice, "shown", False)
    monkeypatch.delenv("MINITORCH_QUIET", raising=False)
    listener = runtime._CompileNotice()
    listener.on_start(_compile_event("someone.else", "numba.core.registry"))
    listener.on_start(_compile_event("minitorch.nn.kernels.cuda", "numba.cuda.dispatcher"))
    assert capsys.readouterr().err == ""
    listener.on_start(_compile_event("minitorch.nn.kernels.fast", "numba.core.registry"))
    listener.on_start(_compile_event("minitorch.fast.kernels.tuned", "numba.core.registry"))
    assert capsys.readouterr().err == COMPILE_NOTICE + "\n"


@pytest.mark.task3_1
def test_parallel_diagnostics_for_one_kernel() -> None:
    # In a new process and an empty cache (the report exists only right after compiling).
    result = subprocess.run(
        [sys.executable, "-m", "minitorch.fast.diagnostics", "parallel", "--kernel", "map[neg]"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "=== map[neg] " in result.stdout
    assert "Parallel Accelerator Optimizing" in result.stdout
    assert "=== zip[" not in result.stdout


@pytest.mark.task3_1
def test_compile_time_reports_every_operation(capsys: pytest.CaptureFixture[str]) -> None:
    total = diagnostics.compile_time()
    printed = capsys.readouterr().out
    assert total > 0
    assert "matrix_multiply" in printed
    assert "sigmoid_map" in printed
    assert "(23 operations)" in printed  # with mt-tensor 0.5's div_zip and pow_zip


@pytest.mark.task3_1
def test_compile_time_of_the_plain_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    assert diagnostics.compile_time(plain=True) > 0
    assert "(23 operations)" in capsys.readouterr().out
    assert "map[neg]" in PlainFastBackend.ops.kernel_module().KERNELS  # type: ignore[attr-defined]
