"""central_difference: numerical partial derivatives, and its argument checking."""

import math

import pytest
from hypothesis import given
from hypothesis.strategies import floats

from minitorch.autodiff import central_difference

pytestmark = pytest.mark.task1_1

small_floats = floats(min_value=-100, max_value=100, allow_nan=False)


def test_square():
    assert central_difference(lambda x: x * x, 3.0) == pytest.approx(6.0, abs=1e-5)


def test_returns_float():
    assert isinstance(central_difference(lambda x: 2 * x, 1), float)


def test_partial_derivatives_of_two_args():
    def f(x, y):
        return x * y + x * x * x

    # d/dx = y + 3x^2 = 5 + 12 ; d/dy = x = 2
    assert central_difference(f, 2.0, 5.0, arg=0) == pytest.approx(17.0, abs=1e-4)
    assert central_difference(f, 2.0, 5.0, arg=1) == pytest.approx(2.0, abs=1e-4)


def test_other_args_held_fixed():
    def f(x, y, z):
        return x + 10.0 * y + 100.0 * z

    assert central_difference(f, 1.0, 1.0, 1.0, arg=2) == pytest.approx(100.0, abs=1e-3)


def test_epsilon_is_the_half_step():
    # For a piecewise-constant f the estimate is (f(x+eps) - f(x-eps)) / (2 eps).
    def step(x):
        return 1.0 if x > 0 else 0.0

    assert central_difference(step, 0.0, epsilon=0.25) == pytest.approx(2.0)
    assert central_difference(step, 0.0, epsilon=0.5) == pytest.approx(1.0)


@given(small_floats)
def test_sin_matches_cos(x):
    assert central_difference(math.sin, x) == pytest.approx(math.cos(x), abs=1e-6)


@given(small_floats, small_floats)
def test_polynomial_matches_hand_derivative(x, y):
    def f(a, b):
        return a * a * b - 3.0 * b + a

    assert central_difference(f, x, y, arg=0) == pytest.approx(2 * x * y + 1, rel=1e-5, abs=1e-4)
    assert central_difference(f, x, y, arg=1) == pytest.approx(x * x - 3, rel=1e-5, abs=1e-4)


@pytest.mark.parametrize("arg", [-1, 2, 5, 1.0, "0", None, True])
def test_bad_arg_raises_index_error(arg):
    with pytest.raises(IndexError, match=r"arg=.*not an argument index for 2 value"):
        central_difference(lambda x, y: x + y, 1.0, 2.0, arg=arg)


def test_no_values_raises_index_error():
    with pytest.raises(IndexError, match="0 value"):
        central_difference(lambda: 0.0)
