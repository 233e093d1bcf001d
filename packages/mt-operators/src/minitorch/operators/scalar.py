"""Scalar operators on Python floats.

Each function calls only :mod:`math` (never another function here), so that the same source
can be compiled by Numba for the fast and CUDA backends. They follow IEEE-754 float
behaviour like PyTorch: ``log(0) == -inf``, ``log(-1)`` is NaN, ``inv(0) == inf`` and
``exp`` overflows to ``inf``; none of them hides an epsilon.
"""

from __future__ import annotations

import math

__all__ = [
    "add",
    "div",
    "eq",
    "exp",
    "id",
    "inv",
    "inv_back",
    "is_close",
    "log",
    "log_back",
    "lt",
    "max",
    "mul",
    "neg",
    "pow",
    "relu",
    "relu_back",
    "sigmoid",
    "sigmoid_back",
    "sqrt",
]

# exp(x) is finite exactly when x <= log(DBL_MAX).
_EXP_MAX = 709.782712893384


def mul(x: float, y: float) -> float:
    """Return ``x * y``."""
    # BEGIN SOLUTION task0_1
    return x * y
    # END SOLUTION


def id(x: float) -> float:  # the course's name; shadows the builtin
    """Return ``x`` unchanged."""
    # BEGIN SOLUTION task0_1
    return x
    # END SOLUTION


def add(x: float, y: float) -> float:
    """Return ``x + y``."""
    # BEGIN SOLUTION task0_1
    return x + y
    # END SOLUTION


def neg(x: float) -> float:
    """Return ``-x``."""
    # BEGIN SOLUTION task0_1
    return -x
    # END SOLUTION


def lt(x: float, y: float) -> float:
    """Return 1.0 if ``x < y`` else 0.0."""
    # BEGIN SOLUTION task0_1
    return 1.0 if x < y else 0.0
    # END SOLUTION


def eq(x: float, y: float) -> float:
    """Return 1.0 if ``x == y`` else 0.0."""
    # BEGIN SOLUTION task0_1
    return 1.0 if x == y else 0.0
    # END SOLUTION


def max(x: float, y: float) -> float:  # the course's name; shadows the builtin
    """Return the larger of ``x`` and ``y`` (``x`` when equal; NaN if either is NaN, as PyTorch)."""
    # BEGIN SOLUTION task0_1
    # x >= y is False when y is NaN, so a NaN in either argument is returned.
    return x if x != x or x >= y else y
    # END SOLUTION


def is_close(x: float, y: float) -> float:
    """Return 1.0 if ``|x - y| < 1e-2`` else 0.0 (the course's tolerance)."""
    # BEGIN SOLUTION task0_1
    return 1.0 if abs(x - y) < 1e-2 else 0.0
    # END SOLUTION


def sigmoid(x: float) -> float:
    r"""Return the logistic function :math:`\sigma(x) = 1 / (1 + e^{-x})`.

    It never overflows: every finite ``x`` gives a value in ``[0, 1]``.
    """
    # BEGIN SOLUTION task0_1
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
    # END SOLUTION


def relu(x: float) -> float:
    """Return ``x`` if ``x > 0`` else 0.0 (NaN stays NaN)."""
    # BEGIN SOLUTION task0_1
    if x > 0.0:
        return x
    if x != x:
        return x
    return 0.0
    # END SOLUTION


def log(x: float) -> float:
    """Return the natural logarithm: ``-inf`` at 0 and NaN for negative ``x``."""
    # BEGIN SOLUTION task0_1
    if x > 0.0:
        return math.log(x)
    if x == 0.0:
        return -math.inf
    return math.nan
    # END SOLUTION


def exp(x: float) -> float:
    """Return ``e**x``, ``inf`` when it overflows."""
    # BEGIN SOLUTION task0_1
    if x > _EXP_MAX:
        return math.inf
    return math.exp(x)
    # END SOLUTION


def sqrt(x: float) -> float:
    """Return the square root of ``x``, NaN for negative ``x``."""
    if x >= 0.0:
        return math.sqrt(x)
    return math.nan


def pow(x: float, y: float) -> float:  # numpy's and PyTorch's name; shadows the builtin
    """Return ``x ** y`` as C99's (IEEE-754's) ``pow``, which ``numpy.power`` follows.

    Its special cases: ``x ** ±0`` and ``1 ** y`` are 1 for every ``x`` and ``y``, NaN
    included; ``(-1) ** ±inf`` is 1; ``x ** inf`` is 0 for ``|x| < 1`` and ``inf`` for
    ``|x| > 1`` (``x ** -inf`` the reverse); ``±0 ** y`` is ``±0`` (``±inf`` for ``y < 0``)
    for an odd integer ``y``, else ``+0`` (``+inf``); ``(-inf) ** y`` is ``(-0) ** -y``
    inverted; a finite negative ``x`` to a finite non-integer ``y`` is NaN; any other NaN
    gives NaN. An overflow is ``±inf`` and an underflow ``±0``, never an exception (as
    ``math.pow`` raises).
    """
    if y == 0.0 or x == 1.0:
        return 1.0
    if x != x or y != y:
        return math.nan
    ax = abs(x)
    if y == math.inf or y == -math.inf:
        if ax == 1.0:
            return 1.0
        return math.inf if (ax > 1.0) == (y > 0.0) else 0.0
    if abs(y) >= 9007199254740992.0:  # 2 ** 53: every float this large is an even integer
        integer, odd = True, False
    else:
        k = int(y)  # exact below 2 ** 53
        integer = k == y
        odd = integer and k % 2 != 0
    if ax == math.inf:
        r = math.inf if y > 0.0 else 0.0
    elif x == 0.0:
        r = math.inf if y < 0.0 else 0.0
        return math.copysign(r, x) if odd else r
    elif x < 0.0 and not integer:
        return math.nan
    else:
        # math.pow raises OverflowError where C's pow returns inf; y * log2|x| (off by
        # far less than 1e-6) says where. Within 1e-6 of 2 ** 1024 it multiplies two halves.
        t = y * math.log2(ax)
        if t > 1024.000001:
            r = math.inf
        elif t > 1023.999999:
            h = math.pow(ax, 0.5 * y)
            r = h * h
        else:
            r = math.pow(ax, y)
    return -r if x < 0.0 and odd else r


def inv(x: float) -> float:
    """Return ``1 / x``; ``±inf`` at ``±0`` like IEEE division."""
    # BEGIN SOLUTION task0_1
    if x == 0.0:
        return math.copysign(math.inf, x)
    return 1.0 / x
    # END SOLUTION


def div(x: float, y: float) -> float:
    """Return ``x / y`` as IEEE division does, without going through ``1 / y``.

    ``x * inv(y)`` overflows for a subnormal ``y`` (``inv(5e-324)`` is ``inf``, so ``0 /
    5e-324`` would be NaN, not 0). At ``y = 0`` the result is ``±inf`` (NaN for ``0 / 0``
    or a NaN ``x``), as PyTorch divides.
    """
    if y == 0.0:
        if x == 0.0 or x != x:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def log_back(x: float, d: float) -> float:
    r"""Return ``d`` times the derivative of ``log`` at ``x``."""
    # BEGIN SOLUTION task0_1
    if x == 0.0:
        return math.copysign(math.inf, x) * d
    return d / x
    # END SOLUTION


def inv_back(x: float, d: float) -> float:
    r"""Return ``d`` times the derivative of ``1/x`` at ``x``.

    Where that derivative overflows (``x`` = 0 or tiny) the result is ``-d * inf`` as IEEE
    division gives (and Numba and PyTorch): ``-inf`` for ``d > 0``, NaN for ``d = 0``.
    """
    # BEGIN SOLUTION task0_1
    xx = x * x
    if xx == 0.0:
        return -math.inf * d
    return -d / xx
    # END SOLUTION


def relu_back(x: float, d: float) -> float:
    """Return ``d`` times the derivative of ``relu`` at ``x`` (taken as 0 at 0, as PyTorch)."""
    # BEGIN SOLUTION task0_1
    return d if x > 0.0 else 0.0
    # END SOLUTION


def sigmoid_back(x: float, d: float) -> float:
    r"""Return ``d`` times the derivative of ``sigmoid`` at ``x``."""
    # BEGIN SOLUTION task0_1
    if x >= 0.0:
        s = 1.0 / (1.0 + math.exp(-x))
    else:
        z = math.exp(x)
        s = z / (1.0 + z)
    return d * s * (1.0 - s)
    # END SOLUTION
