"""Task 0.2: property tests of the operators.

A property is a statement that holds for *every* input, not for one example: ``add`` does
not care about the order of its arguments, ``sigmoid`` stays between 0 and 1. Hypothesis
draws many inputs for each test (``@given``), and when one breaks the property it shrinks
it to a small input that still does and reports that one.

Each test below names a property in its docstring; write its body. A good property test
fails on a wrong operator: your tests are graded by how many mistakes in the operators
(small changes to the course's correct code) they catch, and a test that fails on correct
code earns nothing.
"""

import math

import pytest
from hypothesis import assume, given
from hypothesis.strategies import floats, lists

from minitorch.operators import (
    add,
    add_lists,
    eq,
    exp,
    id,
    inv,
    inv_back,
    is_close,
    log,
    log_back,
    lt,
    map,
    max,
    mul,
    neg,
    neg_list,
    prod,
    reduce,
    relu,
    relu_back,
    sigmoid,
    sigmoid_back,
    sum,
    zip_with,
)

small_floats = floats(min_value=-100, max_value=100, allow_nan=False)
any_floats = floats(allow_nan=False)  # includes +-inf and huge magnitudes


def central_diff(f, x, h=1e-6):
    """The slope of ``f`` at ``x``, measured from two nearby points (a derivative's check)."""
    return (f(x + h) - f(x - h)) / (2.0 * h)


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_same_as_python(x, y):
    """mul, add, neg, id and max give what Python's own arithmetic gives; inv too, away from 0."""
    # BEGIN SOLUTION task0_2
    assert mul(x, y) == x * y
    assert add(x, y) == x + y
    assert neg(x) == -x
    assert id(x) == x
    assert max(x, y) == (x if x >= y else y)
    if abs(x) > 1e-3:
        assert inv(x) == pytest.approx(1.0 / x)
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats)
def test_sigmoid_range_and_symmetry(a):
    """sigmoid lies between 0 and 1, and sigmoid of -a is one minus sigmoid of a."""
    # BEGIN SOLUTION task0_2
    s = sigmoid(a)
    assert 0.0 <= s <= 1.0
    assert sigmoid(-a) == pytest.approx(1.0 - s, abs=1e-12)
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_sigmoid_is_monotone(a, b):
    """sigmoid never decreases: the smaller input never gets the larger output."""
    # BEGIN SOLUTION task0_2
    lo, hi = (a, b) if a <= b else (b, a)
    assert sigmoid(lo) <= sigmoid(hi)
    # END SOLUTION


@pytest.mark.task0_2
@given(any_floats)
def test_sigmoid_and_exp_never_raise(x):
    """On any float, infinities included, sigmoid and exp return (exp as math.exp does)."""
    # BEGIN SOLUTION task0_2
    assert 0.0 <= sigmoid(x) <= 1.0
    e = exp(x)
    assert e >= 0.0
    if x < 709.0:
        assert e == math.exp(x)
    if x > 710.0:
        assert e == math.inf
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_relu_and_relu_back(x, d):
    """relu keeps positive inputs and zeroes the rest; relu_back passes d where relu passes x."""
    # BEGIN SOLUTION task0_2
    assert relu(x) == (x if x > 0 else 0.0)
    assert relu(x) >= 0.0
    assert relu_back(x, d) == (d if x > 0 else 0.0)
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_lt_eq_trichotomy(x, y):
    """Of "x below y", "y below x" and "equal", exactly one holds; equality is symmetric."""
    # BEGIN SOLUTION task0_2
    assert lt(x, y) + lt(y, x) + eq(x, y) == 1.0
    assert eq(x, y) == eq(y, x)
    assert lt(x, x) == 0.0
    assert eq(x, x) == 1.0
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_max_properties(x, y):
    """max is one of its two inputs, at least as large as each, and ignores their order."""
    # BEGIN SOLUTION task0_2
    m = max(x, y)
    assert m >= x
    assert m >= y
    assert m in (x, y)
    assert max(y, x) == m
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats, small_floats)
def test_mul_distributes_over_add(x, y, z):
    """Multiplying a sum gives the sum of the products (up to rounding)."""
    # BEGIN SOLUTION task0_2
    assert mul(z, add(x, y)) == pytest.approx(add(mul(z, x), mul(z, y)), abs=1e-9)
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_add_and_mul_commute(x, y):
    """The order of the two inputs changes neither the sum nor the product."""
    # BEGIN SOLUTION task0_2
    assert add(x, y) == add(y, x)
    assert mul(x, y) == mul(y, x)
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats)
def test_log_inverts_exp(x):
    """Taking log after exp gives back the input (up to rounding)."""
    # BEGIN SOLUTION task0_2
    assert log(exp(x)) == pytest.approx(x, abs=1e-9)
    # END SOLUTION


@pytest.mark.task0_2
@given(floats(min_value=1e-3, max_value=100))
def test_exp_inverts_log(x):
    """Taking exp after log gives back a positive input (up to rounding)."""
    # BEGIN SOLUTION task0_2
    assert exp(log(x)) == pytest.approx(x, rel=1e-12)
    # END SOLUTION


@pytest.mark.task0_2
@given(floats(min_value=-100, max_value=-1e-300))
def test_log_of_negative_is_nan(x):
    """The log of a negative number is not a number (NaN), not an exception."""
    # BEGIN SOLUTION task0_2
    assert math.isnan(log(x))
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats)
def test_is_close_reflexive(x):
    """Every number is close to itself, and not close to itself plus one."""
    # BEGIN SOLUTION task0_2
    assert is_close(x, x) == 1.0
    assert is_close(x, x + 1.0) == 0.0
    # END SOLUTION


@pytest.mark.task0_2
@given(floats(min_value=0.1, max_value=100), small_floats)
def test_log_back_matches_central_difference(x, d):
    """log_back(x, d) is d times the slope of log at x, as central_diff measures it."""
    # BEGIN SOLUTION task0_2
    expected = d * central_diff(log, x)
    assert log_back(x, d) == pytest.approx(expected, rel=1e-4, abs=1e-4)
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_inv_back_matches_central_difference(x, d):
    """inv_back(x, d) is d times the slope of inv at x, away from 0 where inv jumps."""
    # BEGIN SOLUTION task0_2
    assume(abs(x) > 0.1)
    expected = d * central_diff(inv, x)
    assert inv_back(x, d) == pytest.approx(expected, rel=1e-4, abs=1e-4)
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_relu_back_matches_central_difference(x, d):
    """relu_back(x, d) is d times the slope of relu at x, away from the kink at 0."""
    # BEGIN SOLUTION task0_2
    assume(abs(x) > 1e-3)
    expected = d * central_diff(relu, x)
    assert relu_back(x, d) == pytest.approx(expected, rel=1e-4, abs=1e-4)
    # END SOLUTION


@pytest.mark.task0_2
@given(small_floats, small_floats)
def test_sigmoid_back_matches_central_difference(x, d):
    """sigmoid_back(x, d) is d times the slope of sigmoid at x."""
    # BEGIN SOLUTION task0_2
    expected = d * central_diff(sigmoid, x)
    assert sigmoid_back(x, d) == pytest.approx(expected, rel=1e-4, abs=1e-4)
    # END SOLUTION


# The list functions of task 0.3: these properties are part of this task, graded by the
# mistakes in task 0.3's code they catch. Here they run on your own list functions, so they
# fail until your task 0.3 is done.


@pytest.mark.task0_2
@given(lists(small_floats, min_size=5, max_size=5), lists(small_floats, min_size=5, max_size=5))
def test_sum_distribute(ls1, ls2):
    """The sum of ls1 plus the sum of ls2 is the sum of their elementwise sums (add_lists)."""
    # BEGIN SOLUTION task0_2
    assert sum(ls1) + sum(ls2) == pytest.approx(sum(add_lists(ls1, ls2)), abs=1e-9)
    # END SOLUTION


@pytest.mark.task0_2
@given(lists(small_floats))
def test_neg_list_is_map_of_neg(ls):
    """neg_list negates every element, in order, as map(neg) does; the list keeps its length."""
    # BEGIN SOLUTION task0_2
    assert neg_list(ls) == [-x for x in ls]
    assert map(neg)(ls) == [-x for x in ls]
    # END SOLUTION


@pytest.mark.task0_2
@given(lists(small_floats, max_size=6), lists(small_floats, max_size=6))
def test_zip_with_and_reduce_keep_the_order(ls1, ls2):
    """zip_with pairs elements in order, refusing unequal lengths; reduce folds from the left.

    reduce starts at its start value: the product of no elements is 1.
    """
    # BEGIN SOLUTION task0_2
    if len(ls1) == len(ls2):
        differences = [x - y for x, y in zip(ls1, ls2, strict=True)]
        assert zip_with(lambda x, y: x - y)(ls1, ls2) == differences
    else:
        with pytest.raises(ValueError, match="equal lengths"):
            zip_with(add)(ls1, ls2)
    expected = 0.5
    for x in ls1:
        expected = expected * 2.0 - x
    assert reduce(lambda acc, x: acc * 2.0 - x, 0.5)(ls1) == expected
    assert prod([]) == 1.0
    assert prod(ls1[:3]) == pytest.approx(reduce(mul, 1.0)(ls1[:3]))
    # END SOLUTION
