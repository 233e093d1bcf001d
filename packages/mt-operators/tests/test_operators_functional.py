"""Higher-order helpers: map, zip_with, reduce and the list functions built on them."""

import math

import pytest
from hypothesis import given
from hypothesis.strategies import floats, lists

from minitorch.operators import add, add_lists, map, mul, neg, neg_list, prod, reduce, sum, zip_with

pytestmark = pytest.mark.task0_3

small_floats = floats(min_value=-100, max_value=100, allow_nan=False)


def test_map_returns_a_function_over_iterables():
    negate = map(neg)
    assert callable(negate)
    assert negate([1.0, -2.0, 3.0]) == [-1.0, 2.0, -3.0]
    assert negate(x for x in (1.0, 2.0)) == [-1.0, -2.0]  # any iterable
    assert negate([]) == []
    assert map(lambda x: x * 10)([1, 2]) == [10, 20]


def test_zip_with_pairs_elements():
    assert zip_with(add)([1.0, 2.0], [10.0, 20.0]) == [11.0, 22.0]
    assert zip_with(lambda a, b: (a, b))("ab", [1, 2]) == [("a", 1), ("b", 2)]
    assert zip_with(mul)([], []) == []


@pytest.mark.parametrize(("xs", "ys"), [([1.0, 2.0], [1.0]), ([], [1.0]), ([1.0], [])])
def test_zip_with_unequal_lengths_raises(xs, ys):
    with pytest.raises(ValueError, match=rf"equal lengths.*{len(xs)} and {len(ys)}"):
        zip_with(add)(xs, ys)


def test_add_lists_unequal_lengths_raises():
    with pytest.raises(ValueError, match="equal lengths"):
        add_lists([1.0, 2.0, 3.0], [1.0, 2.0])


def test_reduce_folds_from_the_left():
    digits = reduce(lambda acc, d: acc * 10 + d, 0)
    assert digits([1, 2, 3]) == 123  # ((0*10+1)*10+2)*10+3
    assert reduce(lambda acc, s: acc + s, "")(["a", "b", "c"]) == "abc"
    assert reduce(add, 7.0)([]) == 7.0  # empty: the start value


def test_list_helpers_on_examples():
    assert neg_list([1.0, -2.5]) == [-1.0, 2.5]
    assert add_lists([1.0, 2.0], [3.0, 4.5]) == [4.0, 6.5]
    assert sum([1.0, 2.0, 3.5]) == 6.5
    assert prod([2.0, 3.0, 0.5]) == 3.0


def test_empty_sum_and_prod():
    assert sum([]) == 0.0
    assert prod([]) == 1.0


@given(lists(small_floats))
def test_neg_list_property(ls):
    assert neg_list(ls) == [-x for x in ls]
    assert neg_list(neg_list(ls)) == ls


@given(lists(small_floats, max_size=20), lists(small_floats, max_size=20))
def test_add_lists_property(a, b):
    n = len(a) if len(a) < len(b) else len(b)
    a, b = a[:n], b[:n]
    out = add_lists(a, b)
    assert len(out) == n
    for x, y, z in zip(a, b, out, strict=True):
        assert z == x + y


@given(lists(small_floats, max_size=30))
def test_sum_matches_fsum(ls):
    assert sum(ls) == pytest.approx(math.fsum(ls), abs=1e-9)


@given(lists(small_floats, min_size=5, max_size=5), lists(small_floats, min_size=5, max_size=5))
def test_sum_distributes_over_add_lists(a, b):
    assert sum(add_lists(a, b)) == pytest.approx(sum(a) + sum(b), abs=1e-9)


@given(lists(floats(min_value=-10, max_value=10, allow_nan=False), max_size=6))
def test_prod_matches_math_prod(ls):
    assert prod(ls) == pytest.approx(math.prod(ls), rel=1e-12, abs=1e-12)
