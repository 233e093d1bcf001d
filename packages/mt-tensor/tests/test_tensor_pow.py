"""``**`` at IEEE's special values, by hand (the shared suite draws them on every backend).

``x ** p`` was ``exp(p * log(x))`` for a non-integer ``p``: ``[-2, -1, -0.5, 1] ** inf`` was
all NaN (PyTorch: ``[inf, 1, 0, 1]``), ``tensor([1.]) ** nan`` NaN (PyTorch: 1).
"""

from __future__ import annotations

import math

import pytest

from minitorch.tensor import RPow, tensor


@pytest.mark.task2_3  # forward values: the simple backend's zip
def test_powers_of_infinity_and_nan_by_hand() -> None:
    x = tensor([-2.0, -1.0, -0.5, 1.0], requires_grad=True)
    assert (x**math.inf).tolist() == [math.inf, 1.0, 0.0, 1.0]
    assert (x**-math.inf).tolist() == [0.0, 1.0, math.inf, 1.0]
    assert (tensor([1.0]) ** math.nan).tolist() == [1.0]
    assert (tensor([math.nan]) ** 0.0).tolist() == [1.0]
    assert (tensor([-0.0]) ** -1.0).tolist() == [-math.inf]
    assert math.isnan((tensor([-8.0]) ** (1 / 3)).item())
    ones = RPow.apply(tensor([math.inf, math.nan, -2.0]), 1.0)
    assert ones.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.task2_4
def test_gradient_of_a_power_at_the_special_values_by_hand() -> None:
    """``p * x ** (p - 1)`` (0 for ``p == 0``, NaN included): ``torch.pow``'s backward."""
    x = tensor([math.nan, 0.0, 2.0], requires_grad=True)
    (x**0.0).sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    y = tensor([0.5, 2.0], requires_grad=True)
    (y**math.inf).sum().backward()
    assert y.grad is not None
    assert math.isnan(y.grad.tolist()[0])  # inf * 0.5 ** inf = inf * 0, as in PyTorch
    assert y.grad.tolist()[1] == math.inf
    t = tensor([math.inf, math.nan, 3.0], requires_grad=True)
    RPow.apply(t, 1.0).sum().backward()
    assert t.grad is not None
    assert t.grad.tolist() == [0.0, 0.0, 0.0]  # 1 ** t * log(1)


@pytest.mark.task2_3
def test_a_number_to_the_power_of_a_tensor_by_the_operator() -> None:
    t = tensor([math.inf, math.nan, -2.0])
    assert (1**t).tolist() == [1.0, 1.0, 1.0]
    assert (0 ** tensor([2.0])).tolist() == [0.0]
    assert ((-2) ** tensor([3.0])).tolist() == [-8.0]
