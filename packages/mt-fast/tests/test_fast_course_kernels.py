"""The course's kernel factories, called as its ``project/parallel_check.py`` calls them.

``minitorch.fast_ops`` (the course's module, an alias of ``minitorch.fast``) offers
``tensor_map(fn)``, ``tensor_zip(fn)``, ``tensor_reduce(fn)`` and ``tensor_matrix_multiply``
with the course's signatures; each kernel runs once on ``*t.tuple()`` arguments and then
reports ``parallel_diagnostics(level=3)``. ``fn`` may be compiled already
(``njit()(operators.id)``, as the course passes it) or a plain function. Each test compiles
only the kernels it calls (no disk cache: every run compiles them).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from numba import njit

import minitorch
import minitorch.fast_ops


def diagnostics(kernel: object, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``kernel.parallel_diagnostics(level=3)`` prints (the course prints it)."""
    capsys.readouterr()
    print(kernel.parallel_diagnostics(level=3))  # type: ignore[attr-defined]
    return capsys.readouterr().out


def assert_parallel_report(report: str, function: str) -> None:
    assert f"Parallel loop listing for  Function {function}" in report
    # Numba made the prange loop (and np.prod's) parallel; level 3 adds code motion.
    assert re.search(r"there are [1-9]\d* parallel for-\s*loop", report), report
    assert "Loop invariant code motion" in report


def test_map_zip_and_reduce_as_parallel_check_calls_them(capsys) -> None:
    values = np.arange(10, dtype=np.float64) - 4.5

    tmap = minitorch.fast_ops.tensor_map(njit()(minitorch.operators.neg))
    out, a = minitorch.zeros((10,)), minitorch.tensor(values.tolist())
    tmap(*out.tuple(), *a.tuple())
    np.testing.assert_array_equal(out.to_numpy(), -values)
    assert_parallel_report(diagnostics(tmap, capsys), "make_map.<locals>.kernel")

    # A plain function works too; b broadcasts against a (shape (2, 5) against (5,)).
    tzip = minitorch.fast_ops.tensor_zip(minitorch.operators.mul)
    grid = values.reshape(2, 5)
    out, a, b = (
        minitorch.zeros((2, 5)),
        minitorch.tensor(grid.tolist()),
        minitorch.tensor(grid[1].tolist()),
    )
    tzip(*out.tuple(), *a.tuple(), *b.tuple())
    np.testing.assert_array_equal(out.to_numpy(), grid * grid[1])
    assert_parallel_report(diagnostics(tzip, capsys), "make_zip.<locals>.kernel")

    # reduce folds into what out holds: the caller puts the start value there.
    treduce = minitorch.fast_ops.tensor_reduce(njit()(minitorch.operators.add))
    out, a = minitorch.tensor([[100.0], [200.0]]), minitorch.tensor(grid.tolist())
    treduce(*out.tuple(), *a.tuple(), 1)
    np.testing.assert_array_equal(
        out.to_numpy(), [[100.0 + grid[0].sum()], [200.0 + grid[1].sum()]]
    )
    assert_parallel_report(diagnostics(treduce, capsys), "make_fold.<locals>.kernel")


def test_matmul_as_parallel_check_calls_it(capsys) -> None:
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((2, 3, 4)), rng.standard_normal((1, 4, 5))
    out = minitorch.zeros((2, 3, 5))
    a, b = minitorch.tensor(a_np.tolist()), minitorch.tensor(b_np.tolist())
    tmm = minitorch.fast_ops.tensor_matrix_multiply
    tmm(*out.tuple(), *a.tuple(), *b.tuple())  # b's batch of 1 broadcasts
    np.testing.assert_allclose(out.to_numpy(), a_np @ b_np, rtol=1e-12)
    assert_parallel_report(diagnostics(tmm, capsys), "_matmul")


def test_the_factories_are_the_packages_names() -> None:
    from minitorch.fast_ops import tensor_map, tensor_matrix_multiply, tensor_reduce, tensor_zip

    assert minitorch.fast_ops is minitorch.fast
    for name in ("tensor_map", "tensor_zip", "tensor_reduce", "tensor_matrix_multiply"):
        assert name in minitorch.fast.__all__
    assert all(callable(f) for f in (tensor_map, tensor_zip, tensor_reduce))
    assert hasattr(tensor_matrix_multiply, "parallel_diagnostics")


CASES = {
    # name: (the call, the message it must raise; "ran": it must run)
    "map into a storage too small for the output's shape": (
        "tmap(minitorch.tensor([0.0, 0.0]).tuple()[0], *zeros((2, 3)).tuple()[1:],"
        " *zeros((2, 3)).tuple())",
        "IndexingError: tensor_map output: a storage of size 2 is too small for shape (2, 3)",
    ),
    "map from a storage too small for the input's shape": (
        "tmap(*zeros((2, 3)).tuple(), minitorch.tensor([1.0]).tuple()[0],"
        " *zeros((2, 3)).tuple()[1:])",
        "IndexingError: tensor_map input: a storage of size 1 is too small for shape (2, 3)",
    ),
    "map of shapes that do not broadcast": (
        "tmap(*zeros((2, 3)).tuple(), *zeros((4,)).tuple())",
        "IndexingError: tensor_map input: shape (4,) does not broadcast to the output's shape"
        " (2, 3)",
    ),
    "zip of shapes that do not broadcast": (
        "tzip(*zeros((2, 3)).tuple(), *zeros((2, 3)).tuple(), *zeros((2,)).tuple())",
        "IndexingError: tensor_zip b: shape (2,) does not broadcast",
    ),
    "zip with strides of another length": (
        "tzip(*zeros((2, 3)).tuple(), *zeros((2, 3)).tuple(), zeros((3,)).tuple()[0],"
        " zeros((3,)).tuple()[1], zeros((2, 3)).tuple()[2])",
        "IndexingError: tensor_zip b: shape (3,) and strides (3, 1) differ in length",
    ),
    "matmul of 2-D operands": (
        "tmm(*zeros((2, 2)).tuple(), *zeros((2, 2)).tuple(), *zeros((2, 2)).tuple())",
        "IndexingError: tensor_matrix_multiply: output has shape (2, 2); the kernel multiplies 3-D",
    ),
    "matmul with mismatched inner dims": (
        "tmm(*zeros((1, 2, 2)).tuple(), *zeros((1, 2, 3)).tuple(), *zeros((1, 2, 2)).tuple())",
        "IndexingError: tensor_matrix_multiply: shapes (1, 2, 3) @ (1, 2, 2) -> (1, 2, 2) do "
        "not fit",
    ),
    "matmul of batches that do not broadcast": (
        "tmm(*zeros((3, 2, 2)).tuple(), *zeros((2, 2, 2)).tuple(), *zeros((3, 2, 2)).tuple())",
        "IndexingError: tensor_matrix_multiply: batch sizes 2 (a) and 3 (b) do not broadcast",
    ),
    "matmul into an output whose batch is the larger one, not the broadcast": (
        "tmm(*zeros((1, 2, 4)).tuple(), *zeros((0, 2, 3)).tuple(), *zeros((1, 3, 4)).tuple())",
        "IndexingError: tensor_matrix_multiply: batch sizes 0 (a) and 1 (b) do not broadcast",
    ),
    "matmul into an empty batch of operands that broadcast to 1": (
        "tmm(*zeros((0, 2, 4)).tuple(), *zeros((1, 2, 3)).tuple(), *zeros((1, 3, 4)).tuple())",
        "IndexingError: tensor_matrix_multiply: batch sizes 1 (a) and 1 (b) broadcast to 1, "
        "not to the output's 0",
    ),
    "reduce over dim 5 of a 2-D tensor": (
        "tred(*zeros((1, 3)).tuple(), *zeros((2, 3)).tuple(), 5)",
        "IndexingError: tensor_reduce: reduce_dim 5 is out of range for a of shape (2, 3)",
    ),
    "reduce into an output of the wrong shape": (
        "tred(*zeros((2, 1)).tuple(), *zeros((2, 3)).tuple(), 0)",
        "IndexingError: tensor_reduce: the output's shape (2, 1) must be a's shape (2, 3) "
        "with reduce_dim 0 of size 1: (1, 3)",
    ),
    "reduce with a dim that is not an int": (
        "tred(*zeros((1, 3)).tuple(), *zeros((2, 3)).tuple(), 0.0)",
        "TypeError: tensor_reduce: reduce_dim must be an int, got 0.0",
    ),
    "map with a list as its storage": (
        "tmap([0.0] * 6, *zeros((2, 3)).tuple()[1:], *zeros((2, 3)).tuple())",
        "TypeError: tensor_map output: the storage must be a 1-D numpy array",
    ),
}

CHILD = """
import sys
from numba import njit
import minitorch
import minitorch.fast_ops as fo
from minitorch.operators import add, mul, neg

zeros = minitorch.zeros
tmap, tzip = fo.tensor_map(njit()(neg)), fo.tensor_zip(njit()(mul))
tred, tmm = fo.tensor_reduce(njit()(add)), fo.tensor_matrix_multiply
for name, call in CALLS.items():
    try:
        eval(call)
    except Exception as e:
        print(f"{name}|{type(e).__name__}: {e}", flush=True)
    else:
        print(f"{name}|ran", flush=True)
"""


def test_course_kernels_refuse_inconsistent_arguments_before_they_run() -> None:
    """Shapes, strides, storage sizes and dims are checked in Python before a kernel runs.

    The compiled kernels trust their arguments: an output storage of 2 for a shape (2, 3)
    aborted the interpreter ("corrupted size vs. prev_size"), 2-D operands of matmul
    crashed it, and non-broadcastable shapes, mismatched inner dims and ``reduce_dim=5``
    returned silently (garbage, or a hang). The calls run in a child process, so a crash
    fails this test instead of ending pytest; with the checks no kernel compiles there.
    """
    import os
    import subprocess
    import sys

    calls = {name: call for name, (call, _) in CASES.items()}
    program = f"CALLS = {calls!r}\n" + CHILD
    env = {**os.environ, "MINITORCH_QUIET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, f"the child ended with {done.returncode}: {done.stderr[-2000:]}"
    got = dict(line.split("|", 1) for line in done.stdout.splitlines() if "|" in line)
    for name, (_, message) in CASES.items():
        assert name in got, f"{name}: no result (the child stopped before it)"
        assert got[name].startswith(message), f"{name}: {got[name]}"


@pytest.mark.task3_2
def test_course_matmul_of_a_batch_of_0_against_a_batch_of_1_runs_into_an_empty_output() -> None:
    """The batches broadcast to 0: the checks let it through and the kernel writes nothing.

    The course's kernel took the larger batch (1) and wrote past the 0-element output (heap
    corruption); in a child process, so a crash fails this test instead of ending pytest.
    """
    import os
    import subprocess
    import sys

    call = "tmm(*zeros((0, 2, 4)).tuple(), *zeros((0, 2, 3)).tuple(), *zeros((1, 3, 4)).tuple())"
    program = f"CALLS = {{'empty': {call!r}}}\n" + CHILD + "\nprint('done', flush=True)\n"
    env = {**os.environ, "MINITORCH_QUIET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, f"the child ended with {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.splitlines()[-2:] == ["empty|ran", "done"], done.stdout


def test_checked_kernels_still_run_consistent_arguments_and_report() -> None:
    """The checks accept what the course passes: broadcast inputs, batch 1, a 0-d input."""
    from minitorch.fast.course import CheckedKernel

    tmap = minitorch.fast_ops.tensor_map(njit()(minitorch.operators.neg))
    assert isinstance(tmap, CheckedKernel)
    out = minitorch.zeros((2, 3))
    tmap(*out.tuple(), *minitorch.tensor([[1.0, 2.0, 3.0]]).tuple())
    np.testing.assert_array_equal(out.to_numpy(), [[-1.0, -2.0, -3.0]] * 2)
    tmap(*out.tuple(), *minitorch.zeros(()).tuple())
    np.testing.assert_array_equal(out.to_numpy(), np.zeros((2, 3)))
    assert callable(tmap.parallel_diagnostics)
