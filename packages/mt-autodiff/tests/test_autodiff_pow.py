"""``**`` on Scalars: values and both derivatives, by hand, by central
differences and against PyTorch where it is installed."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch.autodiff import Scalar, central_difference, derivative_check


@pytest.mark.task1_2
def test_pow_values_by_hand() -> None:
    x = Scalar(3.0)
    assert (x**2).data == 9.0
    assert (2**x).data == 8.0
    assert (x**x).data == 27.0
    assert (Scalar(-2.0) ** 3).data == -8.0
    assert math.isnan((Scalar(-8.0) ** (1 / 3)).data)
    assert (Scalar(0.0) ** -1).data == math.inf
    assert (Scalar(0.0) ** 0).data == 1.0


@pytest.mark.task1_4
def test_pow_derivatives_by_hand() -> None:
    x, y = Scalar(3.0, requires_grad=True), Scalar(2.0, requires_grad=True)
    (x**y).backward()
    assert x.derivative == pytest.approx(6.0)  # y * x ** (y - 1)
    assert y.derivative == pytest.approx(9.0 * math.log(3.0))  # x ** y * log(x)
    z = Scalar(0.0, requires_grad=True)
    (z**2).backward()
    assert z.derivative == 0.0


@pytest.mark.task1_4
@given(
    st.floats(0.1, 5.0, allow_nan=False),
    st.floats(-3.0, 3.0, allow_nan=False),
)
def test_pow_derivatives_by_central_differences(a: float, b: float) -> None:
    derivative_check(lambda x, y: x**y, Scalar(a), Scalar(b))
    x = Scalar(a, requires_grad=True)
    (x**b).backward()
    assert x.derivative == pytest.approx(central_difference(lambda v: v**b, a), rel=1e-4, abs=1e-4)


@pytest.mark.task1_4
@pytest.mark.parametrize(("a", "b"), [(3.0, 2.0), (0.5, -1.5), (-2.0, 3.0), (2.0, 0.0)])
def test_pow_matches_torch(a: float, b: float) -> None:
    x, y = Scalar(a, requires_grad=True), Scalar(b, requires_grad=True)
    out = x**y
    out.backward()
    torch = pytest.importorskip("torch")  # after backward: on the starter that raises first
    tx = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    tout = tx**ty
    tout.backward()
    assert out.data == pytest.approx(tout.item())
    assert x.derivative == pytest.approx(tx.grad.item())
    assert y.derivative == pytest.approx(ty.grad.item(), nan_ok=True)


SPECIALS = [-math.inf, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, math.inf, math.nan]


def _same(got: float, expected: float) -> bool:
    return got == expected or (math.isnan(got) and math.isnan(expected))


@pytest.mark.task1_2
def test_pow_special_values_are_c99s() -> None:
    """``operators.pow``: the sign of ``-0`` survives an odd power (``_pow`` gave ``inf``)."""
    assert (Scalar(-0.0) ** -1).data == -math.inf
    assert (Scalar(-0.0) ** -2).data == math.inf
    assert (Scalar(1.0) ** math.nan).data == 1.0
    assert (Scalar(-1.0) ** math.inf).data == 1.0
    assert (Scalar(-2.0) ** 1025).data == -math.inf  # an overflow, not an OverflowError


@pytest.mark.task1_4
def test_pow_values_and_derivatives_at_special_values_match_torch() -> None:
    """Values and both derivatives, with PyTorch's masks: ``d/dx`` is 0 where ``y == 0`` and
    ``d/dy`` is 0 where ``x == 0 <= y`` (it was 0 at ``x == 0`` for every ``y``; PyTorch:
    ``-inf`` for ``y < 0``)."""
    torch = pytest.importorskip("torch", reason="PyTorch is the reference of the derivatives")
    for a in SPECIALS:
        for b in SPECIALS:
            x, y = Scalar(a, requires_grad=True), Scalar(b, requires_grad=True)
            out = x**y
            out.backward()
            tx = torch.tensor(a, dtype=torch.float64, requires_grad=True)
            ty = torch.tensor(b, dtype=torch.float64, requires_grad=True)
            tout = tx**ty
            tout.backward()
            for name, ours, theirs in (
                ("value", out.data, tout.item()),
                ("d/dx", x.derivative, tx.grad.item()),
                ("d/dy", y.derivative, ty.grad.item()),
            ):
                assert ours == pytest.approx(theirs, rel=1e-14, nan_ok=True) or _same(
                    ours, theirs
                ), (a, b, name, ours, theirs)
