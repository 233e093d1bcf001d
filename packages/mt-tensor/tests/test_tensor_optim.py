"""Optimizers from minitorch.autodiff (SGD, Adam) on Tensor parameters: single steps against
hand-computed updates, and a small regression that trains."""

import math

import numpy as np
import pytest

from minitorch.autodiff import SGD, Adam
from minitorch.operators import Module, Parameter
from minitorch.tensor import Tensor, rand, tensor

pytestmark = pytest.mark.task2_5


def square_step(optim, p):
    """One step on f(x) = sum(x^2) (gradient 2x)."""
    optim.zero_grad()
    (p.value * p.value).sum().backward()
    optim.step()
    return p.value.to_numpy()


def test_parameter_marks_a_tensor_as_trainable():
    p = Parameter(tensor([1.0, 2.0]))
    assert p.value.is_leaf()


def test_sgd_one_step_by_hand():
    p = Parameter(tensor([1.0, -2.0]))
    before = p.value
    # g = 2x = [2, -4]; x <- x - 0.1 g
    np.testing.assert_allclose(square_step(SGD([p], lr=0.1), p), [0.8, -1.6])
    assert isinstance(p.value, Tensor)
    assert p.value.is_leaf()
    # As PyTorch's optimizers: the step writes into the same tensor, and its gradient
    # stays until zero_grad().
    assert p.value is before
    np.testing.assert_allclose(p.value.grad.to_numpy(), [2.0, -4.0])


@pytest.mark.parametrize("make", [lambda ps: SGD(ps, lr=0.1), lambda ps: Adam(ps, lr=0.1)])
def test_two_optimizers_over_one_parameter_both_step_with_its_gradient(make):
    """Two optimizers over one Parameter (separate learning rates, a common pattern).

    The first step used to discard the gradient, so the second did nothing: with SGD,
    x = 1, g = 2, lr = 0.1 gives 0.8 then 0.6 (PyTorch's figures), not 0.8 twice.
    """
    p = Parameter(tensor([1.0]))
    first, second = make([p]), make([p])
    (p.value * p.value).sum().backward()
    view = p.value[0:1]  # a view, as a model's reference to the weight would be
    first.step()
    after_one = p.value.to_numpy().copy()
    second.step()
    after_two = p.value.to_numpy().copy()
    step = 1.0 - after_one[0]
    assert step > 0
    np.testing.assert_allclose(after_two, after_one - step, rtol=1e-12)
    np.testing.assert_allclose(view.to_numpy(), after_two)


def test_sgd_momentum_two_steps_by_hand():
    # x0 = 1, lr = 0.1, momentum 0.9: v1 = 2, x1 = 0.8; g2 = 1.6, v2 = 1.8 + 1.6, x2 = 0.46
    p = Parameter(tensor([1.0]))
    opt = SGD([p], lr=0.1, momentum=0.9)
    np.testing.assert_allclose(square_step(opt, p), [0.8])
    np.testing.assert_allclose(square_step(opt, p), [0.46])


def test_sgd_steps_with_momentum_and_decay_equal_numpys_bit_for_bit():
    """The step is written into each parameter's storage (``x -= lr * v``, one zip): the
    values are those of ``x - lr * v`` with ``v = momentum * v + (g + decay * x)``, in
    NumPy, to the last bit, over three steps (a view of the weight sees each)."""
    rng = np.random.default_rng(4)
    w = Parameter(tensor(rng.normal(size=(3, 4)).tolist()))
    b = Parameter(tensor(rng.normal(size=4).tolist()))
    view = w.value.permute(1, 0)
    opt = SGD([w, b], lr=0.05, momentum=0.9, weight_decay=0.01)
    velocity = [None, None]
    for _ in range(3):
        opt.zero_grad()
        ((w.value * w.value * w.value).sum() + (w.value.sum(0) * b.value).sum()).backward()
        expected = []
        for i, p in enumerate((w, b)):
            x, g = p.value.to_numpy().copy(), p.value.grad.to_numpy()
            d = g + x * 0.01
            velocity[i] = d if velocity[i] is None else velocity[i] * 0.9 + d
            expected.append(x - velocity[i] * 0.05)
        opt.step()
        np.testing.assert_array_equal(w.value.to_numpy(), expected[0])
        np.testing.assert_array_equal(b.value.to_numpy(), expected[1])
        np.testing.assert_array_equal(view.to_numpy(), expected[0].T)


def test_adam_steps_with_decay_equal_numpys_bit_for_bit():
    """Adam's step goes through the same ``sub_`` as SGD's: its values are NumPy's on the
    same formula, to the last bit, over three steps, in the same tensor (a view sees them)."""
    rng = np.random.default_rng(5)
    p = Parameter(tensor(rng.normal(size=(2, 3)).tolist()))
    x0 = p.value
    view = p.value.permute(1, 0)
    b1, b2, lr, eps, wd = 0.9, 0.999, 0.01, 1e-8, 0.1
    opt = Adam([p], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    m = v = None
    for t in (1, 2, 3):
        opt.zero_grad()
        (p.value * p.value * p.value).sum().backward()
        x, g = p.value.to_numpy().copy(), p.value.grad.to_numpy()
        g = g + x * wd
        m = g * (1.0 - b1) if m is None else m * b1 + g * (1.0 - b1)
        v = g * g * (1.0 - b2) if v is None else v * b2 + g * g * (1.0 - b2)
        m_hat, v_hat = m * (1.0 / (1.0 - b1**t)), v * (1.0 / (1.0 - b2**t))
        expected = x - m_hat * lr / (np.sqrt(v_hat) + eps)
        opt.step()
        assert p.value is x0
        np.testing.assert_array_equal(p.value.to_numpy(), expected)
        np.testing.assert_array_equal(view.to_numpy(), expected.T)


def test_adam_one_step_by_hand():
    # First step: m_hat = g, v_hat = g^2, so x <- x - lr * g / (|g| + eps).
    p = Parameter(tensor([1.0, -2.0]))
    got = square_step(Adam([p], lr=0.1), p)
    np.testing.assert_allclose(got, [1.0 - 0.1 * 2 / (2 + 1e-8), -2.0 + 0.1 * 4 / (4 + 1e-8)])


def test_adam_two_steps_by_hand():
    b1, b2, lr, eps = 0.9, 0.999, 0.1, 1e-8
    x = 3.0
    m = v = 0.0
    for t in (1, 2):  # the update rule of Kingma & Ba, on plain floats
        g = 2 * x
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x -= lr * (m / (1 - b1**t)) / (math.sqrt(v / (1 - b2**t)) + eps)
    p = Parameter(tensor([3.0]))
    opt = Adam([p], lr=lr)
    square_step(opt, p)
    np.testing.assert_allclose(square_step(opt, p), [x], rtol=1e-12)
    # By hand: x1 = 3 - 0.1 = 2.9; g2 = 5.8, m = 1.12, v = 0.069604,
    # m_hat = 1.12 / 0.19 = 5.894737, v_hat = 0.069604 / 0.001999 = 34.81941 (sqrt 5.900797),
    # x2 = 2.9 - 0.1 * 5.894737 / 5.900797 = 2.8001027.
    assert x == pytest.approx(2.8001027, abs=1e-6)


def test_zero_grad_clears_tensor_gradients():
    p = Parameter(tensor([1.0]))
    opt = SGD([p], lr=0.1)
    (p.value * 2.0).sum().backward()
    assert p.value.grad is not None
    opt.step()
    assert p.value.grad is not None
    opt.zero_grad()
    assert p.value.grad is None


class Linear(Module):
    def __init__(self):
        super().__init__()
        self.w = Parameter(rand((2, 1), seed=0))
        self.b = Parameter(tensor([0.0]))

    def forward(self, x):
        return x @ self.w.value + self.b.value


@pytest.mark.parametrize("make", [lambda ps: SGD(ps, lr=0.1), lambda ps: Adam(ps, lr=0.1)])
def test_linear_regression_trains(make):
    # y = 2 x0 - 3 x1 + 1
    x = rand((16, 2), seed=1) * 2.0 - 1.0
    y = x @ tensor([[2.0], [-3.0]]) + 1.0
    model = Linear()
    opt = make(model.parameters())
    losses = []
    for _ in range(150):
        opt.zero_grad()
        diff = model(x) - y
        loss = (diff * diff).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-2 * losses[0]
    np.testing.assert_allclose(model.w.value.to_numpy().ravel(), [2.0, -3.0], atol=0.1)
    np.testing.assert_allclose(model.b.value.to_numpy(), [1.0], atol=0.1)
