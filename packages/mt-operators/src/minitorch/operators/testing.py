"""The catalogue of test functions shared by every layer's tests.

``MathTest`` writes each function once over plain floats with the operators of this
package: that is the reference. ``MathTestVariable`` overrides the functions that need a
method call (``a.log()``) so the same catalogue runs on Scalars and Tensors. Every
function is well defined and smooth enough for a central-difference check on inputs in
``[-100, 100]`` (the shifts keep ``log`` and ``inv`` away from their singularities).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import functional, scalar

__all__ = ["MathTest", "MathTestVariable"]

Fn = Callable[..., Any]
Cases = list[tuple[str, Fn]]
Pairs = list[tuple[str, Fn, Fn]]

_ONE_ARG = (
    "neg",
    "add_constant",
    "square",
    "cube",
    "sub_constant",
    "mult_constant",
    "div",
    "inv",
    "sig",
    "log",
    "relu",
    "exp",
    "explog",
    "complex",
)
_TWO_ARG = ("add2", "mul2", "div2", "gt2", "lt2", "eq2")
_REDUCE = ("sum_red", "mean_red", "mean_full_red")


class MathTest:
    """Reference implementations over floats (reduce functions take a list of floats)."""

    # One argument.
    @staticmethod
    def neg(a: Any) -> Any:
        """Negate."""
        return -a

    @staticmethod
    def add_constant(a: Any) -> Any:
        """Add a constant."""
        return a + 5.0

    @staticmethod
    def square(a: Any) -> Any:
        """Square."""
        return a * a

    @staticmethod
    def cube(a: Any) -> Any:
        """Cube."""
        return a * a * a

    @staticmethod
    def sub_constant(a: Any) -> Any:
        """Subtract a constant."""
        return a - 5.0

    @staticmethod
    def mult_constant(a: Any) -> Any:
        """Multiply by a constant."""
        return 5.0 * a

    @staticmethod
    def div(a: Any) -> Any:
        """Divide by a constant."""
        return a / 5.0

    @staticmethod
    def inv(a: Any) -> Any:
        """Invert, shifted to stay positive on [-100, 100]."""
        return scalar.inv(a + 101.0)

    @staticmethod
    def sig(a: Any) -> Any:
        """Sigmoid."""
        return scalar.sigmoid(a)

    @staticmethod
    def log(a: Any) -> Any:
        """Log, shifted to stay positive on [-100, 100]."""
        return scalar.log(a + 101.0)

    @staticmethod
    def relu(a: Any) -> Any:
        """ReLU, shifted off zero."""
        return scalar.relu(a + 5.5)

    @staticmethod
    def exp(a: Any) -> Any:
        """Exp, scaled to stay finite and well conditioned."""
        return scalar.exp(a / 20.0)

    @staticmethod
    def explog(a: Any) -> Any:
        """Exp of log: the identity on the shifted domain."""
        return scalar.exp(scalar.log(a + 101.0))

    @staticmethod
    def complex(a: Any) -> Any:
        """A composition of several functions."""
        return (
            scalar.log(scalar.sigmoid(scalar.relu(scalar.relu(a * 10.0 + 7.0) * 6.0 + 5.0) * 10.0))
            / 50.0
        )

    # Two arguments.
    @staticmethod
    def add2(a: Any, b: Any) -> Any:
        """Add."""
        return a + b

    @staticmethod
    def mul2(a: Any, b: Any) -> Any:
        """Multiply."""
        return a * b

    @staticmethod
    def div2(a: Any, b: Any) -> Any:
        """Divide by a shifted second argument."""
        return a / (b + 101.0)

    @staticmethod
    def gt2(a: Any, b: Any) -> Any:
        """Greater than, with an offset so that ties are rare."""
        return scalar.lt(b, a + 1.2)

    @staticmethod
    def lt2(a: Any, b: Any) -> Any:
        """Less than, with an offset so that ties are rare."""
        return scalar.lt(a + 1.2, b)

    @staticmethod
    def eq2(a: Any, b: Any) -> Any:
        """Equality with a shifted second argument."""
        return scalar.eq(a, b + 5.5)

    # Reductions over a list.
    @staticmethod
    def sum_red(a: Sequence[float]) -> Any:
        """Sum."""
        return functional.sum(a)

    @staticmethod
    def mean_red(a: Sequence[float]) -> Any:
        """Mean (over the first dimension for tensors)."""
        return functional.sum(a) / float(len(a))

    @staticmethod
    def mean_full_red(a: Sequence[float]) -> Any:
        """Mean over everything."""
        return functional.sum(a) / float(len(a))

    @classmethod
    def cases(cls) -> tuple[Cases, Cases, Cases]:
        """Return the ``(name, fn)`` lists of one-arg, two-arg and reduce functions."""
        return (
            [(n, getattr(cls, n)) for n in _ONE_ARG],
            [(n, getattr(cls, n)) for n in _TWO_ARG],
            [(n, getattr(cls, n)) for n in _REDUCE],
        )

    # The course material's name for ``cases``.
    _tests = cases

    @classmethod
    def pairs(cls) -> tuple[Pairs, Pairs, Pairs]:
        """Return ``(name, float_reference, fn)`` for every function of this catalogue.

        On ``MathTestVariable`` ``fn`` is the Scalar/Tensor version; on ``MathTest`` itself
        both functions are the float reference (the course's visual tools call it so).
        """
        ref = MathTest.cases()
        var = cls.cases()
        return tuple(  # type: ignore[return-value]
            [(n, f, g) for (n, f), (_, g) in zip(r, v, strict=True)]
            for r, v in zip(ref, var, strict=True)
        )

    # The course material's name for ``pairs``.
    _comp_testing = pairs


class MathTestVariable(MathTest):
    """The same catalogue for Scalars and Tensors: methods instead of float operators."""

    @staticmethod
    def inv(a: Any) -> Any:
        """Invert, shifted."""
        return 1.0 / (a + 101.0)

    @staticmethod
    def sig(a: Any) -> Any:
        """Sigmoid."""
        return a.sigmoid()

    @staticmethod
    def log(a: Any) -> Any:
        """Log, shifted."""
        return (a + 101.0).log()

    @staticmethod
    def relu(a: Any) -> Any:
        """ReLU, shifted."""
        return (a + 5.5).relu()

    @staticmethod
    def exp(a: Any) -> Any:
        """Exp, scaled."""
        return (a / 20.0).exp()

    @staticmethod
    def explog(a: Any) -> Any:
        """Exp of log."""
        return (a + 101.0).log().exp()

    @staticmethod
    def complex(a: Any) -> Any:
        """A composition of several functions."""
        return (((a * 10.0 + 7.0).relu() * 6.0 + 5.0).relu() * 10.0).sigmoid().log() / 50.0

    @staticmethod
    def gt2(a: Any, b: Any) -> Any:
        """Greater than."""
        return a + 1.2 > b

    @staticmethod
    def lt2(a: Any, b: Any) -> Any:
        """Less than."""
        return a + 1.2 < b

    @staticmethod
    def eq2(a: Any, b: Any) -> Any:
        """Equality."""
        return a == (b + 5.5)

    @staticmethod
    def sum_red(a: Any) -> Any:
        """Sum over dimension 0."""
        return a.sum(0)

    @staticmethod
    def mean_red(a: Any) -> Any:
        """Mean over dimension 0."""
        return a.mean(0)

    @staticmethod
    def mean_full_red(a: Any) -> Any:
        """Mean over everything."""
        return a.mean()
