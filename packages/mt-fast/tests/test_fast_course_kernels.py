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
