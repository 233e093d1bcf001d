"""Backpropagation: topological order, accumulation, deep graphs, constants and no_grad."""

import math

import pytest
from hypothesis import given
from hypothesis.strategies import floats

from minitorch.autodiff import (
    Context,
    Scalar,
    backpropagate,
    central_difference,
    is_grad_enabled,
    no_grad,
    topological_sort,
)

pytestmark = pytest.mark.task1_4

small_floats = floats(min_value=-100, max_value=100, allow_nan=False)


def ids(xs):
    return [id(x) for x in xs]


# ------------------------------------------------------------------------ topological sort


def test_topological_sort_diamond():
    x = Scalar(2.0)
    a = x * 3.0
    b = x + 1.0
    out = a * b
    order = topological_sort(out)
    assert order[0] is out
    assert order[-1] is x
    assert len(order) == 4  # each node once, though x is reached twice
    assert set(ids(order)) == set(ids([x, a, b, out]))


def test_topological_sort_puts_children_before_parents():
    x, y = Scalar(1.0), Scalar(2.0)
    h1 = x * y
    h2 = h1 + x
    h3 = h2.sigmoid() * h1
    out = h3 + y
    order = topological_sort(out)
    pos = {id(v): i for i, v in enumerate(order)}
    for v in order:
        for parent in v.parents:
            if not parent.is_constant():
                assert pos[id(v)] < pos[id(parent)]
    assert len(order) == len({id(v) for v in order}) == 7


def test_topological_sort_excludes_constants():
    x = Scalar(2.0)
    c = Scalar(5.0, requires_grad=False)
    out = x * c
    order = topological_sort(out)
    assert ids(order) == ids([out, x])
    assert topological_sort(c) == []


def test_topological_sort_of_a_leaf():
    x = Scalar(1.0)
    assert ids(topological_sort(x)) == [id(x)]


# ------------------------------------------------------------------------------ backprop


def test_backpropagate_scales_by_output_derivative():
    x, y = Scalar(3.0), Scalar(4.0)
    out = x * y + x
    backpropagate(out, 2.0)
    assert x.derivative == 2.0 * (4.0 + 1.0)
    assert y.derivative == 2.0 * 3.0


def test_backward_d_output_argument():
    x = Scalar(3.0)
    (x * x).backward(0.5)
    assert x.derivative == 3.0  # 0.5 * 2x


def test_backward_of_a_leaf():
    x = Scalar(3.0)
    x.backward()
    assert x.derivative == 1.0


def test_reused_variable_accumulates_within_one_pass():
    x = Scalar(3.0)
    (x + x).backward()
    assert x.derivative == 2.0
    y = Scalar(3.0)
    (y * y * y).backward()
    assert y.derivative == 27.0  # 3y^2


def test_derivatives_accumulate_across_backward_calls():
    x = Scalar(2.0)
    (x * 5.0).backward()
    (x * 5.0).backward()
    assert x.derivative == 10.0
    x.zero_grad_()
    assert x.derivative is None
    (x * 5.0).backward()
    assert x.derivative == 5.0


def test_intermediates_keep_no_derivative():
    x = Scalar(2.0)
    h = x * x
    g = h.sigmoid()
    out = g + h
    out.backward()
    assert x.derivative is not None
    for node in (h, g, out):
        assert node.derivative is None


def test_constants_get_no_derivative():
    x = Scalar(2.0)
    c = Scalar(3.0, requires_grad=False)
    (x * c + c).backward()
    assert c.derivative is None
    assert x.derivative == 3.0


def test_accumulate_derivative_on_non_leaf_raises():
    h = Scalar(1.0) * 2.0
    with pytest.raises(RuntimeError, match="only leaf"):
        h.accumulate_derivative(1.0)


def test_backward_on_constant_raises():
    with pytest.raises(RuntimeError, match=r"backward\(\) on a constant Scalar"):
        Scalar(1.0, requires_grad=False).backward()
    with pytest.raises(RuntimeError, match="constant"):
        (Scalar(1.0, requires_grad=False) * 2.0).backward()


def test_requires_grad_toggle():
    x = Scalar(1.0, requires_grad=False)
    assert x.requires_grad_() is x
    assert x.is_leaf()
    (x * 4.0).backward()
    assert x.derivative == 4.0
    x.requires_grad_(False)
    assert x.is_constant()


def test_twenty_thousand_op_chain_has_no_recursion_error():
    # Twenty times Python's recursion limit: a recursive sort or backward pass fails here.
    # (The grader sends such a graph to the student's code and back: 20,000 nodes keep
    # that to seconds.)
    n = 20_000
    x = Scalar(1.0)
    y = x
    for _ in range(n):
        y = y * 1.0000001
    y.backward()
    # d/dx (x * r^n) = r^n
    assert x.derivative == pytest.approx((1.0 + 1e-7) ** n, rel=1e-9)
    assert len(topological_sort(y)) == n + 1


@given(small_floats, small_floats)
def test_shared_subexpression_against_central_difference(a, b):
    def f(x, y):
        h = x * y + 3.0  # used twice below
        return (h * h + h * x) / 100.0 + (h / 1000.0).sigmoid() * y

    x, y = Scalar(a), Scalar(b)
    f(x, y).backward()

    def value(p, q):
        return f(Scalar(p, requires_grad=False), Scalar(q, requires_grad=False)).data

    for got, arg in ((x.derivative, 0), (y.derivative, 1)):
        expected = central_difference(value, a, b, arg=arg)
        assert math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-3)


@given(small_floats, small_floats)
def test_hand_derived_gradient(a, b):
    # f = x*y + x*x  ->  df/dx = y + 2x, df/dy = x
    x, y = Scalar(a), Scalar(b)
    (x * y + x * x).backward()
    assert x.derivative == pytest.approx(b + 2 * a, rel=1e-12, abs=1e-12)
    assert y.derivative == pytest.approx(a, rel=1e-12, abs=1e-12)


# ------------------------------------------------------------------------------ no_grad


def test_no_grad_records_no_history():
    x = Scalar(2.0)
    with no_grad():
        assert not is_grad_enabled()
        y = x * x + 1.0
    assert is_grad_enabled()
    assert y.data == 5.0
    assert y.is_constant()
    assert y.history is None
    with pytest.raises(RuntimeError, match="constant"):
        y.backward()
    z = x * x  # recording again after the block
    assert not z.is_constant()


def test_no_grad_restores_state_after_exception():
    def fail_inside():
        with no_grad():
            assert not is_grad_enabled()
            raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError, match="boom"):
        fail_inside()
    assert is_grad_enabled()


def test_no_grad_nests():
    with no_grad():
        with no_grad():
            assert not is_grad_enabled()
        assert not is_grad_enabled()
    assert is_grad_enabled()


def test_one_no_grad_decorator_shared_by_two_threads():
    """Each thread gets back its own state, also when the threads leave in entry order."""
    import threading

    entered_a, entered_b, left_a = (threading.Event() for _ in range(3))
    after: dict[str, bool] = {}

    @no_grad()
    def step(then: threading.Event, wait: threading.Event) -> None:
        then.set()
        assert wait.wait(timeout=30)

    def a() -> None:  # gradients enabled: enters first, leaves first
        step(entered_a, entered_b)
        after["a"] = is_grad_enabled()
        left_a.set()

    def b() -> None:  # inside an outer no_grad: enters second, leaves second
        assert entered_a.wait(timeout=30)
        with no_grad():
            step(entered_b, left_a)
            after["b"] = is_grad_enabled()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert after == {"a": True, "b": False}


def test_context_saves_nothing_under_no_grad():
    ctx = Context(no_grad=True)
    ctx.save_for_backward(1.0, 2.0)
    assert ctx.saved_values == ()
    ctx = Context()
    ctx.save_for_backward(1.0, 2.0)
    assert ctx.saved_values == (1.0, 2.0)
    assert ctx.saved_tensors == (1.0, 2.0)


def test_inv_backward_of_tiny_scalar_is_minus_inf():
    """Regression: ``1 / x`` backward divided by an underflowed ``x * x``."""
    x = Scalar(1e-200)
    (1.0 / x).backward()
    assert x.derivative == -math.inf


@pytest.mark.parametrize("bad", ["x", None, [1.0], 1j])
def test_backward_non_numeric_d_output_raises_type_error_naming_it(bad):
    # Regression: (Scalar(1.) * 2.).backward('x') said "could not convert string to float"
    x = Scalar(1.0)
    with pytest.raises(
        TypeError, match=rf"^backward\(\): d_output must be a real number, got {type(bad).__name__}"
    ):
        (x * 2.0).backward(bad)
    assert x.derivative is None


def test_backward_takes_a_scalar_d_output():
    x = Scalar(3.0)
    (x * 2.0).backward(Scalar(0.5, requires_grad=False))
    assert x.derivative == pytest.approx(1.0)
