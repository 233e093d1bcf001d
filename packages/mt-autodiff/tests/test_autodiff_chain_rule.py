"""Chain rule: each ScalarFunction's backward against hand-derived formulas, chain_rule on
a node, and derivative_check (backprop vs central differences) on the whole catalogue."""

import math

import pytest
from hypothesis import assume, given
from hypothesis.strategies import floats

from minitorch.autodiff import (
    EQ,
    LT,
    Add,
    Context,
    Exp,
    FunctionBase,
    Inv,
    Log,
    Mul,
    Neg,
    ReLU,
    Scalar,
    ScalarFunction,
    Sigmoid,
    Variable,
    derivative_check,
)
from minitorch.operators import MathTestVariable

pytestmark = pytest.mark.task1_3

small_floats = floats(min_value=-100, max_value=100, allow_nan=False)
ONE_ARG, TWO_ARG, _ = MathTestVariable.pairs()


def approx(x):
    return pytest.approx(x, rel=1e-9, abs=1e-12)


def run_backward(fn, *inputs, d):
    ctx = Context()
    fn.forward(ctx, *inputs)
    out = fn.backward(ctx, d)
    return out if isinstance(out, tuple) else (out,)


def sig(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


# ------------------------------------------------------ each function's backward by hand


@given(small_floats, small_floats, small_floats)
def test_add_mul_backward(x, y, d):
    assert run_backward(Add, x, y, d=d) == (d, d)
    dx, dy = run_backward(Mul, x, y, d=d)
    assert dx == approx(y * d)
    assert dy == approx(x * d)


@given(small_floats, small_floats)
def test_one_arg_backward(x, d):
    assert run_backward(Neg, x, d=d) == (-d,)
    assert run_backward(Sigmoid, x, d=d)[0] == approx(d * sig(x) * (1.0 - sig(x)))
    assert run_backward(ReLU, x, d=d)[0] == (d if x > 0 else 0.0)
    assert run_backward(Exp, x / 20.0, d=d)[0] == approx(d * math.exp(x / 20.0))
    if abs(x) > 1e-3:
        assert run_backward(Inv, x, d=d)[0] == approx(-d / (x * x))
    if x > 0:
        assert run_backward(Log, x, d=d)[0] == approx(d / x)


@given(small_floats, small_floats, small_floats)
def test_comparison_backward_is_zero(x, y, d):
    assert run_backward(LT, x, y, d=d) == (0.0, 0.0)
    assert run_backward(EQ, x, y, d=d) == (0.0, 0.0)


def test_derivatives_is_the_engines_tuple_of_backward():
    # One rule for every function (FunctionBase.derivatives): a one-input backward's
    # value is wrapped, a tuple passes as it is. Neg and Mul run this task's code.
    assert issubclass(ScalarFunction, FunctionBase)
    ctx = Context()
    Neg.forward(ctx, 2.0)
    assert Neg.derivatives(ctx, 3.0) == (-3.0,)
    ctx = Context()
    Mul.forward(ctx, 2.0, 5.0)
    assert Mul.derivatives(ctx, 3.0) == (15.0, 6.0)


# ---------------------------------------------------------------- chain_rule on a node


def test_scalar_is_a_variable():
    assert isinstance(Scalar(1.0), Variable)


def test_chain_rule_of_mul():
    x, y = Scalar(2.0), Scalar(3.0)
    z = x * y
    back = list(z.chain_rule(5.0))
    assert len(back) == 2
    (px, dx), (py, dy) = back
    assert px is x
    assert dx == 15.0  # d(xy)/dx * 5 = y * 5
    assert py is y
    assert dy == 10.0


def test_chain_rule_gives_a_pair_per_input_constants_too():
    # The course's contract (its test_chain_rule3): one pair per input, in order;
    # backpropagate is what skips the constants.
    x = Scalar(2.0)
    z = x * 3.0
    back = list(z.chain_rule(5.0))
    assert len(back) == 2
    assert back[0][0] is x
    assert back[0][1] == 15.0
    assert back[1][0].is_constant()
    assert back[1][1] == 10.0
    w = Scalar(3.0, requires_grad=False) * x  # the constant first: the variable's is second
    (c, _), (v, dv) = w.chain_rule(5.0)
    assert c.is_constant()
    assert v is x
    assert dv == 15.0


def test_backpropagate_gives_constants_no_derivative():
    x = Scalar(2.0)
    c = Scalar(3.0, requires_grad=False)
    (x * c).backward()
    assert x.derivative == 3.0
    assert c.derivative is None


def test_chain_rule_of_leaf_and_constant_is_empty():
    assert list(Scalar(1.0).chain_rule(1.0)) == []
    assert list(Scalar(1.0, requires_grad=False).chain_rule(1.0)) == []


def test_chain_rule_of_composition_by_hand():
    # f(x) = sigmoid(x^2); f'(x) = 2x s(x^2)(1 - s(x^2))
    x = Scalar(0.7)
    f = (x * x).sigmoid()
    f.backward()
    s = sig(0.49)
    assert x.derivative == approx(2 * 0.7 * s * (1 - s))


@given(floats(min_value=0.5, max_value=100), small_floats)
def test_plain_numbers_on_either_side_derivatives(a, b):
    cases = [
        (lambda x: b + x, 1.0),
        (lambda x: x + b, 1.0),
        (lambda x: b - x, -1.0),
        (lambda x: x - b, 1.0),
        (lambda x: b * x, b),
        (lambda x: x * b, b),
        (lambda x: b / x, -b / (a * a)),
        (lambda x: x / a, 1.0 / a),
        (lambda x: -x, -1.0),
    ]
    for fn, expected in cases:
        x = Scalar(a)
        fn(x).backward()
        assert x.derivative == approx(expected)


# ------------------------------------------------ derivative_check: backprop vs central diff


def assume_smooth(name, x, y=0.0):
    """Stay away from the kinks and jumps where a central difference is meaningless."""
    if name == "relu":
        assume(abs(x + 5.5) > 1e-3)
    if name == "complex":
        assume(abs(x * 10.0 + 7.0) > 1e-3)
    if name in ("gt2", "lt2"):
        assume(abs(x + 1.2 - y) > 1e-3)
    if name == "eq2":
        assume(abs(x - (y + 5.5)) > 1e-3)


@pytest.mark.parametrize(("name", "ref", "fn"), ONE_ARG, ids=[c[0] for c in ONE_ARG])
@given(x=small_floats)
def test_derivative_check_one_arg(name, ref, fn, x):
    assume_smooth(name, x)
    derivative_check(fn, Scalar(x))


@pytest.mark.parametrize(("name", "ref", "fn"), TWO_ARG, ids=[c[0] for c in TWO_ARG])
@given(x=small_floats, y=small_floats)
def test_derivative_check_two_arg(name, ref, fn, x, y):
    assume_smooth(name, x, y)
    derivative_check(fn, Scalar(x), Scalar(y))


class WrongSquare(ScalarFunction):
    """x^2 with a deliberately wrong derivative (x instead of 2x)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_values
        return a * d_output


def test_derivative_check_catches_a_wrong_backward():
    with pytest.raises(AssertionError, match=r"derivative check failed.*argument 0"):
        derivative_check(WrongSquare.apply, Scalar(3.0))


class TooManyGrads(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        return a

    @staticmethod
    def backward(ctx, d_output):
        return d_output, d_output


class ReturnsInt(ScalarFunction):
    @staticmethod
    def forward(ctx, a):
        return 1


def test_backward_with_wrong_arity_is_reported():
    y = TooManyGrads.apply(Scalar(1.0))
    with pytest.raises(RuntimeError, match=r"TooManyGrads\.backward returned 2 derivative\(s\)"):
        y.backward()


def test_forward_returning_non_float_is_reported():
    with pytest.raises(TypeError, match=r"ReturnsInt\.forward returned int"):
        ReturnsInt.apply(Scalar(1.0))
