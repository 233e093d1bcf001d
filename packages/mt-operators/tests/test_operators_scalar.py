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
