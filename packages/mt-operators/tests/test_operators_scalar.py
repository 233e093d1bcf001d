"""Scalar operators: concrete behaviour (task0_1) and the math catalogue the course's tools use.

The properties of the operators, task 0.2's tests, are in test_operators_properties.py.
"""

import math

import pytest
from hypothesis import given
from hypothesis.strategies import floats

import minitorch.operators as ops
from minitorch.operators import (
    MathTest,
    MathTestVariable,
    add,
    eq,
    exp,
    id,
    inv,
    inv_back,
    is_close,
    log,
    log_back,
    lt,
    max,
    mul,
    neg,
    relu,
    relu_back,
    sigmoid,
    sigmoid_back,
)

small_floats = floats(min_value=-100, max_value=100, allow_nan=False)

CONTRACT = [
    *("mul", "id", "add", "neg", "lt", "eq", "max", "is_close", "sigmoid", "relu"),
    *("log", "exp", "inv", "log_back", "inv_back", "relu_back", "sigmoid_back"),
    *("map", "zip_with", "reduce", "neg_list", "add_lists", "sum", "prod"),
    *("Module", "Parameter", "datasets", "MathTest", "MathTestVariable"),
]


# --------------------------------------------------------------------------- task0_1


@pytest.mark.task0_1
@pytest.mark.parametrize("name", CONTRACT)
def test_contract_names_importable_from_package_root(name):
    assert name in ops.__all__
    assert getattr(ops, name) is not None


@pytest.mark.task0_1
def test_minitorch_namespace_finds_this_layer():
    from pathlib import Path

    import minitorch
    import minitorch.operators

    # mt-root's minitorch/__init__.py keeps the namespace open (pkgutil.extend_path), so
    # this layer's folder is one of the namespace's search locations wherever it is installed.
    folder = Path(minitorch.operators.__file__).resolve().parents[1]
    assert folder in [Path(p).resolve() for p in minitorch.__path__]


@pytest.mark.task0_1
def test_basic_arithmetic():
    assert mul(4.0, 2.5) == 10.0
    assert mul(-3.0, 0.0) == 0.0
    assert add(4.0, 2.5) == 6.5
    assert add(-1.0, 1.0) == 0.0
    assert neg(3.0) == -3.0
    assert neg(-2.0) == 2.0
    assert id(7.25) == 7.25


@pytest.mark.task0_1
def test_comparisons_return_floats():
    assert lt(1.0, 2.0) == 1.0
    assert lt(2.0, 1.0) == 0.0
    assert lt(1.0, 1.0) == 0.0
    assert eq(3.0, 3.0) == 1.0
    assert eq(3.0, 3.5) == 0.0
    for v in (lt(1.0, 2.0), eq(1.0, 2.0)):
        assert isinstance(v, float)


@pytest.mark.task0_1
def test_max_and_is_close():
    assert max(1.0, 2.0) == 2.0
    assert max(2.0, 1.0) == 2.0
    assert max(-5.0, -7.0) == -5.0
    assert is_close(1.0, 1.005) == 1.0
    assert is_close(1.0, 1.02) == 0.0


@pytest.mark.task0_1
def test_sigmoid_relu_log_exp_inv_values():
    assert sigmoid(0.0) == 0.5
    assert sigmoid(2.0) == pytest.approx(1.0 / (1.0 + math.e**-2.0))
    assert sigmoid(-2.0) == pytest.approx(1.0 / (1.0 + math.e**2.0))
    assert relu(3.5) == 3.5
    assert relu(-3.5) == 0.0
    assert relu(0.0) == 0.0
    assert log(math.e) == pytest.approx(1.0)
    assert log(1.0) == 0.0
    assert exp(0.0) == 1.0
    assert exp(1.0) == pytest.approx(2.718281828459045)
    assert inv(4.0) == 0.25
    assert inv(-0.5) == -2.0


@pytest.mark.task0_1
def test_backward_functions_by_hand():
    # d/dx log x = 1/x ; d/dx 1/x = -1/x^2 ; relu' = 1 for x>0 ; sigmoid' = s(1-s)
    assert log_back(2.0, 3.0) == 1.5
    assert inv_back(2.0, 3.0) == -0.75
    assert relu_back(2.0, 3.0) == 3.0
    assert relu_back(-2.0, 3.0) == 0.0
    assert relu_back(0.0, 3.0) == 0.0  # PyTorch's convention at the kink
    assert sigmoid_back(0.0, 1.0) == 0.25
    assert sigmoid_back(0.0, 4.0) == 1.0


@pytest.mark.task0_1
def test_ieee_edge_values():
    assert log(0.0) == -math.inf
    assert log(-0.0) == -math.inf
    assert math.isnan(log(-1.0))
    assert log(math.inf) == math.inf
    assert inv(0.0) == math.inf
    assert inv(-0.0) == -math.inf
    assert inv(math.inf) == 0.0
    assert exp(1000.0) == math.inf  # no OverflowError
    assert exp(math.inf) == math.inf
    assert exp(-1000.0) == 0.0
    assert math.isnan(relu(math.nan))


def test_div_is_ieee_division_even_by_subnormals():
    """``div`` divides directly: ``x * inv(y)`` overflows when ``y`` is subnormal.

    (``inv(5e-324)`` is inf, so ``0 / 5e-324`` gave NaN and ``2e-309 / 1e-309`` inf.)
    """
    cases = [
        (2e-309, 1e-309, 2e-309 / 1e-309),  # about 2.0
        (0.0, 5e-324, 0.0),
        (1.0, 0.0, math.inf),
        (-1.0, 0.0, -math.inf),
        (1.0, -0.0, -math.inf),
        (6.0, -3.0, -2.0),
        (1.0, math.inf, 0.0),
    ]
    for x, y, expected in cases:
        assert ops.div(x, y) == expected, (x, y)
    for x, y in [(0.0, 0.0), (math.nan, 0.0), (math.inf, math.inf), (1.0, math.nan)]:
        assert math.isnan(ops.div(x, y)), (x, y)
    assert abs(ops.div(2e-309, 1e-309) - 2.0) < 1e-10
    torch = pytest.importorskip("torch")
    for x, y, _ in cases:
        tx, ty = torch.tensor([x], dtype=torch.float64), torch.tensor([y], dtype=torch.float64)
        theirs = (tx / ty).item()
        assert ops.div(x, y) == theirs, (x, y)


@pytest.mark.task0_1
def test_exp_at_the_overflow_boundary():
    # log(DBL_MAX) ~= 709.7827: the largest finite exp, and the next float overflows.
    top = 709.782712893384
    assert math.isfinite(exp(top))
    assert exp(math.nextafter(top, math.inf)) == math.inf


@pytest.mark.task0_1
@pytest.mark.parametrize("x", [1e4, -1e4, 1e308, -1e308, math.inf, -math.inf])
def test_sigmoid_is_stable_at_extremes(x):
    s = sigmoid(x)
    assert s == (1.0 if x > 0 else 0.0)
    assert sigmoid_back(x, 1.0) == 0.0


# ------------------------------ the math catalogue (given code over task 0.1's functions)


ONE_ARG, TWO_ARG, REDUCE = MathTest.cases()


@pytest.mark.task0_1
@pytest.mark.parametrize(("name", "fn"), ONE_ARG, ids=[n for n, _ in ONE_ARG])
@given(x=small_floats)
def test_math_catalogue_one_arg_is_finite_on_domain(name, fn, x):
    assert math.isfinite(fn(x))


@pytest.mark.task0_1
@pytest.mark.parametrize(("name", "fn"), TWO_ARG, ids=[n for n, _ in TWO_ARG])
@given(x=small_floats, y=small_floats)
def test_math_catalogue_two_arg_is_finite_on_domain(name, fn, x, y):
    assert math.isfinite(fn(x, y))


@pytest.mark.task0_1
def test_math_catalogue_pairs_on_the_float_catalogue():
    # The course's visual tools call MathTest._comp_testing(): (name, reference, fn) triples,
    # both functions the float reference on MathTest itself.
    for triples, cases in zip(MathTest._comp_testing(), MathTest.cases(), strict=True):
        assert [n for n, _, _ in triples] == [n for n, _ in cases]
        assert all(ref is fn for _, ref, fn in triples)
    one, _, _ = MathTestVariable.pairs()
    assert dict((n, (r, f)) for n, r, f in one)["log"] == (MathTest.log, MathTestVariable.log)


@pytest.mark.task0_3
def test_math_catalogue_reductions():
    cases = dict(REDUCE)
    assert set(cases) == {"sum_red", "mean_red", "mean_full_red"}
    assert cases["sum_red"]([1.0, 2.0, 3.5]) == 6.5
    assert cases["mean_red"]([1.0, 2.0, 3.0]) == 2.0
    assert cases["mean_full_red"]([2.0, 4.0]) == 3.0


@pytest.mark.task0_1
@pytest.mark.parametrize("x", [1e-200, -1e-200, 5e-324, 1e-160, 0.0])
def test_inv_back_of_tiny_x_is_infinite_not_an_exception(x):
    """Regression: ``x * x`` underflows to 0; the answer is -inf * d."""
    assert inv_back(x, 1.0) == -math.inf
    assert inv_back(x, -2.0) == math.inf
    if x * x == 0.0:
        assert math.isnan(inv_back(x, 0.0))  # 0 / 0, as IEEE, Numba and PyTorch give
    else:
        assert inv_back(x, 0.0) == 0.0


# ``pow``: C99's (IEEE-754's) special values, as numpy.power and torch.pow.
POW_CASES = [
    # x ** 0 and 1 ** y are 1 for every x and y, NaN included
    (math.nan, 0.0, 1.0),
    (math.inf, -0.0, 1.0),
    (1.0, math.nan, 1.0),
    (1.0, math.inf, 1.0),
    (1.0, -math.inf, 1.0),
    # x ** ±inf
    (-1.0, math.inf, 1.0),
    (-1.0, -math.inf, 1.0),
    (-2.0, math.inf, math.inf),
    (-0.5, math.inf, 0.0),
    (0.5, -math.inf, math.inf),
    (3.0, -math.inf, 0.0),
    # ±0 ** y: the sign survives an odd integer y only
    (0.0, -1.0, math.inf),
    (-0.0, -1.0, -math.inf),
    (-0.0, -2.0, math.inf),
    (-0.0, -0.5, math.inf),
    (-0.0, 3.0, -0.0),
    (-0.0, 2.0, 0.0),
    (-0.0, math.inf, 0.0),
    (0.0, -math.inf, math.inf),
    # ±inf ** y
    (-math.inf, 3.0, -math.inf),
    (-math.inf, 2.0, math.inf),
    (-math.inf, 1.5, math.inf),
    (-math.inf, -3.0, -0.0),
    (-math.inf, -1.5, 0.0),
    (math.inf, -2.0, 0.0),
    # a negative base to an integer power; overflow and underflow without an exception
    (-2.0, 3.0, -8.0),
    (-2.0, 2.0**60, math.inf),
    (-2.0, 2.0**60 + 2.0**8, math.inf),
    (-2.0, 1025.0, -math.inf),
    (10.0, 400.0, math.inf),
    (10.0, -400.0, 0.0),
    (-10.0, -401.0, -0.0),
    (2.0, 1023.0, 2.0**1023),
]


def _same(got: float, expected: float) -> bool:
    """Equal, with the same sign for zeros, or both NaN."""
    if math.isnan(expected):
        return math.isnan(got)
    return got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)


def _c_pow(x: float, y: float) -> float:
    """C's ``pow`` from ``math.pow``, which has its special values but raises where C returns.

    ``math.pow`` raises ValueError for ``0 ** negative`` (C: ``±inf``) and for a negative
    base to a non-integer power (C: NaN), OverflowError where C returns ``±inf``.
    """
    odd = math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2.0) != 0.0
    try:
        return math.pow(x, y)
    except ValueError:
        if x == 0.0:
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan
    except OverflowError:
        return -math.inf if x < 0.0 and odd else math.inf


@pytest.mark.task0_1
@pytest.mark.parametrize(("x", "y", "expected"), POW_CASES)
def test_pow_special_values_are_c99s(x: float, y: float, expected: float) -> None:
    """``pow`` returns C99's special values (it raised, or was NaN, where ``math.pow`` raises)."""
    assert _same(ops.pow(x, y), expected), (x, y, ops.pow(x, y))
    assert _same(ops.pow(x, y), _c_pow(x, y))
    assert math.isnan(ops.pow(-8.0, 1.0 / 3.0))
    assert math.isnan(ops.pow(math.nan, 1.0))
    assert math.isnan(ops.pow(2.0, math.nan))


@pytest.mark.task0_1
@given(floats(allow_nan=True, allow_infinity=True), floats(allow_nan=True, allow_infinity=True))
def test_pow_is_c_pow_everywhere(x: float, y: float) -> None:
    """Every pair of floats: ``math.pow``'s value, or C's where ``math.pow`` raises."""
    got, expected = ops.pow(x, y), _c_pow(x, y)
    if math.isfinite(expected) and expected != 0.0:
        assert math.isclose(got, expected, rel_tol=4e-16), (x, y, got, expected)
    else:
        assert _same(got, expected), (x, y, got, expected)


@pytest.mark.task0_1
def test_pow_matches_torch_at_the_special_values() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is the reference of the special values")
    for x, y, _ in POW_CASES:
        theirs = torch.pow(
            torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)
        )
        assert _same(ops.pow(x, y), theirs.item()), (x, y, theirs.item())
