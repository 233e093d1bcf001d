"""``Scalar``: a float that records how it was computed, and its differentiable functions."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from minitorch import operators

from .core import (
    Context,
    FunctionBase,
    GraphNode,
    backpropagate,
    central_difference,
    is_grad_enabled,
)

__all__ = [
    "EQ",
    "LT",
    "Add",
    "Exp",
    "Inv",
    "Log",
    "Mul",
    "Neg",
    "Pow",
    "ReLU",
    "Scalar",
    "ScalarFunction",
    "ScalarHistory",
    "ScalarLike",
    "Sigmoid",
    "derivative_check",
]

ScalarLike: TypeAlias = "float | int | Scalar"


@dataclass
class ScalarHistory:
    """How a Scalar was made: the function, its context and its inputs.

    A leaf (a Scalar the user created) has a history with no function.
    """

    last_fn: type[ScalarFunction] | None = None
    ctx: Context | None = None
    inputs: Sequence[Scalar] = field(default_factory=tuple)


class ScalarFunction(FunctionBase):
    """A differentiable function of floats: subclasses define ``forward`` and ``backward``.

    ``forward(ctx, *floats) -> float`` computes the value and may save what ``backward``
    needs; ``backward(ctx, d_output) -> float | tuple[float, ...]`` returns one derivative
    per input. ``apply`` wraps both around Scalars and records the history.
    """

    @staticmethod
    def forward(ctx: Context, *inputs: float) -> float:
        """Compute the function on floats."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float | tuple[float, ...]:
        """Return the derivative with respect to each input."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *vals: ScalarLike) -> Scalar:
        """Apply the function to Scalars (numbers become constants) and record history.

        A ``Parameter`` stands for its value (a Scalar, or a number that becomes a constant).
        """
        scalars = [v if isinstance(v, Scalar) else _operand(v) for v in vals]
        need_grad = is_grad_enabled() and any(not s.is_constant() for s in scalars)
        ctx = Context(no_grad=not need_grad)
        out = cls.forward(ctx, *(s.data for s in scalars))
        if not isinstance(out, float):
            raise TypeError(f"{cls.__name__}.forward returned {type(out).__name__}, not float")
        history = ScalarHistory(cls, ctx, scalars) if need_grad else None
        return Scalar(out, history, requires_grad=need_grad)


def _operand(v: ScalarLike | operators.Parameter) -> Scalar:
    """A Scalar for an operand that is not one: a Parameter's value, or a constant."""
    value = v.value if isinstance(v, operators.Parameter) else v
    if isinstance(value, Scalar):
        return value
    return Scalar(value, requires_grad=False)


class Scalar(GraphNode):
    """A float in a computation graph, with a derivative after ``backward()``.

    ``Scalar(2.0)`` is a leaf that wants a derivative (like a tensor created with
    ``requires_grad=True``); ``Scalar(2.0, requires_grad=False)`` is a constant.

    Attributes:
        data: the value.
        history: how it was made (None for a constant).
        derivative: the accumulated derivative of a leaf after ``backward()`` (also
            readable and writable as ``grad``, the name Tensors and PyTorch use).
        name: a label for graph drawings: the one given, else a unique id string (the
            course's default).
    """

    __slots__ = ("_name", "data", "derivative", "history")

    def __init__(
        self,
        v: float | int,
        history: ScalarHistory | None = None,
        name: str | None = None,
        *,
        requires_grad: bool = True,
    ) -> None:
        # ``type(v) is float`` first: every operation's output passes through here, and the
        # abstract-class check costs more than the arithmetic.
        if type(v) is not float and (isinstance(v, Scalar) or not isinstance(v, numbers.Real)):
            raise TypeError(f"Scalar needs a real number, got {type(v).__name__}: {v!r}")
        self.data: float = float(v)
        if history is None and requires_grad:
            history = ScalarHistory()
        self.history: ScalarHistory | None = history
        self.derivative: float | None = None
        self._name = name

    @property
    def grad(self) -> float | None:
        """The accumulated derivative (``derivative``, under PyTorch's name)."""
        return self.derivative

    @grad.setter
    def grad(self, value: float | None) -> None:
        self.derivative = value

    def detach(self) -> Scalar:
        """Return a constant Scalar with the same value (no history)."""
        return Scalar(self.data, requires_grad=False)

    # The Variable protocol: unique_id, is_leaf, is_constant, parents come from GraphNode.
    def chain_rule(self, d_output: float) -> Iterable[tuple[Scalar, float]]:
        """Return ``(input, d_input)`` for every input of this Scalar's function, constants too.

        ``backpropagate`` skips the constants; the course's tests count one pair per input.
        """
        # BEGIN SOLUTION task1_3
        return [(x, float(d)) for x, d in self._input_derivatives(d_output)]
        # END SOLUTION

    def accumulate_derivative(self, x: float) -> None:
        """Add ``x`` to the derivative of this leaf."""
        if not self.is_leaf():
            raise RuntimeError("only leaf Scalars accumulate a derivative")
        self.derivative = x if self.derivative is None else self.derivative + x

    def requires_grad_(self, requires_grad: bool = True) -> Scalar:
        """Make this Scalar a leaf that wants a derivative, or a constant; return self."""
        if requires_grad:
            if self.history is None:
                self.history = ScalarHistory()
        else:
            self.history = None
        return self

    def backward(self, d_output: float = 1.0) -> None:
        """Backpropagate from this Scalar, filling ``derivative`` on the leaves.

        Raises:
            TypeError: if ``d_output`` is not a real number (or a Scalar).
            RuntimeError: if this Scalar is a constant (nothing to differentiate).
        """
        if isinstance(d_output, Scalar):
            d_output = d_output.data
        elif not isinstance(d_output, numbers.Real):
            raise TypeError(
                f"backward(): d_output must be a real number, got {type(d_output).__name__} "
                f"{d_output!r}"
            )
        if self.is_constant():
            raise RuntimeError(
                "backward() on a constant Scalar: it has no history (made with "
                "requires_grad=False, under no_grad(), or only from constants)"
            )
        backpropagate(self, float(d_output))

    def zero_grad_(self) -> None:
        """Forget the accumulated derivative."""
        self.derivative = None

    # Arithmetic.
    def __add__(self, b: ScalarLike) -> Scalar:
        # BEGIN SOLUTION task1_2
        return Add.apply(self, b)
        # END SOLUTION

    def __radd__(self, b: ScalarLike) -> Scalar:
        return Add.apply(b, self)

    def __sub__(self, b: ScalarLike) -> Scalar:
        # BEGIN SOLUTION task1_2
        return Add.apply(self, Neg.apply(b))
        # END SOLUTION

    def __rsub__(self, b: ScalarLike) -> Scalar:
        return Add.apply(b, Neg.apply(self))

    def __mul__(self, b: ScalarLike) -> Scalar:
        # BEGIN SOLUTION task1_2
        return Mul.apply(self, b)
        # END SOLUTION

    def __rmul__(self, b: ScalarLike) -> Scalar:
        return Mul.apply(b, self)

    def __truediv__(self, b: ScalarLike) -> Scalar:
        # BEGIN SOLUTION task1_2
        return Mul.apply(self, Inv.apply(b))
        # END SOLUTION

    def __rtruediv__(self, b: ScalarLike) -> Scalar:
        return Mul.apply(b, Inv.apply(self))

    def __neg__(self) -> Scalar:
        # BEGIN SOLUTION task1_2
        return Neg.apply(self)
        # END SOLUTION

    def __pow__(self, b: ScalarLike) -> Scalar:
        return Pow.apply(self, b)

    def __rpow__(self, b: ScalarLike) -> Scalar:
        return Pow.apply(b, self)

    def __lt__(self, b: ScalarLike) -> Scalar:
        # BEGIN SOLUTION task1_2
        return LT.apply(self, b)
        # END SOLUTION

    def __gt__(self, b: ScalarLike) -> Scalar:
        # BEGIN SOLUTION task1_2
        return LT.apply(b, self)
        # END SOLUTION

    def __eq__(self, b: object) -> Scalar:  # type: ignore[override]
        if not isinstance(b, (Scalar, numbers.Real)):
            return NotImplemented
        return EQ.apply(self, b if isinstance(b, Scalar) else float(b))

    # __eq__ is elementwise, so hash by identity.
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        return bool(self.data)

    def __float__(self) -> float:
        return self.data

    def log(self) -> Scalar:
        """Natural log (``-inf`` at 0, NaN below)."""
        # BEGIN SOLUTION task1_2
        return Log.apply(self)
        # END SOLUTION

    def exp(self) -> Scalar:
        """Exponential."""
        # BEGIN SOLUTION task1_2
        return Exp.apply(self)
        # END SOLUTION

    def sigmoid(self) -> Scalar:
        """Logistic sigmoid."""
        # BEGIN SOLUTION task1_2
        return Sigmoid.apply(self)
        # END SOLUTION

    def relu(self) -> Scalar:
        """Rectified linear unit."""
        # BEGIN SOLUTION task1_2
        return ReLU.apply(self)
        # END SOLUTION

    def __repr__(self) -> str:
        return f"Scalar({self.data})"


class Add(ScalarFunction):
    """``f(x, y) = x + y``."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:  # type: ignore[override]
        """Add."""
        # BEGIN SOLUTION task1_2
        return operators.add(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """The derivatives with respect to both inputs, times ``d_output``."""
        # BEGIN SOLUTION task1_3
        return d_output, d_output
        # END SOLUTION


class Mul(ScalarFunction):
    """``f(x, y) = x * y``."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:  # type: ignore[override]
        """Multiply."""
        # BEGIN SOLUTION task1_2
        ctx.save_for_backward(a, b)
        return operators.mul(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """The derivatives with respect to both inputs, times ``d_output``."""
        # BEGIN SOLUTION task1_3
        a, b = ctx.saved_values
        return operators.mul(b, d_output), operators.mul(a, d_output)
        # END SOLUTION


class Inv(ScalarFunction):
    """``f(x) = 1 / x``."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:  # type: ignore[override]
        """Invert."""
        # BEGIN SOLUTION task1_2
        ctx.save_for_backward(a)
        return operators.inv(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """The derivative of ``1/x``, times ``d_output``."""
        # BEGIN SOLUTION task1_3
        (a,) = ctx.saved_values
        return operators.inv_back(a, d_output)
        # END SOLUTION


class Neg(ScalarFunction):
    """``f(x) = -x``."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:  # type: ignore[override]
        """Negate."""
        # BEGIN SOLUTION task1_2
        return operators.neg(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """The derivative of ``-x``, times ``d_output``."""
        # BEGIN SOLUTION task1_3
        return operators.neg(d_output)
        # END SOLUTION


class Sigmoid(ScalarFunction):
    """``f(x) = 1 / (1 + e^{-x})``."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:  # type: ignore[override]
        """Sigmoid."""
        # BEGIN SOLUTION task1_2
        s = operators.sigmoid(a)
        ctx.save_for_backward(s)
        return s
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """The derivative of the sigmoid, times ``d_output`` (from the saved output)."""
        # BEGIN SOLUTION task1_3
        s: float
        (s,) = ctx.saved_values
        return d_output * s * (1.0 - s)
        # END SOLUTION


class ReLU(ScalarFunction):
    """``f(x) = max(x, 0)``."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:  # type: ignore[override]
        """ReLU."""
        # BEGIN SOLUTION task1_2
        ctx.save_for_backward(a)
        return operators.relu(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """The derivative of relu (0 at 0), times ``d_output``."""
        # BEGIN SOLUTION task1_3
        (a,) = ctx.saved_values
        return operators.relu_back(a, d_output)
        # END SOLUTION


class Pow(ScalarFunction):
    """``f(x, y) = x ** y``: C's ``pow`` (``operators.pow``), NaN or inf where it is."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:  # type: ignore[override]
        """Power."""
        out = operators.pow(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """``d * (y * x ** (y - 1))`` and ``d * (x ** y * log(x))``, as PyTorch's.

        PyTorch's masks: the first is 0 where ``y == 0``, the second 0 where ``x == 0`` and
        ``y >= 0`` (``-inf`` at ``x == 0 > y``, NaN for ``x < 0``).
        """
        a, b, out = ctx.saved_values
        d_a = 0.0 if b == 0.0 else d_output * (b * operators.pow(a, b - 1.0))
        d_b = d_output * (0.0 if a == 0.0 and b >= 0.0 else out * operators.log(a))
        return d_a, d_b


class Log(ScalarFunction):
    """``f(x) = log(x)``."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:  # type: ignore[override]
        """Log."""
        # BEGIN SOLUTION task1_2
        ctx.save_for_backward(a)
        return operators.log(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """The derivative of ``log``, times ``d_output``."""
        # BEGIN SOLUTION task1_3
        (a,) = ctx.saved_values
        return operators.log_back(a, d_output)
        # END SOLUTION


class Exp(ScalarFunction):
    """``f(x) = e^x``."""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:  # type: ignore[override]
        """Exp."""
        # BEGIN SOLUTION task1_2
        out = operators.exp(a)
        ctx.save_for_backward(out)
        return out
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """The derivative of ``exp``, times ``d_output`` (from the saved output)."""
        # BEGIN SOLUTION task1_3
        (out,) = ctx.saved_values
        return operators.mul(out, d_output)
        # END SOLUTION


class LT(ScalarFunction):
    """``f(x, y) = 1.0 if x < y else 0.0`` (zero derivative)."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:  # type: ignore[override]
        """Less than."""
        # BEGIN SOLUTION task1_2
        return operators.lt(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """Zero: a comparison is piecewise constant."""
        # BEGIN SOLUTION task1_3
        return 0.0, 0.0
        # END SOLUTION


class EQ(ScalarFunction):
    """``f(x, y) = 1.0 if x == y else 0.0`` (zero derivative)."""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:  # type: ignore[override]
        """Equal."""
        # BEGIN SOLUTION task1_2
        return operators.eq(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """Zero: a comparison is piecewise constant."""
        # BEGIN SOLUTION task1_3
        return 0.0, 0.0
        # END SOLUTION


def derivative_check(
    f: Callable[..., Scalar], *scalars: Scalar, rtol: float = 1e-2, atol: float = 1e-2
) -> None:
    """Check backprop through ``f`` against central differences at ``scalars``.

    Raises:
        AssertionError: naming the argument whose derivatives disagree.
    """
    leaves = [Scalar(s.data if isinstance(s, Scalar) else s) for s in scalars]
    out = f(*leaves)
    out.backward()
    for i, leaf in enumerate(leaves):
        expected = central_difference(
            lambda *xs: f(*(Scalar(x, requires_grad=False) for x in xs)).data,
            *[x.data for x in leaves],
            arg=i,
        )
        got = 0.0 if leaf.derivative is None else leaf.derivative
        if not math.isclose(got, expected, rel_tol=rtol, abs_tol=atol):
            raise AssertionError(
                f"derivative check failed for {f!r} at {[x.data for x in leaves]}: "
                f"argument {i} has derivative {got}, central difference gives {expected}"
            )
