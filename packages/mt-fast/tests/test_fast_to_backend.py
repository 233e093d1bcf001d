"""``.to(backend)`` is differentiable, as PyTorch's ``.to(device)`` (``ToCopyBackward0``)."""

import numpy as np
import pytest

from minitorch.fast import FastBackend
from minitorch.tensor import SimpleBackend, tensor

pytestmark = pytest.mark.task3_1


def test_a_copy_to_another_backend_in_a_mixed_graph_keeps_its_gradient() -> None:
    """``(x.to("fast") * x).sum()``: d/dx is 2x (the copy's path used to be dropped: x)."""
    x = tensor([1.0, 2.0]).requires_grad_()
    y = x.to("fast")
    assert y.backend == FastBackend
    assert y.grad_fn is not None
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * x).sum().backward()
    assert x.grad is not None
    assert x.grad.backend == SimpleBackend
    np.testing.assert_allclose(x.grad.to_numpy(), [2.0, 4.0])


def test_a_round_trip_through_fast_matches_central_differences() -> None:
    x = tensor([0.5, -1.5, 2.0]).requires_grad_()

    def f(t):
        return (t.to(FastBackend).exp() * t).to(SimpleBackend).sum()

    f(x).backward()
    for i in range(3):
        h = 1e-6
        up, down = x.detach().to_numpy().copy(), x.detach().to_numpy().copy()
        up[i] += h
        down[i] -= h
        numeric = (f(tensor(up.tolist())).item() - f(tensor(down.tolist())).item()) / (2 * h)
        assert x.grad.to_numpy()[i] == pytest.approx(numeric, rel=1e-6)


def test_to_the_same_backend_is_the_tensor_itself() -> None:
    x = tensor([1.0]).requires_grad_()
    assert x.to(SimpleBackend) is x
