"""Optimizers on Scalar parameters: single steps against hand-computed numbers, convergence
on small quadratics, a tiny training run, and constructor validation."""

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis.strategies import floats

from minitorch.autodiff import SGD, Adam, Optimizer, Scalar
from minitorch.operators import Module, Parameter, datasets

pytestmark = pytest.mark.task1_5


class Quadratic(Module):
    """f(a, b) = (a - 1)^2 + 3 (b + 2)^2, minimum at (1, -2)."""

    def __init__(self, a=5.0, b=4.0):
        super().__init__()
        self.a = Parameter(Scalar(a))
        self.b = Parameter(Scalar(b))

    def forward(self):
        da = self.a.value - 1.0
        db = self.b.value + 2.0
        return da * da + 3.0 * db * db


def train(model, optim, steps):
    for _ in range(steps):
        optim.zero_grad()
        model().backward()
        optim.step()
    return model.a.value.data, model.b.value.data


def square_step(optim, p):
    """One optimisation step of f(x) = x^2 on the single parameter p."""
    optim.zero_grad()
    (p.value * p.value).backward()
    optim.step()
    return p.value.data


# --------------------------------------------------------------- hand-computed single steps


def test_sgd_one_step_by_hand():
    p = Parameter(Scalar(2.0))
    # g = 2x = 4 ; x <- 2 - 0.1 * 4
    assert square_step(SGD([p], lr=0.1), p) == pytest.approx(1.6, abs=1e-12)


def test_sgd_momentum_steps_by_hand():
    # f = x^2, x0 = 1, lr = 0.1, momentum = 0.9, v <- 0.9 v + g, x <- x - 0.1 v
    # step 1: g = 2.0,  v = 2.0,                x = 1 - 0.2      = 0.8
    # step 2: g = 1.6,  v = 1.8 + 1.6 = 3.4,     x = 0.8 - 0.34   = 0.46
    # step 3: g = 0.92, v = 3.06 + 0.92 = 3.98,  x = 0.46 - 0.398 = 0.062
    p = Parameter(Scalar(1.0))
    opt = SGD([p], lr=0.1, momentum=0.9)
    assert [square_step(opt, p) for _ in range(3)] == pytest.approx([0.8, 0.46, 0.062], abs=1e-12)


def test_adam_steps_by_hand():
    # f = x^2, x0 = 1, lr = 0.1, betas = (0.9, 0.999), eps = 1e-8
    # step 1: g = 2, m = 0.2, v = 0.004, m^ = 2, v^ = 4, x = 1 - 0.1 * 2 / (2 + 1e-8)
    # step 2: g = 1.8, m = 0.36, v = 0.007236, m^ = 0.36/0.19, v^ = 0.007236/0.001999
    # step 3: likewise with t = 3
    p = Parameter(Scalar(1.0))
    opt = Adam([p], lr=0.1)
    got = [square_step(opt, p) for _ in range(3)]
    assert got == pytest.approx([0.9000000005, 0.8004122287, 0.7015862729], abs=1e-9)


@given(floats(min_value=-100, max_value=100, allow_nan=False))
def test_adam_first_step_moves_by_lr(x0):
    # After one step m^ = g and v^ = g^2, so the move is lr * g / (|g| + eps), i.e. about
    # lr * sign(g) whatever the size of g (f = x^2, g = 2 x0).
    g = 2.0 * x0
    p = Parameter(Scalar(x0))
    x1 = square_step(Adam([p], lr=0.01, eps=1e-8), p)
    assert x1 == pytest.approx(x0 - 0.01 * g / (abs(g) + 1e-8), rel=1e-12, abs=1e-15)


def test_optimizer_state_is_per_parameter():
    # Momentum of one parameter must not leak into another.
    p, q = Parameter(Scalar(1.0)), Parameter(Scalar(-2.0))
    opt = SGD([p, q], lr=0.1, momentum=0.5)
    for _ in range(2):
        opt.zero_grad()
        (p.value * p.value + q.value).backward()
        opt.step()
    # p: g1 = 2, v1 = 2, p = 0.8 ; g2 = 1.6, v2 = 1 + 1.6 = 2.6, p = 0.54
    # q: g = 1 always, v1 = 1, q = -2.1 ; v2 = 1.5, q = -2.25
    assert p.value.data == pytest.approx(0.54, abs=1e-12)
    assert q.value.data == pytest.approx(-2.25, abs=1e-12)


# ------------------------------------------------------------------------ step mechanics


def test_step_writes_back_trainable_leaves():
    m = Quadratic()
    old = m.a.value
    opt = SGD(m.parameters(), lr=0.1)
    m().backward()
    opt.step()
    new = m.a.value
    assert new is not old
    assert new.is_leaf()
    # The derivative stays until zero_grad() (PyTorch keeps p.grad after step), so a
    # second optimizer over the same parameter steps with it too.
    assert new.derivative == old.derivative
    opt.zero_grad()
    assert new.derivative is None
    assert new.name == "a"


def test_parameter_without_derivative_is_not_moved():
    used, unused = Parameter(Scalar(1.0)), Parameter(Scalar(7.0))
    opt = SGD([used, unused], lr=0.1)
    (used.value * 2.0).backward()
    opt.step()
    assert unused.value.data == 7.0
    assert used.value.data == pytest.approx(0.8)


def test_zero_grad_clears_derivatives():
    m = Quadratic()
    opt = SGD(m.parameters())
    m().backward()
    assert m.a.value.derivative is not None
    opt.zero_grad()
    assert m.a.value.derivative is None
    assert m.b.value.derivative is None


def test_parameter_marks_scalar_trainable():
    p = Parameter(Scalar(1.0, requires_grad=False))
    assert p.value.is_leaf()
    p.update(Scalar(2.0, requires_grad=False))
    assert p.value.is_leaf()


def test_step_records_no_history():
    m = Quadratic()
    opt = Adam(m.parameters(), lr=0.1)
    m().backward()
    opt.step()
    assert m.a.value.history.last_fn is None


# ---------------------------------------------------------------------------- convergence


@pytest.mark.parametrize(
    ("make", "steps"),
    [
        (lambda ps: SGD(ps, lr=0.05), 200),
        (lambda ps: SGD(ps, lr=0.02, momentum=0.9), 200),
        (lambda ps: Adam(ps, lr=0.1), 500),
    ],
    ids=["sgd", "sgd-momentum", "adam"],
)
def test_converges_on_quadratic(make, steps):
    m = Quadratic()
    a, b = train(m, make(m.parameters()), steps)
    assert a == pytest.approx(1.0, abs=1e-2)
    assert b == pytest.approx(-2.0, abs=1e-2)


class Logistic(Module):
    def __init__(self):
        super().__init__()
        self.w1 = Parameter(Scalar(0.0))
        self.w2 = Parameter(Scalar(0.0))
        self.b = Parameter(Scalar(0.0))

    def forward(self, x1, x2):
        return (self.w1.value * x1 + self.w2.value * x2 + self.b.value).sigmoid()


def test_training_a_logistic_model_on_simple():
    data = datasets["simple"](40, seed=0)
    model = Logistic()
    opt = SGD(model.parameters(), lr=5.0)
    losses = []
    for _ in range(100):
        opt.zero_grad()
        loss = 0.0
        for (x1, x2), y in zip(data.X, data.y, strict=True):
            p = model(x1, x2)
            loss = loss - (p if y == 1 else 1.0 - p).log()
        loss = loss / data.N
        loss.backward()
        opt.step()
        losses.append(loss.data)
    assert losses[-1] < 0.5 * losses[0]
    points = zip(data.X, data.y, strict=True)
    correct = sum((model(x1, x2).data > 0.5) == (y == 1) for (x1, x2), y in points)
    assert correct >= 0.9 * data.N


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("opt", [Optimizer, SGD, Adam])
@pytest.mark.parametrize("bad", [1.0, Scalar(1.0), "w"])
def test_non_parameter_raises_type_error(opt, bad):
    with pytest.raises(TypeError, match="optimizers take Parameters, got"):
        opt([Parameter(Scalar(1.0)), bad])


@pytest.mark.parametrize("opt", [SGD, Adam])
@pytest.mark.parametrize("lr", [0.0, -0.1, math.nan])
def test_bad_learning_rate_raises(opt, lr):
    with pytest.raises(ValueError, match="learning rate must be positive"):
        opt([Parameter(Scalar(1.0))], lr=lr)


@pytest.mark.parametrize("momentum", [-0.1, 1.0, 2.0])
def test_bad_momentum_raises(momentum):
    with pytest.raises(ValueError, match=r"momentum must be in \[0, 1\)"):
        SGD([Parameter(Scalar(1.0))], lr=0.1, momentum=momentum)


@pytest.mark.parametrize("betas", [(1.0, 0.999), (0.9, -0.1)])
def test_bad_betas_raise(betas):
    with pytest.raises(ValueError, match=r"betas must be in \[0, 1\)"):
        Adam([Parameter(Scalar(1.0))], betas=betas)


@pytest.mark.parametrize("opt", [SGD, Adam])
@pytest.mark.parametrize("lr", [math.inf])
def test_infinite_learning_rate_raises(opt, lr):
    with pytest.raises(ValueError, match="lr=inf"):
        opt([Parameter(Scalar(1.0))], lr=lr)


@pytest.mark.parametrize("eps", [-1.0, -1e-12, math.nan, math.inf])
def test_bad_adam_eps_raises(eps):
    # Regression: eps=-1 was accepted and one step with gradient 1 set the weight to -inf
    with pytest.raises(ValueError, match=r"eps must be in \[0, inf\), got"):
        Adam([Parameter(Scalar(1.0))], lr=0.1, eps=eps)


@pytest.mark.parametrize("opt", [SGD, Adam])
@pytest.mark.parametrize("wd", [-0.1, math.nan, math.inf])
def test_bad_weight_decay_raises(opt, wd):
    with pytest.raises(ValueError, match=r"weight_decay must be in \[0, inf\), got"):
        opt([Parameter(Scalar(1.0))], lr=0.1, weight_decay=wd)


@pytest.mark.parametrize("betas", [(math.nan, 0.9), (0.9, math.nan), (-1e-9, 0.5)])
def test_nan_or_negative_betas_raise(betas):
    with pytest.raises(ValueError, match=r"betas must be in \[0, 1\)"):
        Adam([Parameter(Scalar(1.0))], betas=betas)


@pytest.mark.parametrize("betas", [0.9, (0.9,), (0.9, 0.99, 0.5), "ab"])
def test_betas_not_a_pair_raise_type_error(betas):
    with pytest.raises(TypeError, match="betas must be a pair"):
        Adam([Parameter(Scalar(1.0))], betas=betas)


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda p, v: SGD(p, lr=v), "lr"),
        (lambda p, v: SGD(p, momentum=v), "momentum"),
        (lambda p, v: SGD(p, weight_decay=v), "weight_decay"),
        (lambda p, v: Adam(p, lr=v), "lr"),
        (lambda p, v: Adam(p, eps=v), "eps"),
        (lambda p, v: Adam(p, weight_decay=v), "weight_decay"),
        (lambda p, v: Adam(p, betas=(v, 0.9)), r"betas\[0\]"),
        (lambda p, v: Adam(p, betas=(0.9, v)), r"betas\[1\]"),
    ],
)
@pytest.mark.parametrize("bad", ["0.1", None, True, [0.1]])
def test_non_numeric_setting_raises_type_error_naming_it(make, name, bad):
    with pytest.raises(TypeError, match=rf"^{name} must be a real number, got"):
        make([Parameter(Scalar(1.0))], bad)


@pytest.mark.parametrize("make", [SGD, Adam])
def test_settings_may_be_any_real_number_type(make):
    # fractions and numpy floats are real numbers too (numpy is not a dependency here)
    opt = make([Parameter(Scalar(1.0))], lr=Fraction(1, 10), weight_decay=Fraction(0))
    assert opt.lr == 0.1
    assert isinstance(opt.lr, float)


@given(floats(-5.0, 5.0), floats(0.0, 2.0))
def test_sgd_weight_decay_adds_l2_gradient(x0, wd):
    # d/dx [x^2] + wd * x, one step with lr 0.1 (torch.optim.SGD's weight_decay)
    p = Parameter(Scalar(x0))
    got = square_step(SGD([p], lr=0.1, weight_decay=wd), p)
    assert got == pytest.approx(x0 - 0.1 * (2 * x0 + wd * x0), abs=1e-9)


@given(floats(-5.0, 5.0), floats(0.0, 2.0))
def test_adam_weight_decay_is_adam_on_the_l2_penalised_loss(x0, wd):
    # x^2 with decay wd has gradient 2x + wd x, that of (1 + wd / 2) x^2 without it
    p = Parameter(Scalar(x0))
    q = Parameter(Scalar(x0))
    decayed = Adam([p], lr=0.1, weight_decay=wd)
    plain = Adam([q], lr=0.1)
    for _ in range(3):
        square_step(decayed, p)
        plain.zero_grad()
        (q.value * q.value * (1.0 + wd / 2.0)).backward()
        plain.step()
        assert p.value.data == pytest.approx(q.value.data, abs=1e-9)


def test_scalar_grad_is_derivative_under_pytorchs_name():
    x = Scalar(3.0)
    (x * x).backward()
    assert x.grad == x.derivative == 6.0
    x.grad = None
    assert x.derivative is None
    d = x.detach()
    assert d.data == 3.0
    assert d.is_constant()


def test_optimizer_step_uses_only_grad_and_detach():
    """Any value with ``grad``, ``detach`` and arithmetic trains: no Scalar/Tensor switch."""

    class Box:
        def __init__(self, v, grad=None):
            self.v, self.grad = v, grad

        def detach(self):
            return Box(self.v)

        def __sub__(self, other):
            return Box(self.v - other)

        def zero_grad_(self):
            self.grad = None

    p = Parameter(Box(5.0, grad=2.0))
    opt = SGD([p], lr=0.5)
    opt.step()
    assert p.value.v == 4.0
    p.value.grad = 1.0
    opt.zero_grad()
    assert p.value.grad is None


@pytest.mark.task1_5
def test_a_parameter_of_a_scalar_expression_trains() -> None:
    """Regression: ``Parameter(Scalar(0.5) * 2 - 1)`` is a leaf, so SGD moves it."""
    p = Parameter(Scalar(0.5) * 2 - 1)
    assert p.value.is_leaf()
    opt = SGD([p], lr=0.1)
    (p.value * 3.0).backward()
    opt.step()
    assert p.value.data == pytest.approx(-0.3)
