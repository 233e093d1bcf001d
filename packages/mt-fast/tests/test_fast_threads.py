"""Python threads sharing the fast backend.

Numba's ``workqueue`` threading layer aborts the whole process ("Concurrent access has been
detected") when two threads launch parallel kernels at once, so each case runs in a
subprocess: a failure is a non-zero exit code there, not a dead pytest. The operands are
just above ``runtime.GRAIN`` elements, so every launch is a parallel one, and small enough
that the two threads launch often (a launch takes well under a millisecond).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = """
import sys
import threading

import numba
import numpy as np

from minitorch.fast import FastBackend
from minitorch.tensor import from_numpy

x = np.linspace(-1.0, 1.0, 200 * 250).reshape(200, 250)
expected = (2 * x).sum(axis=0, keepdims=True)
errors = []


def work() -> None:
    try:
        a = from_numpy(x, FastBackend)
        for _ in range(40):
            got = FastBackend.add_reduce(FastBackend.add_zip(a, a), 0).to_numpy()
            np.testing.assert_allclose(got, expected)
            # Each thread packs into buffers of its own (``tuned._workspace``).
            np.testing.assert_allclose((a @ a.permute(1, 0)).to_numpy(), x @ x.T, rtol=1e-12)
    except Exception as e:  # reported below, so the parent sees it
        errors.append(repr(e))


threads = [threading.Thread(target=work) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(numba.threading_layer(), errors)
sys.exit(1 if errors else 0)
"""


@pytest.mark.task3_1
@pytest.mark.parametrize("layer", ["workqueue", None])
def test_two_threads_share_the_backend(layer: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    if layer is not None:
        env["NUMBA_THREADING_LAYER"] = layer
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-2000:])
    if layer is not None:
        assert done.stdout.startswith(layer), done.stdout


@pytest.mark.task3_1
def test_backward_in_several_threads_into_one_leaf_loses_no_update() -> None:
    """Threads' backward passes into one shared leaf on the fast backend all count.

    (4 threads of 400 passes of ``(x * 2).sum()`` left ``x.grad`` near 2344, not 3200:
    the leaf's gradient was read and written without a lock.) One element: every kernel
    runs its serial twin, so the threads launch no parallel kernel.
    """
    import threading

    from minitorch.fast import FastBackend
    from minitorch.tensor import tensor

    x = tensor([1.0], backend=FastBackend, requires_grad=True)
    (x * 2).sum().backward()  # compile (or load) the kernels first
    x.grad = None
    start = threading.Barrier(4)

    errors: list[BaseException] = []

    def work() -> None:
        start.wait()
        try:
            for _ in range(400):
                (x * 2).sum().backward()
        except BaseException as e:  # raised again below, in the test's own thread
            errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise errors[0]
    assert x.grad is not None
    assert x.grad.tolist() == [3200.0]
