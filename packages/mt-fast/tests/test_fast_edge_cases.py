"""Edge cases of the fast kernels that the property suite does not draw.

Every case is compared with ``SimpleBackend``, the reference backend (or with numpy, in
a child process where a bad case could crash the interpreter).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from minitorch.fast import FastBackend, PlainFastBackend
from minitorch.tensor import SimpleBackend, Tensor, TensorBackend, zeros
from minitorch.tensor.testing import ZERO_SIZE_MATMULS

BOTH = pytest.mark.parametrize("be", [FastBackend, PlainFastBackend], ids=["tuned", "plain"])

EMPTY_REDUCTIONS = [((0, 3), 0), ((2, 0, 3), 1), ((3, 0), 1), ((0, 3), 1), ((4, 0), 0)]


def _reduce(backend: TensorBackend, shape: tuple[int, ...], dim: int, how: str) -> Tensor:
    t = zeros(shape, backend=backend)
    if how == "max":
        return backend.max_reduce(t, dim)
    if how == "prod":
        return backend.mul_reduce(t, dim)
    return getattr(t, how)(dim)  # type: ignore[no-any-return]


@pytest.mark.task3_1
@BOTH
@pytest.mark.parametrize(("shape", "dim"), EMPTY_REDUCTIONS)
@pytest.mark.parametrize("how", ["sum", "mean", "max", "prod"])
def test_reduce_over_a_zero_length_dimension(
    shape: tuple[int, ...], dim: int, how: str, be: TensorBackend
) -> None:
    expected = _reduce(SimpleBackend, shape, dim, how)
    got = _reduce(be, shape, dim, how)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.to_numpy(), expected.to_numpy())


@pytest.mark.task3_1
def test_reduce_over_a_zero_length_dimension_gives_start_values() -> None:
    # The values themselves, so the test does not only compare two backends.
    np.testing.assert_array_equal(zeros((0, 3), backend=FastBackend).sum(0).to_numpy(), [[0.0] * 3])
    got = FastBackend.max_reduce(zeros((2, 0, 3), backend=FastBackend), 1).to_numpy()
    np.testing.assert_array_equal(got, np.full((2, 1, 3), -np.inf))


@pytest.mark.task3_1
@BOTH
@pytest.mark.parametrize(("shape", "dim"), EMPTY_REDUCTIONS)
@pytest.mark.parametrize("how", ["sum", "mean"])
def test_backward_through_a_reduction_over_a_zero_length_dimension(
    shape: tuple[int, ...], dim: int, how: str, be: TensorBackend
) -> None:
    grads = []
    for backend in (SimpleBackend, be):
        t = zeros(shape, backend=backend).requires_grad_()
        getattr(t, how)(dim).sum().backward()
        assert t.grad is not None
        assert t.grad.shape == shape
        grads.append(t.grad.to_numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


ZERO_SIZE_CHILD = """
import numpy as np
import minitorch.fast_ops as course
from minitorch.fast import FastBackend, PlainFastBackend
from minitorch.fast.kernels import plain
try:
    from minitorch.fast.kernels import tuned
except ImportError:  # a course starter: it ships the plain kernels only
    tuned = None
from minitorch.tensor import from_numpy, zeros
from minitorch.tensor.testing import ZERO_SIZE_MATMULS

rng = np.random.default_rng(0)

def report(name, run):
    try:
        problem = run()
    except Exception as e:
        problem = f"{type(e).__name__}: {e}"
    print(f"{name}|{problem or 'ok'}", flush=True)

def product(backend, shape_a, shape_b):
    x, y = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    a = from_numpy(x, backend=backend).requires_grad_()
    b = from_numpy(y, backend=backend).requires_grad_()
    out = a @ b
    expected = np.matmul(x, y)
    if out.shape != expected.shape or not np.allclose(out.to_numpy(), expected):
        return f"{out.shape} {out.to_numpy().ravel()[:4]}, expected {expected.shape}"
    out.sum().backward()
    if a.grad.shape != shape_a or b.grad.shape != shape_b:
        return f"gradients of shapes {a.grad.shape} and {b.grad.shape}"
    return None

def kernel(matmul, out_batch, a_batch, b_batch, m, k, n):
    out = zeros((out_batch, m, n))
    a, b = zeros((a_batch, m, k)) + 1.0, zeros((b_batch, k, n)) + 1.0
    matmul(*out.tuple(), *a.tuple(), *b.tuple())
    if not np.array_equal(out.to_numpy(), np.full((out_batch, m, n), float(k))):
        return f"got {out.to_numpy().ravel()[:4]}"
    return None

for backend in (FastBackend, PlainFastBackend):
    for shape_a, shape_b in ZERO_SIZE_MATMULS:
        report(f"{backend.name} {shape_a} @ {shape_b}", lambda: product(backend, shape_a, shape_b))
kernels = {"plain": plain.matmul, "course tensor_matrix_multiply": course.tensor_matrix_multiply}
if tuned is not None:
    kernels["tuned"] = tuned.matmul
    kernels["tuned blocked"] = lambda *args: tuned.matmul(*args, block=tuned.SHAPE)
print(f"kernels|{len(kernels)}", flush=True)
# (out, a, b batches, m, k, n): as the prologue gives them, and k = 0 (a product of zeros).
for name, matmul in kernels.items():
    for sizes in ((0, 0, 1, 2, 3, 4), (0, 1, 0, 3, 4, 5), (0, 0, 0, 2, 2, 2), (2, 2, 1, 3, 0, 4)):
        report(f"{name} kernel {sizes}", lambda: kernel(matmul, *sizes))
"""


@pytest.mark.task3_2
def test_matmul_of_zero_sizes_writes_nothing_past_its_output() -> None:
    """Zero-size products, through the backends and each kernel, under glibc's heap checks.

    ``(0, 2, 3) @ (3, 4)``, ``(1, 3, 4) @ (0, 4, 5)`` and ``(2, 0, 1, 3) @ (1, 3, 4)`` ran the
    kernels on a batch of ``max(0, 1) = 1`` over a 0-element output: the interpreter
    aborted (``malloc_consolidate(): invalid chunk size``) or crashed. The calls run in a
    child process with ``MALLOC_CHECK_=3``, so a heap corruption fails this test instead of
    ending pytest. The kernels are called with the layouts the prologue now gives them
    (batch 0 output, batch 0 or 1 operands), and with inner dimension 0 (zeros).
    """
    env = {**os.environ, "MINITORCH_QUIET": "1", "MALLOC_CHECK_": "3"}
    done = subprocess.run(
        [sys.executable, "-c", ZERO_SIZE_CHILD],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, f"the child ended with {done.returncode}: {done.stderr[-2000:]}"
    got = dict(line.split("|", 1) for line in done.stdout.splitlines() if "|" in line)
    # The solution has four kernels; a course starter (the grader's copy of the course's
    # code too) has no tuned module, so two: a test that needed it failed every student.
    tuned = importlib.util.find_spec("minitorch.fast.kernels.tuned") is not None
    assert got.pop("kernels") == str(4 if tuned else 2), done.stdout
    assert len(got) == 2 * len(ZERO_SIZE_MATMULS) + 4 * (4 if tuned else 2), done.stdout
    assert {name: r for name, r in got.items() if r != "ok"} == {}
