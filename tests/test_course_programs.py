"""The course's own programs run unmodified (issue 19): a course-style program, written only
against ``import minitorch`` and the course's names, trains Scalars, tensors, the fast
backend and a convolution, as the course's scripts do.

The program runs in a fresh interpreter so that its imports (``import numba`` then
``import minitorch``, ``numba.cuda.is_available()``) meet a process that has loaded nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.task3_5

PROGRAM = textwrap.dedent(
    """
    import random

    import numba

    import minitorch

    # The course's imports at the top of its scripts and test files.
    FastTensorBackend = minitorch.TensorBackend(minitorch.FastOps)
    if numba.cuda.is_available():
        GPUBackend = minitorch.TensorBackend(minitorch.CudaOps)
    import minitorch.fast_ops
    from minitorch.tensor_data import TensorData

    assert minitorch.fast_ops.FastOps is minitorch.FastOps
    assert TensorData is minitorch.TensorData

    # Datasets under the course's keys, reproducible through random.seed.
    random.seed(1)
    data = minitorch.datasets["Simple"](40)
    random.seed(1)
    assert minitorch.datasets["Simple"](40) == data
    assert minitorch.datasets["Xor"] is minitorch.datasets["xor"]


    def fit(model, forward, params, epochs, rate):
        optim = minitorch.SGD(params, rate)
        losses = []
        for _ in range(epochs):
            optim.zero_grad()
            loss = forward()
            loss.backward()
            optim.step()
            losses.append(loss.item() if hasattr(loss, "item") else loss.data)
        return losses


    # Module 1: a Scalar network, one weight per input as the course's run_scalar.
    class ScalarLinear(minitorch.Module):
        def __init__(self):
            super().__init__()
            self.w1 = self.add_parameter("w1", minitorch.Scalar(0.5))
            self.w2 = self.add_parameter("w2", minitorch.Scalar(-0.5))
            self.b = self.add_parameter("b", minitorch.Scalar(0.0))

        def forward(self, x1, x2):
            return (x1 * self.w1.value + x2 * self.w2.value + self.b.value).sigmoid()


    scalar_model = ScalarLinear()


    def scalar_loss():
        total = minitorch.Scalar(0.0)
        for (x1, x2), y in zip(data.X, data.y):
            p = scalar_model.forward(minitorch.Scalar(x1), minitorch.Scalar(x2))
            total = total + (-(p if y == 1 else -p + 1.0).log())
        return total / len(data.y)


    losses = fit(scalar_model, scalar_loss, scalar_model.parameters(), 30, 2.0)
    print("scalar", losses[-1] < losses[0])


    # Modules 2 and 3: the same classifier on tensors, simple and fast backends.
    class Linear(minitorch.Module):
        def __init__(self, backend, n_in, n_out):
            super().__init__()
            self.weights = minitorch.Parameter(
                2 * (minitorch.rand((n_in, n_out), backend=backend) - 0.5)
            )
            self.bias = minitorch.Parameter(0.1 * minitorch.rand((n_out,), backend=backend))

        def forward(self, x):
            return x @ self.weights.value + self.bias.value


    for name, backend in [("simple", minitorch.SimpleBackend), ("fast", FastTensorBackend)]:
        layer = Linear(backend, 2, 1)
        X = minitorch.tensor(data.X, backend=backend)
        y = minitorch.tensor(data.y, backend=backend)

        def tensor_loss():
            prob = layer.forward(X).sigmoid().view(len(data.y))
            return -(prob * y + (prob - 1.0) * (y - 1.0)).log().sum() / len(data.y)

        losses = fit(layer, tensor_loss, layer.parameters(), 30, 1.0)
        # Accuracy logged against labels on the default backend, as the course's fast script.
        out = layer.forward(X).sigmoid().view(len(data.y)) > 0.5
        labels = minitorch.tensor(data.y)
        correct = (out == labels).sum()[0]
        print(name, losses[-1] < losses[0], out.backend.name, correct >= 0)


    # Module 4: conv2d on the course's fast backend, with dropout off in evaluation.
    class Net(minitorch.Module):
        def __init__(self):
            super().__init__()
            self.weight = minitorch.Parameter(
                minitorch.rand((2, 1, 3, 3), backend=FastTensorBackend) - 0.5
            )

        def forward(self, x):
            h = minitorch.conv2d(x, self.weight.value).relu()
            return minitorch.dropout(h, 0.5, ignore=self.mode == "eval")


    net = Net()
    x = minitorch.rand((2, 1, 6, 6), backend=FastTensorBackend)
    net.eval()
    print("conv", net.mode, net.forward(x).shape, (net.forward(x) == net.forward(x)).all().item())
    net.forward(x).sum().backward()
    print("conv grad", net.weight.value.grad is not None)
    print("names", len(minitorch.Scalar(1.0).name) > 0, len(x.name) > 0)
    """
)


def test_a_course_style_program_runs_unmodified(tmp_path):
    script = tmp_path / "course_program.py"
    script.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "scalar True",
        "simple True simple True",
        "fast True fast True",
        "conv eval (2, 2, 6, 6) 1.0",
        "conv grad True",
        "names True True",
    ]
