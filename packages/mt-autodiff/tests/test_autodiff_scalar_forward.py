"""Scalar forward: every catalogue function on Scalars agrees with its float reference."""

import math

import pytest
from hypothesis import given
from hypothesis.strategies import floats

from minitorch.autodiff import Scalar, ScalarHistory
from minitorch.operators import MathTestVariable

pytestmark = pytest.mark.task1_2

small_floats = floats(min_value=-100, max_value=100, allow_nan=False)

# Reductions need tensors (a.sum(0)); Scalars are tested on the one- and two-arg functions.
ONE_ARG, TWO_ARG, _ = MathTestVariable.pairs()


def same(got, expected):
    return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize(("name", "ref", "fn"), ONE_ARG, ids=[c[0] for c in ONE_ARG])
@given(x=small_floats)
def test_one_arg(name, ref, fn, x):
    out = fn(Scalar(x))
    assert isinstance(out, Scalar)
    assert same(out.data, ref(x))


@pytest.mark.parametrize(("name", "ref", "fn"), TWO_ARG, ids=[c[0] for c in TWO_ARG])
@given(x=small_floats, y=small_floats)
def test_two_arg(name, ref, fn, x, y):
    out = fn(Scalar(x), Scalar(y))
    assert isinstance(out, Scalar)
    assert same(out.data, ref(x, y))


@pytest.mark.parametrize(("name", "ref", "fn"), ONE_ARG, ids=[c[0] for c in ONE_ARG])
def test_one_arg_on_constants(name, ref, fn):
    out = fn(Scalar(0.3, requires_grad=False))
    assert same(out.data, ref(0.3))
    assert out.is_constant()


def test_scalar_name_defaults_to_a_unique_id_string():
    a, b = Scalar(1.0), Scalar(1.0)
    assert a.name == str(a.unique_id) != b.name
    assert len((a + b).name) > 0  # the course's graph drawing takes len() of it
    assert Scalar(2.0, name="x").name == "x"


def test_pairs_cover_the_catalogue():
    names = [c[0] for c in ONE_ARG] + [c[0] for c in TWO_ARG]
    assert {"sig", "log", "relu", "exp", "inv", "complex", "div2", "gt2", "lt2", "eq2"} <= set(
        names
    )


@given(small_floats, floats(min_value=0.5, max_value=100))
def test_arithmetic_with_plain_numbers_on_either_side(a, b):
    x = Scalar(a)
    assert (x + b).data == a + b
    assert (b + x).data == b + a
    assert (x - b).data == a - b
    assert (b - x).data == b - a
    assert (x * b).data == a * b
    assert (b * x).data == b * a
    assert (x / b).data == pytest.approx(a / b)
    assert (b / (x * x + 1.0)).data == pytest.approx(b / (a * a + 1.0))
    assert (-x).data == -a


def test_comparisons_give_scalars():
    x, y = Scalar(1.0), Scalar(2.0)
    for out, expected in [
        (x < y, 1.0),
        (y < x, 0.0),
        (x > y, 0.0),
        (y > x, 1.0),
        (x == y, 0.0),
        (x == Scalar(1.0), 1.0),
        (x == 1, 1.0),
        (x < 5, 1.0),
        (3 > x, 1.0),  # noqa: SIM300 - the reflected comparison is the point
    ]:
        assert isinstance(out, Scalar)
        assert out.data == expected


def test_eq_with_non_number_falls_back_to_identity():
    x = Scalar(1.0)
    assert (x == "1.0") is False
    assert (x != "1.0") is True


def test_methods_and_conversions():
    x = Scalar(2.0)
    assert x.log().data == pytest.approx(math.log(2.0))
    assert x.exp().data == pytest.approx(math.exp(2.0))
    assert x.sigmoid().data == pytest.approx(1.0 / (1.0 + math.exp(-2.0)))
    assert x.relu().data == 2.0
    assert (-x).relu().data == 0.0
    assert float(x) == 2.0
    assert bool(x) is True
    assert bool(Scalar(0.0)) is False
    assert repr(x) == "Scalar(2.0)"
    assert Scalar(3).data == 3.0
    assert isinstance(Scalar(3).data, float)


def test_ieee_behaviour_on_scalars():
    assert Scalar(0.0).log().data == -math.inf
    assert math.isnan(Scalar(-1.0).log().data)  # NaN like PyTorch, no exception
    assert Scalar(1000.0).exp().data == math.inf
    assert (1.0 / Scalar(0.0)).data == math.inf


def test_leaf_and_constant_flags():
    leaf = Scalar(1.0)
    const = Scalar(1.0, requires_grad=False)
    assert (leaf.is_leaf(), leaf.is_constant(), leaf.requires_grad) == (True, False, True)
    assert (const.is_leaf(), const.is_constant(), const.requires_grad) == (False, True, False)
    out = leaf * 2.0
    assert (out.is_leaf(), out.is_constant()) == (False, False)
    assert isinstance(out.history, ScalarHistory)
    assert out.history.inputs[0] is leaf
    assert (const * 2.0).is_constant()  # only constants in, constant out


@pytest.mark.parametrize("bad", ["1.0", None, 1 + 2j, [1.0], Scalar(1.0)])
def test_scalar_from_non_number_raises(bad):
    with pytest.raises(TypeError, match="Scalar needs a real number, got"):
        Scalar(bad)


def test_arithmetic_with_non_number_raises():
    with pytest.raises(TypeError, match="real number"):
        Scalar(1.0) + "2"


def test_hash_by_identity():
    a, b = Scalar(1.0), Scalar(1.0)
    assert isinstance(a == b, Scalar)  # == is elementwise, not identity
    s = {a, b}
    assert len(s) == 2
    assert a in s
    assert Scalar(1.0) not in s
    d = {a: "a", b: "b"}
    assert d[a] == "a"
    assert d[b] == "b"
    assert hash(a) == hash(a)
    assert hash(a) != hash(b)


def test_a_parameter_is_an_operand_on_either_side() -> None:
    """A Module's Parameter of a Scalar stands for its Scalar: ``x * p`` and ``p * x``.

    (``Scalar(2.0) * Parameter(Scalar(3.0))`` raised TypeError: a Parameter is not a number.)
    The gradient reaches the parameter's Scalar.
    """
    from minitorch.autodiff import central_difference
    from minitorch.operators import Parameter

    x = Scalar(2.0)
    p = Parameter(Scalar(3.0))
    out = x * p + p * x - p / x + Parameter(1.5) * x
    expected = lambda w: 2.0 * w + w * 2.0 - w / 2.0 + 1.5 * 2.0  # noqa: E731
    assert same(out.data, expected(3.0))
    out.backward()
    assert math.isclose(p.value.derivative, central_difference(expected, 3.0), rel_tol=1e-6)
    assert p.value.derivative == p.grad
