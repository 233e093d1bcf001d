"""A script written in the course's style trains.

The course's ``project/run_fast_tensor.py`` builds its backend with
``TensorBackend(FastOps)``, its parameters with ``Parameter(2 * (rand(shape) - 0.5))``
(here ``rand(...) * 2 - 1``), a ``Linear`` Module of its own with ``x @ w + b`` and plain
SGD on the binary cross-entropy. Written the same way here, with the flat
``minitorch.*`` names (mt-root), it must reach
the accuracy ``examples/train_tensor.py`` reaches with its defaults: >= 95% on the toy
datasets it documents (100% simple, 100% diag, 98% xor at 50 points, hidden 10, lr 0.5).
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.fast import FastBackend

pytestmark = pytest.mark.task3_2

BACKEND = minitorch.TensorBackend(
    minitorch.FastOps
)  # the course's spelling: the same backend as FastBackend
RNG = np.random.default_rng(0)  # the course draws from the global state; seeded here


def RParam(*shape: int) -> minitorch.Parameter:
    """A parameter uniform in [-1, 1): an expression, which Parameter makes a leaf."""
    return minitorch.Parameter(minitorch.rand(shape, backend=BACKEND, seed=RNG) * 2 - 1)


class Linear(minitorch.Module):
    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        self.weights = RParam(in_size, out_size)
        self.bias = RParam(out_size)
        self.out_size = out_size

    def forward(self, x: minitorch.Tensor) -> minitorch.Tensor:
        return x @ self.weights.value + self.bias.value


class Network(minitorch.Module):
    def __init__(self, hidden_layers: int) -> None:
        super().__init__()
        self.layer1 = Linear(2, hidden_layers)
        self.layer2 = Linear(hidden_layers, hidden_layers)
        self.layer3 = Linear(hidden_layers, 1)

    def forward(self, x: minitorch.Tensor) -> minitorch.Tensor:
        h = self.layer1.forward(x).relu()
        h = self.layer2.forward(h).relu()
        return self.layer3.forward(h).sigmoid()


def train(data, learning_rate: float, max_epochs: int, hidden: int) -> float:  # type: ignore[no-untyped-def]
    """The course's training loop; returns the final training accuracy."""
    model = Network(hidden)
    optim = minitorch.SGD(model.parameters(), learning_rate)
    X = minitorch.tensor(data.X, backend=BACKEND)
    y = minitorch.tensor(data.y, backend=BACKEND)
    for _ in range(max_epochs):
        optim.zero_grad()
        out = model.forward(X).view(data.N)
        prob = (out * y) + (out - 1.0) * (y - 1.0)
        loss = -prob.log()
        (loss / data.N).sum().view(1).backward()
        optim.step()
    out = model.forward(X).view(data.N)
    correct = ((out > 0.5) == y).sum().item()
    return correct / data.N


def test_the_course_backend_spelling_is_the_fast_backend() -> None:
    assert FastBackend == BACKEND
    assert (
        minitorch.tensor([1.0], backend=BACKEND) + minitorch.tensor([2.0], backend=FastBackend)
    ).item() == 3.0


def test_parameters_of_expressions_receive_gradients() -> None:
    model = Network(3)
    out = model.forward(minitorch.tensor([[0.1, 0.9]], backend=BACKEND)).sum()
    out.backward()
    assert all(p.value.is_leaf() and p.value.grad is not None for p in model.parameters())


def test_a_course_style_script_trains_like_the_example() -> None:
    # One dataset keeps the test to a couple of minutes on a shared machine (750 epochs of
    # about 30 fast-backend calls each); the example reaches 100% on diag with these settings.
    data = minitorch.datasets["diag"](50, seed=0)
    assert train(data, learning_rate=0.5, max_epochs=750, hidden=10) >= 0.95
